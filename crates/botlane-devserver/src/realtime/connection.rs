//! One WebSocket connection: a reader loop that handles each frame under the
//! state lock, and a writer task that drains the connection's bounded queue.
//!
//! Every way a connection ends is bounded in time: a close frame (queued
//! after the replies, or ahead of them when the client is not reading) gets
//! [`Limits::flush_timeout`](crate::Limits::flush_timeout) to leave, and the
//! closing handshake as long again to complete; then the socket is dropped.
//! A frame the WebSocket layer refuses (a message over the limit, a
//! protocol error) ends the same way, with the layer's close code.
//! A client that sends more pings than [`PingBudget`] answers is closed
//! with 1008 (the WebSocket layer queues a pong for each, read or not), as
//! is one that sends more than [`MAX_PINGS_UNWRITTEN`] while its socket
//! takes nothing from the service.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use botlane_proto::ping::PingBudget;
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_websockets::{CloseCode, Message, WebSocketStream};

use super::dispatch::handle_text;
use super::handlers::Flow;
use super::written::{Unwritten, Written, MAX_PINGS_UNWRITTEN};
use super::RealtimeApp;
use crate::state::{Backlog, Outbound, OutboxReader, Termination};

/// The socket of one connection, counting what it writes.
pub(crate) type Socket = WebSocketStream<Written<TokioIo<Upgraded>>>;

/// The write half, which the writer task hands back when it ends.
type Sink = SplitSink<Socket, Message>;

/// How a connection's reader loop ended.
enum Ending {
    /// Ended by the service: drop or close the socket.
    Terminated(Termination),
    /// The peer sent a close frame.
    PeerClosed,
    /// The WebSocket layer refused a frame: a protocol error, whose close
    /// frame it queued itself, or a message over the limit, which gets
    /// `close` when the layer queued none (a message of many frames).
    Refused { close: Option<Message> },
    /// The peer went away or the socket failed.
    Gone,
    /// The writer stopped first (the socket failed while writing).
    WriterGone,
}

/// A close frame with `code` (one of the service's own: 1001, 1003, 1007,
/// 1008).
fn close_message(code: u16, reason: &str) -> Message {
    let code = CloseCode::try_from(code).unwrap_or(CloseCode::POLICY_VIOLATION);
    Message::close(Some(code), reason)
}

/// Serves connection `conn`, registered in the pre-login pool by the upgrade,
/// until it ends; then removes it from the state.
pub(crate) async fn connection(
    app: RealtimeApp,
    conn: u64,
    socket: Socket,
    (outbox, mut backlog): (OutboxReader, Backlog),
    mut killed: watch::Receiver<Option<Termination>>,
) {
    let RealtimeApp {
        shared,
        mut shutdown,
        limits,
        _done,
    } = app;
    tracing::info!(connection = conn, "connected");
    let mut unwritten = Unwritten::new(socket.get_ref().counter());
    let (sink, mut stream) = socket.split();
    let mut writer = tokio::spawn(write_loop(
        sink,
        outbox,
        killed.clone(),
        limits.flush_timeout,
    ));
    let login_deadline = crate::limits::deadline(limits.login_timeout);
    let mut logged_in = false;
    let mut pings = PingBudget::new();

    let ending = loop {
        // While its own replies are backed up, the client's next requests
        // wait in the socket (TCP backpressure) rather than in memory.
        let full = backlog.full();
        tokio::select! {
            () = backlog.drained(), if full => {}
            incoming = stream.next(), if !full => match incoming {
                Some(Ok(message)) => {
                    if let Some(text) = message.as_text() {
                        match shared.update(|s| handle_text(s, conn, text)) {
                            Flow::Continue => {}
                            Flow::LoggedIn => logged_in = true,
                            Flow::Close { code, reason } => {
                                break Ending::Terminated(Termination::Close { code, reason });
                            }
                        }
                    } else if message.is_binary() {
                        tracing::debug!(connection = conn, size = message.as_payload().len(), "binary frame: closing with 1003");
                        break Ending::Terminated(Termination::Close {
                            code: 1003,
                            reason: "binary frames are not accepted: frames are JSON text".to_owned(),
                        });
                    } else if message.is_ping() {
                        // Its pong is queued already, read or not: a flood
                        // would grow that queue without end.
                        if let Err(flood) = pings.ping(std::time::Instant::now()) {
                            tracing::debug!(connection = conn, "ping flood: closing with 1008");
                            break Ending::Terminated(Termination::Close {
                                code: 1008,
                                reason: flood.to_string(),
                            });
                        }
                        // Within the budget, a client that never reads
                        // would still grow the pongs by a drip.
                        if !unwritten.ping() {
                            tracing::debug!(connection = conn, "pinging without reading: closing with 1008");
                            let how = Termination::Urgent {
                                code: 1008,
                                reason: format!(
                                    "more than {MAX_PINGS_UNWRITTEN} pings while the socket took nothing: the client is not reading"
                                ),
                            };
                            // The writer sends the close frame ahead of its queue.
                            shared.update(|s| {
                                if let Some(connection) = s.connection(conn) {
                                    connection.terminate(how.clone());
                                }
                            });
                            break Ending::Terminated(how);
                        }
                    } else if message.is_close() {
                        break Ending::PeerClosed;
                    }
                }
                Some(Err(tokio_websockets::Error::PayloadTooLong { len, max_len })) => {
                    tracing::debug!(connection = conn, size = len, "oversize message: closing with 1009");
                    let close = Message::close(Some(CloseCode::MESSAGE_TOO_BIG), &format!("max length: {max_len}"));
                    break Ending::Refused { close: Some(close) };
                }
                Some(Err(tokio_websockets::Error::Protocol(e))) => {
                    tracing::debug!(connection = conn, error = %e, "protocol error: closing");
                    break Ending::Refused { close: None };
                }
                Some(Err(e)) => {
                    tracing::debug!(connection = conn, error = %e, "socket failed");
                    break Ending::Gone;
                }
                None => break Ending::Gone,
            },
            _ = tokio::time::sleep_until(login_deadline), if !logged_in => {
                tracing::debug!(connection = conn, "no login in time: closing with 1008");
                shared.update(|s| s.meters_mut().refuse(crate::state::Refused::LoginTimeout));
                break Ending::Terminated(Termination::Close {
                    code: 1008,
                    reason: format!("no login within {}", crate::limits::seconds(limits.login_timeout)),
                });
            }
            how = killed.wait_for(Option::is_some) => {
                // An error means the sender is gone, which cannot happen while
                // the connection is registered; treat it as a drop.
                let how = how.map_or(Termination::Abrupt, |how| how.clone().unwrap_or(Termination::Abrupt));
                break Ending::Terminated(how);
            }
            _ = shutdown.wait_for(|stop| *stop) => {
                break Ending::Terminated(Termination::Close {
                    code: 1001,
                    reason: "service shutting down".to_owned(),
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
            finish_writer(&mut writer, limits.flush_timeout).await;
            drain(&mut stream, &mut pings, limits.flush_timeout).await;
        }
        Ending::Terminated(Termination::Urgent { .. }) => {
            // The writer saw the same termination: it abandons the queue and
            // sends the close frame first.
            shared.update(|s| s.disconnect(conn));
            finish_writer(&mut writer, limits.flush_timeout).await;
            drain(&mut stream, &mut pings, limits.flush_timeout).await;
        }
        Ending::PeerClosed => {
            shared.update(|s| s.disconnect(conn));
            writer.abort();
            let _ = writer.await;
            drain(&mut stream, &mut pings, limits.flush_timeout).await;
        }
        Ending::Refused { close } => {
            // Gone from the state, the connection's queue is closed: the
            // writer ends once it has written what is left, and hands back
            // the write half for the close frame.
            shared.update(|s| s.disconnect(conn));
            let sink = finish_writer(&mut writer, limits.flush_timeout).await;
            if let Some(socket) = sink.and_then(|sink| stream.reunite(sink).ok()) {
                refuse(socket, close, limits.flush_timeout).await;
            }
            tracing::info!(connection = conn, "disconnected");
            return;
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

/// Gives the writer `timeout` to send what it still has, then stops it;
/// the write half when the writer ended by itself.
async fn finish_writer(writer: &mut JoinHandle<Sink>, timeout: Duration) -> Option<Sink> {
    match tokio::time::timeout(timeout, &mut *writer).await {
        Ok(ended) => ended.ok(),
        Err(_) => {
            writer.abort();
            let _ = (&mut *writer).await;
            None
        }
    }
}

/// Ends a connection whose frame the WebSocket layer refused: the close
/// frame (`close`, unless the layer queued its own), then our FIN, then
/// whatever the client still sends (the rest of an oversize message, more
/// frames, the echo of the close) is read and discarded until it closes
/// its side, within `timeout` for each step. The layer reads no more
/// frames after such an error, so this reads the bytes under it: closing
/// with them unread would answer with a reset, which can cost the client
/// the close frame.
async fn refuse(mut socket: Socket, close: Option<Message>, timeout: Duration) {
    if let Some(close) = close {
        // Refused (`AlreadyClosed`) when the layer queued a close itself.
        let _ = socket.start_send_unpin(close);
    }
    let sent = tokio::time::timeout(timeout, async {
        socket.flush().await.is_ok() && socket.get_mut().shutdown().await.is_ok()
    })
    .await;
    if sent != Ok(true) {
        return;
    }
    let mut io = socket.into_inner();
    let mut discard = vec![0u8; 16 * 1024];
    let _ = tokio::time::timeout(timeout, async {
        while matches!(io.read(&mut discard).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// Completes the closing handshake: reads (and discards) until the peer's
/// close or the end of the stream, within `timeout`. Reading also flushes a
/// close frame the WebSocket layer queued itself (the echo of a peer's
/// close), and leaves no unread bytes that would turn our FIN into
/// a reset, which could cost the peer our close frame. A ping over the
/// budget ends it: until our close frame is out, the WebSocket layer still
/// queues a pong for every ping it reads.
async fn drain(stream: &mut SplitStream<Socket>, pings: &mut PingBudget, timeout: Duration) {
    let _ = tokio::time::timeout(timeout, async {
        while let Some(Ok(message)) = stream.next().await {
            if message.is_ping() && pings.ping(std::time::Instant::now()).is_err() {
                return;
            }
        }
    })
    .await;
}

/// Resolves once the connection is terminated urgently; never if the
/// termination's sender is gone (the connection is ending by another path).
async fn urgent(kill: &mut watch::Receiver<Option<Termination>>) {
    let urgent = kill
        .wait_for(|k| matches!(k, Some(Termination::Urgent { .. })))
        .await
        .is_ok();
    if !urgent {
        std::future::pending::<()>().await;
    }
}

/// The most frames one write gathers: a burst of pushes leaves in one
/// `write` (instead of one per frame), while an urgent termination is still
/// looked at between bursts.
const BURST_FRAMES: usize = 64;

/// How a burst of frames ended.
enum Burst {
    Written,
    /// The socket failed.
    Failed,
    /// The queue held a close frame after the burst's frames (written).
    ThenClose {
        code: u16,
        reason: String,
    },
}

/// Feeds `first` and the frames already queued behind it (up to
/// [`BURST_FRAMES`]), then flushes once. `taken` holds `first`'s bytes and
/// gets those of every frame taken after it, as they are taken.
async fn write_burst(
    sink: &mut Sink,
    outbox: &mut OutboxReader,
    first: Bytes,
    taken: &AtomicUsize,
) -> Burst {
    if sink.feed(Message::text(first)).await.is_err() {
        return Burst::Failed;
    }
    let mut then = None;
    for _ in 1..BURST_FRAMES {
        match outbox.try_recv() {
            Some(Outbound::Frame(text)) => {
                taken.fetch_add(text.len(), Ordering::Relaxed);
                if sink.feed(Message::text(text)).await.is_err() {
                    return Burst::Failed;
                }
            }
            Some(Outbound::Close { code, reason }) => {
                then = Some(Burst::ThenClose { code, reason });
                break;
            }
            None => break,
        }
    }
    if sink.flush().await.is_err() {
        return Burst::Failed;
    }
    then.unwrap_or(Burst::Written)
}

async fn write_loop(
    mut sink: Sink,
    mut outbox: OutboxReader,
    mut kill: watch::Receiver<Option<Termination>>,
    flush_timeout: Duration,
) -> Sink {
    loop {
        let out = tokio::select! {
            biased;
            () = urgent(&mut kill) => break,
            out = outbox.recv() => out,
        };
        let first = match out {
            None => return sink,
            Some(Outbound::Frame(text)) => text,
            Some(Outbound::Close { code, reason }) => {
                let close = sink.send(close_message(code, &reason));
                let _ = tokio::time::timeout(flush_timeout, close).await;
                return sink;
            }
        };
        // Bytes taken from the queue, released whichever way the burst ends.
        let taken = AtomicUsize::new(first.len());
        let burst = tokio::select! {
            biased;
            () = urgent(&mut kill) => {
                outbox.release(taken.load(Ordering::Relaxed));
                break;
            }
            burst = write_burst(&mut sink, &mut outbox, first, &taken) => burst,
        };
        outbox.release(taken.load(Ordering::Relaxed));
        match burst {
            Burst::Written => {}
            Burst::Failed => return sink,
            Burst::ThenClose { code, reason } => {
                let close = sink.send(close_message(code, &reason));
                let _ = tokio::time::timeout(flush_timeout, close).await;
                return sink;
            }
        }
    }
    // Terminated urgently: the close frame goes ahead of the queue. If the
    // client does not read, it cannot leave either; the timeout ends it.
    let how = kill.borrow().clone();
    if let Some(Termination::Urgent { code, reason }) = how {
        let close = sink.send(close_message(code, &reason));
        let _ = tokio::time::timeout(flush_timeout, close).await;
    }
    sink
}
