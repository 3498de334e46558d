//! The REST lane: the listener's routes (the request recorder in front of
//! everything, the exchange, the `/api` routes behind the `verification`
//! check and the `bot-rest` allowlist), the credential rows and the files.

mod recorder;
mod routes;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use serde_json::json;

use crate::state::Shared;
use crate::Limits;

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

/// The name of the header that carries the credential.
const VERIFICATION: &str = "verification";

#[derive(Clone)]
struct RestApp {
    shared: Arc<Shared>,
    limits: Arc<Limits>,
}

/// A JSON error body `{"error_code": code}`.
fn error(status: StatusCode, code: &str) -> Response {
    (status, Json(json!({ "error_code": code }))).into_response()
}

pub(crate) fn router(shared: Arc<Shared>, limits: Limits) -> Router {
    let app = RestApp {
        shared,
        limits: Arc::new(limits),
    };
    let api = Router::new()
        .route("/api/files/list", any(routes::files_list))
        .route("/api/files/{file_id}/download", any(routes::file_download))
        .route("/api", any(routes::unlisted))
        .route("/api/", any(routes::unlisted))
        .route("/api/{*rest}", any(routes::unlisted))
        .route_layer(middleware::from_fn_with_state(
            app.clone(),
            routes::authorize,
        ));
    Router::new()
        .route("/auth/verify-session", any(routes::exchange))
        .merge(api)
        .fallback(routes::not_found)
        .layer(middleware::from_fn_with_state(
            app.clone(),
            recorder::record,
        ))
        .with_state(app)
}
