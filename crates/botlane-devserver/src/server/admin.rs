//! The admin calls a test makes on a running service: set the scene, make
//! sends fail, cut or close connections, steer the REST lane. Each one
//! calls the same action as the HTTP admin endpoint (`crate::admin`).

use std::sync::Arc;
use std::time::Duration;

use super::DevServer;
use crate::admin::Actions;
use crate::{BotAccount, Denial, DevServerError, UserAccount};

impl DevServer {
    /// The actions, shared with the HTTP admin endpoint.
    fn actions(&self) -> Actions {
        Actions::new(Arc::clone(&self.shared))
    }

    /// Creates a bot account with a fresh id and token.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let bot = server.add_bot("dicebot");
    /// assert_eq!(bot.id.len(), 36);
    /// assert_ne!(bot.token, server.add_bot("dicebot").token);
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_bot(&self, name: &str) -> BotAccount {
        self.actions().add_bot(name)
    }

    /// Creates a human account with a fresh id and token.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let alice = server.add_user("alice");
    /// assert_eq!(server.account_id("alice"), Some(alice.id));
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_user(&self, name: &str) -> UserAccount {
        self.actions().add_user(name)
    }

    /// Creates a server (room) and returns its id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let id = server.create_server("lobby");
    /// assert_eq!(server.server_id("lobby"), Some(id));
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_server(&self, name: &str) -> String {
        self.actions().create_server(name)
    }

    /// Creates a channel in a server and returns its id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let lobby = server.create_server("lobby");
    /// let general = server.create_channel(&lobby, "general")?;
    /// assert_eq!(server.channel_id(&lobby, "general"), Some(general));
    /// assert!(server.create_channel("no-such-server", "x").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_channel(&self, server_id: &str, name: &str) -> Result<String, DevServerError> {
        self.actions().create_channel(server_id, name)
    }

    /// Makes an account (bot or human) a member of a channel; a no-op if it
    /// already is. Its logged-in connections get `channel_added` (op 34,
    /// `{"channel": {"id", "server_id", "name"}}`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// let bot = server.add_bot("dicebot");
    /// server.add_member(&channel, &bot.id)?;
    /// assert_eq!(server.view(|s| s.members(&channel).to_vec()), [bot.id]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_member(&self, channel_id: &str, account_id: &str) -> Result<(), DevServerError> {
        self.actions().add_member(channel_id, account_id)
    }

    /// Takes an account out of a channel; a no-op if it is not a member.
    /// Its connections get `channel_removed` (op 35, `{"channel_id"}`), and
    /// it stops getting the channel's messages and keys: sends, history and
    /// key shares in that channel answer `-4` for it, and the keys that
    /// were waiting for it are dropped.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// let bot = server.add_bot("dicebot");
    /// server.add_member(&channel, &bot.id)?;
    /// server.remove_member(&channel, &bot.id)?;
    /// assert!(server.view(|s| s.members(&channel).is_empty()));
    /// assert!(server.remove_member(&channel, "nobody").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn remove_member(&self, channel_id: &str, account_id: &str) -> Result<(), DevServerError> {
        self.actions().remove_member(channel_id, account_id)
    }

    /// Makes every send (op 30) to a channel be refused with `denial`, or
    /// accepted again with `None`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::Denial;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// server.deny_sends(&channel, Some(Denial::RateLimited))?;
    /// server.deny_sends(&channel, None)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn deny_sends(
        &self,
        channel_id: &str,
        denial: Option<Denial>,
    ) -> Result<(), DevServerError> {
        self.actions().deny_sends(channel_id, denial)
    }

    /// Drops every connection at once, with no close frame, as a network
    /// failure would; clients see their socket end and may reconnect.
    pub fn drop_connections(&self) {
        self.actions().drop_connections();
    }

    /// Revokes a bot: its token stops working and its connections are closed.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let bot = server.add_bot("dicebot");
    /// server.revoke_bot(&bot.id)?;
    /// let alice = server.add_user("alice");
    /// assert!(server.revoke_bot(&alice.id).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn revoke_bot(&self, bot_id: &str) -> Result<(), DevServerError> {
        self.actions().revoke_bot(bot_id)
    }

    /// Turns the server flag `BOT_REST_CREDENTIALS` on or off. It gates
    /// minting only: secrets and sessions already issued stay valid.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// assert!(!server.rest_credentials());
    /// server.set_rest_credentials(true);
    /// assert!(server.rest_credentials());
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_rest_credentials(&self, on: bool) {
        self.actions().set_rest_credentials(on);
    }

    /// Limits each bot to `max` successful mints (opcode 638) in any sliding
    /// `window`; over it, 638 answers `-9`. The default is
    /// [`DEFAULT_MINT_LIMIT`](crate::DEFAULT_MINT_LIMIT) per
    /// [`DEFAULT_MINT_WINDOW`](crate::DEFAULT_MINT_WINDOW). Setting it forgets
    /// the mints counted so far; `max` 0 refuses every mint.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use std::time::Duration;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.set_mint_rate_limit(1, Duration::from_secs(60));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_mint_rate_limit(&self, max: u32, window: Duration) {
        self.actions().set_mint_rate_limit(max, window);
    }

    /// Makes the next `count` mints that pass every other check answer `-2`
    /// (server error); 0 cancels what is left.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.fail_next_mints(1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_next_mints(&self, count: u32) {
        self.actions().fail_next_mints(count);
    }

    /// Makes the next `count` requests of opcode `op`, from any logged-in
    /// session, answer `{"code": -2, "reason": "injected failure"}` before
    /// any other check, so a client's handling of a failed service can be
    /// tested on any opcode; 0 cancels what is left. `op` is any request
    /// opcode of a logged-in session (12, 20, 30, 40, 51, 52, 60, 61, 240):
    /// not login (10), and 638 has [`fail_next_mints`](Self::fail_next_mints);
    /// anything else is [`DevServerError::NotFailable`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.fail_next_requests(30, 1)?; // the next send
    /// assert!(server.fail_next_requests(10, 1).is_err()); // login
    /// assert!(server.fail_next_requests(99, 1).is_err()); // no such request
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_next_requests(&self, op: u16, count: u32) -> Result<(), DevServerError> {
        self.actions().fail_next_requests(op, count)
    }

    /// Sets the lifetime of the `verification` values exchanged from now on
    /// (default [`DEFAULT_SESSION_LIFETIME`](crate::DEFAULT_SESSION_LIFETIME),
    /// 15 minutes). Expiry is measured on tokio's clock, so a test that
    /// pauses time can move past it. `expires_in` reports it in whole
    /// seconds, rounded down.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use std::time::Duration;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.set_session_lifetime(Duration::from_secs(2));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_session_lifetime(&self, lifetime: Duration) {
        self.actions().set_session_lifetime(lifetime);
    }

    /// Purges a bot's REST rows (pending secrets and sessions) without
    /// revoking its token, so its next `/api` call gets 401
    /// `session_expired` and it can mint again; returns how many rows there
    /// were. [`revoke_bot`](Self::revoke_bot) purges them too. An unknown
    /// account is [`DevServerError::UnknownAccount`], a human one
    /// [`DevServerError::NotABot`], as for `revoke_bot`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let bot = server.add_bot("dicebot");
    /// assert_eq!(server.purge_rest_credentials(&bot.id)?, 0);
    /// assert!(server.purge_rest_credentials("no-such-bot").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn purge_rest_credentials(&self, bot_id: &str) -> Result<usize, DevServerError> {
        self.actions().purge_rest_credentials(bot_id)
    }

    /// Makes the REST listener answer every request for `path` (exact, query
    /// ignored, before any other check) with `302 Found` and
    /// `Location: to_url`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let elsewhere = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.redirect("/api/files/list", &format!("{}/api/files/list", elsewhere.rest_url()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn redirect(&self, path: &str, to_url: &str) {
        self.shared.update(|s| s.rest_mut().redirect(path, to_url));
    }

    /// Stores a file in a server, with a random IV, and returns its id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let lobby = server.create_server("lobby");
    /// let id = server.add_file(&lobby, "notes.txt", b"hello".to_vec())?;
    /// assert_eq!(server.file(&id).unwrap().bytes, b"hello");
    /// assert!(server.add_file("no-such-server", "x", Vec::new()).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_file(
        &self,
        server_id: &str,
        name: &str,
        bytes: Vec<u8>,
    ) -> Result<String, DevServerError> {
        self.shared.update(|s| {
            if !s.has_server(server_id) {
                return Err(DevServerError::UnknownServer(server_id.to_owned()));
            }
            s.rest_mut()
                .add_file(server_id, name, bytes, None)
                .ok_or(DevServerError::Random)
        })
    }
}
