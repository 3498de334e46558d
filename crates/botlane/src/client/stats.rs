//! Counters of one client's transport, for operators and tests.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a client's transport counters ([`Client::stats`](crate::Client::stats)).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let client = botlane::Client::new(botlane::ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
/// let stats = client.stats();
/// assert_eq!((stats.pushes_dropped, stats.push_queue_len, stats.handlers_running), (0, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// Connection attempts so far (the first login and every reconnect).
    pub connect_attempts: u64,
    /// Sessions that logged in.
    pub sessions: u64,
    /// Frames received from the service, of every kind.
    pub frames_received: u64,
    /// Message pushes dropped because the push queue was full.
    pub pushes_dropped: u64,
    /// Message pushes waiting for dispatch now.
    pub push_queue_len: usize,
    /// The most message pushes that ever waited at once.
    pub push_queue_peak: usize,
    /// Command handlers running now.
    pub handlers_running: usize,
}

/// The live counters behind [`ClientStats`].
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

    pub(crate) fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
