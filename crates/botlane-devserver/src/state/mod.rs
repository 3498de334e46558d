//! The service's in-memory state, behind one mutex.

mod accounts;
mod channels;
mod connections;
pub(crate) mod menu;
mod outbox;
pub(crate) mod rest;
mod view;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use botlane_proto::payload::{AccountKind, ChannelKeyPush};
use tokio::sync::Notify;
use uuid::Uuid;

pub(crate) use accounts::{new_token, Account, TokenHash};
pub use accounts::{BotAccount, UserAccount};
pub use channels::Denial;
pub(crate) use channels::{Channel, Server};
pub(crate) use connections::{Connection, Termination};
pub(crate) use outbox::{outbox, Backlog, Outbound, OutboxReader};
pub(crate) use rest::RestState;
pub use rest::{
    StoredFile, DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW, DEFAULT_SESSION_LIFETIME, SECRET_LIFETIME,
};
pub use view::StateView;

use crate::records::{FrameRecord, NotificationRecord, Ring};
use crate::throttle::Throttle;
use crate::{DevServerConfig, DevServerError, Limits, StoredMenu};

/// The state and a signal raised after every change, for
/// [`DevServer::wait_for`](crate::DevServer::wait_for).
pub(crate) struct Shared {
    state: Mutex<State>,
    pub(crate) changed: Notify,
}

impl Shared {
    pub(crate) fn new(state: State) -> Self {
        Self {
            state: Mutex::new(state),
            changed: Notify::new(),
        }
    }

    /// Locks the state for reading.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state as consistent as a
        // dev service needs; keep serving rather than poisoning every test.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the state and wakes everyone waiting for a change.
    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut State) -> R) -> R {
        let result = change(&mut self.lock());
        self.changed.notify_waiters();
        result
    }
}

/// The whole state.
pub(crate) struct State {
    pub(crate) accounts: HashMap<String, Account>,
    tokens: HashMap<TokenHash, String>,
    pub(crate) servers: HashMap<String, Server>,
    pub(crate) channels: HashMap<String, Channel>,
    channel_order: Vec<String>,
    pub(crate) menus: HashMap<String, StoredMenu>,
    pub(crate) pending_keys: HashMap<String, Vec<ChannelKeyPush>>,
    pub(crate) connections: BTreeMap<u64, Connection>,
    /// The logged-in connections of each account: a message to a channel
    /// pushes to each member's connections, which a scan of every
    /// connection per member made cost members × connections.
    by_account: HashMap<String, Vec<u64>>,
    next_connection: u64,
    /// The connection whose frame is being handled: frames queued for it are
    /// its own (see `outbox`).
    pub(crate) handling: Option<u64>,
    /// Connections in the pre-login pool and in the session pool.
    prelogin: usize,
    sessions: usize,
    pub(crate) frames: Ring<FrameRecord>,
    pub(crate) notifications: Ring<NotificationRecord>,
    pub(crate) rest: RestState,
    pub(crate) limits: Limits,
    /// Connections closed because their queue overflowed.
    pub(crate) queue_overflows: u64,
    overflow_warnings: Throttle,
    envelope_warnings: Throttle,
    /// Requests still to fail with `-2`, by opcode
    /// ([`DevServer::fail_next_requests`](crate::DevServer::fail_next_requests)).
    pub(crate) injected_failures: HashMap<u16, u32>,
}

impl State {
    pub(crate) fn from_config(config: &DevServerConfig) -> Result<Self, DevServerError> {
        let limits = &config.limits;
        limits.check().map_err(DevServerError::Config)?;
        let mut state = Self {
            accounts: HashMap::new(),
            tokens: HashMap::new(),
            servers: HashMap::new(),
            channels: HashMap::new(),
            channel_order: Vec::new(),
            menus: HashMap::new(),
            pending_keys: HashMap::new(),
            connections: BTreeMap::new(),
            by_account: HashMap::new(),
            next_connection: 1,
            handling: None,
            prelogin: 0,
            sessions: 0,
            frames: Ring::new(limits.frame_records, limits.frame_record_bytes),
            notifications: Ring::new(limits.notification_records, usize::MAX),
            rest: RestState::new(config.bot_rest_credentials, limits),
            limits: limits.clone(),
            queue_overflows: 0,
            overflow_warnings: Throttle::new(),
            envelope_warnings: Throttle::new(),
            injected_failures: HashMap::new(),
        };
        let accounts = config
            .bots
            .iter()
            .map(|a| (a, AccountKind::Bot))
            .chain(config.users.iter().map(|a| (a, AccountKind::User)));
        for (account, kind) in accounts {
            if state.accounts.values().any(|a| a.name == account.name) {
                return Err(DevServerError::Config(format!(
                    "two accounts are named {:?}",
                    account.name
                )));
            }
            state.add_account(&account.name, kind, &account.token, account.id.as_deref())?;
        }
        for server in &config.servers {
            let server_id = state.create_server(&server.name, server.id.as_deref())?;
            for channel in &server.channels {
                let channel_id =
                    state.create_channel(&server_id, &channel.name, channel.id.as_deref())?;
                for member in &channel.members {
                    let account_id = state
                        .accounts
                        .values()
                        .find(|a| a.name == *member)
                        .map(|a| a.id.clone())
                        .ok_or_else(|| {
                            DevServerError::Config(format!(
                                "channel {:?} lists unknown member {member:?}",
                                channel.name
                            ))
                        })?;
                    state.add_member(&channel_id, &account_id)?;
                }
            }
            for file in &server.files {
                if let Some(id) = file.id.as_deref() {
                    if id.is_empty() || state.rest.file(id).is_some() {
                        return Err(DevServerError::Config(format!(
                            "file id {id:?} is empty or used twice"
                        )));
                    }
                }
                state
                    .rest
                    .add_file(
                        &server_id,
                        &file.name,
                        file.content.clone().into_bytes(),
                        file.id.as_deref(),
                    )
                    .ok_or(DevServerError::Random)?;
            }
        }
        Ok(state)
    }

    /// Whether this request of opcode `op` is to fail with `-2`; counts it.
    pub(crate) fn take_injected_failure(&mut self, op: u16) -> bool {
        match self.injected_failures.get_mut(&op) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        }
    }

    fn fresh_id(
        &self,
        id: Option<&str>,
        what: &str,
        taken: impl Fn(&Self, &str) -> bool,
    ) -> Result<String, DevServerError> {
        match id {
            Some("") => Err(DevServerError::Config(format!("a {what} id is empty"))),
            Some(id) if taken(self, id) => Err(DevServerError::Config(format!(
                "two {what}s have the id {id:?}"
            ))),
            Some(id) => Ok(id.to_owned()),
            None => Ok(Uuid::new_v4().hyphenated().to_string()),
        }
    }
}
