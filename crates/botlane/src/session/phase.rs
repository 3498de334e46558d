//! Which connection a `ready` belongs to, and whether applying it
//! announces `Event::Reconnected`: the number of each of the session's
//! connections, and where the newest stands.
//!
//! Dispatch sends `Reconnected` in the step that applies the new
//! connection's `ready`, as it sends `Ready` for the first: whatever it
//! makes of the pushes after that `ready` (on the spot or off the queue,
//! an invocation polled in place included) comes after the event. Each
//! `ready` carries the number of its connection, so that one of an
//! earlier connection (queued behind a busy dispatch while that
//! connection ended) never announces a later one. The push queue holds a
//! connection's pushes while its login is under way (the service pushes
//! the `ready` right after the login reply, before the menu's), and puts
//! those before its `ready` behind it (`push_queue/newest.rs`): it is told
//! here when a login starts, finishes or fails, when the session stops
//! waiting for a `ready`, when a connection ends, and when a reconnect
//! ends before `Reconnected` (given up on: no session, whether or not its
//! `ready` came; what of it dispatch has not taken waits for the next
//! session's `ready`, as a failed login's). So `Reconnected`
//! comes with the session up, requests going out on it, before the events
//! of the connection's pushes. The supervisor sends the event itself only
//! when dispatch has not applied the `ready` within its bounds
//! (`supervisor.rs`); dispatch, applying it later, then sends nothing.

use super::Session;
use crate::events::Event;

/// Where the newest connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Phase {
    /// Its number: 1 for the first connection, one more for each after it.
    connection: u64,
    stage: Stage,
}

impl Phase {
    pub(super) const fn new() -> Self {
        Self {
            connection: 0,
            stage: Stage::Settled,
        }
    }

    fn is(&self, connection: u64, stage: Stage) -> bool {
        self.connection == connection && self.stage == stage
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Its login is under way.
    LoggingIn,
    /// A reconnect's login finished: applying its `ready` announces
    /// `Reconnected`.
    Owed,
    /// `Reconnected` has been sent for it.
    Announced,
    /// Nothing to announce: the first login, a login that failed, a
    /// connection that ended before `Reconnected`.
    Settled,
}

/// A connection whose login is under way, numbered. Dropped before
/// [`finished`](Self::finished) (the login failed, or was given up on),
/// its `ready` and membership pushes are not applied (its `ready` lists
/// and announces nothing), and its messages and channel keys wait for the
/// next session's `ready` (`push_queue/newest.rs`).
pub(super) struct LoggingIn<'a> {
    session: &'a Session,
    pub(super) connection: u64,
}

impl LoggingIn<'_> {
    /// The login has finished and the connection is the session's: a
    /// reconnect's `ready`, applied, announces `Reconnected`, and dispatch
    /// may take the connection's pushes (told second: the first it takes
    /// may be that `ready`).
    pub(super) fn finished(self, reconnect: bool) {
        let stage = if reconnect {
            Stage::Owed
        } else {
            Stage::Settled
        };
        self.session.phase.send_if_modified(|phase| {
            let now = phase.is(self.connection, Stage::LoggingIn);
            if now {
                phase.stage = stage;
            }
            now
        });
        self.session.queue.logged_in(self.connection);
    }
}

impl Drop for LoggingIn<'_> {
    fn drop(&mut self) {
        // A no-op once finished.
        let (discarded, kept) = self.session.queue.login_failed(self.connection);
        if discarded + kept > 0 {
            tracing::debug!(
                discarded,
                kept,
                "the login failed: its ready and membership pushes are not applied; \
                 its messages and channel keys wait for the next session's ready"
            );
        }
        self.session.phase.send_if_modified(|phase| {
            let failed = phase.is(self.connection, Stage::LoggingIn);
            if failed {
                phase.stage = Stage::Settled;
            }
            failed
        });
    }
}

impl Session {
    /// `connection` ended: if its `ready` never came, it was no session,
    /// and its pushes are handled as a failed login's
    /// (`push_queue/newest.rs`). A no-op for a connection whose `ready`
    /// came, or that the session stopped waiting for.
    pub(super) fn ended(&self, connection: u64) {
        let (discarded, kept) = self.queue.ended(connection);
        if discarded + kept > 0 {
            tracing::debug!(
                discarded,
                kept,
                "the connection ended before its ready: its membership pushes are not applied; \
                 its messages and channel keys wait for the next session's ready"
            );
        }
    }

    /// Numbers a new connection, whose login starts now.
    pub(super) fn start_login(&self) -> LoggingIn<'_> {
        let mut connection = 0;
        self.phase.send_modify(|phase| {
            phase.connection += 1;
            phase.stage = Stage::LoggingIn;
            connection = phase.connection;
        });
        self.queue.connecting(connection);
        LoggingIn {
            session: self,
            connection,
        }
    }

    /// Sends `Event::Reconnected` for `connection` if it is owed and the
    /// client is not shut down; `true` once it has been sent, now or
    /// before. The check and the send are one step under the watch's
    /// lock: dispatch and the supervisor's fallback never both send it.
    /// Sent without the connection's `ready` (the fallback), it lets the
    /// pushes held for that `ready` go to dispatch, after the event.
    pub(crate) fn announce_reconnected(&self, connection: u64) -> bool {
        let mut announced = false;
        self.phase.send_if_modified(|phase| {
            if phase.is(connection, Stage::Owed) && !self.is_shut_down() {
                tracing::info!("reconnected");
                self.emit(Event::Reconnected);
                phase.stage = Stage::Announced;
                announced = true;
                return true;
            }
            announced = phase.is(connection, Stage::Announced);
            false
        });
        if announced {
            self.queue.unpark(Some(connection));
        }
        announced
    }

    /// Returns once `Event::Reconnected` has been sent for `connection`.
    pub(super) async fn until_reconnected(&self, connection: u64) {
        let _ = self
            .phase
            .subscribe()
            .wait_for(|phase| phase.is(connection, Stage::Announced))
            .await;
    }

    /// The reconnect `connection` ended: `false` when `Reconnected` had
    /// been sent for it already, and it was a session. Else it was none,
    /// whatever it sent: `Reconnected` is owed for it no more, and what of
    /// it dispatch has not taken is failed as a failed login's
    /// ([`PushQueue::given_up`](super::PushQueue::given_up)): its `ready`
    /// and membership pushes discarded, its messages and channel keys
    /// (and what earlier failed logins left) behind the next session's
    /// `ready`. Decided under the phase's lock, which dispatch takes to
    /// announce as it applies a `ready`: either `Reconnected` was sent
    /// first, and the connection keeps its pushes, or a `ready` of it that
    /// dispatch holds (taken, not yet applied) announces nothing, and
    /// nothing of it queued behind is dispatched before the next
    /// session's `Ready` or `Reconnected`.
    pub(super) fn give_up(&self, connection: u64) -> bool {
        let mut announced = false;
        let mut failed = (0, 0);
        self.phase.send_if_modified(|phase| {
            announced = phase.is(connection, Stage::Announced);
            if announced {
                return false;
            }
            failed = self.queue.given_up(connection);
            let owed = phase.is(connection, Stage::Owed);
            if owed {
                phase.stage = Stage::Settled;
            }
            owed
        });
        let (discarded, kept) = failed;
        if discarded + kept > 0 {
            tracing::debug!(
                discarded,
                kept,
                "the reconnect ended before Reconnected: its ready and membership pushes are \
                 not applied; its messages and channel keys wait for the next session's ready"
            );
        }
        !announced
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::transport::Push;
    use crate::wire;

    /// How many `Reconnected` events `events` holds now.
    fn reconnected(events: &mut crate::events::Events) -> usize {
        std::iter::from_fn(|| events.try_recv().unwrap())
            .filter(|event| matches!(event, Event::Reconnected))
            .count()
    }

    fn message(id: &str) -> Push {
        Push::Message(wire::WireMessage::new(id, "c", "u", "", 0))
    }

    fn ready(connection: u64) -> Push {
        let ready = wire::Ready::new("b", "b", wire::AccountKind::Bot, vec![]);
        Push::Ready(ready, connection)
    }

    /// The pushes dispatch takes before it would wait.
    async fn taken(session: &Session) -> Vec<String> {
        let mut ids = Vec::new();
        let next = std::time::Duration::from_millis(20);
        while let Ok(push) = tokio::time::timeout(next, session.queue.next()).await {
            ids.push(match push.unwrap() {
                Push::Message(m) => m.id,
                Push::Ready(_, connection) => format!("ready {connection}"),
                other => format!("{other:?}"),
            });
        }
        ids
    }

    #[tokio::test]
    async fn giving_up_on_a_reconnect_fails_what_dispatch_has_not_taken_unless_it_was_announced() {
        let session = crate::session::tests::session();
        let mut events = session.events.subscribe();
        session.start_login().finished(false);

        // Dispatch holds the `ready` (taken, not applied) as the
        // connection is given up on: applying it announces nothing, and
        // the message behind it waits for the next session's `ready`.
        let login = session.start_login();
        let two = login.connection;
        login.finished(true);
        session.queue.offer(ready(two), two);
        session.queue.offer(message("m2"), two);
        assert_eq!(session.queue.next().await.map(|_| ()), Some(()));
        assert!(session.give_up(two), "never announced: a failed attempt");
        assert!(!session.announce_reconnected(two), "nothing owed");
        assert!(taken(&session).await.is_empty(), "m2 waits");

        // Announced before it ended: a session, whose pushes stay queued.
        let login = session.start_login();
        let three = login.connection;
        login.finished(true);
        session.queue.offer(ready(three), three);
        assert_eq!(taken(&session).await, ["ready 3", "m2"]);
        assert!(session.announce_reconnected(three));
        session.queue.offer(message("m3"), three);
        assert!(!session.give_up(three), "announced: a session");
        assert_eq!(taken(&session).await, ["m3"]);
        assert_eq!(reconnected(&mut events), 1);
    }

    #[test]
    fn a_ready_announces_its_own_reconnect_once_and_only_once_its_login_has_finished() {
        let session = crate::session::tests::session();
        let mut events = session.events.subscribe();
        let first = session.start_login();
        let one = first.connection;
        first.finished(false);
        assert!(
            !session.announce_reconnected(one),
            "the first login owes Ready"
        );

        let failed = session.start_login();
        let two = failed.connection;
        drop(failed);
        assert!(!session.announce_reconnected(two));

        let login = session.start_login();
        let three = login.connection;
        login.finished(true);
        assert!(!session.announce_reconnected(two), "not for an earlier one");
        assert_eq!(reconnected(&mut events), 0);
        assert!(session.announce_reconnected(three));
        assert!(session.announce_reconnected(three), "sent before");
        assert_eq!(reconnected(&mut events), 1, "once");
        assert!(!session.give_up(three), "it was a session");

        let login = session.start_login();
        let four = login.connection;
        login.finished(true);
        assert!(
            session.give_up(four),
            "ended before its ready: a failed attempt"
        );
        assert!(!session.announce_reconnected(four), "nothing owed after");
        session.shutdown();
        let login = session.start_login();
        let five = login.connection;
        login.finished(true);
        assert!(
            !session.announce_reconnected(five),
            "nothing after shutdown"
        );
        assert_eq!(reconnected(&mut events), 0);
    }
}
