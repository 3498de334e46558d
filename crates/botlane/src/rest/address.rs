//! The rules for `rest_url` (https, except exact loopback hosts) and for
//! request paths (origin-relative only), applied before anything is sent.

use url::Url;

use super::error::{strip_query, RestError};
use crate::loopback::is_exact_loopback;

/// Checks `rest_url`: `https`, or `http` with one of the hosts `localhost`,
/// `127.0.0.1` or `::1` exactly as parsed (so `localhost.example.com` and
/// `127.0.0.1.nip.io` are not loopback); an origin, optionally with a path
/// prefix, and nothing else.
pub(crate) fn check_rest_url(raw: &str) -> Result<Url, RestError> {
    let invalid = |url: String, rule: &str| RestError::InvalidRestUrl {
        url,
        rule: rule.to_owned(),
    };
    let url = Url::parse(raw).map_err(|e| invalid("(unparsable)".into(), &e.to_string()))?;
    let shown = shown_origin(&url);
    let Some(host) = url.host() else {
        return Err(invalid(shown, "must name a host"));
    };
    match url.scheme() {
        "https" => {}
        "http" if is_exact_loopback(&host) => {}
        "http" => {
            return Err(invalid(
                shown,
                "must use https unless the host is localhost, 127.0.0.1 or ::1, \
                 so that the credential is never sent in cleartext",
            ))
        }
        _ => return Err(invalid(shown, "must use https")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(shown, "must not carry a user name or password"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid(shown, "must not have a query or fragment"));
    }
    Ok(url)
}

/// Scheme, host and port of `url`: what an error may show of it.
fn shown_origin(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// The absolute URL of `path` (origin-relative, starting with `/`) under
/// `base`, with `query` appended. Refuses anything that could name another
/// host, because the request will carry the credential.
pub(crate) fn endpoint(
    base: &Url,
    path: &str,
    query: &[(String, String)],
) -> Result<Url, RestError> {
    let invalid = |rule: &'static str| RestError::InvalidPath {
        path: strip_query(path).to_owned(),
        rule,
    };
    if !path.starts_with('/') {
        return Err(invalid(
            "must be origin-relative and start with `/`; absolute URLs are refused \
             because the request carries the credential",
        ));
    }
    if path.starts_with("//") || path.starts_with("/\\") {
        return Err(invalid(
            "must not start with `//` or `/\\`, which name another host",
        ));
    }
    if path.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid("must not contain whitespace or control characters"));
    }
    let joined = format!("{}{path}", base.as_str().trim_end_matches('/'));
    let mut url = Url::parse(&joined).map_err(|_| invalid("does not form a valid URL"))?;
    let same_origin = url.scheme() == base.scheme()
        && url.host() == base.host()
        && url.port_or_known_default() == base.port_or_known_default();
    if !same_origin {
        return Err(invalid("resolves outside the origin of rest_url"));
    }
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    Ok(url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_and_http_only_on_exact_loopback() {
        for ok in [
            "https://rest.botlane.chat",
            "https://example.com:8443/prefix",
            "http://localhost:8080",
            "http://LOCALHOST",
            "http://127.0.0.1:9000",
            "http://[::1]:9000",
            // The host as a URL parser reads it (rest.md says so): these
            // are 127.0.0.1 and ::1.
            "http://127.1",
            "http://2130706433",
            "http://0x7f.0.0.1",
            "http://[0:0:0:0:0:0:0:1]",
        ] {
            assert!(check_rest_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://localhost.example.com",
            "http://127.0.0.1.nip.io",
            "http://localhost.",
            "http://127.0.0.2",
            "http://[::ffff:127.0.0.1]",
            "http://example.com",
            "ws://localhost",
            "ftp://127.0.0.1",
        ] {
            let err = check_rest_url(bad).unwrap_err();
            assert!(matches!(err, RestError::InvalidRestUrl { .. }), "{bad}");
            assert!(err.to_string().contains("https"), "{bad}: {err}");
        }
    }

    #[test]
    fn rest_url_is_an_origin_without_secrets() {
        let err = check_rest_url("https://user:hunter2@example.com").unwrap_err();
        assert!(err.to_string().contains("user name or password"));
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(check_rest_url("https://example.com/?a=1").is_err());
        assert!(check_rest_url("https://example.com/#f").is_err());
        assert!(check_rest_url("not a url").is_err());
    }

    #[test]
    fn paths_join_under_the_base() {
        let base = check_rest_url("http://127.0.0.1:9000").unwrap();
        let u = endpoint(&base, "/api/files/list", &[]).unwrap();
        assert_eq!(u.as_str(), "http://127.0.0.1:9000/api/files/list");
        let q = [("roomIds".to_owned(), "s 1".to_owned())];
        let u = endpoint(&base, "/api/files/f1/download?x=1", &q).unwrap();
        assert_eq!(
            u.as_str(),
            "http://127.0.0.1:9000/api/files/f1/download?x=1&roomIds=s+1"
        );
        let prefixed = check_rest_url("https://example.com/rest/").unwrap();
        let u = endpoint(&prefixed, "/api/files/list", &[]).unwrap();
        assert_eq!(u.as_str(), "https://example.com/rest/api/files/list");
    }

    #[test]
    fn paths_that_could_leave_the_origin_are_refused() {
        let base = check_rest_url("https://example.com").unwrap();
        for bad in [
            "https://evil.example/api",
            "http://evil.example",
            "//evil.example/api",
            "/\\evil.example/api",
            "api/files/list",
            "",
            "/api/\nfiles",
            "/api files",
        ] {
            let err = endpoint(&base, bad, &[]).unwrap_err();
            assert!(matches!(err, RestError::InvalidPath { .. }), "{bad}");
        }
        let err = endpoint(&base, "https://evil.example/x?token=abc", &[]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("absolute URLs are refused"), "{text}");
        assert!(!text.contains("token=abc"), "{text}");
    }
}
