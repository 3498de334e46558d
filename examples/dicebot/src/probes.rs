//! `--metrics ADDR`: one small HTTP server of the bot's own for what an
//! orchestrator and a metrics stack ask of it.
//!
//! - `GET /metrics`: the Prometheus exposition of every metric botlane
//!   records (`docs/operations.md` has the table), from the recorder
//!   installed here, before the client logs in;
//! - `GET /healthz`: `200 ok` while the process serves at all (a liveness
//!   probe: restart it when this fails);
//! - `GET /readyz`: `200 ready` while the bot is logged in on a live
//!   connection, `503 not ready` before its first login and while it
//!   reconnects (a readiness probe: route nothing to it then).
//!
//! Nothing else is served (404), and nothing is read from a request but
//! its path.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use botlane::WeakClient;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// The buckets of every `…_seconds` histogram: a handler that answers at
/// once takes well under a millisecond, one that calls the REST lane tens
/// of milliseconds, and a stuck one up to its timeout (5 minutes).
const SECONDS_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 10.0, 300.0,
];

/// How often the recorder drains its histograms' samples into their buckets.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Why the metrics listener cannot start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbesError {
    #[error("cannot install the metrics recorder")]
    Recorder(#[source] metrics_exporter_prometheus::BuildError),
    #[error("cannot listen for --metrics on {addr}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
}

/// What the routes read.
#[derive(Clone)]
struct Probes {
    exposition: PrometheusHandle,
    /// Weak: the server must not keep a closed client running.
    client: WeakClient,
}

/// Installs the process's metrics recorder. Call it before the client logs
/// in: botlane resolves its metric handles at `login()`.
pub(crate) fn install_recorder() -> Result<PrometheusHandle, ProbesError> {
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS_BUCKETS)
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(ProbesError::Recorder)
}

/// Binds `addr` and serves the three routes on tasks of their own; returns
/// the address bound (the port the system chose for port 0).
pub(crate) async fn serve(
    addr: SocketAddr,
    exposition: PrometheusHandle,
    client: WeakClient,
) -> Result<SocketAddr, ProbesError> {
    let listen_error = |source| ProbesError::Listen { addr, source };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(listen_error)?;
    let bound = listener.local_addr().map_err(listen_error)?;
    let upkeep = exposition.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(UPKEEP_EVERY);
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(Probes { exposition, client });
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the metrics listener stopped");
        }
    });
    Ok(bound)
}

async fn metrics(State(probes): State<Probes>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        probes.exposition.render(),
    )
}

async fn ready(State(probes): State<Probes>) -> impl IntoResponse {
    let up = match probes.client.upgrade() {
        // A zero wait: whether the session is live now.
        Some(client) => client.wait_until_connected(Duration::ZERO).await.is_ok(),
        None => false,
    };
    if up {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}
