//! Keeping the session alive: the supervisor reconnects with backoff when
//! the connection ends, and the menu task republishes after registrations.
//!
//! The supervisor never awaits a request: heartbeats belong to the
//! connection task and menu republishing to a task of its own, so a slow or
//! silent service never holds up shutdown or the reconnect logic. It sends
//! `Ready` (if the first connection ended before dispatch applied its
//! `ready`) before the first `Disconnected`, `Disconnected` and
//! `ReconnectFailed`; dispatch sends `Reconnected` as it applies the new
//! session's `ready` (`phase.rs`), and the supervisor only when dispatch
//! has not within its bounds.

use std::sync::Arc;

use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use super::backoff::Backoff;
use super::login::{retry_after, LoggedIn};
use super::Session;
use crate::error::ClientError;
use crate::events::Event;
use crate::sync::stopped;
use crate::telemetry::{ConnectionState, LoginPhase};
use crate::transport::{Closed, Ended};

/// Republishes the menu after each change of the registry (the
/// publishing step skips a hash already published), on a task of its own
/// so that the supervisor never waits for the reply.
///
/// A change made while the session is down is published once it is up
/// again: the reconnect's login may have taken its snapshot of the menu
/// before the change (skipping it, as this task did, lost the change for
/// the whole session).
pub(super) async fn republish(session: Arc<Session>) {
    let mut shutdown = session.shutdown.subscribe();
    let mut live = session.conn.subscribe();
    loop {
        tokio::select! {
            () = session.menu.changed() => {}
            () = stopped(&mut shutdown) => return,
        }
        let conn = tokio::select! {
            conn = live.wait_for(super::up) => conn.ok().and_then(|conn| conn.clone()),
            () = stopped(&mut shutdown) => return,
        };
        // `None` only once the session is gone: this task holds it.
        let Some(conn) = conn else { return };
        if let Err(e) = session.publish_menu(&conn).await {
            tracing::warn!(error = %e, "republishing the menu failed");
        }
    }
}

/// When the connection ends, reports why and reconnects with backoff.
pub(super) async fn supervise(session: Arc<Session>, first: LoggedIn, public_key: String) {
    let LoggedIn {
        mut closed,
        ready: first_ready,
        mut connection,
    } = first;
    let config = &session.config;
    let mut backoff = Backoff::new(
        config.reconnect_initial,
        config.reconnect_max,
        config.reconnect_reset_after,
    );
    let mut up_since = Instant::now();
    let mut shutdown = session.shutdown.subscribe();
    loop {
        let ended = tokio::select! {
            ended = &mut closed => ended,
            () = stopped(&mut shutdown) => return,
        };
        session.conn.send_replace(None);
        // Before `Ready` is sent without a `ready` (which lets go of what
        // waits for it): what a first connection that ended before its
        // `ready` pushed waits for the next session's instead.
        session.ended(connection);
        // `Ready` comes first, also when the first connection ended before
        // dispatch applied its `ready` (only the first can: a reconnect
        // comes after `Ready`). One that came may wait in the queue
        // (dispatch starts after the login): dispatch applies it, and sends
        // `Ready` with its channels, before this one is sent without.
        if !session.is_announced() && *first_ready.borrow() {
            // Boxed: waited for once at most, and inline it made every
            // idle session's supervisor task larger.
            let announced =
                tokio::time::timeout(session.request_timeout(), session.until_announced());
            tokio::select! {
                biased;
                () = stopped(&mut shutdown) => return,
                _ = Box::pin(announced) => {}
            }
        }
        // `false` only once shut down.
        if session.is_shut_down() || !session.announce_ready() {
            return;
        }
        let ended = ended.unwrap_or_else(|_| Ended::task_failed());
        tracing::warn!(kind = ended.kind, code = ?ended.code, "disconnected");
        session.telemetry.reconnect(ended.kind);
        session.telemetry.enter(ConnectionState::Reconnecting);
        session.emit(Event::Disconnected {
            reason: ended.reason,
            will_reconnect: true,
        });
        backoff.session_ended(up_since.elapsed());
        // Boxed: the reconnect's future (dial, TLS, login, menu) is most of
        // this task's size, and an idle session never needs it; inline, it
        // made every idle session's supervisor task about 5 KB.
        match Box::pin(reconnect(&session, &public_key, &mut backoff)).await {
            Some((next, number)) => {
                closed = next;
                connection = number;
                up_since = Instant::now();
            }
            None => return,
        }
    }
}

/// Tries to log in again until it works (`Event::Reconnected` sent:
/// [`reconnected`]; the new connection's end and number), the token is
/// refused, or the client shuts down. Every failed attempt, a timed-out
/// one included, waits the next backoff delay, or the service's
/// `Retry-After` when later (up to `reconnect_max`).
async fn reconnect(
    session: &Arc<Session>,
    public_key: &str,
    backoff: &mut Backoff,
) -> Option<(Closed, u64)> {
    let mut shutdown = session.shutdown.subscribe();
    let mut delay = backoff.next_delay();
    let mut failed: u32 = 0;
    let longest = session.config.reconnect_max;
    loop {
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stopped(&mut shutdown) => return None,
        }
        let attempt = tokio::select! {
            attempt = session.connect(public_key, true) => attempt,
            () = stopped(&mut shutdown) => return None,
        };
        // A login that a shutdown cut short (`connect` stores no session
        // after one) is no failed attempt to log and retry.
        if session.is_shut_down() {
            return None;
        }
        session.count_login(LoginPhase::Reconnect, &attempt);
        let mut asked = None;
        let failure = match attempt {
            Ok(mut logged_in) => {
                let ended = tokio::select! {
                    biased;
                    () = stopped(&mut shutdown) => return None,
                    () = reconnected(session, &mut logged_in.ready, logged_in.connection) => {
                        session.telemetry.enter(ConnectionState::Connected);
                        return Some((logged_in.closed, logged_in.connection));
                    }
                    ended = &mut logged_in.closed => ended,
                };
                // A connection that ended once `Reconnected` was sent for
                // it (dispatch applied its `ready` as it ended) was a
                // session: `Reconnected`, then `Disconnected`.
                if !session.give_up(logged_in.connection) {
                    session.telemetry.enter(ConnectionState::Connected);
                    return Some((ended_already(ended), logged_in.connection));
                }
                // Ended before `Reconnected` (its `ready` not come, or
                // not applied yet): to the application, the session never
                // came back, and what it pushed waits for the next one.
                session.conn.send_replace(None);
                let ended = ended.unwrap_or_else(|_| Ended::task_failed());
                tracing::warn!(
                    kind = ended.kind,
                    code = ?ended.code,
                    "reconnect failed: the connection ended before Reconnected was sent for it"
                );
                ended.reason
            }
            Err(ClientError::LoginRefused) => {
                session.refuse();
                session.emit(Event::Disconnected {
                    reason: ClientError::LoginRefused.to_string(),
                    will_reconnect: false,
                });
                return None;
            }
            Err(e) => {
                match &e {
                    // The close reason is the service's text: logs get the
                    // opcode only (the event, for the application, has it).
                    ClientError::SessionEnded { opcode, .. } => tracing::warn!(
                        opcode,
                        "reconnect failed: the connection ended during login"
                    ),
                    e => tracing::warn!(error = %e, "reconnect failed"),
                }
                asked = retry_after(&e);
                e.to_string()
            }
        };
        delay = backoff.after(asked).min(longest);
        failed = failed.saturating_add(1);
        session.emit(Event::ReconnectFailed {
            attempt: failed,
            reason: failure,
            retry_in: delay,
        });
    }
}

/// Returns once `Event::Reconnected` has been sent for a reconnect's
/// `connection` (`ready` turns `true` once its `ready` has been handed to
/// dispatch): by dispatch, as it applies the connection's `ready`, so
/// that `channels()` lists the new session's channels when the event is
/// read and everything after that `ready` comes after the event. Dispatch
/// may still be working through pushes of the old session (a handler
/// holding every permit, a flood), and the new `ready` waits behind them,
/// in wire order. The service pushes it right after the login reply; as
/// for the first login, one that has not come within the request timeout
/// is waited for no longer, and neither is dispatch that has not applied
/// it within another (each with a warning): the event is then sent here,
/// before the pushes that follow that `ready` (queued behind it), and
/// dispatch, applying it later, sends nothing.
async fn reconnected(session: &Session, ready: &mut watch::Receiver<bool>, connection: u64) {
    let timeout = session.request_timeout();
    // `Ok(false)`: the connection ended without it; `Err`: not in time.
    let handed = tokio::time::timeout(timeout, ready.wait_for(|ready| *ready))
        .await
        .map(|ready| ready.is_ok());
    match handed {
        Ok(true) => {
            // Bounded too: handlers that hold every permit (or run without
            // a timeout) must not keep the application from hearing that
            // the session is back, while requests already go out on it.
            let applied = tokio::time::timeout(timeout, session.until_reconnected(connection));
            if applied.await.is_err() {
                tracing::warn!(
                    "dispatch did not reach the reconnect's ready within the request timeout: \
                     Reconnected is sent before channels() lists the new session's channels"
                );
            }
        }
        // The connection ended without a `ready`: its end says so.
        Ok(false) => std::future::pending().await,
        Err(_) => {
            tracing::warn!("no ready push within the request timeout after the reconnect's login");
        }
    }
    session.announce_reconnected(connection);
}

/// A connection's end, seen already, as [`Closed`] again.
fn ended_already(ended: Result<Ended, oneshot::error::RecvError>) -> Closed {
    let (tell, closed) = oneshot::channel();
    let _ = tell.send(ended.unwrap_or_else(|_| Ended::task_failed()));
    closed
}
