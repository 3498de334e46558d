//! The client's side of the REST lane: its configuration from the client's
//! options, and the [`Mint`] handle that sends opcode 638 on the client's
//! realtime connection. The lane knows nothing else of the client.

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;

use super::ClientOptions;
use crate::error::ClientError;
use crate::rest::{Mint, PreparedLane, RestConfig, RestError};
use crate::session::Session;
use crate::transport::Connection;
use crate::wire::{self, OpCode};

/// The lane's HTTP client built from the client's `rest_*` options; fails
/// with the option at fault.
pub(crate) fn prepare_lane(
    options: &ClientOptions,
    tls: Arc<rustls::ClientConfig>,
) -> Result<PreparedLane, ClientError> {
    PreparedLane::new(RestConfig {
        rest_url: options.rest_url.clone(),
        tls,
        timeout: options.rest_timeout,
        refresh_margin: options.rest_refresh_margin,
        json_limit: options.rest_json_limit,
        binary_limit: options.rest_binary_limit,
        max_connections: options.rest_max_connections,
    })
    .map_err(|e| ClientError::InvalidOption {
        option: e.option,
        rule: e.rule,
    })
}

/// Opcode 638 over the client's realtime connection. Holds the session
/// weakly: the client owns its lane, so a strong reference would keep both
/// alive forever.
pub(crate) struct RealtimeMint {
    session: Weak<Session>,
}

impl RealtimeMint {
    pub(crate) fn handle(session: Weak<Session>) -> Arc<dyn Mint> {
        Arc::new(Self { session })
    }

    /// The connection a mint goes out on: the one place that decides it.
    /// During a reconnect it waits for the session, up to the request
    /// timeout, rather than failing at once.
    async fn connection(&self) -> Result<Connection, RestError> {
        let session = self.session.upgrade().ok_or(RestError::NotConnected)?;
        session
            .wait_connected(session.request_timeout())
            .await
            .map_err(|_| RestError::NotConnected)
    }
}

impl Mint for RealtimeMint {
    fn mint(&self) -> BoxFuture<'_, Result<wire::RestMintReply, RestError>> {
        Box::pin(async move {
            let conn = self.connection().await?;
            conn.request(OpCode::RestMint, &wire::Empty {})
                .await
                .map_err(|e| match e {
                    ClientError::NotConnected => RestError::NotConnected,
                    other => RestError::Realtime {
                        reason: other.to_string(),
                    },
                })
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use crate::rest::{Method, RestError};
    use crate::{Client, ClientOptions};

    #[tokio::test]
    async fn a_lane_neither_keeps_its_client_alive_nor_outlives_it_silently() {
        let options =
            ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").rest_url("http://127.0.0.1:1");
        let client = Client::new(options).unwrap();
        let weak = Arc::downgrade(&client.inner.session);
        let lane = client.rest();
        drop(client);
        assert!(weak.upgrade().is_none(), "the lane kept the client alive");
        let err = lane
            .request(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err();
        assert!(matches!(err, RestError::NotConnected), "{err:?}");
    }
}
