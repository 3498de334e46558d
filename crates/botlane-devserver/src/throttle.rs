//! Rate-limited warnings: a repeated event is counted, and logged at most
//! once per interval with the count since the last line.

use std::time::{Duration, Instant};

/// How often a repeated warning may be logged.
pub(crate) const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// One kind of repeated event.
pub(crate) struct Throttle {
    last: Option<Instant>,
    /// Events since the last line, that line's included.
    pending: u64,
}

impl Throttle {
    pub(crate) const fn new() -> Self {
        Self {
            last: None,
            pending: 0,
        }
    }

    /// Counts an event; returns how many events the line to log now covers,
    /// or `None` when this interval's line was already logged.
    pub(crate) fn hit(&mut self, now: Instant) -> Option<u64> {
        self.pending += 1;
        if self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < WARN_INTERVAL)
        {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_interval_with_the_count() {
        let start = Instant::now();
        let mut throttle = Throttle::new();
        assert_eq!(throttle.hit(start), Some(1));
        for _ in 0..5 {
            assert_eq!(throttle.hit(start + Duration::from_secs(1)), None);
        }
        assert_eq!(throttle.hit(start + WARN_INTERVAL), Some(6));
    }
}
