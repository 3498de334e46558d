//! How a command's handler has behaved, which decides where dispatch
//! starts its next invocation.
//!
//! Dispatch may poll an invocation once where it stands (on the connection
//! task, or the dispatch task) before it spawns anything: a handler that
//! finishes at once (counts, updates state, answers nothing) then costs no
//! task, no hand-over to another worker and no wake-up; one that waits is
//! spawned from where it stopped. That first poll holds up the reading of
//! the socket for as long as it runs, and a handler that waits would pay a
//! poll and a box for nothing; so a command whose handler waited, or ran
//! past `IN_PLACE_BUDGET`, is spawned at once for its next
//! `RECHECK_EVERY - 1` invocations, and polled in place again on the one
//! after, in case it has changed.
//!
//! One per registered command, in the registry: it is read and written
//! only by the client's dispatch, one push at a time, so the atomic is
//! there only because registry snapshots are shared, and a load and a
//! store suffice.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The longest a handler's first poll may run where dispatch stands and
/// still be polled there next time: about what tokio advises as the most
/// a task should run between two awaits.
const IN_PLACE_BUDGET: Duration = Duration::from_micros(50);

/// After a handler waited or ran long, one invocation in this many is
/// polled in place again.
const RECHECK_EVERY: u32 = 32;

/// The pace of one command's handler.
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// How many coming invocations to spawn without a poll in place.
    spawn_next: AtomicU32,
}

impl Clone for Pace {
    fn clone(&self) -> Self {
        Self {
            spawn_next: AtomicU32::new(self.spawn_next.load(Ordering::Relaxed)),
        }
    }
}

impl Pace {
    /// Whether the next invocation is polled in place first (the handler
    /// has finished at once so far, or it is time to look again). Counts
    /// the invocation.
    pub(crate) fn poll_in_place(&self) -> bool {
        let left = self.spawn_next.load(Ordering::Relaxed);
        if left == 0 {
            return true;
        }
        self.spawn_next.store(left - 1, Ordering::Relaxed);
        false
    }

    /// Records how a poll in place went: whether the invocation was left
    /// waiting, and how long the poll ran.
    pub(crate) fn record(&self, waited: bool, ran: Duration) {
        if waited || ran > IN_PLACE_BUDGET {
            self.spawn_next.store(RECHECK_EVERY - 1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_place_run(pace: &Pace, n: u32) -> Vec<bool> {
        (0..n).map(|_| pace.poll_in_place()).collect()
    }

    #[test]
    fn a_handler_that_finishes_at_once_stays_in_place() {
        let pace = Pace::default();
        for _ in 0..100 {
            assert!(pace.poll_in_place());
            pace.record(false, Duration::from_micros(3));
        }
    }

    #[test]
    fn a_handler_that_waits_is_spawned_and_looked_at_again_later() {
        let pace = Pace::default();
        assert!(pace.poll_in_place());
        pace.record(true, Duration::from_micros(1));
        let next = in_place_run(&pace, RECHECK_EVERY);
        assert_eq!(next.iter().filter(|&&b| b).count(), 1);
        assert_eq!(
            next.last(),
            Some(&true),
            "the last of the round looks again"
        );
        // It finished at once this time: in place from now on.
        pace.record(false, Duration::from_micros(1));
        assert!(in_place_run(&pace, 10).into_iter().all(|b| b));
    }

    #[test]
    fn a_handler_that_runs_past_the_budget_is_spawned_even_if_it_finished() {
        let pace = Pace::default();
        assert!(pace.poll_in_place());
        pace.record(false, IN_PLACE_BUDGET);
        assert!(pace.poll_in_place(), "the budget itself is allowed");
        pace.record(false, IN_PLACE_BUDGET + Duration::from_micros(1));
        assert!(!pace.poll_in_place());
    }

    #[test]
    fn a_clone_starts_where_the_original_stands() {
        let pace = Pace::default();
        pace.record(true, Duration::ZERO);
        let copy = pace.clone();
        assert!(!copy.poll_in_place());
        assert_eq!(in_place_run(&copy, RECHECK_EVERY - 1).last(), Some(&true));
    }
}
