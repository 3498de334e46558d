//! Opcode 638 `rest_mint`: a one-time secret for the REST lane's exchange
//! (the request is [`Empty`](super::Empty)). See `docs/rest.md`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Opcode 638 reply: a one-time secret for the REST exchange.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl RestMintReply {
    /// A reply with `code` and nothing else (a refusal).
    pub fn new(code: i32) -> Self {
        Self {
            code,
            secret: None,
            row_id: None,
            bot_id: None,
        }
    }

    /// With the one-time secret.
    #[must_use]
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        self.secret = Some(secret.into());
        self
    }

    /// With the id of the credential row.
    #[must_use]
    pub fn with_row_id(mut self, row_id: impl Into<String>) -> Self {
        self.row_id = Some(row_id.into());
        self
    }

    /// With the bot the row belongs to.
    #[must_use]
    pub fn with_bot_id(mut self, bot_id: impl Into<String>) -> Self {
        self.bot_id = Some(bot_id.into());
        self
    }
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
mod tests {
    use super::*;

    #[test]
    fn the_secret_stays_out_of_debug() {
        let mint = RestMintReply::new(0)
            .with_secret("one-time-secret")
            .with_row_id("row");
        let shown = format!("{mint:?} {mint:#?}");
        assert!(!shown.contains("one-time-secret") && shown.contains("[REDACTED]"));
        assert!(shown.contains("row"));
    }
}
