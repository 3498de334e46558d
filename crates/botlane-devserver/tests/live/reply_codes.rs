//! Every reply code of the tables of `docs/protocol.md`, each from the
//! condition the table gives, over a raw WebSocket on loopback. One block
//! per (opcode, code) row, in the order of the tables. Rows produced by a
//! test elsewhere (`bad_input.rs`, `hostile.rs`, `membership.rs`,
//! `admin.rs`) name it in the table's test column, and
//! [`every_table_row_names_a_test`] keeps every such name pointing at a
//! test that exists.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use botlane_devserver::{Denial, DEFAULT_MINT_LIMIT, DEFAULT_MINT_WINDOW, MAX_CONTENT_BYTES};
use botlane_proto::crypto::{ChannelKey, IdentityKeyPair};
use botlane_proto::OpCode;
use common::{lobby_config, lobby_with, End, Lobby, Raw, ALICE, BOB, BOT, CAROL};
use serde_json::{json, Value};

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

/// The lobby (`common::lobby_config`; carol in no channel and never
/// logged in), the bots' REST flag as given.
async fn fixture(rest_credentials: bool) -> Lobby {
    lobby_with(lobby_config().bot_rest_credentials(rest_credentials)).await
}

async fn session(f: &Lobby, token: &str, seed: u8) -> Raw {
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
    // -5: public_key not base64 of 32 bytes, or a low-order point; the
    // connection stays open.
    let zero = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    for bad in ["AAAA", "not base64", &key(1)[..43], zero] {
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
    assert_eq!(stranger.close_reason.as_deref(), Some("unauthorized"));
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
        // Not in canonical order: commands sorted by name.
        json!({"menu": [["roll", "Roll dice", []], ["ping", "Ping", []]]}),
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
    assert_eq!(bot.close_reason.as_deref(), Some("token revoked"));
    // The revoked token: -6, then closed like an unknown one.
    let mut again = Raw::connect(&f.url).await;
    let d = json!({"token": BOT, "public_key": key(3), "client": "t"});
    expect(&mut again, OpCode::Login, d, -6).await;
    assert_eq!(again.next().await, Err(End::Closed(Some(1008))));
    f.server.shutdown().await;
    assert_eq!(alice.next().await, Err(End::Closed(Some(1001))));
    assert_eq!(alice.close_reason.as_deref(), Some("service shutting down"));
}

#[tokio::test]
async fn unknown_and_push_opcodes_get_minus_5_on_their_own_opcode() {
    let f = fixture(false).await;
    let unknown = |op: u16| json!({"code": -5, "reason": format!("unknown opcode {op}")});
    // Before login: answered as unknown, not as unauthorized.
    let mut raw = Raw::connect(&f.url).await;
    for op in [0, 99, 4242, 65535, 11, 32] {
        raw.send_text(json!({"op": op, "d": {}}).to_string()).await;
        assert_eq!(raw.next().await, Ok((op, unknown(op))));
    }
    // After login: every push opcode (as botlane-proto lists them) and
    // unknown ones, with or without d; the connection stays usable.
    raw.login(ALICE).await;
    let pushes = (0..=u16::MAX)
        .filter_map(OpCode::from)
        .filter(|op| op.is_push())
        .map(OpCode::code);
    for op in pushes.chain([1, 13, 639, 65535]) {
        raw.send_text(json!({"op": op}).to_string()).await;
        assert_eq!(raw.next().await, Ok((op, unknown(op))));
    }
    expect(&mut raw, OpCode::Heartbeat, json!({}), 0).await;
}

/// The other side of the test above: every request of botlane-proto's
/// table has its arm in `serve`. A request added to the table without one
/// compiles (`OpCode` is non-exhaustive there) and is answered as an
/// unknown opcode; this is the check that names it.
#[tokio::test]
async fn every_request_opcode_of_the_table_is_served() {
    let f = fixture(false).await;
    let mut raw = Raw::connect(&f.url).await;
    raw.login(ALICE).await;
    let requests = (0..=u16::MAX)
        .filter_map(OpCode::from)
        .filter(|op| !op.is_push());
    for op in requests {
        // `{}` is malformed for most requests: any answer but "unknown
        // opcode" shows the service has an arm for it.
        let d = raw.request(op, json!({})).await;
        assert_ne!(
            d["reason"],
            json!(format!("unknown opcode {}", op.code())),
            "{op:?} is a request the devserver does not serve: give it its arm in \
             realtime/dispatch.rs's `serve`"
        );
    }
}

#[tokio::test]
async fn an_injected_failure_answers_minus_2_on_any_request_opcode() {
    let f = fixture(false).await;
    let mut bob = session(&f, BOB, 5).await;
    let requests = [
        (OpCode::Heartbeat, json!({})),
        (OpCode::MenuPublish, json!({"menu": []})),
        (
            OpCode::Send,
            json!({"channel_id": f.quiet, "content": sealed(&f.quiet)}),
        ),
        (OpCode::HistoryFetch, json!({"channel_id": f.quiet})),
        (
            OpCode::KeyShare,
            json!({"channel_id": f.general, "to": f.bot, "wrapped": {}}),
        ),
        (OpCode::PublicKeyFetch, json!({"user_id": f.bot})),
        (OpCode::ChannelJoin, json!({"channel_id": f.quiet})),
        (OpCode::ChannelMembers, json!({"channel_id": f.quiet})),
        (OpCode::FetchEmojis, json!({})),
    ];
    for (op, d) in requests {
        f.server.fail_next_requests(op.code(), 1).unwrap();
        let reply = expect(&mut bob, op, d.clone(), -2).await;
        assert_eq!(reply["reason"], "injected failure");
        // One failure only: the same request is served normally next
        // (menu_publish by a human is -1, its normal answer).
        let normal = if op == OpCode::MenuPublish { -1 } else { 0 };
        expect(&mut bob, op, d, normal).await;
    }
    assert_eq!(
        f.server.messages(&f.quiet).len(),
        1,
        "the failed send stored nothing"
    );
    // Two in a row; 0 cancels what is left.
    f.server.fail_next_requests(12, 3).unwrap();
    expect(&mut bob, OpCode::Heartbeat, json!({}), -2).await;
    expect(&mut bob, OpCode::Heartbeat, json!({}), -2).await;
    f.server.fail_next_requests(12, 0).unwrap();
    expect(&mut bob, OpCode::Heartbeat, json!({}), 0).await;
    // Login, 638, a push and an unknown opcode are refused, naming the
    // opcode and the alternative.
    for op in [10, 638, 11, 99] {
        let err = f.server.fail_next_requests(op, 1).unwrap_err().to_string();
        assert!(err.contains(&format!("opcode {op}")), "{err}");
        assert!(err.contains("fail_next_mints"), "{err}");
    }
}

/// One request to the realtime listener's `/ws` with these extra headers;
/// the status and the headers of the answer.
async fn ws_http(f: &Lobby, headers: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = f.server.local_addr();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /ws HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(common::WAIT, tcp.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    (status, answer.to_ascii_lowercase())
}

#[tokio::test]
async fn ws_upgrade_answers() {
    let f = fixture(false).await;
    // No Upgrade header, or a version other than 13: 426 naming version 13.
    let (status, answer) = ws_http(&f, "").await;
    assert_eq!(status, 426);
    assert!(answer.contains("sec-websocket-version: 13"), "{answer}");
    let headers = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    let (status, answer) = ws_http(&f, headers).await;
    assert_eq!(status, 426);
    assert!(answer.contains("sec-websocket-version: 13"), "{answer}");
    // A bad key: 400.
    let headers = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n";
    assert_eq!(ws_http(&f, headers).await.0, 400);
    // A Connection header without the upgrade token: 400.
    let headers = "Upgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    assert_eq!(ws_http(&f, headers).await.0, 400);
    // A good one: 101 (the raw client's connect is one).
    Raw::connect(&f.url).await;
}

/// Every `file::function` named in a test column of `docs/protocol.md` is
/// a test in `crates/botlane-devserver/tests/live/<file>.rs`, and every row of
/// such a table names at least one.
#[test]
fn every_table_row_names_a_test() {
    let doc = include_str!("../../../../docs/protocol.md");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/live");
    let mut in_table = false;
    let mut test_column = None;
    let mut rows = 0;
    for line in doc.lines() {
        if !line.starts_with('|') {
            in_table = false;
            test_column = None;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if !in_table {
            in_table = true;
            test_column = cells.iter().position(|c| *c == "test");
            continue;
        }
        let Some(column) = test_column else { continue };
        if line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
            continue;
        }
        let cell = cells
            .get(column)
            .unwrap_or_else(|| panic!("a row without a test cell: {line}"));
        let names: Vec<&str> = cell
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|n| n.contains("::"))
            .collect();
        assert!(!names.is_empty(), "a row names no test: {line}");
        for name in names {
            let (file, function) = name.split_once("::").unwrap();
            let path = format!("{dir}/{file}.rs");
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{name}: cannot read {path}: {e}"));
            assert!(
                source.contains(&format!("async fn {function}("))
                    || source.contains(&format!("fn {function}(")),
                "{name}: no such test in {path}"
            );
            rows += 1;
        }
    }
    assert!(
        rows >= 50,
        "protocol.md's tables lost their tests: {rows} references left"
    );
}
