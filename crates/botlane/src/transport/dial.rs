//! Opening a realtime connection: resolve, TCP to each address in turn,
//! TLS for `wss://`, then the WebSocket upgrade on that stream, all under
//! `connect_timeout`.
//!
//! The crate's own `connect` takes only the first resolved address (so
//! `localhost` resolving to `::1` first would fail against a service bound
//! to `127.0.0.1`) and reads the upgrade response without a size limit;
//! hence the steps are done here and only the upgrade is the crate's.
//! The crate reports a refused upgrade by its status alone, so the response
//! is also kept as it is read, for its `Retry-After`.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_websockets::{ClientBuilder, Limits, MaybeTlsStream, WebSocketStream};
use url::Url;

use crate::error::{ConnectError, ConnectErrorKind};
use crate::sync::lock;
use crate::wire::MAX_FRAME_BYTES;

/// The most bytes the upgrade response (status line and headers) may take.
/// A peer that sends more, such as one endless header line, fails the
/// attempt instead of growing a buffer.
pub(crate) const MAX_HANDSHAKE_BYTES: usize = 16 * 1024;

/// An open realtime WebSocket.
pub(crate) type Socket = WebSocketStream<HandshakeLimit<MaybeTlsStream<TcpStream>>>;

/// The steps of an attempt, to say where a timeout struck.
const STEP_DNS: u8 = 0;
const STEP_TCP: u8 = 1;
const STEP_TLS: u8 = 2;
const STEP_UPGRADE: u8 = 3;

/// Opens the WebSocket at `url` (already checked by the options).
pub(crate) async fn dial(
    url: &Url,
    tls: &Arc<rustls::ClientConfig>,
    connect_timeout: Duration,
) -> Result<Socket, ConnectError> {
    let endpoint = endpoint(url);
    let step = AtomicU8::new(STEP_DNS);
    match tokio::time::timeout(connect_timeout, steps(url, &endpoint, tls, &step)).await {
        Ok(result) => result,
        Err(_) => {
            let during = match step.load(Ordering::Relaxed) {
                STEP_DNS => "resolving the host",
                STEP_TCP => "the tcp connect",
                STEP_TLS => "the tls handshake",
                _ => "the websocket upgrade (the service accepted tcp but did not answer)",
            };
            Err(ConnectError::new(
                ConnectErrorKind::Timeout,
                &endpoint,
                format!(
                    "no connection within the connect timeout of {} (stalled in {during})",
                    crate::human::duration(connect_timeout)
                ),
            ))
        }
    }
}

async fn steps(
    url: &Url,
    endpoint: &str,
    tls: &Arc<rustls::ClientConfig>,
    step: &AtomicU8,
) -> Result<Socket, ConnectError> {
    let fail = |kind, detail: String| ConnectError::new(kind, endpoint, detail);
    let host = match url.host() {
        Some(url::Host::Domain(name)) => name.to_owned(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return Err(fail(ConnectErrorKind::Dns, "the url names no host".into())),
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| {
            fail(
                ConnectErrorKind::Dns,
                format!("could not resolve host {host} ({e})"),
            )
        })?
        .collect();
    if addrs.is_empty() {
        return Err(fail(
            ConnectErrorKind::Dns,
            format!("host {host} resolved to no address"),
        ));
    }

    step.store(STEP_TCP, Ordering::Relaxed);
    let mut failures = Vec::new();
    let mut tcp = None;
    for addr in &addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                tcp = Some(stream);
                break;
            }
            Err(e) => failures.push(format!("{addr}: {}", io_reason(&e))),
        }
    }
    let Some(tcp) = tcp else {
        return Err(fail(
            ConnectErrorKind::Tcp,
            format!(
                "no address accepted a tcp connection ({})",
                failures.join("; ")
            ),
        ));
    };
    // Nagle off: frames are small and latency-bound (replies, heartbeats).
    tcp.set_nodelay(true).map_err(|e| {
        fail(
            ConnectErrorKind::Tcp,
            format!("cannot set TCP_NODELAY ({e})"),
        )
    })?;

    let stream = if url.scheme() == "wss" {
        step.store(STEP_TLS, Ordering::Relaxed);
        let name = ServerName::try_from(host.clone()).map_err(|_| {
            fail(
                ConnectErrorKind::Tls,
                format!("{host} is not a valid tls server name"),
            )
        })?;
        let tls = tokio_rustls::TlsConnector::from(tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| {
                let failed = fail(
                    ConnectErrorKind::Tls,
                    format!("the tls handshake failed ({})", io_reason(&e)),
                );
                // The service hung up: not a certificate it will keep sending.
                if hung_up(&e) {
                    failed.transient()
                } else {
                    failed
                }
            })?;
        MaybeTlsStream::Rustls(tls)
    } else {
        MaybeTlsStream::Plain(tcp)
    };

    step.store(STEP_UPGRADE, Ordering::Relaxed);
    let builder = ClientBuilder::new()
        .uri(url.as_str())
        .map_err(|_| {
            fail(
                ConnectErrorKind::Handshake,
                "the url is not a valid request target".into(),
            )
        })?
        .limits(Limits::default().max_payload_len(Some(MAX_FRAME_BYTES)));
    let head = Arc::new(Mutex::new(Vec::new()));
    let (mut socket, _response) = builder
        .connect_on(HandshakeLimit::new(
            stream,
            MAX_HANDSHAKE_BYTES,
            head.clone(),
        ))
        .await
        .map_err(|e| upgrade_error(e, endpoint, &lock(&head)))?;
    socket.get_mut().lift();
    Ok(socket)
}

/// Scheme, host and port: what an error may show of the url.
pub(crate) fn endpoint(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// Why the upgrade failed; `head` is the response as far as it was read.
fn upgrade_error(e: tokio_websockets::Error, endpoint: &str, head: &[u8]) -> ConnectError {
    use tokio_websockets::upgrade::Error as Upgrade;
    let fail = |detail: String| ConnectError::new(ConnectErrorKind::Handshake, endpoint, detail);
    match e {
        tokio_websockets::Error::Upgrade(Upgrade::DidNotSwitchProtocols(status)) => {
            ConnectError::new(
                ConnectErrorKind::Status,
                endpoint,
                format!("the service answered the upgrade with http status {status} instead of 101"),
            )
            .with_status(status, retry_after(head))
        }
        tokio_websockets::Error::Upgrade(Upgrade::MissingHeader(name)) => {
            fail(format!("the upgrade response lacks the {name} header"))
        }
        tokio_websockets::Error::Upgrade(Upgrade::WrongWebSocketAccept) => {
            fail("the upgrade response carries a wrong Sec-WebSocket-Accept".into())
        }
        tokio_websockets::Error::Upgrade(Upgrade::Parsing(p)) => {
            fail(format!("the upgrade response is not valid http ({p})"))
        }
        tokio_websockets::Error::Io(io) => match io.get_ref().and_then(|e| e.downcast_ref::<TooLarge>()) {
            Some(_) => fail(format!(
                "the upgrade response is over {MAX_HANDSHAKE_BYTES} bytes without ending its headers"
            )),
            None if io.kind() == io::ErrorKind::UnexpectedEof => {
                fail("the service closed the connection during the websocket upgrade".into())
                    .transient()
            }
            None if hung_up(&io) => {
                fail(format!("the websocket upgrade failed ({})", io_reason(&io))).transient()
            }
            None => fail(format!("the websocket upgrade failed ({})", io_reason(&io))),
        },
        _ => fail("the websocket upgrade failed".into()),
    }
}

/// The `Retry-After` of a response's head, as a wait from now: whole
/// seconds, or an HTTP date (one already past is no wait). `None` without
/// one, or with a value of neither form.
fn retry_after(head: &[u8]) -> Option<Duration> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    response.parse(head).ok()?;
    let value = response
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("retry-after"))?
        .value;
    let value = std::str::from_utf8(value).ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Whether the peer hung up (reset, aborted, or closed mid-step).
fn hung_up(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::UnexpectedEof
            | io::ErrorKind::BrokenPipe
    )
}

/// An I/O error in words: its kind, and the message of a TLS or other
/// inner error (which never holds a payload).
fn io_reason(e: &io::Error) -> String {
    match e.get_ref() {
        Some(inner) => inner.to_string(),
        None => e.kind().to_string(),
    }
}

/// The marker inside the I/O error of an oversize upgrade response.
#[derive(Debug)]
struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the upgrade response is over {MAX_HANDSHAKE_BYTES} bytes"
        )
    }
}

impl std::error::Error for TooLarge {}

/// A stream that lets at most `limit` bytes be read until [`lift`](Self::lift)
/// is called: the upgrade response is read through it, and copied into
/// `head`, and then the WebSocket frames (bounded by `max_payload_len`)
/// without a limit or a copy.
#[derive(Debug)]
pub(crate) struct HandshakeLimit<S> {
    inner: S,
    remaining: Option<usize>,
    head: Option<Arc<Mutex<Vec<u8>>>>,
}

impl<S> HandshakeLimit<S> {
    fn new(inner: S, limit: usize, head: Arc<Mutex<Vec<u8>>>) -> Self {
        Self {
            inner,
            remaining: Some(limit),
            head: Some(head),
        }
    }

    fn lift(&mut self) {
        self.remaining = None;
        self.head = None;
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for HandshakeLimit<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(remaining) = this.remaining else {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        };
        if remaining == 0 {
            return Poll::Ready(Err(io::Error::other(TooLarge)));
        }
        // Read into a bounded scratch buffer: the handshake is a few
        // hundred bytes, so the copy costs nothing and needs no unsafe.
        let mut scratch = [0u8; 1024];
        let want = remaining.min(buf.remaining()).min(scratch.len());
        let mut limited = ReadBuf::new(&mut scratch[..want]);
        match Pin::new(&mut this.inner).poll_read(cx, &mut limited) {
            Poll::Ready(Ok(())) => {
                let got = limited.filled();
                this.remaining = Some(remaining - got.len());
                if let Some(head) = &this.head {
                    lock(head).extend_from_slice(got);
                }
                buf.put_slice(got);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for HandshakeLimit<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn the_limit_holds_until_lifted() {
        let data = [b'a'; 100];
        let head = Arc::new(Mutex::new(Vec::new()));
        let mut limited = HandshakeLimit::new(&data[..], 40, head.clone());
        let mut got = Vec::new();
        let err = limited.read_to_end(&mut got).await.unwrap_err();
        assert_eq!(got.len(), 40, "exactly the limit was read");
        assert!(err.get_ref().unwrap().is::<TooLarge>());
        assert_eq!(lock(&head).len(), 40, "what was read is kept");
        limited.lift();
        limited.read_to_end(&mut got).await.unwrap();
        assert_eq!(got.len(), 100);
        assert_eq!(lock(&head).len(), 40, "nothing after the lift");
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let head = |value: &str| {
            format!("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: {value}\r\n\r\n")
        };
        assert_eq!(
            retry_after(head("2").as_bytes()),
            Some(Duration::from_secs(2))
        );
        let later = SystemTime::now() + Duration::from_secs(120);
        let by_date = retry_after(head(&httpdate::fmt_http_date(later)).as_bytes()).unwrap();
        // The date has whole seconds: up to one less than asked.
        assert!(
            by_date > Duration::from_secs(118) && by_date <= Duration::from_secs(120),
            "{by_date:?}"
        );
        let past = httpdate::fmt_http_date(SystemTime::UNIX_EPOCH);
        assert_eq!(retry_after(head(&past).as_bytes()), Some(Duration::ZERO));
        for unusable in ["soon", "-1", "1.5", ""] {
            assert_eq!(retry_after(head(unusable).as_bytes()), None, "{unusable}");
        }
        assert_eq!(
            retry_after(b"HTTP/1.1 503 Service Unavailable\r\n\r\n"),
            None
        );
    }

    #[test]
    fn endpoints_show_no_path_or_query() {
        let url = Url::parse("wss://chat.example/ws?token=secret").unwrap();
        assert_eq!(endpoint(&url), "wss://chat.example:443");
        let url = Url::parse("ws://[::1]:9000/ws").unwrap();
        assert_eq!(endpoint(&url), "ws://[::1]:9000");
    }
}
