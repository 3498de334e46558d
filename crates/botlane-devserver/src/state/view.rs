//! The read-only view of the state that tests get.

use std::collections::VecDeque;

use botlane_proto::payload::{Notification, WireMessage};

use super::State;
use crate::records::{FrameRecord, HttpRecord, NotificationRecord};
use crate::StoredMenu;

/// A read-only look at the service's state, given to the condition of
/// [`DevServer::wait_for`](crate::DevServer::wait_for).
pub struct StateView<'a> {
    pub(crate) state: &'a State,
}

impl StateView<'_> {
    /// The messages a channel keeps (the newest
    /// [`Limits::channel_history`](crate::Limits::channel_history)), oldest
    /// first, content still sealed.
    pub fn messages(&self, channel_id: &str) -> &VecDeque<WireMessage> {
        static NONE: VecDeque<WireMessage> = VecDeque::new();
        self.state
            .channels
            .get(channel_id)
            .map_or(&NONE, |c| &c.messages)
    }

    /// A bot's published menu.
    pub fn menu(&self, bot_id: &str) -> Option<&StoredMenu> {
        self.state.menus.get(bot_id)
    }

    /// The frames received and sent on logged-in connections, oldest
    /// first: the newest [`Limits::frame_records`](crate::Limits::frame_records)
    /// within [`Limits::frame_record_bytes`](crate::Limits::frame_record_bytes).
    /// Nothing is recorded from a connection that has not logged in (its
    /// login frame is recorded once the login succeeds).
    pub fn frames(&self) -> &VecDeque<FrameRecord> {
        self.state.frames.items()
    }

    /// How many frame records were dropped to stay within the caps.
    pub fn frames_evicted(&self) -> u64 {
        self.state.frames.evicted()
    }

    /// The notifications raised for an account, oldest first.
    pub fn notifications_for(&self, account_id: &str) -> Vec<&Notification> {
        self.state
            .notifications
            .items()
            .iter()
            .filter(|n| n.account_id == account_id)
            .map(|n| &n.notification)
            .collect()
    }

    /// The notifications raised (the newest
    /// [`Limits::notification_records`](crate::Limits::notification_records)),
    /// with their recipients and whether they were pushed.
    pub fn notification_records(&self) -> &VecDeque<NotificationRecord> {
        self.state.notifications.items()
    }

    /// Whether the account has a logged-in connection.
    pub fn is_online(&self, account_id: &str) -> bool {
        self.state.is_online(account_id)
    }

    /// The number of open WebSocket connections, logged in or not.
    pub fn connection_count(&self) -> usize {
        self.state.connections.len()
    }

    /// The number of WebSocket connections that have not logged in.
    pub fn prelogin_count(&self) -> usize {
        self.state.prelogin
    }

    /// The number of logged-in WebSocket connections.
    pub fn session_count(&self) -> usize {
        self.state.sessions
    }

    /// How many connections were closed because their outgoing queue
    /// overflowed ([`Limits::outbound_queue_bytes`](crate::Limits::outbound_queue_bytes)).
    pub fn queue_overflows(&self) -> u64 {
        self.state.queue_overflows
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
    pub fn http_requests(&self) -> &VecDeque<HttpRecord> {
        self.state.rest.http.items()
    }

    /// How many HTTP request records were dropped to stay within the caps.
    pub fn http_requests_evicted(&self) -> u64 {
        self.state.rest.http.evicted()
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
