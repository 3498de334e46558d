//! The framework's dispatch features over the real devserver: typed shared
//! state, bounds enforced on both lanes (an out-of-bounds structured payload
//! is an argument error, never a fallback to the text lane), checks and
//! cooldowns in their documented order (a real 3 s cooldown, kept across a
//! registration), handler timeouts (the handler's future dropped, its
//! permit released), a typed conversion that panics (a handler failure,
//! dispatch unharmed), the built-in help on both lanes (a hidden command
//! left out of its list), typed sending, the hooks after each command
//! (every invocation that ran, on both lanes; a hook that never finishes
//! bounded by the command's timeout), and the owners (an owners-only
//! command refused before the checks; owners skipping checks and cooldowns
//! only when the client says so), an injected clock read once per
//! cooldown or error answer, never for a command without either, and a
//! kept context's message left alone by the invocations after it.

#![cfg(feature = "macros")]
#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use botlane::framework::{Check, Clock, CommandRan, CommandSettings, Cooldown, NotAnOwner};

use botlane::{
    ArgumentRule, Client, ClientOptions, Command, CommandArgs, CommandContext, CommandDeclaration,
    CommandErrorReason, CommandOption, CommandOptionType, CommandSource, Event, Events,
};
use botlane_devserver::TestUser;
use support::{bot_says, command_error_event, next_event, World, WAIT};

/// A client whose error answers are not rate-limited within a test.
fn options(world: &World) -> ClientOptions {
    world
        .options()
        .error_answer_limit(100, Duration::from_secs(1))
}

/// What the handlers of one bot share.
#[derive(Default)]
struct Tally {
    count: AtomicU64,
    notes: Mutex<Vec<String>>,
}

#[tokio::test]
async fn handlers_read_and_update_typed_shared_state_on_both_lanes() {
    let world = World::new().await;
    let client = Client::with_data(options(&world), Tally::default()).unwrap();
    client
        .commands()
        .register(
            CommandDeclaration::new("note", "Keep a note").option(
                CommandOption::new("text", "The note", CommandOptionType::String).required(true),
            ),
            // No `Arc` cloned by hand: the context hands out the state.
            |ctx: CommandContext<Tally>| async move {
                let n = ctx.data().count.fetch_add(1, Ordering::SeqCst) + 1;
                ctx.data()
                    .notes
                    .lock()
                    .unwrap()
                    .push(ctx.get_string("text").unwrap());
                ctx.reply(&format!("note {n}")).await
            },
        )
        .unwrap();
    let alice = world.start(&client).await;

    alice
        .send_text(&world.channel, "/note \"buy milk\"")
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "note 1");
    let args = CommandArgs::from([("text".to_owned(), "call bob".into())]);
    alice
        .send_with_sidecar(&world.channel, "/note x", &world.sidecar("note", args))
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "note 2");

    // The client sees what the handlers wrote.
    assert_eq!(client.data().count.load(Ordering::SeqCst), 2);
    assert_eq!(
        *client.data().notes.lock().unwrap(),
        ["buy milk", "call bob"]
    );
}

#[tokio::test]
async fn an_out_of_bounds_structured_payload_is_an_argument_error_never_a_text_fallback() {
    let world = World::new().await;
    let client = Client::new(options(&world)).unwrap();
    let runs = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&runs);
    client
        .commands()
        .register(
            CommandDeclaration::new("wait", "Wait a while")
                .option(
                    CommandOption::new("seconds", "How long", CommandOptionType::Number)
                        .required(true)
                        .min(0.5)
                        .max(10),
                )
                .option(
                    CommandOption::new("label", "What for", CommandOptionType::String)
                        .min_length(2),
                ),
            move |ctx: CommandContext| {
                seen.lock()
                    .unwrap()
                    .push((ctx.source(), ctx.get_number("seconds").unwrap()));
                async move { ctx.reply("waiting").await }
            },
        )
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    // The line alone ("/wait 2") would be a valid text invocation: the
    // structured lane decides, and its payload is out of bounds.
    let args = CommandArgs::from([("seconds".to_owned(), 20.0.into())]);
    let id = alice
        .send_with_sidecar(&world.channel, "/wait 2", &world.sidecar("wait", args))
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        (e.reason, e.source),
        (CommandErrorReason::Arguments, CommandSource::Structured)
    );
    let detail = e.argument_error.as_ref().unwrap();
    assert_eq!(
        (detail.option(), detail.rule()),
        ("seconds", &ArgumentRule::AboveMax { max: 10.0 })
    );
    assert!(e.to_string().starts_with("structured invocation"), "{e}");
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "option \"seconds\" must be at most 10\n\
         usage: /wait <seconds (0.5 to 10)> [label (at least 2 characters)]"
    );

    // A string under its minimum length, on the structured lane.
    let args = CommandArgs::from([
        ("seconds".to_owned(), 1.0.into()),
        ("label".to_owned(), "x".into()),
    ]);
    let id = alice
        .send_with_sidecar(&world.channel, "/wait 1", &world.sidecar("wait", args))
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        e.argument_error.as_ref().map(|a| a.rule().clone()),
        Some(ArgumentRule::TooShort { min_length: 2 })
    );

    // The same bound on the text lane, after its parse.
    let id = alice.send_text(&world.channel, "/wait 0.1").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        (e.reason, e.source),
        (CommandErrorReason::Arguments, CommandSource::Text)
    );
    assert_eq!(
        e.argument_error.as_ref().map(|a| a.rule().clone()),
        Some(ArgumentRule::BelowMin { min: 0.5 })
    );

    // In bounds on both lanes: the handler runs, and only then.
    let args = CommandArgs::from([("seconds".to_owned(), 10.0.into())]);
    alice
        .send_with_sidecar(&world.channel, "/wait 10", &world.sidecar("wait", args))
        .await
        .unwrap();
    alice
        .wait_for_message(|m| m.content == "waiting", WAIT)
        .await
        .unwrap();
    alice.send_text(&world.channel, "/wait 0.5").await.unwrap();
    alice
        .wait_for_message(|m| m.content == "waiting", WAIT)
        .await
        .unwrap();
    assert_eq!(
        *runs.lock().unwrap(),
        [
            (CommandSource::Structured, 10.0),
            (CommandSource::Text, 0.5)
        ]
    );
}

#[tokio::test]
async fn arguments_then_client_checks_then_command_checks_then_cooldown_then_handler() {
    let world = World::new().await;
    let client = Client::new(options(&world)).unwrap();
    let trail = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let t = Arc::clone(&trail);
    client.add_check(Check::sync(move |ctx| {
        t.lock().unwrap().push("client check");
        if ctx.get_string("word").as_deref() == Some("client-no") {
            Err("the client says no".into())
        } else {
            Ok(())
        }
    }));
    let t = Arc::clone(&trail);
    let settings = CommandSettings::new()
        .check(Check::new(move |ctx: &CommandContext| {
            t.lock().unwrap().push("command check");
            let refuse = ctx.get_string("word").as_deref() == Some("command-no");
            async move {
                if refuse {
                    Err("the command says no".into())
                } else {
                    Ok(())
                }
            }
        }))
        // Long enough that the next two invocations, sent right after the
        // first answer, fall inside it on a loaded machine.
        .cooldown(Cooldown::per_user(Duration::from_secs(3)));
    let t = Arc::clone(&trail);
    client
        .commands()
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("guarded", "Guarded").option(
                        CommandOption::new("word", "A word", CommandOptionType::String)
                            .required(true)
                            .max_length(12),
                    ),
                    settings,
                    move |ctx: CommandContext| {
                        t.lock().unwrap().push("handler");
                        async move { ctx.reply("done").await }
                    },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;
    let take = |trail: &Arc<Mutex<Vec<&'static str>>>| std::mem::take(&mut *trail.lock().unwrap());

    // An argument error: no check ran.
    let id = alice
        .send_text(&world.channel, "/guarded much-too-long-a-word")
        .await
        .unwrap();
    assert_eq!(
        command_error_event(&mut events, &id).await.reason,
        CommandErrorReason::Arguments
    );
    bot_says(&alice, &world).await;
    assert!(take(&trail).is_empty());

    // The client's check refuses: the command's never ran.
    let id = alice
        .send_text(&world.channel, "/guarded client-no")
        .await
        .unwrap();
    assert_eq!(
        command_error_event(&mut events, &id).await.reason,
        CommandErrorReason::Check
    );
    assert_eq!(bot_says(&alice, &world).await.content, "the client says no");
    assert_eq!(take(&trail), ["client check"]);

    // The command's check refuses, on the structured lane: a refusal does
    // not start the cooldown.
    let args = CommandArgs::from([("word".to_owned(), "command-no".into())]);
    let id = alice
        .send_with_sidecar(
            &world.channel,
            "/guarded command-no",
            &world.sidecar("guarded", args),
        )
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        (e.reason, e.source),
        (CommandErrorReason::Check, CommandSource::Structured)
    );
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "the command says no"
    );
    assert_eq!(take(&trail), ["client check", "command check"]);

    // Everything passes: the handler runs and the cooldown starts.
    alice
        .send_text(&world.channel, "/guarded yes")
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "done");
    assert_eq!(take(&trail), ["client check", "command check", "handler"]);

    // Right away again: the checks pass, the cooldown refuses.
    let id = alice
        .send_text(&world.channel, "/guarded yes")
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Cooldown);
    let answer = bot_says(&alice, &world).await.content;
    let wait: u64 = answer
        .strip_prefix("this command is cooling down, try again in ")
        .and_then(|rest| rest.strip_suffix(" s"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{answer}"));
    assert!((1..=3).contains(&wait), "{answer}");
    assert_eq!(take(&trail), ["client check", "command check"]);

    // A registration swaps the registry snapshot; the cooldowns live
    // outside it and are not reset.
    client
        .commands()
        .register(
            CommandDeclaration::new("later", "Registered while cooling"),
            |ctx: CommandContext| async move { ctx.reply("later").await },
        )
        .unwrap();
    let id = alice
        .send_text(&world.channel, "/guarded yes")
        .await
        .unwrap();
    assert_eq!(
        command_error_event(&mut events, &id).await.reason,
        CommandErrorReason::Cooldown
    );
    bot_says(&alice, &world).await;
    take(&trail);

    // Once it has passed (with slack), the handler runs again.
    tokio::time::sleep(Duration::from_millis(3300)).await;
    alice
        .send_text(&world.channel, "/guarded yes")
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "done");
    assert_eq!(take(&trail), ["client check", "command check", "handler"]);
}

/// A clock that stands still and counts its readings.
#[derive(Clone)]
struct CountingClock {
    at: Instant,
    reads: Arc<AtomicU64>,
}

impl Clock for CountingClock {
    fn now(&self) -> Instant {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.at
    }
}

#[tokio::test]
async fn an_injected_clock_is_read_once_per_cooldown_or_answer_and_never_otherwise() {
    let world = World::new().await;
    let reads = Arc::new(AtomicU64::new(0));
    let clock = CountingClock {
        at: Instant::now(),
        reads: Arc::clone(&reads),
    };
    let client = Client::new(options(&world).clock(clock)).unwrap();
    let cooled = CommandSettings::new().cooldown(Cooldown::per_user(Duration::from_secs(60)));
    client
        .commands()
        .update(|registry| {
            registry
                .register(
                    CommandDeclaration::new("plain", "No cooldown"),
                    |ctx| async move { ctx.reply("plain").await },
                )?
                .register_with(
                    CommandDeclaration::new("cooled", "A cooldown"),
                    cooled,
                    |ctx| async move { ctx.reply("cooled").await },
                )
                .map(drop)
        })
        .unwrap();
    let alice = world.start(&client).await;
    let mut said = Vec::new();
    for (line, answer, read_by_then) in [
        ("/plain", "plain", 0),
        // The cooldown starts: one reading.
        ("/cooled", "cooled", 1),
        // It refuses (one reading), and its error answer is rate-limited
        // (another).
        (
            "/cooled",
            "this command is cooling down, try again in 60 s",
            3,
        ),
        ("/plain", "plain", 3),
    ] {
        alice.send_text(&world.channel, line).await.unwrap();
        assert_eq!(bot_says(&alice, &world).await.content, answer);
        said.push(reads.load(Ordering::SeqCst));
        assert_eq!(
            said.last(),
            Some(&read_by_then),
            "{line}: readings {said:?}"
        );
    }
}

#[tokio::test]
async fn a_kept_context_keeps_its_own_message_whatever_dispatch_reuses() {
    let world = World::new().await;
    let client = Client::new(options(&world)).unwrap();
    let kept = Arc::new(Mutex::new(Vec::<CommandContext>::new()));
    let keep = Arc::clone(&kept);
    let word = || CommandOption::new("word", "A word", CommandOptionType::String).required(true);
    client
        .commands()
        .update(|registry| {
            registry
                .register(
                    CommandDeclaration::new("keep", "Keep").option(word()),
                    move |ctx| {
                        keep.lock().unwrap().push(ctx.clone());
                        async move { ctx.reply("kept").await }
                    },
                )?
                .register(
                    CommandDeclaration::new("pass", "Pass").option(word()),
                    |ctx| async move { ctx.reply("passed").await },
                )
                .map(drop)
        })
        .unwrap();
    let alice = world.start(&client).await;
    // The messages of ended invocations that nobody kept are written over
    // by the next ones; a kept one is never.
    let mut ids = Vec::new();
    for line in [
        "/pass one",
        "/keep two",
        "/pass three",
        "/keep four",
        "/pass five",
    ] {
        ids.push(alice.send_text(&world.channel, line).await.unwrap());
        let answer = if line.starts_with("/keep") {
            "kept"
        } else {
            "passed"
        };
        assert_eq!(bot_says(&alice, &world).await.content, answer);
    }
    let kept: Vec<_> = kept
        .lock()
        .unwrap()
        .iter()
        .map(|ctx| {
            let m = ctx.message();
            (m.id.clone(), m.content.clone(), ctx.get_string("word"))
        })
        .collect();
    assert_eq!(
        kept,
        [
            (
                ids[1].clone(),
                "/keep two".to_owned(),
                Some("two".to_owned())
            ),
            (
                ids[3].clone(),
                "/keep four".to_owned(),
                Some("four".to_owned())
            ),
        ]
    );
}

/// Sets its flag when dropped: proof that a handler's task was aborted.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_timeout_aborts_the_handler_fails_the_command_and_frees_its_permit() {
    let world = World::new().await;
    // One permit: the next command runs only if the timed-out one gave it
    // back.
    let client = Client::new(
        options(&world)
            .max_concurrent_handlers(1)
            .handler_timeout(Duration::from_millis(300)),
    )
    .unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    client
        .commands()
        .update(|registry| {
            registry
                .register(
                    CommandDeclaration::new("stuck", "Never finishes"),
                    move |_ctx: CommandContext| {
                        let guard = DropFlag(Arc::clone(&flag));
                        async move {
                            let _guard = guard;
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            Ok::<(), std::io::Error>(())
                        }
                    },
                )
                .unwrap()
                // Its own timeout, shorter than the client's.
                .register_with(
                    CommandDeclaration::new("hasty", "Must be quick"),
                    CommandSettings::new().timeout(Duration::from_millis(100)),
                    |_ctx: CommandContext| async move {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        Ok::<(), std::io::Error>(())
                    },
                )
                .unwrap()
                // Its own timeout, longer than the client's.
                .register_with(
                    CommandDeclaration::new("patient", "Takes its time"),
                    CommandSettings::new().timeout(Duration::from_secs(30)),
                    |ctx: CommandContext| async move {
                        tokio::time::sleep(Duration::from_millis(600)).await;
                        ctx.reply("finally").await
                    },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    let id = alice.send_text(&world.channel, "/stuck").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    // Dropped before the failure was reported: its guards have run by the
    // time anyone hears of it.
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future was dropped before its failure was reported"
    );
    assert_eq!(e.reason, CommandErrorReason::Timeout);
    assert!(
        e.to_string()
            .contains("its timeout of 0.3 s and was aborted"),
        "{e}"
    );
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "sorry, the stuck command failed"
    );

    let id = alice.send_text(&world.channel, "/hasty").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Timeout);
    assert!(e.to_string().contains("its timeout of 0.1 s"), "{e}");
    bot_says(&alice, &world).await;

    // The single permit is free again, and a command's own longer timeout
    // replaces the client's.
    alice.send_text(&world.channel, "/patient").await.unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "finally");
    tokio::time::timeout(WAIT, async {
        while client.stats().handlers_running > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn help_answers_on_both_lanes_with_bounds_in_the_usage_lines() {
    let world = World::new().await;
    let client = Client::new(options(&world).command_prefix("!")).unwrap();
    client
        .commands()
        .update(|registry| {
            registry
                .register(
                    CommandDeclaration::new("remind", "Remind me")
                        .option(
                            CommandOption::new(
                                "minutes",
                                "In how many minutes",
                                CommandOptionType::Integer,
                            )
                            .required(true)
                            .min(1)
                            .max(3600),
                        )
                        .option(
                            CommandOption::new("note", "What about", CommandOptionType::String)
                                .max_length(20),
                        ),
                    |ctx: CommandContext| async move { ctx.reply("ok").await },
                )
                .unwrap()
                .register_with(
                    CommandDeclaration::new("purge", "Forget every reminder"),
                    CommandSettings::new().hide_in_help(),
                    |ctx: CommandContext| async move { ctx.reply("purged").await },
                )
                .unwrap()
                .enable_help()
                .map(drop)
        })
        .unwrap();
    let alice = world.start(&client).await;

    // `purge` is hidden: not in the list.
    let id = alice.send_text(&world.channel, "!help").await.unwrap();
    let answer = bot_says(&alice, &world).await;
    assert_eq!(
        answer.content,
        "Commands (send !help <command> for details):\n\
         !help [command (up to 32 characters)] - List the commands, or explain one\n\
         !remind <minutes (1 to 3600)> [note (up to 20 characters)] - Remind me"
    );
    assert_eq!(
        answer.reply_to.as_deref(),
        Some(id.as_str()),
        "asked for: a reply"
    );

    let detail = "Command remind: Remind me\n\
                  usage: !remind <minutes (1 to 3600)> [note (up to 20 characters)]\n\
                  - minutes (integer, required, 1 to 3600): In how many minutes\n\
                  - note (string, up to 20 characters): What about";
    alice
        .send_text(&world.channel, "!help remind")
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, detail);

    // The structured lane: the line says something else, the sidecar wins.
    let args = CommandArgs::from([("command".to_owned(), "remind".into())]);
    alice
        .send_with_sidecar(&world.channel, "!help", &world.sidecar("help", args))
        .await
        .unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, detail);

    // Named, the hidden command is explained: it is in the menu anyway.
    alice
        .send_text(&world.channel, "!help purge")
        .await
        .unwrap();
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "Command purge: Forget every reminder\nusage: !purge"
    );

    // A command registered now is in the next help: its context reads the
    // registry its message was dispatched from, not the one dispatch read
    // for the last invocation.
    client
        .commands()
        .register(
            CommandDeclaration::new("snooze", "Put a reminder off"),
            |ctx: CommandContext| async move { ctx.reply("snoozed").await },
        )
        .unwrap();
    alice.send_text(&world.channel, "!help").await.unwrap();
    assert!(
        bot_says(&alice, &world)
            .await
            .content
            .ends_with("\n!snooze - Put a reminder off"),
        "the new command listed last"
    );
}

/// Roll some dice
#[derive(Command, Debug, Clone, PartialEq)]
struct Roll {
    /// How many dice
    #[option(min = 1, max = 10)]
    count: u8,
    /// What the roll is for
    label: Option<String>,
}

#[tokio::test]
async fn a_bot_sends_a_typed_command_another_bot_runs_it_typed() {
    let world = World::new().await;
    let dicebot = Client::new(options(&world)).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&got);
    dicebot
        .commands()
        .update(|registry| {
            registry
                .command::<Roll>(move |ctx, roll: Roll| {
                    seen.lock().unwrap().push((ctx.source(), roll.clone()));
                    async move { ctx.reply(&format!("rolled {}", roll.count)).await }
                })
                .map(drop)
        })
        .unwrap();
    dicebot.login().await.unwrap();

    let caller_account = world.server.add_bot("caller");
    world
        .server
        .add_member(&world.channel, &caller_account.id)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let caller = Client::new(ClientOptions::new(
        caller_account.token.clone(),
        dir.path().join("caller.keystore"),
        world.server.ws_url(),
    ))
    .unwrap();
    let mut caller_events = caller.events();
    caller.login().await.unwrap();
    let alice = world.alice().await;
    alice
        .share_key_with(&world.channel, &caller_account.id)
        .await
        .unwrap();
    caller.wait_until_connected(WAIT).await.unwrap();

    let roll = Roll {
        count: 3,
        label: Some("for the win".into()),
    };
    // The channel key reaches the caller asynchronously: retry until it
    // has it (a clear error until then, never a send without it).
    tokio::time::timeout(WAIT, async {
        while caller
            .send_typed(&world.channel, &world.bot.id, &roll)
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();

    // The line the same code formats, the sidecar the same code encodes.
    let sent = alice
        .wait_for_message(|m| m.author_id == caller_account.id, WAIT)
        .await
        .unwrap();
    assert_eq!(
        sent.content, "/roll 3 for the win",
        "the last string is greedy"
    );
    let data = sent.command.unwrap();
    assert_eq!((data.name.as_str(), data.args), ("roll", roll.to_args()));
    let answer = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert_eq!(answer.content, "rolled 3");
    assert_eq!(
        *got.lock().unwrap(),
        [(botlane::CommandSource::Structured, roll)]
    );

    // An out-of-bounds value is sent as is (the receiver enforces bounds)
    // and comes back as the receiver's argument error answer.
    caller
        .send_typed(
            &world.channel,
            &world.bot.id,
            &Roll {
                count: 11,
                label: None,
            },
        )
        .await
        .unwrap();
    let answer = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert!(
        answer
            .content
            .starts_with("option \"count\" must be at most 10"),
        "{}",
        answer.content
    );
    // The caller saw dicebot's answers as plain messages.
    match next_event(
        &mut caller_events,
        |e| matches!(e, Event::Message(m) if m.id == answer.id),
    )
    .await
    {
        Event::Message(m) => assert!(m.command.is_none()),
        _ => unreachable!("filtered above"),
    }
    caller.close().await.unwrap();
}

/// A hand-written typed command whose conversion panics: a bug of the
/// application's, run by dispatch.
struct Fragile;

impl Command for Fragile {
    fn declaration() -> CommandDeclaration {
        CommandDeclaration::new("fragile", "Breaks while converting")
    }

    fn from_args(_: &CommandArgs) -> Result<Self, botlane::ArgumentError> {
        panic!("fragile cannot convert");
    }

    fn to_args(&self) -> CommandArgs {
        CommandArgs::new()
    }
}

#[tokio::test]
async fn a_typed_conversion_that_panics_is_a_handler_failure_and_the_bot_keeps_going() {
    let world = World::new().await;
    let client = Client::new(options(&world)).unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&ran);
    client
        .commands()
        .update(|registry| {
            registry
                .command::<Fragile>(move |_ctx, _fragile: Fragile| {
                    flag.store(true, Ordering::SeqCst);
                    async { Ok::<(), std::io::Error>(()) }
                })
                .unwrap()
                .register(
                    CommandDeclaration::new("ping", "Still here?"),
                    |ctx: CommandContext| async move { ctx.reply("pong").await },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    let id = alice.send_text(&world.channel, "/fragile").await.unwrap();
    let failure = command_error_event(&mut events, &id).await;
    assert_eq!(failure.reason, CommandErrorReason::Handler);
    assert!(
        failure
            .to_string()
            .contains("conversion panicked: fragile cannot convert"),
        "{failure}"
    );
    assert_eq!(failure.invocation.as_ref().unwrap().name, "fragile");
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "sorry, the fragile command failed"
    );
    assert!(!ran.load(Ordering::SeqCst), "the handler never ran");

    // Dispatch and the connection are still up, on the same session.
    alice.send_text(&world.channel, "/ping").await.unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "pong");
    assert_eq!(client.stats().sessions, 1);
}

/// A handler whose error type is `UserError` reads an argument with `?`
/// (`From<ArgumentError> for UserError`): its failure is an argument error
/// as with any other error type (reason `Arguments`, `argument_error` set),
/// not a handler failure answered verbatim. A check refusing the same way
/// stays a check's refusal.
#[tokio::test]
async fn a_user_error_made_from_an_argument_error_is_reported_as_one() {
    let world = World::new().await;
    let client = Client::new(options(&world)).unwrap();
    let optional_n = || {
        CommandDeclaration::new("pick", "Picks n").option(CommandOption::new(
            "n",
            "How many",
            CommandOptionType::Integer,
        ))
    };
    client
        .commands()
        .update(|registry| {
            registry
                .register(optional_n(), |ctx: CommandContext| async move {
                    let n: i64 = ctx.require("n")?;
                    ctx.reply(&format!("picked {n}"))
                        .await
                        .map_err(|_| botlane::framework::UserError::from("could not answer"))
                })
                .unwrap()
                .register_with(
                    CommandDeclaration::new("guard", "Checks n").option(CommandOption::new(
                        "n",
                        "How many",
                        CommandOptionType::Integer,
                    )),
                    CommandSettings::new().check(Check::sync(|ctx| {
                        let _n: i64 = ctx.require("n")?;
                        Ok(())
                    })),
                    |ctx: CommandContext| async move { ctx.reply("guarded").await },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    let id = alice.send_text(&world.channel, "/pick").await.unwrap();
    let failure = command_error_event(&mut events, &id).await;
    assert_eq!(failure.reason, CommandErrorReason::Arguments, "{failure}");
    let argument = failure.argument_error.as_ref().expect("the argument error");
    assert_eq!(argument.option(), "n");
    assert!(failure.error.is_none(), "{failure:?}");
    bot_says(&alice, &world).await;

    alice.send_text(&world.channel, "/pick 3").await.unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "picked 3");

    let id = alice.send_text(&world.channel, "/guard").await.unwrap();
    let refused = command_error_event(&mut events, &id).await;
    assert_eq!(refused.reason, CommandErrorReason::Check, "{refused}");
    assert!(refused.argument_error.is_none());
}

#[tokio::test]
async fn the_hook_after_each_command_sees_every_invocation_that_ran_on_both_lanes() {
    let world = World::new().await;
    let client = Client::with_data(options(&world), Tally::default()).unwrap();
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<CommandRan<Tally>>();
    client
        // Added first and panics every time: the next hook still runs, and
        // dispatch never hears of it.
        .after_command(|_ran: CommandRan<Tally>| async { panic!("a broken metrics exporter") })
        .after_command(move |ran: CommandRan<Tally>| {
            ran.data().count.fetch_add(1, Ordering::SeqCst);
            tx.send(ran).unwrap();
            async {}
        });
    client
        .commands()
        .update(|registry| {
            registry
                .register(
                    CommandDeclaration::new("slow", "Takes a moment"),
                    |ctx: CommandContext<Tally>| async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        ctx.reply("done").await
                    },
                )
                .unwrap()
                .register(
                    CommandDeclaration::new("boom", "Always fails"),
                    |_ctx: CommandContext<Tally>| async move { Err(std::io::Error::other("no")) },
                )
                .unwrap()
                .register_with(
                    CommandDeclaration::new("guarded", "Nobody may"),
                    CommandSettings::new().check(Check::sync(|_ctx| Err("nobody may".into()))),
                    |ctx: CommandContext<Tally>| async move { ctx.reply("how?").await },
                )
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;
    let mut next = async || {
        tokio::time::timeout(WAIT, seen.recv())
            .await
            .expect("the hook runs in time")
            .expect("the client keeps its hooks")
    };

    // A success on the text lane: every field, and the handler's time.
    let id = alice.send_text(&world.channel, "/slow").await.unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "done");
    let ran = next().await;
    assert_eq!(
        (ran.command.as_str(), ran.source, ran.failure),
        ("slow", CommandSource::Text, None)
    );
    assert!(ran.succeeded());
    assert_eq!(ran.message_id, id);
    assert_eq!(ran.channel_id, world.channel);
    assert_eq!(ran.author_id, world.user.id);
    assert!(
        ran.elapsed >= Duration::from_millis(50),
        "{:?}",
        ran.elapsed
    );

    // The structured lane.
    let id = alice
        .send_with_sidecar(
            &world.channel,
            "/slow",
            &world.sidecar("slow", CommandArgs::new()),
        )
        .await
        .unwrap();
    bot_says(&alice, &world).await;
    let ran = next().await;
    assert_eq!(
        (ran.source, ran.message_id),
        (CommandSource::Structured, id)
    );

    // Failures, after their event: a handler error, a check's refusal.
    let id = alice.send_text(&world.channel, "/boom").await.unwrap();
    command_error_event(&mut events, &id).await;
    let ran = next().await;
    assert!(!ran.succeeded());
    assert_eq!(
        (ran.command.as_str(), ran.failure, ran.message_id),
        ("boom", Some(CommandErrorReason::Handler), id)
    );
    bot_says(&alice, &world).await;
    let id = alice.send_text(&world.channel, "/guarded").await.unwrap();
    let ran = next().await;
    assert_eq!(
        (ran.failure, ran.message_id),
        (Some(CommandErrorReason::Check), id)
    );
    bot_says(&alice, &world).await;

    // A failure of the argument step never started: not seen. The next
    // summary is the invocation after it.
    let id = alice
        .send_text(&world.channel, "/slow unexpected")
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert!(matches!(
        e.reason,
        CommandErrorReason::Parse | CommandErrorReason::Arguments
    ));
    bot_says(&alice, &world).await;
    let id = alice.send_text(&world.channel, "/slow").await.unwrap();
    bot_says(&alice, &world).await;
    assert_eq!(next().await.message_id, id);
    assert_eq!(client.data().count.load(Ordering::SeqCst), 5);
    assert_eq!(
        client.stats().sessions,
        1,
        "the panicking hook broke nothing"
    );
}

/// An error hook that panics does not take the hooks after the command
/// with it: they see every failure, after its error hook, whatever that
/// hook does.
#[tokio::test]
async fn the_hooks_after_a_command_run_when_its_error_hook_panics() {
    let world = World::new().await;
    let client = Client::new(options(&world)).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    client
        .on_error(botlane::framework::OnError::new(|_failure| async {
            panic!("the error hook's own bug");
        }))
        .after_command(move |ran: CommandRan| {
            let tx = tx.clone();
            async move {
                let _ = tx.send((ran.command.clone(), ran.failure));
            }
        });
    client
        .commands()
        .register(
            CommandDeclaration::new("boom", "Fails"),
            |_ctx: CommandContext| async { Err::<(), _>(std::io::Error::other("boom")) },
        )
        .unwrap()
        .register(
            CommandDeclaration::new("ping", "Still here?"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap();
    let alice = world.start(&client).await;
    for _ in 0..2 {
        alice.send_text(&world.channel, "/boom").await.unwrap();
        let ran = tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ran, ("boom".to_owned(), Some(CommandErrorReason::Handler)));
    }
    alice.send_text(&world.channel, "/ping").await.unwrap();
    assert_eq!(bot_says(&alice, &world).await.content, "pong");
}

#[tokio::test]
async fn a_hook_that_never_finishes_holds_its_permit_only_for_the_command_timeout() {
    let world = World::new().await;
    // One permit and a 300 ms timeout: each invocation's hook holds the
    // permit for 300 ms, then is dropped and the next one runs.
    let bound = Duration::from_millis(300);
    let client = Client::new(
        options(&world)
            .max_concurrent_handlers(1)
            .handler_timeout(bound),
    )
    .unwrap();
    let dropped = Arc::new(Mutex::new(Vec::<Arc<AtomicBool>>::new()));
    let hooks = Arc::clone(&dropped);
    client.after_command(move |_ran: CommandRan| {
        let flag = Arc::new(AtomicBool::new(false));
        hooks.lock().unwrap().push(Arc::clone(&flag));
        let guard = DropFlag(flag);
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }
    });
    client
        .commands()
        .register(
            CommandDeclaration::new("ping", "Still here?"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap();
    let alice = world.start(&client).await;

    let sent = tokio::time::Instant::now();
    for _ in 0..3 {
        alice.send_text(&world.channel, "/ping").await.unwrap();
    }
    for _ in 0..3 {
        assert_eq!(bot_says(&alice, &world).await.content, "pong");
    }
    let took = sent.elapsed();
    // The second and third waited for the hooks before them, bounded.
    assert!(took >= bound * 2, "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let flags = dropped.lock().unwrap().clone();
    assert_eq!(flags.len(), 3, "one hook per invocation");
    assert!(
        flags[..2].iter().all(|f| f.load(Ordering::SeqCst)),
        "the hooks before the last answer were dropped at their bound"
    );
    // The last one gives its permit back too.
    tokio::time::timeout(WAIT, async {
        while client.stats().handlers_running > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    assert!(flags[2].load(Ordering::SeqCst));
}

/// A bot whose owners are `owners(world)`, whose client check refuses
/// everyone, with an owners-only `reload` and a `roll` behind a minute's
/// global cooldown; alice connected.
async fn owned_bot(
    owners: impl FnOnce(&World) -> Vec<String>,
    skip_checks: bool,
) -> (World, Client, TestUser, Events) {
    let world = World::new().await;
    let options = options(&world)
        .owners(owners(&world))
        .skip_checks_for_owners(skip_checks);
    let client = Client::new(options).unwrap();
    client.add_check(Check::sync(|_ctx| Err("closed for maintenance".into())));
    client
        .commands()
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("reload", "Reload the word lists"),
                    CommandSettings::new().owners_only(),
                    |ctx: CommandContext| async move { ctx.reply("reloaded").await },
                )
                .unwrap()
                .register_with(
                    CommandDeclaration::new("roll", "Roll a die"),
                    CommandSettings::new().cooldown(Cooldown::global(Duration::from_secs(60))),
                    |ctx: CommandContext| async move { ctx.reply("rolled").await },
                )
                .map(drop)
        })
        .unwrap();
    let events = client.events();
    let alice = world.start(&client).await;
    (world, client, alice, events)
}

#[tokio::test]
async fn owners_only_refuses_others_as_a_check_before_any_check_runs() {
    let someone_else = |_: &World| vec!["3f2504e0-4f89-11d3-9a0c-0305e82c3301".to_owned()];
    let (world, client, alice, mut events) = owned_bot(someone_else, true).await;
    assert!(!client.is_owner(&world.user.id));

    let id = alice.send_text(&world.channel, "/reload").await.unwrap();
    let refused = command_error_event(&mut events, &id).await;
    assert_eq!(refused.reason, CommandErrorReason::Check, "{refused}");
    assert!(refused.error_as::<NotAnOwner>().is_some(), "{refused}");
    // Before the client's check, which would have said something else.
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "only the bot's owners may use this command"
    );
    // The same on the structured lane.
    let on_sidecar = world.sidecar("reload", CommandArgs::new());
    let id = alice
        .send_with_sidecar(&world.channel, "/reload", &on_sidecar)
        .await
        .unwrap();
    let refused = command_error_event(&mut events, &id).await;
    assert_eq!(refused.source, CommandSource::Structured, "{refused}");
    assert!(refused.error_as::<NotAnOwner>().is_some(), "{refused}");
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "only the bot's owners may use this command"
    );
    // Someone else's skip is not hers: the checks run for her.
    alice.send_text(&world.channel, "/roll").await.unwrap();
    assert_eq!(
        bot_says(&alice, &world).await.content,
        "closed for maintenance"
    );
}

#[tokio::test]
async fn owners_skip_checks_and_cooldowns_only_when_the_client_says_so() {
    // Her id as people write it: compared in canonical form.
    let alice = |world: &World| vec![world.user.id.to_uppercase()];
    let (world, client, owner, _events) = owned_bot(alice, true).await;
    assert!(client.is_owner(&world.user.id));
    // The client's check refuses everyone else; the owner skips it, and
    // the cooldown: twice in a row within its minute.
    for _ in 0..2 {
        owner.send_text(&world.channel, "/roll").await.unwrap();
        assert_eq!(bot_says(&owner, &world).await.content, "rolled");
    }
    // And on the structured lane.
    let on_sidecar = world.sidecar("roll", CommandArgs::new());
    owner
        .send_with_sidecar(&world.channel, "/roll", &on_sidecar)
        .await
        .unwrap();
    assert_eq!(bot_says(&owner, &world).await.content, "rolled");
    owner.send_text(&world.channel, "/reload").await.unwrap();
    assert_eq!(bot_says(&owner, &world).await.content, "reloaded");

    // Not asked to skip: an owner passes `owners_only`, then meets the
    // checks like anyone.
    let (world, _client, owner, _events) = owned_bot(alice, false).await;
    for command in ["/reload", "/roll"] {
        owner.send_text(&world.channel, command).await.unwrap();
        assert_eq!(
            bot_says(&owner, &world).await.content,
            "closed for maintenance",
            "{command}"
        );
    }
}
