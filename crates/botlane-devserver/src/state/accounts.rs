//! Accounts: tokens (kept as SHA-256 only), kinds, identity keys, revocation.

use botlane_proto::payload::AccountKind;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{State, Termination};
use crate::DevServerError;

/// The SHA-256 of a token: the only form in which the service keeps it.
pub(crate) type TokenHash = [u8; 32];

pub(crate) fn hash_token(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// A fresh random token: two UUID v4 give 244 random bits.
pub(crate) fn new_token(prefix: &str) -> String {
    format!(
        "{prefix}_{}{}",
        Uuid::new_v4().simple(),
        Uuid::new_v4().simple()
    )
}

pub(crate) struct Account {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) kind: AccountKind,
    /// Creation order, for name lookups.
    pub(crate) created: usize,
    token_hash: TokenHash,
    pub(crate) revoked: bool,
    pub(crate) public_key: Option<String>,
}

/// A newly created bot account.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BotAccount {
    /// The bot's id (a UUID v4).
    pub id: String,
    /// Its login token.
    pub token: String,
}

/// A newly created human account.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserAccount {
    /// The user's id (a UUID v4).
    pub id: String,
    /// Its login token.
    pub token: String,
}

macro_rules! redacted_debug {
    ($ty:ident) => {
        impl std::fmt::Debug for $ty {
            // The token is a credential: never shown.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("id", &self.id)
                    .field("token", &"[REDACTED]")
                    .finish()
            }
        }
    };
}
redacted_debug!(BotAccount);
redacted_debug!(UserAccount);

impl State {
    pub(crate) fn add_account(
        &mut self,
        name: &str,
        kind: AccountKind,
        token: &str,
        id: Option<&str>,
    ) -> Result<String, DevServerError> {
        let id = match id {
            Some(id) => Uuid::parse_str(id)
                .map_err(|_| DevServerError::Config(format!("account id {id:?} is not a UUID")))?
                .hyphenated()
                .to_string(),
            None => Uuid::new_v4().hyphenated().to_string(),
        };
        if self.accounts.contains_key(&id) {
            return Err(DevServerError::Config(format!(
                "two accounts have the id {id}"
            )));
        }
        let token_hash = hash_token(token);
        if self.tokens.contains_key(&token_hash) {
            // Say which account, never which token.
            return Err(DevServerError::Config(format!(
                "account {name:?} reuses another account's token"
            )));
        }
        self.tokens.insert(token_hash, id.clone());
        self.accounts.insert(
            id.clone(),
            Account {
                id: id.clone(),
                name: name.to_owned(),
                kind,
                created: self.accounts.len(),
                token_hash,
                revoked: false,
                public_key: None,
            },
        );
        Ok(id)
    }

    pub(crate) fn account_by_token(&self, token: &str) -> Option<&Account> {
        let id = self.tokens.get(&hash_token(token))?;
        self.accounts.get(id).filter(|a| !a.revoked)
    }

    /// The bot account `bot_id`: unknown, or not a bot, is an error.
    fn bot_mut(&mut self, bot_id: &str) -> Result<&mut Account, DevServerError> {
        let account = self
            .accounts
            .get_mut(bot_id)
            .ok_or_else(|| DevServerError::UnknownAccount(bot_id.to_owned()))?;
        if account.kind != AccountKind::Bot {
            return Err(DevServerError::NotABot(bot_id.to_owned()));
        }
        Ok(account)
    }

    /// Deletes a bot's REST rows; how many there were.
    pub(crate) fn purge_rest_credentials(&mut self, bot_id: &str) -> Result<usize, DevServerError> {
        self.bot_mut(bot_id)?;
        Ok(self.rest.purge(bot_id))
    }

    pub(crate) fn revoke_bot(&mut self, bot_id: &str) -> Result<(), DevServerError> {
        let account = self.bot_mut(bot_id)?;
        account.revoked = true;
        let token = account.token_hash;
        self.tokens.remove(&token);
        self.rest.purge(bot_id);
        for id in self.connections_of(bot_id) {
            if let Some(connection) = self.connections.get(id) {
                connection.terminate(Termination::Close {
                    code: 1008,
                    reason: "token revoked".to_owned(),
                });
            }
        }
        Ok(())
    }
}
