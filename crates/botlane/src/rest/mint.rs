//! Minting a credential: opcode 638 through the [`Mint`] handle the client
//! gives the lane (phase 1), then `POST {rest_url}/auth/verify-session`
//! (phase 2).
//!
//! The lane never sees the realtime session itself, only this handle; the
//! client implements it over its connection (`client/mint.rs`).

use futures_util::future::BoxFuture;
use http::header::{HeaderValue, CONTENT_TYPE};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::address;
use super::config::{Http, LANE_BODY_LIMIT};
use super::credential::Minted;
use super::error::{RestError, ServiceActionError};
use super::response::read_capped;
use crate::wire;

/// The exchange route, outside the service's auth middleware.
pub(crate) const EXCHANGE_PATH: &str = "/auth/verify-session";

/// The cap on the exchange reply, as an error names it.
const EXCHANGE_CAP: &str = "the lane's 4 KiB limit on the bodies it reads itself";

/// Phase 1 of a mint: send opcode 638 on the realtime session and return
/// its reply. Fails with [`RestError::NotConnected`] when there is no
/// session, and [`RestError::Realtime`] when the request fails.
pub(crate) trait Mint: Send + Sync {
    /// One opcode-638 request and its reply.
    fn mint(&self) -> BoxFuture<'_, Result<wire::RestMintReply, RestError>>;
}

#[derive(Serialize)]
struct ExchangeRequest<'a> {
    secret: &'a str,
    row_id: &'a str,
}

/// The exchange's answer. No `Debug`: it holds the credential in clear.
/// `expires_in` may be absent (the spec's 15 minutes then apply).
#[derive(Deserialize)]
struct ExchangeReply {
    verification: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// Both phases of a mint. Runs as its own task (see `credential.rs`).
pub(crate) async fn run(
    source: &dyn Mint,
    http: &Http,
    base: &url::Url,
) -> Result<Minted, RestError> {
    tracing::debug!("minting a REST credential (opcode 638)");
    let reply = source.mint().await?;
    if reply.code != 0 {
        tracing::debug!(code = reply.code, "REST credential mint refused");
        return Err(ServiceActionError::rest_mint(reply.code).into());
    }
    let (Some(secret), Some(row_id)) = (reply.secret, reply.row_id) else {
        return Err(RestError::Realtime {
            reason:
                "the service's reply to opcode 638 has code 0 but lacks the secret or the row_id"
                    .to_owned(),
        });
    };
    let secret = SecretString::from(secret);
    let body = serde_json::to_vec(&ExchangeRequest {
        secret: secret.expose_secret(),
        row_id: &row_id,
    })
    .map_err(|_| RestError::InvalidRequest {
        rule: "the exchange body does not serialize".into(),
    })?;
    let url = address::endpoint(base, EXCHANGE_PATH, &[])?;
    let request = http
        .client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .body(body);
    // The slot is held until the reply's body is read.
    let (response, _slot) = http.send(EXCHANGE_PATH, request, None).await?;
    drop(secret);
    if !response.status().is_success() {
        return Err(super::status_error(response, EXCHANGE_PATH).await.into());
    }
    let body = read_capped(response, EXCHANGE_PATH, LANE_BODY_LIMIT, EXCHANGE_CAP).await?;
    let reply: ExchangeReply =
        serde_json::from_slice(&body).map_err(|e| RestError::decode(EXCHANGE_PATH, &e))?;
    let value = SecretString::from(reply.verification);
    if !usable_verification(value.expose_secret()) {
        return Err(RestError::Decode {
            path: EXCHANGE_PATH.to_owned(),
            reason: "`verification` is empty, not visible ASCII, or has surrounding whitespace"
                .to_owned(),
        });
    }
    tracing::debug!(expires_in = ?reply.expires_in, "REST credential minted");
    Ok(Minted {
        value,
        expires_in: reply.expires_in,
    })
}

/// Whether `value` can be the `verification` header as the service will
/// read it: not empty (it would be sent, and refused, on every call),
/// printable ASCII (other bytes a header may hold are read differently by
/// different servers; a space or tab between visible characters is kept),
/// and without the surrounding whitespace a server strips.
fn usable_verification(value: &str) -> bool {
    !value.is_empty()
        && value.trim_matches([' ', '\t']) == value
        && HeaderValue::from_str(value).is_ok_and(|v| v.to_str().is_ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A handle that answers every mint with `reply`, or fails with `err`.
    struct Scripted(Result<wire::RestMintReply, RestError>);

    impl Mint for Scripted {
        fn mint(&self) -> BoxFuture<'_, Result<wire::RestMintReply, RestError>> {
            Box::pin(async move { self.0.clone() })
        }
    }

    fn reply(code: i32, secret: Option<&str>, row_id: Option<&str>) -> wire::RestMintReply {
        let mut reply = wire::RestMintReply::new(code);
        reply.secret = secret.map(str::to_owned);
        reply.row_id = row_id.map(str::to_owned);
        reply
    }

    /// Runs both phases against a closed port: every case here must end
    /// before the exchange.
    async fn run_with(source: Scripted) -> RestError {
        let base = url::Url::parse("http://127.0.0.1:9").unwrap();
        match run(&source, &Http::for_tests(), &base).await {
            Err(e) => e,
            Ok(_) => panic!("a mint without a service succeeded"),
        }
    }

    #[tokio::test]
    async fn a_refusal_code_is_a_service_action_error() {
        for code in [-7, -1, -9, -2, -42] {
            match run_with(Scripted(Ok(reply(code, None, None)))).await {
                RestError::Action(e) => assert_eq!((e.opcode, e.code), (638, code)),
                other => panic!("code {code}: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_success_without_its_secret_or_row_id_is_a_realtime_error() {
        for (secret, row_id) in [(None, Some("row")), (Some("s"), None), (None, None)] {
            let err = run_with(Scripted(Ok(reply(0, secret, row_id)))).await;
            assert_eq!(
                err.to_string(),
                "the realtime request for a REST credential (opcode 638) failed: the service's \
                 reply to opcode 638 has code 0 but lacks the secret or the row_id"
            );
        }
    }

    #[test]
    fn a_verification_must_be_a_header_value_as_sent() {
        for ok in ["Zb9-_x", "a b", "!~"] {
            assert!(usable_verification(ok), "{ok:?}");
        }
        for bad in ["", " a", "a\t", "caf\u{e9}", "a\u{7f}", "a\nb", "a\rb"] {
            assert!(!usable_verification(bad), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn the_handle_s_own_failure_passes_through() {
        let err = run_with(Scripted(Err(RestError::NotConnected))).await;
        assert!(matches!(err, RestError::NotConnected), "{err:?}");
    }
}
