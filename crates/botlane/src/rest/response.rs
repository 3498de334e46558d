//! A 2xx answer of the REST lane as botlane's own type: status, headers, and
//! the body, read whole under a cap or streamed in chunks without one. The
//! HTTP client underneath is not part of the API, so upgrading it never
//! breaks a bot.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use http::{HeaderMap, StatusCode};

use super::config::Slot;
use super::error::{RestError, ServiceRestError};

/// What [`RestLane::request`](super::RestLane::request) resolves with: a 2xx
/// response whose body has not been read yet.
///
/// Read the body whole with [`bytes`](Self::bytes) (capped by the client
/// option `rest_binary_limit`, [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES) by
/// default), or chunk by chunk with [`chunk`](Self::chunk) or
/// [`into_stream`](Self::into_stream), which hold one chunk at a time and
/// have no cap. The request's timeout covers the body too. Dropping the
/// response before the end of its body closes the connection instead of
/// reading the rest. The response holds one of the lane's
/// `rest_max_connections` until its body is read or it is dropped.
///
/// ```no_run
/// # async fn demo(client: botlane::Client) -> Result<(), botlane::RestError> {
/// use botlane::rest::Method;
///
/// let mut response = client.rest().request(Method::GET, "/api/files/f1/download?roomIds=s1", None).await?;
/// let mut total = 0;
/// while let Some(chunk) = response.chunk().await? {
///     total += chunk.len();
/// }
/// println!("{total} bytes");
/// # Ok(()) }
/// ```
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    path: String,
    binary_limit: usize,
    body: reqwest::Response,
    _slot: Slot,
}

/// The most reserved up front for a body of a declared length: the length
/// is the service's word, not memory, and with a cap as large as
/// `usize::MAX` a declared length past what memory holds made the
/// reservation itself panic. Past it, the buffer grows as bytes arrive.
const MAX_RESERVE: usize = 8 * 1024 * 1024;

/// The cap [`Response::bytes`] and `binary` apply, as an error names it.
const BINARY_CAP: &str = "the client option rest_binary_limit";

impl Response {
    pub(crate) fn new(
        mut body: reqwest::Response,
        path: &str,
        binary_limit: usize,
        slot: Slot,
    ) -> Self {
        Self {
            status: body.status(),
            headers: std::mem::take(body.headers_mut()),
            path: path.to_owned(),
            binary_limit,
            body,
            _slot: slot,
        }
    }

    /// The (2xx) status.
    ///
    /// ```no_run
    /// # fn demo(response: botlane::rest::Response) {
    /// assert!(response.status().is_success());
    /// # }
    /// ```
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// All response headers.
    ///
    /// ```no_run
    /// # fn demo(response: botlane::rest::Response) {
    /// let declared = response.headers().get("content-length");
    /// # }
    /// ```
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// A response header as text (names are case-insensitive); `None` when
    /// absent or not visible ASCII. With repeated headers, the first.
    ///
    /// ```no_run
    /// # fn demo(response: botlane::rest::Response) {
    /// let iv: Option<&str> = response.header("X-File-IV");
    /// # }
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body's length as the service declared it (`content-length`),
    /// when it did.
    ///
    /// ```no_run
    /// # fn demo(response: botlane::rest::Response) {
    /// let size: Option<u64> = response.content_length();
    /// # }
    /// ```
    pub fn content_length(&self) -> Option<u64> {
        self.body.content_length()
    }

    /// The whole body. Fails with [`RestError::BodyTooLarge`] as soon as
    /// the body (declared or received) is over the client option
    /// `rest_binary_limit`, without reading the rest; with a
    /// [`ServiceRestError`] of status 0 when the connection fails midway.
    ///
    /// ```no_run
    /// # async fn demo(response: botlane::rest::Response) -> Result<(), botlane::RestError> {
    /// let body: bytes::Bytes = response.bytes().await?;
    /// # Ok(()) }
    /// ```
    pub async fn bytes(self) -> Result<bytes::Bytes, RestError> {
        let limit = self.binary_limit;
        self.read_whole(limit, BINARY_CAP).await
    }

    /// The whole body under `limit`, the cap named `cap` in the error.
    pub(crate) async fn read_whole(
        self,
        limit: usize,
        cap: &'static str,
    ) -> Result<Bytes, RestError> {
        read_capped(self.body, &self.path, limit, cap).await
    }

    /// The next chunk of the body, `None` at its end; no cap, one chunk
    /// held at a time.
    ///
    /// ```no_run
    /// # async fn demo(mut response: botlane::rest::Response) -> Result<(), botlane::RestError> {
    /// while let Some(chunk) = response.chunk().await? {
    ///     println!("{} bytes", chunk.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, RestError> {
        self.body
            .chunk()
            .await
            .map_err(|e| ServiceRestError::network(&self.path, e).into())
    }

    /// The body as a [`Stream`] of chunks; no cap. After an error the
    /// stream ends.
    ///
    /// ```no_run
    /// # async fn demo(response: botlane::rest::Response) -> Result<(), botlane::RestError> {
    /// use futures_util::StreamExt;
    /// let mut body = response.into_stream();
    /// while let Some(chunk) = body.next().await {
    ///     let chunk = chunk?;
    ///     # let _ = chunk;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn into_stream(self) -> BodyStream {
        let chunks = futures_util::stream::unfold(Some(self), |state| async move {
            let mut response = state?;
            match response.chunk().await {
                Ok(Some(chunk)) => Some((Ok(chunk), Some(response))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        });
        BodyStream {
            chunks: Box::pin(chunks),
        }
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header names only: a service may set values a log should not keep.
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("path", &self.path)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("content_length", &self.content_length())
            .finish_non_exhaustive()
    }
}

/// The body of a [`Response`] as a stream of chunks, from
/// [`Response::into_stream`].
pub struct BodyStream {
    chunks: Pin<Box<dyn Stream<Item = Result<Bytes, RestError>> + Send>>,
}

impl Stream for BodyStream {
    type Item = Result<Bytes, RestError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.chunks.as_mut().poll_next(cx)
    }
}

impl fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyStream").finish_non_exhaustive()
    }
}

/// Reads a body whole, failing as soon as it is known to be over `limit`
/// bytes: a declared length over it fails before any byte is read, a
/// received one at the chunk that crosses it. The response is dropped
/// unread on failure, which closes its connection instead of draining it.
pub(crate) async fn read_capped(
    mut body: reqwest::Response,
    path: &str,
    limit: usize,
    cap: &'static str,
) -> Result<Bytes, RestError> {
    let too_large = || RestError::BodyTooLarge {
        path: path.to_owned(),
        limit,
        cap,
    };
    let declared = body.content_length();
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // A single chunk is returned as is; more are gathered, with the declared
    // length (at most `limit`, checked above, and `MAX_RESERVE`) reserved up
    // front.
    let mut first: Option<Bytes> = None;
    let mut gathered: Option<BytesMut> = None;
    let mut total = 0usize;
    while let Some(chunk) = body
        .chunk()
        .await
        .map_err(|e| ServiceRestError::network(path, e))?
    {
        if chunk.len() > limit - total {
            return Err(too_large());
        }
        total += chunk.len();
        match (&mut gathered, first.take()) {
            (Some(buf), _) => buf.extend_from_slice(&chunk),
            (None, None) => first = Some(chunk),
            (None, Some(previous)) => {
                let declared = declared.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
                let reserve = declared.min(MAX_RESERVE).max(total);
                let mut buf = BytesMut::with_capacity(reserve);
                buf.extend_from_slice(&previous);
                buf.extend_from_slice(&chunk);
                gathered = Some(buf);
            }
        }
    }
    Ok(match gathered {
        Some(buf) => buf.freeze(),
        None => first.unwrap_or_default(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn response(body: &'static [u8]) -> reqwest::Response {
        reqwest::Response::from(http::Response::new(body))
    }

    #[tokio::test]
    async fn a_body_at_the_cap_is_read_and_one_byte_over_is_refused() {
        let body = read_capped(response(b"0123456789"), "/p", 10, "a cap")
            .await
            .unwrap();
        assert_eq!(&body[..], b"0123456789");
        let err = read_capped(response(b"0123456789"), "/p", 9, "a cap")
            .await
            .unwrap_err();
        assert!(
            matches!(&err, RestError::BodyTooLarge { path, limit: 9, cap: "a cap" } if path == "/p"),
            "{err:?}"
        );
        let empty = read_capped(response(b""), "/p", 1, "a cap").await.unwrap();
        assert!(empty.is_empty());
    }

    #[tokio::test]
    async fn the_response_shows_its_parts_but_no_header_value() {
        let mut raw = http::Response::new(&b"body"[..]);
        raw.headers_mut()
            .insert("x-file-iv", http::HeaderValue::from_static("aXY="));
        raw.headers_mut().insert(
            "set-cookie",
            http::HeaderValue::from_static("session=hunter2"),
        );
        let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(1));
        let slot = slots.try_acquire_owned().unwrap();
        let response = Response::new(reqwest::Response::from(raw), "/api/x", 100, slot);
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.header("X-File-IV"), Some("aXY="));
        assert_eq!(response.content_length(), Some(4));
        let shown = format!("{response:?}");
        assert!(
            shown.contains("set-cookie") && !shown.contains("hunter2"),
            "{shown}"
        );
        let chunks: Vec<_> =
            futures_util::StreamExt::collect::<Vec<_>>(response.into_stream()).await;
        assert_eq!(chunks.len(), 1);
        assert_eq!(&chunks[0].as_ref().unwrap()[..], b"body");
    }
}
