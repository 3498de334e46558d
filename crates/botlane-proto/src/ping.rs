//! How many WebSocket pings one end of the realtime wire answers.
//!
//! The WebSocket layer answers every ping with a pong on its own, and
//! queues that pong whether or not the peer reads: a peer that sends pings
//! as fast as its socket takes them and never reads would grow the queue
//! of pongs without end. Both ends therefore count the pings they receive
//! and close the connection with **1008** when a peer sends more than
//! [`MAX_PINGS_PER_WINDOW`] within [`PING_WINDOW`] (a service or client
//! that keeps a connection alive pings once every several seconds).
//!
//! ```
//! use std::time::{Duration, Instant};
//! use botlane_proto::ping::{PingBudget, MAX_PINGS_PER_WINDOW, PING_WINDOW};
//!
//! let start = Instant::now();
//! let mut budget = PingBudget::new();
//! for _ in 0..MAX_PINGS_PER_WINDOW {
//!     assert!(budget.ping(start).is_ok());
//! }
//! let flood = budget.ping(start + Duration::from_secs(1)).unwrap_err();
//! assert_eq!(flood.to_string(), "more than 32 pings within 10 s");
//! // A new window starts with the first ping after the last one ended.
//! assert!(budget.ping(start + PING_WINDOW).is_ok());
//! ```

use std::time::{Duration, Instant};

/// Pings answered within one [`PING_WINDOW`]; one more closes the
/// connection with 1008.
pub const MAX_PINGS_PER_WINDOW: u32 = 32;

/// The window [`MAX_PINGS_PER_WINDOW`] counts in. It starts at the first
/// ping after the previous window ended (fixed windows, not a sliding one:
/// at most twice the cap can arrive within one window's length across the
/// boundary of two).
pub const PING_WINDOW: Duration = Duration::from_secs(10);

/// Counts the pings of one connection against [`MAX_PINGS_PER_WINDOW`].
#[derive(Debug, Clone, Default)]
pub struct PingBudget {
    /// The current window's start and the pings counted in it.
    window: Option<(Instant, u32)>,
}

impl PingBudget {
    /// A budget with no ping counted.
    #[must_use]
    pub const fn new() -> Self {
        Self { window: None }
    }

    /// Counts a ping received at `now`.
    ///
    /// # Errors
    ///
    /// [`PingFlood`] when this ping is over the budget of its window; the
    /// connection should be closed with 1008 and its `Display` as the
    /// reason. Every later ping of the same window is over it too.
    pub fn ping(&mut self, now: Instant) -> Result<(), PingFlood> {
        match &mut self.window {
            Some((start, count)) if now.saturating_duration_since(*start) < PING_WINDOW => {
                *count = count.saturating_add(1);
                if *count > MAX_PINGS_PER_WINDOW {
                    return Err(PingFlood);
                }
            }
            window => *window = Some((now, 1)),
        }
        Ok(())
    }
}

/// A peer sent more than [`MAX_PINGS_PER_WINDOW`] pings within
/// [`PING_WINDOW`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingFlood;

impl std::fmt::Display for PingFlood {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than {MAX_PINGS_PER_WINDOW} pings within {} s",
            PING_WINDOW.as_secs()
        )
    }
}

impl std::error::Error for PingFlood {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_per_window_and_a_flood_stays_refused_until_it_ends() {
        let start = Instant::now();
        let mut budget = PingBudget::new();
        for i in 0..MAX_PINGS_PER_WINDOW {
            let at = start + Duration::from_millis(u64::from(i));
            assert_eq!(budget.ping(at), Ok(()), "ping {i}");
        }
        let late = start + PING_WINDOW - Duration::from_millis(1);
        assert_eq!(budget.ping(late), Err(PingFlood));
        assert_eq!(budget.ping(late), Err(PingFlood));
        // The window ended: the count starts again from this ping.
        let next = start + PING_WINDOW;
        for i in 0..MAX_PINGS_PER_WINDOW {
            assert_eq!(budget.ping(next), Ok(()), "ping {i} of the next window");
        }
        assert_eq!(budget.ping(next), Err(PingFlood));
    }

    #[test]
    fn a_ping_a_second_never_runs_out() {
        let start = Instant::now();
        let mut budget = PingBudget::new();
        for s in 0..1_000 {
            assert_eq!(budget.ping(start + Duration::from_secs(s)), Ok(()));
        }
    }

    #[test]
    fn a_clock_that_goes_back_counts_in_the_current_window() {
        let start = Instant::now() + Duration::from_secs(60);
        let mut budget = PingBudget::new();
        assert_eq!(budget.ping(start), Ok(()));
        let earlier = start - Duration::from_secs(30);
        for _ in 1..MAX_PINGS_PER_WINDOW {
            assert_eq!(budget.ping(earlier), Ok(()));
        }
        assert_eq!(budget.ping(earlier), Err(PingFlood));
    }
}
