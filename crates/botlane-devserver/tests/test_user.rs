//! `TestUser` end to end: two humans, and a raw bot that opens what they seal.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use botlane::{
    canonical_bot_id, decode_command_data, format_invocation_text, CommandArgValue, CommandArgs,
    CommandDeclaration, CommandOption, CommandOptionType,
};
use botlane_devserver::{Denial, DevServer, TestUser, TestUserError};
use botlane_proto::crypto::{ChannelKey, IdentityKeyPair, WrappedKey};
use botlane_proto::OpCode;
use common::Raw;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(5);

struct World {
    server: DevServer,
    channel: String,
    alice: TestUser,
    bob: TestUser,
}

/// alice and bob, both logged in, both members of one channel.
async fn world() -> World {
    let server = DevServer::start(Default::default()).await.unwrap();
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
    let contents: Vec<_> = history.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["hello bob 👋", "hi alice"]);
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
    use botlane_devserver::DevServerConfig;

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
