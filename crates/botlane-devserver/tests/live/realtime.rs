//! The realtime wire of the dev service, over real sockets with raw clients.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use botlane_devserver::{
    AccountConfig, ChannelConfig, Denial, DevServer, DevServerConfig, Direction, ServerConfig,
    MAX_HISTORY,
};
use botlane_proto::OpCode;
use common::{code, fake_key, lobby, logged_in, sealed, End, Raw, ALICE, BOB, BOT, CAROL, WAIT};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// dicebot, alice and bob in lobby/general; carol in no channel.
#[tokio::test]
async fn login_with_a_good_token_then_ready() {
    let f = lobby().await;
    let mut bot = Raw::connect(&f.url).await;
    let (reply, ready) = bot.login(BOT).await;
    assert_eq!(reply["user_id"], f.bot.as_str());
    assert_eq!(ready["user_id"], f.bot.as_str());
    assert_eq!(ready["name"], "dicebot");
    assert_eq!(ready["kind"], "bot");
    assert_eq!(
        ready["channels"],
        json!([{"id": f.general, "server_id": f.server.server_id("lobby").unwrap(), "name": "general"}])
    );
    let mut carol = Raw::connect(&f.url).await;
    let (_, ready) = carol.login(CAROL).await;
    assert_eq!(ready["kind"], "user");
    assert_eq!(ready["channels"], json!([]));
    // The identity key given at login is registered.
    assert_eq!(
        f.server.view(|s| s.public_key(&f.bot).map(str::to_owned)),
        Some(fake_key('A'))
    );
}

#[tokio::test]
async fn login_with_a_bad_token_is_refused_and_closed() {
    let f = lobby().await;
    let mut raw = Raw::connect(&f.url).await;
    raw.send(
        OpCode::Login,
        json!({"token": "no-such-token", "public_key": fake_key('A'), "client": "t"}),
    )
    .await;
    let reply = raw.expect(OpCode::Login).await;
    assert_eq!(code(&reply), -6);
    assert!(reply.get("user_id").is_none());
    assert_eq!(raw.next().await, Err(End::Closed(Some(1008))));
    // Nothing of a connection that never logged in is recorded, so neither
    // is the token it tried.
    let frames = f.server.frames();
    assert!(frames.is_empty(), "{frames:?}");

    // A successful login is recorded, its token redacted.
    let mut alice = Raw::connect(&f.url).await;
    alice.login(ALICE).await;
    let frames = f.server.frames();
    let login = frames
        .iter()
        .find(|r| r.is(Direction::Received, OpCode::Login))
        .unwrap();
    assert!(!login.payload.contains(ALICE), "{}", login.payload);
    assert!(login.payload.contains("[REDACTED]"));
    assert!(login.payload_size > ALICE.len());
    assert!(frames.iter().all(|r| !r.payload.contains(ALICE)));
}

#[tokio::test]
async fn a_revoked_bot_is_disconnected_and_cannot_log_in() {
    let f = lobby().await;
    let mut bot = logged_in(&f.url, BOT).await;
    f.server.revoke_bot(&f.bot).unwrap();
    assert_eq!(bot.next().await, Err(End::Closed(Some(1008))));
    let mut again = Raw::connect(&f.url).await;
    let reply = again
        .request(
            OpCode::Login,
            json!({"token": BOT, "public_key": fake_key('A'), "client": "t"}),
        )
        .await;
    assert_eq!(code(&reply), -6);
}

#[tokio::test]
async fn requests_before_login_get_unauthorized() {
    let f = lobby().await;
    let mut raw = Raw::connect(&f.url).await;
    for (op, d) in [
        (OpCode::Heartbeat, json!({})),
        (
            OpCode::Send,
            json!({"channel_id": f.general, "content": "x"}),
        ),
        (OpCode::HistoryFetch, json!({"channel_id": f.general})),
        (OpCode::FetchEmojis, json!({})),
        (OpCode::RestMint, json!({})),
    ] {
        assert_eq!(code(&raw.request(op, d).await), -6, "{op:?}");
    }
    // The socket stays open and a login still works.
    raw.login(ALICE).await;
    assert!(f.server.messages(&f.general).is_empty());
}

#[tokio::test]
async fn logging_in_twice_is_a_bad_request() {
    let f = lobby().await;
    let mut raw = logged_in(&f.url, ALICE).await;
    let reply = raw
        .request(
            OpCode::Login,
            json!({"token": ALICE, "public_key": fake_key('A'), "client": "t"}),
        )
        .await;
    assert_eq!(code(&reply), -5);
    let reply = Raw::connect(&f.url)
        .await
        .request(
            OpCode::Login,
            json!({"token": ALICE, "public_key": "not a key", "client": "t"}),
        )
        .await;
    assert_eq!(code(&reply), -5);
}

#[tokio::test]
async fn heartbeat_emojis_and_rest_mint() {
    let f = lobby().await;
    let mut raw = logged_in(&f.url, BOT).await;
    assert_eq!(
        raw.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
    let emojis = raw.request(OpCode::FetchEmojis, json!({})).await;
    assert_eq!(code(&emojis), 0);
    let list = emojis["emojis"].as_array().unwrap();
    assert!(list.len() >= 20);
    assert!(list.contains(&json!({"name": "thumbs_up", "emoji": "👍"})));
    let mut names: Vec<_> = list.iter().map(|e| e["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), list.len(), "emoji names are unique");
    // The REST lane is off: 638 always answers -7 and nothing else.
    assert_eq!(
        raw.request(OpCode::RestMint, json!({})).await,
        json!({"code": -7})
    );
}

#[tokio::test]
async fn unknown_opcodes_and_pushes_get_minus_5_on_their_own_opcode() {
    let f = lobby().await;
    let mut raw = logged_in(&f.url, ALICE).await;
    raw.send_text(r#"{"op":9999,"d":{}}"#).await;
    raw.send_text(r#"{"op":32,"d":{"message":{}}}"#).await;
    raw.send_text(r#"{"op":0}"#).await;
    raw.send(OpCode::Heartbeat, json!({})).await;
    // Each gets its reply, in order, so no client waits forever for one.
    for op in [9999, 32, 0] {
        let reason = format!("unknown opcode {op}");
        assert_eq!(
            raw.next().await,
            Ok((op, json!({"code": -5, "reason": reason})))
        );
    }
    assert_eq!(raw.next().await, Ok((12, json!({"code": 0}))));
    raw.expect_silence(Duration::from_millis(100)).await;

    // An envelope that cannot be read closes the connection (1007); it is
    // recorded as unparsed, since it might hold a token.
    raw.send_text("not json at all").await;
    assert_eq!(raw.next().await, Err(End::Closed(Some(1007))));
    assert_eq!(
        raw.close_reason.as_deref(),
        Some("malformed frame envelope: not valid JSON")
    );
    let frames = f.server.frames();
    let unparsed: Vec<_> = frames
        .iter()
        .filter(|r| r.direction == Direction::Received && r.opcode.is_none())
        .collect();
    assert_eq!(unparsed.len(), 1);
    assert_eq!(unparsed[0].payload, "[UNPARSED]");
    assert_eq!(unparsed[0].payload_size, "not json at all".len());
}

#[tokio::test]
async fn malformed_payloads_of_known_requests_get_bad_request() {
    let f = lobby().await;
    let mut raw = logged_in(&f.url, ALICE).await;
    for (op, d) in [
        (OpCode::Send, json!({"channel_id": f.general})),
        (OpCode::Send, json!({"channel_id": f.general, "content": 5})),
        (OpCode::HistoryFetch, json!({"channel_id": 7})),
        (
            OpCode::HistoryFetch,
            json!({"channel_id": f.general, "limit": -1}),
        ),
        (
            OpCode::KeyShare,
            json!({"channel_id": f.general, "to": f.bob}),
        ),
        (OpCode::PublicKeyFetch, json!([])),
        (OpCode::ChannelJoin, json!("general")),
        (OpCode::MenuPublish, json!({})),
    ] {
        let reply = raw.request(op, d.clone()).await;
        assert_eq!(code(&reply), -5, "{op:?} {d}");
        assert!(
            reply["reason"].as_str().unwrap().contains("malformed"),
            "{reply}"
        );
    }
}

#[tokio::test]
async fn replies_stay_in_order_per_opcode_under_pipelining() {
    let f = lobby().await;
    let mut seed = logged_in(&f.url, BOB).await;
    for i in 0..MAX_HISTORY {
        let reply = seed
            .request(
                OpCode::Send,
                json!({"channel_id": f.general, "content": sealed(&format!("seed-{i}"))}),
            )
            .await;
        assert_eq!(code(&reply), 0);
    }

    let Raw { ws, .. } = logged_in(&f.url, ALICE).await;
    let (mut sink, mut stream) = ws.split();
    // 400 requests of five opcodes, each carrying something that makes its
    // reply recognisable, all written before any reply is read.
    const N: usize = 400;
    let mut expected: Vec<(u16, Value)> = Vec::new();
    let mut frames = Vec::new();
    for i in 0..N {
        let (op, d, want) = match i % 5 {
            0 => (OpCode::Heartbeat, json!({}), json!({"code": 0})),
            1 => {
                let limit = i % (MAX_HISTORY + 1);
                (
                    OpCode::HistoryFetch,
                    json!({"channel_id": f.general, "limit": limit}),
                    json!(limit),
                )
            }
            2 => (
                OpCode::Send,
                json!({"channel_id": f.general, "content": sealed(&format!("pipelined-{i}"))}),
                json!(sealed(&format!("pipelined-{i}"))),
            ),
            3 => {
                let (who, key) = match i % 3 {
                    0 => (&f.alice, json!(fake_key('A'))),
                    1 => (&f.bob, json!(fake_key('A'))),
                    _ => (&f.carol, Value::Null),
                };
                (OpCode::PublicKeyFetch, json!({"user_id": who}), key)
            }
            _ => (OpCode::RestMint, json!({}), json!({"code": -7})),
        };
        frames.push(json!({"op": op.code(), "d": d}).to_string());
        expected.push((op.code(), want));
    }
    let writer = tokio::spawn(async move {
        for frame in frames {
            sink.send(Message::text(frame)).await.unwrap();
        }
        sink
    });

    let mut replies: Vec<(u16, Value)> = Vec::new();
    while replies.len() < N {
        let message = tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let frame: Value = serde_json::from_str(message.to_text().unwrap()).unwrap();
        let op = u16::try_from(frame["op"].as_u64().unwrap()).unwrap();
        if OpCode::from(op).is_some_and(OpCode::is_push) {
            continue;
        }
        replies.push((op, frame["d"].clone()));
    }
    drop(writer.await.unwrap());

    let stored = f.server.messages(&f.general);
    let content_of = |id: &str| stored.iter().find(|m| m.id == id).unwrap().content.clone();
    for op in [12u16, 40, 30, 52, 638] {
        let wanted: Vec<_> = expected
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, w)| w)
            .collect();
        let got: Vec<_> = replies
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, d)| d)
            .collect();
        assert_eq!(got.len(), wanted.len(), "op {op}");
        for (got, want) in got.iter().zip(wanted) {
            match op {
                40 => assert_eq!(
                    got["messages"].as_array().unwrap().len() as u64,
                    want.as_u64().unwrap()
                ),
                30 => assert_eq!(
                    content_of(got["message_id"].as_str().unwrap()),
                    want.as_str().unwrap()
                ),
                52 => assert_eq!(got.get("public_key").unwrap_or(&Value::Null), want),
                _ => assert_eq!(*got, want),
            }
        }
    }
}

#[tokio::test]
async fn menus_are_stored_casefolded_and_checked_strictly() {
    let f = lobby().await;
    let mut bot = logged_in(&f.url, BOT).await;
    let menu = json!([
        ["PING", "Check", []],
        [
            "Roll",
            "Roll dice",
            [
                ["count", 2, "How many", true, []],
                ["sides", 2, "Sides", false, ["6", "20"]]
            ]
        ],
    ]);
    assert_eq!(
        bot.request(OpCode::MenuPublish, json!({"menu": menu}))
            .await,
        json!({"code": 0})
    );
    let stored = f.server.menu(&f.bot).unwrap();
    let names: Vec<_> = stored.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ping", "roll"]);
    assert_eq!(
        stored.command("roll").unwrap().options[1].choices,
        ["6", "20"]
    );
    assert!(stored.commands[1].options[0].required);

    let not_boolean = json!([["roll", "Roll", [["count", 2, "How many", "true", []]]]]);
    let reply = bot
        .request(OpCode::MenuPublish, json!({"menu": not_boolean}))
        .await;
    assert_eq!(code(&reply), -5);
    assert!(
        reply["reason"].as_str().unwrap().contains("real boolean"),
        "{reply}"
    );
    for bad in [
        json!({"roll": 1}),
        json!([["roll"]]),
        json!([["roll", "d", [], "extra"]]),
    ] {
        assert_eq!(
            code(&bot.request(OpCode::MenuPublish, json!({"menu": bad})).await),
            -5
        );
    }
    let description = "d".repeat(100);
    let options: Vec<_> = (0..25)
        .map(|i| json!([format!("o{i}"), 1, description, false, []]))
        .collect();
    let huge: Vec<_> = (0..6)
        .map(|i| json!([format!("c{i}"), description, options]))
        .collect();
    assert!(serde_json::to_string(&huge).unwrap().len() > botlane::MAX_COMMANDS_PAYLOAD);
    assert_eq!(
        code(
            &bot.request(OpCode::MenuPublish, json!({"menu": huge}))
                .await
        ),
        -8
    );
    // Refused menus leave the stored one alone.
    assert_eq!(f.server.menu(&f.bot), Some(stored));

    let mut alice = logged_in(&f.url, ALICE).await;
    let reply = alice
        .request(OpCode::MenuPublish, json!({"menu": []}))
        .await;
    assert_eq!(code(&reply), -1);
    assert!(f.server.menu(&f.alice).is_none());
}

#[tokio::test]
async fn a_send_reaches_every_member_and_history() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let mut bob = logged_in(&f.url, BOB).await;
    let mut bot = logged_in(&f.url, BOT).await;
    let mut carol = logged_in(&f.url, CAROL).await;

    let reply = alice
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("sealed"), "command": sealed("sidecar")}),
        )
        .await;
    assert_eq!(code(&reply), 0);
    let id = reply["message_id"].as_str().unwrap().to_owned();
    let expected = json!({
        "id": id, "channel_id": f.general, "author_id": f.alice,
        "content": sealed("sealed"), "command": sealed("sidecar"),
    });
    for member in [&mut alice, &mut bob, &mut bot] {
        let push = member.expect(OpCode::MessageCreate).await;
        let mut message = push["message"].clone();
        assert!(message["created_at"].as_u64().unwrap() > 1_700_000_000_000);
        message.as_object_mut().unwrap().remove("created_at");
        assert_eq!(message, expected);
    }
    carol.expect_silence(Duration::from_millis(100)).await;

    for i in 0..3 {
        let content = format!("later-{i}");
        bob.request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed(&content)}),
        )
        .await;
    }
    let history = bot
        .request(OpCode::HistoryFetch, json!({"channel_id": f.general}))
        .await;
    let contents: Vec<_> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        contents,
        [
            sealed("sealed"),
            sealed("later-0"),
            sealed("later-1"),
            sealed("later-2")
        ]
    );
    let last_two = bot
        .request(
            OpCode::HistoryFetch,
            json!({"channel_id": f.general, "limit": 2}),
        )
        .await;
    let contents: Vec<_> = last_two["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, [sealed("later-1"), sealed("later-2")]);
    // Outsiders cannot read it.
    let reply = carol
        .request(OpCode::HistoryFetch, json!({"channel_id": f.general}))
        .await;
    assert_eq!(code(&reply), -4);
}

#[tokio::test]
async fn every_connection_of_an_account_gets_its_pushes_until_it_leaves() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let mut first = logged_in(&f.url, BOB).await;
    let mut second = logged_in(&f.url, BOB).await;
    let send = json!({"channel_id": f.general, "content": sealed("to both")});
    assert_eq!(code(&alice.request(OpCode::Send, send.clone()).await), 0);
    let one = first.expect(OpCode::MessageCreate).await;
    let other = second.expect(OpCode::MessageCreate).await;
    assert_eq!(one, other, "the same frame on both connections");
    assert_eq!(one["message"]["content"], sealed("to both"));
    // The first connection leaves: the account is still online on the other.
    drop(first);
    f.server
        .wait_for(|s| s.session_count() == 2, WAIT)
        .await
        .unwrap();
    assert!(f.server.view(|s| s.is_online(&f.bob)));
    assert_eq!(code(&alice.request(OpCode::Send, send).await), 0);
    second.expect(OpCode::MessageCreate).await;
    drop(second);
    f.server
        .wait_for(|s| s.session_count() == 1, WAIT)
        .await
        .unwrap();
    assert!(!f.server.view(|s| s.is_online(&f.bob)));
    assert!(f.server.view(|s| s.is_online(&f.alice)));
}

#[tokio::test]
async fn history_is_capped_at_one_hundred() {
    let f = lobby().await;
    let mut bob = logged_in(&f.url, BOB).await;
    for i in 0..(MAX_HISTORY + 5) {
        bob.request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed(&i.to_string())}),
        )
        .await;
    }
    let history = bob
        .request(
            OpCode::HistoryFetch,
            json!({"channel_id": f.general, "limit": 1000}),
        )
        .await;
    let messages = history["messages"].as_array().unwrap();
    assert_eq!(messages.len(), MAX_HISTORY);
    assert_eq!(messages[0]["content"], sealed("5"));
    assert_eq!(
        messages[MAX_HISTORY - 1]["content"],
        sealed(&(MAX_HISTORY + 4).to_string())
    );
}

#[tokio::test]
async fn the_service_stores_exactly_the_sealed_text_it_was_given() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    // Sealed for real, as a member would: the service stores the text as is.
    let key = botlane_proto::crypto::ChannelKey::from_bytes(std::array::from_fn(|i| i as u8));
    let aad = f.general.as_bytes();
    let sealed = key.seal(b"roll 2", aad).unwrap();
    let sidecar = key.seal(br#"{"v":1}"#, aad).unwrap();
    alice
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed, "command": sidecar}),
        )
        .await;
    let stored = f.server.messages(&f.general);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].content, sealed);
    assert_eq!(stored[0].command.as_deref(), Some(sidecar.as_str()));
    assert_eq!(key.open(&stored[0].content, aad).unwrap(), b"roll 2");
    assert_eq!(stored[0].author_id, f.alice);
}

#[tokio::test]
async fn a_reply_notifies_the_replied_to_author() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let mut bot = logged_in(&f.url, BOT).await;
    let original = alice
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("roll please")}),
        )
        .await;
    let original = original["message_id"].as_str().unwrap().to_owned();
    let reply = bot
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("4"), "reply_to": original}),
        )
        .await;
    let reply_id = reply["message_id"].as_str().unwrap().to_owned();
    let notification = alice.next_of(OpCode::Notification).await;
    assert_eq!(
        notification,
        json!({"kind": "reply", "channel_id": f.general, "message_id": reply_id, "from": f.bot})
    );
    let recorded = f.server.notifications_for(&f.alice);
    assert_eq!(recorded.len(), 1);
    assert!(f.server.view(|s| s.notification_records()[0].delivered));
    assert_eq!(recorded[0].message_id, reply_id);
    assert_eq!(
        f.server.messages(&f.general)[1].reply_to.as_deref(),
        Some(original.as_str())
    );
    // Replying to one's own message notifies nobody; an unknown target is refused.
    alice
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("self"), "reply_to": original}),
        )
        .await;
    assert_eq!(f.server.notifications_for(&f.alice).len(), 1);
    let refused = bot
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("x"), "reply_to": "no-such-message"}),
        )
        .await;
    assert_eq!(code(&refused), -5);
}

#[tokio::test]
async fn denials_answer_with_their_codes() {
    let f = lobby().await;
    let mut bot = logged_in(&f.url, BOT).await;
    let send = json!({"channel_id": f.general, "content": sealed("x")});
    for (denial, expected) in [
        (Denial::NoPermission, -3),
        (Denial::UnknownChannel, -4),
        (Denial::RateLimited, -9),
    ] {
        f.server.deny_sends(&f.general, Some(denial)).unwrap();
        let reply = bot.request(OpCode::Send, send.clone()).await;
        assert_eq!(code(&reply), expected, "{denial:?}");
        assert!(reply.get("message_id").is_none());
        assert!(reply["reason"].is_string());
    }
    assert!(f.server.messages(&f.general).is_empty());
    f.server.deny_sends(&f.general, None).unwrap();
    assert_eq!(code(&bot.request(OpCode::Send, send).await), 0);

    let mut carol = logged_in(&f.url, CAROL).await;
    let not_member = carol
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("x")}),
        )
        .await;
    assert_eq!(code(&not_member), -4);
    let unknown = bot
        .request(
            OpCode::Send,
            json!({"channel_id": "no-such-channel", "content": sealed("x")}),
        )
        .await;
    assert_eq!(code(&unknown), -4);
    let too_long = bot
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("x"), "command": "y".repeat(2049)}),
        )
        .await;
    assert_eq!(code(&too_long), -8);
    assert_eq!(f.server.messages(&f.general).len(), 1);
}

#[tokio::test]
async fn channel_keys_are_relayed_and_kept_for_offline_members() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let mut bot = logged_in(&f.url, BOT).await;
    let wrapped = json!({"v": 1, "epk": "ZXBr", "ct": "Y3Q="});
    let share = |to: &str| json!({"channel_id": f.general, "to": to, "wrapped": wrapped});

    assert_eq!(
        alice.request(OpCode::KeyShare, share(&f.bot)).await,
        json!({"code": 0})
    );
    assert_eq!(
        bot.expect(OpCode::ChannelKey).await,
        json!({"channel_id": f.general, "from": f.alice, "wrapped": wrapped})
    );

    // Bob is offline: the key waits for his next login, after `ready`.
    assert_eq!(
        alice.request(OpCode::KeyShare, share(&f.bob)).await,
        json!({"code": 0})
    );
    assert_eq!(f.server.view(|s| s.pending_key_count(&f.bob)), 1);
    let mut bob = Raw::connect(&f.url).await;
    bob.login(BOB).await;
    assert_eq!(
        bob.expect(OpCode::ChannelKey).await,
        json!({"channel_id": f.general, "from": f.alice, "wrapped": wrapped})
    );
    assert_eq!(f.server.view(|s| s.pending_key_count(&f.bob)), 0);
    // Delivered once only.
    drop(bob);
    let mut bob = logged_in(&f.url, BOB).await;
    bob.expect_silence(Duration::from_millis(100)).await;

    // Only to and from members.
    assert_eq!(
        code(&alice.request(OpCode::KeyShare, share(&f.carol)).await),
        -4
    );
    let mut carol = logged_in(&f.url, CAROL).await;
    assert_eq!(
        code(&carol.request(OpCode::KeyShare, share(&f.bob)).await),
        -4
    );
}

#[tokio::test]
async fn public_keys_members_and_joins() {
    let f = lobby().await;
    let mut alice = Raw::connect(&f.url).await;
    alice.login_with_key(ALICE, &fake_key('Q')).await;
    let mut carol = logged_in(&f.url, CAROL).await;

    let key = carol
        .request(OpCode::PublicKeyFetch, json!({"user_id": f.alice}))
        .await;
    assert_eq!(key, json!({"code": 0, "public_key": fake_key('Q')}));
    let never = carol
        .request(OpCode::PublicKeyFetch, json!({"user_id": f.bot}))
        .await;
    assert_eq!(never, json!({"code": 0}));
    let unknown = carol
        .request(OpCode::PublicKeyFetch, json!({"user_id": "nobody"}))
        .await;
    assert_eq!(code(&unknown), -5);

    let members = json!({"channel_id": f.general});
    assert_eq!(
        code(&carol.request(OpCode::ChannelMembers, members.clone()).await),
        -4
    );
    assert_eq!(
        carol
            .request(OpCode::ChannelJoin, json!({"channel_id": f.general}))
            .await,
        json!({"code": 0})
    );
    assert_eq!(
        carol.request(OpCode::ChannelMembers, members.clone()).await,
        json!({"code": 0, "members": [f.bot, f.alice, f.bob, f.carol]})
    );
    // Joining again is harmless; the new member now gets the channel's messages.
    assert_eq!(
        code(&carol.request(OpCode::ChannelJoin, members.clone()).await),
        0
    );
    alice
        .request(
            OpCode::Send,
            json!({"channel_id": f.general, "content": sealed("hi")}),
        )
        .await;
    assert_eq!(
        carol.next_of(OpCode::MessageCreate).await["message"]["content"],
        sealed("hi")
    );
    let unknown = carol
        .request(OpCode::ChannelJoin, json!({"channel_id": "nope"}))
        .await;
    assert_eq!(code(&unknown), -4);

    let mut bot = logged_in(&f.url, BOT).await;
    let other = f
        .server
        .create_channel(&f.server.server_id("lobby").unwrap(), "other")
        .unwrap();
    assert_eq!(
        code(
            &bot.request(OpCode::ChannelJoin, json!({"channel_id": other}))
                .await
        ),
        -3
    );
}

#[tokio::test]
async fn drop_connections_ends_every_socket_without_a_close_frame() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let mut bot = logged_in(&f.url, BOT).await;
    let mut anonymous = Raw::connect(&f.url).await;
    f.server
        .wait_for(|s| s.connection_count() == 3, WAIT)
        .await
        .unwrap();
    f.server.drop_connections();
    for raw in [&mut alice, &mut bot, &mut anonymous] {
        assert_eq!(raw.next().await, Err(End::Dropped));
    }
    f.server
        .wait_for(|s| s.connection_count() == 0, WAIT)
        .await
        .unwrap();
    // Reconnecting works.
    let mut again = logged_in(&f.url, BOT).await;
    assert_eq!(
        again.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
}

#[tokio::test]
async fn shutdown_closes_sockets_and_ends() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let url = f.url.clone();
    tokio::time::timeout(WAIT, f.server.shutdown())
        .await
        .unwrap();
    assert_eq!(alice.next().await, Err(End::Closed(Some(1001))));
    assert!(tokio_tungstenite::connect_async(url).await.is_err());
}

#[tokio::test]
async fn dropping_the_handle_stops_the_service() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    drop(f.server);
    assert_eq!(alice.next().await, Err(End::Closed(Some(1001))));
}

#[tokio::test]
async fn frames_are_recorded_with_accounts_and_sizes() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    alice.request(OpCode::Heartbeat, json!({})).await;
    let frames = f.server.frames();
    let received: Vec<_> = frames
        .iter()
        .filter(|r| r.direction == Direction::Received)
        .map(|r| (r.opcode, r.account_id.clone()))
        .collect();
    assert_eq!(
        received,
        [(Some(10), None), (Some(12), Some(f.alice.clone()))]
    );
    let sent: Vec<_> = frames
        .iter()
        .filter(|r| r.direction == Direction::Sent)
        .map(|r| r.opcode.unwrap())
        .collect();
    assert_eq!(sent, [10, 11, 12]);
    let heartbeat = frames
        .iter()
        .find(|r| r.is(Direction::Sent, OpCode::Heartbeat))
        .unwrap();
    assert_eq!(heartbeat.payload, r#"{"code":0}"#);
    assert_eq!(heartbeat.payload_size, heartbeat.payload.len());
    assert!(frames.iter().all(|r| !r.payload.contains(ALICE)));
}

#[tokio::test]
async fn config_errors_are_reported() {
    let bad_member = DevServerConfig::default()
        .server(ServerConfig::new("s").channel(ChannelConfig::new("c").member("ghost")));
    let err = DevServer::start(bad_member).await.unwrap_err();
    assert!(err.to_string().contains("ghost"), "{err}");
    let same_token = DevServerConfig::default()
        .bot(AccountConfig::new("a", "t"))
        .user(AccountConfig::new("b", "t"));
    let err = DevServer::start(same_token).await.unwrap_err();
    assert!(err.to_string().contains("reuses"), "{err}");
    let bad_id = DevServerConfig::default().bot(AccountConfig::new("a", "t").id("not-a-uuid"));
    assert!(DevServer::start(bad_id).await.is_err());
}
