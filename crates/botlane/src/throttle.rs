//! Rate-limited warnings: a hostile or broken service can make the same
//! warning fire a million times (a push flood for a channel without a key);
//! each kind writes at most one line per interval, with the count of the
//! occurrences it swallowed since the last line.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// At most one line per kind of warning in this interval.
pub(crate) const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// One kind of warning.
#[derive(Debug)]
pub(crate) struct Throttle {
    interval: Duration,
    /// When the last line was written, and how many were swallowed since.
    state: Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    pub(crate) const fn new(interval: Duration) -> Self {
        Self {
            interval,
            state: Mutex::new((None, 0)),
        }
    }

    /// `Some(swallowed)` when a line may be written now (with how many
    /// occurrences were swallowed since the last one), `None` otherwise.
    pub(crate) fn allow(&self) -> Option<u64> {
        let mut state = crate::sync::lock(&self.state);
        let now = Instant::now();
        match state.0 {
            Some(last) if now.duration_since(last) < self.interval => {
                state.1 += 1;
                None
            }
            _ => {
                let swallowed = state.1;
                *state = (Some(now), 0);
                Some(swallowed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn one_line_per_interval_with_the_swallowed_count() {
        let t = Throttle::new(Duration::from_secs(10));
        assert_eq!(t.allow(), Some(0));
        for _ in 0..999 {
            assert_eq!(t.allow(), None);
        }
        tokio::time::advance(Duration::from_secs(9)).await;
        assert_eq!(t.allow(), None);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(t.allow(), Some(1000));
        assert_eq!(t.allow(), None);
    }
}
