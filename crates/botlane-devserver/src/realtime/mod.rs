//! The realtime wire: the `/ws` listener, its connections and the handlers
//! of every opcode.

pub(crate) mod connection;
pub(crate) mod dispatch;
pub(crate) mod emoji;
mod handlers;
mod upgrade;

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

pub use emoji::EMOJI_CATALOG;
pub use handlers::messages::{DEFAULT_HISTORY, MAX_CONTENT_BYTES, MAX_HISTORY};

use crate::state::Shared;

/// Largest WebSocket message the service reads; a larger one closes the
/// connection with code 1009.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// What the `/ws` route and every connection task get.
#[derive(Clone)]
pub(crate) struct RealtimeApp {
    pub(crate) shared: Arc<Shared>,
    pub(crate) shutdown: watch::Receiver<bool>,
    /// Held by every connection task; the service has stopped once all are gone.
    pub(crate) _done: mpsc::Sender<()>,
}

/// Serves the realtime wire (and the `extra` routes) on `listener` until
/// `shutdown` turns true, then waits for every connection to end.
pub(crate) async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    extra: Router,
    shutdown: watch::Receiver<bool>,
) {
    let (done, mut all_done) = mpsc::channel::<()>(1);
    let app = RealtimeApp {
        shared,
        shutdown: shutdown.clone(),
        _done: done,
    };
    let router = Router::new()
        .route("/ws", get(upgrade::upgrade))
        .with_state(app)
        .merge(extra);
    let mut signal = shutdown;
    // Nagle off: realtime frames are small and every reply is waited for.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            // An error means the handle is gone, which is a shutdown too.
            let _ = signal.wait_for(|stop| *stop).await;
        })
        .await;
    if let Err(e) = served {
        tracing::error!(error = %e, "realtime listener failed");
    }
    // Every connection task holds a clone of `done`: `recv` returns `None`
    // once the last of them has ended.
    let _ = all_done.recv().await;
    tracing::info!("realtime listener stopped");
}
