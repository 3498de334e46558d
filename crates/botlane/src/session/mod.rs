//! The session: login and menu publishing (`login.rs`), the supervisor that
//! reconnects with backoff and the menu task (`supervisor.rs`), the pushes
//! it takes from the connection (`inbound.rs`) into the bounded push queue
//! (`push_queue.rs`), the bot's channels and keys (`membership.rs`), and
//! the numbers of its connections, which tell dispatch when a `ready`
//! announces `Reconnected` (`phase.rs`).
//!
//! The session sits on the transport and the command registry's snapshot;
//! it names neither dispatch nor the client. Dispatch drains its push queue,
//! takes pushes on the spot through the queue's [`DispatchNow`] while
//! nothing waits, and applies membership pushes through [`Membership`]; the
//! client starts dispatch after the first login.

mod backoff;
mod counters;
mod inbound;
mod login;
mod membership;
mod phase;
mod push_queue;
mod send;
mod supervisor;

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::cache::Cache;
use arc_swap::{ArcSwapOption, Guard};
use secrecy::SecretString;
use tokio::sync::watch;

pub(crate) use counters::Counters;
pub(crate) use membership::Membership;
pub(crate) use push_queue::{DispatchCache, DispatchNow, PushQueue};

/// The bot's own id as a reader of every message keeps it
/// ([`Session::bot_id_cache`]).
pub(crate) type BotIdCache = Cache<Arc<ArcSwapOption<String>>, Option<Arc<String>>>;

use crate::error::ClientError;
use crate::events::{Event, EventSender};
use crate::framework::live::MenuFeed;
use crate::keystore::{Saver, SaverOptions};
use crate::sync::{stopped, Claim};
use crate::telemetry::{ConnectionState, Telemetry};
use crate::throttle::Throttle;
use crate::transport::{self, Connection};

/// What a session needs of the client's options, checked by the client.
#[derive(Debug)]
pub(crate) struct SessionConfig {
    pub(crate) token: SecretString,
    pub(crate) keystore_path: PathBuf,
    /// Keep the identity and channel keys in memory only (no file).
    pub(crate) keystore_in_memory: bool,
    pub(crate) keystore_save_window: Duration,
    /// The checked realtime url and the TLS configuration for it.
    pub(crate) url: url::Url,
    pub(crate) tls: Arc<rustls::ClientConfig>,
    pub(crate) connect_timeout: Duration,
    /// Until when a first login tries again after a failure that may pass.
    pub(crate) login_deadline: Duration,
    /// The timings of each connection (request timeout, heartbeat, idle).
    pub(crate) connection: transport::Settings,
    pub(crate) reconnect_initial: Duration,
    pub(crate) reconnect_max: Duration,
    pub(crate) reconnect_reset_after: Duration,
    pub(crate) push_queue_capacity: usize,
    pub(crate) push_queue_bytes: usize,
    pub(crate) control_queue_bytes: usize,
}

/// How long [`Session::released`] waits: the closing handshake's grace,
/// and a second for the tasks to be scheduled on a busy runtime.
const RELEASE_WAIT: Duration = Duration::from_secs(1).saturating_add(transport::CLOSE_GRACE);

/// One client's session: the live connection, the bot's identity and
/// channels, and what is waiting for dispatch.
pub(crate) struct Session {
    config: SessionConfig,
    /// The menu of the client's registry, republished after each change.
    menu: MenuFeed,
    events: EventSender,
    /// The live connection, if any; watched by [`Session::wait_connected`].
    conn: watch::Sender<Option<Connection>>,
    /// Pushes waiting for dispatch (bounded).
    queue: PushQueue,
    counters: Arc<Counters>,
    membership: Membership,
    transport_warnings: Arc<transport::Warnings>,
    pushes_dropped: Throttle,
    // Shared: dispatch reads it for every message, through a cache of its
    // own (`bot_id_cache`).
    bot_id: Arc<ArcSwapOption<String>>,
    /// Serialises menu publishing (the hash check and the publish).
    publishing: tokio::sync::Mutex<()>,
    /// The hash of the menu published on the current connection.
    published_hash: Mutex<Option<String>>,
    shutdown: watch::Sender<bool>,
    /// How many connection tasks are running (each holds an
    /// [`inbound::Live`] until it has ended): what [`Session::released`]
    /// waits to see at zero.
    live: Arc<watch::Sender<usize>>,
    /// Set by the first successful `start`; a client runs one session.
    started: AtomicBool,
    /// Set when a reconnect's login was refused (the token is unknown or
    /// revoked): the session has ended for good, and what needs it says
    /// so at once ([`ClientError::LoginRefused`]) instead of waiting.
    refused: AtomicBool,
    /// Set by [`shutdown`](Self::shutdown) before its watch: what
    /// dispatch's paths read per invocation, where a lock is too dear.
    shut_down: AtomicBool,
    /// The client's metrics and connection state (shared with dispatch and
    /// the REST lane).
    telemetry: Arc<Telemetry>,
    /// Whether `Event::Ready` has been sent ([`announce_ready`](Self::announce_ready)).
    announced: watch::Sender<bool>,
    /// The newest connection's number and whether its `ready` announces
    /// `Event::Reconnected` (`phase.rs`).
    phase: watch::Sender<phase::Phase>,
}

impl Session {
    /// Its rate-limited warnings (the connection's, the membership's, the
    /// push queue's), for the client's stats and its line at shutdown.
    pub(crate) fn throttles(&self) -> impl Iterator<Item = &Throttle> {
        self.membership
            .throttles()
            .into_iter()
            .chain(self.transport_warnings.throttles())
            .chain([&self.pushes_dropped])
    }

    pub(crate) fn new(
        config: SessionConfig,
        menu: MenuFeed,
        events: EventSender,
        telemetry: Arc<Telemetry>,
    ) -> Self {
        Self {
            queue: PushQueue::new(
                config.push_queue_capacity,
                config.push_queue_bytes,
                config.control_queue_bytes,
            ),
            config,
            menu,
            events,
            conn: watch::Sender::new(None),
            counters: Arc::new(Counters::default()),
            membership: Membership::new(),
            transport_warnings: Arc::new(transport::Warnings::new()),
            pushes_dropped: Throttle::new(
                "dropping a message push: dispatch is behind and the push queue is full",
            ),
            bot_id: Arc::new(ArcSwapOption::empty()),
            publishing: tokio::sync::Mutex::new(()),
            published_hash: Mutex::new(None),
            shutdown: watch::channel(false).0,
            live: Arc::new(watch::channel(0).0),
            started: AtomicBool::new(false),
            refused: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            telemetry,
            announced: watch::channel(false).0,
            phase: watch::Sender::new(phase::Phase::new()),
        }
    }

    /// Logs in for the first time and starts the supervisor and the menu
    /// task. A failed first login may be retried; a successful one may not
    /// be repeated ([`ClientError::AlreadyLoggedIn`]).
    /// A login given up on (its future dropped) may be retried too.
    pub(crate) async fn start(self: &Arc<Self>) -> Result<(), ClientError> {
        let Some(attempt) = Claim::take(&self.started) else {
            return Err(ClientError::AlreadyLoggedIn);
        };
        // Shut down before any login: nothing to dial for, and a close that
        // already returned must not be followed by a connection.
        if self.is_shut_down() {
            return Err(ClientError::NotConnected);
        }
        // The handles every part records through, with the recorder
        // installed now.
        self.telemetry.resolve();
        if let Some(handles) = self.telemetry.handles() {
            self.queue.watch_with(
                handles.push_queue_length.clone(),
                handles.pushes_dropped.clone(),
            );
        }
        if let Err(e) = self.first_login().await {
            if matches!(e, ClientError::LoginRefused) {
                self.refused_before_a_session();
            }
            return Err(e);
        }
        attempt.keep();
        Ok(())
    }

    /// A first login was refused for good: messages an earlier failed
    /// attempt left for the next session are dropped and counted
    /// ([`PushQueue::refused_before_a_session`]). `login()` may still be
    /// called again: that is a new session, and the waits do not say
    /// `LoginRefused` (the refusal is that login's answer).
    fn refused_before_a_session(&self) {
        let dropped = self.queue.refused_before_a_session();
        if dropped > 0 {
            tracing::warn!(
                dropped,
                "the login was refused: messages an earlier failed login left for the next \
                 session are dropped (counted in pushes_dropped)"
            );
        }
    }

    async fn first_login(self: &Arc<Self>) -> Result<(), ClientError> {
        let keystore = match self.membership.keystore() {
            // A failed first login may be retried: the keystore opened then is kept.
            Some(saver) => saver,
            None => {
                let options = SaverOptions::default().window(self.config.keystore_save_window);
                let saver = if self.config.keystore_in_memory {
                    Saver::in_memory(options)
                } else {
                    Saver::open(&self.config.keystore_path, options).await
                };
                self.membership
                    .use_keystore(saver.map_err(ClientError::Keystore)?)
            }
        };
        let public_key = keystore.identity().public_key().to_base64();
        let logged_in = self.first_connect(&public_key).await?;
        tokio::spawn(supervisor::republish(self.clone()));
        tokio::spawn(supervisor::supervise(self.clone(), logged_in, public_key));
        Ok(())
    }

    /// The bot's channels and their keys.
    pub(crate) fn membership(&self) -> &Membership {
        &self.membership
    }

    /// The transport's counters.
    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The push queue's figures: messages waiting, the most that ever
    /// waited, messages dropped so far.
    pub(crate) fn queue_figures(&self) -> (usize, usize, u64) {
        self.queue.figures()
    }

    /// Lets dispatch take pushes on the spot when nothing waits.
    pub(crate) fn dispatch_now_with(&self, now: std::sync::Weak<dyn DispatchNow>) {
        self.queue.dispatch_now_with(now);
    }

    /// The next push for dispatch, in arrival order; `None` once the queue
    /// is closed ([`PushQueue::next`]).
    pub(crate) async fn next_push(&self) -> Option<transport::Push> {
        self.queue.next().await
    }

    /// The bot's own id, once logged in.
    pub(crate) fn bot_id(&self) -> Option<String> {
        self.bot_id.load().as_deref().cloned()
    }

    /// The bot's own id, once logged in, for a look within one step (no
    /// count taken, no lock: dispatch reads it for every message).
    pub(crate) fn bot_id_now(&self) -> Guard<Option<Arc<String>>> {
        self.bot_id.load()
    }

    /// The bot's own id for a reader of every message: revalidated by one
    /// plain load per read, where a look ([`bot_id_now`](Self::bot_id_now))
    /// takes and gives back a slot with two atomic writes.
    pub(crate) fn bot_id_cache(&self) -> BotIdCache {
        Cache::new(Arc::clone(&self.bot_id))
    }

    /// The live connection, or [`ClientError::NotConnected`]
    /// ([`ClientError::LoginRefused`] once a reconnect's login was refused).
    /// A connection that has ended counts as none from then on, before the
    /// supervisor has cleared it: a request fails at once either way.
    pub(crate) fn connection(&self) -> Result<Connection, ClientError> {
        let live = self.conn.borrow();
        match &*live {
            Some(conn) if !conn.is_closing() => Ok(conn.clone()),
            _ => Err(self.no_connection()),
        }
    }

    /// Why there is no connection: refused for good, or not (yet) connected.
    fn no_connection(&self) -> ClientError {
        if self.refused.load(Ordering::SeqCst) {
            ClientError::LoginRefused
        } else {
            ClientError::NotConnected
        }
    }

    /// Ends the session for good after a reconnect's login was refused:
    /// waits for a connection end now, with [`ClientError::LoginRefused`],
    /// and nothing waits for a next session's `ready` any more
    /// ([`PushQueue::no_next_session`]).
    fn refuse(&self) {
        self.refused.store(true, Ordering::SeqCst);
        self.telemetry.enter(ConnectionState::Closed);
        let dropped = self.queue.no_next_session();
        if dropped > 0 {
            tracing::warn!(
                dropped,
                "the session has ended for good: messages a failed login left for the next \
                 session are dropped (counted in pushes_dropped)"
            );
        }
        // Wakes the waits, which see the flag.
        self.conn.send_replace(None);
    }

    /// How long a request waits for its reply.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.config.connection.request_timeout
    }

    /// The live connection, waiting up to `timeout` while the session is
    /// (re)connecting, or closing one that has ended: a request waits for
    /// the next connection rather than fail on that one. Fails at once when
    /// the client never logged in or is shut down, or when a reconnect's
    /// login was refused ([`ClientError::LoginRefused`]), and after
    /// `timeout` otherwise.
    pub(crate) async fn wait_connected(
        &self,
        timeout: Duration,
    ) -> Result<Connection, ClientError> {
        if !self.started.load(Ordering::SeqCst) {
            return Err(ClientError::NotConnected);
        }
        let mut conn = self.conn.subscribe();
        let mut shutdown = self.shutdown.subscribe();
        let refused = || self.refused.load(Ordering::SeqCst);
        // A shutdown wins over a refusal seen at the same poll: after one,
        // every wait says `NotConnected`.
        let live = tokio::select! {
            biased;
            () = stopped(&mut shutdown) => return Err(ClientError::NotConnected),
            live = tokio::time::timeout(timeout, conn.wait_for(|c| up(c) || refused())) => {
                match live {
                    Ok(Ok(live)) if up(&live) => live.clone(),
                    _ => None,
                }
            }
        };
        live.ok_or_else(|| self.no_connection())
    }

    /// Closes the connection, stops reconnecting and ends dispatch (its
    /// queue is closed).
    pub(crate) fn shutdown(&self) {
        self.shut_down.store(true, Ordering::Release);
        self.telemetry.enter(ConnectionState::Closed);
        self.shutdown.send_replace(true);
        self.conn.send_replace(None);
        self.queue.close();
    }

    /// Whether [`shutdown`](Self::shutdown) has been called.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Acquire)
    }

    /// Returns once [`shutdown`](Self::shutdown) has been called.
    pub(crate) async fn until_shutdown(&self) {
        stopped(&mut self.shutdown.subscribe()).await;
    }

    /// Waits until every connection task has ended, after
    /// [`shutdown`](Self::shutdown): each close frame written and socket
    /// let go, or the closing handshake's grace over. That covers every
    /// connection, the supervised one and one whose login was cancelled or
    /// failed alike. Bounded by [`RELEASE_WAIT`].
    pub(crate) async fn released(&self) {
        released(self.live.subscribe()).await;
    }

    /// Ends the client's subscriptions ([`EventSender::close`]), after
    /// [`shutdown`](Self::shutdown).
    pub(crate) fn close_events(&self) {
        self.events.close();
    }

    /// [`close_events`](Self::close_events) once [`released`](Self::released),
    /// as a future that holds neither the session nor the client: a client
    /// dropped by the application is gone at once, not when its
    /// connections have ended.
    pub(crate) fn close_events_once_released(
        &self,
    ) -> impl Future<Output = ()> + Send + 'static + use<> {
        let (live, events) = (self.live.subscribe(), self.events.clone());
        async move {
            released(live).await;
            events.close();
        }
    }

    /// Sends `Event::Ready` unless it was sent already or the client is
    /// shut down; `true` once it has been sent, now or before. Called by
    /// dispatch as it applies a `ready` (before it opens what follows), by
    /// the wait for the first `ready` (its timeout) and by the supervisor
    /// before each `Disconnected`, so that `Ready` is the first event of
    /// the session also when the first connection ends before its `ready`
    /// came. The check and the send are one step under the watch's lock:
    /// whichever comes second finds the event already out. Sent without
    /// the `ready` (those two fallbacks), it lets the pushes held for that
    /// `ready` go to dispatch, after the event.
    pub(crate) fn announce_ready(&self) -> bool {
        let mut announced = false;
        let sent_now = self.announced.send_if_modified(|sent| {
            if !*sent && !self.is_shut_down() {
                let bot_id = self.bot_id();
                self.emit(Event::Ready {
                    bot_id: bot_id.unwrap_or_default(),
                });
                *sent = true;
                announced = true;
                return true;
            }
            announced = *sent;
            false
        });
        // Only now: a later call may find a reconnect waiting for its own
        // `ready`.
        if sent_now {
            self.queue.unpark(None);
        }
        announced
    }

    /// Whether `Event::Ready` has been sent.
    pub(crate) fn is_announced(&self) -> bool {
        *self.announced.borrow()
    }

    /// Returns once `Event::Ready` has been sent.
    pub(crate) async fn until_announced(&self) {
        // The sender is the session's own: it lives as long as `self`.
        let _ = self.announced.subscribe().wait_for(|sent| *sent).await;
    }

    fn emit(&self, event: Event) {
        self.events.send(event);
    }
}

/// Whether `conn` is a connection a request may go out on: one that has
/// not ended. The supervisor clears an ended one as soon as it is told,
/// which wakes the waits that found it closing.
fn up(conn: &Option<Connection>) -> bool {
    conn.as_ref().is_some_and(|conn| !conn.is_closing())
}

/// Waits until every connection task has ended (`live` counts them), for
/// at most [`RELEASE_WAIT`].
async fn released(mut live: watch::Receiver<usize>) {
    let _ = tokio::time::timeout(RELEASE_WAIT, live.wait_for(|n| *n == 0)).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    /// A session of no client, its timings a second each.
    pub(super) fn session() -> Session {
        let url = url::Url::parse("ws://127.0.0.1:1/ws").unwrap();
        let config = SessionConfig {
            token: SecretString::from("t"),
            keystore_path: PathBuf::from("k"),
            keystore_in_memory: false,
            keystore_save_window: Duration::ZERO,
            url,
            tls: transport::tls::client_config(&[]).unwrap(),
            connect_timeout: SECOND,
            login_deadline: Duration::ZERO,
            connection: transport::Settings {
                request_timeout: SECOND,
                heartbeat_interval: SECOND,
                idle_timeout: 2 * SECOND,
                debug: false,
            },
            reconnect_initial: SECOND,
            reconnect_max: SECOND,
            reconnect_reset_after: SECOND,
            push_queue_capacity: 1,
            push_queue_bytes: 1,
            control_queue_bytes: 1,
        };
        let telemetry = Arc::new(Telemetry::new(None));
        Session::new(
            config,
            MenuFeed::default(),
            EventSender::default(),
            telemetry,
        )
    }

    #[tokio::test(start_paused = true)]
    async fn wait_connected_waits_for_a_live_session_up_to_its_timeout() {
        let session = Arc::new(session());
        let started = Instant::now();
        let never = session.wait_connected(5 * SECOND).await;
        assert!(matches!(never, Err(ClientError::NotConnected)));
        assert!(started.elapsed() < SECOND, "no login: fails at once");

        session.started.store(true, Ordering::SeqCst);
        let started = Instant::now();
        let late = session.wait_connected(5 * SECOND).await;
        assert!(matches!(late, Err(ClientError::NotConnected)));
        assert!(started.elapsed() >= 5 * SECOND, "waited the whole timeout");

        let back = session.clone();
        tokio::spawn(async move {
            tokio::time::sleep(2 * SECOND).await;
            back.conn.send_replace(Some(Connection::detached()));
        });
        let started = Instant::now();
        assert!(session.wait_connected(5 * SECOND).await.is_ok());
        let waited = started.elapsed();
        assert!(waited >= 2 * SECOND && waited < 5 * SECOND, "{waited:?}");
        assert!(
            session.wait_connected(Duration::ZERO).await.is_ok(),
            "live: at once"
        );

        session.conn.send_replace(None);
        let stopper = session.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SECOND).await;
            stopper.shutdown();
        });
        let started = Instant::now();
        let stopped = session.wait_connected(60 * SECOND).await;
        assert!(matches!(stopped, Err(ClientError::NotConnected)));
        assert!(started.elapsed() < 2 * SECOND, "shutdown ends the wait");
    }
}
