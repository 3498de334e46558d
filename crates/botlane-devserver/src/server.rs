//! The running service: its handle, its listener and its connections.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State as AxumState;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use botlane::wire::{AccountKind, Notification, WireMessage};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::handlers::{handle_text, Flow};
use crate::playground::{self, Playground};
use crate::state::{new_token, Outbound, Shared, State, Termination};
use crate::tls::{self, TlsListener};
use crate::{
    BotAccount, Denial, DevServerConfig, DevServerError, FrameRecord, HttpRecord, StateView,
    StoredFile, StoredMenu, UserAccount, WaitTimeout,
};

/// Largest WebSocket message the service reads; larger ones end the connection.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// How long a closing connection may take to flush what it has queued.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

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
    shared: Arc<Shared>,
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

/// What every request handler and connection task gets.
#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    shutdown: watch::Receiver<bool>,
    /// Held by every connection task; the service has stopped once all are gone.
    _done: mpsc::Sender<()>,
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
        let rest_router = crate::http::router(Arc::clone(&shared));
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

    /// Creates a bot account with a fresh id and token.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let bot = server.add_bot("dicebot");
    /// assert_eq!(bot.id.len(), 36);
    /// assert_ne!(bot.token, server.add_bot("dicebot").token);
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_bot(&self, name: &str) -> BotAccount {
        let (id, token) = self.add_account(name, AccountKind::Bot, "bot");
        BotAccount { id, token }
    }

    /// Creates a human account with a fresh id and token.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let alice = server.add_user("alice");
    /// assert_eq!(server.account_id("alice"), Some(alice.id));
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_user(&self, name: &str) -> UserAccount {
        let (id, token) = self.add_account(name, AccountKind::User, "usr");
        UserAccount { id, token }
    }

    fn add_account(&self, name: &str, kind: AccountKind, prefix: &str) -> (String, String) {
        let token = new_token(prefix);
        let id = self
            .shared
            .update(|s| s.add_account(name, kind, &token, None))
            // A fresh random id and a fresh random token cannot collide with
            // existing ones, and no fixed id is given.
            .expect("fresh random ids and tokens are unique");
        (id, token)
    }

    /// Creates a server (room) and returns its id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let id = server.create_server("lobby");
    /// assert_eq!(server.server_id("lobby"), Some(id));
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_server(&self, name: &str) -> String {
        self.shared
            .update(|s| s.create_server(name, None))
            .expect("a fresh random server id is unique")
    }

    /// Creates a channel in a server and returns its id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let lobby = server.create_server("lobby");
    /// let general = server.create_channel(&lobby, "general")?;
    /// assert_eq!(server.channel_id(&lobby, "general"), Some(general));
    /// assert!(server.create_channel("no-such-server", "x").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_channel(&self, server_id: &str, name: &str) -> Result<String, DevServerError> {
        self.shared
            .update(|s| s.create_channel(server_id, name, None))
    }

    /// Makes an account (bot or human) a member of a channel; a no-op if it already is.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// let bot = server.add_bot("dicebot");
    /// server.add_member(&channel, &bot.id)?;
    /// assert_eq!(server.view(|s| s.members(&channel).to_vec()), [bot.id]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_member(&self, channel_id: &str, account_id: &str) -> Result<(), DevServerError> {
        self.shared.update(|s| s.add_member(channel_id, account_id))
    }

    /// Makes every send (op 30) to a channel be refused with `denial`, or
    /// accepted again with `None`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use botlane_devserver::Denial;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// server.deny_sends(&channel, Some(Denial::RateLimited))?;
    /// server.deny_sends(&channel, None)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn deny_sends(
        &self,
        channel_id: &str,
        denial: Option<Denial>,
    ) -> Result<(), DevServerError> {
        self.shared.update(|s| {
            let channel = s
                .channels
                .get_mut(channel_id)
                .ok_or_else(|| DevServerError::UnknownChannel(channel_id.to_owned()))?;
            channel.denial = denial;
            Ok(())
        })
    }

    /// Drops every connection at once, with no close frame, as a network
    /// failure would; clients see their socket end and may reconnect.
    pub fn drop_connections(&self) {
        self.shared.lock().terminate_all(Termination::Abrupt);
    }

    /// Revokes a bot: its token stops working and its connections are closed.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let bot = server.add_bot("dicebot");
    /// server.revoke_bot(&bot.id)?;
    /// let alice = server.add_user("alice");
    /// assert!(server.revoke_bot(&alice.id).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn revoke_bot(&self, bot_id: &str) -> Result<(), DevServerError> {
        self.shared.update(|s| s.revoke_bot(bot_id))
    }

    /// Turns the server flag `BOT_REST_CREDENTIALS` on or off. It gates
    /// minting only: secrets and sessions already issued stay valid.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// assert!(!server.rest_credentials());
    /// server.set_rest_credentials(true);
    /// assert!(server.rest_credentials());
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_rest_credentials(&self, on: bool) {
        self.shared.update(|s| s.rest.enabled = on);
    }

    /// Whether the server flag `BOT_REST_CREDENTIALS` is on.
    pub fn rest_credentials(&self) -> bool {
        self.shared.lock().rest.enabled
    }

    /// Limits each bot to `max` successful mints (opcode 638) in any sliding
    /// `window`; over it, 638 answers `-9`. The default is
    /// [`DEFAULT_MINT_LIMIT`](crate::DEFAULT_MINT_LIMIT) per
    /// [`DEFAULT_MINT_WINDOW`](crate::DEFAULT_MINT_WINDOW). Setting it forgets
    /// the mints counted so far; `max` 0 refuses every mint.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use std::time::Duration;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.set_mint_rate_limit(1, Duration::from_secs(60));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_mint_rate_limit(&self, max: u32, window: Duration) {
        self.shared
            .update(|s| s.rest.set_mint_rate_limit(max, window));
    }

    /// Makes the next `count` mints that pass every other check answer `-2`
    /// (server error); 0 cancels what is left.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.fail_next_mints(1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_next_mints(&self, count: u32) {
        self.shared.update(|s| s.rest.fail_next_mints(count));
    }

    /// Sets the lifetime of the `verification` values exchanged from now on
    /// (default [`DEFAULT_SESSION_LIFETIME`](crate::DEFAULT_SESSION_LIFETIME),
    /// 15 minutes). Expiry is measured on tokio's clock, so a test that
    /// pauses time can move past it. `expires_in` reports it in whole
    /// seconds, rounded down.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// use std::time::Duration;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.set_session_lifetime(Duration::from_secs(2));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_session_lifetime(&self, lifetime: Duration) {
        self.shared
            .update(|s| s.rest.set_session_lifetime(lifetime));
    }

    /// Purges a bot's REST rows (pending secrets and sessions) without
    /// revoking its token, so its next `/api` call gets 401
    /// `session_expired` and it can mint again; returns how many rows there
    /// were. [`revoke_bot`](Self::revoke_bot) purges them too.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let bot = server.add_bot("dicebot");
    /// assert_eq!(server.purge_rest_credentials(&bot.id), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn purge_rest_credentials(&self, bot_id: &str) -> usize {
        self.shared.update(|s| s.rest.purge(bot_id))
    }

    /// The number of opcode 638 requests that minted a secret (code 0).
    pub fn mint_count(&self) -> u64 {
        self.shared.lock().rest.mints
    }

    /// The number of secrets exchanged at `/auth/verify-session`.
    pub fn exchange_count(&self) -> u64 {
        self.shared.lock().rest.exchanges
    }

    /// Every HTTP request the REST listener received, in order of arrival,
    /// with every header as received.
    pub fn http_requests(&self) -> Vec<HttpRecord> {
        self.shared.lock().rest.http.clone()
    }

    /// Makes the REST listener answer every request for `path` (exact, query
    /// ignored, before any other check) with `302 Found` and
    /// `Location: to_url`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let elsewhere = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.redirect("/api/files/list", &format!("{}/api/files/list", elsewhere.rest_url()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn redirect(&self, path: &str, to_url: &str) {
        self.shared.update(|s| s.rest.redirect(path, to_url));
    }

    /// Stores a file in a server, with a random IV, and returns its id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), botlane_devserver::DevServerError> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// let lobby = server.create_server("lobby");
    /// let id = server.add_file(&lobby, "notes.txt", b"hello".to_vec())?;
    /// assert_eq!(server.file(&id).unwrap().bytes, b"hello");
    /// assert!(server.add_file("no-such-server", "x", Vec::new()).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_file(
        &self,
        server_id: &str,
        name: &str,
        bytes: Vec<u8>,
    ) -> Result<String, DevServerError> {
        self.shared.update(|s| {
            if !s.servers.contains_key(server_id) {
                return Err(DevServerError::UnknownServer(server_id.to_owned()));
            }
            s.rest
                .add_file(server_id, name, bytes, None)
                .ok_or(DevServerError::Random)
        })
    }

    /// A stored file, with its IV.
    pub fn file(&self, file_id: &str) -> Option<StoredFile> {
        self.shared.lock().rest.file(file_id).cloned()
    }

    /// The files of a server, in the order they were added.
    pub fn files(&self, server_id: &str) -> Vec<StoredFile> {
        let state = self.shared.lock();
        state
            .rest
            .files
            .iter()
            .filter(|f| f.server_id == server_id)
            .cloned()
            .collect()
    }

    /// The id of the account with this name (the first one, if several share it).
    pub fn account_id(&self, name: &str) -> Option<String> {
        let state = self.shared.lock();
        let mut matching: Vec<_> = state.accounts.values().filter(|a| a.name == name).collect();
        // Ids are random: order by creation, which the config order follows.
        matching.sort_by_key(|a| a.created);
        matching.first().map(|a| a.id.clone())
    }

    /// The id of the server with this name.
    pub fn server_id(&self, name: &str) -> Option<String> {
        let state = self.shared.lock();
        state
            .servers
            .iter()
            .find(|(_, s)| s.name == name)
            .map(|(id, _)| id.clone())
    }

    /// The id of the channel with this name in a server.
    pub fn channel_id(&self, server_id: &str, name: &str) -> Option<String> {
        let state = self.shared.lock();
        state
            .channels
            .values()
            .find(|c| c.server_id == server_id && c.name == name)
            .map(|c| c.id.clone())
    }

    /// The messages of a channel, oldest first, exactly as stored (sealed).
    pub fn messages(&self, channel_id: &str) -> Vec<WireMessage> {
        self.view(|s| s.messages(channel_id).to_vec())
    }

    /// A bot's published menu, command names casefolded.
    pub fn menu(&self, bot_id: &str) -> Option<StoredMenu> {
        self.view(|s| s.menu(bot_id).cloned())
    }

    /// Every frame received and sent so far, in the order recorded.
    pub fn frames(&self) -> Vec<FrameRecord> {
        self.view(|s| s.frames().to_vec())
    }

    /// The notifications raised for an account, oldest first.
    pub fn notifications_for(&self, account_id: &str) -> Vec<Notification> {
        self.view(|s| {
            s.notifications_for(account_id)
                .into_iter()
                .cloned()
                .collect()
        })
    }

    /// Reads the state through a [`StateView`].
    pub fn view<R>(&self, read: impl FnOnce(&StateView<'_>) -> R) -> R {
        let state = self.shared.lock();
        read(&StateView { state: &state })
    }

    /// Waits until `cond` holds, re-checking after every change of the
    /// state, for at most `timeout`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// server.wait_for(|s| s.connection_count() == 0, Duration::from_secs(1)).await?;
    /// assert!(server.wait_for(|s| s.connection_count() == 1, Duration::from_millis(20)).await.is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn wait_for<F>(&self, mut cond: F, timeout: Duration) -> Result<(), WaitTimeout>
    where
        F: FnMut(&StateView<'_>) -> bool,
    {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            // Registered before the check, so a change between the check and
            // the await still wakes us.
            notified.as_mut().enable();
            if self.view(&mut cond) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(WaitTimeout(timeout));
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

/// Serves the realtime wire (and the `extra` routes) on `listener` until
/// `shutdown` turns true, then waits for every connection to end.
async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    extra: Router,
    shutdown: watch::Receiver<bool>,
) {
    let (done, mut all_done) = mpsc::channel::<()>(1);
    let app = App {
        shared,
        shutdown: shutdown.clone(),
        _done: done,
    };
    let router = Router::new()
        .route("/ws", get(upgrade))
        .with_state(app)
        .merge(extra);
    let mut signal = shutdown;
    // Nagle off: realtime frames are small and every reply is waited for.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            // An error means the handle is gone, which is a shutdown too.
            let _ = signal.wait_for(|stop| *stop).await;
        })
        .await;
    if let Err(e) = served {
        tracing::error!(error = %e, "realtime listener failed");
    }
    // Every connection task holds a clone of `done`: `recv` returns `None`
    // once the last of them has ended.
    let _ = all_done.recv().await;
    tracing::info!("realtime listener stopped");
}

async fn upgrade(ws: WebSocketUpgrade, AxumState(app): AxumState<App>) -> Response {
    ws.max_message_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| connection(app, socket))
}

/// How a connection's reader loop ended.
enum Ending {
    /// Ended by the service: drop or close the socket.
    Terminated(Termination),
    /// The peer went away or the socket failed.
    Gone,
    /// The writer stopped first (the socket failed while writing).
    WriterGone,
}

async fn connection(app: App, socket: WebSocket) {
    let App {
        shared,
        mut shutdown,
        _done,
    } = app;
    let (tx, rx) = mpsc::unbounded_channel();
    let (kill, mut killed) = watch::channel(None);
    let conn = shared.update(|s| s.connect(tx, kill));
    tracing::info!(connection = conn, "connected");
    let (sink, mut stream) = socket.split();
    let mut writer = tokio::spawn(write_loop(sink, rx));

    let ending = loop {
        tokio::select! {
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if shared.update(|s| handle_text(s, conn, text.as_str())) == Flow::Close {
                        break Ending::Terminated(Termination::Close {
                            code: 1008,
                            reason: "unauthorized",
                        });
                    }
                }
                Some(Ok(Message::Binary(bytes))) => {
                    tracing::debug!(connection = conn, size = bytes.len(), "binary frame ignored");
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_))) | None => break Ending::Gone,
                Some(Err(e)) => {
                    tracing::debug!(connection = conn, error = %e, "socket failed");
                    break Ending::Gone;
                }
            },
            how = killed.wait_for(Option::is_some) => {
                // An error means the sender is gone, which cannot happen while
                // the connection is registered; treat it as a drop.
                let how = how.map_or(Termination::Abrupt, |how| how.unwrap_or(Termination::Abrupt));
                break Ending::Terminated(how);
            }
            _ = shutdown.wait_for(|stop| *stop) => {
                break Ending::Terminated(Termination::Close {
                    code: 1001,
                    reason: "service shutting down",
                });
            }
            _ = &mut writer => break Ending::WriterGone,
        }
    };

    match ending {
        Ending::Terminated(Termination::Close { code, reason }) => {
            shared.update(|s| {
                s.close_connection(conn, code, reason);
                s.disconnect(conn)
            });
            if tokio::time::timeout(FLUSH_TIMEOUT, &mut writer)
                .await
                .is_err()
            {
                writer.abort();
            }
        }
        Ending::Terminated(Termination::Abrupt) | Ending::Gone => {
            shared.update(|s| s.disconnect(conn));
            writer.abort();
            // Wait for the abort so the write half is dropped before the read
            // half: the socket closes with no close frame.
            let _ = writer.await;
        }
        Ending::WriterGone => {
            shared.update(|s| s.disconnect(conn));
        }
    }
    drop(stream);
    tracing::info!(connection = conn, "disconnected");
}

async fn write_loop(
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
) {
    while let Some(out) = rx.recv().await {
        match out {
            Outbound::Frame(text) => {
                if sink.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
            Outbound::Close { code, reason } => {
                let frame = CloseFrame {
                    code,
                    reason: reason.into(),
                };
                let _ = sink.send(Message::Close(Some(frame))).await;
                return;
            }
        }
    }
}
