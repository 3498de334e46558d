//! The `/ws` route: the WebSocket opening handshake of RFC 6455, done by
//! hand on top of hyper's upgrade, then the connection handed to
//! `tokio-websockets`.

use axum::body::Body;
use axum::extract::{Request, State as AxumState};
use axum::http::header::{
    CONNECTION, RETRY_AFTER, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_VERSION,
    UPGRADE,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hyper_util::rt::TokioIo;
use tokio::sync::watch;
use tokio_websockets::{Limits, ServerBuilder};

use super::connection::connection;
use super::written::Written;
use super::{RealtimeApp, MAX_FRAME_BYTES};
use crate::state::outbox;

/// The GUID every `Sec-WebSocket-Accept` is computed with (RFC 6455 §1.3).
const WEBSOCKET_GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Why an upgrade request was refused: the status and a reason naming the
/// header at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) reason: &'static str,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = (self.status, format!("{}\n", self.reason)).into_response();
        if self.status == StatusCode::UPGRADE_REQUIRED {
            // RFC 6455 §4.2.2: name the version we speak.
            response
                .headers_mut()
                .insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        }
        response
    }
}

/// Whether a comma-separated header holds `token` (case-insensitive).
fn has_token(headers: &HeaderMap, name: axum::http::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// Checks the opening handshake's headers and returns the
/// `Sec-WebSocket-Accept` value to answer with.
pub(crate) fn accept_key(headers: &HeaderMap) -> Result<String, Refusal> {
    let refuse = |status, reason| Err(Refusal { status, reason });
    if !has_token(headers, UPGRADE, "websocket") {
        return refuse(
            StatusCode::UPGRADE_REQUIRED,
            "this route speaks WebSocket only: the Upgrade header must be websocket",
        );
    }
    if !has_token(headers, CONNECTION, "upgrade") {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the Connection header must include upgrade",
        );
    }
    if headers
        .get(SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
        != Some(b"13")
    {
        return refuse(
            StatusCode::UPGRADE_REQUIRED,
            "Sec-WebSocket-Version must be 13",
        );
    }
    let Some(key) = headers.get(SEC_WEBSOCKET_KEY) else {
        return refuse(StatusCode::BAD_REQUEST, "Sec-WebSocket-Key is missing");
    };
    // RFC 6455 §4.1: the key is 16 random bytes, base64-encoded.
    if STANDARD.decode(key.as_bytes()).map(|k| k.len()) != Ok(16) {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Sec-WebSocket-Key must be 16 bytes in base64",
        );
    }
    let mut sha1 = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    sha1.update(key.as_bytes());
    sha1.update(WEBSOCKET_GUID);
    Ok(STANDARD.encode(sha1.finish()))
}

/// Answers an upgrade request: `101` and the connection served in its own
/// task, `503` with `Retry-After` when the pre-login pool is full of
/// connections it may not evict, or the refusal.
pub(crate) async fn upgrade(
    AxumState(app): AxumState<RealtimeApp>,
    mut request: Request,
) -> Response {
    let accept = match accept_key(request.headers()) {
        Ok(accept) => accept,
        Err(refusal) => return refusal.into_response(),
    };
    let Ok(accept) = HeaderValue::from_str(&accept) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    // Registered before the 101, so the pool is checked before the upgrade.
    let (outbox, reader, backlog) = outbox(app.limits.outbound_queue_bytes);
    let (kill, killed) = watch::channel(None);
    let Some(conn) = app.shared.update(|s| s.connect(outbox, kill)) else {
        tracing::debug!("pre-login pool full: 503");
        let reason = format!(
            "{} connections are waiting to log in, the most this service allows: try again later\n",
            app.limits.prelogin_connections
        );
        // Every connection now in the pool is younger than the grace (or
        // has sent its login): the oldest without a login may be evicted
        // by then. In whole seconds, rounded up.
        let grace = app.limits.prelogin_grace;
        let seconds = grace.as_secs() + u64::from(grace.subsec_nanos() > 0);
        let retry_after = HeaderValue::from(seconds.max(1));
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(RETRY_AFTER, retry_after)],
            reason,
        )
            .into_response();
    };
    let on_upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                let limits = Limits::default().max_payload_len(Some(MAX_FRAME_BYTES));
                let socket = ServerBuilder::new()
                    .limits(limits)
                    .serve(Written::new(TokioIo::new(upgraded)));
                connection(app, conn, socket, (reader, backlog), killed).await;
            }
            Err(e) => {
                tracing::debug!(connection = conn, error = %e, "upgrade failed");
                app.shared.update(|s| s.disconnect(conn));
            }
        }
    });
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(SEC_WEBSOCKET_ACCEPT, accept);
    response
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    const GOOD: [(&str, &str); 4] = [
        ("upgrade", "websocket"),
        ("connection", "keep-alive, Upgrade"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn the_accept_key_of_rfc_6455() {
        // The worked example of RFC 6455 §1.3.
        assert_eq!(
            accept_key(&headers(&GOOD)).unwrap(),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn each_bad_header_is_named() {
        for (drop, replace, status, named) in [
            ("upgrade", None, StatusCode::UPGRADE_REQUIRED, "Upgrade"),
            (
                "upgrade",
                Some("h2c"),
                StatusCode::UPGRADE_REQUIRED,
                "Upgrade",
            ),
            (
                "connection",
                Some("close"),
                StatusCode::BAD_REQUEST,
                "Connection",
            ),
            (
                "sec-websocket-version",
                Some("8"),
                StatusCode::UPGRADE_REQUIRED,
                "Version",
            ),
            ("sec-websocket-key", None, StatusCode::BAD_REQUEST, "Key"),
            (
                "sec-websocket-key",
                Some("c2hvcnQ="),
                StatusCode::BAD_REQUEST,
                "Key",
            ),
        ] {
            let mut pairs: Vec<_> = GOOD.iter().filter(|(n, _)| *n != drop).copied().collect();
            if let Some(value) = replace {
                pairs.push((drop, value));
            }
            let refusal = accept_key(&headers(&pairs)).unwrap_err();
            assert_eq!(refusal.status, status, "{drop}");
            assert!(refusal.reason.contains(named), "{drop}: {}", refusal.reason);
        }
    }
}
