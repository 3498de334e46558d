//! The REST listener's routes: the exchange, the `/api` routes behind the
//! `verification` check and the `bot-rest` allowlist, and the request
//! recorder in front of everything.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Path, Request, State as AxumState};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

use crate::rest::{ExchangeRefusal, HttpRecord};
use crate::state::Shared;

/// The routes a `bot-rest` credential may call, as `(method, route)`; every
/// other request under `/api` is refused with 403 `scope_forbidden`.
///
/// ```
/// use botlane_devserver::BOT_REST_ALLOWLIST;
/// assert!(BOT_REST_ALLOWLIST.contains(&("GET", "/api/files/list")));
/// assert!(!BOT_REST_ALLOWLIST.iter().any(|(_, route)| route.starts_with("/api/emoji")));
/// ```
pub const BOT_REST_ALLOWLIST: &[(&str, &str)] = &[
    ("GET", "/api/files/list"),
    ("GET", "/api/files/{file_id}/download"),
];

/// The largest request body the REST listener reads.
pub const MAX_HTTP_BODY_BYTES: usize = 1024 * 1024;

/// The name of the header that carries the credential.
const VERIFICATION: &str = "verification";

#[derive(Clone)]
struct RestApp {
    shared: Arc<Shared>,
}

/// A JSON error body `{"error_code": code}`.
fn error(status: StatusCode, code: &str) -> Response {
    (status, Json(json!({ "error_code": code }))).into_response()
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let app = RestApp { shared };
    let api = Router::new()
        .route("/api/files/list", any(files_list))
        .route("/api/files/{file_id}/download", any(file_download))
        .route("/api", any(unlisted))
        .route("/api/", any(unlisted))
        .route("/api/{*rest}", any(unlisted))
        .route_layer(middleware::from_fn_with_state(app.clone(), authorize));
    Router::new()
        .route("/auth/verify-session", any(exchange))
        .merge(api)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app.clone(), record))
        .with_state(app)
}

/// Records the request, then answers a configured redirect or routes it.
async fn record(AxumState(app): AxumState<RestApp>, request: Request, next: Next) -> Response {
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

/// The exchange's request body.
#[derive(Deserialize)]
struct ExchangeRequest {
    secret: String,
    row_id: String,
}

async fn exchange(AxumState(app): AxumState<RestApp>, method: Method, body: Bytes) -> Response {
    if method != Method::POST {
        return error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    }
    let Ok(request) = serde_json::from_slice::<ExchangeRequest>(&body) else {
        return error(StatusCode::BAD_REQUEST, "bad_request");
    };
    let now = Instant::now();
    match app
        .shared
        .update(|s| s.rest.exchange(&request.secret, &request.row_id, now))
    {
        Ok((verification, expires_in)) => (
            [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
            Json(json!({ "verification": verification, "expires_in": expires_in })),
        )
            .into_response(),
        Err(ExchangeRefusal::InvalidSecret) => error(StatusCode::UNAUTHORIZED, "invalid_secret"),
        Err(ExchangeRefusal::ServerError) => {
            error(StatusCode::INTERNAL_SERVER_ERROR, "server_error")
        }
    }
}

/// Checks `verification`, then the allowlist: authentication first, so an
/// unauthenticated caller learns nothing about which routes exist.
async fn authorize(
    AxumState(app): AxumState<RestApp>,
    route: MatchedPath,
    request: Request,
    next: Next,
) -> Response {
    let value = request
        .headers()
        .get(VERIFICATION)
        .and_then(|v| v.to_str().ok());
    let now = Instant::now();
    if let Err(refusal) = app.shared.update(|s| s.rest.authenticate(value, now)) {
        return error(StatusCode::UNAUTHORIZED, refusal.error_code());
    }
    let allowed = BOT_REST_ALLOWLIST
        .iter()
        .any(|(method, listed)| request.method().as_str() == *method && route.as_str() == *listed);
    if !allowed {
        return error(StatusCode::FORBIDDEN, "scope_forbidden");
    }
    next.run(request).await
}

async fn unlisted() -> Response {
    // `authorize` refuses every route not on the allowlist before this runs.
    error(StatusCode::FORBIDDEN, "scope_forbidden")
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found")
}

async fn files_list(AxumState(app): AxumState<RestApp>) -> Response {
    let files: Vec<_> = app
        .shared
        .lock()
        .rest
        .files
        .iter()
        .map(|f| {
            json!({
                "id": f.id,
                "name": f.name,
                "size": f.bytes.len(),
                "room_id": f.server_id,
            })
        })
        .collect();
    Json(json!({ "files": files })).into_response()
}

async fn file_download(
    AxumState(app): AxumState<RestApp>,
    file_id: Result<Path<String>, axum::extract::rejection::PathRejection>,
    request: Request,
) -> Response {
    let Ok(Path(file_id)) = file_id else {
        return not_found().await;
    };
    // `roomIds` may repeat or hold a comma-separated list.
    let rooms: Vec<String> =
        url::form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
            .filter(|(key, _)| key == "roomIds")
            .flat_map(|(_, value)| {
                value
                    .split(',')
                    .filter(|room| !room.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
    if rooms.is_empty() {
        return error(StatusCode::BAD_REQUEST, "bad_request");
    }
    let state = app.shared.lock();
    let Some(file) = state
        .rest
        .file(&file_id)
        .filter(|f| rooms.contains(&f.server_id))
    else {
        return error(StatusCode::NOT_FOUND, "not_found");
    };
    let Ok(iv) = HeaderValue::from_str(&file.iv) else {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error");
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (header::HeaderName::from_static("x-file-iv"), iv),
        ],
        file.bytes.clone(),
    )
        .into_response()
}
