//! The delay between attempts (a first login's and the reconnects'):
//! jittered exponential backoff that starts over only after a session has
//! stayed up for `reconnect_reset_after`, and a service's `Retry-After`.

use std::time::Duration;

use rand_core::{OsRng, RngCore};

#[derive(Debug)]
pub(crate) struct Backoff {
    initial: Duration,
    max: Duration,
    reset_after: Duration,
    /// The delay the next attempt would use, before jitter.
    next: Duration,
}

impl Backoff {
    pub(crate) fn new(initial: Duration, max: Duration, reset_after: Duration) -> Self {
        Self {
            initial,
            max,
            reset_after,
            next: initial,
        }
    }

    /// Called when a session ends after `uptime`: a session that stayed up
    /// long enough starts the delays over; a short one continues them, so a
    /// service that drops every session right after login is not hammered.
    pub(crate) fn session_ended(&mut self, uptime: Duration) {
        if uptime >= self.reset_after {
            self.next = self.initial;
        }
    }

    /// The delay before the next attempt (jittered); doubles the one after.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let delay = jitter(self.next);
        // Saturating: with delays near `Duration::MAX` doubling overflows.
        self.next = self.next.saturating_mul(2).min(self.max);
        delay
    }

    /// The delay before the next attempt after a failure for which the
    /// service asked to be left alone for `not_before` (its `Retry-After`):
    /// the backoff's, or, when that is later, `not_before` spread over up
    /// to half as long again, so that the bots told the same time do not
    /// all come back at that instant. The backoff grows either way.
    pub(crate) fn after(&mut self, not_before: Option<Duration>) -> Duration {
        let delay = self.next_delay();
        match not_before {
            Some(not_before) if not_before > delay => {
                not_before.saturating_add(up_to(not_before / 2))
            }
            _ => delay,
        }
    }
}

/// A delay drawn uniformly from `[0, d]`.
fn up_to(d: Duration) -> Duration {
    let span = u64::try_from(d.as_micros())
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    Duration::from_micros(OsRng.next_u64() % span)
}

/// A delay drawn uniformly from `[d/2, d]`, so that many bots dropped at
/// once do not come back in lockstep.
fn jitter(d: Duration) -> Duration {
    let half = d / 2;
    let span = u64::try_from(half.as_micros()).unwrap_or(u64::MAX).max(1);
    half + Duration::from_micros(OsRng.next_u64() % span)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

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

    #[test]
    fn a_retry_after_is_never_cut_short_and_is_spread() {
        let mut b = Backoff::new(100 * MS, 1600 * MS, 60_000 * MS);
        let asked = 2000 * MS;
        let delays: Vec<Duration> = (0..50).map(|_| b.after(Some(asked))).collect();
        assert!(
            delays.iter().all(|d| *d >= asked && *d <= asked * 3 / 2),
            "{delays:?}"
        );
        assert!(
            delays.iter().any(|d| *d != delays[0]),
            "spread, not in lockstep: {delays:?}"
        );
        // Shorter than the backoff (grown to its longest by now): the backoff's.
        let d = b.after(Some(MS));
        assert!(d >= 800 * MS && d <= 1600 * MS, "{d:?}");
        assert!(b.after(Some(Duration::MAX)) >= Duration::MAX / 2);
    }

    #[test]
    fn delays_at_the_largest_duration_do_not_overflow() {
        let mut b = Backoff::new(Duration::MAX, Duration::MAX, Duration::MAX);
        for _ in 0..3 {
            assert!(b.next_delay() >= Duration::MAX / 2);
        }
    }

    #[test]
    fn short_sessions_do_not_reset_the_backoff() {
        let mut b = Backoff::new(100 * MS, 1600 * MS, 60_000 * MS);
        let mut ceilings = Vec::new();
        for _ in 0..6 {
            let d = b.next_delay();
            ceilings.push(d);
            // Each attempt logs in and is dropped a moment later.
            b.session_ended(10 * MS);
        }
        let expected = [100, 200, 400, 800, 1600, 1600];
        for (d, ceiling) in ceilings.iter().zip(expected) {
            assert!(
                *d >= ceiling * MS / 2 && *d <= ceiling * MS,
                "{d:?} vs {ceiling} ms"
            );
        }
    }

    #[test]
    fn a_session_that_stayed_up_starts_over() {
        let mut b = Backoff::new(100 * MS, 1600 * MS, 60_000 * MS);
        for _ in 0..4 {
            b.next_delay();
        }
        b.session_ended(60_000 * MS);
        let d = b.next_delay();
        assert!(d <= 100 * MS, "{d:?}");
    }
}
