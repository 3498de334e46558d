//! What a [`TestUser`](super::TestUser) call can fail with.

use std::time::Duration;

use botlane::FormatError;
use botlane_proto::crypto::CryptoError;

/// What a [`TestUser`](crate::TestUser) call can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestUserError {
    /// The WebSocket could not be opened (within
    /// [`CONNECT_TIMEOUT`](crate::CONNECT_TIMEOUT)).
    #[error("cannot connect to {url}: {reason}")]
    Connect {
        /// The URL asked for.
        url: String,
        /// Why: resolution, TCP, TLS, the handshake, or the timeout.
        reason: String,
    },
    /// The service refused the token.
    #[error("login refused with code {0}")]
    LoginRefused(i32),
    /// The service answered a request with a negative code.
    #[error("opcode {op} refused with code {code}{}", .reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Refused {
        /// The request's opcode.
        op: u16,
        /// The reply code.
        code: i32,
        /// The service's reason, if it gave one.
        reason: Option<String>,
    },
    /// No reply or message came in time.
    #[error("nothing arrived within {0:?}")]
    Timeout(Duration),
    /// The frame would take the bytes waiting to be sent past
    /// [`MAX_UNSENT_BYTES`](crate::MAX_UNSENT_BYTES): the service is not
    /// reading, or the caller sends faster than the writer task may run.
    #[error("send queue full: {queued} bytes wait to be sent and a frame of {frame} bytes would pass MAX_UNSENT_BYTES ({})", crate::MAX_UNSENT_BYTES)]
    SendQueueFull {
        /// Bytes already waiting.
        queued: usize,
        /// The size of the refused frame.
        frame: usize,
    },
    /// The connection is closed.
    #[error("the connection is closed")]
    Closed,
    /// The user holds no key for this channel: call [`TestUser::open_channel`](crate::TestUser::open_channel)
    /// or wait for a member to share one.
    #[error("no channel key for channel {0}")]
    NoChannelKey(String),
    /// The account has never logged in, so there is no key to wrap to.
    #[error("account {0} has no registered public key")]
    NoPublicKey(String),
    /// Sealing, opening, wrapping or unwrapping failed.
    #[error("encryption failed")]
    Crypto(#[from] CryptoError),
    /// The invocation could not be formatted as a text line.
    #[error("cannot format the invocation")]
    Format(#[from] FormatError),
    /// The service sent something that does not follow `docs/protocol.md`.
    #[error("protocol violation: {0}")]
    Protocol(String),
}
