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
    runtime: Handle,
    state: Mutex<State>,
    /// Held for a whole write, so that writes happen one at a time, each
    /// with the contents as of its start.
    writer: tokio::sync::Mutex<()>,
    write: Arc<WriteFn>,
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
        Ok(Self::start(
            path,
            identity,
            channels,
            options,
            runtime,
            Arc::new(file::replace),
        ))
    }

    fn start(
        path: PathBuf,
        identity: IdentityKeyPair,
        channels: BTreeMap<String, ChannelKey>,
        options: SaverOptions,
        runtime: Handle,
        write: Arc<WriteFn>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                path,
                identity: Arc::new(identity),
                options,
                runtime,
                state: Mutex::new(State {
                    channels,
                    changed: 0,
                    saved: 0,
                    scheduled: false,
                }),
                writer: tokio::sync::Mutex::new(()),
                write,
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
    pub fn insert(&self, channel_id: impl Into<String>, key: ChannelKey) -> Result<(), KeystoreError> {
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
        if !state.scheduled {
            state.scheduled = true;
            self.shared
                .runtime
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
    let _turn = shared.writer.lock().await;
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
    let (path, identity, write) = (
        shared.path.clone(),
        shared.identity.clone(),
        shared.write.clone(),
    );
    let written = shared
        .runtime
        .spawn_blocking(move || write(&path, &format::encode(&identity, &snapshot)))
        .await
        .map_err(|_| KeystoreError::Interrupted {
            path: shared.path.clone(),
            action: "save",
        })?;
    written?;
    shared.writes.fetch_add(1, Ordering::Relaxed);
    let mut state = lock(&shared.state);
    state.saved = state.saved.max(generation);
    Ok(())
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
