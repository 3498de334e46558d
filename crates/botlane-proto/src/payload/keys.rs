//! Keys: the push 50 `channel_key`, and the requests 51 `key_share` and 52
//! `public_key_fetch`. A wrapped key is opaque to the service; its format
//! is [`WrappedKey`](crate::crypto::WrappedKey).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Opcode 50 push: a channel key wrapped to our identity key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChannelKeyPush {
    /// The channel the key is for.
    pub channel_id: String,
    /// The member who wrapped it.
    pub from: String,
    /// The wrapped key, opaque to the service (see `docs/crypto.md`).
    pub wrapped: Box<RawValue>,
}

impl ChannelKeyPush {
    /// The key of `channel_id`, wrapped by `from`.
    pub fn new(
        channel_id: impl Into<String>,
        from: impl Into<String>,
        wrapped: Box<RawValue>,
    ) -> Self {
        Self {
            channel_id: channel_id.into(),
            from: from.into(),
            wrapped,
        }
    }
}

/// Opcode 51 request: hand a wrapped channel key to a member.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KeyShare {
    /// The channel the key is for.
    pub channel_id: String,
    /// The recipient's id.
    pub to: String,
    /// The key wrapped to the recipient's identity key, opaque to the service.
    pub wrapped: Box<RawValue>,
}

impl KeyShare {
    /// The key of `channel_id`, wrapped to `to`.
    pub fn new(
        channel_id: impl Into<String>,
        to: impl Into<String>,
        wrapped: Box<RawValue>,
    ) -> Self {
        Self {
            channel_id: channel_id.into(),
            to: to.into(),
            wrapped,
        }
    }
}

/// Opcode 52 request: a member's identity public key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PublicKeyRequest {
    /// Whose.
    pub user_id: String,
}

impl PublicKeyRequest {
    /// The public key of `user_id`.
    pub fn new(user_id: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
        }
    }
}

/// Opcode 52 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PublicKeyReply {
    /// `0` on success.
    pub code: i32,
    /// The base64 X25519 public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
}

impl PublicKeyReply {
    /// A reply with `code` and no key.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            public_key: None,
        }
    }

    /// With the key.
    #[must_use]
    pub fn with_public_key(mut self, public_key: impl Into<String>) -> Self {
        self.public_key = Some(public_key.into());
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_key_passes_through_unread() {
        let push: ChannelKeyPush = serde_json::from_str(
            r#"{"channel_id":"c","from":"u","wrapped":{"ephemeral":"e","ciphertext":"x","extra":[1]}}"#,
        )
        .unwrap();
        assert_eq!(
            push.wrapped.get(),
            r#"{"ephemeral":"e","ciphertext":"x","extra":[1]}"#
        );
    }
}
