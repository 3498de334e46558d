//! TLS for the listeners: a root and a `localhost` certificate made at start
//! (the accept loop in `listener/` does the handshakes).

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::PrivateKeyDer;
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::DevServerError;

/// The names the REST certificate covers: every loopback spelling a client
/// may use in `rest_url`.
pub(crate) const CERTIFIED_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

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
