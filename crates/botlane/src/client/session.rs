//! The session: login, menu publishing, heartbeats, reconnects, and the
//! task that takes pushes off the wire.

use std::sync::Arc;
use std::time::Duration;

use rand_core::{OsRng, RngCore};
use secrecy::ExposeSecret;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::connection::{Closed, Connection, Push};
use super::{dispatch, lock, write, ClientError, Event, Shared};
use crate::crypto::WrappedKey;
use crate::keystore::Keystore;
use crate::wire::{self, OpCode};

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
    let keystore =
        Keystore::open_or_create(&shared.options.keystore_path).map_err(ClientError::Keystore)?;
    {
        let mut keys = shared
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for channel in keystore.channel_ids() {
            if let Some(key) = keystore.channel_key(channel) {
                keys.insert(channel.to_owned(), Arc::new(key.clone()));
            }
        }
    }
    let public_key = keystore.identity().public_key().to_base64();
    *lock(&shared.keystore) = Some(keystore);

    let (pushes_tx, pushes_rx) = mpsc::unbounded_channel();
    let closed = connect(&shared, &public_key, &pushes_tx).await?;
    tokio::spawn(dispatch::run(shared.clone(), pushes_rx));
    tokio::spawn(supervise(shared.clone(), closed, public_key, pushes_tx));
    let bot_id = super::read(&shared.bot_id).unwrap_or_default();
    let _ = shared.events.send(Event::Ready { bot_id });
    Ok(())
}

/// Connects, logs in and publishes the menu; on success the connection is
/// the session's current one.
async fn connect(
    shared: &Arc<Shared>,
    public_key: &str,
    pushes: &mpsc::UnboundedSender<Push>,
) -> Result<Closed, ClientError> {
    let options = &shared.options;
    let (conn, closed) = Connection::open(
        &options.url,
        options.request_timeout,
        options.debug,
        pushes.clone(),
        shared.shutdown.subscribe(),
    )
    .await?;
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
    write(&shared.conn, Some(conn.clone()));
    *lock(&shared.published_hash) = None;
    publish_menu(shared, &conn).await?;
    Ok(closed)
}

/// Publishes the menu unless this session already published the same hash.
async fn publish_menu(shared: &Shared, conn: &Connection) -> Result<(), ClientError> {
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

/// Keeps the session alive: heartbeats, republishing on registry changes,
/// and reconnecting with backoff when the connection ends.
async fn supervise(
    shared: Arc<Shared>,
    mut closed: Closed,
    public_key: String,
    pushes: mpsc::UnboundedSender<Push>,
) {
    let mut shutdown = shared.shutdown.subscribe();
    let mut heartbeat = tokio::time::interval(shared.options.heartbeat_interval);
    heartbeat.tick().await;
    loop {
        tokio::select! {
            reason = &mut closed => {
                let reason = reason.unwrap_or_else(|e| format!("connection task failed: {e}"));
                write(&shared.conn, None);
                if *shutdown.borrow() {
                    return;
                }
                tracing::warn!(%reason, "disconnected");
                let _ = shared.events.send(Event::Disconnected { reason, will_reconnect: true });
                match reconnect(&shared, &public_key, &pushes).await {
                    Some(next) => closed = next,
                    None => return,
                }
            }
            _ = shared.menu_changed.notified() => {
                if let Ok(conn) = shared.connection() {
                    if let Err(e) = publish_menu(&shared, &conn).await {
                        tracing::warn!(error = %e, "republishing the menu failed");
                    }
                }
            }
            _ = heartbeat.tick() => {
                if let Ok(conn) = shared.connection() {
                    let beat: Result<wire::CodeReply, _> = conn.request(OpCode::Heartbeat, &wire::Empty {}).await;
                    if let Err(e) = beat {
                        tracing::warn!(error = %e, "heartbeat failed; dropping the connection");
                        write(&shared.conn, None);
                        closed.abort();
                    }
                }
            }
            _ = shutdown.changed() => return,
        }
    }
}

/// Tries to log in again until it works, the token is refused, or the client shuts down.
async fn reconnect(
    shared: &Arc<Shared>,
    public_key: &str,
    pushes: &mpsc::UnboundedSender<Push>,
) -> Option<Closed> {
    let options = &shared.options;
    let mut delay = options.reconnect_initial;
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            () = tokio::time::sleep(jitter(delay)) => {}
            _ = shutdown.changed() => return None,
        }
        match connect(shared, public_key, pushes).await {
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
            Err(e) => {
                tracing::warn!(error = %e, "reconnect failed");
                delay = (delay * 2).min(options.reconnect_max);
            }
        }
    }
}

/// A delay drawn uniformly from `[d/2, d]`, so that many bots dropped at
/// once do not come back in lockstep.
fn jitter(d: Duration) -> Duration {
    let half = d / 2;
    let span = u64::try_from(half.as_micros()).unwrap_or(u64::MAX).max(1);
    half + Duration::from_micros(OsRng.next_u64() % span)
}

/// Unwraps a channel key pushed to us and keeps it in memory and on disk.
pub(super) fn store_channel_key(shared: &Shared, push: &wire::ChannelKeyPush) {
    let wrapped: WrappedKey = match serde_json::from_str(push.wrapped.get()) {
        Ok(w) => w,
        Err(_) => {
            tracing::warn!(channel = %push.channel_id, "ignoring a malformed wrapped channel key");
            return;
        }
    };
    let mut keystore = lock(&shared.keystore);
    let Some(keystore) = keystore.as_mut() else {
        return;
    };
    let key = match keystore
        .identity()
        .unwrap_channel_key(&wrapped, &push.channel_id)
    {
        Ok(key) => key,
        Err(e) => {
            tracing::warn!(channel = %push.channel_id, error = %e, "ignoring a channel key that does not unwrap");
            return;
        }
    };
    keystore.insert_channel_key(push.channel_id.clone(), key.clone());
    if let Err(e) = keystore.save() {
        tracing::warn!(error = %e, "could not save the keystore; the key is kept in memory");
    }
    shared
        .keys
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(push.channel_id.clone(), Arc::new(key));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_in_range() {
        for ms in [1, 2, 250, 30_000] {
            let d = Duration::from_millis(ms);
            for _ in 0..100 {
                let j = jitter(d);
                assert!(j >= d / 2 && j <= d, "{j:?} for {d:?}");
            }
        }
    }
}
