//! The keystore on disk: bounded reads, atomic replacement through
//! temporary files, the advisory lock, and removal of the temporary files a
//! killed process left behind.
//!
//! Every write goes to `.<name>.<pid>.<counter>.tmp` in the keystore's
//! directory and is renamed (or, for a new keystore, hard-linked) into
//! place while the process holds an exclusive advisory lock on
//! `.<name>.lock`. A process that dies mid-write drops the lock with it, so
//! any temporary file found while holding the lock is stale: no live writer
//! can own it. Opening a keystore removes such files, since each one is a
//! full copy of the key material.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use super::error::KeystoreError;
use super::listing;

/// The largest keystore file botlane reads or writes. A
/// [`Saver`](super::Saver) at its highest cap (40,000 channels with ids of
/// up to 256 bytes, each escaped to at most six bytes per byte) stays under
/// it; a save that would exceed it fails instead of writing a file the next
/// open would refuse.
pub const MAX_KEYSTORE_BYTES: u64 = 64 * 1024 * 1024;

/// How long a save or an open waits for another process's save to finish.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

fn io_error<'a>(
    path: &'a Path,
    action: &'static str,
) -> impl FnOnce(io::Error) -> KeystoreError + 'a {
    move |error| KeystoreError::Io {
        path: path.to_path_buf(),
        action,
        error,
    }
}

/// The metadata of `path` itself (symlinks not followed), or `None` when
/// nothing is there.
pub(crate) fn inspect(path: &Path) -> Result<Option<fs::Metadata>, KeystoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, "inspect")(e)),
    }
}

/// Reads the keystore at `path`, whose own metadata is `link_meta`: a
/// regular file (symlinks are refused, since replacing the file on save
/// would silently turn the link into a regular file), owner-only, at most
/// [`MAX_KEYSTORE_BYTES`].
pub(crate) fn read(
    path: &Path,
    link_meta: &fs::Metadata,
) -> Result<Zeroizing<Vec<u8>>, KeystoreError> {
    let not_a_file = || KeystoreError::NotAFile {
        path: path.to_path_buf(),
    };
    if !link_meta.file_type().is_file() {
        return Err(not_a_file());
    }
    let file = File::open(path).map_err(io_error(path, "open"))?;
    let meta = file.metadata().map_err(io_error(path, "inspect"))?;
    if !meta.file_type().is_file() {
        return Err(not_a_file());
    }
    check_permissions(path, &meta)?;
    let too_large = || KeystoreError::TooLarge {
        path: path.to_path_buf(),
        limit: MAX_KEYSTORE_BYTES,
    };
    if meta.len() > MAX_KEYSTORE_BYTES {
        return Err(too_large());
    }
    // The size can change between the look and the read: the read is bounded too.
    let expected = usize::try_from(meta.len()).unwrap_or(0);
    let mut bytes = Zeroizing::new(Vec::with_capacity(expected.saturating_add(1)));
    file.take(MAX_KEYSTORE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(path, "read"))?;
    if bytes.len() as u64 > MAX_KEYSTORE_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
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

/// Writes `contents` to `path` atomically: a new owner-only temporary file
/// in the same directory, synced, renamed over the old file, then the
/// directory synced. A crash leaves either the old file or the new one
/// (and perhaps a temporary file, removed by the next open).
pub(crate) fn replace(path: &Path, contents: &[u8]) -> Result<(), KeystoreError> {
    // A file the next open would refuse is never written.
    if contents.len() as u64 > MAX_KEYSTORE_BYTES {
        return Err(KeystoreError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_KEYSTORE_BYTES,
        });
    }
    let _lock = Lock::acquire(path, LOCK_WAIT)?;
    let temp = TempFile::write(path, contents)?;
    fs::rename(&temp.path, path).map_err(io_error(path, "replace"))?;
    temp.disarm();
    sync_dir(path)
}

/// Puts `contents` at `path` only if nothing is there yet: the file is
/// written and synced under a temporary name, then hard-linked into place,
/// which fails instead of replacing an existing file (even one made by a
/// process that does not take the lock). Returns `false` when another file
/// got there first.
pub(crate) fn publish_new(path: &Path, contents: &[u8]) -> Result<bool, KeystoreError> {
    let _lock = Lock::acquire(path, LOCK_WAIT)?;
    let temp = TempFile::write(path, contents)?;
    match fs::hard_link(&temp.path, path) {
        Ok(()) => {
            drop(temp);
            sync_dir(path)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error(path, "create")(e)),
    }
}

/// Removes the temporary files of `path` that a killed process left behind
/// and returns how many there were. Only files matching the temporary name
/// pattern exactly are touched, and only under the lock. The directory is
/// listed again only when it changed since the last listing (`listing.rs`).
pub(crate) fn remove_stale_temp_files(path: &Path, wait: Duration) -> Result<usize, KeystoreError> {
    let Some(_lock) = Lock::acquire(path, wait)? else {
        return Ok(0);
    };
    let Some(name) = path.file_name() else {
        return Ok(0);
    };
    let dir = parent_dir(path);
    let candidates =
        listing::temp_candidates(dir).map_err(io_error(path, "list the directory of"))?;
    let mut removed = 0;
    for candidate in candidates {
        if !is_temp_name(name, &candidate) {
            continue;
        }
        let stale = dir.join(&candidate);
        // Only regular files: never follow or remove a link someone planted.
        if !fs::symlink_metadata(&stale).is_ok_and(|m| m.file_type().is_file()) {
            continue;
        }
        match fs::remove_file(&stale) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(path, "remove a stale temporary file of")(e)),
        }
    }
    if removed > 0 {
        listing::forget(dir);
        sync_dir(path)?;
    }
    Ok(removed)
}

/// The temporary file name for the `counter`-th write of this process.
fn temp_name(name: &OsStr, counter: u64) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".{}.{counter}.tmp", std::process::id()));
    temp
}

/// Whether `candidate` is `.<name>.<digits>.<digits>.tmp`.
fn is_temp_name(name: &OsStr, candidate: &OsStr) -> bool {
    let candidate = candidate.as_encoded_bytes();
    let Some(rest) = candidate
        .strip_prefix(b".")
        .and_then(|r| r.strip_prefix(name.as_encoded_bytes()))
        .and_then(|r| r.strip_prefix(b"."))
        .and_then(|r| r.strip_suffix(b".tmp"))
    else {
        return false;
    };
    let mut parts = rest.split(|b| *b == b'.');
    let digits = |part: Option<&[u8]>| {
        part.is_some_and(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
    };
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
}

fn lock_file_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(path.file_name().unwrap_or_else(|| OsStr::new("keystore")));
    name.push(".lock");
    parent_dir(path).join(name)
}

/// An exclusive advisory lock on `.<name>.lock`, held while the value
/// lives; the operating system releases it when the process dies.
pub(crate) struct Lock {
    _file: File,
}

impl Lock {
    /// Takes the lock of `path`'s keystore, waiting at most `wait` for
    /// another process to release it. `None` when the directory cannot hold
    /// a lock file (read-only: nothing can be written or removed there
    /// either) or the filesystem has no advisory locks.
    pub(crate) fn acquire(path: &Path, wait: Duration) -> Result<Option<Self>, KeystoreError> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = match options.open(lock_file_path(path)) {
            Ok(file) => file,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(io_error(path, "open the lock file of")(e)),
        };
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(Self { _file: file })),
                Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(KeystoreError::Locked {
                        path: path.to_path_buf(),
                        waited: started.elapsed(),
                    })
                }
                Err(TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => {
                    return Ok(None)
                }
                Err(TryLockError::Error(e)) => return Err(io_error(path, "lock")(e)),
            }
        }
    }
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

/// Makes a rename, link or removal in `path`'s directory durable.
fn sync_dir(path: &Path) -> Result<(), KeystoreError> {
    #[cfg(unix)]
    {
        File::open(parent_dir(path))
            .and_then(|dir| dir.sync_all())
            .map_err(io_error(path, "sync the directory of"))
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
    /// Cleared once the file is in place. A flag rather than
    /// `mem::forget`, which leaked the path's allocation on every write.
    armed: bool,
}

impl TempFile {
    fn write(target: &Path, contents: &[u8]) -> Result<Self, KeystoreError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = target.file_name().unwrap_or_else(|| OsStr::new("keystore"));
        let dir = parent_dir(target);
        // Process id plus a per-process counter is unique among live
        // processes; a leftover of a dead process with a reused id only
        // costs a retry.
        let mut attempts = 0;
        let (path, mut file) = loop {
            let candidate = dir.join(temp_name(name, COUNTER.fetch_add(1, Ordering::Relaxed)));
            match owner_only_new_file().open(&candidate) {
                Ok(file) => break (candidate, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => {
                    attempts += 1;
                }
                Err(e) => return Err(io_error(target, "create a temporary file for")(e)),
            }
        };
        let temp = Self { path, armed: true };
        file.write_all(contents)
            .and_then(|()| file.sync_all())
            .map_err(io_error(target, "write a temporary file for"))?;
        Ok(temp)
    }

    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Best effort: should this fail, the next open removes the file.
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_exactly() {
        let name = OsStr::new("keystore.json");
        assert!(is_temp_name(name, &temp_name(name, 7)));
        for good in [".keystore.json.1.0.tmp", ".keystore.json.123.45.tmp"] {
            assert!(is_temp_name(name, OsStr::new(good)), "{good}");
        }
        for other in [
            "keystore.json",
            ".keystore.json.lock",
            ".keystore.json.1.tmp",
            ".keystore.json.1.2.3.tmp",
            ".keystore.json..2.tmp",
            ".keystore.json.1.x.tmp",
            ".keystore.json.1.2.tmp~",
            ".other.json.1.2.tmp",
            ".keystore.json2.1.2.tmp",
            "keystore.json.1.2.tmp",
        ] {
            assert!(!is_temp_name(name, OsStr::new(other)), "{other}");
        }
    }

    #[test]
    fn a_held_lock_times_out_with_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let held = Lock::acquire(&path, LOCK_WAIT).unwrap().unwrap();
        let err = Lock::acquire(&path, Duration::from_millis(30))
            .err()
            .unwrap();
        assert!(matches!(err, KeystoreError::Locked { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("locked"), "{message}");
        drop(held);
        assert!(Lock::acquire(&path, Duration::ZERO).unwrap().is_some());
    }

    #[test]
    fn stale_temp_files_wait_for_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let stale = dir.path().join(temp_name(OsStr::new("k.json"), 1));
        fs::write(&stale, b"key material").unwrap();
        let unrelated = dir.path().join(".k.json.notes.tmp");
        fs::write(&unrelated, b"").unwrap();
        let held = Lock::acquire(&path, LOCK_WAIT).unwrap().unwrap();
        // A writer holds the lock: its temporary file must survive.
        assert!(remove_stale_temp_files(&path, Duration::from_millis(20)).is_err());
        assert!(stale.exists());
        drop(held);
        assert_eq!(remove_stale_temp_files(&path, LOCK_WAIT).unwrap(), 1);
        assert!(!stale.exists());
        assert!(unrelated.exists());
    }

    #[test]
    fn oversized_files_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let file = owner_only_new_file().open(&path).unwrap();
        file.set_len(MAX_KEYSTORE_BYTES + 1).unwrap();
        let err = read(&path, &fs::symlink_metadata(&path).unwrap()).unwrap_err();
        assert!(matches!(err, KeystoreError::TooLarge { .. }), "{err:?}");
        assert!(
            err.to_string().contains("larger than any keystore"),
            "{err}"
        );
    }
}
