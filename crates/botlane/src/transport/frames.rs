//! Reading an incoming frame in one pass (`botlane_proto::decode_frame_with`):
//! a push straight into its payload type, a reply kept raw (borrowed from
//! the frame) for the caller waiting for it, a frame of an opcode this
//! library does not know skipped. The payload is never parsed twice.
//!
//! A message push, the one that comes by the thousand, is read as a view
//! borrowing its strings from the frame ([`MessageView`]): dispatch opens
//! and decides it from there, and only what it keeps is copied. The
//! connection first tries `botlane_proto::read_message_push`, which reads
//! the spelling the service writes without serde; any other spelling comes
//! here.

use std::borrow::Cow;
use std::mem::take;

use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::wire::{self, OpCode, PayloadSeed};

/// A push from the service.
#[derive(Debug)]
pub(crate) enum Push {
    /// Op 11, and its connection's number (0 as read; [`Inbound::push`] sets it).
    Ready(wire::Ready, u64),
    Message(wire::WireMessage),
    ChannelKey(wire::ChannelKeyPush),
    ChannelAdded(wire::ChannelInfo),
    ChannelRemoved(String),
    /// Op 33, checked for shape; the client takes no action on it.
    Notification,
}

/// What a frame turned out to be. Small, as it is handed up through
/// every layer of the envelope's reading: a message push's view (152
/// bytes) goes straight to the slot of [`ByOpcode`], a control push
/// (rare) is boxed. Returned by value, the view was copied at each layer:
/// about 7 % of the connection task's time (docs/benchmarks.md, stage 7).
pub(super) enum Routed<'a> {
    /// In the slot given to [`ByOpcode`].
    Message,
    Push(Box<Push>),
    Reply(&'a RawValue),
    Unknown,
}

/// Chooses the payload type by opcode; a message push's view is put in
/// `message`.
pub(super) struct ByOpcode<'s, 'de> {
    pub(super) message: &'s mut Option<MessageView<'de>>,
}

impl<'de> PayloadSeed<'de> for ByOpcode<'_, 'de> {
    type Value = Routed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, op: u16, d: D) -> Result<Routed<'de>, D::Error> {
        let Some(op) = OpCode::from(op) else {
            return IgnoredAny::deserialize(d).map(|_| Routed::Unknown);
        };
        if !op.is_push() {
            return <&RawValue>::deserialize(d).map(Routed::Reply);
        }
        let push = match op {
            OpCode::Ready => Push::Ready(wire::Ready::deserialize(d)?, 0),
            OpCode::MessageCreate => {
                *self.message = Some(MessageCreateView::deserialize(d)?.message);
                return Ok(Routed::Message);
            }
            OpCode::ChannelKey => Push::ChannelKey(wire::ChannelKeyPush::deserialize(d)?),
            OpCode::ChannelAdded => Push::ChannelAdded(wire::ChannelAdded::deserialize(d)?.channel),
            OpCode::ChannelRemoved => {
                Push::ChannelRemoved(wire::ChannelRemoved::deserialize(d)?.channel_id)
            }
            // Checked for shape only: the client takes no action on it.
            OpCode::Notification => {
                wire::Notification::deserialize(d).map(|_| Push::Notification)?
            }
            // A push of a newer botlane-proto that this reading does not know
            // (`OpCode` is non-exhaustive): skipped like an unknown opcode.
            // Within the workspace there is none: the test
            // `every_push_opcode_has_its_reading` fails until it has an arm.
            _ => return IgnoredAny::deserialize(d).map(|_| Routed::Unknown),
        };
        Ok(Routed::Push(Box::new(push)))
    }
}

/// A `message_create` push's message ([`wire::WireMessage`]'s fields and
/// rules), its strings borrowed from the frame where they hold no escape.
#[derive(Debug, Deserialize)]
pub(crate) struct MessageView<'a> {
    #[serde(borrow)]
    pub(crate) id: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) channel_id: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) author_id: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) content: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(crate) command: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) reply_to: Option<Cow<'a, str>>,
    // Read for the shape check only, as `WireMessage` reads it.
    #[allow(dead_code)]
    created_at: u64,
}

/// The message of a `message_create` frame as the connection reads it (one
/// pass, the view made owned); `None` for any other frame or one that does
/// not read. For the fuzz law that this reading and `WireMessage`'s agree.
#[cfg(feature = "fuzzing")]
pub(crate) fn read_message(text: &str) -> Option<wire::WireMessage> {
    if let Some(message) = botlane_proto::read_message_push(text) {
        return Some(MessageView::from(message).into_owned());
    }
    let mut message = None;
    let seed = ByOpcode {
        message: &mut message,
    };
    match wire::decode_frame_with(text, seed).ok()?.payload {
        Routed::Message => message.map(MessageView::into_owned),
        Routed::Push(_) | Routed::Reply(_) | Routed::Unknown => None,
    }
}

#[derive(Deserialize)]
struct MessageCreateView<'a> {
    #[serde(borrow)]
    message: MessageView<'a>,
}

impl MessageView<'_> {
    /// The owned message, to wait in the push queue.
    pub(crate) fn into_owned(mut self) -> wire::WireMessage {
        self.take_owned()
    }

    /// The owned message, its strings moved out of the view where it owns
    /// them (an escaped one's), copied where they are borrowed.
    pub(crate) fn take_owned(&mut self) -> wire::WireMessage {
        let mut message = wire::WireMessage::new(
            take(&mut self.id),
            take(&mut self.channel_id),
            take(&mut self.author_id),
            take(&mut self.content),
            self.created_at,
        );
        message.command = self.command.take().map(Cow::into_owned);
        message.reply_to = self.reply_to.take().map(Cow::into_owned);
        message
    }
}

impl<'a> From<botlane_proto::MessagePushRef<'a>> for MessageView<'a> {
    /// The reading of `botlane_proto::read_message_push`: every string
    /// borrowed (it reads only strings without an escape).
    fn from(m: botlane_proto::MessagePushRef<'a>) -> Self {
        Self {
            id: Cow::Borrowed(m.id),
            channel_id: Cow::Borrowed(m.channel_id),
            author_id: Cow::Borrowed(m.author_id),
            content: Cow::Borrowed(m.content),
            command: m.command.map(Cow::Borrowed),
            reply_to: m.reply_to.map(Cow::Borrowed),
            created_at: m.created_at,
        }
    }
}

impl From<wire::WireMessage> for MessageView<'static> {
    /// A view of an owned message: its strings move, nothing is copied.
    fn from(m: wire::WireMessage) -> Self {
        Self {
            id: Cow::Owned(m.id),
            channel_id: Cow::Owned(m.channel_id),
            author_id: Cow::Owned(m.author_id),
            content: Cow::Owned(m.content),
            command: m.command.map(Cow::Owned),
            reply_to: m.reply_to.map(Cow::Owned),
            created_at: m.created_at,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn view(text: &str) -> Result<MessageView<'_>, serde_json::Error> {
        serde_json::from_str::<MessageCreateView<'_>>(text).map(|m| m.message)
    }

    #[test]
    fn the_view_reads_what_the_wire_message_reads_and_borrows_plain_strings() {
        // Each text, and whether its id can be borrowed (no escape in it).
        let texts = [
            (
                r#"{"message":{"id":"m1","channel_id":"c1","author_id":"u1","content":"Zm9v","created_at":7}}"#,
                true,
            ),
            (
                r#"{"message":{"id":"m\"1","channel_id":"c\u00e91","author_id":"u1","content":"Zm9v","command":"YmFy","reply_to":"m0","created_at":7,"extra":[1]}}"#,
                false,
            ),
            // A `null` optional field reads as absent (docs/protocol.md).
            (
                r#"{"message":{"id":"m1","channel_id":"c1","author_id":"u1","content":"Zm9v","command":null,"reply_to":null,"created_at":7}}"#,
                true,
            ),
        ];
        for (text, borrows) in texts {
            let wire: wire::MessageCreate = serde_json::from_str(text).unwrap();
            let view = view(text).unwrap();
            assert_eq!(matches!(view.id, Cow::Borrowed(_)), borrows, "{text}");
            assert_eq!(view.into_owned(), wire.message, "{text}");
        }
    }

    #[test]
    fn the_view_refuses_what_the_wire_message_refuses() {
        let texts = [
            r#"{"message":{"id":"m1","channel_id":"c1","author_id":"u1","content":"Zm9v"}}"#,
            r#"{"message":{"id":1,"channel_id":"c1","author_id":"u1","content":"Zm9v","created_at":7}}"#,
            r#"{"message":{"id":"m1","channel_id":"c1","author_id":"u1","content":null,"created_at":7}}"#,
            r#"{"message":{"id":"m1","channel_id":"c1","author_id":"u1","content":"x","created_at":-1}}"#,
            r#"{"message":{"id":"m1","channel_id":"c1","author_id":"u1","content":"x","created_at":7,"command":5}}"#,
            r#"{"msg":{}}"#,
        ];
        for text in texts {
            assert!(
                serde_json::from_str::<wire::MessageCreate>(text).is_err(),
                "{text}"
            );
            assert!(view(text).is_err(), "{text}");
        }
    }

    /// Every push opcode botlane-proto knows is read into its own type
    /// here, never skipped as unknown: an empty payload fails its shape
    /// check (or reads), it does not reach the fallback arm.
    #[test]
    fn every_push_opcode_has_its_reading() {
        for op in (0..=u16::MAX)
            .filter_map(OpCode::from)
            .filter(|op| op.is_push())
        {
            let text = format!(r#"{{"op":{},"d":{{}}}}"#, op.code());
            let mut message = None;
            let seed = ByOpcode {
                message: &mut message,
            };
            let routed = wire::decode_frame_with(&text, seed).map(|frame| frame.payload);
            assert!(
                !matches!(routed, Ok(Routed::Unknown)),
                "op {} ({op:?}) is a push that transport/frames.rs skips: give it an arm, a Push \
                 variant and its handling in dispatch (docs/architecture.md, \"Adding a push\")",
                op.code()
            );
        }
    }

    #[test]
    fn an_owned_message_becomes_a_view_and_back_unchanged() {
        let wire = wire::WireMessage::new("m1", "c1", "u1", "Zm9v", 9).with_command("YmFy");
        assert_eq!(MessageView::from(wire.clone()).into_owned(), wire);
    }
}
