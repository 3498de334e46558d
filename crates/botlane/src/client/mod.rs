//! The bot client: the builder that wires the parts together, and the
//! only module that knows all of them.
//!
//! A [`Client`] is built from [`ClientOptions`]: the options are checked,
//! then the parts are made and handed the smallest handle each needs: the
//! [`Session`] (transport, login, reconnects, membership) gets the
//! registry's snapshot store and the event sender; the REST lane gets a
//! [`Mint`](crate::rest::Mint) over the session; dispatch, started by the
//! first login, gets the session, the registry, the events and the
//! [`Outbound`](crate::commands::Outbound) handle its messages answer
//! through.

mod hooks;
mod info;
mod lifecycle;
mod mint;
mod options;
mod outbound;
mod stats;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::future::{BoxFuture, Shared};

pub use info::{ChannelInfo, Emoji};
pub use options::{ClientOptions, DEFAULT_REST_URL};
pub use stats::ClientStats;

use crate::commands::data::OutgoingInvocation;
use crate::commands::limits::MAX_COMMAND_WIRE;
use crate::commands::text::prefixes::Prefixes;
use crate::commands::types::{CommandArgs, CommandDeclaration};
use crate::dispatch::{self, Runner, RunnerConfig};
use crate::error::ClientError;
use crate::events::{EventSender, Events};
use crate::framework::answer::AnswerRate;
use crate::framework::live::Commands;
use crate::framework::owners::Owners;
use crate::framework::typed::Command;
use crate::message::outbound::Outbound;
use crate::message::Message;
use crate::rest::RestLane;
use crate::session::{Counters, Session, SessionConfig};
use crate::telemetry::Telemetry;
use crate::throttle::Throttle;
use crate::transport::{self, tls};
use crate::wire::{self, OpCode};
use outbound::SessionOutbound;

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
///         // Fell behind (more than 1024 events, or 16 MiB of them): the oldest were dropped.
///         Err(botlane::EventRecvError::Lagged(missed)) => eprintln!("missed {missed} events"),
///         Err(botlane::EventRecvError::Closed) => break,
///     }
/// }
/// # Ok(()) }
/// ```
///
/// A client runs on the application's tokio runtime, which must have both
/// its time and IO drivers (`enable_all()`; `#[tokio::main]` and
/// `#[tokio::test]` have them, either flavour): without them `login`
/// panics with tokio's message, since tokio cannot be asked beforehand.
/// Building, registering, subscribing, `shutdown` and dropping need no
/// runtime at all; see "The runtime" in `docs/client.md`.
///
/// `D` is the shared state every handler reads through
/// [`CommandContext::data`](crate::CommandContext::data): `()` for a client
/// built with [`Client::new`], your type with [`Client::with_data`]. It is
/// checked at compile time: a handler registered on a `Client<Stats>` takes
/// a `CommandContext<Stats>`.
pub struct Client<D = ()> {
    inner: Arc<Inner<D>>,
}

impl<D> Clone for Client<D> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<D> Client<D> {
    /// A handle that does not keep the client running: for a handler, a
    /// check, an error hook or the shared state that needs the client. A
    /// clone kept there would be a cycle (the client holds them), and the
    /// client would run until `shutdown` even with every other handle
    /// dropped.
    ///
    /// ```
    /// let client = botlane::Client::new(botlane::ClientOptions::new(
    ///     "token", "bot.keystore", "wss://chat.example/ws",
    /// ))?;
    /// let weak = client.downgrade();
    /// assert!(weak.upgrade().is_some());
    /// drop(client);
    /// assert!(weak.upgrade().is_none(), "the client is gone");
    /// # Ok::<(), botlane::ClientError>(())
    /// ```
    pub fn downgrade(&self) -> WeakClient<D> {
        WeakClient {
            inner: Arc::downgrade(&self.inner),
        }
    }
}

/// A [`Client`] handle that does not keep it running
/// ([`Client::downgrade`]); [`upgrade`](Self::upgrade) it to use it.
pub struct WeakClient<D = ()> {
    inner: std::sync::Weak<Inner<D>>,
}

impl<D> WeakClient<D> {
    /// The client, while some [`Client`] handle keeps it running.
    pub fn upgrade(&self) -> Option<Client<D>> {
        self.inner.upgrade().map(|inner| Client { inner })
    }
}

impl<D> Clone for WeakClient<D> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<D> std::fmt::Debug for WeakClient<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakClient")
            .field("alive", &(self.inner.strong_count() > 0))
            .finish()
    }
}

/// The wait for the first session's `ready` (`false`: shut down first),
/// shared by the logins that wait on it.
type Ready = Shared<BoxFuture<'static, bool>>;

/// The parts of one client.
struct Inner<D> {
    options: ClientOptions,
    session: Arc<Session>,
    commands: Commands<D>,
    /// Runs invocations: the handler permits, the shared state, the
    /// client's checks, error hook and hooks after the command
    /// (`hooks.rs`), the cooldowns, the answer gate (shared with dispatch).
    runner: Arc<Runner<D>>,
    /// The REST lane, minting through the session's connection.
    rest: RestLane,
    /// The wait for the first session's `ready` and its `Event::Ready`, on
    /// a task of its own once the session is up: a login given up on then
    /// still ends in `Ready`, and one tried again waits for the same.
    /// `false` when the client was shut down first.
    ready: OnceLock<Ready>,
    /// Set by the one login that returns `Ok`.
    returned: AtomicBool,
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
        Self::with_data(options, ())
    }
}

impl<D: Send + Sync + 'static> Client<D> {
    /// Builds a client whose handlers share `data`: each reads it, typed,
    /// through [`CommandContext::data`](crate::CommandContext::data), with
    /// no `Arc` to clone by hand. Put interior mutability (atomics, a
    /// `Mutex`) inside it to update it. Every option is checked here.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
    ///
    /// #[derive(Default)]
    /// struct Stats {
    ///     pings: AtomicU64,
    /// }
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// let client = Client::with_data(
    ///     ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws"),
    ///     Stats::default(),
    /// )?;
    /// client.commands().register(
    ///     CommandDeclaration::new("ping", "Count and answer"),
    ///     |ctx: CommandContext<Stats>| async move {
    ///         let n = ctx.data().pings.fetch_add(1, Ordering::Relaxed) + 1;
    ///         ctx.reply(&format!("pong #{n}")).await
    ///     },
    /// )?;
    /// assert_eq!(client.data().pings.load(Ordering::Relaxed), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_data(options: ClientOptions, data: D) -> Result<Self, ClientError> {
        options.validate()?;
        let url = url::Url::parse(&options.url).map_err(|e| ClientError::InvalidOption {
            option: "url",
            rule: format!("is not a valid url ({e})"),
        })?;
        // Only where the option is what lets the url in: cleartext to an
        // exact loopback host is allowed without it.
        let loopback = url
            .host()
            .is_some_and(|h| crate::loopback::is_exact_loopback(&h));
        if url.scheme() == "ws" && options.allow_insecure_ws && !loopback {
            tracing::warn!(
                endpoint = %transport::endpoint(&url),
                "allow_insecure_ws: the realtime wire, token included, may travel in cleartext"
            );
        }
        let tls = tls::client_config(&options.root_certificates)?;
        let lane = mint::prepare_lane(&options, tls.clone())?;
        let commands = Commands::<D>::new();
        let events = EventSender::default();
        let config = SessionConfig {
            token: options.token.clone(),
            keystore_path: options.keystore_path.clone(),
            keystore_in_memory: options.keystore_in_memory,
            keystore_save_window: options.keystore_save_window,
            url,
            tls,
            connect_timeout: options.connect_timeout,
            login_deadline: options.login_deadline,
            connection: transport::Settings {
                request_timeout: options.request_timeout,
                heartbeat_interval: options.heartbeat_interval,
                idle_timeout: options.idle_timeout,
                debug: options.debug,
            },
            reconnect_initial: options.reconnect_initial,
            reconnect_max: options.reconnect_max,
            reconnect_reset_after: options.reconnect_reset_after,
            push_queue_capacity: options.push_queue_capacity,
            push_queue_bytes: options.push_queue_bytes,
            control_queue_bytes: options.control_queue_bytes,
        };
        let telemetry = Arc::new(Telemetry::new(options.metrics_bot_label.as_deref()));
        let session = Arc::new(Session::new(
            config,
            commands.menu_feed(),
            events.clone(),
            Arc::clone(&telemetry),
        ));
        let minter = mint::RealtimeMint::handle(Arc::downgrade(&session));
        let rest = lane.bind(minter, Arc::clone(&telemetry));
        let answer_rate = AnswerRate {
            burst: options.error_answer_burst,
            interval: options.error_answer_interval,
        };
        let prefixes = Arc::new(Prefixes::new(
            &options.command_prefix,
            &options.additional_prefixes,
        ));
        let runner = Arc::new(Runner::new(RunnerConfig {
            events,
            data,
            max_concurrent_handlers: options.max_concurrent_handlers,
            handler_timeout: options.handler_timeout,
            clock: options.clock.clone(),
            answer_rate,
            owners: Owners::new(&options.owners, options.skip_checks_for_owners),
            prefixes,
            dynamic_prefix: options.dynamic_prefix.clone(),
            telemetry,
        }));
        Ok(Self {
            inner: Arc::new(Inner {
                options,
                session,
                commands,
                runner,
                rest,
                ready: OnceLock::new(),
                returned: AtomicBool::new(false),
            }),
        })
    }

    /// The shared state given to [`with_data`](Self::with_data) (`()` for
    /// [`Client::new`]).
    pub fn data(&self) -> &D {
        self.inner.runner.data()
    }

    /// The command registry wired to dispatch, usable before and after
    /// [`login`](Self::login); see [`Commands`]. Registering after login
    /// republishes the menu, but only if its hash changed; registrations
    /// made in one [`Commands::update`] are published once.
    pub fn commands(&self) -> Commands<D> {
        self.inner.commands.clone()
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
        self.inner.rest.clone()
    }

    /// Subscribes to the client's events. Subscribe before `login` to see
    /// [`Event::Ready`](crate::Event::Ready). A subscriber holds at most
    /// [`Events::CAPACITY`](crate::Events::CAPACITY) unread events, and at most
    /// [`Events::MAX_BYTES`](crate::Events::MAX_BYTES) of them; when it falls further
    /// behind it loses the oldest and is told how many
    /// ([`EventRecvError::Lagged`](crate::EventRecvError::Lagged)).
    pub fn events(&self) -> Events {
        self.inner.runner.events().subscribe()
    }

    /// The handle messages answer through.
    fn outbound(&self) -> Arc<dyn Outbound> {
        Arc::new(SessionOutbound {
            session: Arc::downgrade(&self.inner.session),
            rest: self.inner.rest.clone(),
        })
    }

    /// The bot's own id, once logged in.
    pub fn bot_id(&self) -> Option<String> {
        self.inner.session.bot_id()
    }

    /// The channels the bot is a member of: from the last `ready`, kept up
    /// to date by the membership pushes.
    pub fn channels(&self) -> Vec<ChannelInfo> {
        let channels = self.inner.session.membership().channels();
        channels.into_iter().map(ChannelInfo::from_wire).collect()
    }

    /// Posts a plain message. Fire-and-forget: a denial arrives as
    /// [`Event::SendRejected`](crate::Event::SendRejected) and does not fail
    /// the future. A text too long for one message of the wire (over about
    /// 768 KiB) fails it with [`ClientError::RequestTooLarge`], unsent.
    pub async fn send(&self, channel_id: &str, text: &str) -> Result<(), ClientError> {
        self.inner.session.post(channel_id, text, None, None).await
    }

    /// Sends a structured invocation of another bot's command, its
    /// [`OutgoingInvocation`]: the content is the readable line (with the
    /// client's prefix), the sidecar is the encrypted
    /// [`CommandData`](crate::CommandData). Fails
    /// before any frame is built when the line cannot be formatted or the
    /// encrypted sidecar is over [`MAX_COMMAND_WIRE`] characters.
    pub async fn send_command(
        &self,
        channel_id: &str,
        bot_id: &str,
        decl: &CommandDeclaration,
        args: &CommandArgs,
    ) -> Result<(), ClientError> {
        let session = &self.inner.session;
        let prefix = Some(self.inner.options.command_prefix.as_str());
        let invocation = OutgoingInvocation::new(bot_id, decl, args, prefix).map_err(|e| {
            ClientError::Format {
                reason: e.to_string(),
            }
        })?;
        let key = session.membership().key(channel_id)?;
        let sealed = key
            .seal(invocation.sidecar.as_bytes(), channel_id.as_bytes())
            .map_err(ClientError::Crypto)?;
        let len = sealed.chars().count();
        if len > MAX_COMMAND_WIRE {
            return Err(ClientError::SidecarTooLarge {
                len,
                max: MAX_COMMAND_WIRE,
            });
        }
        session
            .post(channel_id, &invocation.line, None, Some(sealed))
            .await
    }

    /// Sends a structured invocation of another bot's typed command `C`:
    /// [`send_command`](Self::send_command) with `C`'s declaration and
    /// `value`'s arguments ([`Command::to_args`]), so the line and the
    /// sidecar are formatted and encoded by the same code.
    ///
    /// ```no_run
    /// use botlane::Command;
    ///
    /// /// Roll some dice
    /// #[derive(Command)]
    /// struct Roll {
    ///     /// How many dice
    ///     count: u8,
    /// }
    ///
    /// # async fn demo(client: botlane::Client, channel: &str, dicebot: &str) -> Result<(), botlane::ClientError> {
    /// client.send_typed(channel, dicebot, &Roll { count: 2 }).await?;
    /// # Ok(()) }
    /// ```
    pub async fn send_typed<C: Command>(
        &self,
        channel_id: &str,
        bot_id: &str,
        value: &C,
    ) -> Result<(), ClientError> {
        self.send_command(channel_id, bot_id, &C::declaration(), &value.to_args())
            .await
    }

    /// A channel's history, oldest first, decrypted: at most the newest
    /// `limit` messages (`0` asks for none), fewer when the service caps
    /// `limit` (the devserver at 100) or they do not fit in one frame.
    /// Messages the bot cannot open (no key for them) are left out. History
    /// never carries [`Message::command`].
    pub async fn history(&self, channel_id: &str, limit: u32) -> Result<Vec<Message>, ClientError> {
        let session = &self.inner.session;
        let reply: wire::HistoryReply = session
            .connection()?
            .request(
                OpCode::HistoryFetch,
                &wire::HistoryRequest::new(channel_id).with_limit(limit),
            )
            .await?;
        check(OpCode::HistoryFetch, reply.code)?;
        let outbound = self.outbound();
        let mut buf = Vec::new();
        Ok(reply
            .messages
            .into_iter()
            .filter_map(|m| dispatch::open_message(session.membership(), &outbound, m, &mut buf))
            .collect())
    }

    /// The static unicode emoji catalog (opcode 240); never custom emoji.
    pub async fn fetch_emojis(&self) -> Result<Vec<Emoji>, ClientError> {
        let conn = self.inner.session.connection()?;
        let reply: wire::EmojiReply = conn.request(OpCode::FetchEmojis, &wire::Empty {}).await?;
        check(OpCode::FetchEmojis, reply.code)?;
        Ok(reply.emojis.into_iter().map(Emoji::from_wire).collect())
    }

    /// Waits until the session is live, for at most `timeout`: right after
    /// a [`Event::Disconnected`](crate::Event::Disconnected), before sending
    /// again. Fails with [`ClientError::NotConnected`] when the session is
    /// not back in time, at once when the client never logged in or is shut
    /// down; with [`ClientError::LoginRefused`] at once (a wait under way
    /// too) when a reconnect's login was refused, which ends the session.
    pub async fn wait_until_connected(&self, timeout: Duration) -> Result<(), ClientError> {
        self.inner.session.wait_connected(timeout).await.map(drop)
    }

    /// The transport's counters now: connection attempts, sessions, frames
    /// received, the push queue and dropped pushes, handlers running.
    pub fn stats(&self) -> ClientStats {
        let inner = &self.inner;
        let counters = inner.session.counters();
        let (push_queue_len, push_queue_peak, pushes_dropped) = inner.session.queue_figures();
        ClientStats {
            connect_attempts: Counters::get(&counters.connect_attempts),
            sessions: Counters::get(&counters.sessions),
            frames_received: Counters::get(&counters.frames_received),
            pushes_dropped,
            push_queue_len,
            push_queue_peak,
            handlers_running: inner.options.max_concurrent_handlers - inner.runner.free_permits(),
            dynamic_prefixes_refused: inner
                .runner
                .chooser()
                .map_or(0, |chooser| chooser.refused()),
            messages_without_key: inner.session.membership().messages_without_key(),
            warnings_swallowed: inner.throttles().map(Throttle::swallowed).sum(),
        }
    }
}

impl<D> Inner<D> {
    /// Every rate-limited warning of the client.
    fn throttles(&self) -> impl Iterator<Item = &Throttle> {
        self.session.throttles().chain(self.runner.throttles())
    }

    /// Writes what each rate-limited warning swallowed since its last line.
    fn report_swallowed(&self) {
        self.throttles().for_each(Throttle::report_swallowed);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::sync::lock;

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
        // Where cleartext is allowed anyway, the option changes nothing and
        // is not warned about.
        lock(&buffer.0).clear();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            for url in [
                "ws://127.0.0.1:9000/ws",
                "ws://[::1]:9000/ws",
                "ws://localhost:9000/ws",
            ] {
                Client::new(ClientOptions::new("t", "k", url).allow_insecure_ws(true)).unwrap();
            }
        });
        let logged = String::from_utf8(lock(&buffer.0).clone()).unwrap();
        assert!(!logged.contains("WARN"), "{logged}");
    }
}
