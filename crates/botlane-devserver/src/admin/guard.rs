//! Who may drive the admin endpoint: a request addressed to this listener
//! by a loopback name and port (so a web page whose host name was rebound
//! to 127.0.0.1 is refused), carrying the admin token made at start. The
//! playground's routes judge the host a request names by the same rule
//! ([`addressed_here`]), with names of their own.

use std::fmt;

use axum::http::header::{AUTHORIZATION, HOST};
use axum::http::{HeaderMap, Uri};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};

use crate::DevServerError;

/// Random bytes in an admin token.
const TOKEN_BYTES: usize = 32;

/// The admin token: kept as a secret (redacted `Debug`, zeroed on drop),
/// compared through its SHA-256 in constant time.
pub(crate) struct AdminToken {
    token: SecretString,
    digest: [u8; 32],
}

impl AdminToken {
    /// A fresh token: `adm_` and 32 random bytes in base64url.
    pub(crate) fn generate() -> Result<Self, DevServerError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        OsRng
            .try_fill_bytes(&mut bytes)
            .map_err(|_| DevServerError::Random)?;
        let token = format!("adm_{}", URL_SAFE_NO_PAD.encode(bytes));
        let digest = Sha256::digest(token.as_bytes()).into();
        Ok(Self {
            token: SecretString::from(token),
            digest,
        })
    }

    pub(crate) fn expose(&self) -> &str {
        self.token.expose_secret()
    }

    /// Whether `presented` is the token. Both sides are hashed first, so
    /// neither the length nor the first differing byte of the token can
    /// show in the time taken, and the digests are compared without an
    /// early exit.
    pub(crate) fn matches(&self, presented: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let difference = presented
            .iter()
            .zip(&self.digest)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        difference == 0
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminToken([REDACTED])")
    }
}

/// Why a request is not taken as addressed to this listener.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HostRefusal {
    /// More than one `Host` header, which RFC 9112 §3.2 answers with 400:
    /// two parsers could each read another.
    Repeated,
    /// The host named is another one, or none is.
    Foreign,
}

/// Whether the request names this listener, as `is_ours` judges the host
/// it names: the authority of an absolute-form request line (which RFC
/// 9112 §3.2.2 puts in place of `Host`), else the one `Host` header.
pub(crate) fn addressed_here(
    uri: &Uri,
    headers: &HeaderMap,
    is_ours: impl FnOnce(&str) -> bool,
) -> Result<(), HostRefusal> {
    let mut hosts = headers.get_all(HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err(HostRefusal::Repeated);
    }
    let named = match uri.authority() {
        Some(authority) => Some(authority.as_str()),
        None => host.and_then(|h| h.to_str().ok()),
    };
    if named.is_some_and(is_ours) {
        Ok(())
    } else {
        Err(HostRefusal::Foreign)
    }
}

/// Whether `host` is exactly `127.0.0.1:<port>`, `[::1]:<port>` or
/// `localhost:<port>` (the name case-insensitively): the names a client on
/// this machine uses, with this listener's port.
pub(crate) fn is_this_listener(host: &str, port: u16) -> bool {
    let Some((name, given)) = host.rsplit_once(':') else {
        return false;
    };
    let name_ok = name == "127.0.0.1" || name == "[::1]" || name.eq_ignore_ascii_case("localhost");
    name_ok && given == port.to_string()
}

/// The token of an `Authorization: Bearer <token>` header (the scheme
/// case-insensitively); `None` for a missing header or another scheme.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(name: axum::http::HeaderName, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).unwrap());
        headers
    }

    fn host_allowed(headers: &HeaderMap, port: u16) -> bool {
        addressed_here(&Uri::from_static("/admin"), headers, |h| {
            is_this_listener(h, port)
        })
        .is_ok()
    }

    #[test]
    fn only_loopback_names_with_this_port_are_allowed() {
        for ok in [
            "127.0.0.1:7702",
            "[::1]:7702",
            "localhost:7702",
            "LocalHost:7702",
        ] {
            assert!(host_allowed(&headers(HOST, ok), 7702), "{ok}");
        }
        for bad in [
            "evil.example:7702",
            "evil.example",
            "127.0.0.1",
            "127.0.0.1:7703",
            "127.0.0.2:7702",
            "localhost.evil.example:7702",
            "localhost:7702.evil.example",
            "[::1]",
            "0.0.0.0:7702",
            "",
        ] {
            assert!(!host_allowed(&headers(HOST, bad), 7702), "{bad}");
        }
        assert!(!host_allowed(&HeaderMap::new(), 7702));
    }

    #[test]
    fn a_repeated_host_is_refused_and_an_absolute_target_names_the_host() {
        let at_7702 = |uri, headers| addressed_here(uri, headers, |h| is_this_listener(h, 7702));
        let mut twice = headers(HOST, "127.0.0.1:7702");
        twice.append(HOST, HeaderValue::from_static("evil.example"));
        let origin_form = Uri::from_static("/admin");
        assert_eq!(at_7702(&origin_form, &twice), Err(HostRefusal::Repeated));
        let ours = headers(HOST, "127.0.0.1:7702");
        let foreign = Uri::from_static("http://evil.example:7702/admin");
        assert_eq!(at_7702(&foreign, &ours), Err(HostRefusal::Foreign));
        let own = Uri::from_static("http://localhost:7702/admin");
        let elsewhere = headers(HOST, "evil.example");
        assert_eq!(at_7702(&own, &elsewhere), Ok(()));
    }

    #[test]
    fn the_token_is_read_from_a_bearer_header_only() {
        let token = |v: &str| bearer(&headers(AUTHORIZATION, v)).map(str::to_owned);
        assert_eq!(token("Bearer adm_x").as_deref(), Some("adm_x"));
        assert_eq!(token("bearer  adm_x ").as_deref(), Some("adm_x"));
        assert_eq!(token("Basic adm_x"), None);
        assert_eq!(token("Bearer"), None);
        assert_eq!(token("Bearer "), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }

    #[test]
    fn tokens_are_random_compared_whole_and_never_shown() {
        let a = AdminToken::generate().unwrap();
        let b = AdminToken::generate().unwrap();
        assert_ne!(a.expose(), b.expose());
        assert!(a.expose().starts_with("adm_") && a.expose().len() == 4 + 43);
        assert!(a.matches(a.expose()));
        assert!(!a.matches(b.expose()));
        assert!(!a.matches(&a.expose()[..20]));
        assert!(!a.matches(&format!("{}x", a.expose())));
        assert!(!a.matches(""));
        assert_eq!(format!("{a:?}"), "AdminToken([REDACTED])");
    }
}
