//! Why a realtime connection attempt failed, in botlane's own words: the
//! WebSocket and TLS crates' error types never reach the public API.

use std::fmt;
use std::time::Duration;

/// The step of a connection attempt that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConnectErrorKind {
    /// The host name did not resolve (or resolved to no address).
    Dns,
    /// No resolved address accepted a TCP connection.
    Tcp,
    /// The TLS handshake failed (certificate, protocol, or the peer hung up).
    Tls,
    /// The WebSocket upgrade failed: not HTTP, a wrong accept key, a
    /// response over the size limit, or the peer hung up.
    Handshake,
    /// The service answered the upgrade with an HTTP status other than 101
    /// (see [`ConnectError::status`]).
    Status,
    /// The attempt did not finish within `connect_timeout`.
    Timeout,
}

impl fmt::Display for ConnectErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Dns => "dns",
            Self::Tcp => "tcp",
            Self::Tls => "tls",
            Self::Handshake => "handshake",
            Self::Status => "status",
            Self::Timeout => "timeout",
        })
    }
}

/// A realtime connection attempt failed. `Display` says where and why in
/// full (`could not connect to the realtime wire at ws://127.0.0.1:9000: …`);
/// there is no `source()`, so a `{:#}` reporter prints the reason once.
/// The address shown is scheme, host and port only: never a path or query.
///
/// ```
/// # async fn demo() {
/// use std::time::Duration;
/// use botlane::{Client, ClientError, ClientOptions, ConnectErrorKind};
/// # let dir = tempfile::tempdir().unwrap();
/// // Nothing listens on port 1; one attempt, no retries.
/// let options = ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")
///     .login_deadline(Duration::ZERO);
/// let client = Client::new(options).unwrap();
/// match client.login().await {
///     Err(ClientError::Connect(e)) => {
///         assert_eq!(e.kind(), ConnectErrorKind::Tcp);
///         assert!(e.to_string().starts_with("could not connect to the realtime wire at ws://127.0.0.1:1: "));
///     }
///     other => panic!("{other:?}"),
/// }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    kind: ConnectErrorKind,
    endpoint: String,
    detail: String,
    status: Option<u16>,
    /// Whether the failure may pass by itself (the service unreachable,
    /// busy or restarting), so that a login tries again.
    transient: bool,
    /// How long the service asked to be left alone (`Retry-After`).
    retry_after: Option<Duration>,
}

impl ConnectError {
    /// A failure of step `kind`; one that did not reach the service (DNS,
    /// TCP, a timeout) may pass by itself, the others are for
    /// [`transient`](Self::transient) and [`with_status`](Self::with_status) to say.
    pub(crate) fn new(kind: ConnectErrorKind, endpoint: &str, detail: impl Into<String>) -> Self {
        Self {
            kind,
            endpoint: endpoint.to_owned(),
            detail: detail.into(),
            status: None,
            transient: matches!(
                kind,
                ConnectErrorKind::Dns | ConnectErrorKind::Tcp | ConnectErrorKind::Timeout
            ),
            retry_after: None,
        }
    }

    /// The service answered the upgrade with `status`: a 5xx or a 429 (busy,
    /// restarting) may pass, with the wait it asked for, if any.
    pub(crate) fn with_status(mut self, status: u16, retry_after: Option<Duration>) -> Self {
        self.status = Some(status);
        self.transient = status >= 500 || status == 429;
        self.retry_after = retry_after;
        self
    }

    /// Marks a failure that may pass: the service hung up mid-step.
    pub(crate) fn transient(mut self) -> Self {
        self.transient = true;
        self
    }

    /// Whether trying again may succeed.
    pub(crate) fn is_transient(&self) -> bool {
        self.transient
    }

    /// How long the service asked the client to wait before trying again.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The step that failed.
    pub fn kind(&self) -> ConnectErrorKind {
        self.kind
    }

    /// The HTTP status the service answered the upgrade with, for
    /// [`ConnectErrorKind::Status`].
    pub fn status(&self) -> Option<u16> {
        self.status
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "could not connect to the realtime wire at {}: {}",
            self.endpoint, self.detail
        )
    }
}

impl std::error::Error for ConnectError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_complete_and_has_no_source() {
        let e = ConnectError::new(
            ConnectErrorKind::Status,
            "wss://chat.example:443",
            "the service answered the upgrade with http status 503 instead of 101",
        )
        .with_status(503, Some(Duration::from_secs(2)));
        assert_eq!(
            e.to_string(),
            "could not connect to the realtime wire at wss://chat.example:443: \
             the service answered the upgrade with http status 503 instead of 101"
        );
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(e.status(), Some(503));
        assert_eq!(e.kind().to_string(), "status");
        assert!(e.is_transient());
        assert_eq!(e.retry_after(), Some(Duration::from_secs(2)));
        assert!(
            !e.with_status(404, None).is_transient(),
            "a wrong path stays wrong"
        );
    }
}
