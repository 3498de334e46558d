//! The tour: raw WebSocket clients, written here frame by frame, take every
//! opcode the scenario did not use through its answers and its refusals,
//! so that `transcripts/tour.json` holds a recorded example of each reply
//! code the service produces today.

use std::collections::HashMap;

use botlane::crypto::{ChannelKey, IdentityKeyPair};
use botlane_devserver::{Denial, DevServer, DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::relay::{ws_relay, Dir, Payload, Recorder, STEP_TIMEOUT};
use crate::scenario::op;
use crate::transcript::{Header, Known};

/// An id no account or channel has; any UUID-shaped text will do.
const UNKNOWN_ID: &str = "00000000-0000-4000-8000-000000000000";

/// A raw client: frames written by hand, replies read back in order.
struct Raw {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Raw {
    async fn connect(url: &str) -> Result<Self, String> {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| format!("raw client: {e}"))?;
        Ok(Self { ws })
    }

    /// Sends `{"op":op,"d":d}` and returns the payload of the next frame with
    /// that opcode (pushes in between are read and dropped; the relay kept them).
    async fn request(&mut self, op: u64, d: &str) -> Result<Value, String> {
        self.ws
            .send(Message::text(format!(r#"{{"op":{op},"d":{d}}}"#)))
            .await
            .map_err(|e| format!("send op {op}: {e}"))?;
        self.next_of(op).await
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
/// plaintexts. Returns where the tour's events end: taken before its sockets
/// are dropped, so that what the service does on their way out (a close
/// frame that may or may not make it back in time) is never part of it.
pub(crate) async fn run(
    server: &DevServer,
    recorder: &Recorder,
    known: &mut Known,
    plaintexts: &mut HashMap<String, String>,
    general: &str,
    lobby: &str,
) -> Result<usize, String> {
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

    let url = server.ws_url();
    let bob_url = ws_relay(recorder, "bob", &url).await?;
    let rawbot_url = ws_relay(recorder, "rawbot", &url).await?;
    let mallory_url = ws_relay(recorder, "mallory", &url).await?;
    let token = &bob_account.token;

    // A human, before and during login.
    let mut bob = Raw::connect(&bob_url).await?;
    bob.expect(op::HEARTBEAT, "{}", -6).await?;
    let bad_key = format!(r#"{{"token":"{token}","public_key":"AAAA","client":"raw-client/1.0"}}"#);
    bob.expect(op::LOGIN, &bad_key, -5).await?;
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

    // A second bot: menus, joins and the mint's refusals.
    let mut rawbot = Raw::connect(&rawbot_url).await?;
    rawbot.login(&rawbot_account.token, &rawbot_key).await?;
    rawbot
        .expect(op::MENU, r#"{"menu":[["Bad Name","Roll dice",[]]]}"#, -5)
        .await?;
    rawbot.expect(op::MENU, r#"{"menu":"roll"}"#, -5).await?;
    rawbot
        .expect(op::MENU, r#"{"menu":[["ping","Check the bot",[]]]}"#, 0)
        .await?;
    rawbot
        .expect(op::JOIN, &format!(r#"{{"channel_id":"{quiet}"}}"#), -3)
        .await?;
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
    recorder
        .wait_until("mallory's close frame", start, |events| {
            events.iter().any(|e| {
                e.conn == "mallory"
                    && e.dir == Dir::ToClient
                    && matches!(e.payload, Payload::Close { .. })
            })
        })
        .await?;
    let end = recorder.len();
    drop((bob, rawbot, mallory));
    Ok(end)
}

pub(crate) fn header() -> Header<'static> {
    Header {
        about: "Every other opcode and every refusal the service produces today, from raw clients writing frames by hand.",
        scenario: &[
            "bob (a human) asks for a heartbeat before logging in, logs in with a bad public key, without 'client', properly, and a second time",
            "bob sends a heartbeat, fetches the emoji catalog, public keys (of the bot, of carol who never logged in, of no one), members, joins, a key share to a non-member and history",
            "bob sends in 'quiet': accepted; with an unknown reply_to; to a channel he is not in; while the channel denies sends (no permission, rate limited); with content over 64 KiB; with a sidecar over 2048 characters",
            "bob tries what only bots may do: publish a menu, mint a REST secret",
            "rawbot (a bot) logs in, publishes a bad menu, a menu that is not an array and a good one, tries to join, and mints: accepted, flag off, rate limited, server error",
            "mallory presents a token the service does not know: refused, and the socket is closed",
        ],
        connections: &[
            ("bob", "a human account, raw WebSocket client"),
            ("rawbot", "a bot account, raw WebSocket client"),
            ("mallory", "a raw WebSocket client with an unknown token"),
        ],
    }
}
