//! The scripted fake realtime service of the tests (`hostile`, `soak`) and
//! the benches (`benches/support/fake_service.rs`): a real listener on
//! loopback, with helpers for the well-behaved parts (login, ready, menu,
//! key push, answers) so each test can misbehave in one way. Tests speak
//! through tokio-tungstenite (another WebSocket implementation than the
//! client's); the benches through the client's own.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

pub mod busy;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use botlane::crypto::{wrap_channel_key, ChannelKey, PublicKey};
use botlane::{
    Client, ClientError, ClientOptions, CommandContext, CommandDeclaration, ConnectErrorKind,
};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

pub type Ws = WebSocketStream<TcpStream>;

/// A stream a WebSocket runs on: TCP here, TLS in `tests/hostile/wss.rs`.
pub trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> Io for T {}

pub const WAIT: Duration = Duration::from_secs(20);

/// Short timings with room for a loaded CI: connect 300 ms, idle 400 ms.
pub fn options(addr: SocketAddr, dir: &tempfile::TempDir) -> ClientOptions {
    ClientOptions::new(
        "hostile-test-token",
        dir.path().join("k"),
        format!("ws://{addr}/ws"),
    )
    .connect_timeout(Duration::from_millis(300))
    .idle_timeout(Duration::from_millis(400))
    .heartbeat_interval(Duration::from_millis(100))
    .request_timeout(Duration::from_secs(5))
    .reconnect_delays(Duration::from_millis(20), Duration::from_millis(200))
}

/// `options` with nothing but the test's own doing to end a session: no
/// heartbeat, idle end or stalled request within a test's time.
pub fn patient(options: ClientOptions) -> ClientOptions {
    options
        .request_timeout(Duration::from_secs(60))
        .heartbeat_interval(Duration::from_secs(60))
        .idle_timeout(Duration::from_secs(120))
}

/// A listener whose every connection runs `handler` with its ordinal (1, 2…).
pub async fn serve<F, Fut>(handler: F) -> (SocketAddr, Arc<AtomicUsize>)
where
    F: Fn(TcpStream, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    serve_on(TcpListener::bind("127.0.0.1:0").await.unwrap(), handler)
}

/// [`serve`] on a listener the test has set up.
pub fn serve_on<F, Fut>(listener: TcpListener, handler: F) -> (SocketAddr, Arc<AtomicUsize>)
where
    F: Fn(TcpStream, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::spawn(handler(tcp, n));
        }
    });
    (addr, accepted)
}

/// A well-behaved service: every connection logged in (`bot-N`, no
/// channels), then answered ([`behave`]).
pub async fn serve_well_behaved() -> (SocketAddr, Arc<AtomicUsize>) {
    serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        if login(&mut ws, n, &[]).await.is_some() {
            behave(&mut ws).await;
        }
    })
    .await
}

/// Completes the WebSocket upgrade; the peer may send frames of any size.
pub async fn upgrade(tcp: TcpStream) -> Ws {
    let config = WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    tokio_tungstenite::accept_async_with_config(tcp, Some(config))
        .await
        .unwrap()
}

/// Reads an upgrade request's head; `false` when the client went away first.
pub async fn read_request_head(tcp: &mut TcpStream) -> bool {
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    true
}

/// Reads an upgrade request's head and answers it with `status` (and a
/// `Retry-After`, if given), then hangs up.
pub async fn refuse_upgrade(mut tcp: TcpStream, status: &str, retry_after: Option<&str>) {
    if !read_request_head(&mut tcp).await {
        return;
    }
    let retry_after = retry_after.map_or(String::new(), |v| format!("Retry-After: {v}\r\n"));
    let response =
        format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n{retry_after}\r\n");
    let _ = tcp.write_all(response.as_bytes()).await;
    let _ = tcp.shutdown().await;
}

/// The next text frame as JSON; `None` when the client is gone.
pub async fn next_frame<S: Io>(ws: &mut WebSocketStream<S>) -> Option<serde_json::Value> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(text)) => return serde_json::from_str(text.as_str()).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

pub async fn send<S: Io>(ws: &mut WebSocketStream<S>, text: impl Into<String>) -> bool {
    ws.send(Message::text(text.into())).await.is_ok()
}

/// The answer `{"code":0}` to a request with `op`.
pub fn answer(op: impl std::fmt::Display) -> String {
    format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)
}

/// A ready push listing `channels`.
pub fn ready(bot_id: &str, channels: &[&str]) -> String {
    let channels: Vec<serde_json::Value> = channels
        .iter()
        .map(|id| serde_json::json!({"id": id, "server_id": "s1", "name": id}))
        .collect();
    serde_json::json!({"op": 11, "d": {"user_id": bot_id, "name": "bot", "kind": "bot", "channels": channels}})
        .to_string()
}

/// Reads the client's first frame, which must be the login (op 10);
/// `None` when the client went away first.
pub async fn read_login<S: Io>(ws: &mut WebSocketStream<S>) -> Option<serde_json::Value> {
    let frame = next_frame(ws).await?;
    assert_eq!(frame["op"], 10, "the first frame is the login");
    Some(frame)
}

/// Reads the login and answers it as `bot-N`, then sends a `ready` listing
/// `ready_with` when given (`None`: no `ready` now, the test sends its own
/// later or never). The menu publish is left to the caller. Returns the
/// bot's identity public key, or `None` when the client went away first.
pub async fn accept_login<S: Io>(
    ws: &mut WebSocketStream<S>,
    n: usize,
    ready_with: Option<&[&str]>,
) -> Option<String> {
    let frame = read_login(ws).await?;
    let public_key = frame["d"]["public_key"]
        .as_str()
        .expect("the login carries the bot's public key")
        .to_owned();
    let bot = format!("bot-{n}");
    send(ws, login_accepted(&bot)).await;
    if let Some(channels) = ready_with {
        send(ws, ready(&bot, channels)).await;
    }
    Some(public_key)
}

/// The answer to a login: accepted, as `bot`.
pub fn login_accepted(bot: &str) -> String {
    format!(r#"{{"op":10,"d":{{"code":0,"user_id":"{bot}"}}}}"#)
}

/// Reads the next frame, which must be the menu publish (op 20); `None`
/// when the client went away first.
pub async fn read_menu<S: Io>(ws: &mut WebSocketStream<S>) -> Option<serde_json::Value> {
    let frame = next_frame(ws).await?;
    assert_eq!(frame["op"], 20, "then the menu");
    Some(frame)
}

/// Reads the menu publish and answers it with `code`; `false` when the
/// client went away.
pub async fn answer_menu<S: Io>(ws: &mut WebSocketStream<S>, code: i64) -> bool {
    read_menu(ws).await.is_some() && send(ws, format!(r#"{{"op":20,"d":{{"code":{code}}}}}"#)).await
}

/// Answers the login (`bot-N`, a `ready` listing `channels`) and every
/// request up to and including the menu publish; returns the bot's
/// identity public key, or `None` when the client went away.
pub async fn login<S: Io>(
    ws: &mut WebSocketStream<S>,
    n: usize,
    channels: &[&str],
) -> Option<String> {
    let public_key = accept_login(ws, n, Some(channels)).await?;
    loop {
        let frame = next_frame(ws).await?;
        let op = frame["op"].as_u64()?;
        send(ws, answer(op)).await;
        if op == 20 {
            return Some(public_key);
        }
    }
}

/// Upgrades and logs in connection `n` with no channels. The first one is
/// returned for the test to misbehave on; later ones (the client's
/// reconnects) are served well-behaved here, and `None` is returned.
pub async fn first_session_else_behave(tcp: TcpStream, n: usize) -> Option<Ws> {
    let mut ws = upgrade(tcp).await;
    login(&mut ws, n, &[]).await?;
    if n > 1 {
        behave(&mut ws).await;
        return None;
    }
    Some(ws)
}

/// Upgrades and logs in connection `n` as a member of `channel`. The first
/// one is returned for the test to misbehave on, with a new key for the
/// channel and its key push (op 50, not sent yet); later ones are served
/// well-behaved here, and `None` is returned.
pub async fn first_session_with_key(
    tcp: TcpStream,
    n: usize,
    channel: &str,
) -> Option<(Ws, ChannelKey, String)> {
    let mut ws = upgrade(tcp).await;
    let public_key = login(&mut ws, n, &[channel]).await?;
    if n > 1 {
        behave(&mut ws).await;
        return None;
    }
    let (key, key_push) = channel_key_for(&public_key, channel);
    Some((ws, key, key_push))
}

/// Answers every request with `{"code":0}` (op 240 with an empty catalog)
/// until the client goes away.
pub async fn behave<S: Io>(ws: &mut WebSocketStream<S>) {
    while let Some(frame) = next_frame(ws).await {
        let Some(op) = frame["op"].as_u64() else {
            continue;
        };
        let reply = if op == 240 {
            r#"{"op":240,"d":{"code":0,"emojis":[{"name":"ok","emoji":"👌"}]}}"#.to_owned()
        } else {
            answer(op)
        };
        if !send(ws, reply).await {
            return;
        }
    }
}

/// Waits, within [`WAIT`], until `check` holds.
pub async fn eventually(what: &str, check: impl FnMut() -> bool) {
    eventually_within(WAIT, what, check).await;
}

/// Waits, within `within`, until `check` holds.
pub async fn eventually_within(within: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + within;
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The reason of the next `Event::Disconnected`, within [`WAIT`].
pub async fn disconnect_reason(events: &mut botlane::Events) -> String {
    tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(botlane::Event::Disconnected { reason, .. }) = events.recv().await {
                return reason;
            }
        }
    })
    .await
    .expect("the session ends")
}

/// The emoji catalog from the client's next session, once it has
/// reconnected to a service that behaves (`behave` serves one emoji).
pub async fn emojis_after_reconnect(client: &Client) -> Vec<botlane::Emoji> {
    tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(emojis) = client.fetch_emojis().await {
                return emojis;
            }
            // Refused at once while disconnected: let the reconnect run.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a new session answers")
}

/// A logged-in client.
pub async fn client(options: ClientOptions) -> Client {
    client_with_events(options).await.0
}

/// A logged-in client, with a subscription taken before its login: a
/// session that ends at once is reported to it, not before it was taken.
pub async fn client_with_events(options: ClientOptions) -> (Client, botlane::Events) {
    let client = Client::new(options).unwrap();
    let events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    (client, events)
}

/// A `/slow` command: each invocation counts itself in `started`, then
/// waits until `gate` is opened (for good). With one handler permit, the
/// first holds it and the next holds dispatch waiting for it.
pub struct Slow {
    pub gate: watch::Sender<bool>,
    pub started: Arc<AtomicUsize>,
    /// Counts the invocations that returned.
    pub finished: Arc<AtomicUsize>,
}

/// Registers `/slow` on `client` (before its login).
pub fn register_slow(client: &Client) -> Slow {
    let (gate, opened) = watch::channel(false);
    let started = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let (counter, done) = (started.clone(), finished.clone());
    client
        .commands()
        .register(
            CommandDeclaration::new("slow", "Waits for the gate"),
            move |_ctx: CommandContext| {
                counter.fetch_add(1, Ordering::SeqCst);
                let (mut opened, done) = (opened.clone(), done.clone());
                async move {
                    let _ = opened.wait_for(|open| *open).await;
                    done.fetch_add(1, Ordering::SeqCst);
                    Ok::<(), std::io::Error>(())
                }
            },
        )
        .unwrap();
    Slow {
        gate,
        started,
        finished,
    }
}

/// The largest of the values in a `/proc/sys` file such as
/// `net/ipv4/tcp_wmem` (min, default, max): what a socket buffer may grow
/// to; 16 MiB where the file cannot be read.
pub fn most_of(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.split_whitespace().last()?.parse().ok())
        .unwrap_or(16 * 1024 * 1024)
}

/// A new channel key for `channel`, and the key push (op 50) that wraps it
/// to the bot whose identity is `public_key` (as [`login`] returns it).
pub fn channel_key_for(public_key: &str, channel: &str) -> (ChannelKey, String) {
    let key = ChannelKey::generate().unwrap();
    let push = key_push(&key, public_key, channel);
    (key, push)
}

/// The key push (op 50, from `u1`) that wraps `key` for `channel` to the
/// bot whose identity is `public_key` (as [`login`] returns it).
pub fn key_push(key: &ChannelKey, public_key: &str, channel: &str) -> String {
    let recipient = PublicKey::from_base64(public_key).unwrap();
    let wrapped = wrap_channel_key(key, &recipient, channel).unwrap();
    serde_json::json!({"op": 50, "d": {"channel_id": channel, "from": "u1", "wrapped": wrapped}})
        .to_string()
}

/// Logs in with `options` and one attempt (a timeout is otherwise tried
/// again), which must fail by itself (within [`WAIT`]) with its connect
/// timeout (`timeout`, written `in_words`) naming the step `stalled_in`,
/// in full and once; `url` is the wire's address as the error names it
/// (`ws://127.0.0.1:PORT`).
pub async fn assert_login_times_out(
    options: ClientOptions,
    url: &str,
    (timeout, in_words): (Duration, &str),
    stalled_in: &str,
) {
    let client = Client::new(options.login_deadline(Duration::ZERO)).unwrap();
    let started = Instant::now();
    let err = tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login gives up by itself")
        .unwrap_err();
    let ClientError::Connect(connect) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(connect.kind(), ConnectErrorKind::Timeout);
    assert_eq!(
        err.to_string(),
        format!(
            "could not connect to the realtime wire at {url}: no connection within the connect \
             timeout of {in_words} (stalled in {stalled_in})"
        )
    );
    assert!(
        std::error::Error::source(&err).is_none(),
        "the reason is printed once"
    );
    assert!(started.elapsed() >= timeout);
}
