//! The REST lane, [`Client::rest`](crate::Client::rest): the service's HTTP
//! API under a short-lived scoped credential minted over the realtime
//! session.
//!
//! The first call mints: opcode 638 over the current realtime connection
//! returns a one-time secret, and `POST {rest_url}/auth/verify-session`
//! exchanges it for the value of the `verification` header. The credential
//! is cached and carried on every request. Its lifetime is the exchange's
//! `expires_in` (15 minutes when absent), believed between 30 s and 15
//! minutes; when less than
//! [`rest_refresh_margin`](crate::ClientOptions::rest_refresh_margin)
//! (60 s by default, at most a quarter of its lifetime) is left, measured on
//! a monotonic clock, the next call mints a fresh one first. A 401 drops the
//! credential, mints once and retries once; a second 401 is an error. At most
//! one mint is in flight; concurrent callers wait for it.
//!
//! A lane has at most
//! [`rest_max_connections`](crate::ClientOptions::rest_max_connections)
//! ([`DEFAULT_MAX_CONNECTIONS`]) requests in flight, the mint's exchange
//! included: each holds one HTTP/1.1 connection until its response body is
//! read or dropped, and further calls wait for one, within their timeout.
//!
//! Bodies are bounded: the ones the lane reads for itself (the exchange
//! reply, a 401 or error body) up to 4 KiB, then the connection is dropped
//! rather than drained; [`json`](RestLane::json) up to
//! [`rest_json_limit`](crate::ClientOptions::rest_json_limit)
//! ([`DEFAULT_JSON_LIMIT`]); [`binary`](RestLane::binary) and
//! [`Response::bytes`] up to
//! [`rest_binary_limit`](crate::ClientOptions::rest_binary_limit)
//! ([`MAX_FILE_BYTES`]); [`Response::chunk`] and [`Response::into_stream`]
//! stream without a cap.
//!
//! The credential and the one-time secret are held in [`secrecy`] types, the
//! header is marked sensitive, and neither appears in an error, a log line or
//! a `Debug` output. Redirects are never followed (a 3xx is a
//! [`ServiceRestError`]): an HTTP client carries custom headers across
//! origins when it follows one. The bot token is never sent over HTTP.
//!
//! The lane depends on the realtime session only through a small handle
//! that sends opcode 638 and returns its reply (`Mint`), and on its own
//! configuration; the client builds both.
//!
//! While the service's flag `BOT_REST_CREDENTIALS` is unset (its default),
//! the first call fails with a [`ServiceActionError`](crate::ServiceActionError) (opcode 638, code
//! `-7`); that is the service's choice, not a fault of the bot.

mod address;
mod config;
mod credential;
pub(crate) mod error;
mod failure;
pub(crate) mod init;
mod mint;
mod response;

use std::fmt;
use std::sync::{Arc, OnceLock};

use http::header::{HeaderName, HeaderValue};
use secrecy::ExposeSecret;
use serde::de::DeserializeOwned;
use serde::Deserialize;

pub use config::{DEFAULT_JSON_LIMIT, DEFAULT_MAX_CONNECTIONS, MAX_FILE_BYTES};
pub(crate) use error::{RestError, ServiceRestError};
pub use http::{HeaderMap, Method, StatusCode};
pub(crate) use init::{BinaryResponse, RequestInit};
pub use response::{BodyStream, Response};

pub(crate) use config::{ConfigError, RestConfig};
pub(crate) use mint::Mint;

use crate::telemetry::Telemetry;
use config::{Http, LANE_BODY_LIMIT};
use credential::{Credential, CredentialCache};
use error::strip_query;
use response::read_capped;

/// The header that carries the credential.
const VERIFICATION: HeaderName = HeaderName::from_static("verification");

/// The cap of `json`, as an error names it.
const JSON_CAP: &str = "the client option rest_json_limit";

/// The cap on an error body, as an error would name it.
const ERROR_BODY_CAP: &str = "the lane's 4 KiB limit on the bodies it reads itself";

/// Everything one lane owns: the HTTP client, built once, with the bound
/// on its connections, the configuration, the credential slot, and the
/// handle that mints.
struct Lane {
    http: Http,
    config: RestConfig,
    /// The checked `rest_url`, or why it was refused; checked on first use.
    base: OnceLock<Result<url::Url, RestError>>,
    cache: CredentialCache,
    minter: Arc<dyn Mint>,
    /// Counts mints, re-mints and calls (the client's).
    telemetry: Arc<Telemetry>,
}

impl Lane {
    fn base(&self) -> Result<&url::Url, RestError> {
        self.base
            .get_or_init(|| address::check_rest_url(&self.config.rest_url))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// A lane whose HTTP client is built but which has no [`Mint`] yet: the
/// client builds this first (the fallible step), then binds the handle
/// that needs the client's own state.
pub(crate) struct PreparedLane {
    http: Http,
    config: RestConfig,
}

impl PreparedLane {
    /// Builds the HTTP client; fails on a root certificate it cannot use.
    pub(crate) fn new(config: RestConfig) -> Result<Self, ConfigError> {
        Ok(Self {
            http: Http::new(&config)?,
            config,
        })
    }

    /// The lane, minting through `minter`, counting in `telemetry`.
    pub(crate) fn bind(self, minter: Arc<dyn Mint>, telemetry: Arc<Telemetry>) -> RestLane {
        let cache = CredentialCache::new(self.config.refresh_margin);
        RestLane {
            inner: Arc::new(Lane {
                http: self.http,
                config: self.config,
                base: OnceLock::new(),
                cache,
                minter,
                telemetry,
            }),
        }
    }
}

/// The REST lane of a [`Client`](crate::Client); cheap to clone. Paths are
/// origin-relative (`/api/files/list`) and include their prefix; there are
/// no per-route wrappers.
///
/// ```no_run
/// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
/// use botlane::{RequestInit, rest::Method};
///
/// #[derive(serde::Deserialize)]
/// struct Files { files: Vec<serde_json::Value> }
///
/// let rest = client.rest();
/// let list: Files = rest.json(Method::GET, "/api/files/list", None).await?;
/// let file = rest
///     .binary(Method::GET, "/api/files/f1/download", Some(RequestInit::new().query("roomIds", "s1")))
///     .await?;
/// println!("{} files; the first is {} bytes", list.files.len(), file.bytes.len());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RestLane {
    inner: Arc<Lane>,
}

impl fmt::Debug for RestLane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestLane")
            .field("rest_url", &self.inner.config.rest_url)
            .finish_non_exhaustive()
    }
}

impl RestLane {
    /// Sends a request and resolves with the response on 2xx, its body not
    /// read yet (see [`Response`]).
    ///
    /// Fails with [`RestError::InvalidRestUrl`] or
    /// [`RestError::InvalidPath`] before anything is sent; with a
    /// [`ServiceActionError`](crate::ServiceActionError) when the mint is refused; with a
    /// [`ServiceRestError`] on a non-2xx status (after the one re-mint and
    /// retry that a 401 gets) or when no response arrives (status 0).
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
    /// use botlane::rest::Method;
    /// let response = client.rest().request(Method::GET, "/api/files/list", None).await?;
    /// assert!(response.status().is_success());
    /// let body = response.bytes().await?;
    /// # Ok(()) }
    /// ```
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        init: Option<RequestInit>,
    ) -> Result<Response, RestError> {
        let lane = &self.inner;
        let base = lane.base()?;
        let parts = init.unwrap_or_default().into_parts()?;
        let url = address::endpoint(base, path, &parts.query)?;
        let shown = strip_query(path);
        let mut retried = false;
        loop {
            let credential = self.credential().await?;
            let sent = self.send(&method, &url, &parts, &credential, shown).await;
            lane.telemetry
                .rest_request(sent.as_ref().ok().map(|(r, _)| r.status().as_u16()));
            let (response, slot) = sent?;
            let status = response.status();
            // The path stays out: it may carry ids taken from chat input.
            tracing::debug!(%method, status = status.as_u16(), "REST request");
            if status.is_success() {
                let limit = lane.config.binary_limit;
                return Ok(Response::new(response, shown, limit, slot));
            }
            if status == StatusCode::UNAUTHORIZED {
                lane.cache.invalidate(credential.generation);
                if !retried {
                    retried = true;
                    lane.telemetry.rest_remint();
                    // A short body is read so the connection can be reused;
                    // a long one is dropped unread, closing the connection.
                    let _ = read_capped(response, shown, LANE_BODY_LIMIT, ERROR_BODY_CAP).await;
                    continue;
                }
            }
            return Err(status_error(response, shown).await.into());
        }
    }

    /// Sends a request and parses the 2xx body as JSON.
    ///
    /// Fails like [`request`](Self::request); with
    /// [`RestError::BodyTooLarge`] when the body is over the client option
    /// `rest_json_limit` ([`DEFAULT_JSON_LIMIT`] by default); and with
    /// [`RestError::Decode`] when the body is not a `T`.
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
    /// use botlane::rest::Method;
    /// let list: serde_json::Value = client.rest().json(Method::GET, "/api/files/list", None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        init: Option<RequestInit>,
    ) -> Result<T, RestError> {
        let response = self.request(method, path, init).await?;
        let limit = self.inner.config.json_limit;
        let body = response.read_whole(limit, JSON_CAP).await?;
        serde_json::from_slice(&body).map_err(|e| RestError::decode(strip_query(path), &e))
    }

    /// Sends a request and returns the 2xx body's bytes with the response
    /// headers.
    ///
    /// Fails like [`request`](Self::request), and with
    /// [`RestError::BodyTooLarge`] when the body is over the client option
    /// `rest_binary_limit` ([`MAX_FILE_BYTES`] by default); stream a larger
    /// body with [`request`](Self::request) and [`Response::chunk`].
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
    /// use botlane::{RequestInit, rest::Method};
    /// let file = client
    ///     .rest()
    ///     .binary(Method::GET, "/api/files/f1/download", Some(RequestInit::new().query("roomIds", "s1")))
    ///     .await?;
    /// let iv = file.header("X-File-IV");
    /// # Ok(()) }
    /// ```
    pub async fn binary(
        &self,
        method: Method,
        path: &str,
        init: Option<RequestInit>,
    ) -> Result<BinaryResponse, RestError> {
        let response = self.request(method, path, init).await?;
        let (status, headers) = (response.status(), response.headers().clone());
        let bytes = response.bytes().await?;
        Ok(BinaryResponse::new(status, headers, bytes))
    }

    async fn credential(&self) -> Result<Arc<Credential>, RestError> {
        let lane = self.inner.clone();
        self.inner
            .cache
            .get(move || async move {
                let base = lane.base()?;
                let minted = mint::run(&*lane.minter, &lane.http, base).await;
                lane.telemetry.rest_mint(minted.is_ok());
                minted
            })
            .await
    }

    async fn send(
        &self,
        method: &Method,
        url: &url::Url,
        parts: &init::Parts,
        credential: &Credential,
        shown: &str,
    ) -> Result<(reqwest::Response, config::Slot), ServiceRestError> {
        let mut headers = parts.headers.clone();
        // Checked when the credential was minted, so this always succeeds;
        // without a valid value the request goes out without the header and
        // comes back 401.
        if let Ok(mut value) = HeaderValue::from_str(credential.value.expose_secret()) {
            value.set_sensitive(true);
            headers.insert(VERIFICATION, value);
        }
        let http = &self.inner.http;
        let mut request = http
            .client
            .request(method.clone(), url.clone())
            .headers(headers);
        if let Some(body) = &parts.body {
            request = request.body(body.clone());
        }
        http.send(shown, request, parts.timeout).await
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error_code: Option<String>,
}

/// The [`ServiceRestError`] for a non-2xx response, with the body's
/// `error_code` when it has one. The body is read up to 4 KiB; a longer one
/// is dropped unread (and its connection closed), without an `error_code`.
async fn status_error(response: reqwest::Response, path: &str) -> ServiceRestError {
    let status = response.status().as_u16();
    let error_code = read_capped(response, path, LANE_BODY_LIMIT, ERROR_BODY_CAP)
        .await
        .ok()
        .and_then(|body| serde_json::from_slice::<ErrorBody>(&body).ok())
        .and_then(|b| b.error_code);
    ServiceRestError::new(status, path, error_code)
}
