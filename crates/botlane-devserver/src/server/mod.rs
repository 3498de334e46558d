//! The running service: its handle, its two listeners, and its shutdown.

mod admin;
mod inspect;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::playground::{self, Playground};
use crate::realtime::run;
use crate::state::{Shared, State};
use crate::tls::{self, TlsListener};
use crate::{DevServerConfig, DevServerError};

/// A running service. Dropping it (or calling [`shutdown`](Self::shutdown))
/// stops the listener and closes every connection.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
/// use botlane_devserver::{DevServer, DevServerConfig};
///
/// let server = DevServer::start(DevServerConfig::default()).await?;
/// assert!(server.ws_url().starts_with("ws://127.0.0.1:"));
/// let bot = server.add_bot("dicebot");
/// let server_id = server.create_server("lobby");
/// let channel = server.create_channel(&server_id, "general")?;
/// server.add_member(&channel, &bot.id)?;
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct DevServer {
    pub(crate) shared: Arc<Shared>,
    local_addr: SocketAddr,
    rest_addr: SocketAddr,
    /// The root a client must trust, when the REST listener serves https.
    rest_root: Option<RootCertificate>,
    pub(crate) playground: Option<Arc<Playground>>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

struct RootCertificate {
    der: Vec<u8>,
    pem: String,
}

/// The REST listener, plain or with TLS.
enum RestListener {
    Plain(TcpListener),
    Tls(TlsListener),
}

async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), DevServerError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| DevServerError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| DevServerError::Bind { addr, source })?;
    Ok((listener, local))
}

impl DevServer {
    /// Builds the state from `config`, binds `config.listen` (realtime) and
    /// `config.rest_listen` (REST), makes the TLS certificates if
    /// `config.rest_tls`, and starts serving. The environment is not read
    /// (see [`DevServerConfig::with_env`]).
    pub async fn start(config: DevServerConfig) -> Result<Self, DevServerError> {
        let state = State::from_config(&config)?;
        let (listener, local_addr) = bind(config.listen).await?;
        let (rest_listener, rest_addr) = bind(config.rest_listen).await?;
        let shared = Arc::new(Shared::new(state));
        let playground = if config.playground {
            Some(Playground::setup(&config, &shared)?)
        } else {
            None
        };
        let extra = playground.as_ref().map_or_else(Router::new, |p| {
            playground::router(Arc::clone(p), Arc::clone(&shared))
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (rest_listener, rest_root) = if config.rest_tls {
            let material = tls::generate()?;
            let listener = TlsListener::new(rest_listener, material.acceptor, shutdown_rx.clone())
                .map_err(|source| DevServerError::Bind {
                    addr: config.rest_listen,
                    source,
                })?;
            let root = RootCertificate {
                der: material.root_der,
                pem: material.root_pem,
            };
            (RestListener::Tls(listener), Some(root))
        } else {
            (RestListener::Plain(rest_listener), None)
        };
        let rest_router = crate::rest::router(Arc::clone(&shared));
        let tasks = vec![
            tokio::spawn(run(
                listener,
                Arc::clone(&shared),
                extra,
                shutdown_rx.clone(),
            )),
            tokio::spawn(run_rest(rest_listener, rest_router, shutdown_rx)),
        ];
        let server = Self {
            shared,
            local_addr,
            rest_addr,
            rest_root,
            playground,
            shutdown,
            tasks,
        };
        tracing::info!(%local_addr, "realtime listener started");
        tracing::info!(
            url = %server.rest_url(),
            bot_rest_credentials = config.bot_rest_credentials,
            "rest listener started"
        );
        Ok(server)
    }

    /// The WebSocket URL of the realtime wire, such as `ws://127.0.0.1:40123/ws`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.local_addr)
    }

    /// The address the realtime listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The origin of the REST listener, such as `http://127.0.0.1:40124`,
    /// or `https://…` when it serves TLS; no trailing slash. An unspecified
    /// listen address (`0.0.0.0`, `::`) is given as the loopback address,
    /// which the certificate covers.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    /// let plain = DevServer::start(DevServerConfig::default()).await?;
    /// assert!(plain.rest_url().starts_with("http://127.0.0.1:"));
    /// let tls = DevServer::start(DevServerConfig::default().rest_tls(true)).await?;
    /// assert!(tls.rest_url().starts_with("https://127.0.0.1:"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn rest_url(&self) -> String {
        let scheme = if self.rest_root.is_some() {
            "https"
        } else {
            "http"
        };
        let mut addr = self.rest_addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr.ip() {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            });
        }
        format!("{scheme}://{addr}")
    }

    /// The address the REST listener is bound to.
    pub fn rest_addr(&self) -> SocketAddr {
        self.rest_addr
    }

    /// The root certificate (DER) a client must trust to reach the REST
    /// listener over https; `None` when it serves plain http.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    /// let tls = DevServer::start(DevServerConfig::default().rest_tls(true)).await?;
    /// assert_eq!(tls.rest_root_certificate_der().unwrap()[0], 0x30); // a DER SEQUENCE
    /// assert!(DevServer::start(DevServerConfig::default()).await?.rest_root_certificate_der().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn rest_root_certificate_der(&self) -> Option<Vec<u8>> {
        self.rest_root.as_ref().map(|root| root.der.clone())
    }

    /// The same root certificate as PEM text.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    /// let tls = DevServer::start(DevServerConfig::default().rest_tls(true)).await?;
    /// assert!(tls.rest_root_certificate_pem().unwrap().starts_with("-----BEGIN CERTIFICATE-----"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn rest_root_certificate_pem(&self) -> Option<String> {
        self.rest_root.as_ref().map(|root| root.pem.clone())
    }

    /// Stops accepting, closes every connection and waits until every task has ended.
    pub async fn shutdown(mut self) {
        self.shutdown.send_replace(true);
        for task in std::mem::take(&mut self.tasks) {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "service task failed");
            }
        }
    }
}

/// Serves the REST routes until `shutdown` turns true, then waits for the
/// requests in flight.
async fn run_rest(listener: RestListener, router: Router, mut shutdown: watch::Receiver<bool>) {
    let signal = async move {
        // An error means the handle is gone, which is a shutdown too.
        let _ = shutdown.wait_for(|stop| *stop).await;
    };
    let served = match listener {
        RestListener::Plain(listener) => {
            axum::serve(listener, router)
                .with_graceful_shutdown(signal)
                .await
        }
        RestListener::Tls(listener) => {
            axum::serve(listener, router)
                .with_graceful_shutdown(signal)
                .await
        }
    };
    if let Err(e) = served {
        tracing::error!(error = %e, "rest listener failed");
    }
    tracing::info!("rest listener stopped");
}

impl Drop for DevServer {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
    }
}

impl std::fmt::Debug for DevServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevServer")
            .field("local_addr", &self.local_addr)
            .field("rest_url", &self.rest_url())
            .finish_non_exhaustive()
    }
}
