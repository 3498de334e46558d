//! The service's errors.

use std::net::SocketAddr;
use std::time::Duration;

/// Why the service could not start, or an admin call was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevServerError {
    /// The configuration file could not be read.
    #[error("cannot read config file {path}")]
    ConfigRead {
        /// The file.
        path: String,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The configuration is not valid JSON of the expected shape.
    #[error("invalid config: {0}")]
    ConfigSyntax(serde_json::Error),
    /// The configuration is well-formed but inconsistent.
    #[error("invalid config: {0}")]
    Config(String),
    /// The listener could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// No account has this id.
    #[error("unknown account {0}")]
    UnknownAccount(String),
    /// The account exists but is not a bot.
    #[error("account {0} is not a bot")]
    NotABot(String),
    /// No server has this id.
    #[error("unknown server {0}")]
    UnknownServer(String),
    /// No channel has this id.
    #[error("unknown channel {0}")]
    UnknownChannel(String),
    /// The REST listener's certificate or TLS configuration could not be made.
    #[error("cannot set up tls for the rest listener: {0}")]
    Tls(String),
    /// A file could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file.
        path: String,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// [`DevServer::fail_next_requests`](crate::DevServer::fail_next_requests)
    /// was given an opcode it cannot fail: login, 638, a push or an
    /// unknown opcode.
    #[error(
        "opcode {0} cannot be made to fail: fail_next_requests fails the requests of a \
         logged-in session (12, 20, 30, 40, 51, 52, 60, 61, 240); for 638 use fail_next_mints"
    )]
    NotFailable(u16),
    /// The system's random source failed.
    #[error("the system random source failed")]
    Random,
}

/// [`DevServer::wait_for`](crate::DevServer::wait_for) gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("condition not met within {0:?}")]
pub struct WaitTimeout(pub Duration);
