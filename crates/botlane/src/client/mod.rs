//! The bot client: login, the realtime session, dispatch and sends.
//!
//! A [`Client`] is built from [`ClientOptions`], gets its commands registered
//! through [`Client::commands`] (before or after [`Client::login`]), and
//! reports what happens as [`Event`]s. Handlers run on their own tasks, so a
//! slow handler never holds up the next message.

mod backoff;
mod channels;
mod connect_error;
mod connection;
mod dispatch;
mod error;
mod event;
mod mint;
mod options;
mod push_queue;
mod session;
mod stats;
mod throttle;
mod tls;
mod transport;

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use tokio::sync::{broadcast, watch, Notify, Semaphore};

pub use connect_error::{ConnectError, ConnectErrorKind};
pub use error::ClientError;
pub use event::{CommandError, CommandErrorReason, Event, SendRejected};
pub use options::{ClientOptions, DEFAULT_REST_URL};
pub use stats::ClientStats;

use crate::commands::{
    encode_command_data, format_invocation_text, CommandArgs, CommandData, CommandDeclaration,
    CommandRegistry, MAX_COMMAND_WIRE,
};
use crate::crypto::ChannelKey;
use crate::keystore::Saver;
use crate::message::Message;
use crate::rest::RestLane;
use crate::wire::{self, OpCode};
use connection::Connection;
use push_queue::PushQueue;
use stats::Counters;
use throttle::Warnings;

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
    /// The live connection, if any; watched by [`Shared::wait_connected`].
    pub(crate) conn: watch::Sender<Option<Connection>>,
    /// The checked realtime url and the TLS configuration for it.
    pub(crate) url: url::Url,
    pub(crate) tls: Arc<rustls::ClientConfig>,
    /// Message pushes waiting for dispatch (bounded).
    pub(crate) queue: PushQueue,
    /// One permit per handler allowed to run at once.
    pub(crate) handlers: Arc<Semaphore>,
    /// Serialises menu publishing (the hash check and the publish).
    pub(crate) publishing: tokio::sync::Mutex<()>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) warnings: Arc<Warnings>,
    pub(crate) bot_id: RwLock<Option<String>>,
    /// The keystore, opened by the first login; its writes are coalesced
    /// and run off the runtime's workers.
    pub(crate) keystore: std::sync::OnceLock<Saver>,
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
        let url = url::Url::parse(&options.url).map_err(|e| ClientError::InvalidOption {
            option: "url",
            rule: format!("is not a valid url ({e})"),
        })?;
        if url.scheme() == "ws" && options.allow_insecure_ws {
            tracing::warn!(
                endpoint = %transport::endpoint(&url),
                "allow_insecure_ws: the realtime wire, token included, may travel in cleartext"
            );
        }
        let tls = tls::client_config(&options.root_certificates)?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let (shutdown, _) = watch::channel(false);
        let rest = mint::prepare_lane(&options, tls.clone())?;
        Ok(Self {
            shared: Arc::new_cyclic(|shared| Shared {
                queue: PushQueue::new(options.push_queue_capacity),
                handlers: Arc::new(Semaphore::new(options.max_concurrent_handlers)),
                options,
                registry: Mutex::new(CommandRegistry::new()),
                events,
                conn: watch::Sender::new(None),
                url,
                tls,
                publishing: tokio::sync::Mutex::new(()),
                counters: Arc::new(Counters::default()),
                warnings: Arc::new(Warnings::new()),
                bot_id: RwLock::new(None),
                keystore: std::sync::OnceLock::new(),
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

    /// Waits until the session is live, for at most `timeout`: right after
    /// a [`Event::Disconnected`], before sending again. Fails with
    /// [`ClientError::NotConnected`] when the session is not back in time,
    /// at once when the client never logged in or is shut down.
    pub async fn wait_until_connected(&self, timeout: Duration) -> Result<(), ClientError> {
        self.shared.wait_connected(timeout).await.map(drop)
    }

    /// The transport's counters now: connection attempts, sessions, frames
    /// received, the push queue and dropped pushes, handlers running.
    pub fn stats(&self) -> ClientStats {
        let shared = &self.shared;
        let (push_queue_len, push_queue_peak, pushes_dropped) = shared.queue.figures();
        ClientStats {
            connect_attempts: Counters::get(&shared.counters.connect_attempts),
            sessions: Counters::get(&shared.counters.sessions),
            frames_received: Counters::get(&shared.counters.frames_received),
            pushes_dropped,
            push_queue_len,
            push_queue_peak,
            handlers_running: shared.options.max_concurrent_handlers
                - shared.handlers.available_permits(),
        }
    }

    /// Closes the session and stops reconnecting and dispatching. Keystore
    /// changes not yet written (they are coalesced for up to half a second)
    /// are written in the background; use [`close`](Self::close) to wait for
    /// them.
    pub fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        self.shared.conn.send_replace(None);
        self.shared.queue.close();
        if let (Some(saver), Ok(runtime)) = (
            self.shared.keystore.get(),
            tokio::runtime::Handle::try_current(),
        ) {
            let saver = saver.clone();
            runtime.spawn(async move {
                if let Err(e) = saver.flush().await {
                    tracing::warn!(error = %e, "could not write the keystore at shutdown");
                }
            });
        }
    }

    /// [`shutdown`](Self::shutdown), then waits until every keystore change
    /// (a channel key received or evicted) is on disk.
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::ClientError> {
    /// client.close().await?;
    /// # Ok(()) }
    /// ```
    pub async fn close(&self) -> Result<(), ClientError> {
        self.shutdown();
        match self.shared.keystore.get() {
            Some(saver) => saver.flush().await.map_err(ClientError::Keystore),
            None => Ok(()),
        }
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

/// Resolves once `shutdown` is set (or its sender is gone), holding no
/// borrow of the channel across an await.
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|down| *down).await;
}

/// A duration in words for messages: `30 s`, `400 ms`, `1.5 s`.
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1} s", d.as_secs_f64())
    } else if ms > 0 {
        format!("{ms} ms")
    } else {
        format!("{} µs", d.as_micros())
    }
}

impl Shared {
    pub(crate) fn connection(&self) -> Result<Connection, ClientError> {
        self.conn.borrow().clone().ok_or(ClientError::NotConnected)
    }

    /// The live connection, waiting up to `timeout` while the session is
    /// (re)connecting. Fails at once when the client never logged in or is
    /// shut down, and after `timeout` otherwise.
    pub(crate) async fn wait_connected(
        &self,
        timeout: Duration,
    ) -> Result<Connection, ClientError> {
        if !self.started.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ClientError::NotConnected);
        }
        let mut conn = self.conn.subscribe();
        let mut shutdown = self.shutdown.subscribe();
        tokio::select! {
            live = tokio::time::timeout(timeout, conn.wait_for(Option::is_some)) => match live {
                Ok(Ok(live)) => live.clone().ok_or(ClientError::NotConnected),
                _ => Err(ClientError::NotConnected),
            },
            () = stopped(&mut shutdown) => Err(ClientError::NotConnected),
        }
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

    /// Decrypts a relayed message; `None` (with a rate-limited warning)
    /// when it cannot be read.
    pub(crate) fn open_message(self: &Arc<Self>, m: &wire::WireMessage) -> Option<Message> {
        let key = self.channel_key(&m.channel_id).ok().or_else(|| {
            if let Some(swallowed) = self.warnings.no_key.allow() {
                tracing::warn!(channel = %m.channel_id, swallowed, "dropping a message: no key for its channel");
            }
            None
        })?;
        let content = key
            .open(&m.content, m.channel_id.as_bytes())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .or_else(|| {
                if let Some(swallowed) = self.warnings.undecryptable.allow() {
                    tracing::warn!(message = %m.id, swallowed, "dropping a message whose content does not decrypt");
                }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::Ordering;

    use tokio::time::Instant;

    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn durations_in_words() {
        assert_eq!(human(Duration::from_secs(30)), "30 s");
        assert_eq!(human(Duration::from_millis(400)), "400 ms");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
    }

    #[test]
    fn allow_insecure_ws_is_refused_without_the_opt_in_and_warns_with_it() {
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                lock(&self.0).extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let url = "ws://host.docker.internal:9000/ws";
        let refused = Client::new(ClientOptions::new("t", "k", url))
            .err()
            .unwrap();
        assert!(
            refused.to_string().contains("allow_insecure_ws"),
            "{refused}"
        );
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            Client::new(ClientOptions::new("t", "k", url).allow_insecure_ws(true)).unwrap();
        });
        let logged = String::from_utf8(lock(&buffer.0).clone()).unwrap();
        assert_eq!(logged.matches("WARN").count(), 1, "{logged}");
        assert!(
            logged.contains("allow_insecure_ws")
                && logged.contains("ws://host.docker.internal:9000"),
            "{logged}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn wait_connected_waits_for_a_live_session_up_to_its_timeout() {
        let client = Client::new(ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")).unwrap();
        let shared = client.shared.clone();
        let started = Instant::now();
        let never = shared.wait_connected(5 * SECOND).await;
        assert!(matches!(never, Err(ClientError::NotConnected)));
        assert!(started.elapsed() < SECOND, "no login: fails at once");

        shared.started.store(true, Ordering::SeqCst);
        let started = Instant::now();
        let late = shared.wait_connected(5 * SECOND).await;
        assert!(matches!(late, Err(ClientError::NotConnected)));
        assert!(started.elapsed() >= 5 * SECOND, "waited the whole timeout");

        let back = shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(2 * SECOND).await;
            back.conn.send_replace(Some(Connection::detached()));
        });
        let started = Instant::now();
        assert!(shared.wait_connected(5 * SECOND).await.is_ok());
        let waited = started.elapsed();
        assert!(waited >= 2 * SECOND && waited < 5 * SECOND, "{waited:?}");
        assert!(
            client.wait_until_connected(Duration::ZERO).await.is_ok(),
            "live: at once"
        );

        shared.conn.send_replace(None);
        let stopper = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SECOND).await;
            stopper.shutdown();
        });
        let started = Instant::now();
        let stopped = shared.wait_connected(60 * SECOND).await;
        assert!(matches!(stopped, Err(ClientError::NotConnected)));
        assert!(started.elapsed() < 2 * SECOND, "shutdown ends the wait");
    }
}
