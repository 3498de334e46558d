//! Client options: the spec's table plus the timings botlane needs.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;

use super::error::ClientError;
use crate::commands::DEFAULT_COMMAND_PREFIX;

/// The service's public REST origin, used when `rest_url` is not set.
pub const DEFAULT_REST_URL: &str = "https://rest.botlane.chat";

/// How a [`Client`](crate::Client) connects. Built with [`ClientOptions::new`]
/// and the builder methods; checked by [`Client::new`](crate::Client::new).
///
/// ```
/// use std::time::Duration;
/// use botlane::ClientOptions;
///
/// let options = ClientOptions::new("bot-token", "bot.keystore", "ws://127.0.0.1:9000/ws")
///     .command_prefix("!")
///     .heartbeat_interval(Duration::from_secs(10));
/// assert_eq!(options.command_prefix, "!");
/// // The token never shows in Debug output.
/// assert!(!format!("{options:?}").contains("bot-token"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The long-lived bot token, presented once per login and nowhere else.
    pub token: SecretString,
    /// Where the keystore file lives (created on first run).
    pub keystore_path: PathBuf,
    /// The realtime wire's address (`ws://` or `wss://`).
    pub url: String,
    /// The REST service's origin; `https` except for loopback hosts.
    pub rest_url: String,
    /// Per-frame and per-dispatch diagnostics at DEBUG level through `tracing`
    /// (opcodes, sizes, decisions; never payloads). Secrets are never logged either way.
    pub debug: bool,
    /// The text-lane prefix; non-empty, without whitespace.
    pub command_prefix: String,
    /// How often to send a heartbeat; an unanswered one ends the connection.
    pub heartbeat_interval: Duration,
    /// How long a request waits for its reply before failing.
    pub request_timeout: Duration,
    /// The first reconnect delay; it doubles per failed attempt.
    pub reconnect_initial: Duration,
    /// The longest reconnect delay.
    pub reconnect_max: Duration,
    /// Extra root certificates (DER) the REST lane trusts, besides the
    /// webpki roots: for a service with a private or self-signed CA.
    pub rest_root_certificates: Vec<Vec<u8>>,
    /// How long one REST request (each attempt) may take before it fails
    /// with status 0.
    pub rest_timeout: Duration,
    /// How long before its expiry the REST credential is replaced (at most a
    /// quarter of its lifetime is given up); 60 s by default.
    pub rest_refresh_margin: Duration,
    /// The largest body `rest().json` parses, in bytes;
    /// [`DEFAULT_JSON_LIMIT`](crate::rest::DEFAULT_JSON_LIMIT) (16 MiB) by default.
    pub rest_json_limit: usize,
    /// The largest body `rest().binary` and `Response::bytes` read, in
    /// bytes; [`MAX_FILE_BYTES`](crate::rest::MAX_FILE_BYTES) (100 MiB) by
    /// default. Stream larger bodies with `Response::chunk`.
    pub rest_binary_limit: usize,
}

impl ClientOptions {
    /// Options with the spec's defaults (`rest_url` = [`DEFAULT_REST_URL`],
    /// `command_prefix` = `/`, `debug` off).
    pub fn new(
        token: impl Into<String>,
        keystore_path: impl Into<PathBuf>,
        url: impl Into<String>,
    ) -> Self {
        Self {
            token: SecretString::from(token.into()),
            keystore_path: keystore_path.into(),
            url: url.into(),
            rest_url: DEFAULT_REST_URL.to_owned(),
            debug: false,
            command_prefix: DEFAULT_COMMAND_PREFIX.to_owned(),
            heartbeat_interval: Duration::from_secs(15),
            request_timeout: Duration::from_secs(30),
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(30),
            rest_root_certificates: Vec::new(),
            rest_timeout: Duration::from_secs(30),
            rest_refresh_margin: Duration::from_secs(60),
            rest_json_limit: crate::rest::DEFAULT_JSON_LIMIT,
            rest_binary_limit: crate::rest::MAX_FILE_BYTES,
        }
    }

    /// Sets `rest_url`.
    #[must_use]
    pub fn rest_url(mut self, rest_url: impl Into<String>) -> Self {
        self.rest_url = rest_url.into();
        self
    }

    /// Sets `debug`.
    #[must_use]
    pub fn debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }

    /// Sets the text-lane prefix.
    #[must_use]
    pub fn command_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.command_prefix = prefix.into();
        self
    }

    /// Sets the heartbeat interval.
    #[must_use]
    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat_interval = interval;
        self
    }

    /// Sets the request timeout.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets the reconnect delays (first and longest).
    #[must_use]
    pub fn reconnect_delays(mut self, initial: Duration, max: Duration) -> Self {
        self.reconnect_initial = initial;
        self.reconnect_max = max;
        self
    }

    /// Adds a root certificate (DER) for the REST lane to trust.
    ///
    /// ```
    /// # let der: Vec<u8> = Vec::new();
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")
    ///     .rest_url("https://127.0.0.1:8443")
    ///     .rest_root_certificate(der);
    /// assert_eq!(options.rest_root_certificates.len(), 1);
    /// ```
    #[must_use]
    pub fn rest_root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.rest_root_certificates.push(der.into());
        self
    }

    /// Sets the REST request timeout.
    #[must_use]
    pub fn rest_timeout(mut self, timeout: Duration) -> Self {
        self.rest_timeout = timeout;
        self
    }

    /// Sets how long before its expiry the REST credential is replaced.
    #[must_use]
    pub fn rest_refresh_margin(mut self, margin: Duration) -> Self {
        self.rest_refresh_margin = margin;
        self
    }

    /// Sets the largest body `rest().json` parses, in bytes.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").rest_json_limit(1 << 20);
    /// assert_eq!(options.rest_json_limit, 1 << 20);
    /// ```
    #[must_use]
    pub fn rest_json_limit(mut self, bytes: usize) -> Self {
        self.rest_json_limit = bytes;
        self
    }

    /// Sets the largest body `rest().binary` and `Response::bytes` read, in
    /// bytes.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").rest_binary_limit(1 << 30);
    /// assert_eq!(options.rest_binary_limit, 1 << 30);
    /// ```
    #[must_use]
    pub fn rest_binary_limit(mut self, bytes: usize) -> Self {
        self.rest_binary_limit = bytes;
        self
    }

    /// Checks every option; the error names the option and the rule.
    pub(crate) fn validate(&self) -> Result<(), ClientError> {
        use secrecy::ExposeSecret;
        let invalid =
            |option: &'static str, rule: String| ClientError::InvalidOption { option, rule };
        if self.token.expose_secret().is_empty() {
            return Err(invalid("token", "must not be empty".into()));
        }
        if self.command_prefix.is_empty() {
            return Err(invalid("command_prefix", "must not be empty".into()));
        }
        if self.command_prefix.chars().any(char::is_whitespace) {
            return Err(invalid(
                "command_prefix",
                "must not contain whitespace".into(),
            ));
        }
        match url::Url::parse(&self.url) {
            Ok(u) if matches!(u.scheme(), "ws" | "wss") && u.host().is_some() => {}
            Ok(u) => {
                return Err(invalid(
                    "url",
                    format!(
                        "must be a ws:// or wss:// address with a host, not scheme {:?}",
                        u.scheme()
                    ),
                ))
            }
            Err(e) => return Err(invalid("url", format!("is not a valid url ({e})"))),
        }
        // The https rule of rest_url is checked on first use, as the spec asks;
        // a value that is not a URL at all is refused now.
        if let Err(e) = url::Url::parse(&self.rest_url) {
            return Err(invalid("rest_url", format!("is not a valid url ({e})")));
        }
        if self.rest_timeout.is_zero() {
            return Err(invalid("rest_timeout", "must be above zero".into()));
        }
        if self.rest_json_limit == 0 {
            return Err(invalid("rest_json_limit", "must be above zero".into()));
        }
        if self.rest_binary_limit == 0 {
            return Err(invalid("rest_binary_limit", "must be above zero".into()));
        }
        if self.heartbeat_interval.is_zero() || self.request_timeout.is_zero() {
            return Err(invalid(
                "heartbeat_interval/request_timeout",
                "must be above zero".into(),
            ));
        }
        if self.reconnect_initial.is_zero() || self.reconnect_max < self.reconnect_initial {
            return Err(invalid(
                "reconnect_delays",
                "the first delay must be above zero and not above the longest".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ClientOptions {
        ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws")
    }

    #[test]
    fn defaults_follow_the_spec() {
        let o = base();
        assert_eq!(o.rest_url, DEFAULT_REST_URL);
        assert_eq!(o.command_prefix, "/");
        assert!(!o.debug);
        assert!(o.validate().is_ok());
    }

    #[test]
    fn bad_options_are_named() {
        let cases = [
            (base().command_prefix(""), "command_prefix"),
            (base().command_prefix("! "), "command_prefix"),
            (ClientOptions::new("", "k", "ws://h/ws"), "token"),
            (ClientOptions::new("t", "k", "http://h/ws"), "url"),
            (ClientOptions::new("t", "k", "not a url"), "url"),
            (base().rest_url("::"), "rest_url"),
            (base().rest_timeout(Duration::ZERO), "rest_timeout"),
            (base().rest_json_limit(0), "rest_json_limit"),
            (base().rest_binary_limit(0), "rest_binary_limit"),
            (
                base().heartbeat_interval(Duration::ZERO),
                "heartbeat_interval",
            ),
        ];
        for (options, name) in cases {
            let err = options.validate().expect_err(name).to_string();
            assert!(err.contains(name), "{err}");
        }
    }
}
