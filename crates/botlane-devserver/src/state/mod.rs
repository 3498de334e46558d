//! The service's in-memory state, behind one mutex.

mod accounts;
mod channels;
mod connections;
pub(crate) mod menu;
mod meters;
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
pub(crate) use meters::{Meters, Refused};
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
    accounts: HashMap<String, Account>,
    tokens: HashMap<TokenHash, String>,
    servers: HashMap<String, Server>,
    channels: HashMap<String, Channel>,
    channel_order: Vec<String>,
    menus: HashMap<String, StoredMenu>,
    pending_keys: HashMap<String, Vec<ChannelKeyPush>>,
    connections: BTreeMap<u64, Connection>,
    /// The logged-in connections of each account: a message to a channel
    /// pushes to each member's connections, which a scan of every
    /// connection per member made cost members × connections.
    by_account: HashMap<String, Vec<u64>>,
    next_connection: u64,
    /// The connection whose frame is being handled: frames queued for it are
    /// its own (see `outbox`).
    handling: Option<u64>,
    /// Connections in the pre-login pool and in the session pool.
    prelogin: usize,
    sessions: usize,
    frames: Ring<FrameRecord>,
    notifications: Ring<NotificationRecord>,
    rest: RestState,
    limits: Limits,
    /// Connections closed because their queue overflowed.
    queue_overflows: u64,
    /// Frames, messages and logins counted for `GET /metrics`.
    meters: Meters,
    overflow_warnings: Throttle,
    envelope_warnings: Throttle,
    /// Requests still to fail with `-2`, by opcode
    /// ([`DevServer::fail_next_requests`](crate::DevServer::fail_next_requests)).
    injected_failures: HashMap<u16, u32>,
    /// Reused for every frame written and every sealed payload checked, so
    /// that relaying a message allocates only what it keeps (see
    /// `connections::Frame`).
    scratch: Vec<u8>,
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
            meters: Meters::default(),
            overflow_warnings: Throttle::new(),
            envelope_warnings: Throttle::new(),
            injected_failures: HashMap::new(),
            scratch: Vec::new(),
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
                if let Some(id) = file.id.as_deref()
                    && (id.is_empty() || state.rest.file(id).is_some())
                {
                    return Err(DevServerError::Config(format!(
                        "file id {id:?} is empty or used twice"
                    )));
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

    /// The budgets the service runs with.
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The REST lane's part (credentials, files, HTTP records).
    pub(crate) fn rest(&self) -> &RestState {
        &self.rest
    }

    /// The REST lane's part, to change.
    pub(crate) fn rest_mut(&mut self) -> &mut RestState {
        &mut self.rest
    }

    /// The counters `GET /metrics` shows.
    pub(crate) fn meters(&self) -> &Meters {
        &self.meters
    }

    /// The counters `GET /metrics` shows, to count.
    pub(crate) fn meters_mut(&mut self) -> &mut Meters {
        &mut self.meters
    }

    /// Every account, in no order.
    pub(crate) fn accounts(&self) -> impl Iterator<Item = &Account> {
        self.accounts.values()
    }

    /// The account with id `id`.
    pub(crate) fn account(&self, id: &str) -> Option<&Account> {
        self.accounts.get(id)
    }

    /// The account with id `id`, to change.
    pub(crate) fn account_mut(&mut self, id: &str) -> Option<&mut Account> {
        self.accounts.get_mut(id)
    }

    /// Every server with its id, in no order.
    pub(crate) fn servers(&self) -> impl Iterator<Item = (&str, &Server)> {
        self.servers
            .iter()
            .map(|(id, server)| (id.as_str(), server))
    }

    /// Whether a server has id `id`.
    pub(crate) fn has_server(&self, id: &str) -> bool {
        self.servers.contains_key(id)
    }

    /// Every channel, in no order.
    pub(crate) fn channels(&self) -> impl Iterator<Item = &Channel> {
        self.channels.values()
    }

    /// The channel with id `id`.
    pub(crate) fn channel(&self, id: &str) -> Option<&Channel> {
        self.channels.get(id)
    }

    /// The channel with id `id`, to change.
    pub(crate) fn channel_mut(&mut self, id: &str) -> Option<&mut Channel> {
        self.channels.get_mut(id)
    }

    /// The menu bot `bot` published last.
    pub(crate) fn menu(&self, bot: &str) -> Option<&StoredMenu> {
        self.menus.get(bot)
    }

    /// Stores the menu bot `bot` published, replacing its last.
    pub(crate) fn set_menu(&mut self, bot: &str, menu: StoredMenu) {
        self.menus.insert(bot.to_owned(), menu);
    }

    /// Keeps a channel key for `to`, who is offline, until it logs in
    /// ([`take_held_keys`](Self::take_held_keys)). One waiting key per
    /// channel and sender: a newer share replaces the older, so what waits
    /// stays bounded by the memberships.
    pub(crate) fn hold_key(&mut self, to: String, key: ChannelKeyPush) {
        let waiting = self.pending_keys.entry(to).or_default();
        waiting.retain(|k| !(k.channel_id == key.channel_id && k.from == key.from));
        waiting.push(key);
    }

    /// The channel keys held for `account` while it was offline.
    pub(crate) fn take_held_keys(&mut self, account: &str) -> Vec<ChannelKeyPush> {
        self.pending_keys.remove(account).unwrap_or_default()
    }

    /// The connection with number `conn`.
    pub(crate) fn connection(&self, conn: u64) -> Option<&Connection> {
        self.connections.get(&conn)
    }

    /// Says whose frame is being handled (`None` once it is): what is
    /// queued for that connection meanwhile is its own (see `outbox`).
    pub(crate) fn set_handling(&mut self, conn: Option<u64>) {
        self.handling = conn;
    }

    /// The frames recorded, oldest first.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn frames(&self) -> &Ring<FrameRecord> {
        &self.frames
    }

    /// Records a notification sent (or not) to its account.
    pub(crate) fn record_notification(&mut self, record: NotificationRecord) {
        self.notifications.push(record);
    }

    /// Makes the next `count` requests of opcode `op` fail with `-2`.
    pub(crate) fn fail_next_requests(&mut self, op: u16, count: u32) {
        self.injected_failures.insert(op, count);
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
