//! What a caller may add to a request, and the result of `binary`.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use http::StatusCode;
use serde::Serialize;

use super::error::RestError;

/// Options of one REST lane request: headers, a query, a body, a timeout.
///
/// The body is kept as bytes, so the lane can send it again when it retries
/// after a 401. A builder mistake (an invalid header name, a value that does
/// not serialize) is reported by the call as [`RestError::InvalidRequest`],
/// before anything is sent. A `verification` header set here is replaced by
/// the lane's own.
///
/// ```
/// use botlane::RequestInit;
///
/// let init = RequestInit::new()
///     .header("x-request-id", "42")
///     .query("roomIds", "server-1")
///     .json(&serde_json::json!({"name": "notes.txt"}));
/// assert_eq!(init.body_bytes().map(<[u8]>::len), Some(20));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestInit {
    headers: HeaderMap,
    query: Vec<(String, String)>,
    body: Option<Bytes>,
    timeout: Option<Duration>,
    invalid: Option<String>,
}

impl RequestInit {
    /// No headers, no query, no body.
    ///
    /// ```
    /// assert!(botlane::RequestInit::new().body_bytes().is_none());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header (repeated names are all sent).
    ///
    /// ```
    /// let init = botlane::RequestInit::new().header("accept", "application/json");
    /// # let _ = init;
    /// ```
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(mut value)) => {
                // The caller's own headers may be secrets too: keep them out
                // of any Debug output of the header map.
                value.set_sensitive(true);
                self.headers.append(name, value);
            }
            (Err(_), _) => self.fail(format!("{name:?} is not a valid header name")),
            (_, Err(_)) => self.fail(format!(
                "the value of header {name:?} is not a valid header value"
            )),
        }
        self
    }

    /// Appends a query parameter (percent-encoded for you).
    ///
    /// ```
    /// let init = botlane::RequestInit::new().query("roomIds", "server-1");
    /// # let _ = init;
    /// ```
    #[must_use]
    pub fn query(mut self, name: &str, value: &str) -> Self {
        self.query.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets a JSON body and, unless a header set it, `content-type:
    /// application/json`.
    ///
    /// ```
    /// let init = botlane::RequestInit::new().json(&[1, 2, 3]);
    /// assert_eq!(init.body_bytes(), Some(&b"[1,2,3]"[..]));
    /// ```
    #[must_use]
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => {
                self.body = Some(Bytes::from(body));
                if !self.headers.contains_key(CONTENT_TYPE) {
                    self.headers
                        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                }
            }
            Err(e) => self.fail(format!("the JSON body does not serialize ({e})")),
        }
        self
    }

    /// Sets a raw body; set its `content-type` with [`header`](Self::header).
    ///
    /// ```
    /// let init = botlane::RequestInit::new().body(b"raw".to_vec());
    /// assert_eq!(init.body_bytes(), Some(&b"raw"[..]));
    /// ```
    #[must_use]
    pub fn body(mut self, bytes: impl Into<Bytes>) -> Self {
        self.body = Some(bytes.into());
        self
    }

    /// Sets a timeout for this request (each attempt), instead of the
    /// client's `rest_timeout`.
    ///
    /// ```
    /// let init = botlane::RequestInit::new().timeout(std::time::Duration::from_secs(5));
    /// # let _ = init;
    /// ```
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The body set so far, if any.
    ///
    /// ```
    /// assert_eq!(botlane::RequestInit::new().body(&b"x"[..]).body_bytes(), Some(&b"x"[..]));
    /// ```
    pub fn body_bytes(&self) -> Option<&[u8]> {
        self.body.as_deref()
    }

    fn fail(&mut self, rule: String) {
        self.invalid.get_or_insert(rule);
    }

    /// Checks the builder's deferred errors; the parts of the request.
    pub(crate) fn into_parts(self) -> Result<Parts, RestError> {
        if let Some(rule) = self.invalid {
            return Err(RestError::InvalidRequest { rule });
        }
        Ok(Parts {
            headers: self.headers,
            query: self.query,
            body: self.body,
            timeout: self.timeout,
        })
    }
}

impl fmt::Debug for RequestInit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestInit")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field(
                "query",
                &self.query.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("body_len", &self.body.as_ref().map(Bytes::len))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A checked [`RequestInit`], reusable for the retry after a 401.
pub(crate) struct Parts {
    pub(crate) headers: HeaderMap,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) body: Option<Bytes>,
    pub(crate) timeout: Option<Duration>,
}

/// The result of [`RestLane::binary`](super::RestLane::binary): the body's
/// bytes and the response headers.
///
/// ```
/// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
/// use botlane::{RequestInit, rest::Method};
///
/// let file = client
///     .rest()
///     .binary(Method::GET, "/api/files/f1/download", Some(RequestInit::new().query("roomIds", "s1")))
///     .await?;
/// let iv = file.header("x-file-iv");
/// println!("{} bytes, iv {iv:?}", file.bytes.len());
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct BinaryResponse {
    /// The body.
    pub bytes: Bytes,
    status: StatusCode,
    headers: HeaderMap,
}

impl BinaryResponse {
    pub(crate) fn new(status: StatusCode, headers: HeaderMap, bytes: Bytes) -> Self {
        Self {
            bytes,
            status,
            headers,
        }
    }

    /// A response header as text (names are case-insensitive); `None` when
    /// absent or not visible ASCII. With repeated headers, the first.
    ///
    /// ```
    /// # fn demo(file: botlane::BinaryResponse) {
    /// let iv: Option<&str> = file.header("X-File-IV");
    /// # }
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// All response headers.
    ///
    /// ```
    /// # fn demo(file: botlane::BinaryResponse) {
    /// let n = file.headers().len();
    /// # }
    /// ```
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The (2xx) status.
    ///
    /// ```
    /// # fn demo(file: botlane::BinaryResponse) {
    /// assert!(file.status().is_success());
    /// # }
    /// ```
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl fmt::Debug for BinaryResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BinaryResponse")
            .field("status", &self.status)
            .field("len", &self.bytes.len())
            .field("headers", &self.headers)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_mistakes_surface_at_the_call() {
        let err = RequestInit::new()
            .header("bad name", "v")
            .into_parts()
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("invalid REST request: \"bad name\" is not a valid header name")
        );
        let err = RequestInit::new()
            .header("x-secret", "line\nbreak-hunter2")
            .into_parts()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("x-secret") && !err.contains("hunter2"),
            "{err}"
        );
        let bad_json = std::collections::HashMap::from([((1, 2), 3)]);
        assert!(RequestInit::new().json(&bad_json).into_parts().is_err());
    }

    #[test]
    fn json_sets_the_content_type_unless_given() {
        let parts = RequestInit::new().json(&1).into_parts().ok();
        let ct = parts.as_ref().and_then(|p| p.headers.get(CONTENT_TYPE));
        assert_eq!(ct.and_then(|v| v.to_str().ok()), Some("application/json"));
        let parts = RequestInit::new()
            .header("content-type", "application/merge-patch+json")
            .json(&1)
            .into_parts()
            .ok();
        let ct = parts.as_ref().and_then(|p| p.headers.get(CONTENT_TYPE));
        assert_eq!(
            ct.and_then(|v| v.to_str().ok()),
            Some("application/merge-patch+json")
        );
    }

    #[test]
    fn debug_shows_no_header_or_query_values() {
        let init = RequestInit::new()
            .header("x-api-key", "hunter2")
            .query("sig", "s3cret")
            .body(&b"payload-secret"[..]);
        let shown = format!("{init:?}");
        assert!(
            shown.contains("x-api-key") && shown.contains("sig"),
            "{shown}"
        );
        for secret in ["hunter2", "s3cret", "payload-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn header_lookup_is_case_insensitive() {
        let mut headers = HeaderMap::new();
        headers.insert("x-file-iv", HeaderValue::from_static("aXY="));
        let r = BinaryResponse::new(StatusCode::OK, headers, Bytes::from_static(b"abc"));
        assert_eq!(r.header("X-File-IV"), Some("aXY="));
        assert_eq!(r.header("missing"), None);
        assert!(format!("{r:?}").contains("len: 3"));
    }
}
