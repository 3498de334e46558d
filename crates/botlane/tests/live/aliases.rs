//! Aliases over the real devserver: a line naming an alias runs the
//! command under its own name (its cooldown, checks, error answers, events
//! and hooks after the command all see the name; only
//! `CommandContext::invoked_name`, `CommandRan::invoked_name` and
//! `CommandError::invoked_name` see the alias, also under an additional
//! prefix), the built-in help lists
//! and explains them (with the command's help text, whose lines no bot
//! reads as invocations), and a sidecar naming an alias is an unknown command:
//! ignored, with no fallback to its text line.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::Mutex;
use std::time::Duration;

use botlane::framework::{Check, CommandRan, CommandSettings, Cooldown};

use botlane::{
    match_command_name, BoxError, Client, ClientOptions, CommandContext, CommandDeclaration,
    CommandSource,
};
use botlane_devserver::{Scene, Sidecar, TestUser};
use support::fixtures::bounded_roll;
use support::{command_error_event, WAIT};

/// What the bot saw, for the test to compare.
#[derive(Default)]
struct Seen {
    /// Each run of `roll`: its name, the name typed, the lane.
    runs: Mutex<Vec<(String, String, CommandSource)>>,
    /// The name each check of `roll` saw.
    checked: Mutex<Vec<String>>,
    /// The command of each hook after a command, with the name typed when
    /// it is another and its failure if any.
    after: Mutex<Vec<String>>,
}

fn push<T>(list: &Mutex<Vec<T>>, item: T) {
    list.lock().unwrap_or_else(|p| p.into_inner()).push(item);
}

fn copy<T: Clone>(list: &Mutex<Vec<T>>) -> Vec<T> {
    list.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The help text of `roll`: lines that start with the prefix or another
/// bot's would be invocations to a bot reading line by line.
const ROLL_HELP: &str =
    "Rolls six-sided dice.\n\n/roll 20 rolls them all.\n  !ping is another bot's.";

/// A dice bot whose `roll` has the aliases `r` and `dice`, a help text and
/// a long per-user cooldown, a `boom` (alias `b`) that always fails, `ping`, and
/// the built-in help.
fn bot(options: ClientOptions) -> Result<Client<Seen>, BoxError> {
    let client = Client::with_data(options, Seen::default())?;
    let roll = bounded_roll();
    let seen_by_check = Check::sync(|ctx: &CommandContext<Seen>| {
        push(&ctx.data().checked, ctx.name().to_owned());
        Ok(())
    });
    let settings = CommandSettings::new()
        .aliases(["r", "dice"])
        .help_text(ROLL_HELP)
        .check(seen_by_check)
        .cooldown(Cooldown::per_user(Duration::from_secs(3600)));
    client.commands().update(|registry| {
        registry
            .register_with(roll, settings, |ctx: CommandContext<Seen>| async move {
                let invoked = ctx.invoked_name().into_owned();
                push(
                    &ctx.data().runs,
                    (ctx.name().to_owned(), invoked.clone(), ctx.source()),
                );
                let count = ctx.get_integer("count").unwrap_or_default();
                ctx.reply(&format!("{count} dice by {invoked}")).await
            })?
            .register_with(
                CommandDeclaration::new("boom", "Always fails"),
                CommandSettings::new().aliases(["b"]),
                |_ctx: CommandContext<Seen>| async {
                    Err::<(), _>(std::io::Error::other("on fire"))
                },
            )?
            .register(
                CommandDeclaration::new("ping", "Check the bot"),
                |ctx: CommandContext<Seen>| async move { ctx.reply("pong").await },
            )?
            .enable_help()
            .map(drop)
    })?;
    client.after_command(|ran: CommandRan<Seen>| async move {
        let failure = ran.failure.map(|f| format!(" {}", f.as_str()));
        let invoked = Some(ran.invoked_name())
            .filter(|&invoked| invoked != ran.command)
            .map(|invoked| format!(" as {invoked}"));
        let line = format!(
            "{}{}{}",
            ran.command,
            invoked.unwrap_or_default(),
            failure.unwrap_or_default()
        );
        push(&ran.data().after, line);
    });
    Ok(client)
}

/// Bob, a second human in the scene's channel, with its key.
async fn bob(scene: &Scene<Seen>) -> TestUser {
    let account = scene.server.add_user("bob");
    scene
        .server
        .add_member(&scene.channel, &account.id)
        .unwrap();
    let bob = TestUser::connect(&scene.server.ws_url(), &account.token)
        .await
        .unwrap();
    scene
        .user
        .share_key_with(&scene.channel, bob.user_id())
        .await
        .unwrap();
    bob.wait_for_key(&scene.channel, WAIT).await.unwrap();
    bob
}

#[tokio::test]
async fn an_alias_runs_its_command_under_the_command_s_name_on_the_text_lane_only() {
    let scene = Scene::builder()
        .start_bot(|setup| {
            bot(setup
                .options
                .error_answer_limit(100, Duration::from_secs(1)))
        })
        .await
        .unwrap();
    let mut events = scene.bot.events();
    let answer = || async { scene.answer().await.unwrap().content };

    // A sidecar naming an alias: the menu never offered it, so it is an
    // unknown command, and its text line (an invocation by itself) is not
    // read instead. Had either run, `roll`'s answer would come before
    // `pong` (and alice's cooldown would refuse `/R 2` below).
    let sidecar = Sidecar::to(scene.bot_id()).command("r").arg("count", 5_i64);
    scene.send_sidecar("/r 5", &sidecar).await.unwrap();
    scene.say("/ping").await.unwrap();
    assert_eq!(answer().await, "pong");
    // A sidecar naming `ping` under a line naming an alias: the structured
    // lane's name is the sidecar's, whatever the line says.
    let sidecar = Sidecar::to(scene.bot_id()).command("ping");
    scene.send_sidecar("/r 5", &sidecar).await.unwrap();
    assert_eq!(answer().await, "pong");

    // The alias runs `roll`; the handler sees the name typed, lowered.
    scene.say("/R 2").await.unwrap();
    assert_eq!(answer().await, "2 dice by r");
    // The cooldown the alias started is the command's.
    let id = scene.say("/roll 3").await.unwrap();
    let cooling = answer().await;
    assert!(
        cooling.starts_with("this command is cooling down"),
        "{cooling}"
    );
    let refused = command_error_event(&mut events, &id).await;
    assert_eq!(
        (refused.command.as_str(), &*refused.invoked_name()),
        ("roll", "roll")
    );

    // And the other way round: bob starts it by name, the alias waits.
    let bob = bob(&scene).await;
    bob.send_text(&scene.channel, "/roll 1").await.unwrap();
    assert_eq!(answer().await, "1 dice by roll");
    let id = bob.send_text(&scene.channel, "/DICE 1").await.unwrap();
    let cooling = answer().await;
    assert!(
        cooling.starts_with("this command is cooling down"),
        "{cooling}"
    );
    // Only the name typed, which the failure reads back, is the alias.
    let refused = command_error_event(&mut events, &id).await;
    assert_eq!(
        (refused.command.as_str(), &*refused.invoked_name()),
        ("roll", "dice")
    );

    // Mistakes under an alias are the command's: its usage line, its name.
    let id = scene.say("/dice two").await.unwrap();
    let text = answer().await;
    assert!(text.ends_with("\nusage: /roll <count (1 to 20)>"), "{text}");
    let parse = command_error_event(&mut events, &id).await;
    assert_eq!(
        (parse.command.as_str(), &*parse.invoked_name()),
        ("roll", "dice")
    );
    assert_eq!(parse.parse_error.unwrap().command(), "roll");
    let id = scene.say("/b").await.unwrap();
    assert_eq!(answer().await, "sorry, the boom command failed");
    let failed = command_error_event(&mut events, &id).await;
    assert_eq!(
        (failed.command.as_str(), &*failed.invoked_name()),
        ("boom", "b")
    );

    // The help lists the aliases beside the command (not the help text),
    // and explains it when asked about one, the help text last.
    scene.say("/help").await.unwrap();
    assert_eq!(
        answer().await,
        "Commands (send /help <command> for details):\n\
         /boom - Always fails (aliases: /b)\n\
         /help [command (up to 32 characters)] - List the commands, or explain one\n\
         /ping - Check the bot\n\
         /roll <count (1 to 20)> - Roll some dice (aliases: /r, /dice)"
    );
    scene.say("/help R").await.unwrap();
    assert_eq!(
        answer().await,
        "Command roll: Roll some dice\n\
         usage: /roll <count (1 to 20)>\n\
         aliases: /r, /dice\n\
         - count (integer, required, 1 to 20): How many dice\n\
         \n\
         Rolls six-sided dice.\n\
         \n\
         ⚠ /roll 20 rolls them all.\n\
         ⚠ !ping is another bot's."
    );
    // The same by name; and no line of it invokes anything, for a bot
    // reading the whole message (the grammar) or line by line.
    scene.say("/help roll").await.unwrap();
    let detail = answer().await;
    assert!(detail.ends_with("⚠ !ping is another bot's."), "{detail}");
    for prefix in ["/", "!"] {
        assert_eq!(match_command_name(&detail, Some(prefix)), None);
        for line in detail.lines() {
            let name = match_command_name(line, Some(prefix));
            assert_eq!(name, None, "{prefix}: {line}");
        }
    }

    // Everything keyed on the command saw its name.
    let run = |invoked: &str| ("roll".to_owned(), invoked.to_owned(), CommandSource::Text);
    assert_eq!(copy(&scene.bot.data().runs), [run("r"), run("roll")]);
    // The check ran for the two runs and the two refused by the cooldown.
    assert_eq!(copy(&scene.bot.data().checked), ["roll"; 4]);
    let expected = [
        "ping",
        "ping",
        "roll as r",
        "roll cooldown",
        "roll",
        "roll as dice cooldown",
        "boom as b handler",
        "help",
        "help",
        "help",
    ];
    assert_eq!(after_hooks(&scene, expected.len()).await, expected);

    // The menu the service holds names the commands only.
    let menu = scene.server.menu(scene.bot_id()).unwrap();
    let names: Vec<&str> = menu.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["boom", "help", "ping", "roll"]);
    assert_eq!(menu.commands[3].description, "Roll some dice");
    scene.close().await.unwrap();
}

/// Waits until the hooks after the commands have run `count` times (they
/// run after the answers), then gives what they saw.
async fn after_hooks(scene: &Scene<Seen>, count: usize) -> Vec<String> {
    tokio::time::timeout(WAIT, async {
        while copy(&scene.bot.data().after).len() < count {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the hooks after the commands ran");
    copy(&scene.bot.data().after)
}

#[tokio::test]
async fn a_failure_and_a_hook_read_the_alias_under_the_additional_prefix_the_line_used() {
    let scene = Scene::builder()
        .start_bot(|setup| {
            bot(setup
                .options
                .command_prefix("!")
                .additional_prefixes(["?", "!!"])
                .error_answer_limit(100, Duration::from_secs(1)))
        })
        .await
        .unwrap();
    let mut events = scene.bot.events();
    let answer = || async { scene.answer().await.unwrap().content };

    // Out of bounds under `?`, which the main prefix would not read at
    // all: the failure names the alias typed, the usage line the main
    // prefix.
    let id = scene.say("?r 99").await.unwrap();
    let text = answer().await;
    assert!(text.ends_with("\nusage: !roll <count (1 to 20)>"), "{text}");
    let bounds = command_error_event(&mut events, &id).await;
    assert_eq!(
        (bounds.command.as_str(), &*bounds.invoked_name()),
        ("roll", "r")
    );
    // Under `!!`, which `!` starts too: read under the longest, not as the
    // name `!b` under `!`.
    let id = scene.say("!!B").await.unwrap();
    assert_eq!(answer().await, "sorry, the boom command failed");
    let failed = command_error_event(&mut events, &id).await;
    assert_eq!(
        (failed.command.as_str(), &*failed.invoked_name()),
        ("boom", "b")
    );
    scene.say("?dice 2").await.unwrap();
    assert_eq!(answer().await, "2 dice by dice");

    // The argument failure never started, so it has no hook after it.
    assert_eq!(
        after_hooks(&scene, 2).await,
        ["boom as b handler", "roll as dice"]
    );
    scene.close().await.unwrap();
}

#[tokio::test]
async fn a_command_added_after_login_may_not_take_an_alias_and_its_own_aliases_work_at_once() {
    let scene = Scene::builder()
        .start_bot(|setup| bot(setup.options))
        .await
        .unwrap();
    let ok = |ctx: CommandContext<Seen>| async move {
        let text = format!("flipped by {}", ctx.invoked_name());
        ctx.reply(&text).await
    };
    let commands = scene.bot.commands();
    let err = commands
        .register(CommandDeclaration::new("dice", "Other dice"), ok)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("this name is already an alias of command \"roll\""),
        "{err}"
    );
    let err = commands
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("flip", "Flip a coin"),
                    CommandSettings::new().aliases(["coin", "r"]),
                    ok,
                )
                .map(drop)
        })
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("alias \"r\" is already a name or an alias of command \"roll\""),
        "{err}"
    );
    commands
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("flip", "Flip a coin"),
                    CommandSettings::new().aliases(["coin"]),
                    ok,
                )
                .map(drop)
        })
        .unwrap();
    scene.say("/coin").await.unwrap();
    assert_eq!(scene.answer().await.unwrap().content, "flipped by coin");
    // The refused registrations left nothing behind.
    scene.say("/dice 4").await.unwrap();
    assert_eq!(scene.answer().await.unwrap().content, "4 dice by dice");
    scene.close().await.unwrap();
}
