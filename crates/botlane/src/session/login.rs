//! Connecting, logging in and publishing the menu, and the first login's
//! attempts until one succeeds, one fails for good or the login deadline
//! is reached. Every step is time-bound: the connection by
//! `connect_timeout`, the login and menu replies by `request_timeout`, the
//! attempts by `login_deadline`.

use std::sync::Arc;
use std::time::Duration;

use secrecy::ExposeSecret;
use serde_json::value::RawValue;
use tokio::sync::watch;
use tokio::time::Instant;

use super::backoff::Backoff;
use super::inbound::{Live, SessionInbound};
use super::{Counters, Session};
use crate::error::ClientError;
use crate::events::Event;
use crate::sync::{lock, stopped};
use crate::telemetry::{LoginPhase, LoginResult};
use crate::transport::{self, Closed, Connection, Ended};
use crate::wire::{self, OpCode, ReplyCode};

/// How long a failed login waits for the connection task to say why the
/// connection ended (it is already ending: its slots have failed).
const CLOSE_REASON_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A connection logged in, and the session's current one.
pub(super) struct LoggedIn {
    /// Why it ended, once it has.
    pub(super) closed: Closed,
    /// Turns `true` once its `ready` has been handed to dispatch (applied,
    /// or queued).
    pub(super) ready: watch::Receiver<bool>,
    /// Its number, which its `ready` carries (`phase.rs`).
    pub(super) connection: u64,
}

impl Session {
    /// The first login's attempts: a failure that may pass ([`transient`])
    /// is tried again after the backoff's delay or the service's
    /// `Retry-After`, if the next attempt can start before the login
    /// deadline, and reported ([`Event::LoginFailed`]); any other failure
    /// is the login's error. A shutdown ends the wait at once with
    /// [`ClientError::NotConnected`]; the attempts live in the caller's
    /// future, so dropping it stops them.
    pub(super) async fn first_connect(
        self: &Arc<Self>,
        public_key: &str,
    ) -> Result<LoggedIn, ClientError> {
        let config = &self.config;
        // `None`: a deadline past what the clock can name, never reached.
        let deadline = Instant::now().checked_add(config.login_deadline);
        let in_time = |delay: &Duration| match deadline {
            None => true,
            Some(end) => Instant::now()
                .checked_add(*delay)
                .is_some_and(|next| next < end),
        };
        let mut backoff = Backoff::new(
            config.reconnect_initial,
            config.reconnect_max,
            config.reconnect_reset_after,
        );
        let mut shutdown = self.shutdown.subscribe();
        let first = self.telemetry.first_login();
        let mut attempt: u32 = 0;
        loop {
            attempt = attempt.saturating_add(1);
            let attempted = self.connect(public_key, false).await;
            if attempted.is_ok() || !self.is_shut_down() {
                self.count_login(LoginPhase::First, &attempted);
            }
            let e = match attempted {
                Ok(logged_in) => {
                    first.connected();
                    return Ok(logged_in);
                }
                Err(e) => e,
            };
            if self.is_shut_down() {
                return Err(ClientError::NotConnected);
            }
            let retry_in = transient(&e)
                .then(|| backoff.after(retry_after(&e)))
                .filter(in_time);
            let Some(delay) = retry_in else {
                return Err(e);
            };
            match &e {
                // The close reason is the service's text: logs get the
                // opcode only (the event, for the application, has it).
                ClientError::SessionEnded { opcode, .. } => tracing::warn!(
                    attempt,
                    opcode,
                    retry_in = ?delay,
                    "login attempt failed: the connection ended during login"
                ),
                e => tracing::warn!(attempt, error = %e, retry_in = ?delay, "login attempt failed"),
            }
            self.emit(Event::LoginFailed {
                attempt,
                reason: e.to_string(),
                retry_in: delay,
            });
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = stopped(&mut shutdown) => return Err(ClientError::NotConnected),
            }
        }
    }

    /// Counts a login attempt that no shutdown cut short.
    pub(super) fn count_login(&self, phase: LoginPhase, attempt: &Result<LoggedIn, ClientError>) {
        let result = match attempt {
            Ok(_) => LoginResult::Ok,
            Err(ClientError::LoginRefused) => LoginResult::Refused,
            Err(_) => LoginResult::Failed,
        };
        self.telemetry.login_attempt(phase, result);
    }

    /// Connects, logs in and publishes the menu; on success the connection
    /// is the session's current one, and for a `reconnect` its `ready`,
    /// once dispatch applies it, announces `Event::Reconnected`.
    pub(super) async fn connect(
        self: &Arc<Self>,
        public_key: &str,
        reconnect: bool,
    ) -> Result<LoggedIn, ClientError> {
        let config = &self.config;
        Counters::bump(&self.counters.connect_attempts);
        // Shutdown ends the dial: a first login's dial is not in the
        // supervisor's `select!`, and left to run it connected after
        // `close()` had returned (and held the login to `connect_timeout`).
        let mut shutdown = self.shutdown.subscribe();
        let socket = tokio::select! {
            socket = transport::dial(&config.url, &config.tls, config.connect_timeout) => {
                socket.map_err(ClientError::Connect)?
            }
            () = stopped(&mut shutdown) => return Err(ClientError::NotConnected),
        };
        let (ready, ready_rx) = watch::channel(false);
        let login = self.start_login();
        let inbound = Arc::new(SessionInbound {
            session: Arc::downgrade(self),
            counters: self.counters.clone(),
            warnings: self.transport_warnings.clone(),
            ready,
            connection: login.connection,
            _live: Live::new(&self.live),
        });
        let (conn, mut closed) = Connection::start(
            socket,
            config.connection,
            inbound,
            self.shutdown.subscribe(),
        );
        match self.log_in(&conn, public_key).await {
            Ok(()) => {
                // Not after a shutdown made since the last reply came (a
                // handler run on the connection task may make one): it
                // cleared the session before this could store it. Checked
                // under the session's lock: `shutdown` sets its flag
                // before it takes that lock to clear the session.
                let stored = self.conn.send_if_modified(|live| {
                    if self.is_shut_down() {
                        return false;
                    }
                    *live = Some(conn);
                    true
                });
                if !stored {
                    return Err(ClientError::NotConnected);
                }
                Counters::bump(&self.counters.sessions);
                let connection = login.connection;
                // Stored first: a `Reconnected` that dispatch sends from
                // here on finds requests going out on the new session.
                login.finished(reconnect);
                Ok(LoggedIn {
                    closed,
                    ready: ready_rx,
                    connection,
                })
            }
            // Ended by our own shutdown, not by the service: said as every
            // other step of a login cut short by one says it.
            Err(_) if self.is_shut_down() => Err(ClientError::NotConnected),
            // The connection task knows why it ended: say so.
            Err(ClientError::ConnectionClosed { opcode }) => {
                let reason = match tokio::time::timeout(CLOSE_REASON_WAIT, &mut closed).await {
                    Ok(Ok(ended)) => ended.reason,
                    _ => Ended::task_failed().reason,
                };
                Err(ClientError::SessionEnded { opcode, reason })
            }
            Err(e) => Err(e),
        }
    }

    /// Sends the login and publishes the menu on a new connection.
    async fn log_in(&self, conn: &Connection, public_key: &str) -> Result<(), ClientError> {
        let login = wire::LoginRequest::new(
            self.config.token.expose_secret(),
            public_key,
            concat!("botlane/", env!("CARGO_PKG_VERSION")),
        );
        let reply: wire::LoginReply = conn.request(OpCode::Login, &login).await?;
        drop(login);
        let bot_id = match (reply.code, reply.user_id) {
            (0, Some(id)) => id,
            (code, _) if code == wire::ReplyCode::Unauthorized.code() => {
                return Err(ClientError::LoginRefused)
            }
            (code, _) => {
                return Err(ClientError::Refused {
                    opcode: OpCode::Login.code(),
                    code,
                })
            }
        };
        tracing::info!(bot = %bot_id, "logged in");
        self.bot_id.store(Some(Arc::new(bot_id.to_owned())));
        *lock(&self.published_hash) = None;
        self.publish_menu(conn).await
    }

    /// Publishes the menu unless this connection already published the
    /// same hash. One publish at a time, so the hash check and the publish
    /// go together. The menu is read once, as a snapshot.
    pub(super) async fn publish_menu(&self, conn: &Connection) -> Result<(), ClientError> {
        let _one_at_a_time = self.publishing.lock().await;
        let current = self.menu.current();
        let hash = current.hash.clone();
        if lock(&self.published_hash).as_deref() == Some(hash.as_str()) {
            return Ok(());
        }
        let menu = RawValue::from_string(current.json.clone()).map_err(|_| {
            ClientError::MalformedReply {
                opcode: OpCode::MenuPublish.code(),
            }
        })?;
        let reply: wire::CodeReply = conn
            .request(OpCode::MenuPublish, &wire::MenuPublish::new(menu))
            .await?;
        if reply.code != 0 {
            return Err(ClientError::Refused {
                opcode: OpCode::MenuPublish.code(),
                code: reply.code,
            });
        }
        // Its text is what `hostile_reconnect.rs` (`ShutDownOnPublish`)
        // waits for to shut down inside a login's last step.
        tracing::debug!(hash = %hash, "menu published");
        *lock(&self.published_hash) = Some(hash);
        Ok(())
    }
}

/// Whether a failed login attempt may succeed if tried again: the service
/// could not be reached or was busy (a 5xx or 429, `-2` or `-9`), or the
/// connection ended or went silent before the login was done. Not a
/// refused token, a reply the client cannot read, a request refused for
/// what it holds (a menu the service does not take), nor a shutdown.
fn transient(e: &ClientError) -> bool {
    match e {
        ClientError::Connect(e) => e.is_transient(),
        ClientError::ConnectionClosed { .. }
        | ClientError::SessionEnded { .. }
        | ClientError::Timeout { .. } => true,
        ClientError::Refused { code, .. } => {
            *code == ReplyCode::ServerError.code() || *code == ReplyCode::RateLimited.code()
        }
        _ => false,
    }
}

/// How long the service asked to be left alone, with the error.
pub(super) fn retry_after(e: &ClientError) -> Option<Duration> {
    match e {
        ClientError::Connect(e) => e.retry_after(),
        _ => None,
    }
}
