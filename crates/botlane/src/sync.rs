//! Lock helpers and the shutdown signal, shared by every part of the
//! client; below all of them, so that none needs another to lock.
//!
//! A poisoned lock is recovered: every critical section in botlane leaves
//! its data consistent before anything that could panic.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::watch;

/// Locks a mutex, recovering from poisoning.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Read-locks, recovering from poisoning.
pub(crate) fn read_lock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// Write-locks, recovering from poisoning.
pub(crate) fn write_lock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// A copy of the value behind a read lock.
pub(crate) fn read<T: Clone>(l: &RwLock<T>) -> T {
    read_lock(l).clone()
}

/// Replaces the value behind a write lock.
pub(crate) fn write<T>(l: &RwLock<T>, value: T) {
    *write_lock(l) = value;
}

/// Resolves once `shutdown` is set (or its sender is gone), holding no
/// borrow of the channel across an await.
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|down| *down).await;
}
