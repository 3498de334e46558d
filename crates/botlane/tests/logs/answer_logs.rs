//! A failing handler's error text (here a private one, and a panic's
//! message) reaches the `CommandError` event, never a log line, while the
//! user gets the generic answer; the log names the command and the reason,
//! and says so when an answer is held back by the rate limit, and when an
//! error hook panics (its text not logged). The lines it waits for or
//! rules out are those naming its own commands: the binary's other tests
//! log beside it.

#![allow(clippy::unwrap_used)]

use crate::{capture, support};

use botlane::framework::CommandSettings;

use botlane::{CommandContext, CommandDeclaration, CommandErrorReason};
use capture::Capture;
use support::{command_error_event, World, WAIT};

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
