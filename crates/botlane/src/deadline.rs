//! "Never" for the deadlines botlane computes from durations the
//! application chooses: `Duration::MAX` (or anything near it) for a
//! heartbeat interval, a cooldown or an answer interval means "not within
//! the life of the process", and must not overflow `Instant + Duration`.

use std::time::{Duration, Instant};

/// About 30 years: as far as tokio's own timers put a wait of
/// `Duration::MAX`, and the longest interval botlane computes with.
pub(crate) const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `now + wait`, or [`NEVER`] from `now` when that overflows (or `now`
/// itself on a clock that cannot go even that far).
pub(crate) fn after(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .or_else(|| now.checked_add(NEVER))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overflowing_wait_is_never_and_a_short_one_exact() {
        let now = Instant::now();
        assert_eq!(
            after(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        assert_eq!(after(now, Duration::MAX), now + NEVER);
    }
}
