//! Why a keystore could not be opened, created or saved.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::crypto::CryptoError;

use super::KEYSTORE_VERSION;

/// Why a keystore could not be opened, created or saved.
///
/// Every message is complete on its own: it names the file and says what is
/// wrong with it (the operating system's reason included), so no variant has
/// a [`source`](std::error::Error::source) to repeat. No message contains
/// key bytes, key text or any other content of the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeystoreError {
    /// The operating system refused an operation on the file, its directory,
    /// its temporary file or its lock file.
    #[error("cannot {action} keystore {}: {error}", .path.display())]
    Io {
        /// The keystore path.
        path: PathBuf,
        /// What was being done (`"read"`, `"create a temporary file for"`, …).
        action: &'static str,
        /// The operating system's error; its text is part of the message.
        error: io::Error,
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
    /// The file (or, when saving, its new content) is larger than any
    /// keystore botlane reads or writes.
    #[error(
        "keystore {} is over {limit} bytes, larger than any keystore botlane reads or writes",
        .path.display()
    )]
    TooLarge {
        /// The keystore path.
        path: PathBuf,
        /// The size limit, [`MAX_KEYSTORE_BYTES`](super::MAX_KEYSTORE_BYTES).
        limit: u64,
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
        "keystore {} has version {found}; this build reads versions 1 and {KEYSTORE_VERSION} only",
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
    /// A version 2 file whose integrity tag is missing, malformed or does
    /// not match its content: the file was changed or damaged after it was
    /// written.
    #[error("keystore {} failed its integrity check: {problem}", .path.display())]
    Integrity {
        /// The keystore path.
        path: PathBuf,
        /// What is wrong with the tag.
        problem: &'static str,
    },
    /// A version 2 file with a valid tag whose bytes are not the one
    /// encoding the format allows for its content (for example unsorted
    /// channel ids or extra whitespace): written by another tool.
    #[error(
        "keystore {} is not in the canonical version 2 encoding (whitespace, order or escaping differ from what botlane writes)",
        .path.display()
    )]
    NotCanonical {
        /// The keystore path.
        path: PathBuf,
    },
    /// Another process held the keystore's lock file for longer than the
    /// wait allows.
    #[error(
        "keystore {} is locked: another process held its lock file for {} ms",
        .path.display(),
        .waited.as_millis()
    )]
    Locked {
        /// The keystore path.
        path: PathBuf,
        /// How long this process waited.
        waited: Duration,
    },
    /// A new identity could not be generated.
    #[error("cannot create an identity for keystore {}: {error}", .path.display())]
    Crypto {
        /// The keystore path.
        path: PathBuf,
        /// Why; its text is part of the message.
        error: CryptoError,
    },
    /// A [`Saver`](super::Saver) already holds its cap of channel keys and
    /// was asked to add one more.
    #[error(
        "keystore {} already holds {cap} channel keys, its cap (SaverOptions::max_channel_keys); the key of a new channel was refused",
        .path.display()
    )]
    TooManyChannelKeys {
        /// The keystore path.
        path: PathBuf,
        /// The cap in force.
        cap: usize,
    },
    /// A [`Saver`](super::Saver) was given a channel id longer than
    /// [`MAX_CHANNEL_ID_BYTES`](super::MAX_CHANNEL_ID_BYTES).
    #[error(
        "keystore {}: a channel id of {len} bytes was refused; the limit is {limit} bytes",
        .path.display()
    )]
    ChannelIdTooLong {
        /// The keystore path.
        path: PathBuf,
        /// The id's length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A [`SaverOptions`](super::SaverOptions) value is out of range.
    #[error("keystore {}: saver option {option} {problem}", .path.display())]
    InvalidOption {
        /// The keystore path.
        path: PathBuf,
        /// The option's field name.
        option: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// [`Saver::open`](super::Saver::open) was awaited outside a Tokio
    /// runtime, which it needs for its blocking file work.
    #[error("cannot open keystore {} with a saver outside a tokio runtime", .path.display())]
    NoRuntime {
        /// The keystore path.
        path: PathBuf,
    },
    /// The blocking task doing the file work did not finish: the runtime is
    /// shutting down, or the task panicked.
    #[error("cannot {action} keystore {}: its blocking task did not finish (the runtime is shutting down, or the task panicked)", .path.display())]
    Interrupted {
        /// The keystore path.
        path: PathBuf,
        /// What was being done (`"open"`, `"save"`).
        action: &'static str,
    },
}
