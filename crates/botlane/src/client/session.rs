//! The session: login, menu publishing, reconnects, and where pushes go.
//!
//! The supervisor never awaits a request: heartbeats belong to the
//! connection task and menu republishing to a task of its own, so a slow or
//! silent service never holds up shutdown or the reconnect logic.

use std::sync::{Arc, Weak};

use secrecy::ExposeSecret;
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::backoff::Backoff;
use super::connection::{Closed, Connection, Ended, Inbound, Push, Settings};
use super::push_queue::{Offer, CONTROL_CAPACITY};
use super::stats::Counters;
use super::throttle::Warnings;
use super::{dispatch, lock, transport, write, ClientError, Event, Shared};
use crate::keystore::{Saver, SaverOptions};
use crate::wire::{self, OpCode};

/// How long a failed login waits for the connection task to say why the
/// connection ended (it is already ending: its slots have failed).
const CLOSE_REASON_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Logs in for the first time and starts the session and dispatch tasks.
/// A failed first login may be retried; a successful one may not be repeated.
pub(super) async fn start(shared: Arc<Shared>) -> Result<(), ClientError> {
    use std::sync::atomic::Ordering;
    if shared.started.swap(true, Ordering::SeqCst) {
        return Err(ClientError::AlreadyLoggedIn);
    }
    let started = first_login(shared.clone()).await;
    if started.is_err() {
        shared.started.store(false, Ordering::SeqCst);
    }
    started
}

async fn first_login(shared: Arc<Shared>) -> Result<(), ClientError> {
    let keystore = match shared.keystore.get() {
        // A failed first login may be retried: the keystore opened then is kept.
        Some(saver) => saver.clone(),
        None => {
            let saver = Saver::open(
                &shared.options.keystore_path,
                SaverOptions::default().window(shared.options.keystore_save_window),
            )
            .await
            .map_err(ClientError::Keystore)?;
            shared.keystore.get_or_init(|| saver).clone()
        }
    };
    {
        let mut keys = shared
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (channel, key) in keystore.channel_keys() {
            keys.insert(channel, Arc::new(key));
        }
    }
    let public_key = keystore.identity().public_key().to_base64();

    let closed = connect(&shared, &public_key).await?;
    tokio::spawn(dispatch::run(shared.clone()));
    tokio::spawn(republish(shared.clone()));
    tokio::spawn(supervise(shared.clone(), closed, public_key));
    let bot_id = super::read(&shared.bot_id).unwrap_or_default();
    let _ = shared.events.send(Event::Ready { bot_id });
    Ok(())
}

/// Where a connection hands its pushes: into the push queue, in wire order,
/// without waiting (op 33 notifications are only logged).
struct SessionInbound {
    shared: Weak<Shared>,
    warnings: Arc<Warnings>,
    counters: Arc<Counters>,
}

impl Inbound for SessionInbound {
    fn push(&self, push: Push) -> Result<(), String> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(());
        };
        if matches!(push, Push::Notification) {
            tracing::debug!("notification");
            return Ok(());
        }
        match shared.queue.offer(push) {
            Offer::Queued => {}
            Offer::Dropped => {
                if let Some(swallowed) = shared.warnings.pushes_dropped.allow() {
                    let (_, _, dropped) = shared.queue.figures();
                    tracing::warn!(
                        capacity = shared.options.push_queue_capacity,
                        dropped_total = dropped,
                        swallowed,
                        "dropping a message push: dispatch is behind and the push queue is full"
                    );
                }
            }
            Offer::ControlOverflow => {
                return Err(format!(
                    "the service sent more than {CONTROL_CAPACITY} channel-key, ready and \
                     membership pushes that dispatch has not applied yet (closed with 1008)"
                ))
            }
        }
        Ok(())
    }

    fn frame_received(&self) {
        Counters::bump(&self.counters.frames_received);
    }

    fn warnings(&self) -> &Warnings {
        &self.warnings
    }
}

/// Connects, logs in and publishes the menu; on success the connection is
/// the session's current one. Every step is time-bound: the connection by
/// `connect_timeout`, the login and menu replies by `request_timeout`.
async fn connect(shared: &Arc<Shared>, public_key: &str) -> Result<Closed, ClientError> {
    let options = &shared.options;
    Counters::bump(&shared.counters.connect_attempts);
    let socket = transport::dial(&shared.url, &shared.tls, options.connect_timeout)
        .await
        .map_err(ClientError::Connect)?;
    let inbound = Arc::new(SessionInbound {
        shared: Arc::downgrade(shared),
        warnings: shared.warnings.clone(),
        counters: shared.counters.clone(),
    });
    let settings = Settings {
        request_timeout: options.request_timeout,
        heartbeat_interval: options.heartbeat_interval,
        idle_timeout: options.idle_timeout,
        debug: options.debug,
    };
    let (conn, mut closed) =
        Connection::start(socket, settings, inbound, shared.shutdown.subscribe());
    match log_in(shared, &conn, public_key).await {
        Ok(()) => {
            Counters::bump(&shared.counters.sessions);
            shared.conn.send_replace(Some(conn));
            Ok(closed)
        }
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
async fn log_in(
    shared: &Arc<Shared>,
    conn: &Connection,
    public_key: &str,
) -> Result<(), ClientError> {
    let options = &shared.options;
    let login = wire::LoginRequest {
        token: options.token.expose_secret().to_owned(),
        public_key: public_key.to_owned(),
        client: concat!("botlane/", env!("CARGO_PKG_VERSION")).to_owned(),
    };
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
    write(&shared.bot_id, Some(bot_id));
    *lock(&shared.published_hash) = None;
    publish_menu(shared, conn).await
}

/// Publishes the menu unless this session already published the same hash.
/// One publish at a time, so the hash check and the publish go together.
async fn publish_menu(shared: &Shared, conn: &Connection) -> Result<(), ClientError> {
    let _one_at_a_time = shared.publishing.lock().await;
    let (json, hash) = {
        let registry = lock(&shared.registry);
        (registry.canonical_menu_json(), registry.hash())
    };
    if lock(&shared.published_hash).as_deref() == Some(hash.as_str()) {
        return Ok(());
    }
    let menu = RawValue::from_string(json).map_err(|_| ClientError::MalformedReply {
        opcode: OpCode::MenuPublish.code(),
    })?;
    let reply: wire::CodeReply = conn
        .request(OpCode::MenuPublish, &wire::MenuPublish { menu })
        .await?;
    if reply.code != 0 {
        return Err(ClientError::Refused {
            opcode: OpCode::MenuPublish.code(),
            code: reply.code,
        });
    }
    tracing::debug!(hash = %hash, "menu published");
    *lock(&shared.published_hash) = Some(hash);
    Ok(())
}

/// Republishes the menu when a registry guard is dropped, on a task of its
/// own so that the supervisor never waits for the reply.
async fn republish(shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            () = shared.menu_changed.notified() => {
                if let Ok(conn) = shared.connection() {
                    if let Err(e) = publish_menu(&shared, &conn).await {
                        tracing::warn!(error = %e, "republishing the menu failed");
                    }
                }
            }
            () = super::stopped(&mut shutdown) => return,
        }
    }
}

/// Keeps the session alive: when the connection ends, reports why and
/// reconnects with backoff.
async fn supervise(shared: Arc<Shared>, mut closed: Closed, public_key: String) {
    let options = &shared.options;
    let mut backoff = Backoff::new(
        options.reconnect_initial,
        options.reconnect_max,
        options.reconnect_reset_after,
    );
    let mut up_since = Instant::now();
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        let ended = tokio::select! {
            ended = &mut closed => ended,
            () = super::stopped(&mut shutdown) => return,
        };
        shared.conn.send_replace(None);
        if *shutdown.borrow() {
            return;
        }
        let ended = ended.unwrap_or_else(|_| Ended::task_failed());
        tracing::warn!(kind = ended.kind, code = ?ended.code, "disconnected");
        let _ = shared.events.send(Event::Disconnected {
            reason: ended.reason,
            will_reconnect: true,
        });
        backoff.session_ended(up_since.elapsed());
        match reconnect(&shared, &public_key, &mut backoff).await {
            Some(next) => {
                closed = next;
                up_since = Instant::now();
            }
            None => return,
        }
    }
}

/// Tries to log in again until it works, the token is refused, or the
/// client shuts down. Every failed attempt, a timed-out one included, waits
/// the next backoff delay.
async fn reconnect(
    shared: &Arc<Shared>,
    public_key: &str,
    backoff: &mut Backoff,
) -> Option<Closed> {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            () = tokio::time::sleep(backoff.next_delay()) => {}
            () = super::stopped(&mut shutdown) => return None,
        }
        let attempt = tokio::select! {
            attempt = connect(shared, public_key) => attempt,
            () = super::stopped(&mut shutdown) => return None,
        };
        match attempt {
            Ok(closed) => {
                tracing::info!("reconnected");
                let _ = shared.events.send(Event::Reconnected);
                return Some(closed);
            }
            Err(ClientError::LoginRefused) => {
                let _ = shared.events.send(Event::Disconnected {
                    reason: ClientError::LoginRefused.to_string(),
                    will_reconnect: false,
                });
                return None;
            }
            // The close reason is the service's text: logs get the opcode only.
            Err(ClientError::SessionEnded { opcode, .. }) => {
                tracing::warn!(
                    opcode,
                    "reconnect failed: the connection ended during login"
                );
            }
            Err(e) => tracing::warn!(error = %e, "reconnect failed"),
        }
    }
}
