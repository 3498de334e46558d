//! Every reply code of the tables of `docs/protocol.md` that the service
//! produces today, each from the condition the table gives, over a raw
//! WebSocket on loopback. One block per (opcode, code) row, in the order of
//! the tables; the rows of revision 2 that the service does not produce yet
//! are listed at the end of this file.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use botlane_devserver::{
    AccountConfig, ChannelConfig, Denial, DevServer, DevServerConfig, ServerConfig,
    DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW, MAX_CONTENT_BYTES,
};
use botlane_proto::crypto::{ChannelKey, IdentityKeyPair};
use botlane_proto::OpCode;
use common::{End, Raw};
use serde_json::{json, Value};

const BOT: &str = "codes-bot-token";
const ALICE: &str = "codes-alice-token";
const BOB: &str = "codes-bob-token";
const CAROL: &str = "codes-carol-token";

/// dicebot, alice and bob in lobby/general; bob alone in lobby/quiet;
/// lobby/closed empty; carol in no channel and never logged in.
struct Fixture {
    server: DevServer,
    url: String,
    general: String,
    quiet: String,
    closed: String,
    bot: String,
    carol: String,
}

async fn fixture(rest_credentials: bool) -> Fixture {
    let config = DevServerConfig::default()
        .bot_rest_credentials(rest_credentials)
        .bot(AccountConfig::new("dicebot", BOT))
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
                .channel(ChannelConfig::new("closed")),
        );
    let server = DevServer::start(config).await.unwrap();
    let lobby = server.server_id("lobby").unwrap();
    Fixture {
        url: server.ws_url(),
        general: server.channel_id(&lobby, "general").unwrap(),
        quiet: server.channel_id(&lobby, "quiet").unwrap(),
        closed: server.channel_id(&lobby, "closed").unwrap(),
        bot: server.account_id("dicebot").unwrap(),
        carol: server.account_id("carol").unwrap(),
        server,
    }
}

/// A real identity public key (not a low-order point), distinct per seed.
fn key(seed: u8) -> String {
    IdentityKeyPair::from_secret_bytes([seed; 32])
        .public_key()
        .to_base64()
}

/// A well-formed sealed payload for `channel`.
fn sealed(channel: &str) -> String {
    ChannelKey::from_bytes([9; 32])
        .seal(b"hello", channel.as_bytes())
        .unwrap()
}

async fn session(f: &Fixture, token: &str, seed: u8) -> Raw {
    let mut raw = Raw::connect(&f.url).await;
    raw.login_with_key(token, &key(seed)).await;
    raw
}

/// Sends a request and asserts the code of its reply; returns the reply.
async fn expect(raw: &mut Raw, op: OpCode, d: Value, code: i64) -> Value {
    let reply = raw.request(op, d.clone()).await;
    assert_eq!(reply["code"], code, "{op:?} {d} got {reply}");
    if code != 0 {
        assert!(reply.get("reason").is_none_or(Value::is_string), "{reply}");
    }
    reply
}

#[tokio::test]
async fn every_request_before_login_is_unauthorized() {
    let f = fixture(true).await;
    let mut raw = Raw::connect(&f.url).await;
    for (op, d) in [
        (OpCode::Heartbeat, json!({})),
        (OpCode::MenuPublish, json!({"menu": []})),
        (
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed(&f.general)}),
        ),
        (OpCode::HistoryFetch, json!({"channel_id": f.general})),
        (
            OpCode::KeyShare,
            json!({"channel_id": f.general, "to": f.bot, "wrapped": {}}),
        ),
        (OpCode::PublicKeyFetch, json!({"user_id": f.bot})),
        (OpCode::ChannelJoin, json!({"channel_id": f.general})),
        (OpCode::ChannelMembers, json!({"channel_id": f.general})),
        (OpCode::FetchEmojis, json!({})),
        (OpCode::RestMint, json!({})),
    ] {
        let reply = expect(&mut raw, op, d, -6).await;
        assert_eq!(reply["reason"], "not logged in");
    }
}

#[tokio::test]
async fn login_codes() {
    let f = fixture(false).await;
    let mut raw = Raw::connect(&f.url).await;
    // -5: the payload is malformed (client missing).
    let reply = expect(
        &mut raw,
        OpCode::Login,
        json!({"token": ALICE, "public_key": key(1)}),
        -5,
    )
    .await;
    assert!(reply["reason"].as_str().unwrap().contains("client"));
    // -5: public_key not base64 of 32 bytes; the connection stays open.
    for bad in ["AAAA", "not base64", &key(1)[..43]] {
        expect(
            &mut raw,
            OpCode::Login,
            json!({"token": ALICE, "public_key": bad, "client": "t"}),
            -5,
        )
        .await;
    }
    // 0, then ready.
    let reply = expect(
        &mut raw,
        OpCode::Login,
        json!({"token": ALICE, "public_key": key(1), "client": "t"}),
        0,
    )
    .await;
    assert!(reply["user_id"].is_string());
    assert_eq!(raw.expect(OpCode::Ready).await["kind"], "user");
    // -5: a second login on a logged-in connection.
    let reply = expect(
        &mut raw,
        OpCode::Login,
        json!({"token": ALICE, "public_key": key(1), "client": "t"}),
        -5,
    )
    .await;
    assert_eq!(reply["reason"], "already logged in");
    // -6: an unknown token, then close 1008.
    let mut stranger = Raw::connect(&f.url).await;
    expect(
        &mut stranger,
        OpCode::Login,
        json!({"token": "no-such-token", "public_key": key(2), "client": "t"}),
        -6,
    )
    .await;
    assert_eq!(stranger.next().await, Err(End::Closed(Some(1008))));
}

#[tokio::test]
async fn ready_kinds_and_channels() {
    let f = fixture(false).await;
    let mut bot = Raw::connect(&f.url).await;
    let (_, ready) = bot.login_with_key(BOT, &key(3)).await;
    assert_eq!(ready["kind"], "bot");
    assert_eq!(ready["channels"].as_array().unwrap().len(), 1);
    let mut carol = Raw::connect(&f.url).await;
    let (_, ready) = carol.login_with_key(CAROL, &key(4)).await;
    assert_eq!(ready["kind"], "user");
    assert_eq!(ready["channels"], json!([]));
}

#[tokio::test]
async fn heartbeat_and_emoji_codes() {
    let f = fixture(false).await;
    let mut raw = session(&f, ALICE, 1).await;
    assert_eq!(
        expect(&mut raw, OpCode::Heartbeat, json!({}), 0).await,
        json!({"code": 0})
    );
    let reply = expect(&mut raw, OpCode::FetchEmojis, json!({}), 0).await;
    assert_eq!(reply["emojis"].as_array().unwrap().len(), 20);
}

#[tokio::test]
async fn menu_publish_codes() {
    let f = fixture(false).await;
    // -1: a human.
    let mut alice = session(&f, ALICE, 1).await;
    let menu = json!({"menu": [["roll", "Roll dice", []]]});
    expect(&mut alice, OpCode::MenuPublish, menu.clone(), -1).await;
    let mut bot = session(&f, BOT, 3).await;
    // -8: the compact JSON is over MAX_COMMANDS_PAYLOAD.
    let desc = "d".repeat(100);
    let options: Vec<Value> = (0..25)
        .map(|i| json!([format!("o{i}"), 1, desc, false, []]))
        .collect();
    let big: Vec<Value> = (0..6)
        .map(|i| json!([format!("c{i}"), desc, options]))
        .collect();
    expect(&mut bot, OpCode::MenuPublish, json!({"menu": big}), -8).await;
    // -5: not a canonical menu (a bad name, not an array, a malformed payload).
    for bad in [
        json!({"menu": [["Bad Name", "Roll dice", []]]}),
        json!({"menu": "roll"}),
        json!({"menu": [["roll", "Roll", [["count", 2, "How many", "yes", []]]]]}),
        json!({}),
    ] {
        expect(&mut bot, OpCode::MenuPublish, bad, -5).await;
    }
    // 0: stored.
    expect(&mut bot, OpCode::MenuPublish, menu, 0).await;
    assert!(f.server.menu(&f.bot).unwrap().command("roll").is_some());
}

#[tokio::test]
async fn send_codes() {
    let f = fixture(false).await;
    let mut bob = session(&f, BOB, 5).await;
    let send = |channel: &str, extra: Value| {
        let mut d = json!({"channel_id": channel, "content": sealed(channel)});
        for (k, v) in extra.as_object().unwrap() {
            d[k] = v.clone();
        }
        d
    };
    // -5: malformed payload.
    expect(&mut bob, OpCode::Send, json!({"channel_id": f.quiet}), -5).await;
    // -8: content over MAX_CONTENT_BYTES.
    let content = "A".repeat(MAX_CONTENT_BYTES + 4);
    expect(
        &mut bob,
        OpCode::Send,
        json!({"channel_id": f.quiet, "content": content}),
        -8,
    )
    .await;
    // -8: a sidecar over MAX_COMMAND_WIRE.
    let command = "A".repeat(botlane::MAX_COMMAND_WIRE + 4);
    expect(
        &mut bob,
        OpCode::Send,
        send(&f.quiet, json!({"command": command})),
        -8,
    )
    .await;
    // -4: no such channel; not a member.
    expect(
        &mut bob,
        OpCode::Send,
        send("no-such-channel", json!({})),
        -4,
    )
    .await;
    expect(&mut bob, OpCode::Send, send(&f.closed, json!({})), -4).await;
    // -3, -4, -9: the channel's denial.
    for (denial, code) in [
        (Denial::NoPermission, -3),
        (Denial::UnknownChannel, -4),
        (Denial::RateLimited, -9),
    ] {
        f.server.deny_sends(&f.quiet, Some(denial)).unwrap();
        expect(&mut bob, OpCode::Send, send(&f.quiet, json!({})), code).await;
    }
    f.server.deny_sends(&f.quiet, None).unwrap();
    // -5: reply_to names no message of this channel.
    expect(
        &mut bob,
        OpCode::Send,
        send(&f.quiet, json!({"reply_to": "no-such-message"})),
        -5,
    )
    .await;
    // 0: stored, with the id; nothing refused was stored.
    let reply = expect(&mut bob, OpCode::Send, send(&f.quiet, json!({})), 0).await;
    let stored = f.server.messages(&f.quiet);
    assert_eq!(stored.len(), 1);
    assert_eq!(reply["message_id"], stored[0].id.as_str());
    // A following request of the same opcode after a -5 gets its own reply.
    expect(&mut bob, OpCode::Send, json!({"content": 1}), -5).await;
    let reply = expect(&mut bob, OpCode::Send, send(&f.quiet, json!({})), 0).await;
    assert_eq!(
        reply["message_id"],
        f.server.messages(&f.quiet)[1].id.as_str()
    );
}

#[tokio::test]
async fn history_codes() {
    let f = fixture(false).await;
    let mut bob = session(&f, BOB, 5).await;
    expect(&mut bob, OpCode::HistoryFetch, json!({"channel_id": 7}), -5).await;
    expect(
        &mut bob,
        OpCode::HistoryFetch,
        json!({"channel_id": f.closed}),
        -4,
    )
    .await;
    let reply = expect(
        &mut bob,
        OpCode::HistoryFetch,
        json!({"channel_id": f.quiet, "limit": 500}),
        0,
    )
    .await;
    assert_eq!(reply["messages"], json!([]));
}

#[tokio::test]
async fn key_codes() {
    let f = fixture(false).await;
    let mut bot = session(&f, BOT, 3).await;
    let mut bob = session(&f, BOB, 5).await;
    let wrapped = json!({"ephemeral": key(7), "ciphertext": "x"});
    // 51: -5 malformed; -4 the sender is not a member; -4 the recipient is not.
    expect(
        &mut bob,
        OpCode::KeyShare,
        json!({"channel_id": f.general, "to": f.bot}),
        -5,
    )
    .await;
    expect(
        &mut bob,
        OpCode::KeyShare,
        json!({"channel_id": f.closed, "to": f.bot, "wrapped": wrapped}),
        -4,
    )
    .await;
    expect(
        &mut bob,
        OpCode::KeyShare,
        json!({"channel_id": f.general, "to": f.carol, "wrapped": wrapped}),
        -4,
    )
    .await;
    // 51: 0, and the recipient gets op 50.
    expect(
        &mut bob,
        OpCode::KeyShare,
        json!({"channel_id": f.general, "to": f.bot, "wrapped": wrapped}),
        0,
    )
    .await;
    assert_eq!(bot.expect(OpCode::ChannelKey).await["wrapped"], wrapped);
    // 52: -5 malformed; -5 unknown account; 0 with a key; 0 without (never logged in).
    expect(&mut bob, OpCode::PublicKeyFetch, json!([]), -5).await;
    expect(
        &mut bob,
        OpCode::PublicKeyFetch,
        json!({"user_id": "no-such-account"}),
        -5,
    )
    .await;
    let reply = expect(
        &mut bob,
        OpCode::PublicKeyFetch,
        json!({"user_id": f.bot}),
        0,
    )
    .await;
    assert_eq!(reply["public_key"], key(3).as_str());
    let reply = expect(
        &mut bob,
        OpCode::PublicKeyFetch,
        json!({"user_id": f.carol}),
        0,
    )
    .await;
    assert!(reply.get("public_key").is_none(), "{reply}");
}

#[tokio::test]
async fn channel_codes() {
    let f = fixture(false).await;
    let mut bot = session(&f, BOT, 3).await;
    let mut alice = session(&f, ALICE, 1).await;
    // 60: -5 malformed; -3 a bot; -4 no such channel; 0 joined; 0 already a member.
    expect(&mut alice, OpCode::ChannelJoin, json!("general"), -5).await;
    expect(
        &mut bot,
        OpCode::ChannelJoin,
        json!({"channel_id": f.quiet}),
        -3,
    )
    .await;
    expect(
        &mut alice,
        OpCode::ChannelJoin,
        json!({"channel_id": "no-such-channel"}),
        -4,
    )
    .await;
    expect(
        &mut alice,
        OpCode::ChannelJoin,
        json!({"channel_id": f.quiet}),
        0,
    )
    .await;
    expect(
        &mut alice,
        OpCode::ChannelJoin,
        json!({"channel_id": f.quiet}),
        0,
    )
    .await;
    // 61: -5 malformed; -4 not a member; 0 the members in the order they joined.
    expect(&mut alice, OpCode::ChannelMembers, json!({}), -5).await;
    expect(
        &mut alice,
        OpCode::ChannelMembers,
        json!({"channel_id": f.closed}),
        -4,
    )
    .await;
    let reply = expect(
        &mut alice,
        OpCode::ChannelMembers,
        json!({"channel_id": f.quiet}),
        0,
    )
    .await;
    let alice_id = f.server.account_id("alice").unwrap();
    let bob_id = f.server.account_id("bob").unwrap();
    assert_eq!(reply["members"], json!([bob_id, alice_id]));
}

#[tokio::test]
async fn rest_mint_codes() {
    let f = fixture(false).await;
    let mut bot = session(&f, BOT, 3).await;
    let mut alice = session(&f, ALICE, 1).await;
    // -7: the flag is off, for everyone.
    assert_eq!(
        expect(&mut bot, OpCode::RestMint, json!({}), -7).await,
        json!({"code": -7})
    );
    expect(&mut alice, OpCode::RestMint, json!({}), -7).await;
    f.server.set_rest_credentials(true);
    // -1: a human session.
    expect(&mut alice, OpCode::RestMint, json!({}), -1).await;
    // -9: rate limited.
    f.server.set_mint_rate_limit(0, Duration::from_secs(60));
    expect(&mut bot, OpCode::RestMint, json!({}), -9).await;
    f.server
        .set_mint_rate_limit(DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW);
    // -2: the service failed.
    f.server.fail_next_mints(1);
    expect(&mut bot, OpCode::RestMint, json!({}), -2).await;
    // 0: minted, with every field.
    let reply = expect(&mut bot, OpCode::RestMint, json!({}), 0).await;
    assert_eq!(reply["secret"].as_str().unwrap().len(), 43);
    assert!(reply["row_id"].is_string());
    assert_eq!(reply["bot_id"], f.bot.as_str());
    assert_eq!(f.server.mint_count(), 1);
}

#[tokio::test]
async fn close_codes_of_revocation_and_shutdown() {
    let f = fixture(false).await;
    let mut bot = session(&f, BOT, 3).await;
    let mut alice = session(&f, ALICE, 1).await;
    f.server.revoke_bot(&f.bot).unwrap();
    assert_eq!(bot.next().await, Err(End::Closed(Some(1008))));
    f.server.shutdown().await;
    assert_eq!(alice.next().await, Err(End::Closed(Some(1001))));
}

// Rows of docs/protocol.md (revision 2) that the service does not produce
// yet; they are being implemented with the service's bad-input handling
// and the membership pushes, and are tested there:
// - op 10 -5 for a low-order public key (all zeros);
// - op 12 (and every request opcode) -5 for `d` missing or not an object;
// - op 20 -5 for commands not sorted by name;
// - op 30 -5 for content or command that cannot be a sealed payload;
// - -5 "unknown opcode N" for an unknown opcode or a push opcode sent by a client;
// - close 1007 (bad envelope), 1003 (binary), 1009 (over 1 MiB),
//   1008 (no login in time; outbound queue full), HTTP 503 (pre-login pool full);
// - pushes 34 channel_added and 35 channel_removed.
