//! Why a realtime connection attempt failed, in botlane's own words: the
//! WebSocket and TLS crates' error types never reach the public API.

use std::fmt;

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
/// use botlane::{Client, ClientError, ClientOptions, ConnectErrorKind};
/// # let dir = tempfile::tempdir().unwrap();
/// // Nothing listens on port 1.
/// let client = Client::new(ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
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
}

impl ConnectError {
    pub(crate) fn new(kind: ConnectErrorKind, endpoint: &str, detail: impl Into<String>) -> Self {
        Self {
            kind,
            endpoint: endpoint.to_owned(),
            detail: detail.into(),
            status: None,
        }
    }

    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
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
        .with_status(503);
        assert_eq!(
            e.to_string(),
            "could not connect to the realtime wire at wss://chat.example:443: \
             the service answered the upgrade with http status 503 instead of 101"
        );
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(e.status(), Some(503));
        assert_eq!(e.kind().to_string(), "status");
    }
}
