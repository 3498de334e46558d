//! Where an incoming text frame goes: a reply to the oldest caller waiting
//! for its opcode (`pending.rs`), a push to the session through
//! [`Inbound`], which the session implements so that the transport names
//! nothing above it; a frame that is malformed, of an unknown opcode or a
//! reply nobody asked for is dropped with a rate-limited warning.

use super::frames::{ByOpcode, MessageView, Push, Routed};
use super::pending::Pending;
use crate::throttle::Throttle;
use crate::wire::{self, FrameError, OpCode};

/// Where a connection hands what it reads. Implementations never wait.
pub(crate) trait Inbound: Send + Sync + 'static {
    /// What the implementation keeps from one frame to the next (the
    /// session it would otherwise look up for each push while frames come
    /// back to back), for the connection's life.
    type Held: Default + Send;
    /// A push, in wire order. `Err(reason)` ends the connection.
    fn push(&self, held: &mut Self::Held, push: Push) -> Result<(), String>;
    /// A message push, borrowed from its frame; in wire order with the rest.
    fn message(&self, held: &mut Self::Held, message: MessageView<'_>) -> Result<(), String>;
    /// Any frame arrived (for the counters).
    fn frame_received(&self, held: &mut Self::Held);
    /// Reading found no frame ready: the implementation lets go of what
    /// would keep something alive while the connection waits.
    fn idle(&self, held: &mut Self::Held);
    /// The client's rate-limited warnings of the connection.
    fn warnings(&self) -> &Warnings;
}

/// The connection's rate-limited warnings: one set per client, kept across
/// reconnects, so a service that misbehaves again after a reconnect is not
/// logged afresh.
#[derive(Debug)]
pub(crate) struct Warnings {
    pub(super) malformed_frame: Throttle,
    unknown_opcode: Throttle,
    unexpected_reply: Throttle,
}

impl Warnings {
    pub(crate) const fn new() -> Self {
        Self {
            malformed_frame: Throttle::new("ignoring a malformed or binary frame"),
            unknown_opcode: Throttle::new("ignoring a frame with an unknown opcode"),
            unexpected_reply: Throttle::new("ignoring a reply nobody asked for"),
        }
    }

    /// Each kind, for the client's stats and its line at shutdown.
    pub(crate) fn throttles(&self) -> [&Throttle; 3] {
        [
            &self.malformed_frame,
            &self.unknown_opcode,
            &self.unexpected_reply,
        ]
    }
}

/// Routes one text frame; `Err` when the session cannot take the push.
pub(super) fn route<I: Inbound>(
    text: &str,
    debug: bool,
    pending: &Pending,
    inbound: &I,
    held: &mut I::Held,
) -> Result<(), String> {
    // The frame that comes by the thousand, in the service's own spelling:
    // read without serde (any other spelling falls through to serde below).
    if let Some(message) = botlane_proto::read_message_push(text) {
        if debug {
            tracing::debug!(
                op = OpCode::MessageCreate.code(),
                bytes = text.len(),
                "frame received"
            );
        }
        return inbound.message(held, MessageView::from(message));
    }
    let warnings = inbound.warnings();
    let mut message = None;
    let seed = ByOpcode {
        message: &mut message,
    };
    let frame = match wire::decode_frame_with(text, seed) {
        Ok(frame) => frame,
        // Only a push's payload is decoded here (a reply's waits for its
        // caller), so only a push's can be of the wrong shape; a reply's
        // that is not even JSON is a malformed frame, below.
        Err(FrameError::Payload { op, .. }) if OpCode::from(op).is_some_and(OpCode::is_push) => {
            if let Some(swallowed) = warnings.malformed_frame.allow() {
                tracing::warn!(op, swallowed, "ignoring a malformed push");
            }
            return Ok(());
        }
        Err(_) => {
            // Only the size is logged: the frame may hold secrets.
            if let Some(swallowed) = warnings.malformed_frame.allow() {
                tracing::warn!(bytes = text.len(), swallowed, "ignoring a malformed frame");
            }
            return Ok(());
        }
    };
    if debug && !matches!(frame.payload, Routed::Unknown) {
        // Opcode and size only: payloads hold ciphertext, tokens or secrets.
        tracing::debug!(op = frame.op, bytes = text.len(), "frame received");
    }
    let d = match frame.payload {
        Routed::Message => {
            return match message {
                Some(message) => inbound.message(held, message),
                None => unreachable!("a frame read as a message leaves its view in the slot"),
            }
        }
        Routed::Push(push) => return inbound.push(held, *push),
        Routed::Reply(d) => d,
        Routed::Unknown => {
            if let Some(swallowed) = warnings.unknown_opcode.allow() {
                tracing::debug!(
                    op = frame.op,
                    swallowed,
                    "ignoring a frame with an unknown opcode"
                );
            }
            return Ok(());
        }
    };
    match pending.pop(frame.op) {
        // A dropped receiver means its caller gave up; the reply is consumed
        // here all the same, which keeps later replies in their places.
        Some(slot) => {
            let _ = slot.send(Ok(d.get().to_owned()));
        }
        None => {
            if let Some(swallowed) = warnings.unexpected_reply.allow() {
                tracing::warn!(
                    op = frame.op,
                    swallowed,
                    "ignoring a reply nobody asked for"
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(super) mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::{Arc, Mutex};

    use tokio::sync::oneshot;

    use super::*;
    use crate::error::ClientError;
    use crate::sync::lock;

    /// Keeps what it is handed. Its hold is a count of `token`, taken at a
    /// burst's first push (`taken` counts the takes).
    #[derive(Default)]
    pub(in crate::transport) struct Collect {
        pub(in crate::transport) pushes: Mutex<Vec<Push>>,
        pub(in crate::transport) token: Arc<()>,
        pub(in crate::transport) taken: AtomicUsize,
    }

    impl Inbound for Collect {
        type Held = Option<Arc<()>>;
        fn push(&self, held: &mut Self::Held, push: Push) -> Result<(), String> {
            held.get_or_insert_with(|| {
                self.taken.fetch_add(1, Relaxed);
                Arc::clone(&self.token)
            });
            lock(&self.pushes).push(push);
            Ok(())
        }
        fn message(&self, held: &mut Self::Held, message: MessageView<'_>) -> Result<(), String> {
            self.push(held, Push::Message(message.into_owned()))
        }
        fn frame_received(&self, _: &mut Self::Held) {}
        fn idle(&self, held: &mut Self::Held) {
            *held = None;
        }
        fn warnings(&self) -> &Warnings {
            static WARNINGS: Warnings = Warnings::new();
            &WARNINGS
        }
    }

    fn setup() -> (Pending, Collect) {
        (Pending::default(), Collect::default())
    }

    fn slot(pending: &Pending, op: u16) -> oneshot::Receiver<Result<String, ClientError>> {
        let (slot, rx) = oneshot::channel();
        assert!(pending.push(op, slot).is_ok(), "far under the cap");
        rx
    }

    #[test]
    fn unknown_opcodes_and_garbage_are_ignored() {
        let (pending, inbound) = setup();
        let mut reply = slot(&pending, 240);
        for text in [
            r#"{"op":9999,"d":{}}"#,
            "not json",
            r#"{"op":32,"d":{"bad":1}}"#,
            r#"{"op":34,"d":{"channel":"not an object"}}"#,
        ] {
            route(text, true, &pending, &inbound, &mut None).unwrap();
        }
        assert!(lock(&inbound.pushes).is_empty(), "nothing was pushed");
        assert!(reply.try_recv().is_err(), "the waiting slot is untouched");
        assert_eq!(pending.waiting(240), 1);
    }

    #[test]
    fn replies_go_to_the_oldest_slot_of_their_opcode() {
        let (pending, inbound) = setup();
        let mut ra = slot(&pending, 240);
        let mut rb = slot(&pending, 40);
        let mut rc = slot(&pending, 240);
        route(
            r#"{"op":40,"d":{"code":0,"n":"b"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        route(
            r#"{"op":240,"d":{"code":0,"n":"a"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        route(
            r#"{"op":240,"d":{"code":0,"n":"c"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        assert!(ra.try_recv().unwrap().unwrap().contains("\"a\""));
        assert!(rb.try_recv().unwrap().unwrap().contains("\"b\""));
        assert!(rc.try_recv().unwrap().unwrap().contains("\"c\""));
    }

    #[test]
    fn a_dropped_caller_still_consumes_its_reply() {
        let (pending, inbound) = setup();
        let ra = slot(&pending, 638);
        let mut rb = slot(&pending, 638);
        drop(ra);
        route(
            r#"{"op":638,"d":{"code":-7,"n":"first"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        route(
            r#"{"op":638,"d":{"code":-7,"n":"second"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        assert!(rb.try_recv().unwrap().unwrap().contains("second"));
    }

    #[test]
    fn a_message_push_reads_the_same_in_any_spelling() {
        let (pending, inbound) = setup();
        for text in [
            // The service's spelling (read without serde), then others.
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":7}}}"#,
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":7}}} "#,
            r#"{"d":{"message":{"created_at":7,"content":"x","author_id":"a","channel_id":"c","id":"\u006d"}},"op":32}"#,
        ] {
            route(text, true, &pending, &inbound, &mut None).unwrap();
        }
        let expected = wire::WireMessage::new("m", "c", "a", "x", 7);
        let pushes = lock(&inbound.pushes);
        assert_eq!(pushes.len(), 3);
        for push in pushes.iter() {
            assert!(
                matches!(push, Push::Message(m) if *m == expected),
                "{push:?}"
            );
        }
    }

    #[test]
    fn pushes_are_routed_to_the_session() {
        let (pending, inbound) = setup();
        route(
            r#"{"op":33,"d":{"kind":"reply","channel_id":"c","message_id":"m","from":"u"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        route(
            r#"{"op":34,"d":{"channel":{"id":"c2","server_id":"s","name":"n"}}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        route(
            r#"{"op":35,"d":{"channel_id":"c2"}}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        // `d` before `op`: read in a second step, routed the same.
        route(
            r#"{"d":{"channel_id":"c3"},"op":35}"#,
            false,
            &pending,
            &inbound,
            &mut None,
        )
        .unwrap();
        let pushes = lock(&inbound.pushes);
        assert!(matches!(&pushes[3], Push::ChannelRemoved(id) if id == "c3"));
        assert!(matches!(&pushes[0], Push::Notification));
        assert!(matches!(&pushes[1], Push::ChannelAdded(c) if c.id == "c2"));
        assert!(matches!(&pushes[2], Push::ChannelRemoved(id) if id == "c2"));
    }
}
