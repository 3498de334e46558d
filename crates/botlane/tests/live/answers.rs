//! Error answers over the real devserver: every failure gets an answer by
//! default (argument errors on both lanes, checks, cooldowns, user errors,
//! anything else generically), no answer ever reads as an invocation,
//! answers are rate-limited per user and channel, a rejected answer leads
//! to nothing more, answers go off in one line, and a custom hook answers
//! through the same gate. (That the error text never reaches the log is
//! `tests/logs/answer_logs.rs`, in the binary with the global subscriber.)

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use botlane::framework::{Answered, CommandFailure, CommandSettings, OnError, UserError};

use botlane::{
    ArgumentRule, Client, CommandArgs, CommandContext, CommandDeclaration, CommandErrorReason,
    CommandOption, CommandOptionType, CommandSource, Event,
};
use botlane_devserver::{Direction, TestUser};
use botlane_proto::OpCode;
use support::{command_error_event, next_event, World, WAIT};

fn remind() -> CommandDeclaration {
    CommandDeclaration::new("remind", "Remind me")
        .option(
            CommandOption::new("minutes", "In how many minutes", CommandOptionType::Integer)
                .required(true)
                .min(1)
                .max(3600),
        )
        .option(CommandOption::new("note", "What about", CommandOptionType::String).max_length(20))
}

/// Registers `remind` (replies `ok`), `ping`, `oops` (fails with the
/// `UserError` given as its argument), `secret` (fails with a private
/// error), `panic` and `huge` (a user error too long for the service).
fn register(client: &Client, ran: &Arc<Mutex<Vec<String>>>) {
    let seen = Arc::clone(ran);
    client
        .commands()
        .register(remind(), move |ctx: CommandContext| {
            seen.lock().unwrap().push(ctx.name().to_owned());
            async move { ctx.reply("ok").await }
        })
        .unwrap()
        .register(
            CommandDeclaration::new("ping", "Pong"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("oops", "Fails for the user").option(
                CommandOption::new("text", "What to say", CommandOptionType::String).required(true),
            ),
            |ctx: CommandContext| async move {
                Err::<(), _>(UserError::new(ctx.get_string("text").unwrap_or_default()))
            },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("secret", "Fails privately"),
            |_ctx: CommandContext| async move {
                Err::<(), _>(std::io::Error::other(
                    "db password hunter2 refused for alice's note",
                ))
            },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("panic", "Panics"),
            |_ctx: CommandContext| async move {
                if true {
                    panic!("the private state was hunter2");
                }
                Ok::<(), std::io::Error>(())
            },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("huge", "Fails with too much to say"),
            |_ctx: CommandContext| async move { Err::<(), _>(UserError::new("x".repeat(60_000))) },
        )
        .unwrap();
}

async fn bot_says(alice: &TestUser, world: &World) -> String {
    alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap()
        .content
}

/// The bot's op 30 requests (its posts) so far.
fn bot_posts(world: &World) -> usize {
    world
        .server
        .frames()
        .iter()
        .filter(|f| {
            f.is(Direction::Received, OpCode::Send)
                && f.account_id.as_deref() == Some(&world.bot.id)
        })
        .count()
}

/// Waits until no handler or error hook runs (hooks hold a permit while
/// they answer), after `/ping` was answered: dispatch had started every
/// earlier hook by then.
async fn settle(client: &Client, alice: &TestUser, world: &World) {
    alice.send_text(&world.channel, "/ping").await.unwrap();
    alice
        .wait_for_message(|m| m.author_id == world.bot.id && m.content == "pong", WAIT)
        .await
        .unwrap();
    tokio::time::timeout(WAIT, async {
        while client.stats().handlers_running > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
}

/// A client whose answers are not rate-limited within a test.
fn roomy_client(world: &World) -> Client {
    Client::new(
        world
            .options()
            .error_answer_limit(100, Duration::from_secs(1)),
    )
    .unwrap()
}

#[tokio::test]
async fn argument_errors_are_answered_on_both_lanes_with_the_option_rule_and_usage() {
    let world = World::new().await;
    let client = roomy_client(&world);
    let ran = Arc::new(Mutex::new(Vec::new()));
    register(&client, &ran);
    let mut events = client.events();
    let alice = world.start(&client).await;
    let usage = "usage: /remind <minutes (1 to 3600)> [note (up to 20 characters)]";

    // Structured lane, out of bounds: an argument error on the structured
    // lane, although the line alone would have been a valid invocation.
    let args = CommandArgs::from([("minutes".to_owned(), 5000.into())]);
    let id = alice
        .send_with_sidecar(&world.channel, "/remind 5", &world.sidecar("remind", args))
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        (e.reason, e.source),
        (CommandErrorReason::Arguments, CommandSource::Structured)
    );
    let detail = e.argument_error.clone().unwrap();
    assert_eq!(
        (detail.option(), detail.rule()),
        ("minutes", &ArgumentRule::AboveMax { max: 3600.0 })
    );
    assert_eq!(
        bot_says(&alice, &world).await,
        format!("option \"minutes\" must be at most 3600\n{usage}")
    );

    // Structured lane, wrong type: the option, the rule and the value's type.
    let args = CommandArgs::from([("minutes".to_owned(), true.into())]);
    alice
        .send_with_sidecar(&world.channel, "/remind 5", &world.sidecar("remind", args))
        .await
        .unwrap();
    assert_eq!(
        bot_says(&alice, &world).await,
        format!("option \"minutes\" expects an integer, got a boolean\n{usage}")
    );

    // Text lane: a bound, then a parse error.
    let id = alice
        .send_text(&world.channel, "/remind 5 a note far too long for it")
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        (e.reason, e.source),
        (CommandErrorReason::Arguments, CommandSource::Text)
    );
    assert!(
        e.invocation.is_some(),
        "the text lane parsed it: {:?}",
        e.invocation
    );
    assert_eq!(
        bot_says(&alice, &world).await,
        format!("option \"note\" must be at most 20 characters\n{usage}")
    );
    let id = alice
        .send_text(&world.channel, "/remind soon")
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Parse);
    assert_eq!(
        e.argument_error.as_ref().map(|a| a.option().to_owned()),
        Some("minutes".to_owned()),
        "a parse error about one option carries its detail"
    );
    assert_eq!(
        bot_says(&alice, &world).await,
        format!("option \"minutes\" expects an integer\n{usage}")
    );
    assert!(ran.lock().unwrap().is_empty(), "the handler never ran");

    // Answers are plain messages, not replies (a reply would notify
    // through a mute).
    let messages = world.server.messages(&world.channel);
    let answers: Vec<_> = messages
        .iter()
        .filter(|m| m.author_id == world.bot.id)
        .collect();
    assert_eq!(answers.len(), 4);
    assert!(answers.iter().all(|m| m.reply_to.is_none()));
}

#[tokio::test]
async fn user_errors_are_answered_as_they_are_and_never_read_as_an_invocation() {
    let world = World::new().await;
    let client = roomy_client(&world);
    register(&client, &Arc::new(Mutex::new(Vec::new())));
    // A second bot in the channel whose `ban` must never be invoked by the
    // first bot's answer.
    let other = world.server.add_bot("modbot");
    world.server.add_member(&world.channel, &other.id).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let modbot = Client::new(botlane::ClientOptions::new(
        other.token.clone(),
        dir.path().join("mod.keystore"),
        world.server.ws_url(),
    ))
    .unwrap();
    modbot
        .commands()
        .register(
            CommandDeclaration::new("ban", "Ban everyone").option(CommandOption::new(
                "who",
                "Whom",
                CommandOptionType::String,
            )),
            |ctx: CommandContext| async move { ctx.reply("banned").await },
        )
        .unwrap();
    let mut modbot_events = modbot.events();
    modbot.login().await.unwrap();
    client.login().await.unwrap();
    let alice = world.alice().await;

    alice
        .send_text(&world.channel, "/oops \"no dice left\"")
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await, "no dice left");

    // A handler's text that looks like an invocation, for this bot's prefix
    // and for another's.
    for (line, answer) in [
        ("/oops \"/ban everyone\"", "⚠ /ban everyone"),
        ("/oops \"  /ban everyone\"", "⚠ /ban everyone"),
        ("/oops \"!ban everyone\"", "⚠ !ban everyone"),
        // Every line: a bot reading line by line would run the second.
        ("/oops \"no such file\n/roll 2\"", "no such file\n⚠ /roll 2"),
        (
            "/oops \"no such file\r\n  !ban everyone\u{2028}?roll\"",
            "no such file\r\n⚠ !ban everyone\u{2028}⚠ ?roll",
        ),
    ] {
        alice.send_text(&world.channel, line).await.unwrap();
        let said = bot_says(&alice, &world).await;
        assert_eq!(said, answer, "{line}");
        for shown in said.split(['\n', '\r', '\u{2028}']) {
            for prefix in ["/", "!", "?"] {
                let name = botlane::match_command_name(shown, Some(prefix));
                assert_eq!(name, None, "{line}: {shown:?} under {prefix:?}");
            }
        }
    }
    // modbot saw the answers as plain messages, never as `ban`.
    let mut plain_answers = 0;
    while plain_answers < 6 {
        match next_event(&mut modbot_events, |e| {
            matches!(e, Event::Message(m) if m.author_id == world.bot.id)
                || matches!(e, Event::CommandError(_))
        })
        .await
        {
            Event::Message(m) => {
                assert!(m.command.is_none(), "{m:?}");
                plain_answers += 1;
            }
            other => panic!("modbot failed a command: {other:?}"),
        }
    }
    modbot.close().await.unwrap();
}

#[tokio::test]
async fn answers_are_rate_limited_per_user_and_channel() {
    let world = World::new().await;
    let client = Client::new(
        world
            .options()
            .error_answer_limit(2, Duration::from_secs(3600)),
    )
    .unwrap();
    register(&client, &Arc::new(Mutex::new(Vec::new())));
    let mut events = client.events();
    let alice = world.start(&client).await;

    let before = bot_posts(&world);
    for _ in 0..5 {
        let id = alice
            .send_text(&world.channel, "/remind soon")
            .await
            .unwrap();
        command_error_event(&mut events, &id).await;
    }
    settle(&client, &alice, &world).await;
    assert_eq!(
        bot_posts(&world) - before,
        2 + 1,
        "five failures, two answers (the burst), one pong"
    );

    // Another user in the same channel has a bucket of their own.
    let bob = world.server.add_user("bob");
    world.server.add_member(&world.channel, &bob.id).unwrap();
    let bob = TestUser::connect(&world.server.ws_url(), &bob.token)
        .await
        .unwrap();
    alice
        .share_key_with(&world.channel, bob.user_id())
        .await
        .unwrap();
    bob.wait_for_key(&world.channel, WAIT).await.unwrap();
    bob.send_text(&world.channel, "/remind soon").await.unwrap();
    assert!(bob
        .wait_for_message(
            |m| m.author_id == world.bot.id && m.content.starts_with("option"),
            WAIT,
        )
        .await
        .is_ok());
}

#[tokio::test]
async fn an_answer_the_service_rejects_leads_to_nothing_more() {
    let world = World::new().await;
    let client = world.client();
    register(&client, &Arc::new(Mutex::new(Vec::new())));
    let mut events = client.events();
    let alice = world.start(&client).await;

    let before = bot_posts(&world);
    let id = alice.send_text(&world.channel, "/huge").await.unwrap();
    command_error_event(&mut events, &id).await;
    let rejected = next_event(&mut events, |e| matches!(e, Event::SendRejected(_))).await;
    let Event::SendRejected(rejected) = rejected else {
        unreachable!("filtered above")
    };
    assert_eq!(rejected.channel_id, world.channel);
    settle(&client, &alice, &world).await;
    assert_eq!(
        bot_posts(&world) - before,
        1 + 1,
        "the rejected answer and the pong: no retry, no answer to the rejection"
    );
    let mut failures = 0;
    while let Ok(Some(event)) = events.try_recv() {
        assert!(
            !matches!(event, Event::SendRejected(_)),
            "one rejection only: {event:?}"
        );
        failures += usize::from(matches!(event, Event::CommandError(_)));
    }
    assert_eq!(failures, 0, "the rejection is not a command failure");
}

#[tokio::test]
async fn answers_go_off_in_one_line_per_client_or_per_command_and_events_stay() {
    let world = World::new().await;
    let client = world.client();
    register(&client, &Arc::new(Mutex::new(Vec::new())));
    client
        .commands()
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("quiet", "Fails without a word"),
                    CommandSettings::new().on_error(OnError::silent()),
                    |_ctx: CommandContext| async move { Err::<(), _>(UserError::from("unheard")) },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    // Per command.
    let before = bot_posts(&world);
    let id = alice.send_text(&world.channel, "/quiet").await.unwrap();
    assert_eq!(
        command_error_event(&mut events, &id).await.reason,
        CommandErrorReason::Handler
    );
    settle(&client, &alice, &world).await;
    assert_eq!(bot_posts(&world) - before, 1, "only the pong");

    // Text-lane argument errors off, the rest still answered.
    client.on_error(OnError::answer().text_argument_errors(false));
    let before = bot_posts(&world);
    let id = alice
        .send_text(&world.channel, "/remind soon")
        .await
        .unwrap();
    command_error_event(&mut events, &id).await;
    let args = CommandArgs::from([("minutes".to_owned(), 0.into())]);
    alice
        .send_with_sidecar(&world.channel, "/remind 0", &world.sidecar("remind", args))
        .await
        .unwrap();
    assert_eq!(
        bot_says(&alice, &world).await,
        "option \"minutes\" must be at least 1\n\
         usage: /remind <minutes (1 to 3600)> [note (up to 20 characters)]",
        "the structured lane is still answered"
    );
    settle(&client, &alice, &world).await;
    assert_eq!(
        bot_posts(&world) - before,
        2,
        "the structured answer, the pong"
    );

    // The whole client.
    client.on_error(OnError::silent());
    let before = bot_posts(&world);
    let id = alice.send_text(&world.channel, "/secret").await.unwrap();
    command_error_event(&mut events, &id).await;
    settle(&client, &alice, &world).await;
    assert_eq!(bot_posts(&world) - before, 1, "only the pong");
}

#[tokio::test]
async fn several_bots_with_the_same_command_each_answer_a_bad_text_line() {
    let world = World::new().await;
    let first = world.client();
    let second_account = world.server.add_bot("dicebot-two");
    world
        .server
        .add_member(&world.channel, &second_account.id)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let second = Client::new(botlane::ClientOptions::new(
        second_account.token.clone(),
        dir.path().join("two.keystore"),
        world.server.ws_url(),
    ))
    .unwrap();
    for client in [&first, &second] {
        client
            .commands()
            .register(remind(), |ctx: CommandContext| async move {
                ctx.reply("ok").await
            })
            .unwrap();
    }
    let mut second_events = second.events();
    second.login().await.unwrap();
    let alice = world.start(&first).await;

    alice
        .send_text(&world.channel, "/remind soon")
        .await
        .unwrap();
    let mut authors = Vec::new();
    while authors.len() < 2 {
        let m = alice
            .wait_for_message(|m| m.content.starts_with("option \"minutes\""), WAIT)
            .await
            .unwrap();
        authors.push(m.author_id);
    }
    authors.sort();
    let mut want = vec![world.bot.id.clone(), second_account.id.clone()];
    want.sort();
    assert_eq!(
        authors, want,
        "the documented cost of the text lane's default"
    );

    // With the structured lane, only the addressed bot answers: the other
    // sees a plain message, and fails nothing.
    let args = CommandArgs::from([("minutes".to_owned(), 0.into())]);
    let id = alice
        .send_with_sidecar(&world.channel, "/remind 0", &world.sidecar("remind", args))
        .await
        .unwrap();
    let answer = alice
        .wait_for_message(|m| m.content.starts_with("option \"minutes\""), WAIT)
        .await
        .unwrap();
    assert_eq!(answer.author_id, world.bot.id);
    let after = alice.send_text(&world.channel, "after").await.unwrap();
    match next_event(&mut second_events, |e| match e {
        Event::Message(m) => m.id == after,
        Event::CommandError(c) => c.message.id == id,
        _ => false,
    })
    .await
    {
        Event::Message(_) => {}
        other => panic!("the bot not addressed failed the command: {other:?}"),
    }
    second.close().await.unwrap();
}

/// What the custom hook below records in the client's shared state.
#[derive(Default)]
struct HookLog {
    seen: Mutex<Vec<(String, CommandErrorReason, Answered)>>,
}

#[tokio::test]
async fn a_custom_hook_reads_the_state_and_its_answers_pass_the_same_gate() {
    let world = World::new().await;
    // One answer per user and channel for the whole test.
    let client = Client::with_data(
        world
            .options()
            .error_answer_limit(1, Duration::from_secs(3600)),
        HookLog::default(),
    )
    .unwrap();
    client.on_error(OnError::new(
        |failure: CommandFailure<HookLog>| async move {
            // A text that reads as an invocation: the gate neutralises it.
            let answered = failure.answer("/retry in a minute").await.unwrap();
            let error = failure.error();
            failure.data().seen.lock().unwrap().push((
                error.command.clone(),
                error.reason,
                answered,
            ));
        },
    ));
    client
        .commands()
        .register(
            CommandDeclaration::new("flaky", "Always fails"),
            |_ctx: CommandContext<HookLog>| async move {
                Err::<(), _>(std::io::Error::other("backend down"))
            },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("ping", "Pong"),
            |ctx: CommandContext<HookLog>| async move { ctx.reply("pong").await },
        )
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    let id = alice.send_text(&world.channel, "/flaky").await.unwrap();
    command_error_event(&mut events, &id).await;
    assert_eq!(
        bot_says(&alice, &world).await,
        "⚠ /retry in a minute",
        "the hook's own text, neutralised"
    );
    let id = alice.send_text(&world.channel, "/flaky").await.unwrap();
    command_error_event(&mut events, &id).await;
    // The second answer is over the limit: the hook is told, nothing is
    // posted (the next bot message is the pong).
    alice.send_text(&world.channel, "/ping").await.unwrap();
    assert_eq!(bot_says(&alice, &world).await, "pong");
    tokio::time::timeout(WAIT, async {
        while client.data().seen.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(
        *client.data().seen.lock().unwrap(),
        [
            (
                "flaky".to_owned(),
                CommandErrorReason::Handler,
                Answered::Sent
            ),
            (
                "flaky".to_owned(),
                CommandErrorReason::Handler,
                Answered::RateLimited
            ),
        ]
    );
}
