//! One realtime connection: a task that owns the WebSocket, reads every
//! frame as it comes, writes queued frames and heartbeats, and routes each
//! incoming frame to the caller waiting for it (a reply) or to the session
//! (a push).
//!
//! Reading and writing are two futures of the one task, polled together: a
//! write stalled by a peer that does not read never stops the reading, so
//! replies and pushes keep being taken off the socket. Nothing the task does
//! with a frame waits: pushes are handed to [`Inbound::push`], which queues
//! them in a bounded queue without waiting.
//!
//! Replies carry no request id: they are matched by position within their
//! opcode. The slot for a reply is queued in the same step that writes the
//! request, so the FIFO of slots always mirrors the order on the wire; when
//! the connection ends, every waiting slot and every request still waiting
//! to be written fail at once, and the session is told why ([`Closed`]),
//! before the closing handshake.
//!
//! The connection ends, with a reason in words, when the service closes it,
//! when no frame arrives for `idle_timeout` (the heartbeat's reply is a
//! frame, so a healthy quiet session never gets there), when the service
//! sends a message over [`MAX_FRAME_BYTES`](crate::wire::MAX_FRAME_BYTES)
//! (closed with 1009), when it sends more pings than
//! [`PingBudget`] answers (closed with 1008), when a write stalls for
//! `request_timeout`, or at shutdown.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use botlane_proto::ping::PingBudget;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_websockets::{CloseCode, Message as WsMessage};

use super::dial::Socket;
use super::pending::{Pending, Slot, MAX_UNANSWERED};
use super::route::{route, Inbound};
use crate::deadline;
use crate::error::ClientError;
use crate::sync::stopped;
use crate::wire::{self, OpCode};

/// How long a closing handshake may take before the socket is dropped.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// How many requests may wait to be written.
const OUTGOING_CAPACITY: usize = 256;

/// The timings of one connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) request_timeout: Duration,
    pub(crate) heartbeat_interval: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) debug: bool,
}

struct Outgoing {
    op: OpCode,
    text: String,
    slot: Slot,
}

/// A handle to a live connection; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    tx: mpsc::Sender<Outgoing>,
    timeout: Duration,
}

/// Why and how a connection ended.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    /// In words, for `Event::Disconnected` (may quote the service's close reason).
    pub(crate) reason: String,
    /// A fixed label for logs, which never carry the service's text.
    pub(crate) kind: &'static str,
    /// The close code, when a close frame was received or sent.
    pub(crate) code: Option<u16>,
    close: Close,
}

/// What to do on the way out.
#[derive(Debug, Clone, Copy)]
enum Close {
    /// Send a close frame with this code.
    Send(CloseCode),
    /// A close frame is already queued (our echo, or our 1009): flush it.
    Flush,
    /// The peer is gone or stuck: just drop the socket.
    Drop,
}

impl Ended {
    fn new(kind: &'static str, reason: String, code: Option<u16>, close: Close) -> Self {
        Self {
            reason,
            kind,
            code,
            close,
        }
    }
}

impl Ended {
    /// The connection task panicked or was cancelled.
    pub(crate) fn task_failed() -> Self {
        Self::new(
            "task_failed",
            "the connection task stopped unexpectedly".into(),
            None,
            Close::Drop,
        )
    }
}

/// Why the connection ended, told as soon as it has (before the closing
/// handshake, which may take [`CLOSE_GRACE`]); an error when the task
/// panicked or was cancelled before it could say.
pub(crate) type Closed = oneshot::Receiver<Ended>;

impl Connection {
    /// Starts the connection task on an open socket.
    pub(crate) fn start<I: Inbound>(
        socket: Socket,
        settings: Settings,
        inbound: Arc<I>,
        mut shutdown: watch::Receiver<bool>,
    ) -> (Self, Closed) {
        let (tx, mut rx) = mpsc::channel::<Outgoing>(OUTGOING_CAPACITY);
        let (ended_tx, closed) = oneshot::channel();
        tokio::spawn(async move {
            let (mut sink, mut stream) = socket.split();
            let pending = Pending::default();
            let ended = tokio::select! {
                ended = read_loop(&mut stream, &pending, &*inbound, settings) => ended,
                ended = write_loop(&mut sink, &mut rx, &pending, settings) => ended,
                () = stopped(&mut shutdown) => Ended::new(
                    "shutdown",
                    "the client shut down".into(),
                    Some(1000),
                    Close::Send(CloseCode::NORMAL_CLOSURE),
                ),
            };
            // Callers are told now, not after the closing handshake: a
            // request made from here on fails at once (`is_closing`).
            rx.close();
            while let Ok(out) = rx.try_recv() {
                let opcode = out.op.code();
                let _ = out.slot.send(Err(ClientError::ConnectionClosed { opcode }));
            }
            pending.fail_all();
            let close = ended.close;
            let _ = ended_tx.send(ended);
            finish(&mut sink, close).await;
        });
        (
            Self {
                tx,
                timeout: settings.request_timeout,
            },
            closed,
        )
    }

    /// Whether the connection has ended (its closing handshake may still
    /// be under way): a request on it would fail at once.
    pub(crate) fn is_closing(&self) -> bool {
        self.tx.is_closed()
    }

    /// Sends a request and waits for its reply, decoded as `Rep`; queueing
    /// and waiting together take at most the request timeout.
    pub(crate) async fn request<Req, Rep>(&self, op: OpCode, req: &Req) -> Result<Rep, ClientError>
    where
        Req: Serialize + ?Sized,
        Rep: DeserializeOwned,
    {
        let opcode = op.code();
        let text = wire::encode_frame(op, req);
        let payload = tokio::time::timeout(self.timeout, async {
            let rx = self.enqueue(op, text).await?;
            match rx.await {
                Err(_) => Err(ClientError::ConnectionClosed { opcode }),
                Ok(result) => result,
            }
        })
        .await
        .map_err(|_| ClientError::Timeout { opcode })??;
        serde_json::from_str(&payload).map_err(|_| ClientError::MalformedReply { opcode })
    }

    /// Queues a request frame and returns the receiver of its reply. The
    /// reply is matched by position even if the receiver is dropped, so a
    /// cancelled caller never shifts replies onto later callers. A frame
    /// over [`MAX_FRAME_BYTES`](wire::MAX_FRAME_BYTES) is refused, never
    /// queued.
    pub(crate) async fn enqueue(
        &self,
        op: OpCode,
        text: String,
    ) -> Result<oneshot::Receiver<Result<String, ClientError>>, ClientError> {
        // The service would close the whole session with 1009 over it:
        // only this request fails, naming the limit.
        if text.len() > wire::MAX_FRAME_BYTES {
            return Err(ClientError::RequestTooLarge {
                opcode: op.code(),
                len: text.len(),
                max: wire::MAX_FRAME_BYTES,
            });
        }
        let (slot, rx) = oneshot::channel();
        self.tx
            .send(Outgoing { op, text, slot })
            .await
            .map_err(|_| ClientError::ConnectionClosed { opcode: op.code() })?;
        Ok(rx)
    }
}

#[cfg(test)]
impl Connection {
    /// A handle with no task behind it, for tests of what holds connections.
    /// Its receiver is leaked: a handle whose channel is closed reads as a
    /// connection that has ended ([`is_closing`](Self::is_closing)).
    pub(crate) fn detached() -> Self {
        let (tx, rx) = mpsc::channel(1);
        std::mem::forget(rx);
        Self {
            tx,
            timeout: Duration::from_secs(1),
        }
    }
}

async fn read_loop<I: Inbound>(
    stream: &mut SplitStream<Socket>,
    pending: &Pending,
    inbound: &I,
    settings: Settings,
) -> Ended {
    // One timer for the connection, set again only when the socket has run
    // dry after a frame: a timeout per frame read the clock and looked up
    // the runtime for every frame of a burst (docs/benchmarks.md, stage 7).
    // The silence is counted from the same moment as before, when reading
    // finds nothing more.
    let mut idle = std::pin::pin!(tokio::time::sleep(settings.idle_timeout));
    // Whether the timer was set since the last frame: it counts from the
    // first time reading found nothing after one.
    let mut armed = true;
    let mut pings = PingBudget::new();
    let mut held = I::Held::default();
    loop {
        let next = std::future::poll_fn(|cx| {
            if let Poll::Ready(next) = stream.poll_next_unpin(cx) {
                armed = false;
                return Poll::Ready(Some(next));
            }
            // Nothing ready: what the inbound side kept for the burst is
            // let go before the connection waits (`Inbound::idle`).
            inbound.idle(&mut held);
            if !std::mem::replace(&mut armed, true) {
                // A timeout past what the clock can name keeps the far
                // deadline `sleep` gave it.
                if let Some(deadline) =
                    tokio::time::Instant::now().checked_add(settings.idle_timeout)
                {
                    idle.as_mut().reset(deadline);
                }
            }
            idle.as_mut().poll(cx).map(|()| None)
        })
        .await;
        let next = match next {
            Some(next) => next,
            None => {
                return Ended::new(
                    "idle",
                    format!(
                        "no frame from the service for {}",
                        crate::human::duration(settings.idle_timeout)
                    ),
                    None,
                    Close::Drop,
                )
            }
        };
        let message = match next {
            Some(Ok(message)) => message,
            Some(Err(e)) => return read_error(e),
            None => {
                return Ended::new(
                    "eof",
                    "the service closed the connection without a close frame".into(),
                    None,
                    Close::Drop,
                )
            }
        };
        inbound.frame_received(&mut held);
        if let Some(text) = message.as_text() {
            if let Err(reason) = route(text, settings.debug, pending, inbound, &mut held) {
                return Ended::new(
                    "push_overflow",
                    reason,
                    Some(1008),
                    Close::Send(CloseCode::POLICY_VIOLATION),
                );
            }
        } else if let Some((code, reason)) = message.as_close() {
            let code = u16::from(code);
            let reason = if reason.is_empty() {
                format!("the service closed the connection ({code})")
            } else {
                format!("the service closed the connection ({code}: {reason})")
            };
            return Ended::new("closed_by_service", reason, Some(code), Close::Flush);
        } else if message.is_close() {
            return Ended::new(
                "closed_by_service",
                "the service closed the connection (no close code)".into(),
                None,
                Close::Flush,
            );
        } else if message.is_ping() {
            // The WebSocket layer has queued its pong already, read or not:
            // a flood would grow that queue without end.
            if let Err(flood) = pings.ping(std::time::Instant::now()) {
                return Ended::new(
                    "ping_flood",
                    format!("the service sent {flood} (closed with 1008)"),
                    Some(1008),
                    Close::Send(CloseCode::POLICY_VIOLATION),
                );
            }
        } else if message.is_binary()
            && let Some(swallowed) = inbound.warnings().malformed_frame.allow()
        {
            tracing::warn!(
                bytes = message.as_payload().len(),
                swallowed,
                "ignoring a binary frame: the wire is text frames"
            );
        }
        // Any frame, pongs included, has already reset the idle timer.
    }
}

fn read_error(e: tokio_websockets::Error) -> Ended {
    match e {
        tokio_websockets::Error::PayloadTooLong { len, max_len } => Ended::new(
            "oversize",
            format!(
                "the service sent a message of at least {len} bytes, over the limit of {max_len} \
                 bytes (closed with 1009)"
            ),
            Some(1009),
            Close::Flush,
        ),
        tokio_websockets::Error::Protocol(p) => Ended::new(
            "protocol",
            format!("the service broke the websocket protocol ({p})"),
            None,
            Close::Flush,
        ),
        tokio_websockets::Error::Io(io) => Ended::new(
            "read_failed",
            format!("reading from the service failed ({})", io.kind()),
            None,
            Close::Drop,
        ),
        _ => Ended::new(
            "read_failed",
            "reading from the service failed".into(),
            None,
            Close::Drop,
        ),
    }
}

async fn write_loop(
    sink: &mut SplitSink<Socket, WsMessage>,
    rx: &mut mpsc::Receiver<Outgoing>,
    pending: &Pending,
    settings: Settings,
) -> Ended {
    let every = settings.heartbeat_interval;
    let now = tokio::time::Instant::now();
    // An interval past what the clock can name (`Duration::MAX` and its
    // neighbours) means no heartbeat: its first tick is as far off as the
    // clock goes, which is what tokio's own timers do with such a wait.
    let first = tokio::time::Instant::from_std(deadline::after(now.into_std(), every));
    let mut heartbeat = tokio::time::interval_at(first, every);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let out = tokio::select! {
            out = rx.recv() => match out {
                Some(out) => out,
                None => return Ended::new(
                    "client_closed",
                    "the client closed the connection".into(),
                    Some(1000),
                    Close::Send(CloseCode::NORMAL_CLOSURE),
                ),
            },
            _ = heartbeat.tick() => {
                if let Some(ended) = unanswered(pending, settings.request_timeout) {
                    return ended;
                }
                // Nobody waits for the heartbeat's reply, but it still takes
                // its place in the FIFO; arriving, it resets the idle timer.
                let (slot, _) = oneshot::channel();
                Outgoing {
                    op: OpCode::Heartbeat,
                    text: wire::encode_frame(OpCode::Heartbeat, &wire::Empty {}),
                    slot,
                }
            }
        };
        if pending.push(out.op.code(), out.slot).is_err() {
            return unanswered_end(format!(
                "{MAX_UNANSWERED} requests of opcode {} went unanswered",
                out.op.code()
            ));
        }
        if settings.debug {
            tracing::debug!(op = out.op.code(), bytes = out.text.len(), "frame sent");
        }
        match tokio::time::timeout(
            settings.request_timeout,
            sink.send(WsMessage::text(out.text)),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let why = match e {
                    tokio_websockets::Error::Io(io) => io.kind().to_string(),
                    _ => "the connection is closing".to_owned(),
                };
                return Ended::new(
                    "write_failed",
                    format!("writing to the service failed ({why})"),
                    None,
                    Close::Drop,
                );
            }
            Err(_) => {
                return Ended::new(
                    "write_stalled",
                    format!(
                        "writing to the service stalled for {} (the service does not read)",
                        crate::human::duration(settings.request_timeout)
                    ),
                    None,
                    Close::Drop,
                )
            }
        }
    }
}

/// The closing handshake, bounded by [`CLOSE_GRACE`]: a peer that floods
/// or stalls cannot keep the task alive.
async fn finish(sink: &mut SplitSink<Socket, WsMessage>, close: Close) {
    let _ = tokio::time::timeout(CLOSE_GRACE, async {
        match close {
            Close::Send(code) => sink.send(WsMessage::close(Some(code), "")).await,
            Close::Flush => sink.flush().await,
            Close::Drop => Ok(()),
        }
    })
    .await;
}

/// The end of a connection whose service leaves requests unanswered: its
/// oldest request of some opcode has waited twice the request timeout (its
/// caller gave up at once). Any frame keeps the idle timer quiet, and
/// without request ids a slot must wait for its reply to keep the others
/// in order, so this is what bounds the slots of a service that answers
/// some opcodes and not others. Checked at each heartbeat.
fn unanswered(pending: &Pending, timeout: Duration) -> Option<Ended> {
    let (op, waited) = pending.oldest_past(timeout.saturating_mul(2))?;
    Some(unanswered_end(format!(
        "a request of opcode {op} went unanswered for {}",
        crate::human::duration(waited)
    )))
}

fn unanswered_end(what: String) -> Ended {
    Ended::new(
        "unanswered",
        format!("{what} (closed with 1008)"),
        Some(1008),
        Close::Send(CloseCode::POLICY_VIOLATION),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use tokio::net::TcpListener;
    use tokio_websockets::ServerBuilder;
    use url::Url;

    use super::*;
    use crate::sync::lock;
    use crate::transport::dial::dial;
    use crate::transport::route::tests::Collect;
    use crate::transport::tls::client_config;

    /// Pushes that arrive together share one hold, and the connection lets
    /// it go once reading finds nothing more: it keeps nothing alive while
    /// it waits (the session, for `SessionInbound`).
    #[tokio::test]
    async fn a_burst_shares_one_hold_let_go_while_the_connection_waits() {
        const PUSHES: usize = 50;
        const NOTIFICATION: &str =
            r#"{"op":33,"d":{"kind":"reply","channel_id":"c","message_id":"m","from":"u"}}"#;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("ws://{}/", listener.local_addr().unwrap())).unwrap();
        let (sent_tx, sent) = oneshot::channel();
        let service = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let (_, mut socket) = ServerBuilder::new().accept(tcp).await.unwrap();
            for _ in 0..PUSHES {
                socket.feed(WsMessage::text(NOTIFICATION)).await.unwrap();
            }
            socket.flush().await.unwrap();
            sent_tx.send(()).unwrap();
            // Open and silent from here on.
            std::future::pending::<()>().await;
            drop(socket);
        });
        let tls = client_config(&[]).unwrap();
        let socket = dial(&url, &tls, Duration::from_secs(10)).await.unwrap();
        // Every push is on its way before the connection reads the first.
        sent.await.unwrap();
        let inbound = Arc::new(Collect::default());
        let settings = Settings {
            request_timeout: Duration::from_secs(60),
            heartbeat_interval: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            debug: false,
        };
        let (_stop, shutdown) = watch::channel(false);
        let (_connection, _closed) =
            Connection::start(socket, settings, Arc::clone(&inbound), shutdown);
        tokio::time::timeout(Duration::from_secs(10), async {
            while lock(&inbound.pushes).len() < PUSHES || Arc::strong_count(&inbound.token) > 1 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("every push is handed over and the hold let go");
        let taken = inbound.taken.load(Relaxed);
        assert!(taken < PUSHES, "a hold was taken for each push ({taken})");
        service.abort();
    }
}
