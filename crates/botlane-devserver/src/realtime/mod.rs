//! The realtime wire: the `/ws` route, its connections and the handlers of
//! every opcode.

pub(crate) mod connection;
pub(crate) mod dispatch;
pub(crate) mod emoji;
pub(crate) mod envelope;
pub(crate) mod handlers;
mod upgrade;
mod written;

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use tokio::sync::{mpsc, watch};

pub use emoji::EMOJI_CATALOG;
pub use handlers::messages::{DEFAULT_HISTORY, MAX_CONTENT_BYTES, MAX_HISTORY};

use crate::state::Shared;
use crate::Limits;

/// Largest WebSocket message the service reads; a larger one closes the
/// connection with code 1009.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// What the `/ws` route and every connection task get.
#[derive(Clone)]
pub(crate) struct RealtimeApp {
    pub(crate) shared: Arc<Shared>,
    pub(crate) shutdown: watch::Receiver<bool>,
    pub(crate) limits: Arc<Limits>,
    /// Held by every connection task; the service has stopped once all are gone.
    pub(crate) _done: mpsc::Sender<()>,
}

/// The realtime listener's routes (`/ws` and the `extra` ones), and a
/// receiver whose `recv` returns `None` once every WebSocket has ended.
pub(crate) fn router(
    shared: Arc<Shared>,
    extra: Router,
    limits: Limits,
    shutdown: watch::Receiver<bool>,
) -> (Router, mpsc::Receiver<()>) {
    let (done, all_done) = mpsc::channel::<()>(1);
    let app = RealtimeApp {
        shared,
        shutdown,
        limits: Arc::new(limits),
        _done: done,
    };
    let router = Router::new()
        .route("/ws", get(upgrade::upgrade))
        .with_state(app)
        .merge(extra);
    (router, all_done)
}
