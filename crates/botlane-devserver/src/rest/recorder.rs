//! The recorder in front of every route: it keeps each request as received.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State as AxumState};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{error, RestApp, MAX_HTTP_BODY_BYTES};
use crate::records::HttpRecord;

/// Records the request, then answers a configured redirect or routes it.
pub(super) async fn record(
    AxumState(app): AxumState<RestApp>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let (body, too_large) = match axum::body::to_bytes(body, MAX_HTTP_BODY_BYTES).await {
        Ok(body) => (body, false),
        Err(_) => (Bytes::new(), true),
    };
    let path = parts.uri.path().to_owned();
    let method = parts.method.clone();
    let entry = HttpRecord {
        method: method.as_str().to_owned(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body.to_vec(),
        status: None,
    };
    let (index, redirect) = app.shared.update(|s| {
        s.rest.http.push(entry);
        (
            s.rest.http.len() - 1,
            s.rest.redirect_for(&path).map(str::to_owned),
        )
    });
    let response = if too_large {
        error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    } else if let Some(to) = redirect {
        match HeaderValue::from_str(&to) {
            Ok(location) => (StatusCode::FOUND, [(header::LOCATION, location)]).into_response(),
            Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
        }
    } else {
        next.run(Request::from_parts(parts, Body::from(body))).await
    };
    let status = response.status().as_u16();
    // The path and status only: headers, query and body may hold credentials.
    tracing::debug!(%method, %path, status, "http request");
    app.shared.update(|s| {
        if let Some(entry) = s.rest.http.get_mut(index) {
            entry.status = Some(status);
        }
    });
    response
}
