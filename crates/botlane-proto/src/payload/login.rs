//! Opcode 10 `login` and its reply, and opcode 11 `ready`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ChannelInfo;

/// Opcode 10 request: log in.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoginRequest {
    /// The long-lived token. Presented here once per login, nowhere else.
    pub token: String,
    /// The identity public key (base64 X25519), registered with the service.
    pub public_key: String,
    /// The client's name and version, for the service's logs.
    pub client: String,
}

impl LoginRequest {
    /// A login with `token`, the identity `public_key`, as `client`.
    pub fn new(
        token: impl Into<String>,
        public_key: impl Into<String>,
        client: impl Into<String>,
    ) -> Self {
        Self {
            token: token.into(),
            public_key: public_key.into(),
            client: client.into(),
        }
    }
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
#[non_exhaustive]
pub struct LoginReply {
    /// `0` on success; [`ReplyCode::Unauthorized`](crate::ReplyCode::Unauthorized) for an unknown token.
    pub code: i32,
    /// Our user or bot id (a UUID) on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

impl LoginReply {
    /// A reply with `code` and no id.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            user_id: None,
        }
    }

    /// With the id of the account logged in.
    #[must_use]
    pub fn with_user_id(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }
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

/// Opcode 11 push: the session is ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl Ready {
    /// The session of `user_id`, called `name`, a member of `channels`.
    pub fn new(
        user_id: impl Into<String>,
        name: impl Into<String>,
        kind: AccountKind,
        channels: Vec<ChannelInfo>,
    ) -> Self {
        Self {
            user_id: user_id.into(),
            name: name.into(),
            kind,
            channels,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_token_stays_out_of_debug() {
        let login = LoginRequest::new("tok-very-secret", "pk", "c");
        let shown = format!("{login:?} {login:#?}");
        assert!(!shown.contains("tok-very-secret") && shown.contains("[REDACTED]"));
    }

    #[test]
    fn ready_reads_the_account_kind_in_lower_case() {
        let ready: Ready = serde_json::from_str(
            r#"{"user_id":"u","name":"n","kind":"bot","channels":[{"id":"c","server_id":"s","name":"g"}]}"#,
        )
        .unwrap();
        assert_eq!(ready.kind, AccountKind::Bot);
        assert_eq!(ready.channels[0].id, "c");
        assert!(serde_json::from_str::<AccountKind>(r#""Bot""#).is_err());
    }
}
