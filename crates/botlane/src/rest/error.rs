//! The REST lane's errors.
//!
//! No message, `Debug` output or source chain here ever holds the bot
//! token, the one-time secret, the credential or a response body: the
//! errors are built from status codes, `error_code` strings, query-stripped
//! paths and botlane's own descriptions only, and a wrapped `reqwest` error
//! has its URL removed. Each `Display` is complete on its own; `source()` is
//! only the HTTP client's error behind a status 0, whose text `Display` does
//! not repeat: it says instead what kind of failure that was (`failure.rs`).

use std::sync::Arc;

use super::failure::Failure;
use crate::wire::{OpCode, ReplyCode};

/// The service refused an opcode request; for the REST lane, the credential
/// mint (opcode 638).
///
/// ```
/// use botlane::ServiceActionError;
///
/// let err = ServiceActionError::rest_mint(-7);
/// assert_eq!((err.opcode, err.code), (638, -7));
/// assert!(err.message.contains("BOT_REST_CREDENTIALS"));
/// assert!(err.to_string().contains("not at fault"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the service refused opcode {opcode} with code {code}: {message}")]
#[non_exhaustive]
pub struct ServiceActionError {
    /// The refused opcode (638 for the credential mint).
    pub opcode: u16,
    /// The service's reply code.
    pub code: i32,
    /// What the code means, in words.
    pub message: String,
}

impl ServiceActionError {
    /// A refusal of `opcode` with `code`, `message` saying what the code
    /// means (for a handler's tests, or a wrapper of the lane).
    ///
    /// ```
    /// use botlane::ServiceActionError;
    /// let err = ServiceActionError::new(638, -9, "rate limited");
    /// assert_eq!(err.to_string(), "the service refused opcode 638 with code -9: rate limited");
    /// ```
    pub fn new(opcode: u16, code: i32, message: impl Into<String>) -> Self {
        Self {
            opcode,
            code,
            message: message.into(),
        }
    }

    /// The refusal of a REST credential mint (opcode 638) with this code:
    /// `-7` flag off, `-1` not a bot session, `-9` rate limited, `-2` server
    /// error; any other code is reported as such.
    ///
    /// ```
    /// use botlane::ServiceActionError;
    /// assert!(ServiceActionError::rest_mint(-9).message.contains("rate limited"));
    /// ```
    pub fn rest_mint(code: i32) -> Self {
        let message = match code {
            -7 => "bot REST credentials are disabled because the server flag \
                   BOT_REST_CREDENTIALS is unset (the default); this is expected and \
                   the bot is not at fault"
                .to_owned(),
            -1 => "only a bot session can mint a REST credential, and this session is not one"
                .to_owned(),
            -9 => "rate limited: too many REST credential mints; try again later".to_owned(),
            -2 => "the server failed to mint a REST credential (server error)".to_owned(),
            other => format!("the server refused to mint a REST credential (code {other})"),
        };
        Self {
            opcode: OpCode::RestMint.code(),
            code,
            message,
        }
    }

    /// Whether this is the credential mint's refusal with `reply`.
    fn is_mint(&self, reply: ReplyCode) -> bool {
        self.opcode == OpCode::RestMint.code() && self.code == reply.code()
    }

    /// The REST lane is off on this service (opcode 638, code `-7`: the
    /// server flag `BOT_REST_CREDENTIALS` is unset, its default): expected,
    /// and not the bot's fault. [`RestError::is_lane_off`] asks the same of
    /// a lane call's error.
    ///
    /// ```
    /// use botlane::ServiceActionError;
    /// assert!(ServiceActionError::rest_mint(-7).is_lane_off());
    /// assert!(!ServiceActionError::rest_mint(-9).is_lane_off());
    /// // Another opcode's -7 is not the lane being off.
    /// assert!(!ServiceActionError::new(640, -7, "flag off").is_lane_off());
    /// ```
    pub fn is_lane_off(&self) -> bool {
        self.is_mint(ReplyCode::FlagOff)
    }

    /// The session minting is not a bot's (opcode 638, code `-1`).
    ///
    /// ```
    /// assert!(botlane::ServiceActionError::rest_mint(-1).is_not_bot_session());
    /// ```
    pub fn is_not_bot_session(&self) -> bool {
        self.is_mint(ReplyCode::NotBot)
    }

    /// Too many mints: try again later (opcode 638, code `-9`).
    ///
    /// ```
    /// assert!(botlane::ServiceActionError::rest_mint(-9).is_rate_limited());
    /// ```
    pub fn is_rate_limited(&self) -> bool {
        self.is_mint(ReplyCode::RateLimited)
    }

    /// The service failed to mint (opcode 638, code `-2`).
    ///
    /// ```
    /// assert!(botlane::ServiceActionError::rest_mint(-2).is_server_error());
    /// ```
    pub fn is_server_error(&self) -> bool {
        self.is_mint(ReplyCode::ServerError)
    }
}

/// The REST service answered outside 2xx, or no answer came at all
/// (`status` 0). A status 0 says what happened instead: a timeout, a DNS or
/// TLS failure, a refused connection, a response head too large or not
/// HTTP, a connection cut before the response's head or body was whole.
///
/// `path` is the origin-relative path of the request with its query string
/// stripped. A redirect (3xx) is reported here too: the lane never follows
/// one, because the credential header would travel with it.
///
/// ```
/// # async fn demo(client: botlane::Client) {
/// use botlane::{RestError, rest::Method};
///
/// match client.rest().request(Method::GET, "/api/emoji/rooms", None).await {
///     Err(RestError::Rest(e)) if e.status == 403 => {
///         assert_eq!(e.error_code.as_deref(), Some("scope_forbidden"));
///     }
///     other => println!("{other:?}"),
/// }
/// # }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", self.describe())]
#[non_exhaustive]
pub struct ServiceRestError {
    /// The HTTP status; 0 when no response arrived.
    pub status: u16,
    /// The request's path, query string stripped.
    pub path: String,
    /// The service's `error_code`, when its error body had one.
    pub error_code: Option<String>,
    /// What failed underneath when no response arrived (URL removed).
    #[source]
    source: Option<Arc<reqwest::Error>>,
    /// What kind of failure a status 0 was.
    failure: Option<Failure>,
}

impl ServiceRestError {
    /// The service answered `status` to `path` (query string stripped),
    /// with the `error_code` of its body when it had one (for a handler's
    /// tests, or a wrapper of the lane). Status 0 means no answer came.
    ///
    /// ```
    /// use botlane::ServiceRestError;
    /// let err = ServiceRestError::new(403, "/api/emoji/rooms", Some("scope_forbidden".into()));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "the REST service answered 403 to /api/emoji/rooms (error_code \"scope_forbidden\")"
    /// );
    /// ```
    pub fn new(status: u16, path: &str, error_code: Option<String>) -> Self {
        Self {
            status,
            path: path.to_owned(),
            error_code,
            source: None,
            failure: None,
        }
    }

    pub(crate) fn network(path: &str, err: reqwest::Error) -> Self {
        Self {
            status: 0,
            path: path.to_owned(),
            error_code: None,
            failure: Some(Failure::of(&err)),
            source: Some(Arc::new(err.without_url())),
        }
    }

    /// No connection of the lane's `max` came free within the timeout.
    pub(crate) fn no_connection(path: &str, max: usize) -> Self {
        Self {
            status: 0,
            path: path.to_owned(),
            error_code: None,
            source: None,
            failure: Some(Failure::NoConnection { max }),
        }
    }

    fn describe(&self) -> String {
        let mut text = match self.status {
            0 => format!(
                "no response from the REST service for {}: {}",
                self.path,
                self.failure.unwrap_or(Failure::Other).describe()
            ),
            s @ 300..=399 => format!(
                "the REST service answered {s} to {}: a redirect, which the lane never \
                 follows on credential-bearing requests",
                self.path
            ),
            s => format!("the REST service answered {s} to {}", self.path),
        };
        if let Some(code) = &self.error_code {
            text.push_str(&format!(" (error_code {code:?})"));
        }
        text
    }
}

/// Everything a REST lane call can fail with.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RestError {
    /// The credential mint was refused (opcode 638); see its message.
    #[error(transparent)]
    Action(#[from] ServiceActionError),
    /// The REST service answered outside 2xx, or did not answer.
    #[error(transparent)]
    Rest(#[from] ServiceRestError),
    /// `rest_url` breaks the https rule (or another rule of an origin);
    /// nothing was sent.
    #[error("invalid rest_url {url}: {rule}")]
    InvalidRestUrl {
        /// The URL's scheme, host and port (nothing else of it).
        url: String,
        /// The rule it breaks.
        rule: String,
    },
    /// The path is not origin-relative; nothing was sent.
    #[error("invalid REST path {path:?}: {rule}")]
    InvalidPath {
        /// The path, query string stripped.
        path: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The [`RequestInit`](super::RequestInit) holds something HTTP cannot
    /// carry; nothing was sent.
    #[error("invalid REST request: {rule}")]
    InvalidRequest {
        /// What is wrong (never a header value).
        rule: String,
    },
    /// A credential is needed and there is no realtime session to mint it
    /// on: not logged in, shut down, the client is gone, or a reconnect did
    /// not succeed within the request timeout.
    #[error("the REST lane mints its credential over the realtime session, and there is none (not logged in, shut down, or still reconnecting after the request timeout)")]
    NotConnected,
    /// The realtime request for a credential (opcode 638) failed: timeout,
    /// connection closed, or a malformed reply.
    #[error("the realtime request for a REST credential (opcode 638) failed: {reason}")]
    Realtime {
        /// What failed, in words.
        reason: String,
    },
    /// The credential mint stopped before finishing (its runtime shut down).
    #[error("the REST credential mint was interrupted before it finished")]
    MintInterrupted,
    /// A body is larger than the cap that applies to it; the lane stopped
    /// reading and dropped the connection.
    #[error("the response body of {path} is over {limit} bytes, the cap set by {cap}; the lane stopped reading it and dropped the connection")]
    BodyTooLarge {
        /// The request's path, query string stripped.
        path: String,
        /// The cap in bytes.
        limit: usize,
        /// What sets the cap: a client option (`rest_json_limit`,
        /// `rest_binary_limit`), the `limit` of a call, or the lane's own
        /// limit for the bodies it reads itself.
        cap: &'static str,
    },
    /// A 2xx body is not the JSON expected.
    #[error("the response to {path} is not the JSON expected: {reason}")]
    Decode {
        /// The request's path, query string stripped.
        path: String,
        /// What is wrong and where (line and column), never the body's text.
        reason: String,
    },
}

impl RestError {
    /// The REST lane is off on this service: the credential mint was
    /// refused with code `-7` ([`ServiceActionError::is_lane_off`]). A bot
    /// answers with a word on it, rather than an error.
    ///
    /// ```
    /// use botlane::{RestError, ServiceActionError};
    /// assert!(RestError::from(ServiceActionError::rest_mint(-7)).is_lane_off());
    /// assert!(!RestError::NotConnected.is_lane_off());
    /// ```
    pub fn is_lane_off(&self) -> bool {
        matches!(self, Self::Action(refused) if refused.is_lane_off())
    }

    /// The HTTP status of a [`ServiceRestError`], if this is one.
    ///
    /// ```
    /// use botlane::RestError;
    /// assert_eq!(RestError::NotConnected.status(), None);
    /// ```
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Rest(e) => Some(e.status),
            _ => None,
        }
    }
}

impl RestError {
    /// A [`RestError::Decode`] for `err`, described by its category and
    /// position only: serde's own text may quote the body.
    pub(crate) fn decode(path: &str, err: &serde_json::Error) -> Self {
        use serde_json::error::Category;
        let what = match err.classify() {
            Category::Syntax => "not valid JSON",
            Category::Data => {
                "valid JSON of the wrong shape (a wrong type, or a missing or unknown field)"
            }
            Category::Eof => "JSON that ends early",
            Category::Io => "a body that could not be read",
        };
        Self::Decode {
            path: path.to_owned(),
            reason: format!("{what} at line {} column {}", err.line(), err.column()),
        }
    }
}

/// `path` without its query string or fragment.
pub(crate) fn strip_query(path: &str) -> &str {
    path.split(['?', '#']).next().unwrap_or(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flag_off_names_the_flag_and_clears_the_bot() {
        let e = RestError::from(ServiceActionError::rest_mint(-7));
        let text = e.to_string();
        assert!(text.contains("opcode 638"), "{text}");
        assert!(text.contains("code -7"), "{text}");
        assert!(text.contains("BOT_REST_CREDENTIALS is unset"), "{text}");
        assert!(text.contains("not at fault"), "{text}");
    }

    #[test]
    fn every_refusal_code_has_its_own_message() {
        let messages: Vec<String> = [-7, -1, -9, -2, -42]
            .into_iter()
            .map(|c| ServiceActionError::rest_mint(c).message)
            .collect();
        assert!(messages[1].contains("not one"));
        assert!(messages[2].contains("rate limited"));
        assert!(messages[3].contains("server error"));
        assert!(messages[4].contains("-42"));
        for (i, a) in messages.iter().enumerate() {
            assert!(messages[i + 1..].iter().all(|b| b != a));
        }
    }

    #[test]
    fn rest_error_shows_status_path_and_code() {
        let e = ServiceRestError::new(403, "/api/emoji/rooms", Some("scope_forbidden".into()));
        assert_eq!(
            e.to_string(),
            "the REST service answered 403 to /api/emoji/rooms (error_code \"scope_forbidden\")"
        );
        let e = ServiceRestError::new(302, "/api/files/list", None);
        assert!(e.to_string().contains("never follows"), "{e}");
        let e = ServiceRestError::new(0, "/api/files/list", None);
        assert!(e.to_string().starts_with("no response"), "{e}");
    }

    #[test]
    fn strip_query_keeps_the_path() {
        assert_eq!(strip_query("/a/b?x=1#f"), "/a/b");
        assert_eq!(strip_query("/a#f?x"), "/a");
        assert_eq!(strip_query("/a"), "/a");
        assert_eq!(strip_query(""), "");
    }

    #[test]
    fn decode_errors_say_where_but_never_quote_the_body() {
        let err = serde_json::from_str::<Vec<u32>>("[1, \"hunter2\"]").unwrap_err();
        let e = RestError::decode("/api/x", &err);
        assert_eq!(
            e.to_string(),
            "the response to /api/x is not the JSON expected: valid JSON of the wrong shape \
             (a wrong type, or a missing or unknown field) at line 1 column 13"
        );
        let err = serde_json::from_str::<Vec<u32>>("[1, 2").unwrap_err();
        let text = RestError::decode("/api/x", &err).to_string();
        assert!(
            text.ends_with("JSON that ends early at line 1 column 5"),
            "{text}"
        );
        let err = serde_json::from_str::<Vec<u32>>("secret-value").unwrap_err();
        let text = RestError::decode("/api/x", &err).to_string();
        assert!(text.contains("not valid JSON at line 1 column 1"), "{text}");
        assert!(!text.contains("secret"), "{text}");
    }

    #[test]
    fn a_body_over_its_cap_names_the_cap() {
        let e = RestError::BodyTooLarge {
            path: "/api/files/list".into(),
            limit: 16,
            cap: "the client option rest_json_limit",
        };
        assert_eq!(
            e.to_string(),
            "the response body of /api/files/list is over 16 bytes, the cap set by the client \
             option rest_json_limit; the lane stopped reading it and dropped the connection"
        );
    }
}
