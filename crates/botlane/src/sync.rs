//! Lock helpers and the shutdown signal, shared by every part of the
//! client; below all of them, so that none needs another to lock.
//!
//! A poisoned lock is recovered: every critical section in botlane leaves
//! its data consistent before anything that could panic.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

/// Locks a mutex, recovering from poisoning.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks a mutex for a section after which `then` runs on the data, the
/// lock still held: what readers that take no lock are told of a change
/// (an atomic set from the data), told at every exit of the section.
pub(crate) fn lock_then<T, F: FnMut(&T)>(m: &Mutex<T>, then: F) -> Locked<'_, T, F> {
    Locked {
        guard: lock(m),
        then,
    }
}

/// A [`lock_then`] guard.
pub(crate) struct Locked<'a, T, F: FnMut(&T)> {
    guard: MutexGuard<'a, T>,
    then: F,
}

impl<T, F: FnMut(&T)> Deref for Locked<'_, T, F> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T, F: FnMut(&T)> DerefMut for Locked<'_, T, F> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T, F: FnMut(&T)> Drop for Locked<'_, T, F> {
    fn drop(&mut self) {
        // Before the guard's own drop: the lock is still held.
        (self.then)(&self.guard);
    }
}

/// Resolves once `shutdown` is set (or its sender is gone), holding no
/// borrow of the channel across an await.
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|down| *down).await;
}

/// A flag taken for an operation under way (a login): given back on drop
/// unless the operation [`keep`](Self::keep)s it, so that one that fails,
/// or whose future is dropped (a timeout, a `select!`), leaves the flag
/// for the next attempt.
pub(crate) struct Claim<'a> {
    flag: &'a AtomicBool,
    kept: bool,
}

impl<'a> Claim<'a> {
    /// Takes `flag`, or `None` when it is already taken.
    pub(crate) fn take(flag: &'a AtomicBool) -> Option<Self> {
        // Built only when taken: a claim dropped unkept gives the flag back.
        (!flag.swap(true, Ordering::SeqCst)).then(|| Self { flag, kept: false })
    }

    /// Keeps the flag taken for good.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.flag.store(false, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_given_back_unless_kept_and_a_refused_one_gives_nothing_back() {
        let flag = AtomicBool::new(false);
        let first = Claim::take(&flag);
        assert!(first.is_some());
        assert!(Claim::take(&flag).is_none(), "taken");
        assert!(
            flag.load(Ordering::SeqCst),
            "a refused take leaves it taken"
        );
        drop(first);
        assert!(
            !flag.load(Ordering::SeqCst),
            "given back when dropped unkept"
        );
        if let Some(claim) = Claim::take(&flag) {
            claim.keep();
        }
        assert!(Claim::take(&flag).is_none(), "kept for good");
    }
}
