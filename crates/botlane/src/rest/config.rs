//! What the REST lane is configured with, its limits, and the HTTP client it
//! builds from them, under the lane's bound on connections in use at once.
//! The client copies its `rest_*` options in here, so that the lane never
//! reads the client's options or state.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::ServiceRestError;
use super::failure;
use crate::share::ShareByKey;

/// What an HTTP client is built from besides constants: the TLS
/// configuration (compared by identity: equal roots share one, see
/// `transport/tls.rs`), the timeout, and whether a proxy is bypassed.
struct HttpKey {
    tls: Weak<rustls::ClientConfig>,
    timeout: Duration,
    no_proxy: bool,
}

impl HttpKey {
    fn same(&self, other: &Self) -> bool {
        Weak::ptr_eq(&self.tls, &other.tls)
            && self.timeout == other.timeout
            && self.no_proxy == other.no_proxy
    }
}

/// The HTTP clients in use. One per option set, shared by every lane with
/// those options: a hosting platform's thousand bots share one connection
/// pool and TLS connector instead of building a thousand. Requests carry
/// each bot's own credential header, and the client keeps no cookies, so
/// sharing it shares nothing of one bot with another.
static HTTP_CLIENTS: ShareByKey<HttpKey, reqwest::Client> = ShareByKey::new();

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

/// The default of the client option `rest_max_connections`: the most
/// requests (hence HTTP/1.1 connections) one lane has in flight at once.
/// Six times what a browser opens per origin, far below what a service or
/// a proxy in front of it serves.
///
/// ```
/// assert_eq!(botlane::rest::DEFAULT_MAX_CONNECTIONS, 32);
/// ```
pub const DEFAULT_MAX_CONNECTIONS: usize = 32;

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
    /// The most requests in flight at once.
    pub(crate) max_connections: usize,
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
    /// (the cleartext exception must not reach a proxy). The one a live
    /// lane with the same settings uses, if any.
    pub(crate) fn http_client(&self) -> Result<Arc<reqwest::Client>, ConfigError> {
        let no_proxy = url::Url::parse(&self.rest_url).is_ok_and(|u| u.scheme() == "http");
        let key = HttpKey {
            tls: Arc::downgrade(&self.tls),
            timeout: self.timeout,
            no_proxy,
        };
        HTTP_CLIENTS.get_or_try_make(key, HttpKey::same, || self.build_http_client(no_proxy))
    }

    fn build_http_client(&self, no_proxy: bool) -> Result<reqwest::Client, ConfigError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // Verbose mode makes hyper-util log every byte read and written
            // through `log` at TRACE: the `verification` header and the
            // exchange's secret and reply. An application's TRACE logger must
            // never see them, so this stays off (pinned by tests/logs/rest_leak.rs).
            .connection_verbose(false)
            .referer(false)
            .timeout(self.timeout)
            .user_agent(concat!("botlane/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(failure::Resolver))
            .use_preconfigured_tls((*self.tls).clone());
        if no_proxy {
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

/// One of the lane's connections, held while a request and its body use
/// it.
pub(crate) type Slot = OwnedSemaphorePermit;

/// The lane's HTTP client and its bound on requests in flight. Each HTTP/1.1
/// request in flight holds a connection of its own, and the client opens
/// one whenever none of its pool is free: without a bound, 1,000
/// concurrent calls opened 1,000 connections to one origin, which a
/// service or a proxy that caps connections makes wait.
pub(crate) struct Http {
    pub(crate) client: Arc<reqwest::Client>,
    slots: Arc<Semaphore>,
    max: usize,
    timeout: Duration,
}

impl Http {
    pub(crate) fn new(config: &RestConfig) -> Result<Self, ConfigError> {
        Ok(Self {
            client: config.http_client()?,
            slots: Arc::new(Semaphore::new(config.max_connections)),
            max: config.max_connections,
            timeout: config.timeout,
        })
    }

    /// Sends `request` once one of the lane's connections is free; the
    /// attempt's timeout (`timeout`, or the lane's) covers the wait for
    /// one and the exchange together. The response with the slot its body
    /// keeps busy. `path` is what an error names.
    pub(crate) async fn send(
        &self,
        path: &str,
        request: reqwest::RequestBuilder,
        timeout: Option<Duration>,
    ) -> Result<(reqwest::Response, Slot), ServiceRestError> {
        let deadline = tokio::time::Instant::now() + timeout.unwrap_or(self.timeout);
        let slot = tokio::time::timeout_at(deadline, Arc::clone(&self.slots).acquire_owned())
            .await
            .ok()
            // The semaphore is never closed: `Err` cannot come.
            .and_then(Result::ok)
            .ok_or_else(|| ServiceRestError::no_connection(path, self.max))?;
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let response = request
            .timeout(left)
            .send()
            .await
            .map_err(|e| ServiceRestError::network(path, e))?;
        Ok((response, slot))
    }
}

#[cfg(test)]
impl Http {
    /// A default HTTP client with one connection, for tests that never
    /// reach a service.
    pub(crate) fn for_tests() -> Self {
        Self {
            client: Arc::new(reqwest::Client::new()),
            slots: Arc::new(Semaphore::new(1)),
            max: 1,
            timeout: Duration::from_secs(5),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config(tls: &Arc<rustls::ClientConfig>, rest_url: &str, timeout: u64) -> RestConfig {
        RestConfig {
            rest_url: rest_url.to_owned(),
            tls: tls.clone(),
            timeout: Duration::from_secs(timeout),
            refresh_margin: Duration::from_secs(1),
            json_limit: DEFAULT_JSON_LIMIT,
            binary_limit: MAX_FILE_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }

    fn tls() -> Arc<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = rustls::RootCertStore::empty();
        Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }

    #[test]
    fn lanes_with_equal_settings_share_one_http_client_while_one_lives() {
        let tls = tls();
        let a = config(&tls, "https://rest.example", 7)
            .http_client()
            .unwrap();
        let b = config(&tls, "https://rest.example", 7)
            .http_client()
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b), "equal settings built two HTTP clients");
        let other_timeout = config(&tls, "https://rest.example", 8)
            .http_client()
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &other_timeout));
        let loopback = config(&tls, "http://127.0.0.1:9", 7).http_client().unwrap();
        assert!(!Arc::ptr_eq(&a, &loopback), "a no-proxy client was shared");
        let other_tls = config(&self::tls(), "https://rest.example", 7)
            .http_client()
            .unwrap();
        assert!(
            !Arc::ptr_eq(&a, &other_tls),
            "another TLS configuration was shared"
        );

        let weak = Arc::downgrade(&a);
        drop((a, b));
        assert!(weak.upgrade().is_none(), "the table kept the client alive");
    }
}
