//! Opening a [`TestUser`](super::TestUser)'s WebSocket: TCP to each resolved
//! address in turn (Nagle off), TLS for `wss`, then the opening handshake,
//! all under one timeout.

use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_websockets::{ClientBuilder, Limits, WebSocketStream};
use url::Url;

use super::TestUserError;
use crate::MAX_FRAME_BYTES;

/// How long opening the WebSocket may take, TCP, TLS and handshake together.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A byte stream, plain or TLS.
pub(super) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A [`TestUser`](super::TestUser)'s socket.
pub(super) type Socket = WebSocketStream<Box<dyn Io>>;

/// Opens `url` (`ws://` or `wss://`), trusting only `root` (DER) for `wss`.
pub(super) async fn open(url: &str, root: Option<&[u8]>) -> Result<Socket, TestUserError> {
    let fail = |reason: String| TestUserError::Connect {
        url: url.to_owned(),
        reason,
    };
    tokio::time::timeout(CONNECT_TIMEOUT, open_within(url, root))
        .await
        .map_err(|_| fail(format!("no connection within {CONNECT_TIMEOUT:?}")))?
        .map_err(fail)
}

async fn open_within(url: &str, root: Option<&[u8]>) -> Result<Socket, String> {
    let parsed = Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    let tls = match parsed.scheme() {
        "ws" => false,
        "wss" => true,
        other => return Err(format!("the scheme must be ws or wss, not {other}")),
    };
    let host = parsed.host_str().ok_or("the URL has no host")?;
    // `host_str` keeps an IPv6 address's brackets; the resolver wants none.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = parsed
        .port_or_known_default()
        .ok_or("the URL has no port")?;
    let tcp = connect_tcp(host, port).await?;
    let io: Box<dyn Io> = if tls {
        let root = root
            .ok_or("a wss URL needs the service's root certificate: use TestUser::connect_tls")?;
        Box::new(tls_handshake(tcp, host, root).await?)
    } else {
        Box::new(tcp)
    };
    let (socket, _) = ClientBuilder::new()
        .uri(url)
        .map_err(|e| format!("not a WebSocket URI ({e})"))?
        .limits(Limits::default().max_payload_len(Some(MAX_FRAME_BYTES)))
        .connect_on(io)
        .await
        .map_err(|e| format!("WebSocket handshake failed: {e}"))?;
    Ok(socket)
}

/// Tries every address `host` resolves to, in order, until one accepts.
async fn connect_tcp(host: &str, port: u16) -> Result<TcpStream, String> {
    let addrs = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let mut last = format!("{host} resolves to no address");
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(tcp) => {
                // Realtime frames are small and every reply is waited for.
                tcp.set_nodelay(true)
                    .map_err(|e| format!("cannot set TCP_NODELAY: {e}"))?;
                return Ok(tcp);
            }
            Err(e) => last = format!("tcp connect to {addr} failed: {e}"),
        }
    }
    Err(last)
}

async fn tls_handshake(
    tcp: TcpStream,
    host: &str,
    root: &[u8],
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(root.to_vec()))
        .map_err(|e| format!("the root certificate is not usable: {e}"))?;
    // The ring provider explicitly: the process default would be ambiguous
    // if another crate in the build enabled a second provider.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot configure tls: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(host.to_owned())
        .map_err(|e| format!("{host} is not a valid tls server name: {e}"))?;
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls handshake failed: {e}"))
}
