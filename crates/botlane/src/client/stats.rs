//! A snapshot of one client's transport and dispatch counters, for
//! operators and tests.

/// A snapshot of a client's transport and dispatch counters ([`Client::stats`](crate::Client::stats)).
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
    /// Frames received from the service, of every kind: counted each time
    /// reading pauses (frames that come back to back count together).
    pub frames_received: u64,
    /// Message pushes dropped because the push queue was full (by count or
    /// by bytes: `push_queue_capacity`, `push_queue_bytes`), or held for a
    /// session that will not come (a reconnect's login refused for good).
    pub pushes_dropped: u64,
    /// Message pushes waiting for dispatch now.
    pub push_queue_len: usize,
    /// The most message pushes that ever waited at once.
    pub push_queue_peak: usize,
    /// Command handlers running now.
    pub handlers_running: usize,
    /// Messages read with the client's `command_prefix` because the
    /// [dynamic prefix](crate::ClientOptions::dynamic_prefix) gave a prefix
    /// that breaks its rules, or panicked.
    pub dynamic_prefixes_refused: u64,
    /// Message pushes dropped because the bot holds no key for their
    /// channel (each is also a rate-limited warning).
    pub messages_without_key: u64,
    /// Occurrences of rate-limited warnings that wrote no line of their
    /// own, every kind together: a kind writes one line per 10 s with the
    /// count it swallowed since its last, and the client writes what is
    /// still untold at shutdown.
    pub warnings_swallowed: u64,
}
