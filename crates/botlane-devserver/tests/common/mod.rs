//! A raw WebSocket client for the tests: frames in, frames out, nothing else.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::time::Duration;

use botlane_devserver::{DevServer, DevServerConfig, Limits, TestUser};
use botlane_proto::OpCode;
use futures_util::{SinkExt, StreamExt};
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
