//! The running service: its handle, its listener and its connections.

use std::net::SocketAddr;
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
use crate::{
    BotAccount, Denial, DevServerConfig, DevServerError, FrameRecord, StateView, StoredMenu,
    UserAccount, WaitTimeout,
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
    pub(crate) playground: Option<Arc<Playground>>,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
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
    /// Builds the state from `config`, binds `config.listen` and starts serving.
    pub async fn start(config: DevServerConfig) -> Result<Self, DevServerError> {
        let state = State::from_config(&config)?;
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| DevServerError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| DevServerError::Bind {
                addr: config.listen,
                source,
            })?;
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
        let task = tokio::spawn(run(listener, Arc::clone(&shared), extra, shutdown_rx));
        tracing::info!(%local_addr, "realtime listener started");
        Ok(Self {
            shared,
            local_addr,
            playground,
            shutdown,
            task: Some(task),
        })
    }

    /// The WebSocket URL of the realtime wire, such as `ws://127.0.0.1:40123/ws`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.local_addr)
    }

    /// The address the realtime listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, closes every connection and waits until every task has ended.
    pub async fn shutdown(mut self) {
        self.shutdown.send_replace(true);
        if let Some(task) = self.task.take() {
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

impl Drop for DevServer {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
    }
}

impl std::fmt::Debug for DevServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevServer")
            .field("local_addr", &self.local_addr)
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
