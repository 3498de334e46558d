//! The admin actions and the HTTP admin endpoint that serves them to
//! clients in any language (`--admin`, [`DevServerConfig::admin`]).
//!
//! The endpoint has a listener of its own rather than a path on the REST
//! listener: the REST listener may listen on any address and serve TLS,
//! while the admin endpoint must be loopback only; the REST listener
//! records every request with its headers, where the admin token must
//! never land; and a bot's tests assert on the REST records and budgets,
//! which admin calls must not disturb. It runs on the same hardened accept
//! loop as the other listeners (header-read timeout, connection budget,
//! bounded bodies).
//!
//! A request passes, in order: the `Host` check (`400 bad_request` for
//! more than one `Host`, `403 host_not_allowed` for another host; the
//! authority of an absolute-form request line counts as its `Host`),
//! the token (`401 unauthorized`), the route (`404 not_found`, `405
//! method_not_allowed`), the body (`413`, `408`, `415`, `400`), then the
//! action. No CORS header is ever sent, so a page in a browser can neither
//! send the `Authorization` header nor read an answer; the `Host` check
//! stops a page whose own host name was rebound to 127.0.0.1.
//!
//! [`DevServerConfig::admin`]: crate::DevServerConfig::admin

mod actions;
mod guard;
mod metrics;
mod routes;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Value};

pub(crate) use actions::Actions;
pub(crate) use guard::{addressed_here, AdminToken, HostRefusal};

use crate::body::{read_body, BodyRefusal};
use routes::Route;

/// The largest request body the admin endpoint reads.
const MAX_ADMIN_BODY: usize = 64 * 1024;

/// A refusal: status, `error_code` and a message complete on its own.
#[derive(Debug)]
pub(crate) struct AdminError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl AdminError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let body = json!({"error_code": self.code, "message": self.message});
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"botlane-devserver admin\""),
            );
        }
        if matches!(
            self.status,
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
        ) {
            // The rest of the body is unread: the connection cannot go on.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

#[derive(Clone)]
struct AdminApp {
    actions: Actions,
    token: Arc<AdminToken>,
    port: u16,
    body_timeout: Duration,
}

/// The endpoint's router for a listener on `port`.
pub(crate) fn router(
    actions: Actions,
    token: Arc<AdminToken>,
    port: u16,
    body_timeout: Duration,
) -> Router {
    Router::new()
        .route("/metrics", axum::routing::get(metrics::scrape))
        .fallback(handle)
        .with_state(AdminApp {
            actions,
            token,
            port,
            body_timeout,
        })
}

async fn handle(State(app): State<AdminApp>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let (route, answer) = serve(&app, &parts.method, &parts.headers, &parts.uri, body).await;
    let mut response = match answer {
        Ok(value) => Json(value).into_response(),
        Err(e) => e.into_response(),
    };
    // Bodies carry tokens (add_bot, add_user): never kept by a cache.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // The route's name and the status only: never the path, a header or a body.
    tracing::debug!(
        route = route.map_or("none", Route::name),
        status = response.status().as_u16(),
        "admin request"
    );
    response
}

/// The `Host` check, then the token: what every request passes first.
fn admit(app: &AdminApp, uri: &Uri, headers: &HeaderMap) -> Result<(), AdminError> {
    match guard::addressed_here(uri, headers, |host| guard::is_this_listener(host, app.port)) {
        Ok(()) => {}
        Err(HostRefusal::Repeated) => {
            return Err(AdminError::bad_request(
                "a request carries one Host header (RFC 9112 section 3.2); this one carries \
                 several",
            ));
        }
        Err(HostRefusal::Foreign) => {
            // The port is left out: the message is the same on every run.
            return Err(AdminError::new(
                StatusCode::FORBIDDEN,
                "host_not_allowed",
                "the admin endpoint answers only requests whose Host header names it as \
                 127.0.0.1, [::1] or localhost with its own port",
            ));
        }
    }
    if !guard::bearer(headers).is_some_and(|t| app.token.matches(t)) {
        return Err(AdminError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the admin endpoint needs the header Authorization: Bearer followed by the \
             admin token the devserver printed at start",
        ));
    }
    Ok(())
}

async fn serve(
    app: &AdminApp,
    method: &Method,
    headers: &HeaderMap,
    uri: &Uri,
    body: Body,
) -> (Option<Route>, Result<Value, AdminError>) {
    if let Err(refusal) = admit(app, uri, headers) {
        return (None, Err(refusal));
    }
    let Some(route) = Route::find(uri.path()) else {
        let refusal = AdminError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "no admin route has this path; GET /admin lists them",
        );
        return (None, Err(refusal));
    };
    if *method != route.method() {
        let message = format!("{} takes {} only", route.path(), route.method().as_str());
        let refusal = AdminError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            message,
        );
        return (Some(route), Err(refusal));
    }
    let body = match read_body(body, MAX_ADMIN_BODY, app.body_timeout).await {
        Ok(body) => body,
        Err(BodyRefusal::TooLarge { .. }) => {
            let message = format!("an admin request body is at most {MAX_ADMIN_BODY} bytes");
            let refusal =
                AdminError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message);
            return (Some(route), Err(refusal));
        }
        Err(BodyRefusal::TooSlow { .. }) => {
            let message = format!(
                "the request body did not arrive within {} ms",
                app.body_timeout.as_millis()
            );
            let refusal = AdminError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", message);
            return (Some(route), Err(refusal));
        }
        Err(BodyRefusal::Broken { .. }) => {
            let refusal = AdminError::bad_request("the connection failed while reading the body");
            return (Some(route), Err(refusal));
        }
    };
    if !body.is_empty() && !is_json(headers) {
        let refusal = AdminError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "an admin request body must be sent as Content-Type: application/json",
        );
        return (Some(route), Err(refusal));
    }
    (Some(route), route.run(&app.actions, &body))
}

/// Whether `Content-Type` is `application/json` (parameters allowed).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}
