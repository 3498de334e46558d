//! https for the REST listener: a root and a `localhost` certificate made at
//! start, and a listener that hands axum finished TLS streams.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::Listener;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::PrivateKeyDer;
use rustls::ServerConfig;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::DevServerError;

/// The names the REST certificate covers: every loopback spelling a client
/// may use in `rest_url`.
pub(crate) const CERTIFIED_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How long the accept loop backs off after a failed accept (such as too
/// many open files), so it does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A fresh root, the server configuration presenting a certificate it
/// signed, and the root for clients to trust.
pub(crate) struct TlsMaterial {
    pub(crate) acceptor: TlsAcceptor,
    pub(crate) root_der: Vec<u8>,
    pub(crate) root_pem: String,
}

fn tls_error(e: impl std::fmt::Display) -> DevServerError {
    DevServerError::Tls(e.to_string())
}

/// Makes a root certificate and a leaf for [`CERTIFIED_HOSTS`] signed by it.
///
/// A separate root (rather than one self-signed leaf) is what a client meets
/// in production: it trusts a root, and the server presents a leaf.
pub(crate) fn generate() -> Result<TlsMaterial, DevServerError> {
    let mut root_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
    root_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    root_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    root_params
        .distinguished_name
        .push(DnType::CommonName, "botlane-devserver root");
    let root_key = KeyPair::generate().map_err(tls_error)?;
    let root = CertifiedIssuer::self_signed(root_params, root_key).map_err(tls_error)?;

    let hosts: Vec<String> = CERTIFIED_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    let mut leaf_params = CertificateParams::new(hosts).map_err(tls_error)?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf_params.use_authority_key_identifier_extension = true;
    let leaf_key = KeyPair::generate().map_err(tls_error)?;
    let leaf = leaf_params.signed_by(&leaf_key, &root).map_err(tls_error)?;

    // The ring provider explicitly: the process default would be ambiguous
    // if another crate in the build enabled a second provider.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone(), root.der().clone()],
            PrivateKeyDer::from(leaf_key),
        )
        .map_err(tls_error)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsMaterial {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        root_der: root.der().to_vec(),
        root_pem: root.pem(),
    })
}

/// A listener whose connections have finished their TLS handshake.
///
/// Handshakes run in their own tasks, so a slow or silent client cannot
/// hold up the others.
pub(crate) struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local_addr: SocketAddr,
    accept_loop: JoinHandle<()>,
}

impl TlsListener {
    pub(crate) fn new(
        tcp: TcpListener,
        acceptor: TlsAcceptor,
        shutdown: watch::Receiver<bool>,
    ) -> io::Result<Self> {
        let local_addr = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        let accept_loop = tokio::spawn(accept_loop(tcp, acceptor, tx, shutdown));
        Ok(Self {
            ready,
            local_addr,
            accept_loop,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accept_loop.abort();
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accept loop ended, which happens only at shutdown: accept
            // nothing more and let the graceful shutdown finish.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

async fn accept_loop(
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
    shutdown: watch::Receiver<bool>,
) {
    loop {
        let (stream, peer) = match tcp.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::debug!(error = %e, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let ready = ready.clone();
        let mut shutdown = shutdown.clone();
        // No handshake timeout: a timer would fire early in tests that pause
        // the clock; a stalled handshake ends with its peer or at shutdown.
        tokio::spawn(async move {
            let handshake = tokio::select! {
                handshake = acceptor.accept(stream) => handshake,
                _ = shutdown.wait_for(|stop| *stop) => return,
            };
            match handshake {
                Ok(tls) => {
                    // A closed channel means the listener is gone.
                    let _ = ready.send((tls, peer)).await;
                }
                Err(e) => tracing::debug!(%peer, error = %e, "tls handshake failed"),
            }
        });
    }
}
