//! A count that a waiter can follow without polling.
//!
//! `bump` wakes the waiter only when the count reaches the target it waits
//! for: a wake-up per bump would cost each receiver a futex wake of the
//! thread blocked in the bench (measured at ~9 % of the bot's samples),
//! work of the measuring apparatus rather than of what is measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

pub(crate) struct Progress {
    count: AtomicU64,
    /// What the waiter waits for; `u64::MAX` while nobody waits.
    target: AtomicU64,
    reached: Notify,
}

impl Default for Progress {
    fn default() -> Self {
        Self {
            count: AtomicU64::new(0),
            target: AtomicU64::new(u64::MAX),
            reached: Notify::new(),
        }
    }
}

impl Progress {
    pub(crate) fn bump(&self) {
        let count = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if count >= self.target.load(Ordering::SeqCst) {
            self.reached.notify_one();
        }
    }

    pub(crate) fn get(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Waits until the count reaches `target`; panics after `limit` (a lost
    /// push would otherwise hang the bench). One waiter at a time.
    pub(crate) async fn wait_for(&self, target: u64, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        self.target.store(target, Ordering::SeqCst);
        // The target is stored before the count is read (both SeqCst): a
        // bump that reaches it either is seen here or stores a permit.
        while self.get() < target {
            assert!(
                tokio::time::Instant::now() < deadline,
                "stuck at {} of {target} within {limit:?}",
                self.get()
            );
            let _ = tokio::time::timeout(Duration::from_millis(50), self.reached.notified()).await;
        }
        self.target.store(u64::MAX, Ordering::SeqCst);
    }
}
