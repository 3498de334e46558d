//! A count that a waiter can follow without polling.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

#[derive(Default)]
pub(crate) struct Progress {
    count: AtomicU64,
    changed: Notify,
}

impl Progress {
    pub(crate) fn bump(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
    }

    pub(crate) fn get(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Waits until the count reaches `target`; panics after `limit` (a lost
    /// push would otherwise hang the bench).
    pub(crate) async fn wait_for(&self, target: u64, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while self.get() < target {
            assert!(
                tokio::time::Instant::now() < deadline,
                "stuck at {} of {target} within {limit:?}",
                self.get()
            );
            let _ = tokio::time::timeout(Duration::from_millis(50), self.changed.notified()).await;
        }
    }
}
