//! The key store file (`keystore_path`): the bot's X25519 identity and the
//! channel keys it has received.
//!
//! The file is versioned JSON with an integrity tag (format in
//! `docs/crypto.md` §4), readable and writable by its owner only, and
//! always replaced atomically. A file that cannot be read as a keystore is
//! reported and left exactly as it is; it is never overwritten. The REST
//! credential is never written here.
//!
//! [`Keystore`] is the file and its contents, with blocking calls;
//! [`Saver`] shares one with async code, writing it off the runtime's
//! workers and coalescing changes.

mod error;
mod file;
mod format;
mod integrity;
mod listing;
mod saver;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::crypto::{ChannelKey, IdentityKeyPair};

pub use error::KeystoreError;
pub use file::MAX_KEYSTORE_BYTES;
pub use saver::{Saver, SaverOptions, IN_MEMORY_PATH, MAX_CHANNEL_ID_BYTES};

/// The keystore format version this build writes. Version 1 files are
/// still read, and rewritten as version 2 by the next save. Here rather
/// than in `format.rs`: the errors (`error.rs`) name it too, and the
/// format names the errors.
pub const KEYSTORE_VERSION: u64 = 2;

/// The fuzz target's entry point.
#[cfg(feature = "fuzzing")]
pub(crate) use format::decode as parse;

/// The bot's key store: its identity key pair and its channel keys, backed
/// by one file.
///
/// Changes made with [`Keystore::insert_channel_key`] and
/// [`Keystore::remove_channel_key`] stay in memory until [`Keystore::save`].
///
/// ```
/// use botlane::crypto::ChannelKey;
/// use botlane::keystore::Keystore;
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("keystore.json");
/// let mut store = Keystore::open_or_create(&path)?;
/// let key = ChannelKey::generate()?;
/// let wire = key.seal(b"hi", b"c1")?;
/// store.insert_channel_key("c1", key);
/// store.save()?;
///
/// let reopened = Keystore::open_or_create(&path)?;
/// assert_eq!(reopened.identity().public_key(), store.identity().public_key());
/// assert_eq!(reopened.channel_key("c1").unwrap().open(&wire, b"c1")?, b"hi");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Keystore {
    path: PathBuf,
    identity: IdentityKeyPair,
    channels: BTreeMap<String, ChannelKey>,
}

impl Keystore {
    /// Loads the keystore at `path` (format version 1 or 2), or, when
    /// nothing exists there, creates a new identity and writes it (mode
    /// 0600) before returning.
    ///
    /// First it removes the temporary files a killed process left next to
    /// the keystore (each is a copy of the key material), under the
    /// keystore's lock; it waits up to 10 s for another process's save to
    /// finish, then fails with [`KeystoreError::Locked`]. When two processes
    /// create the same keystore at once, exactly one identity wins and both
    /// end up with it.
    ///
    /// This blocks on file I/O: from async code use [`Saver::open`].
    ///
    /// ```
    /// use botlane::keystore::{Keystore, KeystoreError};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("keystore.json");
    /// let first = Keystore::open_or_create(&path)?;
    /// let again = Keystore::open_or_create(&path)?;
    /// assert_eq!(first.identity().public_key(), again.identity().public_key());
    ///
    /// std::fs::create_dir(dir.path().join("a-dir")).unwrap();
    /// let err = Keystore::open_or_create(dir.path().join("a-dir")).unwrap_err();
    /// assert!(matches!(err, KeystoreError::NotAFile { .. }));
    /// # Ok::<(), KeystoreError>(())
    /// ```
    pub fn open_or_create(path: impl AsRef<Path>) -> Result<Self, KeystoreError> {
        let path = path.as_ref().to_path_buf();
        // A path without a file name (empty, `/`, `..`) names no file.
        if path.file_name().is_none()
            || file::inspect(&path)?.is_some_and(|meta| !meta.file_type().is_file())
        {
            return Err(KeystoreError::NotAFile { path });
        }
        file::remove_stale_temp_files(&path, file::LOCK_WAIT)?;
        match file::inspect(&path)? {
            Some(meta) => Self::load(path, &meta),
            None => Self::create(path),
        }
    }

    fn create(path: PathBuf) -> Result<Self, KeystoreError> {
        let identity = IdentityKeyPair::generate().map_err(|error| KeystoreError::Crypto {
            path: path.clone(),
            error,
        })?;
        let channels = BTreeMap::new();
        if file::publish_new(&path, &format::encode(&identity, &channels))? {
            return Ok(Self {
                path,
                identity,
                channels,
            });
        }
        // Another process created the file between our look and our link.
        match file::inspect(&path)? {
            Some(meta) => Self::load(path, &meta),
            None => Err(KeystoreError::Io {
                path,
                action: "open",
                error: std::io::ErrorKind::NotFound.into(),
            }),
        }
    }

    /// `link_meta` describes the path itself, not a symlink's target.
    fn load(path: PathBuf, link_meta: &std::fs::Metadata) -> Result<Self, KeystoreError> {
        let bytes = file::read(&path, link_meta)?;
        let contents = format::decode(&path, &bytes)?;
        Ok(Self {
            path,
            identity: contents.identity,
            channels: contents.channels,
        })
    }

    /// The file this keystore reads and writes.
    ///
    /// ```
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("k.json");
    /// assert_eq!(Keystore::open_or_create(&path)?.path(), path);
    /// # Ok::<(), botlane::keystore::KeystoreError>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bot's identity key pair.
    ///
    /// ```
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = Keystore::open_or_create(dir.path().join("k.json"))?;
    /// assert_eq!(store.identity().public_key().to_base64().len(), 44);
    /// # Ok::<(), botlane::keystore::KeystoreError>(())
    /// ```
    pub fn identity(&self) -> &IdentityKeyPair {
        &self.identity
    }

    /// The key of `channel_id`, if the bot has it.
    ///
    /// ```
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = Keystore::open_or_create(dir.path().join("k.json"))?;
    /// assert!(store.channel_key("c1").is_none());
    /// # Ok::<(), botlane::keystore::KeystoreError>(())
    /// ```
    pub fn channel_key(&self, channel_id: &str) -> Option<&ChannelKey> {
        self.channels.get(channel_id)
    }

    /// Records the key of `channel_id` in memory (call [`Keystore::save`] to
    /// persist it) and returns the key it replaces, if any.
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut store = Keystore::open_or_create(dir.path().join("k.json"))?;
    /// assert!(store.insert_channel_key("c1", ChannelKey::generate()?).is_none());
    /// assert!(store.insert_channel_key("c1", ChannelKey::generate()?).is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_channel_key(
        &mut self,
        channel_id: impl Into<String>,
        key: ChannelKey,
    ) -> Option<ChannelKey> {
        self.channels.insert(channel_id.into(), key)
    }

    /// Forgets the key of `channel_id` in memory (call [`Keystore::save`] to
    /// persist that) and returns it, if it was there.
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut store = Keystore::open_or_create(dir.path().join("k.json"))?;
    /// store.insert_channel_key("c1", ChannelKey::generate()?);
    /// assert!(store.remove_channel_key("c1").is_some());
    /// assert!(store.channel_key("c1").is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_channel_key(&mut self, channel_id: &str) -> Option<ChannelKey> {
        self.channels.remove(channel_id)
    }

    /// The ids of the channels whose keys the bot holds, in sorted order.
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut store = Keystore::open_or_create(dir.path().join("k.json"))?;
    /// store.insert_channel_key("b", ChannelKey::generate()?);
    /// store.insert_channel_key("a", ChannelKey::generate()?);
    /// assert_eq!(store.channel_ids().collect::<Vec<_>>(), ["a", "b"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn channel_ids(&self) -> impl Iterator<Item = &str> {
        self.channels.keys().map(String::as_str)
    }

    /// Writes the keystore to its file in format version 2 (a version 1
    /// file is upgraded here), atomically: a new owner-only file in the same
    /// directory, synced, then renamed over the old one, then the directory
    /// synced, all under the keystore's lock. A crash leaves either the old
    /// or the new file.
    ///
    /// This blocks on file I/O: from async code use a [`Saver`].
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    /// use botlane::keystore::Keystore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("k.json");
    /// let mut store = Keystore::open_or_create(&path)?;
    /// store.insert_channel_key("c1", ChannelKey::generate()?);
    /// store.save()?;
    /// assert!(Keystore::open_or_create(&path)?.channel_key("c1").is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self) -> Result<(), KeystoreError> {
        file::replace(&self.path, &format::encode(&self.identity, &self.channels))
    }

    /// The parts, for a [`Saver`] to take over.
    pub(crate) fn into_parts(self) -> (PathBuf, IdentityKeyPair, BTreeMap<String, ChannelKey>) {
        (self.path, self.identity, self.channels)
    }
}
