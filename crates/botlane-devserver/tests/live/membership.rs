//! Membership pushes (D3): op 34 `channel_added` when an online account is
//! added to a channel, op 35 `channel_removed` when it is removed, and what
//! removal stops.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use botlane_devserver::{DevServer, TestUser};
use botlane_proto::OpCode;
use common::{fake_key, logged_in, sealed, Raw, WAIT};
use serde_json::json;

const SILENCE: Duration = Duration::from_millis(150);

/// Polls `cond` until it holds, for at most [`WAIT`].
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn adding_and_removing_push_34_and_35_to_online_accounts() {
    let server = DevServer::start(Default::default()).await.unwrap();
    let lobby = server.create_server("lobby");
    let general = server.create_channel(&lobby, "general").unwrap();
    let bot = server.add_bot("dicebot");
    let mut raw = logged_in(&server.ws_url(), &bot.token).await;

    server.add_member(&general, &bot.id).unwrap();
    let (op, d) = raw.next().await.unwrap();
    assert_eq!(op, 34);
    assert_eq!(d["channel"]["id"], general.as_str());
    // Added again: a no-op, no push.
    server.add_member(&general, &bot.id).unwrap();
    raw.expect_silence(SILENCE).await;

    server.remove_member(&general, &bot.id).unwrap();
    let (op, d) = raw.next().await.unwrap();
    assert_eq!((op, d), (35, json!({"channel_id": general})));
    // Removed again: a no-op, no push; unknown ids are errors.
    server.remove_member(&general, &bot.id).unwrap();
    raw.expect_silence(SILENCE).await;
    assert!(server.remove_member("no-such-channel", &bot.id).is_err());
    assert!(server.remove_member(&general, "no-such-account").is_err());

    // The pushes are recorded like any frame, with their exact payloads.
    let pushed: Vec<_> = server
        .frames()
        .into_iter()
        .filter(|f| f.opcode == Some(34) || f.opcode == Some(35))
        .map(|f| {
            let payload: serde_json::Value = serde_json::from_str(&f.payload).unwrap();
            (f.opcode.unwrap(), payload)
        })
        .collect();
    let added = json!({"channel": {"id": general, "server_id": lobby, "name": "general"}});
    assert_eq!(pushed, [(34, added), (35, json!({"channel_id": general}))]);
}

#[tokio::test]
async fn channel_added_carries_the_channel_and_offline_accounts_learn_from_ready() {
    let server = DevServer::start(Default::default()).await.unwrap();
    let lobby = server.create_server("lobby");
    let general = server.create_channel(&lobby, "general").unwrap();
    let bot = server.add_bot("dicebot");
    let mut raw = logged_in(&server.ws_url(), &bot.token).await;
    server.add_member(&general, &bot.id).unwrap();
    let (op, d) = raw.next().await.unwrap();
    assert_eq!(op, 34);
    assert_eq!(
        d,
        json!({"channel": {"id": general, "server_id": lobby, "name": "general"}})
    );

    // Offline: no push to anyone; the next `ready` lists the channel.
    let other = server.create_channel(&lobby, "other").unwrap();
    let alice = server.add_user("alice");
    server.add_member(&other, &alice.id).unwrap();
    let mut alice_raw = Raw::connect(&server.ws_url()).await;
    let (_, ready) = alice_raw.login_with_key(&alice.token, &fake_key('B')).await;
    assert_eq!(ready["channels"][0]["id"], other.as_str());
    raw.expect_silence(SILENCE).await;
}

#[tokio::test]
async fn removal_stops_delivery_history_and_key_shares() {
    let server = DevServer::start(Default::default()).await.unwrap();
    let general = server
        .create_channel(&server.create_server("lobby"), "general")
        .unwrap();
    let (bot, alice, bob) = (
        server.add_bot("dicebot"),
        server.add_user("alice"),
        server.add_user("bob"),
    );
    for id in [&bot.id, &alice.id, &bob.id] {
        server.add_member(&general, id).unwrap();
    }
    let mut bot_raw = logged_in(&server.ws_url(), &bot.token).await;
    let mut alice_raw = Raw::connect(&server.ws_url()).await;
    alice_raw.login_with_key(&alice.token, &fake_key('C')).await;

    // Bob is offline: a key shared to him waits, and goes with his removal.
    let wrapped = json!({"ephemeral": "ZXBr", "ciphertext": "Y3Q="});
    let share = |to: &str| json!({"channel_id": general, "to": to, "wrapped": wrapped});
    assert_eq!(
        alice_raw.request(OpCode::KeyShare, share(&bob.id)).await["code"],
        0
    );
    // A second share from the same member replaces the first.
    assert_eq!(
        alice_raw.request(OpCode::KeyShare, share(&bob.id)).await["code"],
        0
    );
    assert_eq!(server.view(|s| s.pending_key_count(&bob.id)), 1);
    server.remove_member(&general, &bob.id).unwrap();
    assert_eq!(server.view(|s| s.pending_key_count(&bob.id)), 0);

    server.remove_member(&general, &bot.id).unwrap();
    assert_eq!(
        bot_raw.next().await.unwrap(),
        (35, json!({"channel_id": general}))
    );
    let send = json!({"channel_id": general, "content": sealed("after")});
    // Alice's message no longer reaches the bot; the bot can neither post,
    // read history, nor be given a key there.
    assert_eq!(
        alice_raw.request(OpCode::Send, send.clone()).await["code"],
        0
    );
    assert_eq!(bot_raw.request(OpCode::Send, send).await["code"], -4);
    let history = json!({"channel_id": general});
    assert_eq!(
        bot_raw.request(OpCode::HistoryFetch, history).await["code"],
        -4
    );
    assert_eq!(
        alice_raw.request(OpCode::KeyShare, share(&bot.id)).await["code"],
        -4
    );
    let pushed_to_bot = server
        .frames()
        .into_iter()
        .filter(|f| f.account_id.as_deref() == Some(bot.id.as_str()))
        .filter(|f| f.opcode == Some(32) || f.opcode == Some(50))
        .count();
    assert_eq!(pushed_to_bot, 0);
}

#[tokio::test]
async fn a_test_user_tracks_its_channels_and_forgets_a_removed_channel_s_key() {
    let server = DevServer::start(Default::default()).await.unwrap();
    let lobby = server.create_server("lobby");
    let general = server.create_channel(&lobby, "general").unwrap();
    let (a, c) = (server.add_user("alice"), server.add_user("carol"));
    server.add_member(&general, &a.id).unwrap();
    let alice = TestUser::connect(&server.ws_url(), &a.token).await.unwrap();
    let carol = TestUser::connect(&server.ws_url(), &c.token).await.unwrap();
    assert_eq!(alice.channels().len(), 1);
    assert!(carol.channels().is_empty());

    // Joining (op 60) is answered, then pushed as channel_added.
    carol.join(&general).await.unwrap();
    eventually("carol sees general", || carol.channels().len() == 1).await;
    assert_eq!(carol.channels()[0].name, "general");
    let side = server.create_channel(&lobby, "side").unwrap();
    server.add_member(&side, carol.user_id()).unwrap();
    eventually("carol sees side", || carol.channels().len() == 2).await;

    alice.open_channel(&general).await.unwrap();
    carol.wait_for_key(&general, WAIT).await.unwrap();
    server.remove_member(&general, carol.user_id()).unwrap();
    eventually("carol forgets general", || {
        carol.channels().iter().all(|ch| ch.id != general)
    })
    .await;
    assert!(!carol.has_channel_key(&general));
    assert_eq!(carol.channels()[0].id, side);
}
