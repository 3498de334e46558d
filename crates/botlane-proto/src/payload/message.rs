//! Messages: opcode 30 `send` and its reply, the pushes 32
//! `message_create` and 33 `notification`, and opcode 40 `history_fetch`.

use serde::{Deserialize, Serialize};

/// Opcode 30 request: post a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SendRequest {
    /// Where.
    pub channel_id: String,
    /// The sealed content (base64 AES-256-GCM).
    pub content: String,
    /// The sealed command sidecar, if this is a structured invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The message this one replies to; the service notifies its author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
}

impl SendRequest {
    /// Post the sealed `content` into `channel_id`: no sidecar, not a reply.
    pub fn new(channel_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            channel_id: channel_id.into(),
            content: content.into(),
            command: None,
            reply_to: None,
        }
    }

    /// With the sealed command sidecar.
    #[must_use]
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// As a reply to the message `reply_to`.
    #[must_use]
    pub fn with_reply_to(mut self, reply_to: impl Into<String>) -> Self {
        self.reply_to = Some(reply_to.into());
        self
    }
}

/// Opcode 30 reply: accepted (`code` 0, with the new id) or denied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SendReply {
    /// `0` when posted; a negative [`ReplyCode`](crate::ReplyCode) when denied.
    pub code: i32,
    /// The new message's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Why it was denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SendReply {
    /// A reply with `code`, no id and no reason.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            message_id: None,
            reason: None,
        }
    }

    /// With the new message's id.
    #[must_use]
    pub fn with_message_id(mut self, message_id: impl Into<String>) -> Self {
        self.message_id = Some(message_id.into());
        self
    }

    /// With why it was denied.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// A message as the service stores and relays it: content still sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WireMessage {
    /// The message id.
    pub id: String,
    /// The channel.
    pub channel_id: String,
    /// The author's id.
    pub author_id: String,
    /// The sealed content.
    pub content: String,
    /// The sealed command sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The message this one replies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Milliseconds since the Unix epoch, assigned by the service.
    pub created_at: u64,
}

impl WireMessage {
    /// The message `id` of `author_id` in `channel_id` with the sealed
    /// `content`, stored at `created_at`: no sidecar, not a reply.
    pub fn new(
        id: impl Into<String>,
        channel_id: impl Into<String>,
        author_id: impl Into<String>,
        content: impl Into<String>,
        created_at: u64,
    ) -> Self {
        Self {
            id: id.into(),
            channel_id: channel_id.into(),
            author_id: author_id.into(),
            content: content.into(),
            command: None,
            reply_to: None,
            created_at,
        }
    }

    /// With the sealed command sidecar.
    #[must_use]
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// As a reply to the message `reply_to`.
    #[must_use]
    pub fn with_reply_to(mut self, reply_to: impl Into<String>) -> Self {
        self.reply_to = Some(reply_to.into());
        self
    }
}

/// Opcode 32 push: a new message in one of our channels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MessageCreate {
    /// The message.
    pub message: WireMessage,
}

impl MessageCreate {
    /// The push of `message`.
    pub fn new(message: WireMessage) -> Self {
        Self { message }
    }
}

/// Opcode 33 push: a notification for this account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Notification {
    /// What happened; `"reply"` when someone replied to one of our messages.
    pub kind: String,
    /// The channel.
    pub channel_id: String,
    /// The message that caused it.
    pub message_id: String,
    /// Who caused it.
    pub from: String,
}

impl Notification {
    /// A notification of `kind` about the message `message_id` of `from`
    /// in `channel_id`.
    pub fn new(
        kind: impl Into<String>,
        channel_id: impl Into<String>,
        message_id: impl Into<String>,
        from: impl Into<String>,
    ) -> Self {
        Self {
            kind: kind.into(),
            channel_id: channel_id.into(),
            message_id: message_id.into(),
            from: from.into(),
        }
    }
}

/// Opcode 40 request: a channel's history, newest last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HistoryRequest {
    /// The channel.
    pub channel_id: String,
    /// At most this many messages (the service caps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

impl HistoryRequest {
    /// The history of `channel_id`, as much as the service gives.
    pub fn new(channel_id: impl Into<String>) -> Self {
        Self {
            channel_id: channel_id.into(),
            limit: None,
        }
    }

    /// At most `limit` messages.
    #[must_use]
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// Opcode 40 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HistoryReply {
    /// `0` on success.
    pub code: i32,
    /// The messages, oldest first.
    #[serde(default)]
    pub messages: Vec<WireMessage>,
}

impl HistoryReply {
    /// A reply with `code` and no message.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            messages: Vec::new(),
        }
    }

    /// With the messages, oldest first.
    #[must_use]
    pub fn with_messages(mut self, messages: Vec<WireMessage>) -> Self {
        self.messages = messages;
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_are_left_out_and_default_when_absent() {
        let send = SendRequest::new("c", "sealed");
        assert_eq!(
            serde_json::to_string(&send).unwrap(),
            r#"{"channel_id":"c","content":"sealed"}"#
        );
        let message: WireMessage = serde_json::from_str(
            r#"{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":1}"#,
        )
        .unwrap();
        assert_eq!((message.command, message.reply_to), (None, None));
        let history: HistoryReply = serde_json::from_str(r#"{"code":-4}"#).unwrap();
        assert!(history.messages.is_empty());
    }

    /// docs/protocol.md: senders never write `null`, and a receiver here
    /// reads a `null` optional field as absent rather than refusing it.
    #[test]
    fn a_null_optional_field_reads_as_absent() {
        let send: SendRequest = serde_json::from_str(
            r#"{"channel_id":"c","content":"x","command":null,"reply_to":null}"#,
        )
        .unwrap();
        assert_eq!((send.command, send.reply_to), (None, None));
        let history: HistoryRequest =
            serde_json::from_str(r#"{"channel_id":"c","limit":null}"#).unwrap();
        assert_eq!(history.limit, None);
        let required = serde_json::from_str::<SendRequest>(r#"{"channel_id":"c","content":null}"#);
        assert!(required.is_err(), "a required field is never null");
    }
}
