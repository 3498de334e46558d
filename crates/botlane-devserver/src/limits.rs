//! Every cap and timeout that keeps a hostile client from exhausting the
//! service: connection budgets, timeouts, queue and record sizes.

use std::time::Duration;

use serde::Deserialize;

/// The default of [`Limits::max_request_body`]: the largest request body a
/// listener reads.
pub const MAX_HTTP_BODY_BYTES: usize = 1024 * 1024;

/// The service's budgets, with defaults sized for a developer machine.
///
/// Connections pass three separate pools, so that strangers who connect and
/// never log in can never take the place of a bot:
///
/// * **HTTP connections** ([`http_connections`](Self::http_connections) per
///   listener): a TCP connection counts until it is upgraded to a WebSocket
///   or closed. When the pool is full, the next connection is accepted and
///   waits while the keep-alive connections idle longest (for at least
///   1 s, up to 32 at a time) are closed to make room, or until one ends;
///   the ones after it wait in the kernel's backlog (1,024). [`header_read_timeout`](Self::header_read_timeout)
///   closes a connection that does not finish its TLS handshake or a
///   request's headers in time (a slowloris), and an idle keep-alive one.
/// * **Pre-login WebSockets** ([`prelogin_connections`](Self::prelogin_connections)):
///   upgraded but not logged in. When full, a new connection takes the
///   place of the oldest idle stranger (see [`prelogin_grace`](Self::prelogin_grace)),
///   and with none `/ws` answers `503` with `Retry-After` before the
///   upgrade. One that has not logged in within [`login_timeout`](Self::login_timeout)
///   is closed with code 1008 `no login within N s`.
/// * **Sessions** ([`sessions`](Self::sessions)): logged-in WebSockets. When
///   full, a login is answered `-9` (`session pool full`) and the socket
///   stays in the pre-login pool, free to try again.
///
/// JSON (in the config file's `limits` object) spells durations in
/// milliseconds, with an `_ms` suffix; every field may be left out.
///
/// ```
/// use std::time::Duration;
/// use botlane_devserver::{DevServerConfig, Limits};
///
/// let limits = Limits::default()
///     .prelogin_connections(50)
///     .login_timeout(Duration::from_millis(500));
/// let config = DevServerConfig::default().limits(limits);
/// assert_eq!(config.limits.prelogin_connections, 50);
///
/// let config = DevServerConfig::from_json_str(r#"{"limits": {"login_timeout_ms": 500, "sessions": 10}}"#)?;
/// assert_eq!(config.limits.login_timeout, Duration::from_millis(500));
/// assert_eq!(config.limits.sessions, 10);
/// assert_eq!(config.limits.prelogin_connections, Limits::default().prelogin_connections);
/// # Ok::<(), botlane_devserver::DevServerError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Limits {
    /// TCP connections each listener serves at once before they upgrade
    /// (default 256).
    pub http_connections: usize,
    /// How long a connection may take for its TLS handshake, for a request's
    /// headers, and how long it may sit idle between requests (default 10 s).
    #[serde(rename = "header_read_timeout_ms", with = "millis")]
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive (default 10 s); then `408`.
    #[serde(rename = "request_body_timeout_ms", with = "millis")]
    pub request_body_timeout: Duration,
    /// The largest request body read (default [`MAX_HTTP_BODY_BYTES`]); a
    /// larger one gets `413`.
    pub max_request_body: usize,
    /// WebSockets that have not logged in (default 64).
    pub prelogin_connections: usize,
    /// How long a WebSocket in the pre-login pool is safe from eviction
    /// (default 1 s). When the pool is full, a new connection takes the
    /// place of the oldest one upgraded longer ago than this that has not
    /// sent a login with a known token (an idle stranger, or one that sent
    /// only other frames), which is closed with 1008 `pre-login pool full:
    /// no login within N s of the upgrade`. A connection whose login has
    /// arrived (answered `-9`, say) is never evicted. With none to evict,
    /// `/ws` answers `503` with `Retry-After` of this, in whole seconds (at
    /// least 1).
    #[serde(rename = "prelogin_grace_ms", with = "millis")]
    pub prelogin_grace: Duration,
    /// How long a WebSocket may stay without logging in (default 10 s).
    #[serde(rename = "login_timeout_ms", with = "millis")]
    pub login_timeout: Duration,
    /// Logged-in WebSockets (default 1024).
    pub sessions: usize,
    /// Bytes of frames that may wait for one slow client (default 1 MiB).
    /// Replies and pushes caused by the client's own requests always queue,
    /// but while the queue is at this size the service reads no more of its
    /// requests (they wait in the socket). A frame caused by others
    /// (messages, notifications, keys, membership) that does not fit closes
    /// the connection with 1008 `outbound queue full: the client is not
    /// reading`; an empty queue takes any frame. So one connection holds at
    /// most this plus what one request produces (a reply and a push, under
    /// two frames of [`MAX_FRAME_BYTES`](crate::MAX_FRAME_BYTES)).
    pub outbound_queue_bytes: usize,
    /// How long a closing connection may take to flush its queue and its
    /// close frame before the socket is dropped (default 2 s).
    #[serde(rename = "flush_timeout_ms", with = "millis")]
    pub flush_timeout: Duration,
    /// Frame records kept, newest last (default 10,000).
    pub frame_records: usize,
    /// Bytes of frame records kept, payloads included (default 16 MiB).
    pub frame_record_bytes: usize,
    /// HTTP request records kept, newest last (default 10,000).
    pub http_records: usize,
    /// Bytes of HTTP request records kept, headers and bodies included
    /// (default 16 MiB).
    pub http_record_bytes: usize,
    /// Bytes of each request body kept in its record (default 64 KiB); the
    /// record says how many bytes there were.
    pub http_record_body_bytes: usize,
    /// Notification records kept, newest last (default 10,000).
    pub notification_records: usize,
    /// Messages each channel keeps, newest last (default 1,000; each at most
    /// [`MAX_CONTENT_BYTES`](crate::MAX_CONTENT_BYTES) plus its sidecar).
    pub channel_history: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            http_connections: 256,
            header_read_timeout: Duration::from_secs(10),
            request_body_timeout: Duration::from_secs(10),
            max_request_body: MAX_HTTP_BODY_BYTES,
            prelogin_connections: 64,
            prelogin_grace: Duration::from_secs(1),
            login_timeout: Duration::from_secs(10),
            sessions: 1024,
            outbound_queue_bytes: 1024 * 1024,
            flush_timeout: Duration::from_secs(2),
            frame_records: 10_000,
            frame_record_bytes: 16 * 1024 * 1024,
            http_records: 10_000,
            http_record_bytes: 16 * 1024 * 1024,
            http_record_body_bytes: 64 * 1024,
            notification_records: 10_000,
            channel_history: 1_000,
        }
    }
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        impl Limits {
            $(
                $(#[$doc])*
                pub fn $name(mut self, value: $ty) -> Self {
                    self.$name = value;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Sets [`http_connections`](Self::http_connections).
    http_connections: usize;
    /// Sets [`header_read_timeout`](Self::header_read_timeout).
    header_read_timeout: Duration;
    /// Sets [`request_body_timeout`](Self::request_body_timeout).
    request_body_timeout: Duration;
    /// Sets [`max_request_body`](Self::max_request_body).
    max_request_body: usize;
    /// Sets [`prelogin_connections`](Self::prelogin_connections).
    prelogin_connections: usize;
    /// Sets [`prelogin_grace`](Self::prelogin_grace).
    prelogin_grace: Duration;
    /// Sets [`login_timeout`](Self::login_timeout).
    login_timeout: Duration;
    /// Sets [`sessions`](Self::sessions).
    sessions: usize;
    /// Sets [`outbound_queue_bytes`](Self::outbound_queue_bytes).
    outbound_queue_bytes: usize;
    /// Sets [`flush_timeout`](Self::flush_timeout).
    flush_timeout: Duration;
    /// Sets [`frame_records`](Self::frame_records).
    frame_records: usize;
    /// Sets [`frame_record_bytes`](Self::frame_record_bytes).
    frame_record_bytes: usize;
    /// Sets [`http_records`](Self::http_records).
    http_records: usize;
    /// Sets [`http_record_bytes`](Self::http_record_bytes).
    http_record_bytes: usize;
    /// Sets [`http_record_body_bytes`](Self::http_record_body_bytes).
    http_record_body_bytes: usize;
    /// Sets [`notification_records`](Self::notification_records).
    notification_records: usize;
    /// Sets [`channel_history`](Self::channel_history).
    channel_history: usize;
}

impl Limits {
    /// Refuses values the service cannot run with, naming the field.
    pub(crate) fn check(&self) -> Result<(), String> {
        let positive = [
            ("http_connections", self.http_connections),
            ("prelogin_connections", self.prelogin_connections),
            ("sessions", self.sessions),
            ("outbound_queue_bytes", self.outbound_queue_bytes),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("limits.{name} must be at least 1"));
        }
        // Each listener's pool is a tokio semaphore, which cannot hold more.
        let most = tokio::sync::Semaphore::MAX_PERMITS;
        if self.http_connections > most {
            return Err(format!("limits.http_connections must be at most {most}"));
        }
        let durations = [
            ("header_read_timeout", self.header_read_timeout),
            ("request_body_timeout", self.request_body_timeout),
            ("prelogin_grace", self.prelogin_grace),
            ("login_timeout", self.login_timeout),
            ("flush_timeout", self.flush_timeout),
        ];
        if let Some((name, _)) = durations.iter().find(|(_, d)| d.is_zero()) {
            return Err(format!("limits.{name} must be longer than zero"));
        }
        Ok(())
    }
}

/// Durations as whole milliseconds in JSON.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// About 30 years: where tokio's own `sleep` and `timeout` put a wait past
/// what the clock can name (`Duration::MAX` as "for ever").
pub(crate) const FOREVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The instant `timeout` from now, at most [`FOREVER`] away, instead of
/// overflowing `Instant + Duration`.
pub(crate) fn deadline(timeout: Duration) -> tokio::time::Instant {
    deadline_from(tokio::time::Instant::now(), timeout)
}

/// [`deadline`] from `now`.
pub(crate) fn deadline_from(now: tokio::time::Instant, timeout: Duration) -> tokio::time::Instant {
    now.checked_add(timeout.min(FOREVER)).unwrap_or(now)
}

/// `10 s`, `0.5 s`: a duration as the close reasons of the login timeout
/// and of an eviction say it.
pub(crate) fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5 s");
        assert_eq!(seconds(Duration::from_millis(1250)), "1.25 s");
    }

    #[test]
    fn zero_budgets_and_timeouts_are_refused_by_name() {
        assert!(Limits::default().check().is_ok());
        let err = Limits::default().sessions(0).check().unwrap_err();
        assert_eq!(err, "limits.sessions must be at least 1");
        let err = Limits::default()
            .login_timeout(Duration::ZERO)
            .check()
            .unwrap_err();
        assert_eq!(err, "limits.login_timeout must be longer than zero");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let err = serde_json::from_str::<Limits>(r#"{"login_timeout": 5}"#).unwrap_err();
        assert!(err.to_string().contains("login_timeout"), "{err}");
    }
}
