//! Additional prefixes over the real devserver: a line is read under the
//! longest of the client's prefixes it starts with; everything the bot
//! writes (usage lines, the help) uses the main prefix, the help naming
//! the others once; error answers are safe against every prefix; the
//! structured lane is unchanged; and the options are checked at build.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::time::Duration;

use botlane::framework::{CommandSettings, UserError};

use botlane::{match_command_name, Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{Scene, Sidecar};
use support::fixtures::bounded_roll;
use support::{command_error_event, WAIT};

/// The main prefix and the others, one of them a prefix of another and one
/// a word: `bot` would read `bot says no` as the command `says`.
const MAIN: &str = "!";
const OTHERS: [&str; 3] = ["!!", "?", "bot"];

/// A dice bot: `roll` (alias `r`) answers with the name it was invoked by,
/// `sulk` fails with a user error whose text starts with `bot`, `ping`,
/// and the built-in help.
fn bot(options: ClientOptions) -> Result<Client, botlane::BoxError> {
    let client = Client::new(options.command_prefix(MAIN).additional_prefixes(OTHERS))?;
    let roll = bounded_roll();
    client.commands().update(|registry| {
        registry
            .register_with(
                roll,
                CommandSettings::new().aliases(["r"]),
                |ctx: CommandContext| async move {
                    let count = ctx.get_integer("count").unwrap_or_default();
                    ctx.reply(&format!("{count} dice by {}", ctx.invoked_name()))
                        .await
                },
            )?
            .register(
                CommandDeclaration::new("sulk", "Refuses"),
                |_ctx: CommandContext| async { Err::<(), _>(UserError::new("bot says no")) },
            )?
            .register(
                CommandDeclaration::new("ping", "Check the bot"),
                |ctx: CommandContext| async move { ctx.reply("pong").await },
            )?
            .enable_help()
            .map(drop)
    })?;
    Ok(client)
}

#[tokio::test]
async fn a_line_is_read_under_the_longest_prefix_it_starts_with() {
    let scene = Scene::builder()
        .start_bot(|setup| {
            bot(setup
                .options
                .error_answer_limit(100, Duration::from_secs(1)))
        })
        .await
        .unwrap();
    let answer = || async { scene.answer().await.unwrap().content };

    for (line, want) in [
        ("!roll 2", "2 dice by roll"),
        ("  ?ROLL 3", "3 dice by roll"),
        // Under `!` this would be the name `!r`, which is none.
        ("!!r 4", "4 dice by r"),
        ("botroll 5", "5 dice by roll"),
    ] {
        scene.say(line).await.unwrap();
        assert_eq!(answer().await, want, "{line:?}");
    }

    // Lines under no prefix, or with nothing after it, are plain
    // messages: had any run, its answer would come before `pong`.
    // `bot!r` is read under `bot`, the only prefix it starts with: `!r`.
    for line in [
        "/roll 6",
        "bot roll 6",
        "robot roll 6",
        "? roll 6",
        "!!!roll 6",
        "bot!r 6",
    ] {
        scene.say(line).await.unwrap();
    }
    scene.say("?ping").await.unwrap();
    assert_eq!(answer().await, "pong");

    // A mistake under another prefix is answered with the main one's usage.
    let mut events = scene.bot.events();
    let id = scene.say("?roll two").await.unwrap();
    let text = answer().await;
    assert!(text.ends_with("\nusage: !roll <count (1 to 20)>"), "{text}");
    let parse = command_error_event(&mut events, &id).await;
    assert_eq!(parse.command, "roll");
    let id = scene.say("!!r 50").await.unwrap();
    let text = answer().await;
    assert!(text.ends_with("\nusage: !roll <count (1 to 20)>"), "{text}");
    assert_eq!(command_error_event(&mut events, &id).await.command, "roll");

    // An error answer no prefix of the bot's reads as an invocation.
    scene.say("?sulk").await.unwrap();
    let sulk = answer().await;
    assert_eq!(sulk, "⚠ bot says no");
    for prefix in std::iter::once(MAIN).chain(OTHERS) {
        assert_eq!(match_command_name(&sulk, Some(prefix)), None, "{prefix:?}");
    }

    // The help writes the main prefix and names the others once.
    scene.say("bothelp").await.unwrap();
    assert_eq!(
        answer().await,
        "Commands (send !help <command> for details):\n\
         !help [command (up to 32 characters)] - List the commands, or explain one\n\
         !ping - Check the bot\n\
         !roll <count (1 to 20)> - Roll some dice (aliases: !r)\n\
         !sulk - Refuses\n\
         \n\
         Other prefixes: !! ? bot"
    );
    scene.say("!help ?r").await.unwrap();
    let detail = answer().await;
    assert!(
        detail.starts_with("Command roll: Roll some dice\nusage: !roll <count (1 to 20)>"),
        "{detail}"
    );
    scene.close().await.unwrap();
}

#[tokio::test]
async fn a_help_whose_own_words_start_with_a_prefix_is_marked_where_they_do() {
    // `C` reads the help's first line `Commands…` as the command `ommands`,
    // `D` the heading `Dice rolls:` as `ice`.
    let scene = Scene::builder()
        .start_bot(|setup| {
            let client = Client::new(
                setup
                    .options
                    .command_prefix("C")
                    .additional_prefixes(["D"])
                    .error_answer_limit(100, Duration::from_secs(1)),
            )?;
            client.commands().update(|registry| {
                registry
                    .register_with(
                        CommandDeclaration::new("roll", "Roll some dice"),
                        CommandSettings::new()
                            .category("Dice rolls")
                            .help_text("Rolls.\nDon't roll twice."),
                        |ctx: CommandContext| async move { ctx.reply("rolled").await },
                    )?
                    .register(
                        // A description may hold line breaks: under `D`, its
                        // second line would be the command `o`.
                        CommandDeclaration::new("sulk", "Refuses\nDo not ask"),
                        |_ctx: CommandContext| async {
                            Err::<(), _>(UserError::new("no dice left\nCroll 2"))
                        },
                    )?
                    .enable_help()
                    .map(drop)
            })?;
            Ok::<_, botlane::BoxError>(client)
        })
        .await
        .unwrap();
    let answer = || async { scene.answer().await.unwrap().content };

    scene.say("Chelp").await.unwrap();
    let list = answer().await;
    assert_eq!(
        list,
        "⚠ Commands (send Chelp <command> for details):\n\
         Chelp [command (up to 32 characters)] - List the commands, or explain one\n\
         Csulk - Refuses\n\
         ⚠ Do not ask\n\
         \n\
         ⚠ Dice rolls:\n\
         Croll - Roll some dice\n\
         \n\
         Other prefixes: D"
    );
    scene.say("Dhelp roll").await.unwrap();
    let detail = answer().await;
    assert_eq!(
        detail,
        "⚠ Command roll: Roll some dice\nusage: Croll\n\nRolls.\n⚠ Don't roll twice."
    );
    scene.say("Chelp dance").await.unwrap();
    let unknown = answer().await;
    assert_eq!(unknown, "No command by that name; send Chelp for the list.");
    // An error answer's second line, as a bot reading line by line sees it.
    scene.say("Csulk").await.unwrap();
    let sulk = answer().await;
    assert_eq!(sulk, "no dice left\n⚠ Croll 2");
    // Only the list's usage lines read as an invocation, by design.
    for text in [&list, &detail, &unknown, &sulk] {
        for line in text.lines().filter(|l| !l.contains(" - ")) {
            for prefix in ["C", "D"] {
                let name = match_command_name(line, Some(prefix));
                assert_eq!(name, None, "{line:?} under {prefix:?}");
            }
        }
    }
    scene.close().await.unwrap();
}

#[tokio::test]
async fn the_structured_lane_still_wins_over_a_line_under_another_prefix() {
    let scene = Scene::builder()
        .start_bot(|setup| bot(setup.options))
        .await
        .unwrap();
    let sidecar = Sidecar::to(scene.bot_id())
        .command("roll")
        .arg("count", 5_i64);
    scene.send_sidecar("!!r 9", &sidecar).await.unwrap();
    let answer = tokio::time::timeout(WAIT, scene.answer()).await.unwrap();
    // The sidecar's arguments and its name, not the line's alias.
    assert_eq!(answer.unwrap().content, "5 dice by roll");
    scene.close().await.unwrap();
}

#[tokio::test]
async fn bad_additional_prefixes_are_refused_when_the_client_is_built() {
    let options = || ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").command_prefix("!");
    for (prefixes, rule) in [
        (
            vec!["?", "!"],
            r#"additional_prefixes[1] is "!", the command_prefix already"#,
        ),
        (
            vec!["? "],
            "additional_prefixes[0] must not contain whitespace",
        ),
        (vec![""], "additional_prefixes[0] must not be empty"),
    ] {
        let err = Client::new(options().additional_prefixes(prefixes))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            format!("invalid client option `additional_prefixes`: {rule}")
        );
    }
    let nine: Vec<String> = (0..9).map(|i| format!("{i}?")).collect();
    let err = Client::new(options().additional_prefixes(nine))
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "invalid client option `additional_prefixes`: must hold at most 8 prefixes (it has 9)"
    );
}
