//! The one loopback rule of both lanes: cleartext (`ws://` for the realtime
//! wire, `http://` for `rest_url`) is allowed only to these hosts.

use std::net::{Ipv4Addr, Ipv6Addr};

use url::Host;

/// `localhost`, `127.0.0.1` and `::1` exactly as parsed: nothing that merely
/// starts with or resolves to them, so `localhost.example.com` and
/// `127.0.0.1.nip.io` are not loopback (nor is `127.0.0.2`).
pub(crate) fn is_exact_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => *name == "localhost",
        Host::Ipv4(ip) => *ip == Ipv4Addr::LOCALHOST,
        Host::Ipv6(ip) => *ip == Ipv6Addr::LOCALHOST,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn host_of(url: &str) -> bool {
        let url = url::Url::parse(url).unwrap();
        is_exact_loopback(&url.host().unwrap())
    }

    #[test]
    fn only_the_three_exact_hosts_are_loopback() {
        for yes in ["ws://localhost/", "http://127.0.0.1:8/", "https://[::1]/"] {
            assert!(host_of(yes), "{yes}");
        }
        for no in [
            "ws://localhost.example.com/",
            "ws://127.0.0.1.nip.io/",
            "ws://127.0.0.2/",
            "ws://[::2]/",
            "ws://example.com/",
        ] {
            assert!(!host_of(no), "{no}");
        }
    }
}
