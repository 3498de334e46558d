//! The realtime wire's TLS configuration: rustls with an explicit `ring`
//! provider, the webpki roots plus the caller's `root_certificates`.
//!
//! The provider is named here rather than taken from the process default:
//! an application whose graph enables two rustls providers (ring and
//! aws-lc-rs) and installs neither makes `ClientConfig::builder()` panic,
//! and one that installs its own default must not change what botlane
//! trusts or negotiates.
//!
//! Clients with the same `root_certificates` share one configuration for
//! as long as any of them lives (`share.rs`): its root store is the
//! largest thing an idle client would otherwise hold on its own.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use crate::error::ClientError;
use crate::share::ShareByKey;

/// The configurations in use, by the caller's extra roots.
static CONFIGS: ShareByKey<Vec<Vec<u8>>, ClientConfig> = ShareByKey::new();

/// The client configuration for `extra_roots`, at `Client::new`: the one
/// a live client with the same roots uses, or a new one. A certificate
/// that does not parse is an option error naming `root_certificate`.
pub(crate) fn client_config(extra_roots: &[Vec<u8>]) -> Result<Arc<ClientConfig>, ClientError> {
    CONFIGS.get_or_try_make(extra_roots.to_vec(), |a, b| a == b, || build(extra_roots))
}

fn build(extra_roots: &[Vec<u8>]) -> Result<ClientConfig, ClientError> {
    let invalid = |rule: String| ClientError::InvalidOption {
        option: "root_certificate",
        rule,
    };
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for (i, der) in extra_roots.iter().enumerate() {
        roots
            .add(CertificateDer::from(der.as_slice()))
            .map_err(|e| invalid(format!("certificate {i} is not a usable DER root ({e})")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(format!("the TLS configuration cannot be built ({e})")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_root_is_an_option_error() {
        let err = client_config(&[b"not der".to_vec()]).expect_err("not a certificate");
        let text = err.to_string();
        assert!(
            text.starts_with(
                "invalid client option `root_certificate`: certificate 0 is not a usable DER root"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_default_roots_are_there() {
        assert!(client_config(&[]).is_ok());
    }

    #[test]
    fn equal_roots_share_one_configuration_and_other_roots_do_not() {
        let (a, b) = (client_config(&[]).unwrap(), client_config(&[]).unwrap());
        assert!(
            Arc::ptr_eq(&a, &b),
            "equal options built two configurations"
        );
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let der = cert.cert.der().to_vec();
        let own = client_config(std::slice::from_ref(&der)).unwrap();
        assert!(
            !Arc::ptr_eq(&a, &own),
            "other roots got the default configuration"
        );
        let own_again = client_config(&[der]).unwrap();
        assert!(Arc::ptr_eq(&own, &own_again));
    }
}
