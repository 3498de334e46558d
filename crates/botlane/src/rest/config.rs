//! What the REST lane is configured with, its limits, and the HTTP client it
//! builds from them. The client copies its `rest_*` options in here, so that
//! the lane never reads the client's options or state.

use std::sync::Arc;
use std::time::Duration;

/// The largest file the service stores, in bytes (100 MiB); the default cap
/// of [`RestLane::binary`](super::RestLane::binary) and
/// [`Response::bytes`](super::Response::bytes), so that downloading any file
/// the service holds fits.
///
/// ```
/// assert_eq!(botlane::rest::MAX_FILE_BYTES, 100 * 1024 * 1024);
/// ```
pub const MAX_FILE_BYTES: usize = 100 * 1024 * 1024;

/// The default cap of a body parsed by [`RestLane::json`](super::RestLane::json)
/// (16 MiB): far above any JSON the service's API returns, far below what
/// would hurt a bot's process.
///
/// ```
/// assert_eq!(botlane::rest::DEFAULT_JSON_LIMIT, 16 * 1024 * 1024);
/// ```
pub const DEFAULT_JSON_LIMIT: usize = 16 * 1024 * 1024;

/// How much of a body the lane reads for itself (the exchange reply, a 401
/// body, an error body) before it drops the connection: these bodies are a
/// few dozen bytes from an honest service.
pub(crate) const LANE_BODY_LIMIT: usize = 4 * 1024;

/// The REST lane's settings.
#[derive(Debug, Clone)]
pub(crate) struct RestConfig {
    /// The REST origin, checked on first use.
    pub(crate) rest_url: String,
    /// The TLS configuration, shared with the realtime wire: an explicit
    /// `ring` provider, the webpki roots plus the caller's roots.
    pub(crate) tls: Arc<rustls::ClientConfig>,
    /// The time bound of one request attempt, body included.
    pub(crate) timeout: Duration,
    /// How long before expiry the credential is replaced.
    pub(crate) refresh_margin: Duration,
    /// The cap of a body parsed as JSON.
    pub(crate) json_limit: usize,
    /// The cap of a body read whole (`binary`, `Response::bytes`).
    pub(crate) binary_limit: usize,
}

/// A setting the HTTP client cannot be built with.
#[derive(Debug)]
pub(crate) struct ConfigError {
    /// The option at fault, as the client names it.
    pub(crate) option: &'static str,
    /// Why, in words.
    pub(crate) rule: String,
}

impl RestConfig {
    /// The HTTP client: the realtime wire's rustls configuration (so both
    /// lanes trust the same roots and never depend on the process-default
    /// provider, which an application may have replaced or left ambiguous),
    /// no redirects, no `Referer`, and no proxy for a loopback `http` origin
    /// (the cleartext exception must not reach a proxy).
    pub(crate) fn http_client(&self) -> Result<reqwest::Client, ConfigError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // Verbose mode makes hyper-util log every byte read and written
            // through `log` at TRACE: the `verification` header and the
            // exchange's secret and reply. An application's TRACE logger must
            // never see them, so this stays off (pinned by tests/rest_leak.rs).
            .connection_verbose(false)
            .referer(false)
            .timeout(self.timeout)
            .user_agent(concat!("botlane/", env!("CARGO_PKG_VERSION")))
            .use_preconfigured_tls((*self.tls).clone());
        if url::Url::parse(&self.rest_url).is_ok_and(|u| u.scheme() == "http") {
            builder = builder.no_proxy();
        }
        builder.build().map_err(|e| ConfigError {
            option: "root_certificate",
            rule: format!(
                "the REST lane's HTTP client cannot be built with the TLS configuration ({e})"
            ),
        })
    }
}
