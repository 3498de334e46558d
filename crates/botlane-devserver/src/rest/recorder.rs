//! The recorder in front of every route: it reads the body (under the size
//! cap and the body timeout) and keeps each request as received, its body
//! cut to the record cap.

use axum::body::Body;
use axum::extract::{Request, State as AxumState};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{error, RestApp};
use crate::body::{read_body, BodyRefusal};
use crate::listener::ConnectionNumber;
use crate::records::HttpRecord;

/// The method as logged: a standard one by name, anything else as `other`
/// (the request line is the client's text, and logs never carry it).
fn logged_method(method: &Method) -> &'static str {
    let standard = [
        (Method::GET, "GET"),
        (Method::POST, "POST"),
        (Method::PUT, "PUT"),
        (Method::DELETE, "DELETE"),
        (Method::HEAD, "HEAD"),
        (Method::OPTIONS, "OPTIONS"),
        (Method::PATCH, "PATCH"),
    ];
    standard
        .into_iter()
        .find(|(m, _)| m == method)
        .map_or("other", |(_, name)| name)
}

/// A refusal that also ends the connection: the rest of the body is unread.
fn refuse_and_close(status: StatusCode, code: &str) -> Response {
    let mut response = error(status, code);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Records the request, then answers a configured redirect or routes it.
pub(super) async fn record(
    AxumState(app): AxumState<RestApp>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let method = logged_method(&parts.method);
    let limits = &app.limits;
    let read = read_body(body, limits.max_request_body, limits.request_body_timeout).await;
    let (body, body_size) = match &read {
        Ok(body) => (body.clone(), body.len()),
        Err(
            BodyRefusal::TooLarge { read }
            | BodyRefusal::TooSlow { read }
            | BodyRefusal::Broken { read },
        ) => (Default::default(), *read),
    };
    let path = parts.uri.path().to_owned();
    let kept = body.len().min(limits.http_record_body_bytes);
    let entry = HttpRecord {
        method: parts.method.as_str().to_owned(),
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
        body: body[..kept].to_vec(),
        body_size,
        status: None,
        connection: parts
            .extensions
            .get::<ConnectionNumber>()
            .map_or(0, |number| number.0),
    };
    let (seq, redirect) = app.shared.update(|s| {
        (
            s.rest_mut().http.push(entry),
            s.rest().redirect_for(&path).map(str::to_owned),
        )
    });
    let response = match read {
        Err(BodyRefusal::TooLarge { .. }) => {
            refuse_and_close(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
        }
        Err(BodyRefusal::TooSlow { .. }) => {
            refuse_and_close(StatusCode::REQUEST_TIMEOUT, "request_timeout")
        }
        Err(BodyRefusal::Broken { .. }) => refuse_and_close(StatusCode::BAD_REQUEST, "bad_request"),
        Ok(_) => match redirect {
            Some(to) => match HeaderValue::from_str(&to) {
                Ok(location) => (StatusCode::FOUND, [(header::LOCATION, location)]).into_response(),
                Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
            },
            None => next.run(Request::from_parts(parts, Body::from(body))).await,
        },
    };
    let status = response.status().as_u16();
    // Method, status and size only: the path, query, headers and body are
    // the client's text and may hold credentials.
    tracing::debug!(method, status, body_size, "http request");
    app.shared.update(|s| {
        if let Some(entry) = s.rest_mut().http.get_mut(seq) {
            entry.status = Some(status);
        }
    });
    response
}
