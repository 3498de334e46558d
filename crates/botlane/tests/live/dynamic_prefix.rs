//! A dynamic prefix over the real devserver: the prefix the application
//! chose for a channel replaces the client's main one there, and only
//! there, for everything the bot reads and writes about a message (the
//! context's prefixes, usage lines, the help, invoked names, error answers
//! made safe); the structured lane follows it too; a prefix no prefix may
//! be, or a panic, leaves the main one and the connection working.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use botlane::framework::{CommandRan, CommandSettings, PrefixRequest, UserError};

use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{Scene, Sidecar};
use support::fixtures::bounded_roll;
use support::{command_error_event, WAIT};
use tokio::sync::mpsc;

const MAIN: &str = "!";
const OTHER: &str = "!!";
/// A prefix the dynamic one gives when it is asked to panic.
const PANIC: &str = "panic, please";

/// What the application holds and updates: channel id → prefix.
type Chosen = Arc<RwLock<HashMap<String, String>>>;

/// A request the closure was given: channel, author, server.
type Request = (String, String, Option<String>);

/// What the test reads back: every request the closure was given, and the
/// invoked name of every command that ran.
struct Seen {
    requests: Arc<RwLock<Vec<Request>>>,
    ran: mpsc::UnboundedReceiver<String>,
}

/// A dice bot reading `!` and `!!`, with a dynamic prefix from `chosen`:
/// `roll` (alias `r`) answers with the name it was invoked by and the
/// context's prefixes, `sulk` fails with a user error that starts with a
/// word, `ping`, and the help.
fn bot(options: ClientOptions, chosen: &Chosen) -> (Result<Client, botlane::BoxError>, Seen) {
    let requests: Arc<RwLock<Vec<Request>>> = Arc::default();
    let (ran_tx, ran) = mpsc::unbounded_channel();
    let (read, record) = (Arc::clone(chosen), Arc::clone(&requests));
    let options = options
        .command_prefix(MAIN)
        .additional_prefixes([OTHER])
        .error_answer_limit(100, Duration::from_secs(1))
        .dynamic_prefix(move |request: &PrefixRequest<'_>| {
            record.write().unwrap().push((
                request.channel_id().to_owned(),
                request.author_id().to_owned(),
                request.server_id().map(str::to_owned),
            ));
            let prefix = read.read().ok()?.get(request.channel_id()).cloned();
            assert_ne!(prefix.as_deref(), Some(PANIC), "the application's bug");
            prefix
        });
    let build = || -> Result<Client, botlane::BoxError> {
        let client = Client::new(options)?;
        let roll = bounded_roll();
        client.commands().update(|registry| {
            registry
                .register_with(
                    roll,
                    CommandSettings::new().aliases(["r"]),
                    |ctx: CommandContext| async move {
                        let count = ctx.get_integer("count").unwrap_or_default();
                        let prefixes = ctx.prefixes().collect::<Vec<_>>().join(" ");
                        let (invoked, prefix) = (ctx.invoked_name(), ctx.prefix());
                        ctx.reply(&format!(
                            "{count} dice by {invoked} under {prefix} of {prefixes}"
                        ))
                        .await
                    },
                )?
                .register(
                    CommandDeclaration::new("sulk", "Refuses"),
                    |_ctx: CommandContext| async { Err::<(), _>(UserError::new("dice says no")) },
                )?
                .register(
                    CommandDeclaration::new("ping", "Check the bot"),
                    |ctx: CommandContext| async move { ctx.reply("pong").await },
                )?
                .enable_help()
                .map(drop)
        })?;
        client.after_command(move |ran: CommandRan| {
            let _ = ran_tx.send(ran.invoked_name().to_owned());
            async {}
        });
        Ok(client)
    };
    (build(), Seen { requests, ran })
}

/// Starts a scene whose bot is [`bot`], its channel given `prefix`.
async fn scene(prefix: &str) -> (Scene, Chosen, Seen) {
    let chosen: Chosen = Arc::default();
    let mut seen = None;
    let scene = Scene::builder()
        .start_bot(|setup| {
            let channel = setup.channel.to_owned();
            chosen.write().unwrap().insert(channel, prefix.to_owned());
            let (client, kept) = bot(setup.options, &chosen);
            seen = Some(kept);
            client
        })
        .await
        .unwrap();
    (scene, chosen, seen.unwrap())
}

/// A second channel of the scene's server, with the bot and alice in it
/// and its key shared.
async fn second_channel(scene: &Scene) -> String {
    let channel = scene
        .server
        .create_channel(&scene.server_id, "second")
        .unwrap();
    scene.server.add_member(&channel, scene.bot_id()).unwrap();
    let alice = &scene.user_account.id;
    scene.server.add_member(&channel, alice).unwrap();
    scene.user.open_channel(&channel).await.unwrap();
    channel
}

#[tokio::test]
async fn a_channel_s_prefix_replaces_the_main_one_there_only() {
    let (scene, chosen, mut seen) = scene("?").await;
    let first = scene.channel.clone();
    let second = second_channel(&scene).await;
    let mut sent = 0;
    let mut say = |channel: &str, line: &str| {
        sent += 1;
        let (channel, line) = (channel.to_owned(), line.to_owned());
        let user = &scene.user;
        async move { user.send_text(&channel, &line).await.unwrap() }
    };
    let answer = || async { scene.answer().await.unwrap() };

    // In the first channel, `?` instead of `!`, and `!!` still.
    say(&first, "!roll 1").await;
    say(&first, "/roll 1").await;
    say(&first, "?roll 3").await;
    let got = answer().await;
    assert_eq!(got.content, "3 dice by roll under ? of ? !!");
    assert_eq!(got.channel_id, first);
    say(&first, "!!r 4").await;
    assert_eq!(answer().await.content, "4 dice by r under ? of ? !!");
    // In the second, the client's prefixes.
    say(&second, "?roll 5").await;
    say(&second, "!roll 6").await;
    let got = answer().await;
    assert_eq!(got.content, "6 dice by roll under ! of ! !!");
    assert_eq!(got.channel_id, second);

    // The hooks after the command read the name typed under `?`.
    let mut ran = Vec::new();
    for _ in 0..3 {
        let name = tokio::time::timeout(WAIT, seen.ran.recv()).await.unwrap();
        ran.push(name.unwrap());
    }
    ran.sort();
    assert_eq!(ran, ["r", "roll", "roll"]);
    say(&first, "?r 2").await;
    answer().await;
    let name = tokio::time::timeout(WAIT, seen.ran.recv()).await.unwrap();
    assert_eq!(name.unwrap(), "r");

    // A mistake is answered with the channel's usage line, and its failure
    // reads the name typed under `?`.
    let mut events = scene.bot.events();
    let id = say(&first, "?r 50").await;
    let text = answer().await.content;
    assert!(text.ends_with("\nusage: ?roll <count (1 to 20)>"), "{text}");
    let failure = command_error_event(&mut events, &id).await;
    assert_eq!(failure.invoked_name(), "r");
    assert_eq!(failure.prefixes().collect::<Vec<_>>(), ["?", "!!"]);
    let id = say(&second, "!r 50").await;
    let text = answer().await.content;
    assert!(text.ends_with("\nusage: !roll <count (1 to 20)>"), "{text}");
    let failure = command_error_event(&mut events, &id).await;
    assert_eq!(failure.prefixes().collect::<Vec<_>>(), ["!", "!!"]);

    // The help writes the channel's prefix, naming the other once.
    say(&first, "?help").await;
    assert_eq!(
        answer().await.content,
        "Commands (send ?help <command> for details):\n\
         ?help [command (up to 32 characters)] - List the commands, or explain one\n\
         ?ping - Check the bot\n\
         ?roll <count (1 to 20)> - Roll some dice (aliases: ?r)\n\
         ?sulk - Refuses\n\
         \n\
         Other prefixes: !!"
    );
    say(&first, "!!help ?r").await;
    let detail = answer().await.content;
    assert!(
        detail.starts_with("Command roll: Roll some dice\nusage: ?roll <count (1 to 20)>"),
        "{detail}"
    );

    // Changed by the application, at once; an error answer is made safe
    // against the channel's prefix, a word here.
    chosen
        .write()
        .unwrap()
        .insert(first.clone(), "dice".to_owned());
    say(&first, "?ping").await;
    say(&first, "dicesulk").await;
    assert_eq!(answer().await.content, "⚠ dice says no");
    say(&second, "dicesulk").await;
    say(&second, "!sulk").await;
    let got = answer().await;
    assert_eq!(
        (got.content.as_str(), got.channel_id),
        ("dice says no", second.clone())
    );

    // Asked once per message of alice's, never for the bot's own answers,
    // and told where and by whom.
    let requests = seen.requests.read().unwrap().clone();
    assert_eq!(requests.len(), sent, "{requests:?}");
    for (channel, author, server) in &requests {
        assert!(*channel == first || *channel == second, "{channel}");
        assert_eq!(*author, scene.user_account.id);
        assert_eq!(server.as_deref(), Some(scene.server_id.as_str()));
    }
    assert_eq!(scene.bot.stats().dynamic_prefixes_refused, 0);
    scene.close().await.unwrap();
}

#[tokio::test]
async fn a_structured_invocation_is_written_about_with_the_channel_s_prefix() {
    let (scene, _chosen, _seen) = scene("?").await;
    let roll = Sidecar::to(scene.bot_id()).command("roll");
    scene
        .send_sidecar("dice please", &roll.clone().arg("count", 5_i64))
        .await
        .unwrap();
    let answer = || async { scene.answer().await.unwrap().content };
    assert_eq!(answer().await, "5 dice by roll under ? of ? !!");
    scene
        .send_sidecar("dice please", &roll.arg("count", 50_i64))
        .await
        .unwrap();
    let text = answer().await;
    assert!(text.ends_with("\nusage: ?roll <count (1 to 20)>"), "{text}");
    scene.close().await.unwrap();
}

#[tokio::test]
async fn what_no_prefix_may_be_and_a_panic_leave_the_main_prefix_and_the_connection() {
    let (scene, chosen, _seen) = scene("a b").await;
    let channel = scene.channel.clone();
    let choose = |prefix: &str| {
        let prefix = prefix.to_owned();
        chosen.write().unwrap().insert(channel.clone(), prefix);
    };
    let answer = || async { scene.answer().await.unwrap().content };
    let refused = || scene.bot.stats().dynamic_prefixes_refused;

    scene.say("a bping").await.unwrap();
    scene.say("!roll 2").await.unwrap();
    assert_eq!(answer().await, "2 dice by roll under ! of ! !!");
    assert_eq!(refused(), 2);
    for (n, prefix) in [(3, ""), (4, "x".repeat(33).as_str()), (5, PANIC)] {
        choose(prefix);
        scene.say("!ping").await.unwrap();
        assert_eq!(answer().await, "pong", "{prefix:?}");
        assert_eq!(refused(), n, "{prefix:?}");
    }
    // The same connection reads the channel's prefix again once it is one.
    let connections = scene.bot.stats().sessions;
    choose("?");
    scene.say("!ping").await.unwrap();
    scene.say("?ping").await.unwrap();
    assert_eq!(answer().await, "pong");
    assert_eq!(refused(), 5);
    assert_eq!(scene.bot.stats().sessions, connections);
    scene.close().await.unwrap();
}

#[test]
fn the_options_say_a_dynamic_prefix_is_set_without_showing_it() {
    let options = ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws");
    assert!(format!("{options:?}").contains("dynamic_prefix: None"));
    let options = options.dynamic_prefix(|_| Some("?".to_owned()));
    assert!(format!("{options:?}").contains("dynamic_prefix: Some(DynamicPrefix(..))"));
    // The closure's `Arc` is cloned with the options.
    assert!(format!("{:?}", options.clone()).contains("DynamicPrefix(..)"));
    // Still movable into `catch_unwind`, as before they could hold one.
    let prefix = std::panic::catch_unwind(move || options.command_prefix).unwrap();
    assert_eq!(prefix, "/");
}
