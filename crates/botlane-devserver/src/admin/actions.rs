//! The admin actions themselves, in one place: the [`DevServer`] handle's
//! methods and the HTTP admin endpoint both call these, so the two can
//! never do different things.
//!
//! [`DevServer`]: crate::DevServer

use std::sync::Arc;
use std::time::Duration;

use botlane_proto::payload::AccountKind;
use botlane_proto::OpCode;

use crate::state::{new_token, Shared, State, Termination};
use crate::{BotAccount, Denial, DevServerError, StateView, UserAccount};

/// The requests [`Actions::fail_next_requests`] can fail: those a logged-in
/// session makes, except login (a failed login would leave the session in
/// no defined state) and 638, whose `-2` comes after its other checks
/// (`fail_next_mints`).
pub(crate) const FAILABLE: [OpCode; 9] = [
    OpCode::Heartbeat,
    OpCode::MenuPublish,
    OpCode::Send,
    OpCode::HistoryFetch,
    OpCode::KeyShare,
    OpCode::PublicKeyFetch,
    OpCode::ChannelJoin,
    OpCode::ChannelMembers,
    OpCode::FetchEmojis,
];

/// A handle on the state that performs admin actions.
#[derive(Clone)]
pub(crate) struct Actions {
    shared: Arc<Shared>,
}

impl Actions {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    pub(crate) fn add_bot(&self, name: &str) -> BotAccount {
        let (id, token) = self.add_account(name, AccountKind::Bot, "bot");
        BotAccount { id, token }
    }

    pub(crate) fn add_user(&self, name: &str) -> UserAccount {
        let (id, token) = self.add_account(name, AccountKind::User, "usr");
        UserAccount { id, token }
    }

    fn add_account(&self, name: &str, kind: AccountKind, prefix: &str) -> (String, String) {
        let token = new_token(prefix);
        let id = self
            .shared
            .update(|s| s.add_account(name, kind, &token, None))
            // A fresh random id and a fresh random token cannot collide with
            // existing ones, and no fixed id is given.
            .expect("fresh random ids and tokens are unique");
        (id, token)
    }

    pub(crate) fn create_server(&self, name: &str) -> String {
        self.shared
            .update(|s| s.create_server(name, None))
            .expect("a fresh random server id is unique")
    }

    pub(crate) fn create_channel(
        &self,
        server_id: &str,
        name: &str,
    ) -> Result<String, DevServerError> {
        self.shared
            .update(|s| s.create_channel(server_id, name, None))
    }

    pub(crate) fn add_member(
        &self,
        channel_id: &str,
        account_id: &str,
    ) -> Result<(), DevServerError> {
        self.shared.update(|s| s.add_member(channel_id, account_id))
    }

    pub(crate) fn remove_member(
        &self,
        channel_id: &str,
        account_id: &str,
    ) -> Result<(), DevServerError> {
        self.shared
            .update(|s| s.remove_member(channel_id, account_id))
    }

    pub(crate) fn deny_sends(
        &self,
        channel_id: &str,
        denial: Option<Denial>,
    ) -> Result<(), DevServerError> {
        self.shared.update(|s| {
            let channel = s
                .channel_mut(channel_id)
                .ok_or_else(|| DevServerError::UnknownChannel(channel_id.to_owned()))?;
            channel.denial = denial;
            Ok(())
        })
    }

    pub(crate) fn drop_connections(&self) {
        self.shared.lock().terminate_all(&Termination::Abrupt);
    }

    pub(crate) fn revoke_bot(&self, bot_id: &str) -> Result<(), DevServerError> {
        self.shared.update(|s| s.revoke_bot(bot_id))
    }

    pub(crate) fn set_rest_credentials(&self, on: bool) {
        self.shared.update(|s| s.rest_mut().enabled = on);
    }

    pub(crate) fn set_mint_rate_limit(&self, max: u32, window: Duration) {
        self.shared
            .update(|s| s.rest_mut().set_mint_rate_limit(max, window));
    }

    pub(crate) fn fail_next_mints(&self, count: u32) {
        self.shared.update(|s| s.rest_mut().fail_next_mints(count));
    }

    pub(crate) fn fail_next_requests(&self, op: u16, count: u32) -> Result<(), DevServerError> {
        if !FAILABLE.iter().any(|failable| failable.code() == op) {
            return Err(DevServerError::NotFailable(op));
        }
        self.shared.update(|s| s.fail_next_requests(op, count));
        Ok(())
    }

    pub(crate) fn set_session_lifetime(&self, lifetime: Duration) {
        self.shared
            .update(|s| s.rest_mut().set_session_lifetime(lifetime));
    }

    pub(crate) fn purge_rest_credentials(&self, bot_id: &str) -> Result<usize, DevServerError> {
        self.shared.update(|s| s.purge_rest_credentials(bot_id))
    }

    /// What `read` makes of the state, under its lock: for the endpoint's
    /// read-only routes (`GET /metrics`), not an action of its own.
    pub(super) fn read<R>(&self, read: impl FnOnce(&State) -> R) -> R {
        read(&self.shared.lock())
    }

    /// What the admin endpoint's `GET /admin/state` reports.
    pub(crate) fn summary(&self) -> Summary {
        let state = self.shared.lock();
        let view = StateView { state: &state };
        Summary {
            rest_credentials: state.rest().enabled,
            mint_count: view.mint_count(),
            exchange_count: view.exchange_count(),
            connection_count: view.connection_count(),
            session_count: view.session_count(),
        }
    }
}

/// Counters a client in another language can assert on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Summary {
    pub(crate) rest_credentials: bool,
    pub(crate) mint_count: u64,
    pub(crate) exchange_count: u64,
    pub(crate) connection_count: usize,
    pub(crate) session_count: usize,
}
