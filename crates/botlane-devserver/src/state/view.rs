//! The read-only view of the state that tests get.

use botlane::wire::{Notification, WireMessage};

use super::State;
use crate::records::{FrameRecord, HttpRecord, NotificationRecord};
use crate::StoredMenu;

/// A read-only look at the service's state, given to the condition of
/// [`DevServer::wait_for`](crate::DevServer::wait_for).
pub struct StateView<'a> {
    pub(crate) state: &'a State,
}

impl StateView<'_> {
    /// The messages of a channel, oldest first, content still sealed.
    pub fn messages(&self, channel_id: &str) -> &[WireMessage] {
        self.state
            .channels
            .get(channel_id)
            .map_or(&[], |c| c.messages.as_slice())
    }

    /// A bot's published menu.
    pub fn menu(&self, bot_id: &str) -> Option<&StoredMenu> {
        self.state.menus.get(bot_id)
    }

    /// Every frame received and sent so far.
    pub fn frames(&self) -> &[FrameRecord] {
        &self.state.frames
    }

    /// The notifications raised for an account, oldest first.
    pub fn notifications_for(&self, account_id: &str) -> Vec<&Notification> {
        self.state
            .notifications
            .iter()
            .filter(|n| n.account_id == account_id)
            .map(|n| &n.notification)
            .collect()
    }

    /// Every notification raised, with its recipient and whether it was pushed.
    pub fn notification_records(&self) -> &[NotificationRecord] {
        &self.state.notifications
    }

    /// Whether the account has a logged-in connection.
    pub fn is_online(&self, account_id: &str) -> bool {
        self.state.is_online(account_id)
    }

    /// The number of open connections, logged in or not.
    pub fn connection_count(&self) -> usize {
        self.state.connections.len()
    }

    /// The members of a channel, in the order they joined.
    pub fn members(&self, channel_id: &str) -> &[String] {
        self.state
            .channels
            .get(channel_id)
            .map_or(&[], |c| c.members.as_slice())
    }

    /// The account's registered identity public key (base64), once it has logged in.
    pub fn public_key(&self, account_id: &str) -> Option<&str> {
        self.state
            .accounts
            .get(account_id)
            .and_then(|a| a.public_key.as_deref())
    }

    /// Every HTTP request the REST listener received, in order of arrival.
    pub fn http_requests(&self) -> &[HttpRecord] {
        &self.state.rest.http
    }

    /// The number of opcode 638 requests that minted a secret.
    pub fn mint_count(&self) -> u64 {
        self.state.rest.mints
    }

    /// The number of secrets exchanged at `/auth/verify-session`.
    pub fn exchange_count(&self) -> u64 {
        self.state.rest.exchanges
    }

    /// The channel keys waiting for an offline account.
    pub fn pending_key_count(&self, account_id: &str) -> usize {
        self.state.pending_keys.get(account_id).map_or(0, Vec::len)
    }
}
