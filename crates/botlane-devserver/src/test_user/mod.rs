//! A human chat client for bot tests.

mod error;
mod inbox;
mod send;
mod sidecar;
mod socket;

pub use error::TestUserError;

/// A channel's history as a [`TestUser`] reads it ([`TestUser::history`]).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct History {
    /// The messages it could open, oldest first.
    pub messages: Vec<ReceivedMessage>,
    /// How many it could not: no key for them, or not sealed as the
    /// protocol says.
    pub unreadable: usize,
}
use inbox::{await_slot, check, on_frame, parse, Inner, Shared};
pub use sidecar::Sidecar;
pub use socket::CONNECT_TIMEOUT;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botlane::{decode_command_data, CommandData};
use botlane_proto::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair, PublicKey};
use botlane_proto::payload::{
    ChannelInfo, CodeReply, Empty, HistoryReply, HistoryRequest, JoinRequest, KeyShare, LoginReply,
    LoginRequest, MembersReply, MembersRequest, Notification, PublicKeyReply, PublicKeyRequest,
    Ready, WireMessage,
};
use botlane_proto::{encode_frame, OpCode};
use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_websockets::Message as WsMessage;

/// How long a request waits for its reply before [`TestUserError::Timeout`].
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The most pushed messages a [`TestUser`] holds for
/// [`next_message`](TestUser::next_message) before it drops the newest
/// (counted by [`TestUser::messages_dropped`]).
pub const MAX_QUEUED_MESSAGES: usize = 4096;

/// The most notifications a [`TestUser`] keeps for
/// [`notifications`](TestUser::notifications): the first ones, later ones
/// are only counted ([`TestUser::notifications_dropped`]).
pub const MAX_KEPT_NOTIFICATIONS: usize = 4096;

/// The most bytes of frames a [`TestUser`] holds that are not yet written to
/// its socket (the service is not reading, or the writer task has not run);
/// a frame that does not fit (into a queue that is not empty) is refused
/// with [`TestUserError::SendQueueFull`].
pub const MAX_UNSENT_BYTES: usize = 16 * 1024 * 1024;

/// A message as a [`TestUser`] sees it: decrypted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReceivedMessage {
    /// The message id.
    pub id: String,
    /// The channel.
    pub channel_id: String,
    /// The author's id.
    pub author_id: String,
    /// The plaintext content.
    pub content: String,
    /// The opened sidecar's JSON text, if the message carried one.
    pub command_json: Option<String>,
    /// The sidecar decoded without a registry (`None` if absent or malformed).
    pub command: Option<CommandData>,
    /// The message this one replies to.
    pub reply_to: Option<String>,
    /// Milliseconds since the Unix epoch, assigned by the service.
    pub created_at: u64,
}

/// A human user over a real WebSocket, for testing bots end to end.
///
/// It logs in with its own X25519 identity, creates and shares channel keys
/// like a chat app would, seals what it sends and opens what it receives:
/// the bot under test sees exactly what a real member would send it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use botlane_devserver::{DevServer, TestUser};
///
/// let server = DevServer::start(Default::default()).await?;
/// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
/// let (alice, bob) = (server.add_user("alice"), server.add_user("bob"));
/// server.add_member(&channel, &alice.id)?;
/// server.add_member(&channel, &bob.id)?;
///
/// let alice = TestUser::connect(&server.ws_url(), &alice.token).await?;
/// let bob = TestUser::connect(&server.ws_url(), &bob.token).await?;
/// alice.open_channel(&channel).await?; // creates the key and wraps it to bob
/// bob.wait_for_key(&channel, Duration::from_secs(5)).await?;
/// alice.send_text(&channel, "hello bob").await?;
/// let got = bob.wait_for_message(|m| m.author_id == alice.user_id(), Duration::from_secs(5)).await?;
/// assert_eq!(got.content, "hello bob");
/// // The service only ever saw ciphertext.
/// assert_ne!(server.messages(&channel)[0].content, "hello bob");
/// # Ok(())
/// # }
/// ```
///
/// # Bounds
///
/// Pushed messages wait for [`next_message`](Self::next_message) in a queue
/// of at most [`MAX_QUEUED_MESSAGES`]. When it is full the newest message is
/// dropped, counted by [`messages_dropped`](Self::messages_dropped) and
/// logged once as a warning, so a bot that floods a channel this user never
/// reads cannot grow it without end. The user does not stop reading its
/// socket instead: the replies to its requests come on the same socket,
/// behind the pushes, so every request would then wait [`REQUEST_TIMEOUT`]
/// for a reply stuck behind messages nobody reads. Notifications are kept
/// up to [`MAX_KEPT_NOTIFICATIONS`], the later ones only counted
/// ([`notifications_dropped`](Self::notifications_dropped)).
///
/// Frames to send wait for the socket in a queue of at most
/// [`MAX_UNSENT_BYTES`]: one that does not fit is refused with
/// [`TestUserError::SendQueueFull`] (a service that stopped reading, or a
/// loop of [`send_raw`](Self::send_raw) that never lets the writer task run).
/// A write the service does not take within [`REQUEST_TIMEOUT`] ends the
/// connection: the user lets go of its socket, and every request after it
/// fails with [`TestUserError::Closed`].
pub struct TestUser {
    user_id: String,
    name: String,
    shared: Arc<Shared>,
    out: mpsc::UnboundedSender<String>,
    messages: tokio::sync::Mutex<mpsc::Receiver<WireMessage>>,
    key_arrived: Arc<tokio::sync::Notify>,
    reader: JoinHandle<()>,
}

impl TestUser {
    /// Connects to `ws_url` (`ws://`), logs in with `token` and a fresh
    /// identity key, and waits for `ready`. Opening the socket is bounded by
    /// [`CONNECT_TIMEOUT`], each request by [`REQUEST_TIMEOUT`].
    pub async fn connect(ws_url: &str, token: &str) -> Result<Self, TestUserError> {
        Self::login_over(socket::open(ws_url, None).await?, token).await
    }

    /// Like [`connect`](Self::connect), over `wss://`, trusting only
    /// `root_certificate_der` (such as
    /// [`DevServer::realtime_root_certificate_der`](crate::DevServer::realtime_root_certificate_der)).
    pub async fn connect_tls(
        wss_url: &str,
        token: &str,
        root_certificate_der: &[u8],
    ) -> Result<Self, TestUserError> {
        let socket = socket::open(wss_url, Some(root_certificate_der)).await?;
        Self::login_over(socket, token).await
    }

    async fn login_over(socket: socket::Socket, token: &str) -> Result<Self, TestUserError> {
        let (mut sink, mut stream) = socket.split();
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::default()),
            identity: IdentityKeyPair::generate()?,
            messages_dropped: AtomicU64::new(0),
            unsent_bytes: AtomicUsize::new(0),
        });
        // Unbounded as a channel, bounded in bytes by `enqueue`: the bound
        // must hold for `send_raw`, which cannot wait for room.
        let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
        let writer_shared = Arc::clone(&shared);
        // Set when the writer gave up on the socket: the reader lets go too.
        let writer_gone = Arc::new(tokio::sync::Notify::new());
        let gone = Arc::clone(&writer_gone);
        tokio::spawn(async move {
            while let Some(text) = out_rx.recv().await {
                let len = text.len();
                // A service that stops reading must not hold this task and
                // its socket for good.
                let sent =
                    tokio::time::timeout(REQUEST_TIMEOUT, sink.send(WsMessage::text(text))).await;
                // Counted until the socket took it: a frame stuck in `send`
                // is still held.
                writer_shared.unsent_bytes.fetch_sub(len, Ordering::Relaxed);
                match sent {
                    Ok(Ok(())) => {}
                    // A write error ends the read side by itself, after the
                    // frames already received (a close frame among them).
                    Ok(Err(_)) => return,
                    Err(_stalled) => {
                        gone.notify_one();
                        return;
                    }
                }
            }
            // The handle is gone: say goodbye properly, if the service reads.
            let _ = tokio::time::timeout(REQUEST_TIMEOUT, sink.close()).await;
        });
        let (messages_tx, messages_rx) = mpsc::channel(MAX_QUEUED_MESSAGES);
        let key_arrived = Arc::new(tokio::sync::Notify::new());
        let reader = {
            let shared = Arc::clone(&shared);
            let key_arrived = Arc::clone(&key_arrived);
            tokio::spawn(async move {
                loop {
                    let frame = tokio::select! {
                        frame = stream.next() => frame,
                        () = writer_gone.notified() => None,
                    };
                    let Some(Ok(frame)) = frame else {
                        break;
                    };
                    if let Some(text) = frame.as_text() {
                        on_frame(&shared, &messages_tx, &key_arrived, text);
                    } else if let Some((code, reason)) = frame.as_close() {
                        shared.lock().close = Some((code.into(), reason.to_owned()));
                    }
                }
                let mut inner = shared.lock();
                inner.closed = true;
                // Dropping the reply slots wakes every waiting request.
                inner.pending.clear();
            })
        };

        let login = LoginRequest::new(
            token,
            shared.identity.public_key().to_base64(),
            concat!("botlane-devserver-testuser/", env!("CARGO_PKG_VERSION")),
        );
        let ready_slot = {
            // Reserve the `ready` slot before logging in so the push cannot be missed.
            let (tx, rx) = oneshot::channel();
            shared
                .lock()
                .pending
                .entry(OpCode::Ready.code())
                .or_default()
                .push_back(tx);
            rx
        };
        let mut user = Self {
            user_id: String::new(),
            name: String::new(),
            shared,
            out,
            messages: tokio::sync::Mutex::new(messages_rx),
            key_arrived,
            reader,
        };
        let reply: LoginReply = user.request(OpCode::Login, &login).await?;
        if reply.code != 0 {
            return Err(TestUserError::LoginRefused(reply.code));
        }
        let ready: Ready = parse(OpCode::Ready, &await_slot(ready_slot).await?)?;
        user.user_id = ready.user_id;
        user.name = ready.name;
        user.shared.lock().channels = ready.channels;
        Ok(user)
    }

    /// This user's id.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// This user's display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The channels this user is a member of: those listed in `ready` at
    /// login, kept up to date by `channel_added` (op 34) and
    /// `channel_removed` (op 35; the channel's key is forgotten too).
    pub fn channels(&self) -> Vec<ChannelInfo> {
        self.shared.lock().channels.clone()
    }

    /// The code and reason of the close frame the service sent, once the
    /// connection has ended with one.
    pub fn close_reason(&self) -> Option<(u16, String)> {
        self.shared.lock().close.clone()
    }

    /// Sends `text` as one text frame, as is, and waits for nothing: for
    /// tests of how a service treats malformed input. Refused with
    /// [`TestUserError::SendQueueFull`] when [`MAX_UNSENT_BYTES`] would be
    /// passed.
    pub fn send_raw(&self, text: &str) -> Result<(), TestUserError> {
        if self.shared.lock().closed {
            return Err(TestUserError::Closed);
        }
        self.enqueue(text.to_owned())
    }

    /// How many pushed messages were dropped because
    /// [`MAX_QUEUED_MESSAGES`] were already waiting for
    /// [`next_message`](Self::next_message).
    pub fn messages_dropped(&self) -> u64 {
        self.shared.messages_dropped.load(Ordering::Relaxed)
    }

    /// Hands a frame to the writer task if it fits within [`MAX_UNSENT_BYTES`].
    fn enqueue(&self, text: String) -> Result<(), TestUserError> {
        // A writer that ended left the count of the frames it dropped: the
        // answer is `Closed`, not a full queue.
        if self.out.is_closed() {
            return Err(TestUserError::Closed);
        }
        let frame = text.len();
        self.shared
            .unsent_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |queued| {
                // An empty queue takes any frame, so no frame is refused forever.
                (queued == 0 || queued.saturating_add(frame) <= MAX_UNSENT_BYTES)
                    .then_some(queued.saturating_add(frame))
            })
            .map_err(|queued| TestUserError::SendQueueFull { queued, frame })?;
        self.out.send(text).map_err(|_| {
            self.shared.unsent_bytes.fetch_sub(frame, Ordering::Relaxed);
            TestUserError::Closed
        })
    }

    /// This user's identity public key (as registered at login).
    pub fn public_key(&self) -> PublicKey {
        self.shared.identity.public_key()
    }

    /// Whether this user holds a key for the channel.
    pub fn has_channel_key(&self, channel_id: &str) -> bool {
        self.shared.lock().keys.contains_key(channel_id)
    }

    /// Waits until this user holds a key for the channel (shared by another member).
    pub async fn wait_for_key(
        &self,
        channel_id: &str,
        timeout: Duration,
    ) -> Result<(), TestUserError> {
        let deadline = crate::limits::deadline(timeout);
        loop {
            let notified = self.key_arrived.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.has_channel_key(channel_id) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(TestUserError::Timeout(timeout));
            }
        }
    }

    /// Joins a channel (op 60).
    pub async fn join(&self, channel_id: &str) -> Result<(), TestUserError> {
        let reply: CodeReply = self
            .request(OpCode::ChannelJoin, &JoinRequest::new(channel_id))
            .await?;
        check(OpCode::ChannelJoin, reply.code, reply.reason)
    }

    /// Makes the channel usable: creates a channel key if this user has
    /// none, then wraps it to every other member that has a public key (op
    /// 61, op 52, op 51). Returns how many members it was shared with. Call
    /// it again after members join to share with them too.
    pub async fn open_channel(&self, channel_id: &str) -> Result<usize, TestUserError> {
        {
            let mut inner = self.shared.lock();
            if !inner.keys.contains_key(channel_id) {
                inner
                    .keys
                    .insert(channel_id.to_owned(), ChannelKey::generate()?);
            }
        }
        self.key_arrived.notify_waiters();
        let members: MembersReply = self
            .request(OpCode::ChannelMembers, &MembersRequest::new(channel_id))
            .await?;
        check(OpCode::ChannelMembers, members.code, None)?;
        let mut shared_with = 0;
        for member in members.members.iter().filter(|m| **m != self.user_id) {
            match self.share_key_with(channel_id, member).await {
                Ok(()) => shared_with += 1,
                // Someone who has never logged in cannot be given a key yet.
                Err(TestUserError::NoPublicKey(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(shared_with)
    }

    /// Wraps this user's key of the channel to one account and hands it over (op 51).
    pub async fn share_key_with(
        &self,
        channel_id: &str,
        account_id: &str,
    ) -> Result<(), TestUserError> {
        let reply: PublicKeyReply = self
            .request(OpCode::PublicKeyFetch, &PublicKeyRequest::new(account_id))
            .await?;
        check(OpCode::PublicKeyFetch, reply.code, None)?;
        let recipient = reply
            .public_key
            .ok_or_else(|| TestUserError::NoPublicKey(account_id.to_owned()))?;
        let recipient = PublicKey::from_base64(&recipient)?;
        let wrapped = {
            let inner = self.shared.lock();
            let key = inner
                .keys
                .get(channel_id)
                .ok_or_else(|| TestUserError::NoChannelKey(channel_id.to_owned()))?;
            wrap_channel_key(key, &recipient, channel_id)?
        };
        let wrapped = serde_json::value::to_raw_value(&wrapped)
            .map_err(|e| TestUserError::Protocol(e.to_string()))?;
        let share = KeyShare::new(channel_id, account_id, wrapped);
        let reply: CodeReply = self.request(OpCode::KeyShare, &share).await?;
        check(OpCode::KeyShare, reply.code, reply.reason)
    }

    /// The next message pushed to this user (its own included), decrypted.
    pub async fn next_message(&self, timeout: Duration) -> Result<ReceivedMessage, TestUserError> {
        let mut messages = self.messages.lock().await;
        match tokio::time::timeout(timeout, messages.recv()).await {
            Ok(Some(message)) => self.open(message),
            Ok(None) => Err(TestUserError::Closed),
            Err(_) => Err(TestUserError::Timeout(timeout)),
        }
    }

    /// Waits for the first message that satisfies `pred`, discarding the
    /// others that arrive before it.
    pub async fn wait_for_message(
        &self,
        mut pred: impl FnMut(&ReceivedMessage) -> bool,
        timeout: Duration,
    ) -> Result<ReceivedMessage, TestUserError> {
        let deadline = crate::limits::deadline(timeout);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = self.next_message(left).await.map_err(|e| match e {
                TestUserError::Timeout(_) => TestUserError::Timeout(timeout),
                other => other,
            })?;
            if pred(&message) {
                return Ok(message);
            }
        }
    }

    /// The notifications pushed to this user so far, the first
    /// [`MAX_KEPT_NOTIFICATIONS`] of them.
    pub fn notifications(&self) -> Vec<Notification> {
        self.shared.lock().notifications.clone()
    }

    /// How many notifications came after the first
    /// [`MAX_KEPT_NOTIFICATIONS`] and were not kept.
    pub fn notifications_dropped(&self) -> u64 {
        self.shared.lock().notifications_dropped
    }

    /// A channel's history (op 40, up to the service's cap), oldest first:
    /// the messages this user can open, and how many it cannot (sealed to
    /// a key it never had, as a newcomer's older messages are). Fails only
    /// when the request does.
    pub async fn history(&self, channel_id: &str) -> Result<History, TestUserError> {
        let request = HistoryRequest::new(channel_id);
        let reply: HistoryReply = self.request(OpCode::HistoryFetch, &request).await?;
        check(OpCode::HistoryFetch, reply.code, None)?;
        let mut history = History::default();
        for message in reply.messages {
            match self.open(message) {
                Ok(opened) => history.messages.push(opened),
                Err(_) => history.unreadable += 1,
            }
        }
        Ok(history)
    }

    /// Sends a heartbeat (op 12) and waits for its reply.
    pub async fn heartbeat(&self) -> Result<(), TestUserError> {
        let reply: CodeReply = self.request(OpCode::Heartbeat, &Empty {}).await?;
        check(OpCode::Heartbeat, reply.code, reply.reason)
    }

    fn open(&self, message: WireMessage) -> Result<ReceivedMessage, TestUserError> {
        let inner = self.shared.lock();
        let key = inner
            .keys
            .get(&message.channel_id)
            .ok_or_else(|| TestUserError::NoChannelKey(message.channel_id.clone()))?;
        let aad = message.channel_id.as_bytes();
        let text = |sealed: &str| -> Result<String, TestUserError> {
            String::from_utf8(key.open(sealed, aad)?)
                .map_err(|_| TestUserError::Protocol("sealed text is not UTF-8".into()))
        };
        let content = text(&message.content)?;
        let command_json = message.command.as_deref().map(text).transpose()?;
        let command = command_json
            .as_deref()
            .and_then(|json| decode_command_data(json, None));
        Ok(ReceivedMessage {
            id: message.id,
            channel_id: message.channel_id,
            author_id: message.author_id,
            content,
            command_json,
            command,
            reply_to: message.reply_to,
            created_at: message.created_at,
        })
    }

    /// Sends a request and waits for the reply that answers it.
    async fn request<Q: Serialize, R: DeserializeOwned>(
        &self,
        op: OpCode,
        payload: &Q,
    ) -> Result<R, TestUserError> {
        let slot = {
            // Queue the slot and the frame under one lock, so the FIFO order
            // of slots is the order the frames leave in.
            let mut inner = self.shared.lock();
            if inner.closed {
                return Err(TestUserError::Closed);
            }
            let (tx, rx) = oneshot::channel();
            inner.pending.entry(op.code()).or_default().push_back(tx);
            if let Err(e) = self.enqueue(encode_frame(op, payload)) {
                // No reply will come for a frame that was never sent.
                inner
                    .pending
                    .get_mut(&op.code())
                    .and_then(VecDeque::pop_back);
                return Err(e);
            }
            rx
        };
        parse(op, &await_slot(slot).await?)
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        // The writer ends when `out` is dropped and closes the socket; the
        // reader would end with it, but stop it now in case the peer lingers.
        self.reader.abort();
    }
}

impl std::fmt::Debug for TestUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestUser")
            .field("user_id", &self.user_id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
