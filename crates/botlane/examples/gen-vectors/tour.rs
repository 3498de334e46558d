//! The tour: raw WebSocket clients, written here frame by frame, take every
//! opcode the scenario did not use through its answers and its refusals,
//! so that `transcripts/tour.json` holds a recorded example of each reply
//! code the service produces today.

use std::collections::HashMap;

use botlane::crypto::{ChannelKey, IdentityKeyPair};
use botlane_devserver::{
    Denial, DevServer, DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW, MAX_FRAME_BYTES,
};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::relay::{op, ws_relay, Dir, Payload, Recorder, STEP_TIMEOUT};
use crate::transcript::{Header, Known};

/// An id no account or channel has; any UUID-shaped text will do.
const UNKNOWN_ID: &str = "00000000-0000-4000-8000-000000000000";

/// Canonical base64 of 3 bytes: too short to be a sealed payload (a
/// nonce and a tag are 28 bytes).
const NOT_SEALED: &str = "AAAA";

/// An opcode the protocol does not have.
const UNKNOWN_OP: u64 = 99;

/// The all-zero X25519 public key: a low-order point.
const ZERO_KEY: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

/// A raw client: frames written by hand, replies read back in order.
pub(crate) struct Raw {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Raw {
    async fn connect(url: &str) -> Result<Self, String> {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| format!("raw client: {e}"))?;
        Ok(Self { ws })
    }

    /// Sends one text frame as it is, sound or not.
    async fn send_text(&mut self, text: &str) -> Result<(), String> {
        self.ws
            .send(Message::text(text.to_owned()))
            .await
            .map_err(|e| format!("send a text frame: {e}"))
    }

    /// Sends `{"op":op,"d":d}` and returns the payload of the next frame with
    /// that opcode (pushes in between are read and dropped; the relay kept them).
    async fn request(&mut self, op: u64, d: &str) -> Result<Value, String> {
        self.send_text(&format!(r#"{{"op":{op},"d":{d}}}"#)).await?;
        self.next_of(op).await
    }

    /// Sends `text`, a frame of opcode `op` however written, and checks the
    /// code of the reply on `op`.
    async fn expect_raw(&mut self, op: u64, text: &str, code: i64) -> Result<Value, String> {
        self.send_text(text).await?;
        let reply = self.next_of(op).await?;
        if reply["code"].as_i64() == Some(code) {
            Ok(reply)
        } else {
            Err(format!("{text}: expected code {code}, got {reply}"))
        }
    }

    async fn next_of(&mut self, op: u64) -> Result<Value, String> {
        loop {
            let message = tokio::time::timeout(STEP_TIMEOUT, self.ws.next())
                .await
                .map_err(|_| format!("no reply to op {op}"))?;
            match message {
                Some(Ok(Message::Text(text))) => {
                    let frame: Value =
                        serde_json::from_str(text.as_str()).map_err(|e| e.to_string())?;
                    if frame["op"].as_u64() == Some(op) {
                        return Ok(frame["d"].clone());
                    }
                }
                Some(Ok(_)) => {}
                other => return Err(format!("the socket ended waiting for op {op}: {other:?}")),
            }
        }
    }

    /// A request whose reply must carry `code`.
    async fn expect(&mut self, op: u64, d: &str, code: i64) -> Result<Value, String> {
        let reply = self.request(op, d).await?;
        if reply["code"].as_i64() == Some(code) {
            Ok(reply)
        } else {
            Err(format!("op {op} {d}: expected code {code}, got {reply}"))
        }
    }

    async fn login(&mut self, token: &str, key: &str) -> Result<(), String> {
        let d = format!(r#"{{"token":"{token}","public_key":"{key}","client":"raw-client/1.0"}}"#);
        self.expect(op::LOGIN, &d, 0).await?;
        self.next_of(op::READY).await.map(drop)
    }
}

/// Runs the tour on the scenario's service; registers its values and
/// plaintexts. Returns bob's connection, still open, to see the shutdown.
pub(crate) async fn run(
    server: &DevServer,
    recorder: &Recorder,
    known: &mut Known,
    plaintexts: &mut HashMap<String, String>,
    general: &str,
    lobby: &str,
) -> Result<Raw, String> {
    let fail = |what: &str| {
        let what = what.to_owned();
        move |e: botlane_devserver::DevServerError| format!("{what}: {e}")
    };
    let bob_account = server.add_user("bob");
    let carol = server.add_user("carol");
    let rawbot_account = server.add_bot("rawbot");
    let quiet = server
        .create_channel(lobby, "quiet")
        .map_err(fail("quiet"))?;
    let closed = server
        .create_channel(lobby, "closed")
        .map_err(fail("closed"))?;
    server
        .add_member(general, &bob_account.id)
        .map_err(fail("bob"))?;
    let bob_key = IdentityKeyPair::from_secret_bytes([0x42; 32])
        .public_key()
        .to_base64();
    let rawbot_key = IdentityKeyPair::from_secret_bytes([0x43; 32])
        .public_key()
        .to_base64();
    known.add(&bob_account.token, "bob-token", "bob's token");
    known.add(
        &rawbot_account.token,
        "rawbot-token",
        "the token of a second bot, 'rawbot'",
    );
    known.add(&bob_account.id, "bob-id", "bob's account id (a UUID v4)");
    known.add(
        &carol.id,
        "carol-id",
        "carol's account id (a UUID v4); carol never logs in",
    );
    known.add(
        &rawbot_account.id,
        "rawbot-id",
        "rawbot's account id (a UUID v4)",
    );
    known.add(
        &quiet,
        "quiet-id",
        "the id of the channel \"quiet\", which bob joins during the tour (a UUID v4)",
    );
    known.add(
        &closed,
        "closed-id",
        "the id of the channel \"closed\", which has no members (a UUID v4)",
    );
    known.add(
        UNKNOWN_ID,
        "unknown-id",
        "an id that names no account, channel or message",
    );
    known.add(
        &bob_key,
        "bob-public-key",
        "bob's X25519 identity public key (standard base64, 32 bytes)",
    );
    known.add(
        &rawbot_key,
        "rawbot-public-key",
        "rawbot's X25519 identity public key (standard base64, 32 bytes)",
    );

    let dave = server.add_user("dave");
    let dave_key = IdentityKeyPair::from_secret_bytes([0x44; 32])
        .public_key()
        .to_base64();
    known.add(&dave.token, "dave-token", "dave's token");
    known.add(&dave.id, "dave-id", "dave's account id (a UUID v4)");
    known.add(
        &dave_key,
        "dave-public-key",
        "dave's X25519 identity public key (standard base64, 32 bytes)",
    );

    let url = server.ws_url();
    let relay = |conn: &'static str| ws_relay(recorder, conn, &url);
    let bob_url = relay("bob").await?;
    let rawbot_url = relay("rawbot").await?;
    let mallory_url = relay("mallory").await?;
    let token = &bob_account.token;

    // A human, before and during login.
    let mut bob = Raw::connect(&bob_url).await?;
    bob.expect(op::HEARTBEAT, "{}", -6).await?;
    bob.expect(UNKNOWN_OP, "{}", -5).await?;
    let bad_key = format!(r#"{{"token":"{token}","public_key":"AAAA","client":"raw-client/1.0"}}"#);
    bob.expect(op::LOGIN, &bad_key, -5).await?;
    let zero_key =
        format!(r#"{{"token":"{token}","public_key":"{ZERO_KEY}","client":"raw-client/1.0"}}"#);
    bob.expect(op::LOGIN, &zero_key, -5).await?;
    let no_client = format!(r#"{{"token":"{token}","public_key":"{bob_key}"}}"#);
    bob.expect(op::LOGIN, &no_client, -5).await?;
    bob.login(token, &bob_key).await?;
    let again =
        format!(r#"{{"token":"{token}","public_key":"{bob_key}","client":"raw-client/1.0"}}"#);
    bob.expect(op::LOGIN, &again, -5).await?;

    // Requests every session may make.
    bob.expect(op::HEARTBEAT, "{}", 0).await?;
    bob.expect(op::EMOJIS, "{}", 0).await?;
    let bot_id = server.account_id("dicebot").ok_or("no dicebot")?;
    bob.expect(op::PUBLIC_KEY, &format!(r#"{{"user_id":"{bot_id}"}}"#), 0)
        .await?;
    bob.expect(
        op::PUBLIC_KEY,
        &format!(r#"{{"user_id":"{}"}}"#, carol.id),
        0,
    )
    .await?;
    bob.expect(
        op::PUBLIC_KEY,
        &format!(r#"{{"user_id":"{UNKNOWN_ID}"}}"#),
        -5,
    )
    .await?;
    bob.expect(op::MEMBERS, &format!(r#"{{"channel_id":"{general}"}}"#), 0)
        .await?;
    bob.expect(op::MEMBERS, &format!(r#"{{"channel_id":"{closed}"}}"#), -4)
        .await?;
    bob.expect(op::JOIN, &format!(r#"{{"channel_id":"{quiet}"}}"#), 0)
        .await?;
    bob.expect(op::JOIN, &format!(r#"{{"channel_id":"{UNKNOWN_ID}"}}"#), -4)
        .await?;
    let wrapped = r#"{"ephemeral":"hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=","ciphertext":"wMHCw8TFxsfIycrLAI49MdZ6QBYsOpqNpLB7wpNmpL5OIFhXgYo58IteRH1D1gopsSBe4QjWZssb0Ngq"}"#;
    let share = format!(
        r#"{{"channel_id":"{general}","to":"{}","wrapped":{wrapped}}}"#,
        carol.id
    );
    bob.expect(op::KEY_SHARE, &share, -4).await?;
    bob.expect(
        op::HISTORY,
        &format!(r#"{{"channel_id":"{general}","limit":2}}"#),
        0,
    )
    .await?;
    bob.expect(op::HISTORY, &format!(r#"{{"channel_id":"{closed}"}}"#), -4)
        .await?;

    // Bad input answered on its opcode: an unknown opcode, a push opcode
    // sent by a client, payloads missing, of the wrong type or repeating a
    // key; a malformed request followed at once by a good one of the same
    // opcode gets its -5, and the good one its own reply.
    bob.expect(UNKNOWN_OP, "{}", -5).await?;
    bob.expect(op::MESSAGE, "{}", -5).await?;
    bob.send_text(r#"{"op":12}"#).await?;
    bob.send_text(r#"{"op":12,"d":{}}"#).await?;
    let (refused, served) = (
        bob.next_of(op::HEARTBEAT).await?,
        bob.next_of(op::HEARTBEAT).await?,
    );
    if refused["code"] != -5 || served["code"] != 0 {
        return Err(format!("a bad then a good heartbeat: {refused}, {served}"));
    }
    bob.expect_raw(op::HEARTBEAT, r#"{"op":12,"d":[]}"#, -5)
        .await?;
    bob.expect(op::HISTORY, r#"{"channel_id":7}"#, -5).await?;
    let twice = format!(r#"{{"op":61,"d":{{"channel_id":"{general}","channel_id":"{general}"}}}}"#);
    bob.expect_raw(op::MEMBERS, &twice, -5).await?;

    // Membership pushes to an online account: added, removed.
    let annex = server
        .create_channel(lobby, "annex")
        .map_err(fail("annex"))?;
    known.add(
        &annex,
        "annex-id",
        "the id of the channel \"annex\", which bob is added to and removed from (a UUID v4)",
    );
    server
        .add_member(&annex, &bob_account.id)
        .map_err(fail("add bob"))?;
    bob.next_of(op::CHANNEL_ADDED).await?;
    server
        .remove_member(&annex, &bob_account.id)
        .map_err(fail("remove bob"))?;
    bob.next_of(op::CHANNEL_REMOVED).await?;

    // Sends: accepted, then each refusal.
    let key = ChannelKey::from_bytes([0x55; 32]);
    let mut sealed = |text: &str| -> Result<String, String> {
        let wire = key
            .seal(text.as_bytes(), quiet.as_bytes())
            .map_err(|e| e.to_string())?;
        plaintexts.insert(wire.clone(), text.to_owned());
        Ok(wire)
    };
    let hello = sealed("hello, quiet")?;
    bob.expect(
        op::SEND,
        &format!(r#"{{"channel_id":"{quiet}","content":"{hello}"}}"#),
        0,
    )
    .await?;
    let orphan = sealed("a reply to nothing")?;
    let send =
        format!(r#"{{"channel_id":"{quiet}","content":"{orphan}","reply_to":"{UNKNOWN_ID}"}}"#);
    bob.expect(op::SEND, &send, -5).await?;
    known.keep(NOT_SEALED);
    bob.expect(
        op::SEND,
        &format!(r#"{{"channel_id":"{quiet}","content":"{NOT_SEALED}"}}"#),
        -5,
    )
    .await?;
    let lost = sealed("lost")?;
    bob.expect(
        op::SEND,
        &format!(r#"{{"channel_id":"{closed}","content":"{lost}"}}"#),
        -4,
    )
    .await?;
    for (denial, code) in [(Denial::NoPermission, -3), (Denial::RateLimited, -9)] {
        server
            .deny_sends(&quiet, Some(denial))
            .map_err(fail("deny"))?;
        let denied = sealed("denied")?;
        let send = format!(r#"{{"channel_id":"{quiet}","content":"{denied}"}}"#);
        bob.expect(op::SEND, &send, code).await?;
    }
    server.deny_sends(&quiet, None).map_err(fail("deny"))?;
    let oversized = "A".repeat(64 * 1024 + 4);
    known.add(
        &oversized,
        "oversized-content",
        "65540 characters: more than the 64 KiB a content may have",
    );
    bob.expect(
        op::SEND,
        &format!(r#"{{"channel_id":"{quiet}","content":"{oversized}"}}"#),
        -8,
    )
    .await?;
    let long_sidecar = "A".repeat(2052);
    known.add(
        &long_sidecar,
        "oversized-sidecar",
        "2052 characters: more than MAX_COMMAND_WIRE (2048)",
    );
    let content = sealed("/roll 2")?;
    let send =
        format!(r#"{{"channel_id":"{quiet}","content":"{content}","command":"{long_sidecar}"}}"#);
    bob.expect(op::SEND, &send, -8).await?;

    // What only bots may do.
    bob.expect(op::MENU, r#"{"menu":[["roll","Roll dice",[]]]}"#, -1)
        .await?;
    bob.expect(op::REST_MINT, "{}", -1).await?;

    // A second bot: menus, joins, an injected failure and the mint's refusals.
    let mut rawbot = Raw::connect(&rawbot_url).await?;
    rawbot.login(&rawbot_account.token, &rawbot_key).await?;
    rawbot
        .expect(op::MENU, r#"{"menu":[["Bad Name","Roll dice",[]]]}"#, -5)
        .await?;
    rawbot.expect(op::MENU, r#"{"menu":"roll"}"#, -5).await?;
    rawbot
        .expect(
            op::MENU,
            r#"{"menu":[["roll","Roll dice",[]],["ping","Check the bot",[]]]}"#,
            -5,
        )
        .await?;
    rawbot
        .expect(op::MENU, r#"{"menu":[["ping","Check the bot",[]]]}"#, 0)
        .await?;
    rawbot
        .expect(op::JOIN, &format!(r#"{{"channel_id":"{quiet}"}}"#), -3)
        .await?;
    server
        .fail_next_requests(12, 1)
        .map_err(fail("fail a heartbeat"))?;
    rawbot.expect(op::HEARTBEAT, "{}", -2).await?;
    rawbot.expect(op::HEARTBEAT, "{}", 0).await?;
    rawbot.expect(op::REST_MINT, "{}", 0).await?;
    server.set_rest_credentials(false);
    rawbot.expect(op::REST_MINT, "{}", -7).await?;
    server.set_rest_credentials(true);
    server.set_mint_rate_limit(0, DEFAULT_MINT_WINDOW);
    rawbot.expect(op::REST_MINT, "{}", -9).await?;
    server.set_mint_rate_limit(DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW);
    server.fail_next_mints(1);
    rawbot.expect(op::REST_MINT, "{}", -2).await?;

    // A token the service does not know: refused, and the socket closed.
    let start = recorder.len();
    let mut mallory = Raw::connect(&mallory_url).await?;
    let d = r#"{"token":"no-such-token","public_key":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","client":"raw-client/1.0"}"#;
    mallory.expect(op::LOGIN, d, -6).await?;
    closed_with(recorder, start, "mallory").await?;

    // A frame whose envelope cannot be read: the reply before it comes, the
    // connection closes with 1007, the request after it is never answered.
    let start = recorder.len();
    let mut garbled = Raw::connect(&relay("garbled").await?).await?;
    garbled.login(&dave.token, &dave_key).await?;
    garbled.send_text(r#"{"op":12,"d":{}}"#).await?;
    garbled.send_text(r#"{"op":12,"d":{}"#).await?;
    garbled.send_text(r#"{"op":12,"d":{}}"#).await?;
    recorder
        .wait_frames(start, "garbled", Dir::ToService, op::HEARTBEAT, 2)
        .await?;
    closed_with(recorder, start, "garbled").await?;

    // A binary frame: close 1003.
    let start = recorder.len();
    let mut binary = Raw::connect(&relay("binary").await?).await?;
    binary
        .ws
        .send(Message::binary(vec![1, 2, 3]))
        .await
        .map_err(|e| format!("send a binary frame: {e}"))?;
    closed_with(recorder, start, "binary").await?;

    // Exactly 1 MiB is served; one byte more closes with 1009.
    let start = recorder.len();
    let mut oversize = Raw::connect(&relay("oversize").await?).await?;
    oversize.login(&dave.token, &dave_key).await?;
    let (head, tail) = (r#"{"op":12,"d":{"pad":""#, r#""}}"#);
    let pad = "x".repeat(MAX_FRAME_BYTES - head.len() - tail.len());
    known.add(
        &pad,
        "padding-to-the-limit",
        "1048556 times 'x': the frame is exactly 1048576 bytes (MAX_FRAME_BYTES)",
    );
    let over = format!("{pad}x");
    known.add(
        &over,
        "padding-over-the-limit",
        "1048557 times 'x': the frame is 1048577 bytes, one over MAX_FRAME_BYTES",
    );
    oversize
        .expect_raw(op::HEARTBEAT, &format!("{head}{pad}{tail}"), 0)
        .await?;
    oversize.send_text(&format!("{head}{over}{tail}")).await?;
    closed_with(recorder, start, "oversize").await?;

    // No login within the pre-login timeout: close 1008.
    let start = recorder.len();
    let silent = Raw::connect(&relay("silent").await?).await?;
    closed_with(recorder, start, "silent").await?;

    // A revoked bot: its connection closed with 1008.
    let start = recorder.len();
    server
        .revoke_bot(&rawbot_account.id)
        .map_err(fail("revoke rawbot"))?;
    closed_with(recorder, start, "rawbot").await?;
    drop((rawbot, mallory, garbled, binary, oversize, silent));
    Ok(bob)
}

/// Waits until the service's close frame on `conn` is recorded (the socket
/// is not read, so the client never answers it).
pub(crate) async fn closed_with(
    recorder: &Recorder,
    start: usize,
    conn: &str,
) -> Result<(), String> {
    recorder
        .wait_until(&format!("{conn}'s close frame"), start, |events| {
            events.iter().any(|e| {
                e.conn == conn
                    && e.dir == Dir::ToClient
                    && matches!(e.payload, Payload::Close { .. })
            })
        })
        .await
}

pub(crate) fn header() -> Header<'static> {
    Header {
        about: "Every other opcode, every refusal and every answer to bad input the service produces, from raw clients writing frames by hand; then the service shuts down.",
        scenario: &[
            "bob (a human) asks for a heartbeat and sends an unknown opcode before logging in, logs in with a bad public key, with a low-order (all-zero) one, without 'client', properly, and a second time",
            "bob sends a heartbeat, fetches the emoji catalog, public keys (of the bot, of carol who never logged in, of no one), members, joins, a key share to a non-member and history",
            "bob sends an unknown opcode and a push opcode (32); a heartbeat without d immediately followed by a good one; a heartbeat whose d is an array; a history request whose channel_id is a number; a members request with a key twice (kept as text)",
            "the service adds bob to the channel 'annex' (op 34) and removes him (op 35)",
            "bob sends in 'quiet': accepted; with an unknown reply_to; with content that cannot be a sealed payload; to a channel he is not in; while the channel denies sends (no permission, rate limited); with content over 64 KiB; with a sidecar over 2048 characters",
            "bob tries what only bots may do: publish a menu, mint a REST secret",
            "rawbot (a bot) logs in, publishes a bad menu, a menu that is not an array, a menu not sorted by name and a good one, tries to join; its next heartbeat fails (DevServer::fail_next_requests) and the one after succeeds; it mints: accepted, flag off, rate limited, server error",
            "mallory presents a token the service does not know: refused, and the socket is closed",
            "dave, logged in on 'garbled', sends a heartbeat, a frame that is not JSON and another heartbeat without waiting: the first is answered, then the connection closes with 1007",
            "'binary' sends a binary frame: close 1003; dave, logged in on 'oversize', sends a frame of exactly 1 MiB (answered) and one of 1 MiB + 1 byte: close 1009; 'silent' never logs in: close 1008 after the pre-login timeout (3 s here)",
            "rawbot is revoked: close 1008; the service shuts down: bob's connection closes with 1001",
        ],
        connections: &[
            ("bob", "a human account, raw WebSocket client"),
            ("rawbot", "a bot account, raw WebSocket client"),
            ("mallory", "a raw WebSocket client with an unknown token"),
            ("garbled", "dave, a human account, raw WebSocket client"),
            ("binary", "a raw WebSocket client that never logs in"),
            ("oversize", "dave again, on a second raw WebSocket connection"),
            ("silent", "a raw WebSocket client that never sends anything"),
        ],
    }
}

/// Shuts the service down while bob is connected: bob's close 1001 ends the tour.
pub(crate) async fn shut_down(
    server: DevServer,
    recorder: &Recorder,
    bob: Raw,
) -> Result<(), String> {
    let start = recorder.len();
    let ((), closed) = tokio::join!(server.shutdown(), async {
        let closed = closed_with(recorder, start, "bob").await;
        // Answering nothing: the service gives up on the handshake after its
        // flush timeout, or at once when the socket goes.
        drop(bob);
        closed
    });
    closed
}
