//! `wss://` for real: the client against a TLS WebSocket service started
//! here (tokio-rustls and tokio-tungstenite on loopback, a root and a
//! `localhost` leaf from rcgen), trusting the root through
//! `root_certificate`; and services that stall the TLS handshake, or the
//! upgrade after it, against `connect_timeout`. One test installs a
//! process-wide default rustls provider (see `main.rs`).

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::{Client, ClientError, ClientOptions, ConnectErrorKind};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::PrivateKeyDer;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// A TLS acceptor for `localhost` and the root certificate (DER) its leaf
/// chains to.
fn tls_acceptor() -> (tokio_rustls::TlsAcceptor, Vec<u8>) {
    let mut root_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    root_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    root_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    root_params
        .distinguished_name
        .push(DnType::CommonName, "wss test root");
    let root = CertifiedIssuer::self_signed(root_params, KeyPair::generate().unwrap()).unwrap();
    let mut leaf_params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &root).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone(), root.der().clone()],
            PrivateKeyDer::from(leaf_key),
        )
        .unwrap();
    (
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        root.der().to_vec(),
    )
}

/// A TLS WebSocket service on loopback answering like `peer::behave`; returns
/// its address and the root certificate (DER) it chains to.
async fn tls_service() -> (SocketAddr, Vec<u8>) {
    let (acceptor, root) = tls_acceptor();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((tcp, _)) = listener.accept().await {
            n += 1;
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let config = WebSocketConfig::default();
                let Ok(mut ws) =
                    tokio_tungstenite::accept_async_with_config(tls, Some(config)).await
                else {
                    return;
                };
                if peer::login(&mut ws, n, &[]).await.is_some() {
                    peer::behave(&mut ws).await;
                }
            });
        }
    });
    (addr, root)
}

fn options(addr: SocketAddr, dir: &tempfile::TempDir) -> ClientOptions {
    ClientOptions::new(
        "wss-test-token",
        dir.path().join("k"),
        format!("wss://localhost:{}/ws", addr.port()),
    )
    .connect_timeout(Duration::from_secs(10))
}

/// A listener that accepts TCP and never speaks TLS: the client's hello
/// goes unanswered. `connect_timeout` bounds the TLS handshake as it does
/// the upgrade (`hostile.rs` drives a `ws://` listener that never
/// answers): login returns by itself, saying where it stalled.
#[tokio::test]
async fn a_listener_that_never_speaks_tls_fails_login_within_the_connect_timeout() {
    let (addr, accepted) = peer::serve(|tcp, _| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(tcp);
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // Room for resolving `localhost` on a loaded machine: the stall must be
    // in the handshake.
    let timeout = Duration::from_secs(2);
    let options = options(addr, &dir).connect_timeout(timeout);
    let url = format!("wss://localhost:{}", addr.port());
    peer::assert_login_times_out(options, &url, (timeout, "2 s"), "the tls handshake").await;
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

/// A service that completes TLS with a root the client trusts and then
/// never answers the WebSocket upgrade: the same one bound covers the
/// upgrade after a handshake that went through, and the error names the
/// upgrade, not the handshake.
#[tokio::test]
async fn a_tls_service_that_never_answers_the_upgrade_fails_login_within_the_connect_timeout() {
    let (acceptor, root) = tls_acceptor();
    let handshakes = Arc::new(AtomicUsize::new(0));
    let completed = handshakes.clone();
    let (addr, _) = peer::serve(move |tcp, _| {
        let (acceptor, completed) = (acceptor.clone(), completed.clone());
        async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            completed.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tls);
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // Room for a debug build's TLS handshake on a loaded machine: the
    // whole attempt, handshake included, must stall in the upgrade.
    let timeout = Duration::from_secs(2);
    let options = options(addr, &dir)
        .root_certificate(root)
        .connect_timeout(timeout);
    peer::assert_login_times_out(
        options,
        &format!("wss://localhost:{}", addr.port()),
        (timeout, "2 s"),
        "the websocket upgrade (the service accepted tcp but did not answer)",
    )
    .await;
    peer::eventually("the tls handshake completed", || {
        handshakes.load(Ordering::SeqCst) == 1
    })
    .await;
}

#[tokio::test]
async fn wss_works_with_the_callers_root() {
    let (addr, root) = tls_service().await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(options(addr, &dir).root_certificate(root)).await;
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    assert_eq!(client.bot_id().as_deref(), Some("bot-1"));
    client.close().await.unwrap();
}

#[tokio::test]
async fn wss_without_the_root_fails_with_a_tls_error() {
    let (addr, _) = tls_service().await;
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(options(addr, &dir)).unwrap();
    let err = client.login().await.unwrap_err();
    let ClientError::Connect(connect) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(connect.kind(), ConnectErrorKind::Tls);
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "could not connect to the realtime wire at wss://localhost:{}: the tls handshake failed (",
            addr.port()
        )) && text.contains("certificate"),
        "{text}"
    );
}

/// An application may install a process-wide default provider of its own
/// (or link a second one, which makes `ClientConfig::builder()` panic):
/// botlane names ring itself, so neither changes what it does. Here the
/// default offers no cipher suite at all; a client that used it could not
/// connect.
#[tokio::test]
async fn a_process_default_provider_does_not_matter() {
    let crippled = rustls::crypto::CryptoProvider {
        cipher_suites: Vec::new(),
        ..rustls::crypto::ring::default_provider()
    };
    let _ = crippled.install_default();
    assert!(rustls::crypto::CryptoProvider::get_default()
        .unwrap()
        .cipher_suites
        .is_empty());
    let (addr, root) = tls_service().await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(options(addr, &dir).root_certificate(root)).await;
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    client.close().await.unwrap();
}
