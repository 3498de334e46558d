//! Running the hooks after a command (`Client::after_command`): at the end
//! of the invocation's own future (`run.rs`), after its failure, if any,
//! was reported and its error hook ran, still under its handler permit.
//!
//! Each hook is bounded by the command's timeout (its own, else the
//! client's; with timeouts off, by the default handler timeout), so that a
//! hook that never finishes holds the permit for that long and no longer.
//! A hook that panics is caught: the next hook runs, and dispatch never
//! hears of it.
//!
//! Unset, they cost the hot path one load of a flag ([`AfterState`]): the
//! hook list lives with the client's other hooks, behind an `ArcSwap` that
//! the path of a successful invocation does not otherwise read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;

use super::Runner;
use crate::framework::after::CommandRan;
use crate::throttle::Throttle;

/// Whether hooks after the command are set, and the warnings about them.
pub(crate) struct AfterState {
    /// Set once the first hook is added (hooks are never removed), after
    /// it is in the client's hooks: an invocation that reads `true` (with
    /// `Acquire`) finds it there.
    set: AtomicBool,
    /// How long a hook may run when the command has no timeout.
    fallback: Duration,
    /// The warning of a hook that panicked or ran past its bound: the
    /// application's bug, which only the log can point at.
    trouble: Throttle,
}

impl AfterState {
    /// No hook yet; a hook of a command without a timeout gets `fallback`.
    pub(crate) const fn new(fallback: Duration) -> Self {
        Self {
            set: AtomicBool::new(false),
            fallback,
            trouble: Throttle::new("a hook after the command panicked or ran past its bound"),
        }
    }

    /// The warning of a hook in trouble, for the client's stats and its
    /// line at shutdown.
    pub(crate) fn throttle(&self) -> &Throttle {
        &self.trouble
    }

    /// Says that a hook was added to the client's hooks.
    pub(crate) fn mark_set(&self) {
        self.set.store(true, Ordering::Release);
    }
}

impl<D: Send + Sync + 'static> Runner<D> {
    /// Whether any hook after the command is set: the one check an
    /// invocation pays when none is.
    #[inline]
    pub(super) fn after_set(&self) -> bool {
        self.after.set.load(Ordering::Acquire)
    }

    /// Runs every hook after the command, in the order added, on `ran`;
    /// each for at most `limit` (the command's timeout), else the fallback.
    pub(super) async fn after(self: Arc<Self>, ran: CommandRan<D>, limit: Option<Duration>) {
        let hooks = self.hooks.load_full();
        let bound = limit.unwrap_or(self.after.fallback);
        for hook in &hooks.after {
            // Called inside the guarded future, so that a hook that panics
            // before its first await is caught too.
            let run = std::panic::AssertUnwindSafe(async { hook(ran.clone()).await });
            let trouble = match tokio::time::timeout(bound, run.catch_unwind()).await {
                Ok(Ok(())) => continue,
                // The payload is the application's text, which may quote a
                // user: not logged, like a handler's panic.
                Ok(Err(_payload)) => "panicked",
                Err(_elapsed) => "ran past its bound (the command's timeout) and was dropped",
            };
            if let Some(swallowed) = self.after.trouble.allow() {
                tracing::warn!(
                    command = %ran.command,
                    swallowed,
                    "a hook after the command {trouble}; dispatch and the other hooks go on"
                );
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_unset_until_a_hook_is_added() {
        let state = AfterState::new(Duration::from_secs(1));
        assert!(!state.set.load(Ordering::Acquire));
        state.mark_set();
        assert!(state.set.load(Ordering::Acquire));
    }
}
