//! Rate-limited warnings: a hostile or broken service can make the same
//! warning fire a million times (a push flood for a channel without a key);
//! each kind writes at most one line per interval, with the count of the
//! occurrences it swallowed since the last line. What a burst's tail
//! swallowed is not lost when no later line comes: the client writes it at
//! shutdown ([`Throttle::report_swallowed`]), and `ClientStats` counts every
//! occurrence swallowed.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// At most one line per kind of warning in this interval.
pub(crate) const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// One kind of warning.
#[derive(Debug)]
pub(crate) struct Throttle {
    /// The warning, as the line at shutdown names it.
    what: &'static str,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// When the last line was written.
    last: Option<Instant>,
    /// Occurrences swallowed since then.
    pending: u64,
    /// Occurrences swallowed in all.
    total: u64,
}

impl Throttle {
    /// The warning `what`, one line per [`WARN_INTERVAL`].
    pub(crate) const fn new(what: &'static str) -> Self {
        Self {
            what,
            state: Mutex::new(State {
                last: None,
                pending: 0,
                total: 0,
            }),
        }
    }

    /// `Some(swallowed)` when a line may be written now (with how many
    /// occurrences were swallowed since the last one), `None` otherwise.
    pub(crate) fn allow(&self) -> Option<u64> {
        let mut state = crate::sync::lock(&self.state);
        let now = Instant::now();
        match state.last {
            Some(last) if now.duration_since(last) < WARN_INTERVAL => {
                state.pending += 1;
                state.total += 1;
                None
            }
            _ => {
                state.last = Some(now);
                Some(std::mem::take(&mut state.pending))
            }
        }
    }

    /// How many occurrences were swallowed in all (for `ClientStats`).
    pub(crate) fn swallowed(&self) -> u64 {
        crate::sync::lock(&self.state).total
    }

    /// Writes the count swallowed since the last line, if any: at shutdown,
    /// where no later line will come to carry it.
    pub(crate) fn report_swallowed(&self) {
        let swallowed = std::mem::take(&mut crate::sync::lock(&self.state).pending);
        if swallowed > 0 {
            tracing::warn!(
                warning = self.what,
                swallowed,
                "a rate-limited warning was swallowed since its last line"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn one_line_per_interval_with_the_swallowed_count() {
        let t = Throttle::new("a test warning");
        assert_eq!(t.allow(), Some(0));
        for _ in 0..999 {
            assert_eq!(t.allow(), None);
        }
        tokio::time::advance(Duration::from_secs(9)).await;
        assert_eq!(t.allow(), None);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(t.allow(), Some(1000));
        assert_eq!(t.allow(), None);
        assert_eq!(t.swallowed(), 1001);
        // Reported once at shutdown, then nothing is pending; the total stays.
        t.report_swallowed();
        assert_eq!(crate::sync::lock(&t.state).pending, 0);
        assert_eq!(t.swallowed(), 1001);
    }
}
