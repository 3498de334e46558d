//! One WebSocket connection: a reader loop that handles each frame under the
//! state lock, and a writer task that drains the connection's queue.

use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, watch};
use tokio_websockets::{CloseCode, Message, WebSocketStream};

use super::dispatch::{handle_text, Flow};
use super::RealtimeApp;
use crate::state::{Outbound, Termination};

/// The socket of one connection.
pub(crate) type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// How long a closing connection may take to flush what it has queued.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// How a connection's reader loop ended.
enum Ending {
    /// Ended by the service: drop or close the socket.
    Terminated(Termination),
    /// The peer sent a close frame, or broke the protocol in a way the
    /// WebSocket layer answers itself (1009 for an oversize message): that
    /// answer is flushed, then the socket dropped.
    PeerClosed,
    /// The peer went away or the socket failed.
    Gone,
    /// The writer stopped first (the socket failed while writing).
    WriterGone,
}

/// A close frame with `code` (a valid code: the service only uses 1001,
/// 1003, 1007, 1008).
fn close_message(code: u16, reason: &str) -> Message {
    let code = CloseCode::try_from(code).unwrap_or(CloseCode::POLICY_VIOLATION);
    Message::close(Some(code), reason)
}

pub(crate) async fn connection(app: RealtimeApp, socket: Socket) {
    let RealtimeApp {
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
                Some(Ok(message)) => {
                    if let Some(text) = message.as_text() {
                        if shared.update(|s| handle_text(s, conn, text)) == Flow::Close {
                            break Ending::Terminated(Termination::Close {
                                code: 1008,
                                reason: "unauthorized",
                            });
                        }
                    } else if message.is_binary() {
                        tracing::debug!(
                            connection = conn,
                            size = message.as_payload().len(),
                            "binary frame ignored"
                        );
                    } else if message.is_close() {
                        break Ending::PeerClosed;
                    }
                }
                Some(Err(tokio_websockets::Error::PayloadTooLong { len, .. })) => {
                    tracing::debug!(connection = conn, size = len, "oversize message: closed with 1009");
                    break Ending::PeerClosed;
                }
                Some(Err(e)) => {
                    tracing::debug!(connection = conn, error = %e, "socket failed");
                    break Ending::Gone;
                }
                None => break Ending::Gone,
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
        Ending::PeerClosed => {
            shared.update(|s| s.disconnect(conn));
            writer.abort();
            let _ = writer.await;
            flush_close(&mut stream).await;
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

/// Lets the WebSocket layer flush the close frame it queued itself (the echo
/// of a peer's close, or 1009 for an oversize message): once closed it reads
/// nothing more, only flushes, then ends.
async fn flush_close(stream: &mut SplitStream<Socket>) {
    let _ = tokio::time::timeout(FLUSH_TIMEOUT, async {
        while stream.next().await.is_some() {}
    })
    .await;
}

async fn write_loop(
    mut sink: SplitSink<Socket, Message>,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
) {
    while let Some(out) = rx.recv().await {
        match out {
            Outbound::Frame(text) => {
                if sink.send(Message::text(text)).await.is_err() {
                    return;
                }
            }
            Outbound::Close { code, reason } => {
                let _ = sink.send(close_message(code, reason)).await;
                return;
            }
        }
    }
}
