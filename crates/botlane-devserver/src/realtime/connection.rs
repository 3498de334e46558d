//! One WebSocket connection: a reader loop that handles each frame under the
//! state lock, and a writer task that drains the connection's queue.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State as AxumState;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use super::dispatch::{handle_text, Flow};
use super::MAX_FRAME_BYTES;
use crate::state::{Outbound, Shared, Termination};

/// How long a closing connection may take to flush what it has queued.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// What every request handler and connection task gets.
#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    shutdown: watch::Receiver<bool>,
    /// Held by every connection task; the service has stopped once all are gone.
    _done: mpsc::Sender<()>,
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
    let app = App {
        shared,
        shutdown: shutdown.clone(),
        _done: done,
    };
    let router = Router::new()
        .route("/ws", get(upgrade))
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

async fn upgrade(ws: WebSocketUpgrade, AxumState(app): AxumState<App>) -> Response {
    ws.max_message_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| connection(app, socket))
}

/// How a connection's reader loop ended.
enum Ending {
    /// Ended by the service: drop or close the socket.
    Terminated(Termination),
    /// The peer went away or the socket failed.
    Gone,
    /// The writer stopped first (the socket failed while writing).
    WriterGone,
}

async fn connection(app: App, socket: WebSocket) {
    let App {
        shared,
        mut shutdown,
        _done,
    } = app;
    let (tx, rx) = mpsc::unbounded_channel();
    let (kill, mut killed) = watch::channel(None);
    let conn = shared.update(|s| s.connect(tx, kill));
    tracing::info!(connection = conn, "connected");
    let (sink, mut stream) = socket.split();
    let mut writer = tokio::spawn(write_loop(sink, rx));

    let ending = loop {
        tokio::select! {
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if shared.update(|s| handle_text(s, conn, text.as_str())) == Flow::Close {
                        break Ending::Terminated(Termination::Close {
                            code: 1008,
                            reason: "unauthorized",
                        });
                    }
                }
                Some(Ok(Message::Binary(bytes))) => {
                    tracing::debug!(connection = conn, size = bytes.len(), "binary frame ignored");
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_))) | None => break Ending::Gone,
                Some(Err(e)) => {
                    tracing::debug!(connection = conn, error = %e, "socket failed");
                    break Ending::Gone;
                }
            },
            how = killed.wait_for(Option::is_some) => {
                // An error means the sender is gone, which cannot happen while
                // the connection is registered; treat it as a drop.
                let how = how.map_or(Termination::Abrupt, |how| how.unwrap_or(Termination::Abrupt));
                break Ending::Terminated(how);
            }
            _ = shutdown.wait_for(|stop| *stop) => {
                break Ending::Terminated(Termination::Close {
                    code: 1001,
                    reason: "service shutting down",
                });
            }
            _ = &mut writer => break Ending::WriterGone,
        }
    };

    match ending {
        Ending::Terminated(Termination::Close { code, reason }) => {
            shared.update(|s| {
                s.close_connection(conn, code, reason);
                s.disconnect(conn)
            });
            if tokio::time::timeout(FLUSH_TIMEOUT, &mut writer)
                .await
                .is_err()
            {
                writer.abort();
            }
        }
        Ending::Terminated(Termination::Abrupt) | Ending::Gone => {
            shared.update(|s| s.disconnect(conn));
            writer.abort();
            // Wait for the abort so the write half is dropped before the read
            // half: the socket closes with no close frame.
            let _ = writer.await;
        }
        Ending::WriterGone => {
            shared.update(|s| s.disconnect(conn));
        }
    }
    drop(stream);
    tracing::info!(connection = conn, "disconnected");
}

async fn write_loop(
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
) {
    while let Some(out) = rx.recv().await {
        match out {
            Outbound::Frame(text) => {
                if sink.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
            Outbound::Close { code, reason } => {
                let frame = CloseFrame {
                    code,
                    reason: reason.into(),
                };
                let _ = sink.send(Message::Close(Some(frame))).await;
                return;
            }
        }
    }
}
