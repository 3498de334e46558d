//! Which connections of a listener sit idle between requests, so that a
//! connection waiting for room in a full budget takes the place of the one
//! idle longest instead of waiting for a keep-alive to time out.
//!
//! A client with a connection pool (reqwest, a browser) keeps the
//! connections of a burst open between requests. With the budget full of
//! those, the next connections waited in the kernel's backlog until the
//! idle ones timed out (`header_read_timeout`, 10 s): 1,000 concurrent
//! calls from one client took 10 s. A connection is busy from the moment a
//! request reaches the service until its response body is written (or
//! dropped), and idle after that; one that has served no request yet is
//! neither (its client is about to send one, and the header-read timeout
//! bounds one that never does), and an upgraded one has left the listener.
//!
//! Closing an idle connection races with its client sending the next
//! request on it, which then fails (as with any server's idle timeout).
//! Pools reuse the connection that came back last, so the ones idle
//! longest are closed, and only once idle for [`IDLE_GRACE`]: a client with
//! more requests has picked up the connections it wants by then. So a
//! client that opens more connections than the budget waits about a grace
//! per budget's worth of them, not a header-read timeout.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Response, StatusCode};
use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a connection stays idle before it may be closed to make room.
const IDLE_GRACE: Duration = Duration::from_secs(1);

/// The most idle connections closed at once for a waiting connection:
/// those behind it in the backlog likely wait too, and closing them one
/// by one would take a round of the scheduler each.
const ROOM_AT_ONCE: usize = 32;

/// What [`IdleConnections::make_room`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Room {
    /// It closed the connection idle longest: its place comes free.
    Made,
    /// The connection idle longest may be closed at this instant.
    At(Instant),
    /// None is idle: try again when one is ([`IdleConnections::idled`]).
    NoneIdle,
}

/// One listener's idle connections, longest idle first.
#[derive(Default)]
pub(super) struct IdleConnections {
    inner: Mutex<Idle>,
    /// Notified whenever a connection becomes idle.
    idled: Notify,
}

#[derive(Default)]
struct Idle {
    /// The next turn: the order in which connections became idle.
    next: u64,
    /// The idle connections by turn, each with when it became idle and the
    /// signal that closes it.
    idle: BTreeMap<u64, (Instant, Arc<Notify>)>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each critical section leaves the data consistent: a panic elsewhere
    // must not stop the listener.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl IdleConnections {
    /// Makes room for a connection that waits: closes the connections idle
    /// longest (at most [`ROOM_AT_ONCE`]) that have been idle for
    /// [`IDLE_GRACE`].
    pub(super) fn make_room(&self) -> Room {
        let mut idle = lock(&self.inner);
        let now = Instant::now();
        let mut closed = 0;
        while let Some(entry) = idle.idle.first_entry() {
            let ready = entry.get().0 + IDLE_GRACE;
            if now < ready {
                if closed == 0 {
                    return Room::At(ready);
                }
                break;
            }
            entry.remove().1.notify_one();
            closed += 1;
            if closed == ROOM_AT_ONCE {
                break;
            }
        }
        if closed == 0 {
            Room::NoneIdle
        } else {
            Room::Made
        }
    }

    /// Notified whenever a connection becomes idle (enable a `notified()`
    /// before [`make_room`](Self::make_room) to miss none).
    pub(super) fn idled(&self) -> &Notify {
        &self.idled
    }

    /// The connection closed by `close` is idle from now on: its turn.
    fn enter(&self, close: &Arc<Notify>) -> u64 {
        let mut idle = lock(&self.inner);
        let turn = idle.next;
        idle.next += 1;
        idle.idle.insert(turn, (Instant::now(), Arc::clone(close)));
        self.idled.notify_waiters();
        turn
    }

    fn leave(&self, turn: u64) {
        lock(&self.inner).idle.remove(&turn);
    }
}

/// What one connection is doing, for its listener's [`IdleConnections`].
pub(super) struct Activity {
    listener: Arc<IdleConnections>,
    /// Notified to close the connection (gracefully: a request already
    /// begun is answered first).
    close: Arc<Notify>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Requests whose response is not written yet.
    busy: usize,
    /// The connection's turn while it is idle.
    turn: Option<u64>,
    /// Upgraded or ended: never idle again.
    gone: bool,
}

impl Activity {
    pub(super) fn new(listener: Arc<IdleConnections>) -> Arc<Self> {
        Arc::new(Self {
            listener,
            close: Arc::new(Notify::new()),
            state: Mutex::new(State::default()),
        })
    }

    /// Resolves when the listener closes this connection to make room.
    pub(super) async fn closed(&self) {
        self.close.notified().await;
    }

    /// A request has reached the service: busy until the [`Busy`] (or the
    /// response body it is moved into) is dropped.
    pub(super) fn begin(self: &Arc<Self>) -> Busy {
        let mut state = lock(&self.state);
        state.busy += 1;
        if let Some(turn) = state.turn.take() {
            self.listener.leave(turn);
        }
        Busy(Arc::clone(self))
    }

    /// The connection has ended (or been upgraded): off the idle list for good.
    pub(super) fn end(&self) {
        let mut state = lock(&self.state);
        state.gone = true;
        if let Some(turn) = state.turn.take() {
            self.listener.leave(turn);
        }
    }

    fn finish(&self) {
        let mut state = lock(&self.state);
        state.busy -= 1;
        if state.busy == 0 && !state.gone {
            state.turn = Some(self.listener.enter(&self.close));
        }
    }
}

/// A request being answered; dropped when its response is written.
pub(super) struct Busy(Arc<Activity>);

impl Busy {
    /// `response`, holding this request busy until its body is written; a
    /// `101 Switching Protocols` leaves the listener with its connection.
    pub(super) fn track(self, response: Response<Body>) -> Response<Body> {
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            self.0.end();
            return response;
        }
        response.map(|body| Body::new(Tracked { body, _busy: self }))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// A response body that keeps its request [`Busy`] until hyper has written
/// or dropped it.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn idle_count(listener: &IdleConnections) -> usize {
        lock(&listener.inner).idle.len()
    }

    #[test]
    fn a_connection_is_idle_between_requests_only() {
        let listener = Arc::new(IdleConnections::default());
        let a = Activity::new(Arc::clone(&listener));
        assert_eq!(idle_count(&listener), 0, "a fresh connection is not idle");
        let first = a.begin();
        let second = a.begin();
        drop(first);
        assert_eq!(idle_count(&listener), 0, "one request still in flight");
        drop(second);
        assert_eq!(idle_count(&listener), 1);
        let third = a.begin();
        assert_eq!(idle_count(&listener), 0);
        drop(third);
        a.end();
        assert_eq!(idle_count(&listener), 0, "an ended connection left");
    }

    #[tokio::test(start_paused = true)]
    async fn room_is_made_by_the_connection_idle_longest_after_its_grace() {
        let listener = Arc::new(IdleConnections::default());
        assert_eq!(listener.make_room(), Room::NoneIdle);
        let older = Activity::new(Arc::clone(&listener));
        let newer = Activity::new(Arc::clone(&listener));
        let idled = listener.idled().notified();
        tokio::pin!(idled);
        idled.as_mut().enable();
        drop(older.begin());
        idled.await;
        let since = Instant::now();
        tokio::time::advance(Duration::from_millis(10)).await;
        drop(newer.begin());
        assert_eq!(listener.make_room(), Room::At(since + IDLE_GRACE));
        tokio::time::advance(IDLE_GRACE - Duration::from_millis(10)).await;
        assert_eq!(listener.make_room(), Room::Made);
        older.closed().await;
        assert_eq!(idle_count(&listener), 1, "only the older one closes");
        // A connection that turned busy again is no longer a candidate.
        let busy = newer.begin();
        assert_eq!(listener.make_room(), Room::NoneIdle);
        drop(busy);
        assert_eq!(idle_count(&listener), 1);
    }
}
