//! Recording relays between the participants and the devserver: a
//! WebSocket relay for the realtime wire and an HTTP/1.1 relay for the REST
//! listener. Each forwards bytes unchanged and records what went through,
//! in one list shared by every relay, so the transcript is what was on the
//! wire rather than what either end thinks it sent. The opcodes are named
//! here, where the steps wait for frames by them.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// How long a step may take before the generator gives up.
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// Opcodes by name, for readable barriers.
pub(crate) mod op {
    pub(crate) const LOGIN: u64 = 10;
    pub(crate) const READY: u64 = 11;
    pub(crate) const HEARTBEAT: u64 = 12;
    pub(crate) const MENU: u64 = 20;
    pub(crate) const SEND: u64 = 30;
    pub(crate) const MESSAGE: u64 = 32;
    pub(crate) const NOTIFICATION: u64 = 33;
    pub(crate) const CHANNEL_ADDED: u64 = 34;
    pub(crate) const CHANNEL_REMOVED: u64 = 35;
    pub(crate) const HISTORY: u64 = 40;
    pub(crate) const CHANNEL_KEY: u64 = 50;
    pub(crate) const KEY_SHARE: u64 = 51;
    pub(crate) const PUBLIC_KEY: u64 = 52;
    pub(crate) const JOIN: u64 = 60;
    pub(crate) const MEMBERS: u64 = 61;
    pub(crate) const EMOJIS: u64 = 240;
    pub(crate) const REST_MINT: u64 = 638;
}

/// Which way something went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    ToService,
    ToClient,
}

impl Dir {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::ToService => "to_service",
            Self::ToClient => "to_client",
        }
    }
}

/// What went through a relay.
#[derive(Debug, Clone)]
pub(crate) enum Payload {
    /// A WebSocket text frame, verbatim.
    Frame(String),
    /// A WebSocket binary frame.
    Binary(Vec<u8>),
    /// The close frame that began a connection's closing handshake (the
    /// other end's echo of it is not recorded).
    Close { code: u16, reason: String },
    /// An HTTP request: method, path with query, the headers kept, body.
    Request {
        method: String,
        target: String,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// An HTTP response: status, the headers kept, body.
    Response {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) conn: String,
    pub(crate) dir: Dir,
    pub(crate) payload: Payload,
}

impl Event {
    /// The opcode of a recorded frame.
    pub(crate) fn op(&self) -> Option<u64> {
        match &self.payload {
            Payload::Frame(text) => serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v["op"].as_u64()),
            _ => None,
        }
    }

    pub(crate) fn is(&self, conn: &str, dir: Dir, op: u64) -> bool {
        self.conn == conn && self.dir == dir && self.op() == Some(op)
    }
}

/// The shared record.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    events: Arc<Mutex<Vec<Event>>>,
    changed: Arc<Notify>,
}

impl Recorder {
    fn push(&self, conn: &str, dir: Dir, payload: Payload) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Event {
                conn: conn.to_owned(),
                dir,
                payload,
            });
        self.changed.notify_waiters();
    }

    pub(crate) fn snapshot(&self) -> Vec<Event> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Waits until `cond` holds for the events recorded from `from` on.
    pub(crate) async fn wait_until(
        &self,
        what: &str,
        from: usize,
        cond: impl Fn(&[Event]) -> bool,
    ) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            // Registered before the check, so a push between the check and the await still wakes us.
            notified.as_mut().enable();
            if cond(&self.snapshot()[from..]) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(format!("timed out waiting for {what}"));
            }
        }
    }

    /// Waits until `count` frames of opcode `op` went `dir` on `conn` since `from`.
    pub(crate) async fn wait_frames(
        &self,
        from: usize,
        conn: &str,
        dir: Dir,
        op: u64,
        count: usize,
    ) -> Result<(), String> {
        let what = format!("{count} frame(s) of op {op} {} on {conn}", dir.as_str());
        self.wait_until(&what, from, |events| {
            events.iter().filter(|e| e.is(conn, dir, op)).count() >= count
        })
        .await
    }
}

async fn bind() -> Result<(TcpListener, SocketAddr), String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind a relay: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("relay address: {e}"))?;
    Ok((listener, addr))
}

/// Starts a WebSocket relay to `upstream` whose connections are recorded as
/// `conn`; returns the URL to connect to.
pub(crate) async fn ws_relay(
    recorder: &Recorder,
    conn: &str,
    upstream: &str,
) -> Result<String, String> {
    let (listener, addr) = bind().await?;
    let (recorder, conn, upstream) = (recorder.clone(), conn.to_owned(), upstream.to_owned());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (recorder, conn, upstream) = (recorder.clone(), conn.clone(), upstream.clone());
            tokio::spawn(async move {
                if let Err(e) = relay_ws(tcp, &recorder, &conn, &upstream).await {
                    eprintln!("gen-vectors: websocket relay {conn}: {e}");
                }
            });
        }
    });
    Ok(format!("ws://{addr}/ws"))
}

async fn relay_ws(
    tcp: TcpStream,
    recorder: &Recorder,
    conn: &str,
    upstream: &str,
) -> Result<(), String> {
    let _ = tcp.set_nodelay(true);
    let client = tokio_tungstenite::accept_async(tcp)
        .await
        .map_err(|e| format!("accept: {e}"))?;
    let (service, _) = tokio_tungstenite::connect_async(upstream)
        .await
        .map_err(|e| format!("connect upstream: {e}"))?;
    let (client_tx, client_rx) = client.split();
    let (service_tx, service_rx) = service.split();
    // Set by the first close frame either way: an echo is not recorded,
    // so a transcript does not depend on whether a client read its close.
    let closing = AtomicBool::new(false);
    let up = forward(
        client_rx,
        service_tx,
        recorder,
        conn,
        Dir::ToService,
        &closing,
    );
    let down = forward(
        service_rx,
        client_tx,
        recorder,
        conn,
        Dir::ToClient,
        &closing,
    );
    tokio::join!(up, down);
    Ok(())
}

/// Copies messages one way, recording text, binary and the first close
/// frame, until either end stops.
async fn forward<R, W>(
    mut from: R,
    mut to: W,
    recorder: &Recorder,
    conn: &str,
    dir: Dir,
    closing: &AtomicBool,
) where
    R: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
    W: futures_util::Sink<Message> + Unpin,
{
    while let Some(Ok(message)) = from.next().await {
        match &message {
            Message::Text(text) => recorder.push(conn, dir, Payload::Frame(text.to_string())),
            Message::Binary(bytes) => recorder.push(conn, dir, Payload::Binary(bytes.to_vec())),
            Message::Close(frame) if !closing.swap(true, Ordering::SeqCst) => {
                let (code, reason) = frame.as_ref().map_or((1005, String::new()), |f| {
                    (u16::from(f.code), f.reason.to_string())
                });
                recorder.push(conn, dir, Payload::Close { code, reason });
            }
            _ => {}
        }
        let closed = matches!(message, Message::Close(_));
        if to.send(message).await.is_err() || closed {
            break;
        }
    }
    // One side is gone: make sure the other learns it too (its answer to
    // the relay's own close is not part of the conversation).
    closing.store(true, Ordering::SeqCst);
    let _ = to
        .send(Message::Close(Some(CloseFrame {
            code: CloseCode::Away,
            reason: "relay closed".into(),
        })))
        .await;
    let _ = to.close().await;
}

/// Headers a transcript keeps (everything else is transport detail: host
/// with its port, user agent, content length).
const KEPT_HEADERS: [&str; 4] = [
    "content-type",
    "verification",
    "cache-control",
    "authorization",
];

/// Starts an HTTP/1.1 relay to `upstream` recorded as `conn`; returns its base URL.
pub(crate) async fn http_relay(
    recorder: &Recorder,
    conn: &str,
    upstream: SocketAddr,
) -> Result<String, String> {
    let (listener, addr) = bind().await?;
    let (recorder, conn) = (recorder.clone(), conn.to_owned());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (recorder, conn) = (recorder.clone(), conn.clone());
            tokio::spawn(async move {
                if let Err(e) = relay_http(tcp, &recorder, &conn, addr, upstream).await {
                    eprintln!("gen-vectors: http relay {conn}: {e}");
                }
            });
        }
    });
    Ok(format!("http://{addr}"))
}

/// One HTTP/1.1 message: its head lines and body bytes.
pub(crate) struct HttpMessage {
    raw: Vec<u8>,
    pub(crate) start_line: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

/// Reads one message with a `content-length` body (or none); `None` at a clean end of stream.
pub(crate) async fn read_message(tcp: &mut TcpStream) -> Result<Option<HttpMessage>, String> {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = tcp
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return if raw.is_empty() {
                Ok(None)
            } else {
                Err("stream ended inside a message head".into())
            };
        }
        raw.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.split("\r\n").filter(|l| !l.is_empty());
    let start_line = lines.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v != "identity")
    {
        return Err("chunked bodies are not supported by the relay".into());
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map_or(Ok(0), |(_, v)| v.parse())
        .map_err(|e| format!("content-length: {e}"))?;
    while raw.len() < head_end + length {
        let n = tcp
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("stream ended inside a body".into());
        }
        raw.extend_from_slice(&chunk[..n]);
    }
    let body = raw[head_end..head_end + length].to_vec();
    raw.truncate(head_end + length);
    Ok(Some(HttpMessage {
        raw,
        start_line,
        headers,
        body,
    }))
}

fn kept(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(k, _)| KEPT_HEADERS.contains(&k.as_str()))
        .cloned()
        .collect()
}

/// The request as the service gets it: a `Host` naming the relay names
/// the service instead (the admin endpoint serves only its own address);
/// any other `Host` is left alone.
fn for_upstream(request: &HttpMessage, own: SocketAddr, upstream: SocketAddr) -> Vec<u8> {
    let own = own.to_string();
    let mut head = format!("{}\r\n", request.start_line);
    for (name, value) in &request.headers {
        let value = if name == "host" && *value == own {
            upstream.to_string()
        } else {
            value.clone()
        };
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut raw = head.into_bytes();
    raw.extend_from_slice(&request.body);
    raw
}

async fn relay_http(
    mut client: TcpStream,
    recorder: &Recorder,
    conn: &str,
    own: SocketAddr,
    upstream: SocketAddr,
) -> Result<(), String> {
    let mut service = TcpStream::connect(upstream)
        .await
        .map_err(|e| format!("connect upstream: {e}"))?;
    while let Some(request) = read_message(&mut client).await? {
        let mut parts = request.start_line.split(' ');
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or_default().to_owned();
        recorder.push(
            conn,
            Dir::ToService,
            Payload::Request {
                method,
                target,
                headers: kept(&request.headers),
                body: String::from_utf8_lossy(&request.body).into_owned(),
            },
        );
        service
            .write_all(&for_upstream(&request, own, upstream))
            .await
            .map_err(|e| format!("write upstream: {e}"))?;
        let response = read_message(&mut service)
            .await?
            .ok_or("the service closed without answering")?;
        let status = response
            .start_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {:?}", response.start_line))?;
        recorder.push(
            conn,
            Dir::ToClient,
            Payload::Response {
                status,
                headers: kept(&response.headers),
                body: String::from_utf8_lossy(&response.body).into_owned(),
            },
        );
        client
            .write_all(&response.raw)
            .await
            .map_err(|e| format!("write downstream: {e}"))?;
    }
    Ok(())
}
