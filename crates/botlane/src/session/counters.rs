//! The session's live counters, read by `Client::stats`.

use std::sync::atomic::{AtomicU64, Ordering};

/// Connection attempts, sessions and frames, counted as they happen.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) connect_attempts: AtomicU64,
    pub(crate) sessions: AtomicU64,
    pub(crate) frames_received: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
