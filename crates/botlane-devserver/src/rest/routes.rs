//! The routes: the exchange, the `/api` guard, and the file routes.

use axum::body::Bytes;
use axum::extract::{MatchedPath, Path, Request, State as AxumState};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

use super::{error, RestApp, BOT_REST_ALLOWLIST, VERIFICATION};
use crate::state::rest::ExchangeRefusal;

/// The exchange's request body.
#[derive(Deserialize)]
struct ExchangeRequest {
    secret: String,
    row_id: String,
}

pub(super) async fn exchange(
    AxumState(app): AxumState<RestApp>,
    method: Method,
    body: Bytes,
) -> Response {
    if method != Method::POST {
        return error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    }
    let Ok(request) = serde_json::from_slice::<ExchangeRequest>(&body) else {
        return error(StatusCode::BAD_REQUEST, "bad_request");
    };
    let now = Instant::now();
    match app
        .shared
        .update(|s| s.rest_mut().exchange(&request.secret, &request.row_id, now))
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
pub(super) async fn authorize(
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
    if let Err(refusal) = app.shared.update(|s| s.rest_mut().authenticate(value, now)) {
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

pub(super) async fn unlisted() -> Response {
    // `authorize` refuses every route not on the allowlist before this runs.
    error(StatusCode::FORBIDDEN, "scope_forbidden")
}

pub(super) async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found")
}

pub(super) async fn files_list(AxumState(app): AxumState<RestApp>) -> Response {
    let files: Vec<_> = app
        .shared
        .lock()
        .rest()
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

pub(super) async fn file_download(
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
        .rest()
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
