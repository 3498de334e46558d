//! `TestUser` end to end: two humans, and a raw bot that opens what they seal.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use botlane::framework::canonical_bot_id;

use botlane::{
    decode_command_data, format_invocation_text, CommandArgValue, CommandArgs, CommandDeclaration,
    CommandOption, CommandOptionType,
};
use botlane_devserver::{
    Denial, DevServer, DevServerConfig, Limits, TestUser, TestUserError, MAX_KEPT_NOTIFICATIONS,
    MAX_QUEUED_MESSAGES, MAX_UNSENT_BYTES,
};
use botlane_proto::crypto::{ChannelKey, IdentityKeyPair, WrappedKey};
use botlane_proto::OpCode;
use common::{world, world_with, Raw};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn two_users_talk_through_sealed_messages() {
    let w = world().await;
    assert_eq!(w.alice.name(), "alice");
    assert_eq!(w.alice.channels()[0].id, w.channel);
    assert!(!w.bob.has_channel_key(&w.channel));
    assert_eq!(w.alice.open_channel(&w.channel).await.unwrap(), 1);
    w.bob.wait_for_key(&w.channel, WAIT).await.unwrap();

    let id = w.alice.send_text(&w.channel, "hello bob 👋").await.unwrap();
    let got = w.bob.next_message(WAIT).await.unwrap();
    assert_eq!(
        (got.id.as_str(), got.content.as_str()),
        (id.as_str(), "hello bob 👋")
    );
    assert_eq!(got.author_id, w.alice.user_id());
    assert!(got.command.is_none() && got.command_json.is_none());
    // The author gets its own message too.
    assert_eq!(w.alice.next_message(WAIT).await.unwrap().id, id);

    // The service holds only ciphertext, which opens only with the channel key.
    let stored = w.server.messages(&w.channel);
    assert_eq!(stored.len(), 1);
    assert!(!stored[0].content.contains("hello"));
    assert!(ChannelKey::generate()
        .unwrap()
        .open(&stored[0].content, w.channel.as_bytes())
        .is_err());
    assert!(w
        .server
        .frames()
        .iter()
        .all(|f| !f.payload.contains("hello bob")));

    let reply = w.bob.reply_to(&w.channel, &id, "hi alice").await.unwrap();
    let got = w
        .alice
        .wait_for_message(|m| m.author_id == w.bob.user_id(), WAIT)
        .await
        .unwrap();
    assert_eq!(got.content, "hi alice");
    assert_eq!(got.reply_to.as_deref(), Some(id.as_str()));
    w.server
        .wait_for(|s| !s.notifications_for(w.alice.user_id()).is_empty(), WAIT)
        .await
        .unwrap();
    let notifications = w.alice.notifications();
    assert_eq!(notifications.len(), 1);
    assert_eq!(notifications[0].message_id, reply);
    assert_eq!(notifications[0].from, w.bob.user_id());

    let history = w.bob.history(&w.channel).await.unwrap();
    assert_eq!(history.unreadable, 0);
    let contents: Vec<_> = history
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["hello bob 👋", "hi alice"]);
}

/// A member who never had the key the older messages are sealed with
/// reads the history all the same: those it can open, and a count of the
/// others, never one failure for the whole call.
#[tokio::test]
async fn history_counts_what_a_newcomer_cannot_open() {
    let w = world().await;
    w.alice.open_channel(&w.channel).await.unwrap();
    w.alice.send_text(&w.channel, "before carol").await.unwrap();
    let c = w.server.add_user("carol");
    w.server.add_member(&w.channel, &c.id).unwrap();
    let carol = TestUser::connect(&w.server.ws_url(), &c.token)
        .await
        .unwrap();

    let history = carol.history(&w.channel).await.unwrap();
    assert_eq!((history.messages.len(), history.unreadable), (0, 1));

    w.alice
        .share_key_with(&w.channel, carol.user_id())
        .await
        .unwrap();
    carol.wait_for_key(&w.channel, WAIT).await.unwrap();
    let history = carol.history(&w.channel).await.unwrap();
    assert_eq!(history.unreadable, 0);
    assert_eq!(history.messages[0].content, "before carol");
}

#[tokio::test]
async fn a_bot_receives_the_key_the_line_and_the_sealed_sidecar() {
    let w = world().await;
    let bot = w.server.add_bot("dicebot");
    w.server.add_member(&w.channel, &bot.id).unwrap();
    let identity = IdentityKeyPair::generate().unwrap();
    let mut raw = Raw::connect(&w.server.ws_url()).await;
    raw.login_with_key(&bot.token, &identity.public_key().to_base64())
        .await;

    assert_eq!(w.alice.open_channel(&w.channel).await.unwrap(), 2);
    let push = raw.expect(OpCode::ChannelKey).await;
    assert_eq!(push["from"], w.alice.user_id());
    let wrapped: WrappedKey = serde_json::from_value(push["wrapped"].clone()).unwrap();
    let key = identity.unwrap_channel_key(&wrapped, &w.channel).unwrap();

    let roll = CommandDeclaration::new("roll", "Roll dice")
        .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
        .option(
            CommandOption::new("sides", "Sides", CommandOptionType::Integer).choices(["6", "20"]),
        );
    let args = CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(2)),
        ("sides".to_owned(), CommandArgValue::Integer(20)),
    ]);
    let id = w
        .alice
        .send_command(&w.channel, &bot.id, &roll, &args)
        .await
        .unwrap();
    let message = raw.next_of(OpCode::MessageCreate).await["message"].clone();
    assert_eq!(message["id"], id.as_str());
    let aad = w.channel.as_bytes();
    let content = key.open(message["content"].as_str().unwrap(), aad).unwrap();
    assert_eq!(
        String::from_utf8(content).unwrap(),
        format_invocation_text(&roll, &args, None).unwrap()
    );
    let sidecar = key.open(message["command"].as_str().unwrap(), aad).unwrap();
    let data = decode_command_data(std::str::from_utf8(&sidecar).unwrap(), None).unwrap();
    assert_eq!(data.bot_id, canonical_bot_id(&bot.id));
    assert_eq!((data.name.as_str(), data.args), ("roll", args));

    // What alice sees of her own invocation is the same, decoded.
    let echo = w.alice.next_message(WAIT).await.unwrap();
    assert_eq!(echo.command.unwrap().name, "roll");

    // A bot reply sealed with the same key reaches alice as plaintext.
    let sealed = key.seal(b"you rolled 7", aad).unwrap();
    raw.request(
        OpCode::Send,
        json!({"channel_id": w.channel, "content": sealed, "reply_to": id}),
    )
    .await;
    let got = w
        .alice
        .wait_for_message(|m| m.author_id == bot.id, WAIT)
        .await
        .unwrap();
    assert_eq!(got.content, "you rolled 7");
}

#[tokio::test]
async fn raw_sidecars_and_formatting_errors() {
    let w = world().await;
    w.alice.open_channel(&w.channel).await.unwrap();
    w.alice
        .send_with_sidecar(&w.channel, "/roll 1", "{not json")
        .await
        .unwrap();
    let got = w.alice.next_message(WAIT).await.unwrap();
    assert_eq!(got.command_json.as_deref(), Some("{not json"));
    assert!(got.command.is_none());

    let roll = CommandDeclaration::new("roll", "Roll dice");
    let bad = CommandArgs::from([("nope".to_owned(), CommandArgValue::Integer(1))]);
    let err = w
        .alice
        .send_command(&w.channel, "b", &roll, &bad)
        .await
        .unwrap_err();
    assert!(matches!(err, TestUserError::Format(_)), "{err:?}");
}

#[tokio::test]
async fn refusals_and_missing_keys_are_errors() {
    let w = world().await;
    let err = w.alice.send_text(&w.channel, "x").await.unwrap_err();
    assert!(matches!(err, TestUserError::NoChannelKey(_)), "{err:?}");
    w.alice.open_channel(&w.channel).await.unwrap();
    w.server
        .deny_sends(&w.channel, Some(Denial::NoPermission))
        .unwrap();
    let err = w.alice.send_text(&w.channel, "x").await.unwrap_err();
    assert!(
        matches!(
            err,
            TestUserError::Refused {
                op: 30,
                code: -3,
                ..
            }
        ),
        "{err:?}"
    );
    let err = w.alice.join("no-such-channel").await.unwrap_err();
    assert!(
        matches!(err, TestUserError::Refused { code: -4, .. }),
        "{err:?}"
    );
    let err = TestUser::connect(&w.server.ws_url(), "bad-token")
        .await
        .unwrap_err();
    assert!(matches!(err, TestUserError::LoginRefused(-6)), "{err:?}");
}

#[tokio::test]
async fn joining_members_get_the_key_on_the_next_open() {
    let w = world().await;
    w.alice.open_channel(&w.channel).await.unwrap();
    let c = w.server.add_user("carol");
    let carol = TestUser::connect(&w.server.ws_url(), &c.token)
        .await
        .unwrap();
    assert!(carol.channels().is_empty());
    carol.join(&w.channel).await.unwrap();
    assert!(!carol.has_channel_key(&w.channel));
    assert_eq!(w.alice.open_channel(&w.channel).await.unwrap(), 2);
    carol.wait_for_key(&w.channel, WAIT).await.unwrap();
    w.bob.wait_for_key(&w.channel, WAIT).await.unwrap();
    carol.send_text(&w.channel, "hi all").await.unwrap();
    let got = w
        .bob
        .wait_for_message(|m| m.author_id == c.id, WAIT)
        .await
        .unwrap();
    assert_eq!(got.content, "hi all");
}

#[tokio::test]
async fn a_dropped_connection_shows_as_closed() {
    let w = world().await;
    w.alice.heartbeat().await.unwrap();
    w.server.drop_connections();
    w.server
        .wait_for(|s| s.connection_count() == 0, WAIT)
        .await
        .unwrap();
    // A request in flight or made after the end fails as closed, not by timeout.
    let last = w.alice.heartbeat().await;
    assert!(matches!(last, Err(TestUserError::Closed)), "{last:?}");
    assert!(matches!(
        w.bob.next_message(WAIT).await,
        Err(TestUserError::Closed)
    ));
}

#[tokio::test]
async fn two_users_talk_over_wss_with_the_generated_root() {
    let server = DevServer::start(DevServerConfig::default().realtime_tls(true))
        .await
        .unwrap();
    let url = server.wss_url().unwrap();
    assert!(
        url.starts_with("wss://127.0.0.1:") && url.ends_with("/ws"),
        "{url}"
    );
    assert_eq!(server.ws_url(), url);
    let root = server.realtime_root_certificate_der().unwrap();
    assert!(
        server.rest_root_certificate_der().is_none(),
        "the REST listener stays plain"
    );
    let channel = server
        .create_channel(&server.create_server("lobby"), "general")
        .unwrap();
    let (a, b) = (server.add_user("alice"), server.add_user("bob"));
    server.add_member(&channel, &a.id).unwrap();
    server.add_member(&channel, &b.id).unwrap();

    // Without the root there is no connection: wss without a root to trust is
    // refused, and a root of another service does not verify.
    let err = TestUser::connect(&url, &a.token).await.unwrap_err();
    let shown = err.to_string();
    assert!(
        matches!(err, TestUserError::Connect { .. })
            && shown.contains("connect_tls")
            && shown.contains(&url),
        "{shown}"
    );
    let other = DevServer::start(DevServerConfig::default().realtime_tls(true))
        .await
        .unwrap();
    let foreign = other.realtime_root_certificate_der().unwrap();
    let err = TestUser::connect_tls(&url, &a.token, &foreign)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("tls handshake failed"), "{err}");
    // Plain ws to a TLS listener is no WebSocket either.
    let plain = url.replacen("wss", "ws", 1);
    let err = TestUser::connect(&plain, &a.token).await.unwrap_err();
    assert!(matches!(err, TestUserError::Connect { .. }), "{err:?}");
    assert_eq!(server.view(|s| s.session_count()), 0);

    // With it, alice (by IP) and bob (by name: the certificate covers
    // `localhost` too) talk end to end over TLS.
    let alice = TestUser::connect_tls(&url, &a.token, &root).await.unwrap();
    let by_name = url.replace("127.0.0.1", "localhost");
    let bob = TestUser::connect_tls(&by_name, &b.token, &root)
        .await
        .unwrap();
    alice.open_channel(&channel).await.unwrap();
    bob.wait_for_key(&channel, WAIT).await.unwrap();
    alice.send_text(&channel, "over tls").await.unwrap();
    let got = bob
        .wait_for_message(|m| m.author_id == alice.user_id(), WAIT)
        .await
        .unwrap();
    assert_eq!(got.content, "over tls");
    assert_eq!(server.view(|s| s.session_count()), 2);
    // The PEM form is the same root.
    let pem = server.realtime_root_certificate_pem().unwrap();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
}

/// Sends "0", "1", … as `n` messages (replies to `reply_to` if given), a
/// few in flight at a time; their frames leave in order, so the service
/// stores them in that order.
async fn send_numbered(user: &TestUser, channel: &str, n: usize, reply_to: Option<&str>) {
    let numbers: Vec<_> = (0..n).map(|i| i.to_string()).collect();
    for chunk in numbers.chunks(32) {
        let sends = chunk.iter().map(|i| async move {
            match reply_to {
                Some(id) => user.reply_to(channel, id, i).await,
                None => user.send_text(channel, i).await,
            }
        });
        for sent in futures_util::future::join_all(sends).await {
            sent.unwrap();
        }
    }
}

#[tokio::test]
async fn a_user_that_never_reads_holds_the_bound_and_its_requests_still_get_replies() {
    let w = world().await;
    w.alice.open_channel(&w.channel).await.unwrap();
    w.bob.wait_for_key(&w.channel, WAIT).await.unwrap();
    let extra = 50;
    let total = MAX_QUEUED_MESSAGES + extra;
    send_numbered(&w.alice, &w.channel, total, None).await;
    // bob's queue is full and nobody reads it, yet his requests are answered
    // at once: the replies come behind the pushes on the same socket. Once
    // this one is in, his reader has seen every push.
    tokio::time::timeout(WAIT, w.bob.heartbeat())
        .await
        .expect("a full message queue held up a reply")
        .unwrap();
    assert_eq!(w.bob.messages_dropped(), extra as u64);
    let newest = w.bob.history(&w.channel).await.unwrap().messages;
    assert_eq!(newest.last().unwrap().content, (total - 1).to_string());
    // alice never reads either: her own messages were bounded the same way.
    w.alice.heartbeat().await.unwrap();
    assert_eq!(w.alice.messages_dropped(), extra as u64);

    // The oldest are kept, the newest were dropped.
    for i in 0..MAX_QUEUED_MESSAGES {
        assert_eq!(
            w.bob.next_message(WAIT).await.unwrap().content,
            i.to_string()
        );
    }
    let empty = w.bob.next_message(Duration::from_millis(100)).await;
    assert!(matches!(empty, Err(TestUserError::Timeout(_))), "{empty:?}");
    // Read, the queue takes messages again.
    w.alice.send_text(&w.channel, "after").await.unwrap();
    assert_eq!(w.bob.next_message(WAIT).await.unwrap().content, "after");
    assert_eq!(w.bob.messages_dropped(), extra as u64);
}

#[tokio::test]
async fn frames_not_yet_sent_are_bounded_in_bytes() {
    let w = world().await;
    w.alice.open_channel(&w.channel).await.unwrap();
    let pad = "p".repeat(64 * 1024);
    let frame = format!(r#"{{"op":12,"d":{{"pad":"{pad}"}}}}"#);
    let fits = MAX_UNSENT_BYTES / frame.len();
    // The test's runtime has one thread and this loop never awaits, so the
    // writer task sends nothing meanwhile: every frame stays queued.
    for _ in 0..fits {
        w.alice.send_raw(&frame).unwrap();
    }
    let refused = w.alice.send_raw(&frame).unwrap_err();
    let TestUserError::SendQueueFull {
        queued,
        frame: size,
    } = refused
    else {
        panic!("{refused:?}");
    };
    assert_eq!((queued, size), (fits * frame.len(), frame.len()));
    assert!(
        refused.to_string().contains("MAX_UNSENT_BYTES"),
        "{refused}"
    );
    // A request that does not fit is refused the same way, at once.
    let room = MAX_UNSENT_BYTES - queued;
    let refused = w.alice.send_text(&w.channel, &"b".repeat(room)).await;
    assert!(
        matches!(refused, Err(TestUserError::SendQueueFull { .. })),
        "{refused:?}"
    );
    // Once the writer runs the queue drains: the history reply comes after
    // the service has read every frame sent before its request.
    w.alice.history(&w.channel).await.unwrap();
    for _ in 0..fits {
        w.alice.send_raw(&frame).unwrap();
    }
    // The refused send left no reply slot behind to take this one's reply.
    tokio::time::timeout(WAIT, w.alice.send_text(&w.channel, "fits"))
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn notifications_past_the_bound_are_counted_not_kept() {
    // Every reply must still find the message it replies to.
    let w = world_with(Limits::default().channel_history(2 * MAX_KEPT_NOTIFICATIONS)).await;
    w.alice.open_channel(&w.channel).await.unwrap();
    w.bob.wait_for_key(&w.channel, WAIT).await.unwrap();
    let first = w.alice.send_text(&w.channel, "reply to me").await.unwrap();
    let extra = 10;
    send_numbered(
        &w.bob,
        &w.channel,
        MAX_KEPT_NOTIFICATIONS + extra,
        Some(&first),
    )
    .await;
    // Each notification comes before this reply on alice's socket.
    w.alice.heartbeat().await.unwrap();
    let kept = w.alice.notifications();
    assert_eq!(kept.len(), MAX_KEPT_NOTIFICATIONS);
    assert_eq!(w.alice.notifications_dropped(), extra as u64);
    // The first ones are kept.
    let records = w.server.notifications_for(w.alice.user_id());
    assert_eq!(records.len(), MAX_KEPT_NOTIFICATIONS + extra);
    assert_eq!(kept[..], records[..MAX_KEPT_NOTIFICATIONS]);
}
