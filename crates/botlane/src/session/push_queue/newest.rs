//! The newest connection's login, as the push queue sees it.
//!
//! - While the login runs, the connection's pushes are queued, never
//!   dispatched on the spot, and dispatch takes none of them: a message
//!   pushed during a reconnect's login used to be dispatched at once, with
//!   the old session's state and no session to reply on. Once the login is
//!   over and the connection is the session's, they go to dispatch in wire
//!   order.
//! - Its pushes that come before its `ready` (protocol.md has `ready`
//!   first) are parked and go behind that `ready`, in wire order, once it
//!   comes: `Ready` or `Reconnected`, sent as dispatch applies it, comes
//!   before their events, and they are opened with the new session's
//!   channels and keys. When no `ready` comes they are released as the
//!   session stops waiting for it: `Ready` or `Reconnected` sent without
//!   it (the request timeout), or the connection's end.
//! - A login that fails (or is given up on) was never a session: its
//!   `ready` lists nothing and announces nothing, its membership pushes
//!   and messages are not dispatched (to the application that was an
//!   outage: `login`'s error or `ReconnectFailed`), and pushes it sends
//!   after are discarded. Its channel keys are kept for the next session:
//!   the service delivers each key once, so they wait (parked, in the
//!   control budget) behind the next `ready`, which decides whether the
//!   bot is still in their channels.

use super::PushQueue;
use crate::sync::lock;
use crate::transport::Push;

/// Where the newest connection's login stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Stage {
    LoggingIn,
    /// Logged in, or no connection yet.
    #[default]
    Up,
    Failed,
}

/// The newest connection, numbered as `phase.rs` numbers them.
#[derive(Debug, Default)]
pub(super) struct Newest {
    connection: u64,
    pub(super) stage: Stage,
    /// Its `ready` has not come, nor has the session stopped waiting for
    /// it: its other pushes are parked.
    pub(super) awaiting_ready: bool,
    /// How many of the queued pushes, the last ones, are its.
    pub(super) queued: usize,
}

impl Newest {
    /// Whether a push of `connection` may be dispatched on the spot as
    /// far as its login goes (`ready`: the push is its `ready`).
    pub(super) fn flows(&self, connection: u64, ready: bool) -> bool {
        self.connection == connection && self.stage == Stage::Up && (ready || !self.awaiting_ready)
    }

    /// Whether a push of `connection` is taken at all: not of a login that
    /// failed, nor of a connection a later one replaced (only one whose
    /// login failed, or was given up on, still runs then).
    pub(super) fn admits(&self, connection: u64) -> bool {
        self.connection == connection && self.stage != Stage::Failed
    }
}

impl PushQueue {
    /// Connection `connection` starts its login; it is the newest.
    /// What is parked stays parked, behind its `ready`: a failed login's
    /// channel keys.
    pub(crate) fn connecting(&self, connection: u64) {
        lock(&self.state).newest = Newest {
            connection,
            stage: Stage::LoggingIn,
            awaiting_ready: true,
            queued: 0,
        };
    }

    /// The login of `connection` finished: the session is up on it, and
    /// dispatch may take its pushes.
    pub(crate) fn logged_in(&self, connection: u64) {
        let mut state = lock(&self.state);
        if state.newest.connection == connection && state.newest.stage == Stage::LoggingIn {
            state.newest.stage = Stage::Up;
            drop(state);
            self.ready.notify_one();
        }
    }

    /// The login of `connection` failed: its pushes are discarded but for
    /// its channel keys, which stay parked for the next session. Returns
    /// how many were discarded.
    pub(crate) fn login_failed(&self, connection: u64) -> usize {
        let mut state = lock(&self.state);
        if state.newest.connection != connection || state.newest.stage != Stage::LoggingIn {
            return 0;
        }
        state.newest.stage = Stage::Failed;
        state.newest.awaiting_ready = false;
        let from = state.items.len().saturating_sub(state.newest.queued);
        state.newest.queued = 0;
        let theirs: Vec<_> = state.items.drain(from..).collect();
        let parked = std::mem::take(&mut state.parked);
        let mut discarded = 0;
        for (push, weight) in parked.into_iter().chain(theirs) {
            if matches!(push, Push::ChannelKey(_)) {
                state.parked.push_back((push, weight));
            } else {
                state.give(&push, weight);
                discarded += 1;
            }
        }
        drop(state);
        // A dispatch that waited on the connection's pushes looks again.
        self.ready.notify_one();
        discarded
    }

    /// The session stops waiting for the `ready` of `connection` (none
    /// came in time, or the connection ended): what it parked goes to
    /// dispatch. `None`: the newest connection, whichever it is.
    pub(crate) fn unpark(&self, connection: Option<u64>) {
        let mut state = lock(&self.state);
        let newest = &state.newest;
        if connection.is_some_and(|c| c != newest.connection) || !newest.awaiting_ready {
            return;
        }
        state.newest.awaiting_ready = false;
        let released = !state.parked.is_empty();
        state.release_parked();
        drop(state);
        if released {
            self.ready.notify_one();
        }
    }
}
