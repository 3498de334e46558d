//! Messages: opcode 30 `send` and its reply, the pushes 32
//! `message_create` and 33 `notification`, and opcode 40 `history_fetch`.

use serde::{Deserialize, Serialize};

/// Opcode 30 request: post a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Opcode 30 reply: accepted (`code` 0, with the new id) or denied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// A message as the service stores and relays it: content still sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Opcode 32 push: a new message in one of our channels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageCreate {
    /// The message.
    pub message: WireMessage,
}

/// Opcode 33 push: a notification for this account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Opcode 40 request: a channel's history, newest last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRequest {
    /// The channel.
    pub channel_id: String,
    /// At most this many messages (the service caps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Opcode 40 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryReply {
    /// `0` on success.
    pub code: i32,
    /// The messages, oldest first.
    #[serde(default)]
    pub messages: Vec<WireMessage>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_are_left_out_and_default_when_absent() {
        let send = SendRequest {
            channel_id: "c".into(),
            content: "sealed".into(),
            command: None,
            reply_to: None,
        };
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
