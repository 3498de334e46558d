//! The service's in-memory state, behind one mutex, and its recordings.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use botlane::wire::{
    encode_frame, AccountKind, ChannelInfo, ChannelKeyPush, Notification, OpCode, ReplyCode,
    WireMessage,
};
use serde::Serialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, watch, Notify};
use uuid::Uuid;

use crate::rest::{HttpRecord, RestState};
use crate::{DevServerConfig, DevServerError, StoredMenu};

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

/// What a connection's writer task is told to do.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// Write this text frame.
    Frame(String),
    /// Write a close frame and stop.
    Close { code: u16, reason: &'static str },
}

/// How a connection is ended from outside its reader loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Termination {
    /// Drop the socket with no close frame (a network failure, as seen by the client).
    Abrupt,
    /// Flush what is queued, then send a close frame.
    Close { code: u16, reason: &'static str },
}

pub(crate) struct Connection {
    pub(crate) account_id: Option<String>,
    tx: mpsc::UnboundedSender<Outbound>,
    kill: watch::Sender<Option<Termination>>,
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

pub(crate) struct Server {
    pub(crate) name: String,
}

pub(crate) struct Channel {
    pub(crate) id: String,
    pub(crate) server_id: String,
    pub(crate) name: String,
    pub(crate) members: Vec<String>,
    pub(crate) denial: Option<Denial>,
    pub(crate) messages: Vec<WireMessage>,
}

/// A refusal [`DevServer::deny_sends`](crate::DevServer::deny_sends) makes a
/// channel give to every send (op 30), so that `sendRejected` can be tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Denial {
    /// `-3`: no permission to post in this channel.
    NoPermission,
    /// `-4`: the channel is unknown.
    UnknownChannel,
    /// `-9`: rate limited.
    RateLimited,
}

impl Denial {
    /// The reply code the denial gives.
    ///
    /// ```
    /// use botlane::wire::ReplyCode;
    /// use botlane_devserver::Denial;
    /// assert_eq!(Denial::RateLimited.code(), ReplyCode::RateLimited);
    /// assert_eq!(Denial::NoPermission.code().code(), -3);
    /// ```
    pub const fn code(self) -> ReplyCode {
        match self {
            Self::NoPermission => ReplyCode::NoPermission,
            Self::UnknownChannel => ReplyCode::UnknownChannel,
            Self::RateLimited => ReplyCode::RateLimited,
        }
    }

    pub(crate) const fn reason(self) -> &'static str {
        match self {
            Self::NoPermission => "no permission to post in this channel",
            Self::UnknownChannel => "unknown channel",
            Self::RateLimited => "rate limited",
        }
    }
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

/// Which way a recorded frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Direction {
    /// From the client to the service.
    Received,
    /// From the service to the client (recorded when queued for writing).
    Sent,
}

/// One frame as the service recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameRecord {
    /// The connection (numbered from 1 in order of arrival).
    pub connection_id: u64,
    /// The account logged in on the connection at the time, if any.
    pub account_id: Option<String>,
    /// Which way it went.
    pub direction: Direction,
    /// The opcode; `None` for a received frame that was not a valid envelope.
    pub opcode: Option<u16>,
    /// The payload's size in bytes (the whole text for an invalid envelope).
    pub payload_size: usize,
    /// The payload's JSON text, with a login token and a 638 reply's
    /// one-time secret replaced by `"[REDACTED]"`; `"[UNPARSED]"` for an
    /// invalid envelope, which might hold a token.
    pub payload: String,
}

impl FrameRecord {
    /// Whether this frame has opcode `op` and went `direction`.
    ///
    /// ```
    /// # use botlane::wire::OpCode;
    /// # use botlane_devserver::{Direction, FrameRecord};
    /// fn replies_to_sends(frames: &[FrameRecord]) -> usize {
    ///     frames.iter().filter(|f| f.is(Direction::Sent, OpCode::Send)).count()
    /// }
    /// assert_eq!(replies_to_sends(&[]), 0);
    /// ```
    pub fn is(&self, direction: Direction, op: OpCode) -> bool {
        self.direction == direction && self.opcode == Some(op.code())
    }
}

/// A notification as recorded for its recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotificationRecord {
    /// Who it is for.
    pub account_id: String,
    /// What was pushed (or would have been, if the account was offline).
    pub notification: Notification,
    /// Whether at least one of the account's connections was sent it.
    pub delivered: bool,
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
    next_connection: u64,
    pub(crate) frames: Vec<FrameRecord>,
    pub(crate) notifications: Vec<NotificationRecord>,
    pub(crate) rest: RestState,
}

impl State {
    pub(crate) fn from_config(config: &DevServerConfig) -> Result<Self, DevServerError> {
        let mut state = Self {
            accounts: HashMap::new(),
            tokens: HashMap::new(),
            servers: HashMap::new(),
            channels: HashMap::new(),
            channel_order: Vec::new(),
            menus: HashMap::new(),
            pending_keys: HashMap::new(),
            connections: BTreeMap::new(),
            next_connection: 1,
            frames: Vec::new(),
            notifications: Vec::new(),
            rest: RestState::new(config.bot_rest_credentials),
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

    pub(crate) fn create_server(
        &mut self,
        name: &str,
        id: Option<&str>,
    ) -> Result<String, DevServerError> {
        let id = self.fresh_id(id, "server", |s, id| s.servers.contains_key(id))?;
        self.servers.insert(
            id.clone(),
            Server {
                name: name.to_owned(),
            },
        );
        Ok(id)
    }

    pub(crate) fn create_channel(
        &mut self,
        server_id: &str,
        name: &str,
        id: Option<&str>,
    ) -> Result<String, DevServerError> {
        if !self.servers.contains_key(server_id) {
            return Err(DevServerError::UnknownServer(server_id.to_owned()));
        }
        let id = self.fresh_id(id, "channel", |s, id| s.channels.contains_key(id))?;
        self.channels.insert(
            id.clone(),
            Channel {
                id: id.clone(),
                server_id: server_id.to_owned(),
                name: name.to_owned(),
                members: Vec::new(),
                denial: None,
                messages: Vec::new(),
            },
        );
        self.channel_order.push(id.clone());
        Ok(id)
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

    pub(crate) fn add_member(
        &mut self,
        channel_id: &str,
        account_id: &str,
    ) -> Result<(), DevServerError> {
        if !self.accounts.contains_key(account_id) {
            return Err(DevServerError::UnknownAccount(account_id.to_owned()));
        }
        let channel = self
            .channels
            .get_mut(channel_id)
            .ok_or_else(|| DevServerError::UnknownChannel(channel_id.to_owned()))?;
        if !channel.members.iter().any(|m| m == account_id) {
            channel.members.push(account_id.to_owned());
        }
        Ok(())
    }

    pub(crate) fn account_by_token(&self, token: &str) -> Option<&Account> {
        let id = self.tokens.get(&hash_token(token))?;
        self.accounts.get(id).filter(|a| !a.revoked)
    }

    pub(crate) fn revoke_bot(&mut self, bot_id: &str) -> Result<(), DevServerError> {
        let account = self
            .accounts
            .get_mut(bot_id)
            .ok_or_else(|| DevServerError::UnknownAccount(bot_id.to_owned()))?;
        if account.kind != AccountKind::Bot {
            return Err(DevServerError::NotABot(bot_id.to_owned()));
        }
        account.revoked = true;
        self.tokens.remove(&account.token_hash);
        self.rest.purge(bot_id);
        for connection in self.connections.values() {
            if connection.account_id.as_deref() == Some(bot_id) {
                connection.kill.send_replace(Some(Termination::Close {
                    code: 1008,
                    reason: "token revoked",
                }));
            }
        }
        Ok(())
    }

    /// The channels `account_id` is a member of, in creation order.
    pub(crate) fn channels_of(&self, account_id: &str) -> Vec<ChannelInfo> {
        self.channel_order
            .iter()
            .filter_map(|id| self.channels.get(id))
            .filter(|c| c.members.iter().any(|m| m == account_id))
            .map(|c| ChannelInfo {
                id: c.id.clone(),
                server_id: c.server_id.clone(),
                name: c.name.clone(),
            })
            .collect()
    }

    pub(crate) fn connect(
        &mut self,
        tx: mpsc::UnboundedSender<Outbound>,
        kill: watch::Sender<Option<Termination>>,
    ) -> u64 {
        let id = self.next_connection;
        self.next_connection += 1;
        self.connections.insert(
            id,
            Connection {
                account_id: None,
                tx,
                kill,
            },
        );
        id
    }

    pub(crate) fn disconnect(&mut self, connection_id: u64) -> Option<String> {
        self.connections
            .remove(&connection_id)
            .and_then(|c| c.account_id)
    }

    pub(crate) fn terminate_all(&self, how: Termination) {
        for connection in self.connections.values() {
            connection.kill.send_replace(Some(how));
        }
    }

    pub(crate) fn account_of(&self, connection_id: u64) -> Option<&str> {
        self.connections
            .get(&connection_id)
            .and_then(|c| c.account_id.as_deref())
    }

    pub(crate) fn is_online(&self, account_id: &str) -> bool {
        self.connections
            .values()
            .any(|c| c.account_id.as_deref() == Some(account_id))
    }

    pub(crate) fn set_account(&mut self, connection_id: u64, account_id: &str) {
        if let Some(connection) = self.connections.get_mut(&connection_id) {
            connection.account_id = Some(account_id.to_owned());
        }
    }

    pub(crate) fn record_received(
        &mut self,
        connection_id: u64,
        opcode: Option<u16>,
        payload_size: usize,
        payload: String,
    ) {
        let account_id = self.account_of(connection_id).map(str::to_owned);
        self.frames.push(FrameRecord {
            connection_id,
            account_id,
            direction: Direction::Received,
            opcode,
            payload_size,
            payload,
        });
    }

    /// Queues a frame on one connection and records it.
    pub(crate) fn send<T: Serialize + ?Sized>(
        &mut self,
        connection_id: u64,
        op: OpCode,
        payload: &T,
    ) {
        self.send_recorded_as(connection_id, op, payload, None);
    }

    /// Like [`send`](Self::send), but records `recorded` instead of the
    /// payload when given (for replies that carry a secret).
    pub(crate) fn send_recorded_as<T: Serialize + ?Sized>(
        &mut self,
        connection_id: u64,
        op: OpCode,
        payload: &T,
        recorded: Option<String>,
    ) {
        let Some(connection) = self.connections.get(&connection_id) else {
            return;
        };
        // Our payload types hold only plain data, so serializing cannot fail.
        let payload = serde_json::to_string(payload).expect("wire payloads always serialize");
        let raw = RawValue::from_string(payload).expect("serde_json output is valid JSON");
        let text = encode_frame(op, &*raw);
        tracing::debug!(
            connection = connection_id,
            op = op.code(),
            size = raw.get().len(),
            "frame sent"
        );
        // A closed channel means the writer is gone: the connection is ending
        // and will be removed by its reader.
        let _ = connection.tx.send(Outbound::Frame(text));
        let account_id = connection.account_id.clone();
        self.frames.push(FrameRecord {
            connection_id,
            account_id,
            direction: Direction::Sent,
            opcode: Some(op.code()),
            payload_size: raw.get().len(),
            payload: recorded.unwrap_or_else(|| raw.get().to_owned()),
        });
    }

    /// Pushes a frame to every logged-in connection of an account; returns
    /// whether there was one.
    pub(crate) fn push<T: Serialize + ?Sized>(
        &mut self,
        account_id: &str,
        op: OpCode,
        payload: &T,
    ) -> bool {
        let targets: Vec<u64> = self
            .connections
            .iter()
            .filter(|(_, c)| c.account_id.as_deref() == Some(account_id))
            .map(|(id, _)| *id)
            .collect();
        for connection_id in &targets {
            self.send(*connection_id, op, payload);
        }
        !targets.is_empty()
    }

    pub(crate) fn close_connection(&self, connection_id: u64, code: u16, reason: &'static str) {
        if let Some(connection) = self.connections.get(&connection_id) {
            let _ = connection.tx.send(Outbound::Close { code, reason });
        }
    }
}

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
