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
//!   it (the request timeout). A connection that ends before its `ready`
//!   came (and before the session stopped waiting for it) was no session,
//!   even with its login over: it is handled as a failed login (below).
//!   So is a reconnect that ends before `Reconnected` was sent for it,
//!   whether or not its `ready` came: a connection whose session was never
//!   announced is no session, whatever it sent. The boundary is what
//!   dispatch has taken when the supervisor gives up on it: a `ready`
//!   dispatch holds then is applied (its channel list) but announces
//!   nothing; everything of the connection still queued or parked, and
//!   what earlier failed logins left behind its `ready`, is failed.
//! - A login that fails (or is given up on) was never a session: its
//!   `ready` lists nothing and announces nothing, and its membership
//!   pushes are not applied (the next session's `ready` lists the bot's
//!   channels as they are then). Its messages and channel keys, those that
//!   came before the failure and those its connection reads after it
//!   until it has ended, are kept for the next session: the service
//!   pushes each message and each key once, to the connection it took for
//!   logged in, and never again. They wait, parked in wire order and in
//!   the queue's budgets (a message that comes with the message budget
//!   full is dropped and counted, as when dispatch is behind), behind the
//!   next session's `ready` (or until that session stops waiting for it),
//!   which decides whether the bot is still in their channels; a reply
//!   goes out on the new session. A later login that fails too carries
//!   them on. When no session will come (a reconnect's login refused for
//!   good), the messages are dropped and counted, and the keys go to
//!   dispatch: nothing waits in memory for a `ready` that cannot come.
//!   When a first login is refused for good after a failed attempt, the
//!   messages are dropped and counted too (a later `login()` is a new
//!   session), and the keys wait for that later login's `ready`: dispatch
//!   has not started, and would refuse a key before any `ready`.

use super::{PushQueue, State};
use crate::transport::Push;

/// Where the newest connection's login stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Stage {
    LoggingIn,
    /// Logged in, or no connection yet.
    #[default]
    Up,
    Failed,
    /// No session will come on it (its login was refused for good): its
    /// pushes are discarded.
    Over,
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

    /// The connection whose messages may be dispatched on the spot as far
    /// as its login goes, if any.
    pub(super) fn spot(&self) -> Option<u64> {
        self.flows(self.connection, false)
            .then_some(self.connection)
    }

    /// Whether a push of `connection` is taken at all: not of a connection
    /// a later one replaced (only one whose login failed, or was given up
    /// on, still runs then), nor a `ready` or membership push of a login
    /// that failed, nor any push once no session will come.
    pub(super) fn admits(&self, connection: u64, push: &Push) -> bool {
        self.connection == connection
            && match self.stage {
                Stage::Failed => carried(push),
                Stage::Over => false,
                Stage::LoggingIn | Stage::Up => true,
            }
    }

    /// Whether a push of this connection other than its `ready` goes
    /// behind a `ready` still to come: its own, or (its login failed) the
    /// next session's.
    pub(super) fn parks(&self) -> bool {
        self.awaiting_ready || self.stage == Stage::Failed
    }
}

/// Whether a failed login's push is kept for the next session: each is
/// pushed once, and lost if dropped.
fn carried(push: &Push) -> bool {
    matches!(push, Push::Message(_) | Push::ChannelKey(_))
}

impl State {
    /// The newest connection's login failed, it ended before its `ready`,
    /// or it was given up on: its `ready` and membership pushes, parked or queued, are
    /// discarded; its messages and channel keys are parked, in wire order
    /// behind those earlier failures kept, for the next session. Returns
    /// how many were discarded and how many are parked now.
    fn fail_newest(&mut self) -> (usize, usize) {
        self.newest.stage = Stage::Failed;
        self.newest.awaiting_ready = false;
        let from = self.items.len().saturating_sub(self.newest.queued);
        self.newest.queued = 0;
        let theirs: Vec<_> = self.items.drain(from..).collect();
        let parked = std::mem::take(&mut self.parked);
        let mut discarded = 0;
        for (push, weight) in parked.into_iter().chain(theirs) {
            if carried(&push) {
                self.parked.push_back((push, weight));
            } else {
                self.give(&push, weight);
                discarded += 1;
            }
        }
        (discarded, self.parked.len())
    }

    /// Drops the messages parked for a next session's `ready`, counted as
    /// dropped pushes; the rest stays parked. Returns how many.
    fn drop_parked_messages(&mut self) -> usize {
        let mut dropped = 0;
        for (push, weight) in std::mem::take(&mut self.parked) {
            if matches!(push, Push::Message(_)) {
                self.give(&push, weight);
                dropped += 1;
            } else {
                self.parked.push_back((push, weight));
            }
        }
        self.dropped += dropped as u64;
        self.report();
        dropped
    }
}

impl PushQueue {
    /// Connection `connection` starts its login; it is the newest.
    /// What is parked stays parked, behind its `ready`: a failed login's
    /// messages and channel keys.
    pub(crate) fn connecting(&self, connection: u64) {
        self.state().newest = Newest {
            connection,
            stage: Stage::LoggingIn,
            awaiting_ready: true,
            queued: 0,
        };
    }

    /// The login of `connection` finished: the session is up on it, and
    /// dispatch may take its pushes.
    pub(crate) fn logged_in(&self, connection: u64) {
        let mut state = self.state();
        if state.newest.connection == connection && state.newest.stage == Stage::LoggingIn {
            state.newest.stage = Stage::Up;
            drop(state);
            self.ready.notify_one();
        }
    }

    /// The login of `connection` failed: its `ready` and membership pushes
    /// are discarded, its messages and channel keys parked for the next
    /// session. Returns how many were discarded and how many kept.
    pub(crate) fn login_failed(&self, connection: u64) -> (usize, usize) {
        self.fail_newest_if(connection, |newest| newest.stage == Stage::LoggingIn)
    }

    /// Fails the pushes of `connection` as a failed login's, if it is the
    /// newest and `when` holds of it; how many were discarded and kept.
    fn fail_newest_if(
        &self,
        connection: u64,
        when: impl FnOnce(&Newest) -> bool,
    ) -> (usize, usize) {
        let mut state = self.state();
        if state.newest.connection != connection || !when(&state.newest) {
            return (0, 0);
        }
        let counts = state.fail_newest();
        drop(state);
        // A dispatch that waited on the connection's pushes looks again.
        self.ready.notify_one();
        counts
    }

    /// Connection `connection` ended. If its `ready` never came (and the
    /// session did not stop waiting for it), it was no session, whatever
    /// its login said: as after [`login_failed`](Self::login_failed), its
    /// membership pushes are discarded and its messages and channel keys
    /// parked for the next session. Released instead, they were opened
    /// with the old session's channels and keys, before `Reconnected`,
    /// and their replies had no session to go out on. Returns how many
    /// were discarded and how many kept.
    pub(crate) fn ended(&self, connection: u64) -> (usize, usize) {
        self.fail_newest_if(connection, |newest| newest.awaiting_ready)
    }

    /// The client gave up on `connection`, a reconnect that ended before
    /// `Reconnected` was sent for it: it was no session, whether or not
    /// its `ready` came. As after [`login_failed`](Self::login_failed),
    /// what of it is still parked or queued, and what earlier failed
    /// logins left behind its `ready`, is failed: its `ready` and
    /// membership pushes discarded (the next session's `ready`
    /// supersedes them), its messages and channel keys parked for the
    /// next session. What dispatch has taken already (on the spot, or off
    /// the queue: its `ready` may be in dispatch's hands) stays taken.
    /// Returns how many were discarded and how many are parked now.
    pub(crate) fn given_up(&self, connection: u64) -> (usize, usize) {
        self.fail_newest_if(connection, |newest| {
            matches!(newest.stage, Stage::LoggingIn | Stage::Up)
        })
    }

    /// No session will come (a reconnect's login was refused for good):
    /// the messages parked for a next session's `ready` are dropped, counted as
    /// dropped pushes, since nothing could be answered and their channels
    /// are not known to be the bot's; the channel keys go to dispatch,
    /// which keeps those of channels the last session listed (a key is
    /// pushed once, and outlives the session in the keystore). Pushes of
    /// the connection that still come are discarded. Returns how many
    /// messages were dropped.
    pub(crate) fn no_next_session(&self) -> usize {
        let mut state = self.state();
        state.newest.stage = Stage::Over;
        state.newest.awaiting_ready = false;
        let dropped = state.drop_parked_messages();
        let keys = std::mem::take(&mut state.parked);
        state.items.extend(keys);
        let released = !state.items.is_empty();
        drop(state);
        if released {
            self.ready.notify_one();
        }
        dropped
    }

    /// A first login was refused for good: no session ran, and none comes
    /// unless the application calls `login()` again, which starts a new
    /// one. The messages an earlier failed attempt parked are dropped and
    /// counted, as in [`no_next_session`](Self::no_next_session): nothing
    /// could answer them, and a later login is a new session. Its channel
    /// keys stay parked for that login's `ready` (within the control
    /// budget; a shutdown frees them): dispatch has not started, and a key
    /// applied before any `ready` lists its channel is refused, while the
    /// service pushes it once. Pushes of the refused connection that
    /// still come are discarded. Returns how many messages were dropped.
    pub(crate) fn refused_before_a_session(&self) -> usize {
        let mut state = self.state();
        state.newest.stage = Stage::Over;
        state.newest.awaiting_ready = false;
        state.drop_parked_messages()
    }

    /// The session stops waiting for the `ready` of `connection` (none
    /// came in time, or the connection ended): what it parked goes to
    /// dispatch. `None`: the newest connection, whichever it is.
    pub(crate) fn unpark(&self, connection: Option<u64>) {
        let mut state = self.state();
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
