//! The bot client: login, the realtime session, dispatch and sends.
//!
//! A [`Client`] is built from [`ClientOptions`], gets its commands registered
//! through [`Client::commands`] (before or after [`Client::login`]), and
//! reports what happens as [`Event`]s. Handlers run on their own tasks, so a
//! slow handler never holds up the next message.

mod connection;
mod dispatch;
mod error;
mod event;
mod mint;
mod options;
mod session;

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use tokio::sync::{broadcast, watch, Notify};

pub use error::ClientError;
pub use event::{CommandError, CommandErrorReason, Event, SendRejected};
pub use options::{ClientOptions, DEFAULT_REST_URL};

use crate::commands::{
    encode_command_data, format_invocation_text, CommandArgs, CommandData, CommandDeclaration,
    CommandRegistry, MAX_COMMAND_WIRE,
};
use crate::crypto::ChannelKey;
use crate::keystore::Keystore;
use crate::message::Message;
use crate::rest::RestLane;
use crate::wire::{self, OpCode};
use connection::Connection;

/// How many events a subscriber may fall behind before it misses some.
const EVENT_CAPACITY: usize = 1024;

/// A bot client.
///
/// ```no_run
/// use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::new(ClientOptions::new("token", "bot.keystore", "ws://127.0.0.1:9000/ws"))?;
/// client.commands().register(
///     CommandDeclaration::new("ping", "Check that the bot is alive"),
///     |ctx: CommandContext| async move { ctx.reply("pong").await },
/// )?;
/// let mut events = client.events();
/// client.login().await?;
/// loop {
///     match events.recv().await {
///         Ok(event) => println!("{event:?}"),
///         // Fell more than 1024 events behind: the oldest were dropped.
///         Err(botlane::EventRecvError::Lagged(missed)) => eprintln!("missed {missed} events"),
///         Err(botlane::EventRecvError::Closed) => break,
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

/// State shared by the client handle, the session task, the dispatcher and
/// every message handle.
pub(crate) struct Shared {
    pub(crate) options: ClientOptions,
    pub(crate) registry: Mutex<CommandRegistry>,
    pub(crate) events: broadcast::Sender<Event>,
    pub(crate) conn: RwLock<Option<Connection>>,
    pub(crate) bot_id: RwLock<Option<String>>,
    pub(crate) keystore: Mutex<Option<Keystore>>,
    /// Channel keys in memory (the keystore holds them on disk too).
    pub(crate) keys: RwLock<HashMap<String, Arc<ChannelKey>>>,
    pub(crate) channels: RwLock<Vec<wire::ChannelInfo>>,
    /// Woken when a registry guard is dropped after login.
    pub(crate) menu_changed: Notify,
    /// The hash of the menu published on the current session.
    pub(crate) published_hash: Mutex<Option<String>>,
    pub(crate) shutdown: watch::Sender<bool>,
    /// The REST lane, minting through this client's connection.
    pub(crate) rest: RestLane,
    /// Set by the first successful `login`; a client runs one session.
    pub(crate) started: std::sync::atomic::AtomicBool,
}

/// Locks a mutex, recovering from poisoning: every critical section here
/// leaves the data consistent before anything that could panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn read<T: Clone>(l: &RwLock<T>) -> T {
    l.read().unwrap_or_else(PoisonError::into_inner).clone()
}

pub(crate) fn write<T>(l: &RwLock<T>, value: T) {
    *l.write().unwrap_or_else(PoisonError::into_inner) = value;
}

impl Client {
    /// Builds a client; every option is checked here.
    ///
    /// ```
    /// use botlane::{Client, ClientOptions};
    /// let err = Client::new(ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").command_prefix("")).err().unwrap();
    /// assert_eq!(err.to_string(), "invalid client option `command_prefix`: must not be empty");
    /// ```
    pub fn new(options: ClientOptions) -> Result<Self, ClientError> {
        options.validate()?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let (shutdown, _) = watch::channel(false);
        let rest = mint::prepare_lane(&options)?;
        Ok(Self {
            shared: Arc::new_cyclic(|shared| Shared {
                options,
                registry: Mutex::new(CommandRegistry::new()),
                events,
                conn: RwLock::new(None),
                bot_id: RwLock::new(None),
                keystore: Mutex::new(None),
                keys: RwLock::new(HashMap::new()),
                channels: RwLock::new(Vec::new()),
                menu_changed: Notify::new(),
                published_hash: Mutex::new(None),
                shutdown,
                rest: rest.bind(mint::RealtimeMint::handle(shared.clone())),
                started: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// The command registry wired to dispatch, usable before and after
    /// [`login`](Self::login). Registering after login republishes the menu
    /// when the guard is dropped, but only if its hash changed. Don't hold
    /// the guard across an `.await`.
    pub fn commands(&self) -> Commands<'_> {
        Commands {
            guard: lock(&self.shared.registry),
            shared: &self.shared,
        }
    }

    /// The REST lane: the service's HTTP API under a credential minted over
    /// the realtime session (log in first). See [`RestLane`].
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
    /// use botlane::rest::Method;
    /// let files: serde_json::Value = client.rest().json(Method::GET, "/api/files/list", None).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// The lane does not keep the client alive: once the client is gone,
    /// a call that needs a mint fails with
    /// [`RestError::NotConnected`](crate::RestError::NotConnected).
    pub fn rest(&self) -> RestLane {
        self.shared.rest.clone()
    }

    /// Subscribes to the client's events. Subscribe before `login` to see
    /// [`Event::Ready`]. A subscriber that falls more than 1024 events behind
    /// misses the oldest ones.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.shared.events.subscribe()
    }

    /// Opens the keystore (creating the identity on first run), connects,
    /// logs in with the token, publishes the canonical menu and starts
    /// dispatch. Returns once the session is ready. A client runs one
    /// session: a second call fails with [`ClientError::AlreadyLoggedIn`]
    /// (a failed login may be retried).
    pub async fn login(&self) -> Result<(), ClientError> {
        session::start(self.shared.clone()).await
    }

    /// The bot's own id, once logged in.
    pub fn bot_id(&self) -> Option<String> {
        read(&self.shared.bot_id)
    }

    /// The channels the bot is a member of, as of the last login.
    pub fn channels(&self) -> Vec<wire::ChannelInfo> {
        read(&self.shared.channels)
    }

    /// Posts a plain message. Fire-and-forget: a denial arrives as
    /// [`Event::SendRejected`] and does not fail the future.
    pub async fn send(&self, channel_id: &str, text: &str) -> Result<(), ClientError> {
        self.shared.send(channel_id, text, None, None).await
    }

    /// Sends a structured invocation of another bot's command: the content is
    /// the readable line, the sidecar is the encrypted [`CommandData`]. Fails
    /// before any frame is built when the line cannot be formatted or the
    /// encrypted sidecar is over [`MAX_COMMAND_WIRE`] characters.
    pub async fn send_command(
        &self,
        channel_id: &str,
        bot_id: &str,
        decl: &CommandDeclaration,
        args: &CommandArgs,
    ) -> Result<(), ClientError> {
        let prefix = Some(self.shared.options.command_prefix.as_str());
        let line = format_invocation_text(decl, args, prefix).map_err(ClientError::Format)?;
        let sidecar = encode_command_data(&CommandData {
            bot_id: bot_id.to_owned(),
            name: decl.name.clone(),
            args: args.clone(),
        });
        let key = self.shared.channel_key(channel_id)?;
        let sealed = key
            .seal(sidecar.as_bytes(), channel_id.as_bytes())
            .map_err(ClientError::Crypto)?;
        let len = sealed.chars().count();
        if len > MAX_COMMAND_WIRE {
            return Err(ClientError::SidecarTooLarge {
                len,
                max: MAX_COMMAND_WIRE,
            });
        }
        self.shared
            .send(channel_id, &line, None, Some(sealed))
            .await
    }

    /// A channel's history, oldest first, decrypted. History never carries
    /// [`Message::command`].
    pub async fn history(&self, channel_id: &str, limit: u32) -> Result<Vec<Message>, ClientError> {
        let conn = self.shared.connection()?;
        let reply: wire::HistoryReply = conn
            .request(
                OpCode::HistoryFetch,
                &wire::HistoryRequest {
                    channel_id: channel_id.to_owned(),
                    limit: Some(limit),
                },
            )
            .await?;
        check(OpCode::HistoryFetch, reply.code)?;
        Ok(reply
            .messages
            .iter()
            .filter_map(|m| self.shared.open_message(m))
            .collect())
    }

    /// The static unicode emoji catalog (opcode 240); never custom emoji.
    pub async fn fetch_emojis(&self) -> Result<Vec<wire::Emoji>, ClientError> {
        let conn = self.shared.connection()?;
        let reply: wire::EmojiReply = conn.request(OpCode::FetchEmojis, &wire::Empty {}).await?;
        check(OpCode::FetchEmojis, reply.code)?;
        Ok(reply.emojis)
    }

    /// Closes the session and stops reconnecting and dispatching.
    pub fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        write(&self.shared.conn, None);
    }
}

fn check(op: OpCode, code: i32) -> Result<(), ClientError> {
    if code == 0 {
        Ok(())
    } else {
        Err(ClientError::Refused {
            opcode: op.code(),
            code,
        })
    }
}

impl Shared {
    pub(crate) fn connection(&self) -> Result<Connection, ClientError> {
        read(&self.conn).ok_or(ClientError::NotConnected)
    }

    pub(crate) fn channel_key(&self, channel_id: &str) -> Result<Arc<ChannelKey>, ClientError> {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(channel_id)
            .cloned()
            .ok_or_else(|| ClientError::NoChannelKey {
                channel_id: channel_id.to_owned(),
            })
    }

    /// Seals and posts a message; a denial becomes [`Event::SendRejected`].
    pub(crate) async fn send(
        &self,
        channel_id: &str,
        text: &str,
        reply_to: Option<&str>,
        command: Option<String>,
    ) -> Result<(), ClientError> {
        let key = self.channel_key(channel_id)?;
        let content = key
            .seal(text.as_bytes(), channel_id.as_bytes())
            .map_err(ClientError::Crypto)?;
        let conn = self.connection()?;
        let reply: wire::SendReply = conn
            .request(
                OpCode::Send,
                &wire::SendRequest {
                    channel_id: channel_id.to_owned(),
                    content,
                    command,
                    reply_to: reply_to.map(str::to_owned),
                },
            )
            .await?;
        if reply.code != 0 {
            tracing::debug!(code = reply.code, "send denied");
            let _ = self.events.send(Event::SendRejected(SendRejected {
                channel_id: channel_id.to_owned(),
                reply_to: reply_to.map(str::to_owned),
                code: reply.code,
                reason: reply.reason,
            }));
        }
        Ok(())
    }

    /// Decrypts a relayed message; `None` (logged) when it cannot be read.
    pub(crate) fn open_message(self: &Arc<Self>, m: &wire::WireMessage) -> Option<Message> {
        let key = self.channel_key(&m.channel_id).ok().or_else(|| {
            tracing::warn!(channel = %m.channel_id, "dropping a message: no key for its channel");
            None
        })?;
        let content = key
            .open(&m.content, m.channel_id.as_bytes())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .or_else(|| {
                tracing::warn!(message = %m.id, "dropping a message whose content does not decrypt");
                None
            })?;
        let mut message = Message::new(&m.id, &m.channel_id, &m.author_id, content);
        message.reply_to.clone_from(&m.reply_to);
        message.attach(Arc::downgrade(self));
        Some(message)
    }
}

/// The registry guard returned by [`Client::commands`]; derefs to the
/// [`CommandRegistry`]. When dropped after login it asks the session to
/// republish the menu if its hash changed.
pub struct Commands<'a> {
    guard: MutexGuard<'a, CommandRegistry>,
    shared: &'a Shared,
}

impl Deref for Commands<'_> {
    type Target = CommandRegistry;
    fn deref(&self) -> &CommandRegistry {
        &self.guard
    }
}

impl DerefMut for Commands<'_> {
    fn deref_mut(&mut self) -> &mut CommandRegistry {
        &mut self.guard
    }
}

impl Drop for Commands<'_> {
    fn drop(&mut self) {
        self.shared.menu_changed.notify_one();
    }
}
