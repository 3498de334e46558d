//! What a test reads from a running service: ids, stored messages and menus,
//! the records, and a wait for any condition on the state.

use std::time::Duration;

use botlane_proto::payload::{Notification, WireMessage};

use super::DevServer;
use crate::{FrameRecord, HttpRecord, StateView, StoredFile, StoredMenu, WaitTimeout};

impl DevServer {
    /// Whether the server flag `BOT_REST_CREDENTIALS` is on.
    pub fn rest_credentials(&self) -> bool {
        self.shared.lock().rest().enabled
    }

    /// The number of opcode 638 requests that minted a secret (code 0).
    pub fn mint_count(&self) -> u64 {
        self.shared.lock().rest().mints
    }

    /// The number of secrets exchanged at `/auth/verify-session`.
    pub fn exchange_count(&self) -> u64 {
        self.shared.lock().rest().exchanges
    }

    /// The HTTP requests the REST listener recorded, in order of arrival,
    /// with every header as received (the newest
    /// [`Limits::http_records`](crate::Limits::http_records); see
    /// [`HttpRecord`] for what a record keeps of a body).
    pub fn http_requests(&self) -> Vec<HttpRecord> {
        self.view(|s| s.http_requests().iter().cloned().collect())
    }

    /// A stored file, with its IV.
    pub fn file(&self, file_id: &str) -> Option<StoredFile> {
        self.shared.lock().rest().file(file_id).cloned()
    }

    /// The files of a server, in the order they were added.
    pub fn files(&self, server_id: &str) -> Vec<StoredFile> {
        let state = self.shared.lock();
        state
            .rest()
            .files
            .iter()
            .filter(|f| f.server_id == server_id)
            .cloned()
            .collect()
    }

    /// The id of the account with this name (the first one, if several share it).
    pub fn account_id(&self, name: &str) -> Option<String> {
        let state = self.shared.lock();
        let mut matching: Vec<_> = state.accounts().filter(|a| a.name == name).collect();
        // Ids are random: order by creation, which the config order follows.
        matching.sort_by_key(|a| a.created);
        matching.first().map(|a| a.id.clone())
    }

    /// The id of the server with this name.
    pub fn server_id(&self, name: &str) -> Option<String> {
        let state = self.shared.lock();
        state
            .servers()
            .find(|(_, s)| s.name == name)
            .map(|(id, _)| id.to_owned())
    }

    /// The id of the channel with this name in a server.
    pub fn channel_id(&self, server_id: &str, name: &str) -> Option<String> {
        let state = self.shared.lock();
        state
            .channels()
            .find(|c| c.server_id == server_id && c.name == name)
            .map(|c| c.id.clone())
    }

    /// The messages of a channel, oldest first, exactly as stored (sealed).
    pub fn messages(&self, channel_id: &str) -> Vec<WireMessage> {
        self.view(|s| s.messages(channel_id).iter().cloned().collect())
    }

    /// A bot's published menu, command names casefolded.
    pub fn menu(&self, bot_id: &str) -> Option<StoredMenu> {
        self.view(|s| s.menu(bot_id).cloned())
    }

    /// The frames recorded on logged-in connections, in the order recorded
    /// (see [`StateView::frames`] for the caps).
    pub fn frames(&self) -> Vec<FrameRecord> {
        self.view(|s| s.frames().iter().cloned().collect())
    }

    /// The notifications raised for an account, oldest first.
    pub fn notifications_for(&self, account_id: &str) -> Vec<Notification> {
        self.view(|s| {
            s.notifications_for(account_id)
                .into_iter()
                .cloned()
                .collect()
        })
    }

    /// Reads the state through a [`StateView`]. The state is locked while
    /// `read` runs: call no method of the `DevServer` from inside it (that
    /// would wait for the lock forever); take what you need first.
    pub fn view<R>(&self, read: impl FnOnce(&StateView<'_>) -> R) -> R {
        let state = self.shared.lock();
        read(&StateView { state: &state })
    }

    /// Waits until `cond` holds, re-checking after every change of the
    /// state, for at most `timeout`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.wait_for(|s| s.connection_count() == 0, Duration::from_secs(1)).await?;
    /// assert!(server.wait_for(|s| s.connection_count() == 1, Duration::from_millis(20)).await.is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn wait_for<F>(&self, mut cond: F, timeout: Duration) -> Result<(), WaitTimeout>
    where
        F: FnMut(&StateView<'_>) -> bool,
    {
        let deadline = crate::limits::deadline(timeout);
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            // Registered before the check, so a change between the check and
            // the await still wakes us.
            notified.as_mut().enable();
            if self.view(&mut cond) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(WaitTimeout(timeout));
            }
        }
    }

    /// The playground page's URL, such as `http://127.0.0.1:40123/playground`,
    /// when the service was started with
    /// [`DevServerConfig::playground`](crate::DevServerConfig::playground); `None` otherwise.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    ///
    /// let server = DevServer::start(DevServerConfig::default().playground(true)).await?;
    /// let url = server.playground_url().expect("the playground is on");
    /// assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/playground"));
    /// assert!(DevServer::start(Default::default()).await?.playground_url().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn playground_url(&self) -> Option<String> {
        self.playground.as_ref().map(|_| {
            self.ws_url()
                .replacen("ws", "http", 1)
                .replace("/ws", "/playground")
        })
    }

    /// The id of the playground's channel, where the page chats with every
    /// bot; `None` when the playground is off.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    ///
    /// let server = DevServer::start(DevServerConfig::default().playground(true)).await?;
    /// let channel = server.playground_channel().expect("the playground is on");
    /// let you = server.account_id("you").expect("the playground's human account");
    /// assert_eq!(server.view(|s| s.members(&channel).to_vec()), [you]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn playground_channel(&self) -> Option<String> {
        self.playground.as_ref().map(|p| p.channel_id.clone())
    }
}
