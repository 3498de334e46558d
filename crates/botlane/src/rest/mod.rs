//! The REST lane, [`Client::rest`](crate::Client::rest): the service's HTTP
//! API under a short-lived scoped credential minted over the realtime
//! session.
//!
//! The first call mints: opcode 638 over the current realtime connection
//! returns a one-time secret, and `POST {rest_url}/auth/verify-session`
//! exchanges it for the value of the `verification` header. The credential
//! is cached and carried on every request; when less than
//! [`rest_refresh_margin`](crate::ClientOptions::rest_refresh_margin)
//! (60 s by default, at most a quarter of its lifetime) is left, measured on
//! a monotonic clock, the next call mints a fresh one first. A 401 drops the
//! credential, mints once and retries once; a second 401 is an error. At most
//! one mint is in flight; concurrent callers wait for it.
//!
//! The credential and the one-time secret are held in [`secrecy`] types, the
//! header is marked sensitive, and neither appears in an error, a log line or
//! a `Debug` output. Redirects are never followed (a 3xx is a
//! [`ServiceRestError`]): an HTTP client carries custom headers across
//! origins when it follows one. The bot token is never sent over HTTP.
//!
//! While the service's flag `BOT_REST_CREDENTIALS` is unset (its default),
//! the first call fails with a [`ServiceActionError`] (opcode 638, code
//! `-7`); that is the service's choice, not a fault of the bot.

mod address;
mod credential;
mod error;
mod init;

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use error::{RestError, ServiceActionError, ServiceRestError};
pub use init::{BinaryResponse, RequestInit};
pub use reqwest::{Method, Response, StatusCode};

use crate::client::{ClientError, ClientOptions, Shared};
use crate::wire::{self, OpCode};
use credential::{Credential, CredentialCache, Minted};
use error::strip_query;

/// The exchange route, outside the service's auth middleware.
const EXCHANGE_PATH: &str = "/auth/verify-session";

/// The header that carries the credential.
const VERIFICATION: HeaderName = HeaderName::from_static("verification");

/// The lane's state inside the client: one HTTP client, built once, and the
/// credential slot.
pub(crate) struct LaneState {
    http: reqwest::Client,
    rest_url: String,
    /// The checked `rest_url`, or why it was refused; checked on first use.
    base: OnceLock<Result<url::Url, RestError>>,
    cache: CredentialCache,
}

impl LaneState {
    /// Builds the HTTP client: the realtime wire's own rustls configuration
    /// (explicit ring provider, webpki roots plus `root_certificates`), no
    /// redirects, no verbose connection
    /// logging, no `Referer`, and no proxy for a loopback `http` origin (the
    /// cleartext exception must not reach a proxy).
    pub(crate) fn new(options: &ClientOptions) -> Result<Self, ClientError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connection_verbose(false)
            .referer(false)
            .timeout(options.rest_timeout)
            .user_agent(concat!("botlane/", env!("CARGO_PKG_VERSION")));
        // The same roots and provider as `wss://`: reqwest's own builder would
        // take the process-default provider, which an application may have
        // replaced or left ambiguous.
        let tls = crate::client::tls_config(&options.root_certificates)?;
        builder = builder.use_preconfigured_tls(tls.as_ref().clone());
        if url::Url::parse(&options.rest_url).is_ok_and(|u| u.scheme() == "http") {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| ClientError::InvalidOption {
            option: "root_certificate",
            rule: format!("the REST lane's HTTP client cannot be built with it ({e})"),
        })?;
        Ok(Self {
            http,
            rest_url: options.rest_url.clone(),
            base: OnceLock::new(),
            cache: CredentialCache::new(options.rest_refresh_margin),
        })
    }

    fn base(&self) -> Result<&url::Url, RestError> {
        self.base
            .get_or_init(|| address::check_rest_url(&self.rest_url))
            .as_ref()
            .map_err(Clone::clone)
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
    shared: Arc<Shared>,
}

impl fmt::Debug for RestLane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestLane")
            .field("rest_url", &self.shared.rest.rest_url)
            .finish_non_exhaustive()
    }
}

impl RestLane {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// Sends a request and resolves with the raw response on 2xx.
    ///
    /// Fails with [`RestError::InvalidRestUrl`] or
    /// [`RestError::InvalidPath`] before anything is sent; with a
    /// [`ServiceActionError`] when the mint is refused; with a
    /// [`ServiceRestError`] on a non-2xx status (after the one re-mint and
    /// retry that a 401 gets) or when no response arrives (status 0).
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
    /// use botlane::rest::Method;
    /// let response = client.rest().request(Method::GET, "/api/files/list", None).await?;
    /// assert!(response.status().is_success());
    /// # Ok(()) }
    /// ```
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        init: Option<RequestInit>,
    ) -> Result<Response, RestError> {
        let lane = &self.shared.rest;
        let base = lane.base()?;
        let parts = init.unwrap_or_default().into_parts()?;
        let url = address::endpoint(base, path, &parts.query)?;
        let shown = strip_query(path);
        let mut retried = false;
        loop {
            let credential = self.credential().await?;
            let response = self
                .send(&method, &url, &parts, &credential)
                .await
                .map_err(|e| ServiceRestError::network(shown, e))?;
            let status = response.status();
            tracing::debug!(%method, path = shown, status = status.as_u16(), "REST request");
            if status.is_success() {
                return Ok(response);
            }
            if status == StatusCode::UNAUTHORIZED {
                lane.cache.invalidate(credential.generation);
                if !retried {
                    retried = true;
                    // Read the body so the connection can be reused.
                    let _ = response.bytes().await;
                    continue;
                }
            }
            return Err(status_error(response, shown).await.into());
        }
    }

    /// Sends a request and parses the 2xx body as JSON.
    ///
    /// Fails like [`request`](Self::request), and with
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
        let shown = strip_query(path);
        let body = response
            .bytes()
            .await
            .map_err(|e| ServiceRestError::network(shown, e))?;
        serde_json::from_slice(&body).map_err(|e| RestError::Decode {
            path: shown.to_owned(),
            source: Some(Arc::new(e)),
        })
    }

    /// Sends a request and returns the 2xx body's bytes with the response
    /// headers.
    ///
    /// Fails like [`request`](Self::request).
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
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ServiceRestError::network(strip_query(path), e))?;
        Ok(BinaryResponse::new(status, headers, bytes))
    }

    async fn credential(&self) -> Result<Arc<Credential>, RestError> {
        self.shared
            .rest
            .cache
            .get(|| mint(self.shared.clone()))
            .await
    }

    async fn send(
        &self,
        method: &Method,
        url: &url::Url,
        parts: &init::Parts,
        credential: &Credential,
    ) -> Result<Response, reqwest::Error> {
        let mut headers = parts.headers.clone();
        // Checked when the credential was minted, so this always succeeds;
        // without a valid value the request goes out without the header and
        // comes back 401.
        if let Ok(mut value) = HeaderValue::from_str(credential.value.expose_secret()) {
            value.set_sensitive(true);
            headers.insert(VERIFICATION, value);
        }
        let mut request = self
            .shared
            .rest
            .http
            .request(method.clone(), url.clone())
            .headers(headers);
        if let Some(body) = &parts.body {
            request = request.body(body.clone());
        }
        if let Some(timeout) = parts.timeout {
            request = request.timeout(timeout);
        }
        request.send().await
    }
}

#[derive(Serialize)]
struct ExchangeRequest<'a> {
    secret: &'a str,
    row_id: &'a str,
}

/// The exchange's answer. No `Debug`: it holds the credential in clear.
#[derive(Deserialize)]
struct ExchangeReply {
    verification: String,
    expires_in: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    error_code: Option<String>,
}

/// Both phases of a mint: opcode 638 on the current realtime connection,
/// then the exchange. Runs as its own task (see [`credential`]).
async fn mint(shared: Arc<Shared>) -> Result<Minted, RestError> {
    let lane = &shared.rest;
    let base = lane.base()?;
    let conn = shared.connection()?;
    tracing::debug!("minting a REST credential (opcode 638)");
    let reply: wire::RestMintReply = conn.request(OpCode::RestMint, &wire::Empty {}).await?;
    if reply.code != 0 {
        tracing::debug!(code = reply.code, "REST credential mint refused");
        return Err(ServiceActionError::rest_mint(reply.code).into());
    }
    let (Some(secret), Some(row_id)) = (reply.secret, reply.row_id) else {
        return Err(ClientError::MalformedReply {
            opcode: OpCode::RestMint.code(),
        }
        .into());
    };
    let secret = SecretString::from(secret);
    let body = serde_json::to_vec(&ExchangeRequest {
        secret: secret.expose_secret(),
        row_id: &row_id,
    })
    .map_err(|_| RestError::InvalidRequest {
        rule: "the exchange body does not serialize".into(),
    })?;
    let url = address::endpoint(base, EXCHANGE_PATH, &[])?;
    let response = lane
        .http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| ServiceRestError::network(EXCHANGE_PATH, e))?;
    drop(secret);
    if !response.status().is_success() {
        return Err(status_error(response, EXCHANGE_PATH).await.into());
    }
    let malformed = || RestError::Decode {
        path: EXCHANGE_PATH.to_owned(),
        source: None,
    };
    let body = response
        .bytes()
        .await
        .map_err(|e| ServiceRestError::network(EXCHANGE_PATH, e))?;
    let reply: ExchangeReply = serde_json::from_slice(&body).map_err(|_| malformed())?;
    let value = SecretString::from(reply.verification);
    if HeaderValue::from_str(value.expose_secret()).is_err() {
        return Err(malformed());
    }
    tracing::debug!(expires_in = reply.expires_in, "REST credential minted");
    Ok(Minted {
        value,
        lifetime: Duration::from_secs(reply.expires_in),
    })
}

/// The [`ServiceRestError`] for a non-2xx response, with the body's
/// `error_code` when it has one.
async fn status_error(response: Response, path: &str) -> ServiceRestError {
    let status = response.status().as_u16();
    let error_code = match response.bytes().await {
        Ok(body) => serde_json::from_slice::<ErrorBody>(&body)
            .ok()
            .and_then(|b| b.error_code),
        Err(_) => None,
    };
    ServiceRestError::status(status, path, error_code)
}
