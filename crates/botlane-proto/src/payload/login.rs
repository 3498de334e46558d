//! Opcode 10 `login` and its reply, and opcode 11 `ready`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ChannelInfo;

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
    /// `0` on success; [`ReplyCode::Unauthorized`](crate::ReplyCode::Unauthorized) for an unknown token.
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_token_stays_out_of_debug() {
        let login = LoginRequest {
            token: "tok-very-secret".into(),
            public_key: "pk".into(),
            client: "c".into(),
        };
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
