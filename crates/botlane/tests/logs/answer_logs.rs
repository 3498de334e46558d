//! A failing handler's error text (here a private one, and a panic's
//! message) reaches the `CommandError` event, never a log line, while the
//! user gets the generic answer; the log names the command and the reason,
//! and says so when an answer is held back by the rate limit, and when an
//! error hook panics (its text not logged). Each invocation is one span,
//! with the documented fields and its outcome, and none of them carries an
//! argument, content or a secret. The lines and spans it waits for or rules
//! out are those naming its own commands or bot: the binary's other tests
//! log beside it.

#![allow(clippy::unwrap_used)]

use crate::{capture, support};

use std::collections::BTreeMap;

use botlane::framework::{Check, CommandSettings, UserError};
use botlane::{
    CommandArgValue, CommandArgs, CommandContext, CommandDeclaration, CommandErrorReason,
    CommandOption, CommandOptionType,
};
use capture::{Capture, ClosedSpan};
use support::{bot_says, command_error_event, World, WAIT};
use tracing::Instrument;

#[tokio::test]
async fn other_failures_get_a_generic_answer_and_their_text_is_never_logged() {
    let capture = Capture::global();

    let world = World::new().await;
    let client = world.client();
    client
        .commands()
        .update(|registry| {
            registry
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
                .register_with(
                    CommandDeclaration::new("reload", "Owners only, and the client has none"),
                    CommandSettings::new().owners_only(),
                    |_ctx: CommandContext| async move { Ok::<(), std::io::Error>(()) },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;
    // Said at login, naming the command: with no owners it refuses everyone.
    let logged = capture.text();
    assert!(
        logged.contains("owners_only and the client has no owners") && logged.contains("reload"),
        "{logged}"
    );
    let bot_says = || async {
        alice
            .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
            .await
            .unwrap()
            .content
    };

    let id = alice.send_text(&world.channel, "/secret").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Handler);
    assert!(
        e.to_string().contains("hunter2"),
        "the event carries the error: {e}"
    );
    assert_eq!(bot_says().await, "sorry, the secret command failed");

    let id = alice.send_text(&world.channel, "/panic").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Handler);
    assert!(e.to_string().contains("hunter2"), "{e}");
    assert_eq!(bot_says().await, "sorry, the panic command failed");

    let logged = capture.text();
    assert!(!logged.contains("hunter2"), "{logged}");
    for command in ["secret", "panic"] {
        assert!(
            logged.lines().any(|l| l.contains("command failed")
                && l.contains(&format!("command={command} "))
                && l.contains("reason=\"handler\"")),
            "the log names the command and the reason: {logged}"
        );
    }

    // A line of `/secret`'s saying `text`.
    let said = |text: &str| {
        capture
            .text()
            .lines()
            .any(|l| l.contains(text) && l.split(' ').any(|field| field == "command=secret"))
    };
    // The default limit is 3 answers per user and channel: the fourth
    // failure is not answered, and the log says why.
    let limited = "its author had their share of answers";
    assert!(!said(limited));
    alice.send_text(&world.channel, "/secret").await.unwrap();
    assert_eq!(bot_says().await, "sorry, the secret command failed");
    alice.send_text(&world.channel, "/secret").await.unwrap();
    tokio::time::timeout(WAIT, async {
        while !said(limited) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the unanswered failure is logged");

    // An error hook that panics is logged (once, named by the command),
    // its text not.
    let panicked = "an error hook panicked";
    assert!(!said(panicked));
    client.on_error(botlane::framework::OnError::new(|_failure| async {
        panic!("the hook's private state was hunter2");
    }));
    let id = alice.send_text(&world.channel, "/secret").await.unwrap();
    command_error_event(&mut events, &id).await;
    tokio::time::timeout(WAIT, async {
        while !said(panicked) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the hook's panic is logged");
    let logged = capture.text();
    assert!(
        logged
            .lines()
            .any(|l| l.contains(panicked) && l.contains("command=secret")),
        "{logged}"
    );
    assert!(!logged.contains("hunter2"), "{logged}");
}

/// One span per invocation, `invocation`, with the command's registered
/// name, the lane, the bot's id, the outcome and, for an invocation that
/// reached its checks and handler, the latency; the handler's own span
/// inside it. No span field holds an argument, a message's content or a
/// token. (Its bot and texts are its own: the binary's other tests share
/// the capture.)
#[tokio::test]
async fn each_invocation_is_one_span_with_its_outcome_and_no_argument_content_or_secret() {
    let capture = Capture::global();

    let world = World::new().await;
    let client = world.client();
    let say = CommandDeclaration::new("say", "Says it back").option(
        CommandOption::new("text", "What to say", CommandOptionType::String).required(true),
    );
    client
        .commands()
        .update(|registry| {
            registry
                .register(say.clone(), |ctx: CommandContext| async move {
                    let text = ctx.get_string("text").unwrap_or_default().to_owned();
                    ctx.reply(&format!("you said {} characters", text.len()))
                        .instrument(tracing::info_span!("say_work"))
                        .await
                })
                .unwrap()
                .register_with(
                    CommandDeclaration::new("guarded", "Refused by its check"),
                    CommandSettings::new().check(Check::sync(|_ctx: &CommandContext| {
                        Err(UserError::new("not today"))
                    })),
                    |_ctx: CommandContext| async move { Ok::<(), std::io::Error>(()) },
                )
                .unwrap()
                .register(
                    CommandDeclaration::new("boom", "Panics"),
                    |_ctx: CommandContext| async move {
                        if true {
                            panic!("boom went the handler");
                        }
                        Ok::<(), std::io::Error>(())
                    },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;
    let marker = "sekrit-argument-7f3a";

    alice
        .send_text(&world.channel, &format!("/say {marker}"))
        .await
        .unwrap();
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "you said 20 characters"
    );
    let args = CommandArgs::from([(
        "text".to_owned(),
        CommandArgValue::String(format!("{marker}-structured")),
    )]);
    alice
        .send_command(&world.channel, &world.bot.id, &say, &args)
        .await
        .unwrap();
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "you said 31 characters"
    );
    for (line, reason) in [
        ("/guarded", CommandErrorReason::Check),
        ("/boom", CommandErrorReason::Handler),
        ("/say", CommandErrorReason::Parse),
    ] {
        let id = alice.send_text(&world.channel, line).await.unwrap();
        assert_eq!(command_error_event(&mut events, &id).await.reason, reason);
    }
    alice
        .send_text(&world.channel, &format!("just chatting about {marker}"))
        .await
        .unwrap();
    support::next_event(
        &mut events,
        |e| matches!(e, botlane::Event::Message(m) if m.content.starts_with("just chatting")),
    )
    .await;

    // A span closes when its invocation's future is dropped, just after
    // the event or the answer.
    let ours = |spans: Vec<ClosedSpan>| -> Vec<ClosedSpan> {
        spans
            .into_iter()
            .filter(|s| {
                s.name == "invocation"
                    && s.fields.get("bot").map(String::as_str) == Some(world.bot.id.as_str())
            })
            .collect()
    };
    tokio::time::timeout(WAIT, async {
        while ours(capture.spans()).len() < 5 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("five invocation spans close");
    let spans = ours(capture.spans());
    let mut seen: Vec<(String, String, String, bool)> = spans
        .iter()
        .map(|s| {
            let field = |name: &str| s.fields.get(name).cloned().unwrap_or_default();
            let latency = s.fields.get("latency_us");
            if let Some(latency) = latency {
                assert!(latency.parse::<u64>().is_ok(), "{s:?}");
            }
            (
                field("command"),
                field("lane"),
                field("outcome"),
                latency.is_some(),
            )
        })
        .collect();
    seen.sort();
    let expected = [
        ("boom", "text", "panic", true),
        ("guarded", "text", "check", true),
        ("say", "structured", "ok", true),
        ("say", "text", "ok", true),
        ("say", "text", "parse", false),
    ];
    let expected: Vec<(String, String, String, bool)> = expected
        .iter()
        .map(|(c, l, o, t)| ((*c).to_owned(), (*l).to_owned(), (*o).to_owned(), *t))
        .collect();
    assert_eq!(seen, expected, "{spans:#?}");
    for span in &spans {
        let names: Vec<&str> = span.fields.keys().copied().collect();
        let allowed = ["bot", "command", "lane", "latency_us", "outcome"];
        assert!(names.iter().all(|n| allowed.contains(n)), "{span:?}");
    }
    // The handler's span is inside its invocation's.
    let work: Vec<ClosedSpan> = capture
        .spans()
        .into_iter()
        .filter(|s| s.name == "say_work")
        .collect();
    assert_eq!(work.len(), 2, "{work:?}");
    assert!(
        work.iter().all(|s| s.parent == Some("invocation")),
        "{work:?}"
    );

    // No span of this test, nor any line that shows one, holds the
    // arguments, the content or a token.
    let secrets = [marker, "just chatting", &world.bot.token, &world.user.token];
    let all: Vec<BTreeMap<&str, String>> = capture.spans().into_iter().map(|s| s.fields).collect();
    for secret in secrets {
        for fields in &all {
            assert!(
                fields.values().all(|v| !v.contains(secret)),
                "{secret:?} in a span's fields: {fields:?}"
            );
        }
        let text = capture.text();
        let shown = text
            .lines()
            .find(|l| l.contains("invocation{") && l.contains(secret));
        assert!(shown.is_none(), "{secret:?} in {shown:?}");
    }
    // The fmt layer shows the span's fields on the lines inside it.
    let text = capture.text();
    assert!(
        text.contains("invocation{command=\"say\" lane=\"text\""),
        "{text}"
    );
    client.close().await.unwrap();
}
