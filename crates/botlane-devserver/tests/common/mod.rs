//! What the devserver's suites share: a raw WebSocket client (frames in,
//! frames out, nothing else), an HTTP client for the REST listener, and the
//! two services they run against: the `Lobby` of fixed accounts for raw
//! clients, and the `World` of two connected `TestUser`s.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::time::Duration;

use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, FileConfig, Limits, ServerConfig,
    TestUser,
};
use botlane_proto::OpCode;
use futures_util::{SinkExt, StreamExt};
use reqwest::{redirect, StatusCode};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

pub const WAIT: Duration = Duration::from_secs(5);

/// Stops the child (the devserver binary) with SIGINT and returns its
/// stderr, after checking it exited cleanly.
pub async fn interrupt(child: std::process::Child) -> String {
    stop_with("-INT", child).await
}

/// Sends the child (the devserver binary) `signal` (`kill`'s spelling, as
/// `-TERM`) and returns its stderr, after checking it exited cleanly.
pub async fn stop_with(signal: &str, child: std::process::Child) -> String {
    let status = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stderr).unwrap()
}

/// A valid base64 X25519 public key, distinct per `seed` (the service
/// refuses low-order points such as all zeros).
pub fn fake_key(seed: char) -> String {
    let secret = [u8::try_from(u32::from(seed)).unwrap(); 32];
    botlane_proto::crypto::IdentityKeyPair::from_secret_bytes(secret)
        .public_key()
        .to_base64()
}

/// A payload shaped like a sealed one (`docs/crypto.md`: canonical base64 of
/// a 12-byte nonce, the ciphertext and a 16-byte tag) around `text`; the
/// service checks the shape only, never holding a key.
pub fn sealed(text: &str) -> String {
    use base64::Engine as _;
    let mut bytes = vec![0u8; 12];
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&[0u8; 16]);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct Raw {
    pub ws: Socket,
    /// The reason of the close frame [`Raw::next`] met, if any.
    pub close_reason: Option<String>,
}

/// How a read ended when no frame came.
#[derive(Debug, PartialEq)]
pub enum End {
    /// A close frame arrived, with its code.
    Closed(Option<u16>),
    /// The stream ended or failed with no close frame.
    Dropped,
}

impl Raw {
    pub async fn connect(url: &str) -> Self {
        let (ws, _) = connect_async(url).await.unwrap();
        Self {
            ws,
            close_reason: None,
        }
    }

    pub async fn send_text(&mut self, text: impl Into<String>) {
        self.ws.send(Message::text(text.into())).await.unwrap();
    }

    pub async fn send(&mut self, op: OpCode, d: Value) {
        self.send_text(json!({"op": op.code(), "d": d}).to_string())
            .await;
    }

    /// The next text frame as (op, payload), or how the socket ended.
    pub async fn next(&mut self) -> Result<(u16, Value), End> {
        loop {
            let message = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("no frame within the wait");
            match message {
                Some(Ok(Message::Text(text))) => {
                    let frame: Value = serde_json::from_str(text.as_str()).unwrap();
                    let op = u16::try_from(frame["op"].as_u64().unwrap()).unwrap();
                    return Ok((op, frame["d"].clone()));
                }
                Some(Ok(Message::Close(frame))) => {
                    self.close_reason = frame.as_ref().map(|f| f.reason.to_string());
                    return Err(End::Closed(frame.map(|f| u16::from(f.code))));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Err(End::Dropped),
            }
        }
    }

    /// The next frame, which must have opcode `op`.
    pub async fn expect(&mut self, op: OpCode) -> Value {
        let (got, d) = self.next().await.unwrap();
        assert_eq!(
            got,
            op.code(),
            "expected op {} but got {got}: {d}",
            op.code()
        );
        d
    }

    /// The next frame with opcode `op`, skipping others.
    pub async fn next_of(&mut self, op: OpCode) -> Value {
        loop {
            let (got, d) = self.next().await.unwrap();
            if got == op.code() {
                return d;
            }
        }
    }

    /// Sends a request and returns its reply, skipping pushes in between.
    pub async fn request(&mut self, op: OpCode, d: Value) -> Value {
        self.send(op, d).await;
        self.next_of(op).await
    }

    /// Logs in; returns the reply and the ready push.
    pub async fn login_with_key(&mut self, token: &str, key: &str) -> (Value, Value) {
        self.send(
            OpCode::Login,
            json!({"token": token, "public_key": key, "client": "raw-test/0"}),
        )
        .await;
        let reply = self.expect(OpCode::Login).await;
        assert_eq!(reply["code"], 0, "login refused: {reply}");
        let ready = self.expect(OpCode::Ready).await;
        (reply, ready)
    }

    pub async fn login(&mut self, token: &str) -> (Value, Value) {
        self.login_with_key(token, &fake_key('A')).await
    }

    /// Asserts that nothing arrives within `time`.
    pub async fn expect_silence(&mut self, time: Duration) {
        if let Ok(frame) = tokio::time::timeout(time, self.ws.next()).await {
            panic!("expected silence, got {frame:?}");
        }
    }
}

/// Connects and logs in.
pub async fn logged_in(url: &str, token: &str) -> Raw {
    let mut raw = Raw::connect(url).await;
    raw.login(token).await;
    raw
}

pub struct World {
    pub server: DevServer,
    pub channel: String,
    pub alice: TestUser,
    pub bob: TestUser,
}

/// alice and bob, both logged in, both members of one channel.
pub async fn world() -> World {
    world_with(Limits::default()).await
}

/// [`world`] with these limits.
pub async fn world_with(limits: Limits) -> World {
    let server = DevServer::start(DevServerConfig::default().limits(limits))
        .await
        .unwrap();
    let channel = server
        .create_channel(&server.create_server("lobby"), "general")
        .unwrap();
    let (a, b) = (server.add_user("alice"), server.add_user("bob"));
    server.add_member(&channel, &a.id).unwrap();
    server.add_member(&channel, &b.id).unwrap();
    let alice = TestUser::connect(&server.ws_url(), &a.token).await.unwrap();
    let bob = TestUser::connect(&server.ws_url(), &b.token).await.unwrap();
    World {
        server,
        channel,
        alice,
        bob,
    }
}

/// The tokens of the [`Lobby`]'s accounts.
pub const BOT: &str = "lobby-bot-token";
pub const OTHER_BOT: &str = "lobby-other-bot-token";
pub const ALICE: &str = "lobby-alice-token";
pub const BOB: &str = "lobby-bob-token";
pub const CAROL: &str = "lobby-carol-token";
/// The text of the lobby's `notes.txt`.
pub const NOTES: &str = "hello, world";

/// The accounts and servers of a [`Lobby`]: the bots dicebot and otherbot,
/// the users alice, bob and carol; the server `lobby` with `general`
/// (dicebot, alice, bob), `quiet` (bob), `closed` (nobody) and the file
/// `notes.txt`; the server `attic` with the file `plans.md` and no channel.
pub fn lobby_config() -> DevServerConfig {
    DevServerConfig::default()
        .bot(AccountConfig::new("dicebot", BOT))
        .bot(AccountConfig::new("otherbot", OTHER_BOT))
        .user(AccountConfig::new("alice", ALICE))
        .user(AccountConfig::new("bob", BOB))
        .user(AccountConfig::new("carol", CAROL))
        .server(
            ServerConfig::new("lobby")
                .channel(
                    ChannelConfig::new("general")
                        .member("dicebot")
                        .member("alice")
                        .member("bob"),
                )
                .channel(ChannelConfig::new("quiet").member("bob"))
                .channel(ChannelConfig::new("closed"))
                .file(FileConfig::new("notes.txt", NOTES)),
        )
        .server(ServerConfig::new("attic").file(FileConfig::new("plans.md", "# plans")))
}

/// A devserver of fixed accounts ([`lobby_config`]) for the raw clients,
/// with the ids of what it holds, and an HTTP client that never follows
/// redirects (as the REST lane's client must not).
pub struct Lobby {
    pub server: DevServer,
    /// The realtime URL.
    pub url: String,
    pub lobby: String,
    pub attic: String,
    pub general: String,
    pub quiet: String,
    pub closed: String,
    /// The file ids of `notes.txt` and `plans.md`.
    pub notes: String,
    pub plans: String,
    /// The account ids.
    pub bot: String,
    pub alice: String,
    pub bob: String,
    pub carol: String,
    pub http: reqwest::Client,
}

/// A [`Lobby`] as [`lobby_config`] makes it.
pub async fn lobby() -> Lobby {
    lobby_with(lobby_config()).await
}

/// A [`Lobby`] from `config`, which is [`lobby_config`] with changes.
pub async fn lobby_with(config: DevServerConfig) -> Lobby {
    let server = DevServer::start(config).await.unwrap();
    let lobby = server.server_id("lobby").unwrap();
    let attic = server.server_id("attic").unwrap();
    let account = |name: &str| server.account_id(name).unwrap();
    Lobby {
        url: server.ws_url(),
        general: server.channel_id(&lobby, "general").unwrap(),
        quiet: server.channel_id(&lobby, "quiet").unwrap(),
        closed: server.channel_id(&lobby, "closed").unwrap(),
        notes: server.files(&lobby)[0].id.clone(),
        plans: server.files(&attic)[0].id.clone(),
        bot: account("dicebot"),
        alice: account("alice"),
        bob: account("bob"),
        carol: account("carol"),
        http: http_client(),
        lobby,
        attic,
        server,
    }
}

/// An HTTP client that never follows redirects.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(redirect::Policy::none())
        .build()
        .unwrap()
}

/// The `code` of a reply.
pub fn code(reply: &Value) -> i64 {
    reply["code"].as_i64().unwrap()
}

/// Opcode 638 over `raw`: the reply.
pub async fn mint(raw: &mut Raw) -> Value {
    raw.request(OpCode::RestMint, json!({})).await
}

impl Lobby {
    /// `path` on the REST listener.
    pub fn rest(&self, path: &str) -> String {
        format!("{}{path}", self.server.rest_url())
    }

    pub async fn exchange(&self, body: &Value) -> reqwest::Response {
        self.http
            .post(self.rest("/auth/verify-session"))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// Mints over `raw` and exchanges: the `verification` value.
    pub async fn credential_over(&self, raw: &mut Raw) -> String {
        let minted = mint(raw).await;
        assert_eq!(minted["code"], 0, "{minted}");
        let response = self
            .exchange(&json!({"secret": minted["secret"], "row_id": minted["row_id"]}))
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.unwrap();
        body["verification"].as_str().unwrap().to_owned()
    }

    /// A credential of dicebot's.
    pub async fn credential(&self) -> String {
        let mut bot = logged_in(&self.url, BOT).await;
        self.credential_over(&mut bot).await
    }

    pub async fn get(&self, path: &str, verification: Option<&str>) -> reqwest::Response {
        let mut request = self.http.get(self.rest(path));
        if let Some(value) = verification {
            request = request.header("verification", value);
        }
        request.send().await.unwrap()
    }
}
