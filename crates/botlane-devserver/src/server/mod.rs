//! The running service: its handle, its two listeners, and its shutdown.

mod admin;
mod inspect;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::admin::{router as admin_router, Actions, AdminToken};
use crate::listener::{self, Listener};
use crate::playground::{self, Playground};
use crate::state::{Shared, State};
use crate::tls;
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
    /// The root a client must trust when a listener serves TLS (one root
    /// for both listeners).
    root: Option<RootCertificate>,
    realtime_tls: bool,
    rest_tls: bool,
    pub(crate) playground: Option<Arc<Playground>>,
    admin: Option<AdminEndpoint>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// The HTTP admin endpoint, when it is on.
struct AdminEndpoint {
    addr: SocketAddr,
    token: Arc<AdminToken>,
}

struct RootCertificate {
    der: Vec<u8>,
    pem: String,
}

/// Connections the kernel completes and queues for a listener before it
/// accepts them (capped by `net.core.somaxconn`). Beyond it, new
/// connections' SYNs are dropped and retried after 1 s, 3 s, 7 s…: the
/// default of 128 made a burst of 1,000 connections from one client wait
/// seconds.
const LISTEN_BACKLOG: u32 = 1024;

fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), DevServerError> {
    let failed = |source| DevServerError::Bind { addr, source };
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(failed)?;
    // As `TcpListener::bind`: a restarted service binds its port at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true).map_err(failed)?;
    socket.bind(addr).map_err(failed)?;
    let listener = socket.listen(LISTEN_BACKLOG).map_err(failed)?;
    let local = listener.local_addr().map_err(failed)?;
    Ok((listener, local))
}

/// The address a client on this machine reaches a listener at: an
/// unspecified listen address (`0.0.0.0`, `::`) is given as the loopback
/// address, which the certificate covers.
fn reachable(mut addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        });
    }
    addr
}

impl DevServer {
    /// Builds the state from `config`, binds `config.listen` (realtime) and
    /// `config.rest_listen` (REST), makes the TLS certificates if
    /// `config.realtime_tls` or `config.rest_tls`, and starts serving. The
    /// environment is not read (see [`DevServerConfig::with_env`]).
    pub async fn start(config: DevServerConfig) -> Result<Self, DevServerError> {
        if config.admin && !config.admin_listen.ip().is_loopback() {
            return Err(DevServerError::Config(format!(
                "the admin endpoint controls the whole service, so it listens on a loopback \
                 address only, not {}",
                config.admin_listen
            )));
        }
        let state = State::from_config(&config)?;
        let (realtime_tcp, local_addr) = bind(config.listen)?;
        let (rest_tcp, rest_addr) = bind(config.rest_listen)?;
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
        let material = if config.realtime_tls || config.rest_tls {
            Some(tls::generate()?)
        } else {
            None
        };
        let acceptor = |on: bool| material.as_ref().filter(|_| on).map(|m| m.acceptor.clone());
        let limits = config.limits.clone();
        let (realtime_router, mut websockets_done) = crate::realtime::router(
            Arc::clone(&shared),
            extra,
            limits.clone(),
            shutdown_rx.clone(),
        );
        let realtime = Listener {
            tcp: realtime_tcp,
            tls: acceptor(config.realtime_tls),
            router: realtime_router,
            // Nagle off: realtime frames are small and every reply is waited for.
            nodelay: true,
            name: "realtime",
        };
        let rest = Listener {
            tcp: rest_tcp,
            tls: acceptor(config.rest_tls),
            router: crate::rest::router(Arc::clone(&shared), limits.clone()),
            nodelay: false,
            name: "rest",
        };
        let admin = if config.admin {
            let (tcp, addr) = bind(config.admin_listen)?;
            let token = Arc::new(AdminToken::generate()?);
            let router = admin_router(
                Actions::new(Arc::clone(&shared)),
                Arc::clone(&token),
                addr.port(),
                limits.request_body_timeout,
            );
            let listener = Listener {
                tcp,
                tls: None,
                router,
                nodelay: false,
                name: "admin",
            };
            Some((AdminEndpoint { addr, token }, listener))
        } else {
            None
        };
        let realtime_shutdown = shutdown_rx.clone();
        let realtime_limits = limits.clone();
        let admin_limits = limits.clone();
        let admin_shutdown = shutdown_rx.clone();
        let mut tasks = vec![
            tokio::spawn(async move {
                listener::serve(realtime, realtime_limits, realtime_shutdown).await;
                // Every WebSocket task holds a sender: `recv` returns `None`
                // once the last of them has ended (each within its own
                // bounded closing handshake).
                let _ = websockets_done.recv().await;
            }),
            tokio::spawn(listener::serve(rest, limits, shutdown_rx)),
        ];
        let admin = admin.map(|(endpoint, listener)| {
            tasks.push(tokio::spawn(listener::serve(
                listener,
                admin_limits,
                admin_shutdown,
            )));
            endpoint
        });
        let root = material.map(|m| RootCertificate {
            der: m.root_der,
            pem: m.root_pem,
        });
        let server = Self {
            shared,
            local_addr,
            rest_addr,
            root,
            realtime_tls: config.realtime_tls,
            rest_tls: config.rest_tls,
            playground,
            admin,
            shutdown,
            tasks,
        };
        tracing::info!(url = %server.ws_url(), "realtime listener started");
        tracing::info!(
            url = %server.rest_url(),
            bot_rest_credentials = config.bot_rest_credentials,
            "rest listener started"
        );
        if let Some(url) = server.admin_url() {
            tracing::info!(url = %url, "admin listener started");
        }
        Ok(server)
    }

    /// The WebSocket URL of the realtime wire, such as
    /// `ws://127.0.0.1:40123/ws`, or `wss://…` when the realtime listener
    /// serves TLS ([`DevServerConfig::realtime_tls`]). An unspecified listen
    /// address is given as the loopback address.
    pub fn ws_url(&self) -> String {
        let scheme = if self.realtime_tls { "wss" } else { "ws" };
        format!("{scheme}://{}/ws", reachable(self.local_addr))
    }

    /// The `wss://` URL of the realtime wire when its listener serves TLS;
    /// `None` otherwise.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    /// let tls = DevServer::start(DevServerConfig::default().realtime_tls(true)).await?;
    /// assert!(tls.wss_url().unwrap().starts_with("wss://127.0.0.1:"));
    /// assert_eq!(tls.wss_url(), Some(tls.ws_url()));
    /// assert!(DevServer::start(DevServerConfig::default()).await?.wss_url().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn wss_url(&self) -> Option<String> {
        self.realtime_tls.then(|| self.ws_url())
    }

    /// The root certificate (DER) a client must trust to reach the realtime
    /// listener over `wss`; `None` when it serves plain `ws`. The REST
    /// listener, when it serves https, presents a certificate of the same
    /// root.
    pub fn realtime_root_certificate_der(&self) -> Option<Vec<u8>> {
        self.root
            .as_ref()
            .filter(|_| self.realtime_tls)
            .map(|root| root.der.clone())
    }

    /// The same root certificate as PEM text.
    pub fn realtime_root_certificate_pem(&self) -> Option<String> {
        self.root
            .as_ref()
            .filter(|_| self.realtime_tls)
            .map(|root| root.pem.clone())
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
        let scheme = if self.rest_tls { "https" } else { "http" };
        format!("{scheme}://{}", reachable(self.rest_addr))
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
        self.root
            .as_ref()
            .filter(|_| self.rest_tls)
            .map(|root| root.der.clone())
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
        self.root
            .as_ref()
            .filter(|_| self.rest_tls)
            .map(|root| root.pem.clone())
    }

    /// The base URL of the HTTP admin endpoint, such as
    /// `http://127.0.0.1:40125/admin`; `None` unless
    /// [`DevServerConfig::admin`] is on.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    /// let server = DevServer::start(DevServerConfig::default().admin(true)).await?;
    /// assert!(server.admin_url().unwrap().starts_with("http://127.0.0.1:"));
    /// assert!(DevServer::start(DevServerConfig::default()).await?.admin_url().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn admin_url(&self) -> Option<String> {
        self.admin
            .as_ref()
            .map(|admin| format!("http://{}/admin", admin.addr))
    }

    /// The address the admin endpoint listens on; `None` unless it is on.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.admin.as_ref().map(|admin| admin.addr)
    }

    /// The admin token, made at start from 32 random bytes: every admin
    /// request carries it as `Authorization: Bearer <token>`. `None`
    /// unless the endpoint is on. It controls the whole service: keep it
    /// out of logs.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::{DevServer, DevServerConfig};
    /// let server = DevServer::start(DevServerConfig::default().admin(true)).await?;
    /// assert!(server.admin_token().unwrap().starts_with("adm_"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn admin_token(&self) -> Option<String> {
        self.admin
            .as_ref()
            .map(|admin| admin.token.expose().to_owned())
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
