//! `GET /metrics` on the admin listener: the service's own counters in the
//! Prometheus text exposition format, behind the same `Host` check and
//! token as the admin routes (a scrape job sends the token as its bearer
//! credential). Read-only; the names are the README's table.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::AdminApp;
use crate::state::{Refused, State as ServiceState};
use crate::StateView;

/// Answers a scrape: the exposition, or the admin endpoint's refusal.
pub(super) async fn scrape(State(app): State<AdminApp>, uri: Uri, headers: HeaderMap) -> Response {
    if let Err(refusal) = super::admit(&app, &uri, &headers) {
        return refusal.into_response();
    }
    let text = app.actions.read(render);
    let mut response = (StatusCode::OK, text).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The exposition of `state`.
pub(crate) fn render(state: &ServiceState) -> String {
    let view = StateView { state };
    let meters = state.meters();
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, samples: &[(&str, u64)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    family(
        "botlane_devserver_connections",
        "gauge",
        "WebSocket connections, by state: waiting to log in, or logged in",
        &[
            ("{state=\"prelogin\"}", count(view.prelogin_count())),
            ("{state=\"session\"}", count(view.session_count())),
        ],
    );
    family(
        "botlane_devserver_frames_total",
        "counter",
        "Text frames read from clients and frames queued to them",
        &[
            ("{direction=\"received\"}", meters.frames_received),
            ("{direction=\"sent\"}", meters.frames_sent),
        ],
    );
    family(
        "botlane_devserver_messages_total",
        "counter",
        "Messages accepted (op 30) and relayed to their channel",
        &[("", meters.messages)],
    );
    family(
        "botlane_devserver_logins_total",
        "counter",
        "Logins that succeeded",
        &[("", meters.logins)],
    );
    let refused: Vec<(String, u64)> = Refused::ALL
        .iter()
        .map(|why| {
            (
                format!("{{reason=\"{}\"}}", why.as_str()),
                meters.refused(*why),
            )
        })
        .collect();
    let refused: Vec<(&str, u64)> = refused.iter().map(|(l, v)| (l.as_str(), *v)).collect();
    family(
        "botlane_devserver_logins_refused_total",
        "counter",
        "Connections that got no session, by why",
        &refused,
    );
    family(
        "botlane_devserver_rest_mints_total",
        "counter",
        "REST secrets minted (op 638)",
        &[("", view.mint_count())],
    );
    family(
        "botlane_devserver_rest_exchanges_total",
        "counter",
        "REST secrets exchanged at /auth/verify-session",
        &[("", view.exchange_count())],
    );
    family(
        "botlane_devserver_queue_overflows_total",
        "counter",
        "Connections closed because they did not read their outgoing queue",
        &[("", view.queue_overflows())],
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DevServerConfig;

    #[test]
    fn every_family_has_help_type_and_its_samples() {
        let mut state = ServiceState::from_config(&DevServerConfig::default())
            .unwrap_or_else(|e| panic!("the default config is valid: {e}"));
        state.meters_mut().refuse(Refused::Evicted);
        state.meters_mut().refuse(Refused::Evicted);
        state.meters_mut().messages = 3;
        let text = render(&state);
        assert!(text.contains("botlane_devserver_logins_refused_total{reason=\"evicted\"} 2\n"));
        assert!(text.contains("botlane_devserver_logins_refused_total{reason=\"pool_full\"} 0\n"));
        assert!(text.contains("botlane_devserver_messages_total 3\n"));
        assert!(text.contains("botlane_devserver_connections{state=\"session\"} 0\n"));
        let families = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
        assert_eq!(families, 8, "{text}");
        assert_eq!(text.lines().filter(|l| l.starts_with("# HELP ")).count(), 8);
    }
}
