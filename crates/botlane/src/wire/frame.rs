//! The frame envelope and the payload of every opcode.
//!
//! A frame is one WebSocket text message holding `{"op": <u16>, "d": <payload>}`.
//! Every reply payload carries `code`: `0` for success, a negative
//! [`ReplyCode`](super::ReplyCode) otherwise. See `docs/protocol.md`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::OpCode;

/// The largest WebSocket message either side accepts (1 MiB). A peer that
/// sends a larger one is closed with code 1009 (message too big).
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// The envelope of an outgoing frame.
#[derive(Serialize)]
struct OutFrame<'a, T: ?Sized> {
    op: u16,
    d: &'a T,
}

/// Encodes one frame.
///
/// ```
/// use botlane::wire::{encode_frame, OpCode, Empty};
/// assert_eq!(encode_frame(OpCode::Heartbeat, &Empty {}), r#"{"op":12,"d":{}}"#);
/// ```
pub fn encode_frame<T: Serialize + ?Sized>(op: OpCode, payload: &T) -> String {
    // Serializing our own payload types into a String cannot fail: they hold
    // only strings, integers, booleans, options, vectors and maps with string keys.
    serde_json::to_string(&OutFrame {
        op: op.code(),
        d: payload,
    })
    .expect("wire payloads are plain data and always serialize")
}

/// An incoming frame with its payload still undecoded.
#[derive(Deserialize)]
pub struct RawFrame<'a> {
    /// The opcode number (possibly one this library does not know).
    pub op: u16,
    /// The payload, decoded later by whoever handles the opcode.
    #[serde(borrow)]
    pub d: &'a RawValue,
}

impl fmt::Debug for RawFrame<'_> {
    // The payload may hold ciphertext, secrets or tokens: show only its size.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawFrame")
            .field("op", &self.op)
            .field("payload_bytes", &self.d.get().len())
            .finish()
    }
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The envelope is not `{"op": u16, "d": ...}`.
    #[error("malformed frame envelope (expected {{\"op\": number, \"d\": payload}})")]
    Envelope(#[source] serde_json::Error),
    /// The payload does not have the shape its opcode requires.
    #[error("malformed payload for opcode {op}")]
    Payload {
        /// The opcode whose payload was bad.
        op: u16,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },
}

/// Reads the envelope of an incoming frame.
///
/// ```
/// let frame = botlane::wire::decode_frame(r#"{"op":240,"d":{"code":0}}"#)?;
/// assert_eq!(frame.op, 240);
/// # Ok::<(), botlane::wire::FrameError>(())
/// ```
pub fn decode_frame(text: &str) -> Result<RawFrame<'_>, FrameError> {
    serde_json::from_str(text).map_err(FrameError::Envelope)
}

/// Decodes the payload of a frame with opcode `op`.
pub fn decode_payload<'a, T: Deserialize<'a>>(op: u16, d: &'a RawValue) -> Result<T, FrameError> {
    serde_json::from_str(d.get()).map_err(|source| FrameError::Payload { op, source })
}

/// An empty payload `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// A reply that carries nothing but its code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeReply {
    /// `0` on success, a negative [`ReplyCode`](super::ReplyCode) otherwise.
    pub code: i32,
    /// A human-readable reason for a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Opcode 10 request: log in.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRequest {
    /// The long-lived token. Presented here once per login, nowhere else.
    pub token: String,
    /// The identity public key (base64 X25519), registered with the service.
    pub public_key: String,
    /// The client's name and version, for the service's logs.
    pub client: String,
}

impl fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoginRequest")
            .field("token", &"[REDACTED]")
            .field("public_key", &self.public_key)
            .field("client", &self.client)
            .finish()
    }
}

/// Opcode 10 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginReply {
    /// `0` on success; [`ReplyCode::Unauthorized`](super::ReplyCode::Unauthorized) for an unknown token.
    pub code: i32,
    /// Our user or bot id (a UUID) on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// Whether a session belongs to a bot or a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum AccountKind {
    /// A bot account.
    Bot,
    /// A human account.
    User,
}

/// A channel as listed in [`Ready`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelInfo {
    /// The channel id.
    pub id: String,
    /// The server (room) it belongs to.
    pub server_id: String,
    /// The channel's name.
    pub name: String,
}

/// Opcode 11 push: the session is ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ready {
    /// Our id.
    pub user_id: String,
    /// Our display name.
    pub name: String,
    /// Bot or human.
    pub kind: AccountKind,
    /// The channels we are a member of.
    pub channels: Vec<ChannelInfo>,
}

/// Opcode 20 request: publish the canonical menu (the spec's arrays, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MenuPublish {
    /// The canonical menu.
    pub menu: Box<RawValue>,
}

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
    /// `0` when posted; a negative [`ReplyCode`](super::ReplyCode) when denied.
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

/// Opcode 34 push: this account was added to a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelAdded {
    /// The channel, as [`Ready`] lists it.
    pub channel: ChannelInfo,
}

/// Opcode 35 push: this account was removed from a channel. The client
/// forgets the channel's key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelRemoved {
    /// The channel.
    pub channel_id: String,
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

/// Opcode 50 push: a channel key wrapped to our identity key.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChannelKeyPush {
    /// The channel the key is for.
    pub channel_id: String,
    /// The member who wrapped it.
    pub from: String,
    /// The wrapped key, opaque to the service (see `docs/crypto.md`).
    pub wrapped: Box<RawValue>,
}

/// Opcode 51 request: hand a wrapped channel key to a member.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyShare {
    /// The channel the key is for.
    pub channel_id: String,
    /// The recipient's id.
    pub to: String,
    /// The key wrapped to the recipient's identity key, opaque to the service.
    pub wrapped: Box<RawValue>,
}

/// Opcode 52 request: a member's identity public key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKeyRequest {
    /// Whose.
    pub user_id: String,
}

/// Opcode 52 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKeyReply {
    /// `0` on success.
    pub code: i32,
    /// The base64 X25519 public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
}

/// Opcode 60 request: join a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinRequest {
    /// The channel.
    pub channel_id: String,
}

/// Opcode 61 request: a channel's members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembersRequest {
    /// The channel; the requester must be a member.
    pub channel_id: String,
}

/// Opcode 61 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembersReply {
    /// `0` on success.
    pub code: i32,
    /// The members' ids, in the order they joined.
    #[serde(default)]
    pub members: Vec<String>,
}

/// One emoji of the static catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emoji {
    /// Its short name, such as `thumbs_up`.
    pub name: String,
    /// The emoji itself.
    pub emoji: String,
}

/// Opcode 240 reply: the static unicode catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmojiReply {
    /// `0` on success.
    pub code: i32,
    /// The catalog.
    #[serde(default)]
    pub emojis: Vec<Emoji>,
}

/// Opcode 638 reply: a one-time secret for the REST exchange.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestMintReply {
    /// `0` on success; `-7` flag off, `-1` not a bot session, `-9` rate limited, `-2` server error.
    pub code: i32,
    /// The one-time secret, exchanged once at `POST /auth/verify-session`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The id of the credential row the secret belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_id: Option<String>,
    /// The bot the row belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_id: Option<String>,
}

impl fmt::Debug for RestMintReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestMintReply")
            .field("code", &self.code)
            .field("secret", &self.secret.as_ref().map(|_| "[REDACTED]"))
            .field("row_id", &self.row_id)
            .field("bot_id", &self.bot_id)
            .finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn envelope_round_trip() {
        let text = encode_frame(
            OpCode::HistoryFetch,
            &HistoryRequest {
                channel_id: "c".into(),
                limit: Some(5),
            },
        );
        assert_eq!(text, r#"{"op":40,"d":{"channel_id":"c","limit":5}}"#);
        let frame = decode_frame(&text).unwrap();
        let req: HistoryRequest = decode_payload(frame.op, frame.d).unwrap();
        assert_eq!(req.limit, Some(5));
    }

    #[test]
    fn bad_envelopes_are_errors() {
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"op":-1,"d":{}}"#,
            r#"{"op":70000,"d":{}}"#,
            r#"{"d":{}}"#,
        ] {
            assert!(decode_frame(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn membership_payloads() {
        let added: ChannelAdded =
            serde_json::from_str(r#"{"channel":{"id":"c1","server_id":"s1","name":"general"}}"#)
                .unwrap();
        assert_eq!(added.channel.id, "c1");
        let removed: ChannelRemoved = serde_json::from_str(r#"{"channel_id":"c1"}"#).unwrap();
        assert_eq!(removed.channel_id, "c1");
        assert_eq!(
            encode_frame(OpCode::ChannelRemoved, &removed),
            r#"{"op":35,"d":{"channel_id":"c1"}}"#
        );
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let login = LoginRequest {
            token: "tok-very-secret".into(),
            public_key: "pk".into(),
            client: "c".into(),
        };
        let shown = format!("{login:?}");
        assert!(!shown.contains("tok-very-secret") && shown.contains("[REDACTED]"));
        let mint = RestMintReply {
            code: 0,
            secret: Some("one-time-secret".into()),
            row_id: None,
            bot_id: None,
        };
        assert!(!format!("{mint:?}").contains("one-time-secret"));
        let frame = decode_frame(r#"{"op":10,"d":{"token":"tok-very-secret"}}"#).unwrap();
        assert!(!format!("{frame:?}").contains("tok-very-secret"));
    }
}
