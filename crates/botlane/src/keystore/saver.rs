//! [`Saver`]: a keystore shared with async code, written off the runtime's
//! workers, with changes coalesced into at most one write per window.
//!
//! The first change after the file was last written starts a timer of
//! `window`; when it fires, everything changed so far goes into one write,
//! done by `spawn_blocking`. A timer is never pushed back by later changes,
//! so a change reaches the disk at most `window` (plus the write itself)
//! after it was made, however busy the stream of changes is. One write runs
//! at a time and each writes the latest contents, so an older snapshot can
//! never overwrite a newer one.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::time::Instant;

use super::error::KeystoreError;
use super::{file, format, Keystore};
use crate::crypto::{ChannelKey, IdentityKeyPair};

/// The longest channel id a [`Saver`] accepts, in bytes.
pub const MAX_CHANNEL_ID_BYTES: usize = 256;

/// The longest coalescing window: the service delivers each channel key
/// once, so a key must not wait long in memory alone.
const MAX_WINDOW: Duration = Duration::from_secs(1);

/// The highest `max_channel_keys`: with ids of [`MAX_CHANNEL_ID_BYTES`],
/// each escaped to at most six bytes per byte, the file stays under
/// [`MAX_KEYSTORE_BYTES`](super::MAX_KEYSTORE_BYTES).
const MAX_CHANNEL_KEYS_LIMIT: usize = 40_000;

/// How long a failed background write waits before it is tried again.
const RETRY_DELAY: Duration = Duration::from_secs(1);

/// At most one warning line per this interval about failed writes.
const WARN_INTERVAL: Duration = Duration::from_secs(60);

/// How a [`Saver`] batches writes and how many keys it holds.
///
/// ```
/// use std::time::Duration;
/// use botlane::keystore::SaverOptions;
///
/// let options = SaverOptions::default()
///     .window(Duration::from_millis(100))
///     .max_channel_keys(500);
/// assert_eq!(options.window, Duration::from_millis(100));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SaverOptions {
    /// The longest a change waits in memory before the write that carries
    /// it starts; all changes made meanwhile share that write. At most 1 s;
    /// 500 ms by default; zero writes after every change (changes made
    /// during a write still share the next one).
    pub window: Duration,
    /// The most channel keys the keystore holds; the key of one more
    /// channel is refused with [`KeystoreError::TooManyChannelKeys`].
    /// Between 1 and 40,000; 10,000 by default.
    pub max_channel_keys: usize,
}

impl Default for SaverOptions {
    fn default() -> Self {
        Self {
            window: Duration::from_millis(500),
            max_channel_keys: 10_000,
        }
    }
}

impl SaverOptions {
    /// Sets `window`.
    #[must_use]
    pub fn window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// Sets `max_channel_keys`.
    #[must_use]
    pub fn max_channel_keys(mut self, max: usize) -> Self {
        self.max_channel_keys = max;
        self
    }

    fn check(&self, path: &Path) -> Result<(), KeystoreError> {
        let invalid = |option, problem: String| KeystoreError::InvalidOption {
            path: path.to_path_buf(),
            option,
            problem,
        };
        if self.window > MAX_WINDOW {
            return Err(invalid(
                "window",
                format!("is {:?}; it must be at most 1s", self.window),
            ));
        }
        if !(1..=MAX_CHANNEL_KEYS_LIMIT).contains(&self.max_channel_keys) {
            return Err(invalid(
                "max_channel_keys",
                format!(
                    "is {}; it must be between 1 and {MAX_CHANNEL_KEYS_LIMIT}",
                    self.max_channel_keys
                ),
            ));
        }
        Ok(())
    }
}

/// Writes the encoded file; the real one is [`file::replace`].
type WriteFn = dyn Fn(&Path, &[u8]) -> Result<(), KeystoreError> + Send + Sync;

/// A keystore shared by the tasks of a bot: reads from memory, writes to
/// the file from the blocking pool, with all changes made within
/// [`SaverOptions::window`] coalesced into one write.
///
/// Clones share one keystore. Call [`Saver::flush`] before the process
/// exits: a change is otherwise written only when its window ends. When
/// every clone is dropped, pending changes still get their write (if the
/// runtime is still running). A failed background write keeps the keys in
/// memory, logs a warning (at most one line a minute, with a count) and is
/// retried every second while a clone exists; [`Saver::flush`] returns the
/// error.
///
/// ```
/// use botlane::crypto::ChannelKey;
/// use botlane::keystore::{Keystore, Saver, SaverOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("keystore.json");
/// let saver = Saver::open(&path, SaverOptions::default()).await?;
/// saver.insert("c1", ChannelKey::generate()?)?;
/// saver.insert("c2", ChannelKey::generate()?)?;
/// saver.retain(["c2", "c3"]);
/// saver.flush().await?;
/// assert_eq!(saver.writes(), 1);
///
/// let on_disk = Keystore::open_or_create(&path)?;
/// assert_eq!(on_disk.channel_ids().collect::<Vec<_>>(), ["c2"]);
/// assert_eq!(on_disk.identity().public_key(), saver.identity().public_key());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Saver {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    identity: Arc<IdentityKeyPair>,
    options: SaverOptions,
    /// Where changes are written; `None` for a keystore in memory only.
    file: Option<FileSink>,
    state: Mutex<State>,
    /// Held for a whole write, so that writes happen one at a time, each
    /// with the contents as of its start. The write itself holds it, not
    /// the future that waits for the write.
    writer: Arc<tokio::sync::Mutex<()>>,
    writes: AtomicU64,
    warnings: Mutex<WarnLimit>,
}

struct State {
    channels: BTreeMap<String, ChannelKey>,
    /// Counts changes; `saved` is its value as of the last good write.
    changed: u64,
    saved: u64,
    /// A timer task exists that will write (or is retrying a write).
    scheduled: bool,
}

#[derive(Default)]
struct WarnLimit {
    last: Option<Instant>,
    suppressed: u64,
}

/// How a keystore backed by a file writes it: in the runtime's blocking
/// pool, with `write`.
struct FileSink {
    runtime: Handle,
    write: Arc<WriteFn>,
}

/// What [`Saver::path`] returns for a keystore held in memory only (and
/// what its errors name).
pub const IN_MEMORY_PATH: &str = "(in memory)";

/// Who asks for a write: the timer task owns `State::scheduled`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Caller {
    Timer,
    Flush,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data stays consistent across a panic: every critical
    // section is a few field updates.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Saver {
    /// Opens (or creates) the keystore at `path` in the blocking pool, as
    /// [`Keystore::open_or_create`] does, and shares it.
    ///
    /// Fails with [`KeystoreError::InvalidOption`] when an option is out of
    /// range and [`KeystoreError::NoRuntime`] outside a Tokio runtime.
    pub async fn open(
        path: impl Into<PathBuf>,
        options: SaverOptions,
    ) -> Result<Self, KeystoreError> {
        let path = path.into();
        options.check(&path)?;
        let Ok(runtime) = Handle::try_current() else {
            return Err(KeystoreError::NoRuntime { path });
        };
        let opening = path.clone();
        let store = runtime
            .spawn_blocking(move || Keystore::open_or_create(opening))
            .await
            .map_err(|_| KeystoreError::Interrupted {
                path,
                action: "open",
            })??;
        let (path, identity, channels) = store.into_parts();
        let file = FileSink {
            runtime,
            write: Arc::new(file::replace),
        };
        Ok(Self::start(path, identity, channels, options, Some(file)))
    }

    /// A keystore held in memory only, with a new identity: nothing is read
    /// or written, so it costs no file I/O at all, for hosting platforms
    /// that run many bots and keep no per-bot files. The trade-off: a
    /// restart loses the identity and every channel key, so the bot comes
    /// back as a new identity and each channel's key must be shared with it
    /// again. [`path`](Self::path) is [`IN_MEMORY_PATH`], [`writes`](Self::writes)
    /// stays 0 and [`flush`](Self::flush) returns at once.
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    /// use botlane::keystore::{Saver, SaverOptions, IN_MEMORY_PATH};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let saver = Saver::in_memory(SaverOptions::default())?;
    /// saver.insert("c1", ChannelKey::generate()?)?;
    /// saver.flush().await?;
    /// assert_eq!((saver.len(), saver.writes()), (1, 0));
    /// assert_eq!(saver.path().to_str(), Some(IN_MEMORY_PATH));
    /// # Ok(()) }
    /// ```
    pub fn in_memory(options: SaverOptions) -> Result<Self, KeystoreError> {
        let path = PathBuf::from(IN_MEMORY_PATH);
        options.check(&path)?;
        let identity = IdentityKeyPair::generate().map_err(|error| KeystoreError::Crypto {
            path: path.clone(),
            error,
        })?;
        Ok(Self::start(path, identity, BTreeMap::new(), options, None))
    }

    fn start(
        path: PathBuf,
        identity: IdentityKeyPair,
        channels: BTreeMap<String, ChannelKey>,
        options: SaverOptions,
        file: Option<FileSink>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                path,
                identity: Arc::new(identity),
                options,
                file,
                state: Mutex::new(State {
                    channels,
                    changed: 0,
                    saved: 0,
                    scheduled: false,
                }),
                writer: Arc::new(tokio::sync::Mutex::new(())),
                writes: AtomicU64::new(0),
                warnings: Mutex::new(WarnLimit::default()),
            }),
        }
    }

    /// The keystore file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The bot's identity key pair.
    pub fn identity(&self) -> &IdentityKeyPair {
        &self.shared.identity
    }

    /// The key of `channel_id`, if the bot has it.
    pub fn channel_key(&self, channel_id: &str) -> Option<ChannelKey> {
        lock(&self.shared.state).channels.get(channel_id).cloned()
    }

    /// Every channel key the bot holds, by channel id in sorted order: a
    /// snapshot, for a session to load at start.
    pub fn channel_keys(&self) -> Vec<(String, ChannelKey)> {
        lock(&self.shared.state)
            .channels
            .iter()
            .map(|(id, key)| (id.clone(), key.clone()))
            .collect()
    }

    /// The ids of the channels whose keys the bot holds, in sorted order.
    pub fn channel_ids(&self) -> Vec<String> {
        lock(&self.shared.state).channels.keys().cloned().collect()
    }

    /// How many channel keys the bot holds.
    pub fn len(&self) -> usize {
        lock(&self.shared.state).channels.len()
    }

    /// Whether the bot holds no channel key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records the key of `channel_id` (replacing the one it had) and
    /// schedules a write.
    ///
    /// Refuses, changing nothing, an id over [`MAX_CHANNEL_ID_BYTES`] and
    /// the key of a new channel when the keystore already holds
    /// [`SaverOptions::max_channel_keys`] keys. A key equal to the one held
    /// changes nothing and causes no write.
    pub fn insert(
        &self,
        channel_id: impl Into<String>,
        key: ChannelKey,
    ) -> Result<(), KeystoreError> {
        let channel_id = channel_id.into();
        if channel_id.len() > MAX_CHANNEL_ID_BYTES {
            return Err(KeystoreError::ChannelIdTooLong {
                path: self.shared.path.clone(),
                len: channel_id.len(),
                limit: MAX_CHANNEL_ID_BYTES,
            });
        }
        let mut state = lock(&self.shared.state);
        match state.channels.get(&channel_id) {
            Some(held) if held.expose_bytes() == key.expose_bytes() => return Ok(()),
            Some(_) => {}
            None if state.channels.len() >= self.shared.options.max_channel_keys => {
                return Err(KeystoreError::TooManyChannelKeys {
                    path: self.shared.path.clone(),
                    cap: self.shared.options.max_channel_keys,
                });
            }
            None => {}
        }
        state.channels.insert(channel_id, key);
        self.changed(&mut state);
        Ok(())
    }

    /// Forgets the key of `channel_id` and schedules a write; `false` when
    /// there was none.
    pub fn remove(&self, channel_id: &str) -> bool {
        let mut state = lock(&self.shared.state);
        let removed = state.channels.remove(channel_id).is_some();
        if removed {
            self.changed(&mut state);
        }
        removed
    }

    /// Keeps only the keys of `channel_ids` (for instance the channels a
    /// new `ready` lists), schedules a write if any key went, and returns
    /// how many did.
    pub fn retain<I>(&self, channel_ids: I) -> usize
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let keep: Vec<I::Item> = channel_ids.into_iter().collect();
        let keep: HashSet<&str> = keep.iter().map(AsRef::as_ref).collect();
        let mut state = lock(&self.shared.state);
        let before = state.channels.len();
        state.channels.retain(|id, _| keep.contains(id.as_str()));
        let removed = before - state.channels.len();
        if removed > 0 {
            self.changed(&mut state);
        }
        removed
    }

    /// Writes every change made so far, now, and waits for the write (or
    /// for the one in progress, then this one). Returns at once when the
    /// file is up to date. Call it on shutdown.
    pub async fn flush(&self) -> Result<(), KeystoreError> {
        write_pending(&self.shared, Caller::Flush).await
    }

    /// How many times the file has been written since [`Saver::open`]: for
    /// tests and metrics (the coalescing makes it far smaller than the
    /// number of changes).
    pub fn writes(&self) -> u64 {
        self.shared.writes.load(Ordering::Relaxed)
    }

    fn changed(&self, state: &mut State) {
        state.changed += 1;
        let Some(file) = &self.shared.file else {
            // In memory only: memory is where it is kept.
            state.saved = state.changed;
            return;
        };
        if !state.scheduled {
            state.scheduled = true;
            file.runtime
                .spawn(timer(self.shared.clone(), self.shared.options.window));
        }
    }
}

impl std::fmt::Debug for Saver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = lock(&self.shared.state);
        f.debug_struct("Saver")
            .field("path", &self.shared.path)
            .field("identity", &self.shared.identity)
            .field("channels", &state.channels.keys().collect::<Vec<_>>())
            .field("pending", &(state.changed != state.saved))
            .finish()
    }
}

/// Waits `delay`, then writes; after a failure, retries every
/// [`RETRY_DELAY`] for as long as a [`Saver`] exists and no newer timer has
/// taken over.
async fn timer(shared: Arc<Shared>, delay: Duration) {
    tokio::time::sleep(delay).await;
    let mut shared = shared;
    loop {
        let Err(error) = write_pending(&shared, Caller::Timer).await else {
            return;
        };
        shared.warn(&error);
        {
            let mut state = lock(&shared.state);
            if state.scheduled || state.changed == state.saved {
                return;
            }
            state.scheduled = true;
        }
        // Without a Saver left, nobody can flush or change anything: the
        // retries stop with the last handle.
        let weak = Arc::downgrade(&shared);
        drop(shared);
        tokio::time::sleep(RETRY_DELAY).await;
        match weak.upgrade() {
            Some(strong) => shared = strong,
            None => return,
        }
    }
}

async fn write_pending(shared: &Arc<Shared>, caller: Caller) -> Result<(), KeystoreError> {
    let Some(file) = &shared.file else {
        return Ok(());
    };
    let turn = Arc::clone(&shared.writer).lock_owned().await;
    let (generation, snapshot) = {
        let mut state = lock(&shared.state);
        if caller == Caller::Timer {
            // Changes from now on are not in this write: they need a timer.
            state.scheduled = false;
        }
        if state.changed == state.saved {
            return Ok(());
        }
        (state.changed, state.channels.clone())
    };
    let (done, write) = (Arc::clone(shared), file.write.clone());
    // The turn and the bookkeeping go with the write into the blocking
    // pool: a flush whose future is dropped (a timeout around it) leaves
    // its write running, and the next write must neither start beside it,
    // where the older snapshot could land last, nor miss that it was made.
    file.runtime
        .spawn_blocking(move || {
            write(&done.path, &format::encode(&done.identity, &snapshot))?;
            done.writes.fetch_add(1, Ordering::Relaxed);
            let mut state = lock(&done.state);
            state.saved = state.saved.max(generation);
            drop(state);
            drop(turn);
            Ok(())
        })
        .await
        .map_err(|_| KeystoreError::Interrupted {
            path: shared.path.clone(),
            action: "save",
        })?
}

impl Shared {
    fn warn(&self, error: &KeystoreError) {
        let mut limit = lock(&self.warnings);
        let now = Instant::now();
        if limit
            .last
            .is_some_and(|last| now.duration_since(last) < WARN_INTERVAL)
        {
            limit.suppressed += 1;
            return;
        }
        tracing::warn!(
            %error,
            suppressed = limit.suppressed,
            "could not save the keystore; its channel keys stay in memory and the write is retried"
        );
        limit.last = Some(now);
        limit.suppressed = 0;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A disk that records how many channel keys each write carried, and
    /// fails while `fail` is set.
    #[derive(Default)]
    struct Disk {
        written: Mutex<Vec<usize>>,
        attempts: AtomicU64,
        fail: AtomicBool,
    }

    impl Disk {
        fn written(&self) -> Vec<usize> {
            lock(&self.written).clone()
        }
    }

    const WINDOW: Duration = Duration::from_millis(500);

    fn saver(options: SaverOptions) -> (Saver, Arc<Disk>) {
        let disk = Arc::new(Disk::default());
        let sink = disk.clone();
        let write = move |path: &Path, bytes: &[u8]| {
            sink.attempts.fetch_add(1, Ordering::SeqCst);
            if sink.fail.load(Ordering::SeqCst) {
                return Err(KeystoreError::Io {
                    path: path.to_path_buf(),
                    action: "write a temporary file for",
                    error: std::io::ErrorKind::StorageFull.into(),
                });
            }
            let contents = format::decode(path, bytes).unwrap();
            lock(&sink.written).push(contents.channels.len());
            Ok(())
        };
        let file = FileSink {
            runtime: Handle::current(),
            write: Arc::new(write),
        };
        let saver = Saver::start(
            PathBuf::from("/k/store.json"),
            IdentityKeyPair::from_secret_bytes([5; 32]),
            BTreeMap::new(),
            options,
            Some(file),
        );
        (saver, disk)
    }

    fn key(n: u8) -> ChannelKey {
        ChannelKey::from_bytes([n; 32])
    }

    #[tokio::test]
    async fn an_in_memory_keystore_keeps_its_keys_and_rules_and_writes_nothing() {
        let saver = Saver::in_memory(SaverOptions::default().max_channel_keys(1)).unwrap();
        saver.insert("c1", key(1)).unwrap();
        let refused = saver.insert("c2", key(2)).unwrap_err().to_string();
        assert!(refused.contains(IN_MEMORY_PATH), "{refused}");
        assert_eq!(saver.channel_ids(), ["c1"]);
        saver.flush().await.unwrap();
        assert_eq!(saver.writes(), 0);
        assert!(!format!("{saver:?}").contains("pending: true"));
        assert_eq!(saver.retain(["c9"]), 1);
        assert!(saver.is_empty());
        let other = Saver::in_memory(SaverOptions::default()).unwrap();
        assert_ne!(
            other.identity().public_key(),
            saver.identity().public_key(),
            "each in-memory keystore has an identity of its own"
        );
        let bad = Saver::in_memory(SaverOptions::default().max_channel_keys(0));
        assert!(bad.is_err());
    }

    /// Lets the timer task and its blocking write finish without moving
    /// the paused clock.
    async fn settle(disk: &Disk, attempts: u64) {
        for _ in 0..10_000 {
            if disk.attempts.load(Ordering::SeqCst) >= attempts {
                break;
            }
            tokio::task::yield_now().await;
            std::thread::sleep(Duration::from_micros(100));
        }
        // One more turn for the task to record the outcome.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn changes_within_a_window_share_one_write() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        for n in 0..100u8 {
            saver.insert(format!("c{n}"), key(n)).unwrap();
        }
        tokio::time::sleep(WINDOW - Duration::from_millis(1)).await;
        assert!(disk.written().is_empty());
        tokio::time::sleep(Duration::from_millis(2)).await;
        settle(&disk, 1).await;
        assert_eq!(disk.written(), [100]);
        assert_eq!(saver.writes(), 1);
        tokio::time::sleep(WINDOW * 4).await;
        assert_eq!(disk.written(), [100], "nothing changed, nothing written");
    }

    #[tokio::test(start_paused = true)]
    async fn later_changes_never_push_the_write_back() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        saver.insert("a", key(1)).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        saver.insert("b", key(2)).unwrap();
        // The write is due 500 ms after the first change, not the last.
        tokio::time::sleep(Duration::from_millis(201)).await;
        settle(&disk, 1).await;
        assert_eq!(disk.written(), [2]);
        saver.insert("c", key(3)).unwrap();
        tokio::time::sleep(WINDOW - Duration::from_millis(1)).await;
        assert_eq!(disk.written(), [2]);
        tokio::time::sleep(Duration::from_millis(2)).await;
        settle(&disk, 2).await;
        assert_eq!(disk.written(), [2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_steady_stream_is_written_once_per_window() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        let start = Instant::now();
        for n in 0..30u8 {
            saver.insert(format!("c{n}"), key(n)).unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            settle(&disk, 0).await;
        }
        tokio::time::sleep(WINDOW).await;
        settle(&disk, 6).await;
        let written = disk.written();
        // 3 s of changes every 100 ms: one write per window, never starved.
        assert_eq!(start.elapsed(), Duration::from_millis(3500));
        assert!((6..=7).contains(&written.len()), "{written:?}");
        assert_eq!(written.last(), Some(&30));
        assert!(written.windows(2).all(|w| w[0] < w[1]), "{written:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn flush_writes_at_once_and_only_when_needed() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        let start = Instant::now();
        saver.flush().await.unwrap();
        assert!(
            disk.written().is_empty(),
            "a clean keystore is not rewritten"
        );
        saver.insert("a", key(1)).unwrap();
        saver.flush().await.unwrap();
        assert_eq!(disk.written(), [1]);
        assert_eq!(start.elapsed(), Duration::ZERO);
        saver.flush().await.unwrap();
        tokio::time::sleep(WINDOW * 2).await;
        settle(&disk, 1).await;
        assert_eq!(disk.written(), [1], "the timer found nothing left to write");
    }

    #[tokio::test(start_paused = true)]
    async fn failed_writes_are_retried_and_flush_reports_them() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        disk.fail.store(true, Ordering::SeqCst);
        saver.insert("a", key(1)).unwrap();
        tokio::time::sleep(WINDOW + Duration::from_millis(1)).await;
        settle(&disk, 1).await;
        assert_eq!(disk.attempts.load(Ordering::SeqCst), 1);
        let err = saver.flush().await.unwrap_err();
        assert!(err.to_string().contains("/k/store.json"), "{err}");
        assert_eq!(saver.channel_key("a").unwrap().expose_bytes(), &[1; 32]);
        // One retry loop, however many changes arrive meanwhile.
        saver.insert("b", key(2)).unwrap();
        saver.insert("c", key(3)).unwrap();
        tokio::time::sleep(RETRY_DELAY).await;
        settle(&disk, 3).await;
        assert_eq!(disk.attempts.load(Ordering::SeqCst), 3);
        disk.fail.store(false, Ordering::SeqCst);
        tokio::time::sleep(RETRY_DELAY).await;
        settle(&disk, 4).await;
        assert_eq!(disk.written(), [3]);
        tokio::time::sleep(RETRY_DELAY * 5).await;
        assert_eq!(
            disk.attempts.load(Ordering::SeqCst),
            4,
            "retries stop once written"
        );
    }

    /// A flush given up on (its future dropped while its write runs) must
    /// not let the next write start beside it: the older snapshot could
    /// then land last. The first write waits until a second one starts
    /// (or 2 s, so that the fixed saver, which never starts one, goes on).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_flush_never_lets_an_older_write_land_last() {
        let written = Arc::new(Mutex::new(Vec::new()));
        let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let gate = Mutex::new(Some((started_tx, release_rx)));
        let release = Mutex::new(Some(release_tx));
        let sink = written.clone();
        let write = move |path: &Path, bytes: &[u8]| {
            let keys = format::decode(path, bytes).unwrap().channels.len();
            let first = lock(&gate).take();
            let second = first.is_none().then(|| lock(&release).take()).flatten();
            if let Some((started, release_rx)) = first {
                started.send(()).unwrap();
                let _ = release_rx.recv_timeout(Duration::from_secs(2));
            } else if let Some(release) = second {
                // The second write records first, then lets the first go.
                lock(&sink).push(keys);
                let _ = release.send(());
                return Ok(());
            }
            lock(&sink).push(keys);
            Ok(())
        };
        let saver = Saver::start(
            PathBuf::from("/k/store.json"),
            IdentityKeyPair::from_secret_bytes([5; 32]),
            BTreeMap::new(),
            SaverOptions::default().window(MAX_WINDOW),
            Some(FileSink {
                runtime: Handle::current(),
                write: Arc::new(write),
            }),
        );
        saver.insert("a", key(1)).unwrap();
        let first = tokio::spawn({
            let saver = saver.clone();
            async move { saver.flush().await }
        });
        tokio::task::spawn_blocking(move || started_rx.recv().unwrap())
            .await
            .unwrap();
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        saver.insert("b", key(2)).unwrap();
        saver.flush().await.unwrap();
        for _ in 0..200 {
            if lock(&written).len() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            *lock(&written),
            [1, 2],
            "writes in the order of their snapshots; the newest last"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_saver_still_writes_its_pending_changes() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        saver.insert("a", key(1)).unwrap();
        drop(saver);
        tokio::time::sleep(WINDOW + Duration::from_millis(1)).await;
        settle(&disk, 1).await;
        assert_eq!(disk.written(), [1]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_key_cap_and_id_limit_refuse_without_changing_anything() {
        let (saver, disk) = saver(SaverOptions::default().max_channel_keys(3));
        for (id, n) in [("a", 1), ("b", 2), ("c", 3)] {
            saver.insert(id, key(n)).unwrap();
        }
        let err = saver.insert("d", key(4)).unwrap_err();
        assert!(
            matches!(err, KeystoreError::TooManyChannelKeys { cap: 3, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("max_channel_keys"), "{err}");
        assert_eq!(saver.channel_ids(), ["a", "b", "c"]);
        // Replacing a held key is not growth.
        saver.insert("a", key(9)).unwrap();
        assert_eq!(saver.channel_key("a").unwrap().expose_bytes(), &[9; 32]);
        assert!(saver.remove("a"));
        assert!(!saver.remove("a"));
        saver.insert("d", key(4)).unwrap();

        let long = "x".repeat(MAX_CHANNEL_ID_BYTES + 1);
        let err = saver.insert(long, key(5)).unwrap_err();
        assert!(
            matches!(err, KeystoreError::ChannelIdTooLong { len: 257, .. }),
            "{err:?}"
        );
        saver.remove("b");
        saver
            .insert("y".repeat(MAX_CHANNEL_ID_BYTES), key(5))
            .unwrap();
        saver.flush().await.unwrap();
        assert_eq!(disk.written(), [3]);
    }

    #[tokio::test(start_paused = true)]
    async fn unchanged_contents_cause_no_write() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        saver.insert("a", key(1)).unwrap();
        saver.flush().await.unwrap();
        saver.insert("a", key(1)).unwrap();
        assert_eq!(saver.retain(["a", "z"]), 0);
        assert!(!saver.remove("z"));
        tokio::time::sleep(WINDOW * 2).await;
        settle(&disk, 1).await;
        assert_eq!(disk.written(), [1]);
    }

    #[tokio::test(start_paused = true)]
    async fn retain_keeps_only_the_listed_channels() {
        let (saver, disk) = saver(SaverOptions::default().window(WINDOW));
        for (id, n) in [("a", 1), ("b", 2), ("c", 3)] {
            saver.insert(id, key(n)).unwrap();
        }
        assert_eq!(
            saver.retain(vec!["c".to_owned(), "a".to_owned(), "q".to_owned()]),
            1
        );
        assert_eq!(saver.channel_ids(), ["a", "c"]);
        let keys = saver.channel_keys();
        assert_eq!(keys.len(), 2);
        assert_eq!(
            (keys[1].0.as_str(), keys[1].1.expose_bytes()),
            ("c", &[3; 32])
        );
        assert_eq!(saver.len(), 2);
        assert_eq!(saver.retain(std::iter::empty::<&str>()), 2);
        assert!(saver.is_empty());
        saver.flush().await.unwrap();
        assert_eq!(disk.written(), [0]);
    }

    #[tokio::test]
    async fn options_out_of_range_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        for (options, expected) in [
            (
                SaverOptions::default().window(Duration::from_millis(1001)),
                "saver option window is 1.001s; it must be at most 1s",
            ),
            (
                SaverOptions::default().max_channel_keys(0),
                "saver option max_channel_keys is 0; it must be between 1 and 40000",
            ),
            (
                SaverOptions::default().max_channel_keys(40_001),
                "max_channel_keys is 40001",
            ),
        ] {
            let err = Saver::open(&path, options).await.unwrap_err();
            assert!(
                matches!(err, KeystoreError::InvalidOption { .. }),
                "{err:?}"
            );
            assert!(err.to_string().contains(expected), "{err}");
        }
        assert!(!path.exists(), "nothing is created with bad options");
        let ok = SaverOptions::default()
            .window(Duration::from_secs(1))
            .max_channel_keys(40_000);
        assert!(Saver::open(&path, ok).await.is_ok());
    }

    #[test]
    fn a_saver_can_be_shared_across_tasks() {
        fn shareable<T: Send + Sync + Clone + 'static>() {}
        shareable::<Saver>();
    }

    #[test]
    fn the_caps_keep_the_file_under_the_read_limit() {
        // Worst case per entry: indentation, quotes, an id escaped at six
        // bytes per byte, `": "`, the base64 key, its quotes, `,\n`.
        let entry = 4 + 2 + 6 * MAX_CHANNEL_ID_BYTES + 4 + 44 + 1 + 2;
        let worst = 512 + MAX_CHANNEL_KEYS_LIMIT * entry;
        assert!(worst as u64 <= super::super::MAX_KEYSTORE_BYTES, "{worst}");
    }
}
