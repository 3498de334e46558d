//! The key store file (`keystore_path`): the bot's X25519 identity and the
//! channel keys it has received.
//!
//! The file is versioned JSON (format in `docs/crypto.md`), readable and
//! writable by its owner only, and always replaced atomically. A file that
//! cannot be read as a keystore is reported and left exactly as it is; it is
//! never overwritten. The REST credential is never written here.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};
use zeroize::{Zeroize, Zeroizing};

use crate::crypto::{ChannelKey, CryptoError, IdentityKeyPair, PublicKey, X25519_KEY_LEN};

/// The keystore format version this build reads and writes.
pub const KEYSTORE_VERSION: u64 = 1;

/// Why a keystore could not be opened, created or saved.
///
/// Every message names the file; none contains key bytes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeystoreError {
    /// The operating system refused an operation on the file or its directory.
    #[error("cannot {action} keystore {}: {source}", .path.display())]
    Io {
        /// The keystore path.
        path: PathBuf,
        /// What was being done (`"read"`, `"write a temporary file for"`, …).
        action: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// The path names a directory, a symlink or another non-regular file.
    #[error("keystore {} is not a regular file (directories and symlinks are refused)", .path.display())]
    NotAFile {
        /// The keystore path.
        path: PathBuf,
    },
    /// Group or other users have some access to the file.
    #[error(
        "keystore {} has permissions {mode:04o}; it must be accessible by its owner only (chmod 600)",
        .path.display()
    )]
    Permissions {
        /// The keystore path.
        path: PathBuf,
        /// The permission bits found.
        mode: u32,
    },
    /// The file ends in the middle of its JSON (an interrupted copy, a full disk).
    #[error("keystore {} is truncated: its json ends early (line {line}, column {column})", .path.display())]
    Truncated {
        /// The keystore path.
        path: PathBuf,
        /// 1-based line where the input ended.
        line: usize,
        /// Column where the input ended.
        column: usize,
    },
    /// The file is not JSON at all.
    #[error("keystore {} is not valid json (line {line}, column {column})", .path.display())]
    NotJson {
        /// The keystore path.
        path: PathBuf,
        /// 1-based line of the first error.
        line: usize,
        /// Column of the first error.
        column: usize,
    },
    /// The file was written by a botlane with another keystore format.
    #[error(
        "keystore {} has version {found}; this build reads version {KEYSTORE_VERSION} only",
        .path.display()
    )]
    UnsupportedVersion {
        /// The keystore path.
        path: PathBuf,
        /// The version found in the file.
        found: u64,
    },
    /// A field is missing, has the wrong type or does not decode.
    #[error("keystore {}: {field} {problem}", .path.display())]
    Invalid {
        /// The keystore path.
        path: PathBuf,
        /// Where in the document (`version`, `identity.secret`, `channels["c1"]`, …).
        field: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// `identity.public` is not the public key of `identity.secret`.
    #[error("keystore {}: identity.public does not match identity.secret", .path.display())]
    IdentityMismatch {
        /// The keystore path.
        path: PathBuf,
    },
    /// A new identity could not be generated.
    #[error("cannot create an identity for keystore {}: {source}", .path.display())]
    Crypto {
        /// The keystore path.
        path: PathBuf,
        /// The underlying error.
        source: CryptoError,
    },
}

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
    /// Loads the keystore at `path`, or, when nothing exists there, creates
    /// a new identity and writes it (mode 0600) before returning.
    ///
    /// When two processes create the same keystore at once, exactly one
    /// identity wins and both end up with it.
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
        match inspect(&path)? {
            Some(meta) => Self::load(path, &meta),
            None => Self::create(path),
        }
    }

    fn create(path: PathBuf) -> Result<Self, KeystoreError> {
        let identity = IdentityKeyPair::generate().map_err(|source| KeystoreError::Crypto {
            path: path.clone(),
            source,
        })?;
        let store = Self {
            path,
            identity,
            channels: BTreeMap::new(),
        };
        if publish_new(&store.path, &store.serialize())? {
            return Ok(store);
        }
        // Another process created the file between our look and our link.
        let path = store.path.clone();
        match inspect(&path)? {
            Some(meta) => Self::load(path, &meta),
            None => Err(KeystoreError::Io {
                path,
                action: "open",
                source: io::ErrorKind::NotFound.into(),
            }),
        }
    }

    /// `link_meta` describes the path itself, not a symlink's target.
    fn load(path: PathBuf, link_meta: &fs::Metadata) -> Result<Self, KeystoreError> {
        // Symlinks are refused: replacing the file on save would silently
        // turn the link into a regular file.
        if !link_meta.file_type().is_file() {
            return Err(KeystoreError::NotAFile { path });
        }
        let io_err = |action| {
            let path = path.clone();
            move |source| KeystoreError::Io {
                path,
                action,
                source,
            }
        };
        let mut file = File::open(&path).map_err(io_err("open"))?;
        let meta = file.metadata().map_err(io_err("inspect"))?;
        if !meta.file_type().is_file() {
            return Err(KeystoreError::NotAFile { path });
        }
        check_permissions(&path, &meta)?;
        let mut bytes = Zeroizing::new(Vec::new());
        file.read_to_end(&mut bytes).map_err(io_err("read"))?;
        let (identity, channels) = parse(&path, &bytes)?;
        Ok(Self {
            path,
            identity,
            channels,
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

    /// Writes the keystore to its file atomically: a new owner-only file in
    /// the same directory, synced, then renamed over the old one, then the
    /// directory synced. A crash leaves either the old or the new file.
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
        let contents = self.serialize();
        let temp = TempFile::write(&self.path, &contents)?;
        fs::rename(&temp.path, &self.path).map_err(|source| KeystoreError::Io {
            path: self.path.clone(),
            action: "replace",
            source,
        })?;
        temp.disarm();
        sync_dir(&self.path)
    }

    fn serialize(&self) -> Zeroizing<Vec<u8>> {
        #[derive(Serialize)]
        struct Doc<'a> {
            version: u64,
            identity: Identity<'a>,
            channels: BTreeMap<&'a str, &'a str>,
        }
        #[derive(Serialize)]
        struct Identity<'a> {
            secret: &'a str,
            public: &'a str,
        }

        let secret = Zeroizing::new(BASE64.encode(self.identity.expose_secret_bytes()));
        let public = self.identity.public_key().to_base64();
        let channel_b64: Vec<(&str, Zeroizing<String>)> = self
            .channels
            .iter()
            .map(|(id, key)| {
                (
                    id.as_str(),
                    Zeroizing::new(BASE64.encode(key.expose_bytes())),
                )
            })
            .collect();
        let doc = Doc {
            version: KEYSTORE_VERSION,
            identity: Identity {
                secret: &secret,
                public: &public,
            },
            channels: channel_b64
                .iter()
                .map(|(id, b64)| (*id, b64.as_str()))
                .collect(),
        };
        // Sized up front so that growing the buffer leaves no stray copies.
        let estimate = 256
            + channel_b64
                .iter()
                .map(|(id, _)| 64 + 6 * id.len())
                .sum::<usize>();
        let mut out = Zeroizing::new(Vec::with_capacity(estimate));
        serde_json::to_writer_pretty(&mut *out, &doc)
            .expect("serializing strings and integers into a Vec cannot fail");
        out.push(b'\n');
        out
    }
}

/// A `serde_json::Value` whose strings are wiped when it is dropped, since
/// they hold base64 key material.
struct ScrubbedValue(Value);

impl Drop for ScrubbedValue {
    fn drop(&mut self) {
        fn scrub(value: &mut Value) {
            match value {
                Value::String(s) => s.zeroize(),
                Value::Array(items) => items.iter_mut().for_each(scrub),
                Value::Object(map) => map.values_mut().for_each(scrub),
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        scrub(&mut self.0);
    }
}

pub(crate) type Parsed = (IdentityKeyPair, BTreeMap<String, ChannelKey>);

/// Decodes a keystore document. Never panics; the errors name fields, never
/// their contents.
pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Parsed, KeystoreError> {
    let doc = ScrubbedValue(serde_json::from_slice(bytes).map_err(|e| {
        let (path, line, column) = (path.to_path_buf(), e.line(), e.column());
        if e.is_eof() {
            KeystoreError::Truncated { path, line, column }
        } else {
            KeystoreError::NotJson { path, line, column }
        }
    })?);
    let invalid = |field: &str, problem| KeystoreError::Invalid {
        path: path.to_path_buf(),
        field: field.to_owned(),
        problem,
    };
    let top = doc
        .0
        .as_object()
        .ok_or_else(|| invalid("the document", "must be a json object"))?;
    // The version is checked first so that a newer format is reported as
    // such rather than as a pile of unexpected fields.
    match top.get("version") {
        None => return Err(invalid("version", "is missing")),
        Some(v) => match v.as_u64() {
            Some(KEYSTORE_VERSION) => {}
            Some(found) => {
                return Err(KeystoreError::UnsupportedVersion {
                    path: path.to_path_buf(),
                    found,
                })
            }
            None => return Err(invalid("version", "must be a non-negative integer")),
        },
    }
    reject_unknown(top, &["version", "identity", "channels"], "", &invalid)?;

    let identity = object_field(top, "identity", &invalid)?;
    reject_unknown(identity, &["secret", "public"], "identity.", &invalid)?;
    let secret = key_field(identity.get("secret"), "identity.secret", &invalid)?;
    let public = key_field(identity.get("public"), "identity.public", &invalid)?;
    let pair = IdentityKeyPair::from_secret_bytes(*secret);
    if pair.public_key() != PublicKey::from_bytes(*public) {
        return Err(KeystoreError::IdentityMismatch {
            path: path.to_path_buf(),
        });
    }

    let mut channels = BTreeMap::new();
    for (id, value) in object_field(top, "channels", &invalid)? {
        let field = format!("channels[{id:?}]");
        let key = key_field(Some(value), &field, &invalid)?;
        channels.insert(id.clone(), ChannelKey::from_bytes(*key));
    }
    Ok((pair, channels))
}

type Invalid<'a> = dyn Fn(&str, &'static str) -> KeystoreError + 'a;

fn reject_unknown(
    map: &Map<String, Value>,
    known: &[&str],
    prefix: &str,
    invalid: &Invalid<'_>,
) -> Result<(), KeystoreError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(invalid(
            &format!("{prefix}{unknown:?}"),
            "is not a known field",
        )),
        None => Ok(()),
    }
}

fn object_field<'v>(
    map: &'v Map<String, Value>,
    name: &str,
    invalid: &Invalid<'_>,
) -> Result<&'v Map<String, Value>, KeystoreError> {
    map.get(name)
        .ok_or_else(|| invalid(name, "is missing"))?
        .as_object()
        .ok_or_else(|| invalid(name, "must be a json object"))
}

fn key_field(
    value: Option<&Value>,
    field: &str,
    invalid: &Invalid<'_>,
) -> Result<Zeroizing<[u8; X25519_KEY_LEN]>, KeystoreError> {
    let text = value
        .ok_or_else(|| invalid(field, "is missing"))?
        .as_str()
        .ok_or_else(|| invalid(field, "must be a string"))?;
    let bytes = Zeroizing::new(
        BASE64
            .decode(text)
            .map_err(|_| invalid(field, "is not valid standard base64"))?,
    );
    let mut key = Zeroizing::new([0u8; X25519_KEY_LEN]);
    if bytes.len() != key.len() {
        return Err(invalid(field, "must decode to exactly 32 bytes"));
    }
    key.copy_from_slice(&bytes);
    Ok(key)
}

/// The metadata of `path` itself (symlinks not followed), or `None` when
/// nothing is there.
fn inspect(path: &Path) -> Result<Option<fs::Metadata>, KeystoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(KeystoreError::Io {
            path: path.to_path_buf(),
            action: "inspect",
            source,
        }),
    }
}

#[cfg(unix)]
fn check_permissions(path: &Path, meta: &fs::Metadata) -> Result<(), KeystoreError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(KeystoreError::Permissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_permissions(_path: &Path, _meta: &fs::Metadata) -> Result<(), KeystoreError> {
    Ok(())
}

/// Options that create a new file, owner-only from its first instant.
fn owner_only_new_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Makes a rename or link in `path`'s directory durable.
fn sync_dir(path: &Path) -> Result<(), KeystoreError> {
    #[cfg(unix)]
    {
        File::open(parent_dir(path))
            .and_then(|dir| dir.sync_all())
            .map_err(|source| KeystoreError::Io {
                path: path.to_path_buf(),
                action: "sync the directory of",
                source,
            })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// A fully written and synced temporary file next to the keystore; removed
/// on drop unless it was renamed or linked into place.
struct TempFile {
    path: PathBuf,
}

impl TempFile {
    fn write(target: &Path, contents: &[u8]) -> Result<Self, KeystoreError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let io_err = |action| {
            move |source| KeystoreError::Io {
                path: target.to_path_buf(),
                action,
                source,
            }
        };
        let base = target
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "keystore".to_owned());
        let dir = parent_dir(target);
        // Process id plus a per-process counter is unique among live
        // processes; a stale leftover from a crashed process only costs a retry.
        let mut attempts = 0;
        let (path, mut file) = loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let candidate = dir.join(format!(".{base}.{}.{n}.tmp", std::process::id()));
            match owner_only_new_file().open(&candidate) {
                Ok(file) => break (candidate, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => {
                    attempts += 1;
                }
                Err(e) => return Err(io_err("create a temporary file for")(e)),
            }
        };
        let temp = Self { path };
        file.write_all(contents)
            .and_then(|()| file.sync_all())
            .map_err(io_err("write a temporary file for"))?;
        Ok(temp)
    }

    fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Best effort: the file holds nothing that the real keystore does not.
        let _ = fs::remove_file(&self.path);
    }
}

/// Puts `contents` at `path` only if nothing is there yet: the file is
/// written and synced under a temporary name, then hard-linked into place,
/// which fails instead of replacing an existing file. Returns `false` when
/// another file got there first.
fn publish_new(path: &Path, contents: &[u8]) -> Result<bool, KeystoreError> {
    let temp = TempFile::write(path, contents)?;
    match fs::hard_link(&temp.path, path) {
        Ok(()) => {
            drop(temp);
            sync_dir(path)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(KeystoreError::Io {
            path: path.to_path_buf(),
            action: "create",
            source,
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_str(text: &str) -> Result<Parsed, KeystoreError> {
        parse(Path::new("/k/store.json"), text.as_bytes())
    }

    fn valid_doc() -> Value {
        let pair = IdentityKeyPair::from_secret_bytes([7; 32]);
        serde_json::json!({
            "version": 1,
            "identity": {
                "secret": BASE64.encode([7u8; 32]),
                "public": pair.public_key().to_base64(),
            },
            "channels": { "c1": BASE64.encode([1u8; 32]) },
        })
    }

    fn problem(doc: &Value) -> String {
        parse_str(&doc.to_string()).unwrap_err().to_string()
    }

    #[test]
    fn valid_document_parses() {
        let (pair, channels) = parse_str(&valid_doc().to_string()).unwrap();
        assert_eq!(pair.expose_secret_bytes(), &[7; 32]);
        assert_eq!(channels["c1"].expose_bytes(), &[1; 32]);
    }

    #[test]
    fn serialize_then_parse_round_trips() {
        let mut channels = BTreeMap::new();
        channels.insert(
            "a \"quoted\" id".to_owned(),
            ChannelKey::from_bytes([4; 32]),
        );
        let store = Keystore {
            path: PathBuf::from("/k/store.json"),
            identity: IdentityKeyPair::from_secret_bytes([9; 32]),
            channels,
        };
        let bytes = store.serialize();
        let (pair, back) = parse(store.path(), &bytes).unwrap();
        assert_eq!(pair.public_key(), store.identity.public_key());
        assert_eq!(back["a \"quoted\" id"].expose_bytes(), &[4; 32]);
    }

    #[test]
    fn each_defect_is_named() {
        type Edit = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|d| d["version"] = 2.into()), "has version 2"),
            (
                Box::new(|d| d["version"] = "1".into()),
                "version must be a non-negative integer",
            ),
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("version");
                }),
                "version is missing",
            ),
            (
                Box::new(|d| d["extra"] = true.into()),
                "\"extra\" is not a known field",
            ),
            (
                Box::new(|d| d["identity"] = "x".into()),
                "identity must be a json object",
            ),
            (
                Box::new(|d| {
                    d["identity"].as_object_mut().unwrap().remove("secret");
                }),
                "identity.secret is missing",
            ),
            (
                Box::new(|d| d["identity"]["secret"] = 5.into()),
                "identity.secret must be a string",
            ),
            (
                Box::new(|d| d["identity"]["secret"] = "%%%%".into()),
                "identity.secret is not valid standard base64",
            ),
            (
                Box::new(|d| d["identity"]["public"] = "AAAA".into()),
                "identity.public must decode to exactly 32 bytes",
            ),
            (
                Box::new(|d| d["identity"]["public"] = BASE64.encode([1u8; 32]).into()),
                "identity.public does not match identity.secret",
            ),
            (
                Box::new(|d| d["identity"]["x"] = 1.into()),
                "identity.\"x\" is not a known field",
            ),
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("channels");
                }),
                "channels is missing",
            ),
            (
                Box::new(|d| d["channels"]["c2"] = BASE64.encode([1u8; 16]).into()),
                "channels[\"c2\"] must decode to exactly 32 bytes",
            ),
        ];
        for (edit, expected) in cases {
            let mut doc = valid_doc();
            edit(&mut doc);
            let message = problem(&doc);
            assert!(message.starts_with("keystore /k/store.json"), "{message}");
            assert!(message.contains(expected), "{message} lacks {expected}");
        }
        assert!(problem(&serde_json::json!([1])).contains("the document must be a json object"));
    }

    #[test]
    fn errors_never_contain_key_material() {
        let secret_b64 = BASE64.encode([7u8; 32]);
        let mut doc = valid_doc();
        // Key text in places where a naive decoder would echo it back.
        doc["identity"] = secret_b64.clone().into();
        doc["channels"]["c2"] = serde_json::json!([secret_b64.clone()]);
        let message = problem(&doc);
        assert!(!message.contains(&secret_b64), "{message}");
        let mut doc = valid_doc();
        doc["identity"]["public"] = format!("{secret_b64}!").into();
        assert!(!problem(&doc).contains(&secret_b64));
    }

    #[test]
    fn truncation_is_told_apart_from_garbage() {
        let text = valid_doc().to_string();
        for cut in [0, 1, text.len() / 2, text.len() - 1] {
            assert!(
                matches!(
                    parse_str(&text[..cut]),
                    Err(KeystoreError::Truncated { .. })
                ),
                "cut at {cut}"
            );
        }
        assert!(matches!(
            parse_str("hello"),
            Err(KeystoreError::NotJson { .. })
        ));
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let names = prop::sample::select(vec![
            "version", "identity", "channels", "secret", "public", "c1", "x",
        ]);
        let b64_key = any::<[u8; 32]>().prop_map(|b| Value::from(BASE64.encode(b)));
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0u64..4).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::from),
            b64_key,
        ];
        leaf.prop_recursive(4, 32, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(names.clone(), inner, 0..5).prop_map(
                    |m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                ),
            ]
        })
    }

    proptest! {
        #[test]
        fn parse_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            prop_assert!(parse(Path::new("k"), &bytes).is_err());
        }

        #[test]
        fn parse_never_panics_on_json_shapes(doc in json_value()) {
            // Random shapes essentially never form a matching identity pair.
            prop_assert!(parse_str(&doc.to_string()).is_err());
        }
    }
}
