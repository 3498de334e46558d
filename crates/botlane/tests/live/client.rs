//! The client against the real devserver over loopback WebSockets: login,
//! menu, both invocation lanes and the dispatch rule, handler failures,
//! denials, history, emoji, correlation under concurrency, reconnects, and
//! that the service only ever sees ciphertext.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use botlane::{
    encode_command_data, ClientError, CommandArgValue, CommandArgs, CommandContext, CommandData,
    CommandDeclaration, CommandErrorReason, CommandOption, CommandOptionType, CommandSource, Event,
    EventRecvError, ParseErrorKind,
};
use botlane_devserver::{Denial, Direction};
use botlane_proto::OpCode;
use support::fixtures::roll;
use support::{command_error_event, message_event, next_event, send_rejected_event, World, WAIT};
use tokio::sync::Notify;

/// Registers `roll` (replies with what it got), `ping`, `fail` and `panic`.
fn register_commands(client: &botlane::Client) {
    client
        .commands()
        .register(roll(), |ctx: CommandContext| async move {
            let text = format!(
                "count={:?} sides={:?} label={:?} source={:?}",
                ctx.get_integer("count"),
                ctx.args().get("sides"),
                ctx.get_string("label"),
                ctx.source()
            );
            ctx.reply(&text).await
        })
        .unwrap()
        .register(
            CommandDeclaration::new("ping", "Pong"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("fail", "Fails"),
            |_ctx: CommandContext| async move { Err(std::io::Error::other("boom")) },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("panic", "Panics"),
            |_ctx: CommandContext| async move {
                if true {
                    panic!("kaboom");
                }
                Ok::<(), std::io::Error>(())
            },
        )
        .unwrap();
}

/// Registers `name`, whose handler replies `reply` once the returned gate is notified.
fn register_gated(client: &botlane::Client, name: &str, reply: &'static str) -> Arc<Notify> {
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    client
        .commands()
        .register(
            CommandDeclaration::new(name, "Replies when released"),
            move |ctx: CommandContext| {
                let gate = gate.clone();
                async move {
                    gate.notified().await;
                    ctx.reply(reply).await
                }
            },
        )
        .unwrap();
    release
}

/// Sends `/ping` and waits for the bot's `pong`: proof the session works.
async fn ping_pong(alice: &botlane_devserver::TestUser, channel: &str) {
    alice.send_text(channel, "/ping").await.unwrap();
    alice
        .wait_for_message(|m| m.content == "pong", WAIT)
        .await
        .unwrap();
}

fn sidecar(bot_id: &str, name: &str, args: &[(&str, CommandArgValue)]) -> String {
    encode_command_data(&CommandData {
        bot_id: bot_id.to_owned(),
        name: name.to_owned(),
        args: args
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    })
}

#[tokio::test]
async fn login_publishes_the_menu_without_its_hash() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    client.login().await.unwrap();
    next_event(
        &mut events,
        |e| matches!(e, Event::Ready { bot_id } if *bot_id == world.bot.id),
    )
    .await;
    assert_eq!(client.bot_id().as_deref(), Some(world.bot.id.as_str()));

    let menu = world
        .server
        .menu(&world.bot.id)
        .expect("menu stored at login");
    let names: Vec<_> = menu.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fail", "panic", "ping", "roll"]);
    let roll = menu
        .command("ROLL")
        .expect("stored casefolded, found case-insensitively");
    assert_eq!(roll.options.len(), 3);
    assert!(roll.options[0].required);

    let hash = client.commands().snapshot().hash();
    let publishes: Vec<_> = world
        .server
        .frames()
        .into_iter()
        .filter(|f| f.is(Direction::Received, OpCode::MenuPublish))
        .collect();
    assert_eq!(publishes.len(), 1);
    assert!(
        !publishes[0].payload.contains(&hash),
        "the hash never goes on the wire"
    );
    assert_eq!(
        publishes[0].payload,
        format!(
            "{{\"menu\":{}}}",
            client.commands().snapshot().canonical_menu_json()
        )
    );
}

/// A batch of registrations that registers nothing.
fn unchanged(_: &mut botlane::CommandRegistry) -> Result<(), std::convert::Infallible> {
    Ok(())
}

#[tokio::test]
async fn a_register_after_login_republishes_only_when_the_hash_changes() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    client.login().await.unwrap();
    let publishes = || support::received(&world.server, OpCode::MenuPublish);
    client.commands().update(unchanged).unwrap();
    client
        .commands()
        .register(
            CommandDeclaration::new("late", "Added after login"),
            |_ctx| async { Ok::<(), std::io::Error>(()) },
        )
        .unwrap();
    world
        .server
        .wait_for(
            |s| {
                s.menu(&world.bot.id)
                    .is_some_and(|m| m.command("late").is_some())
            },
            WAIT,
        )
        .await
        .unwrap();
    // A batch that changes nothing, then a barrier request: nothing more is published.
    client.commands().update(unchanged).unwrap();
    client.fetch_emojis().await.unwrap();
    assert_eq!(publishes(), 2);
}

#[tokio::test]
async fn a_text_invocation_runs_the_handler_and_the_reply_notifies_the_user() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    let alice = world.start(&client).await;

    let sent = alice
        .send_text(&world.channel, "/ROLL 2 6 fire damage")
        .await
        .unwrap();
    let seen = message_event(&mut events, &sent).await;
    let invocation = seen.command.expect("a live invocation is recognised");
    assert_eq!(invocation.name, "roll");
    assert_eq!(invocation.source, CommandSource::Text);
    assert_eq!(
        invocation.args["label"],
        CommandArgValue::from("fire damage")
    );

    let reply = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert_eq!(
        reply.content,
        "count=Some(2) sides=Some(Integer(6)) label=Some(\"fire damage\") source=Text"
    );
    assert_eq!(reply.reply_to.as_deref(), Some(sent.as_str()));
    let notes = world.server.notifications_for(&world.user.id);
    assert!(
        notes
            .iter()
            .any(|n| n.kind == "reply" && n.message_id == reply.id),
        "replied-to-you notification: {notes:?}"
    );
}

#[tokio::test]
async fn a_structured_invocation_gets_coerced_arguments() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    let alice = world.start(&client).await;

    // A JavaScript peer may send the integer as a string and the id dashed and upper-case.
    let dashed = world.bot.id.to_uppercase();
    let payload = sidecar(
        &dashed,
        "roll",
        &[
            ("count", CommandArgValue::from("3")),
            ("sides", CommandArgValue::Number(20.0)),
        ],
    );
    let sent = alice
        .send_with_sidecar(&world.channel, "/roll 3 20", &payload)
        .await
        .unwrap();
    let invocation = message_event(&mut events, &sent).await.command.unwrap();
    assert_eq!(invocation.source, CommandSource::Structured);
    assert_eq!(invocation.args["count"], CommandArgValue::Integer(3));
    assert_eq!(invocation.args["sides"], CommandArgValue::Integer(20));
    let reply = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert!(
        reply
            .content
            .starts_with("count=Some(3) sides=Some(Integer(20))"),
        "{}",
        reply.content
    );
}

#[tokio::test]
async fn the_dispatch_rule_for_sidecars() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    let alice = world.start(&client).await;
    let other_bot = world.server.add_bot("otherbot");

    // Well-formed, addressed to another bot: dropped, no text fallback.
    let to_other = sidecar(
        &other_bot.id,
        "roll",
        &[("count", CommandArgValue::Integer(1))],
    );
    let id = alice
        .send_with_sidecar(&world.channel, "/roll 1", &to_other)
        .await
        .unwrap();
    assert_eq!(message_event(&mut events, &id).await.command, None);

    // Malformed: the text lane decides.
    let id = alice
        .send_with_sidecar(&world.channel, "/roll 4", "{not json")
        .await
        .unwrap();
    let invocation = message_event(&mut events, &id).await.command.unwrap();
    assert_eq!(invocation.source, CommandSource::Text);
    assert_eq!(invocation.args["count"], CommandArgValue::Integer(4));

    // A wrong version is malformed too.
    let bad_version = sidecar(&world.bot.id, "roll", &[]).replace("\"v\":1", "\"v\":2");
    let id = alice
        .send_with_sidecar(&world.channel, "/roll 5", &bad_version)
        .await
        .unwrap();
    assert_eq!(
        message_event(&mut events, &id)
            .await
            .command
            .unwrap()
            .source,
        CommandSource::Text
    );

    // Both lanes, disagreeing: structured wins.
    let to_us = sidecar(
        &world.bot.id,
        "roll",
        &[("count", CommandArgValue::Integer(9))],
    );
    let id = alice
        .send_with_sidecar(&world.channel, "/roll 1", &to_us)
        .await
        .unwrap();
    let invocation = message_event(&mut events, &id).await.command.unwrap();
    assert_eq!(invocation.source, CommandSource::Structured);
    assert_eq!(invocation.args["count"], CommandArgValue::Integer(9));

    // Addressed to us with arguments that do not fit: an error naming the command.
    let unfit = sidecar(
        &world.bot.id,
        "roll",
        &[("count", CommandArgValue::from("many"))],
    );
    let id = alice
        .send_with_sidecar(&world.channel, "/roll many", &unfit)
        .await
        .unwrap();
    let error = command_error_event(&mut events, &id).await;
    assert_eq!(error.reason, CommandErrorReason::Arguments);
    assert_eq!(error.command, "roll");
}

#[tokio::test]
async fn own_messages_and_history_never_carry_a_command() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    let alice = world.start(&client).await;

    let from_alice = alice.send_text(&world.channel, "/ping").await.unwrap();
    assert!(message_event(&mut events, &from_alice)
        .await
        .command
        .is_some());
    alice
        .wait_for_message(|m| m.content == "pong", WAIT)
        .await
        .unwrap();

    client.send(&world.channel, "/ping").await.unwrap();
    let own = next_event(
        &mut events,
        |e| matches!(e, Event::Message(m) if m.author_id == world.bot.id && m.content == "/ping"),
    )
    .await;
    let Event::Message(own) = own else {
        unreachable!()
    };
    assert_eq!(own.command, None);

    let history = client.history(&world.channel, 50).await.unwrap();
    assert!(history
        .iter()
        .any(|m| m.id == from_alice && m.content == "/ping"));
    assert!(history.iter().all(|m| m.command.is_none()));
}

#[tokio::test]
async fn handler_errors_panics_and_parse_errors_become_command_errors() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    let alice = world.start(&client).await;

    let id = alice.send_text(&world.channel, "/fail").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Handler);
    assert_eq!(e.error.as_ref().unwrap().to_string(), "boom");

    let id = alice.send_text(&world.channel, "/panic").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Handler);
    assert!(e.error.as_ref().unwrap().to_string().contains("kaboom"));

    let id = alice.send_text(&world.channel, "/roll two").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Parse);
    let parse = e.parse_error.unwrap();
    assert_eq!(parse.option(), Some("count"));
    assert!(
        matches!(parse.kind(), ParseErrorKind::InvalidValue { .. }),
        "{:?}",
        parse.kind()
    );
    assert_eq!(parse.usage(), "/roll <count> [sides] [label]");

    // The session survived all three: a later command still works.
    ping_pong(&alice, &world.channel).await;
}

#[tokio::test]
async fn a_slow_handler_does_not_hold_up_other_messages() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let release = register_gated(&client, "slow", "slow done");
    let alice = world.start(&client).await;
    alice.send_text(&world.channel, "/slow").await.unwrap();
    alice.send_text(&world.channel, "/ping").await.unwrap();
    let first = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert_eq!(first.content, "pong");
    release.notify_one();
    alice
        .wait_for_message(|m| m.content == "slow done", WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_denied_send_is_an_event_not_an_error() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let mut events = client.events();
    let _alice = world.start(&client).await;
    for (denial, code) in [
        (Denial::NoPermission, -3),
        (Denial::RateLimited, -9),
        (Denial::UnknownChannel, -4),
    ] {
        world
            .server
            .deny_sends(&world.channel, Some(denial))
            .unwrap();
        client
            .send(&world.channel, "hello?")
            .await
            .expect("a denial does not fail the send");
        let rejected = send_rejected_event(&mut events).await;
        assert_eq!(rejected.code, code);
        assert_eq!(rejected.channel_id, world.channel);
    }
}

#[tokio::test]
async fn a_denied_reply_from_a_handler_is_an_event() {
    let world = World::new().await;
    let client = world.client();
    let release = register_gated(&client, "gated", "released");
    let mut events = client.events();
    let alice = world.start(&client).await;
    let id = alice.send_text(&world.channel, "/gated").await.unwrap();
    message_event(&mut events, &id).await;
    world
        .server
        .deny_sends(&world.channel, Some(Denial::NoPermission))
        .unwrap();
    release.notify_one();
    let rejected = send_rejected_event(&mut events).await;
    assert_eq!(rejected.reply_to.as_deref(), Some(id.as_str()));
    assert_eq!(rejected.code, -3);
}

#[tokio::test]
async fn an_oversized_sidecar_is_refused_before_any_frame() {
    let world = World::new().await;
    let client = world.client();
    let _alice = world.start(&client).await;
    let sends_before = support::received(&world.server, OpCode::Send);
    let echo = CommandDeclaration::new("echo", "Echo")
        .option(CommandOption::new("text", "What", CommandOptionType::String).required(true));
    let args = CommandArgs::from([("text".to_owned(), CommandArgValue::from("x".repeat(2000)))]);
    let err = client
        .send_command(&world.channel, &world.bot.id, &echo, &args)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::SidecarTooLarge { max: 2048, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("MAX_COMMAND_WIRE"));
    let sends_after = support::received(&world.server, OpCode::Send);
    assert_eq!(sends_before, sends_after);

    // A small one goes through, with the line as content.
    let args = CommandArgs::from([("text".to_owned(), CommandArgValue::from("hi there"))]);
    client
        .send_command(&world.channel, &world.bot.id, &echo, &args)
        .await
        .unwrap();
    let stored = world.server.messages(&world.channel);
    assert!(stored.last().unwrap().command.is_some());
}

/// A request the service would close the session over (a message over
/// `MAX_FRAME_BYTES` gets 1009) fails alone, before any frame, naming the
/// limit; the session goes on.
#[tokio::test]
async fn a_request_over_the_frame_limit_fails_alone_before_any_frame() {
    let world = World::new().await;
    let client = world.client();
    client.login().await.unwrap();
    let frames_before = world.server.frames().len();
    let err = client
        .history(&"x".repeat(botlane_proto::MAX_FRAME_BYTES), 1)
        .await
        .unwrap_err();
    let ClientError::RequestTooLarge { opcode, len, max } = err else {
        panic!("{err:?}");
    };
    assert_eq!((opcode, max), (40, 1_048_576));
    assert!(len > max, "{len}");
    assert_eq!(
        err.to_string(),
        format!(
            "the request of opcode 40 is {len} bytes, over the limit of 1048576 bytes for one \
             message (MAX_FRAME_BYTES); it was not sent"
        )
    );
    assert_eq!(
        world.server.frames().len(),
        frames_before,
        "nothing was sent"
    );
    // The same session answers the next request.
    assert!(client.fetch_emojis().await.is_ok());
    assert_eq!(client.stats().sessions, 1);
}

#[tokio::test]
async fn fetch_emojis_returns_the_static_unicode_catalog() {
    let world = World::new().await;
    let client = world.client();
    client.login().await.unwrap();
    let emojis = client.fetch_emojis().await.unwrap();
    assert!(emojis.len() >= 10);
    assert!(emojis.iter().any(|e| e.emoji == "👍"));
    assert!(
        emojis.iter().all(|e| !e.emoji.is_ascii()),
        "unicode emoji only, no custom ones"
    );
}

#[tokio::test]
async fn replies_reach_the_right_callers_under_concurrency() {
    let world = World::new().await;
    let client = world.client();
    // Three channels with 1, 2 and 3 messages. The bot is a member before it
    // logs in: it accepts a channel key only for a channel it knows it is in
    // (from `ready`, or a `channel_added` push).
    let space = world.server.create_server("more");
    let mut channels = Vec::new();
    for n in 1..=3 {
        let channel = world
            .server
            .create_channel(&space, &format!("c{n}"))
            .unwrap();
        world.server.add_member(&channel, &world.bot.id).unwrap();
        world.server.add_member(&channel, &world.user.id).unwrap();
        channels.push((channel, n));
    }
    let alice = world.start(&client).await;
    for (channel, n) in &channels {
        let (channel, n) = (channel.clone(), *n);
        alice.open_channel(&channel).await.unwrap();
        for i in 0..n {
            alice
                .send_text(&channel, &format!("message {i}"))
                .await
                .unwrap();
        }
    }
    let history = channels.iter().cycle().take(60).map(|(channel, n)| {
        let client = client.clone();
        let channel = channel.clone();
        let n = *n;
        async move { (client.history(&channel, 50).await.unwrap().len(), n) }
    });
    let emojis = (0..60).map(|_| {
        let client = client.clone();
        async move { client.fetch_emojis().await.unwrap().len() }
    });
    let (histories, emojis) = tokio::join!(
        futures_util::future::join_all(history),
        futures_util::future::join_all(emojis)
    );
    for (got, expected) in histories {
        assert_eq!(got, expected);
    }
    let catalog = client.fetch_emojis().await.unwrap().len();
    assert!(emojis.iter().all(|n| *n == catalog));
}

#[tokio::test]
async fn the_client_reconnects_and_republishes_after_a_drop() {
    let world = World::new().await;
    let options = world
        .options()
        .reconnect_delays(Duration::from_millis(20), Duration::from_millis(200))
        .request_timeout(Duration::from_secs(60));
    let client = botlane::Client::new(options).unwrap();
    register_commands(&client);
    let mut events = client.events();
    client.login().await.unwrap();

    // Requests in flight when the connection dies fail fast or succeed; none hangs.
    let in_flight: Vec<_> = (0..20)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.fetch_emojis().await })
        })
        .collect();
    world.server.drop_connections();
    for task in in_flight {
        match tokio::time::timeout(WAIT, task)
            .await
            .expect("no request hangs")
            .unwrap()
        {
            Ok(_) | Err(ClientError::ConnectionClosed { .. } | ClientError::NotConnected) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    next_event(&mut events, |e| {
        matches!(
            e,
            Event::Disconnected {
                will_reconnect: true,
                ..
            }
        )
    })
    .await;
    next_event(&mut events, |e| matches!(e, Event::Reconnected)).await;
    let publishes = support::received(&world.server, OpCode::MenuPublish);
    assert_eq!(
        publishes, 2,
        "the menu is published again on the new session"
    );

    let alice = world.alice().await;
    ping_pong(&alice, &world.channel).await;
}

#[tokio::test]
async fn the_service_only_ever_sees_ciphertext() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let alice = world.start(&client).await;
    alice
        .send_text(&world.channel, "/roll 2 6 the secret plan")
        .await
        .unwrap();
    let reply = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert!(reply.content.contains("the secret plan"));
    for stored in world.server.messages(&world.channel) {
        assert!(
            !stored.content.contains("secret"),
            "stored content is sealed"
        );
    }
    for frame in world.server.frames() {
        assert!(
            !frame.payload.contains("secret plan"),
            "no frame carries plaintext"
        );
        assert!(
            !frame.payload.contains(&world.bot.token),
            "no frame shows the token"
        );
    }
}

#[tokio::test]
async fn a_client_logs_in_once() {
    let world = World::new().await;
    let client = world.client();
    client.login().await.unwrap();
    let err = client.login().await.unwrap_err();
    assert!(matches!(err, ClientError::AlreadyLoggedIn), "{err}");
    // The first session is untouched: still one connection for the bot.
    client.fetch_emojis().await.unwrap();
    assert_eq!(world.server.view(|s| s.connection_count()), 1);
}

#[tokio::test]
async fn a_refused_token_fails_login_clearly() {
    let world = World::new().await;
    let options = botlane::ClientOptions::new(
        "not-a-token",
        world.dir.path().join("k"),
        world.server.ws_url(),
    );
    let client = botlane::Client::new(options).unwrap();
    let err = client.login().await.unwrap_err();
    assert!(matches!(err, ClientError::LoginRefused), "{err}");
    assert!(!err.to_string().contains("not-a-token"));
    // A failed login may be retried (and fails the same way).
    let again = client.login().await.unwrap_err();
    assert!(matches!(again, ClientError::LoginRefused), "{again}");
}

#[tokio::test]
async fn the_keystore_keeps_the_identity_and_channel_keys_across_restarts() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    let alice = world.start(&client).await;
    ping_pong(&alice, &world.channel).await;
    // `close` waits for the keystore's coalesced write; a process exiting
    // right after `shutdown` could lose the key received last.
    client.close().await.unwrap();

    // A new process with the same keystore reads the channel without a new key share.
    let client = world.client();
    register_commands(&client);
    client.login().await.unwrap();
    alice.send_text(&world.channel, "/ping").await.unwrap();
    alice
        .wait_for_message(|m| m.content == "pong" && m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_handler_reaches_the_rest_lane_through_its_context() {
    let world = World::new().await;
    let client = world.client();
    client
        .commands()
        .register(
            CommandDeclaration::new("files", "List files"),
            |ctx: CommandContext| async move {
                let listed: Result<serde_json::Value, _> = ctx
                    .rest()?
                    .json(botlane::rest::Method::GET, "/api/files/list", None)
                    .await;
                let text = match listed {
                    Ok(v) => format!("{} files", v["files"].as_array().map_or(0, Vec::len)),
                    Err(e) => e.to_string(),
                };
                ctx.reply(&text).await
            },
        )
        .unwrap();
    let alice = world.start(&client).await;
    alice.send_text(&world.channel, "/files").await.unwrap();
    let reply = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert!(
        reply.content.contains("BOT_REST_CREDENTIALS"),
        "{}",
        reply.content
    );
    world.server.set_rest_credentials(true);
    alice.send_text(&world.channel, "/files").await.unwrap();
    let reply = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert!(reply.content.ends_with(" files"), "{}", reply.content);
}

#[tokio::test]
async fn a_plain_channel_send_is_not_a_reply_and_notifies_nobody() {
    let world = World::new().await;
    let client = world.client();
    client
        .commands()
        .register(
            CommandDeclaration::new("announce", "Post a plain message"),
            |ctx: CommandContext| async move { ctx.message().channel().send("announcement").await },
        )
        .unwrap();
    let alice = world.start(&client).await;
    alice.send_text(&world.channel, "/announce").await.unwrap();
    let posted = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert_eq!(posted.content, "announcement");
    assert_eq!(posted.reply_to, None);
    assert!(world.server.notifications_for(&world.user.id).is_empty());
}

// The spec: a denied `send_command` arrives as `sendRejected`, like any send.
#[tokio::test]
async fn a_denied_send_command_is_a_send_rejected_event() {
    let world = World::new().await;
    let client = world.client();
    let mut events = client.events();
    let _alice = world.start(&client).await;
    let echo = CommandDeclaration::new("echo", "Echo")
        .option(CommandOption::new("text", "What", CommandOptionType::String).required(true));
    let args = CommandArgs::from([("text".to_owned(), CommandArgValue::from("hi"))]);
    world
        .server
        .deny_sends(&world.channel, Some(Denial::RateLimited))
        .unwrap();
    // The channel key reaches the bot shortly after alice shares it.
    tokio::time::timeout(WAIT, async {
        loop {
            match client
                .send_command(&world.channel, &world.bot.id, &echo, &args)
                .await
            {
                Err(ClientError::NoChannelKey { .. }) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                other => return other,
            }
        }
    })
    .await
    .unwrap()
    .expect("a denial does not fail the call");
    let rejected = send_rejected_event(&mut events).await;
    assert_eq!(
        (
            rejected.code,
            rejected.channel_id.as_str(),
            rejected.reply_to
        ),
        (-9, world.channel.as_str(), None)
    );
    assert!(world.server.messages(&world.channel).is_empty());
    let sends = support::received(&world.server, OpCode::Send);
    assert_eq!(sends, 1, "the invocation was sent once and denied");
}

#[tokio::test]
async fn a_batch_of_registrations_after_login_is_published_once() {
    let world = World::new().await;
    let client = world.client();
    register_commands(&client);
    client.login().await.unwrap();
    let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    client
        .commands()
        .update(|registry| {
            registry
                .register(CommandDeclaration::new("one", "1"), ok)?
                .register(CommandDeclaration::new("two", "2"), ok)?
                .register(CommandDeclaration::new("three", "3"), ok)?;
            Ok::<(), botlane::DeclarationError>(())
        })
        .unwrap();
    world
        .server
        .wait_for(
            |s| {
                s.menu(&world.bot.id)
                    .is_some_and(|m| m.command("three").is_some())
            },
            WAIT,
        )
        .await
        .unwrap();
    client.fetch_emojis().await.unwrap();
    let publishes = support::received(&world.server, OpCode::MenuPublish);
    assert_eq!(publishes, 2, "the login's, then one for the batch");
}

#[tokio::test]
async fn registrations_from_many_tasks_after_login_are_all_kept_and_published() {
    let world = World::new().await;
    let client = world.client();
    client.login().await.unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .commands()
                    .register(
                        CommandDeclaration::new(format!("cmd{i}"), "D"),
                        |_ctx| async { Ok::<(), std::io::Error>(()) },
                    )
                    .map(drop)
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let registry = client.commands().snapshot();
    assert_eq!(registry.len(), 16, "no registration was lost");
    world
        .server
        .wait_for(
            |s| {
                s.menu(&world.bot.id)
                    .is_some_and(|m| m.commands.len() == 16)
            },
            WAIT,
        )
        .await
        .unwrap();
    client.fetch_emojis().await.unwrap();
    let publishes: Vec<_> = world
        .server
        .frames()
        .into_iter()
        .filter(|f| f.is(Direction::Received, OpCode::MenuPublish))
        .collect();
    assert!(
        publishes.len() <= 17,
        "at most one per change: {}",
        publishes.len()
    );
    assert_eq!(
        publishes.last().unwrap().payload,
        format!("{{\"menu\":{}}}", registry.canonical_menu_json()),
        "the last menu published is the final registry's"
    );
}

#[tokio::test]
async fn a_handler_s_context_carries_the_prefix_the_server_and_the_registry() {
    let world = World::new().await;
    let client = botlane::Client::new(world.options().command_prefix("!")).unwrap();
    client
        .commands()
        .update(|registry| {
            registry
                .register(
                    CommandDeclaration::new("where", "Where am I"),
                    |ctx: CommandContext| async move {
                        let text = format!(
                            "prefix={} server={:?} usage={:?}",
                            ctx.prefix(),
                            ctx.server_id(),
                            ctx.usage()
                        );
                        ctx.reply(&text).await
                    },
                )
                .unwrap()
                .enable_help()
                .map(drop)
        })
        .unwrap();
    let alice = world.start(&client).await;
    let server_id = client
        .channels()
        .into_iter()
        .find(|c| c.id == world.channel)
        .map(|c| c.server_id);
    assert!(server_id.is_some(), "the channel is in the client's list");

    alice.send_text(&world.channel, "!where").await.unwrap();
    let reply = alice
        .wait_for_message(|m| m.content.starts_with("prefix="), WAIT)
        .await
        .unwrap();
    assert_eq!(
        reply.content,
        format!("prefix=! server={server_id:?} usage=Some(\"!where\")")
    );

    // The built-in help reads the registry snapshot its context carries.
    alice.send_text(&world.channel, "!help").await.unwrap();
    let help = alice
        .wait_for_message(
            |m| m.author_id == world.bot.id && m.content.contains("Where am I"),
            WAIT,
        )
        .await
        .unwrap();
    assert!(
        help.content.contains("!where - Where am I"),
        "{}",
        help.content
    );
}

/// The last handle of a client dropped without `shutdown` or `close`: the
/// client shuts down rather than stay connected, and reconnecting, for as
/// long as the runtime runs. A clone keeps it running; its REST lane and
/// an event subscription do not.
#[tokio::test]
async fn dropping_the_last_handle_shuts_the_client_down() {
    let world = World::new().await;
    let client = world.client();
    let mut events = client.events();
    let rest = client.rest();
    client.login().await.unwrap();
    let clone = client.clone();
    drop(client);
    clone.fetch_emojis().await.unwrap();
    assert_eq!(world.server.view(|s| s.connection_count()), 1);
    drop(clone);
    // Every event sender is gone once the client's tasks have ended.
    tokio::time::timeout(WAIT, async {
        loop {
            if let Err(EventRecvError::Closed) = events.recv().await {
                break;
            }
        }
    })
    .await
    .expect("the client's tasks end");
    tokio::time::timeout(WAIT, async {
        while world.server.view(|s| s.connection_count()) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the service sees the connection closed");
    let err = rest
        .json::<serde_json::Value>(botlane::rest::Method::GET, "/api/files/list", None)
        .await
        .unwrap_err();
    assert!(matches!(err, botlane::RestError::NotConnected), "{err:?}");
}

/// `close` ends the subscriptions too, while the application still holds
/// the client: an event loop in `main` ends when a command (or a signal
/// handler) closes the bot, as `EventRecvError::Closed` says it does.
#[tokio::test]
async fn closing_a_client_ends_its_subscriptions_while_a_handle_remains() {
    let world = World::new().await;
    let client = world.client();
    let mut events = client.events();
    client.login().await.unwrap();
    client.close().await.unwrap();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Err(EventRecvError::Closed) = events.recv().await {
                break;
            }
        }
    })
    .await
    .expect("a closed client's subscribers are closed");
    // A subscription taken after the close is closed at once.
    let mut late = client.events();
    assert_eq!(late.recv().await.unwrap_err(), EventRecvError::Closed);
}

/// The same for `shutdown`, which does not wait: the subscriptions end
/// once the connection has ended.
#[tokio::test]
async fn shutting_a_client_down_ends_its_subscriptions_while_a_handle_remains() {
    let world = World::new().await;
    let client = world.client();
    let mut events = client.events();
    client.login().await.unwrap();
    client.shutdown();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Err(EventRecvError::Closed) = events.recv().await {
                break;
            }
        }
    })
    .await
    .expect("a shut down client's subscribers are closed");
}

/// A handler that needs its client holds a `WeakClient`: it reaches the
/// client while the application holds it, and does not keep it running
/// once the application lets go (a `Client` clone there would be a cycle).
#[tokio::test]
async fn a_handler_with_a_weak_client_uses_it_and_does_not_keep_it_running() {
    let world = World::new().await;
    let client = world.client();
    let weak = client.downgrade();
    client
        .commands()
        .register(
            CommandDeclaration::new("emojis", "How many emojis the catalog has"),
            move |ctx: CommandContext| {
                let weak = weak.clone();
                async move {
                    let client = weak.upgrade().ok_or("the client is gone")?;
                    let emojis = client.fetch_emojis().await?;
                    ctx.reply(&format!("{} emojis", emojis.len())).await?;
                    Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
                }
            },
        )
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;
    alice.send_text(&world.channel, "/emojis").await.unwrap();
    let answer = support::bot_says(&alice, &world).await;
    assert!(answer.content.ends_with(" emojis"), "{}", answer.content);
    drop(client);
    tokio::time::timeout(WAIT, async {
        while !matches!(events.recv().await, Err(EventRecvError::Closed)) {}
    })
    .await
    .expect("the client shuts down with its last strong handle");
}
