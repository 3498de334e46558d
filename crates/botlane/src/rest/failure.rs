//! Why no response (or no whole body) came: the HTTP client's error sorted
//! into what an operator acts on, by walking its `source()` chain and
//! downcasting, never by reading its text; and the lane's resolver, whose
//! own error type marks a DNS failure in that chain.

use std::error::Error as StdError;
use std::io;
use std::net::SocketAddr;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// How a request failed without a usable response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The lane's or the request's timeout.
    Timeout,
    /// No free connection within the timeout (`rest_max_connections`
    /// connections busy).
    NoConnection { max: usize },
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed on the certificate.
    Certificate,
    /// The TLS handshake failed otherwise.
    Tls,
    /// Nothing listens at the origin's host and port.
    Refused,
    /// The connection could not be opened for another reason.
    Connect,
    /// The response head was over the HTTP client's buffer.
    HeadTooLarge,
    /// The response head was not HTTP/1.1.
    Malformed,
    /// The connection ended (closed or reset) before the response head did.
    Cut,
    /// The connection failed while the body was read.
    Body,
    /// Anything else the HTTP client reports.
    Other,
}

impl Failure {
    /// The kind of `err`, from its source chain.
    pub(crate) fn of(err: &reqwest::Error) -> Self {
        if err.is_timeout() {
            return Self::Timeout;
        }
        if err.is_body() || err.is_decode() {
            return Self::Body;
        }
        let mut found = None;
        for cause in chain(err) {
            let kind = if cause.is::<DnsFailure>() {
                Some(Self::Dns)
            } else if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
                Some(match tls {
                    rustls::Error::InvalidCertificate(_) => Self::Certificate,
                    _ => Self::Tls,
                })
            } else if let Some(hyper) = cause.downcast_ref::<hyper::Error>() {
                if hyper.is_parse_too_large() {
                    Some(Self::HeadTooLarge)
                } else if hyper.is_parse() {
                    Some(Self::Malformed)
                } else if hyper.is_incomplete_message() {
                    Some(Self::Cut)
                } else {
                    None
                }
            } else if let Some(io) = cause.downcast_ref::<io::Error>() {
                match io.kind() {
                    io::ErrorKind::ConnectionRefused => Some(Self::Refused),
                    io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof => Some(Self::Cut),
                    _ => None,
                }
            } else {
                None
            };
            // The deepest cause names the fault best (a TLS error arrives
            // inside an I/O error inside a connect error).
            found = kind.or(found);
        }
        match found {
            Some(Self::Cut) if err.is_connect() => Self::Connect,
            Some(kind) => kind,
            None if err.is_connect() => Self::Connect,
            None => Self::Other,
        }
    }

    /// What happened, for an operator: where to look.
    pub(crate) fn describe(self) -> String {
        match self {
            Self::Timeout => {
                "the request timed out (rest_timeout or the request's own timeout)".to_owned()
            }
            Self::NoConnection { max } => format!(
                "it waited its whole timeout for one of the lane's {max} connections \
                 (rest_max_connections), all busy with other calls"
            ),
            Self::Dns => "the host name of rest_url did not resolve (DNS failure)".to_owned(),
            Self::Certificate => "the TLS handshake failed on the service's certificate \
                 (not trusted, or not valid for the host of rest_url)"
                .to_owned(),
            Self::Tls => "the TLS handshake failed".to_owned(),
            Self::Refused => {
                "the connection was refused (nothing listens at rest_url's host and port)"
                    .to_owned()
            }
            Self::Connect => "the connection could not be opened (network failure)".to_owned(),
            Self::HeadTooLarge => "the response's status line and headers are larger than \
                 the HTTP client reads; the lane dropped the connection"
                .to_owned(),
            Self::Malformed => {
                "the response is not valid HTTP/1.1 (a malformed status line or header)".to_owned()
            }
            Self::Cut => "the connection was closed or reset before the response's head \
                 was complete (the service stopped, or something between cut it)"
                .to_owned(),
            Self::Body => "the connection was closed or reset while the body was read".to_owned(),
            Self::Other => "the request failed".to_owned(),
        }
    }
}

/// `err` and its causes, each I/O error's inner error included (an
/// `io::Error`'s `source()` skips the error it wraps).
fn chain<'a>(err: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut causes = Vec::new();
    let mut next = Some(err);
    while let Some(cause) = next {
        causes.push(cause);
        next = match cause
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
        {
            Some(inner) => Some(inner),
            None => cause.source(),
        };
    }
    causes
}

/// A host name that did not resolve, as the lane's resolver reports it.
#[derive(Debug, thiserror::Error)]
#[error("the host name did not resolve")]
struct DnsFailure(#[source] io::Error);

/// The system resolver (`getaddrinfo` on a blocking thread, as reqwest's
/// own), failing with [`DnsFailure`].
#[derive(Debug)]
pub(crate) struct Resolver;

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(DnsFailure)?
                .collect();
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_inner_error_of_an_io_error_is_in_the_chain() {
        // As the TLS connector reports a certificate refused.
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let inner = io::Error::new(io::ErrorKind::InvalidData, tls);
        let outer = io::Error::other(inner);
        let causes = chain(&outer);
        assert_eq!(causes.len(), 3);
        assert!(causes[2].is::<rustls::Error>());
    }

    #[test]
    fn every_failure_reads_differently() {
        let all = [
            Failure::Timeout,
            Failure::NoConnection { max: 32 },
            Failure::Dns,
            Failure::Certificate,
            Failure::Tls,
            Failure::Refused,
            Failure::Connect,
            Failure::HeadTooLarge,
            Failure::Malformed,
            Failure::Cut,
            Failure::Body,
            Failure::Other,
        ];
        let texts: Vec<String> = all.iter().map(|f| f.describe()).collect();
        for (i, text) in texts.iter().enumerate() {
            assert!(text.starts_with(char::is_lowercase), "{text}");
            assert!(texts[i + 1..].iter().all(|other| other != text), "{text}");
        }
        assert!(texts[1].contains("32"), "{}", texts[1]);
    }
}
