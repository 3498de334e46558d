//! dicebot's commands in a devserver `Scene`: the service, the bot and a
//! human member in this process, over real sockets, on both lanes.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use botlane::framework::{render_help, usage_line};

use botlane::Command;
use botlane_devserver::{DevServerConfig, Scene};
use dicebot::{Echo, Files, Flip, Roll, Side, NO_COMMANDS, REST_LANE_OFF};

/// The dice of an answer such as `3d8 for luck: 2 + 5 + 1 = 8`, after
/// checking its head and its total.
fn dice(answer: &str, head: &str, sides: u32) -> Vec<u32> {
    let (dice, total) = answer
        .strip_prefix(head)
        .and_then(|rest| rest.split_once(" = "))
        .unwrap_or_else(|| panic!("not a roll: {answer}"));
    let dice: Vec<u32> = dice.split(" + ").map(|d| d.parse().unwrap()).collect();
    assert!(dice.iter().all(|d| (1..=sides).contains(d)), "{answer}");
    assert_eq!(total.parse::<u32>().unwrap(), dice.iter().sum::<u32>());
    dice
}

#[tokio::test]
async fn roll_answers_on_both_lanes() {
    let scene = Scene::start(dicebot::commands).await.unwrap();

    let asked = scene.say("/roll 3 8 fire damage").await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(answer.reply_to.as_deref(), Some(asked.as_str()));
    assert_eq!(dice(&answer.content, "3d8 for fire damage: ", 8).len(), 3);

    let roll = Roll {
        count: 2,
        sides: Some(20),
        label: None,
    };
    let asked = scene.invoke(&roll).await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(answer.reply_to.as_deref(), Some(asked.as_str()));
    assert_eq!(dice(&answer.content, "2d20: ", 20).len(), 2);

    // Six sides unless told.
    scene.say("/roll 1").await.unwrap();
    assert_eq!(
        dice(&scene.answer().await.unwrap().content, "1d6: ", 6).len(),
        1
    );
}

#[tokio::test]
async fn flip_answers_a_structured_call() {
    let scene = Scene::start(dicebot::commands).await.unwrap();
    for call in [Side::Heads, Side::Tails] {
        scene.invoke(&Flip { call }).await.unwrap();
        let answer = scene.answer().await.unwrap().content;
        let (win, lose) = match call {
            Side::Heads => ("heads, you win", "tails, you lose"),
            Side::Tails => ("tails, you win", "heads, you lose"),
        };
        assert!(answer == win || answer == lose, "{answer}");
    }
}

#[tokio::test]
async fn echo_posts_the_rest_of_the_line_and_never_a_command() {
    let scene = Scene::start(dicebot::commands).await.unwrap();

    scene.say("/echo hello, \"world\"").await.unwrap();
    let answer = scene.answer().await.unwrap();
    // The last string option takes the rest of the line as typed.
    assert_eq!(answer.content, "hello, \"world\"");
    assert_eq!(answer.reply_to, None);

    // A text that another bot would run is refused, on both lanes, with an
    // answer that is no command either.
    let asked = scene.say("/echo /roll 2").await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reply_to.as_deref()),
        (NO_COMMANDS, Some(asked.as_str()))
    );
    let echo = Echo {
        text: "/flip heads".into(),
    };
    let asked = scene.invoke(&echo).await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reply_to.as_deref()),
        (NO_COMMANDS, Some(asked.as_str()))
    );
}

#[tokio::test]
async fn echo_refuses_a_text_any_line_of_which_reads_as_a_command() {
    let scene = Scene::start(dicebot::commands).await.unwrap();
    // The greedy string keeps line breaks: echoed, `/roll 2` would stand on
    // a line of its own, which a bot reading line by line runs.
    for line in [
        "/echo hi\n/roll 2",
        "/echo hi\r\n  /roll 2",
        "/echo hi\u{2028}/roll 2",
    ] {
        let asked = scene.say(line).await.unwrap();
        let answer = scene.answer().await.unwrap();
        assert_eq!(
            (answer.content.as_str(), answer.reply_to.as_deref()),
            (NO_COMMANDS, Some(asked.as_str())),
            "{line:?}"
        );
    }
    // Lines that read as nothing are echoed as they are.
    scene.say("/echo hi\nthere a/b").await.unwrap();
    assert_eq!(scene.answer().await.unwrap().content, "hi\nthere a/b");
}

#[tokio::test]
async fn echo_never_posts_a_command_under_any_of_the_bots_prefixes() {
    let scene = Scene::builder()
        .client_options(|options| options.additional_prefixes(["?"]))
        .start(dicebot::commands)
        .await
        .unwrap();
    // Under `?`, another copy of this bot would run `roll` from the echo.
    let asked = scene.say("?echo ?roll 2").await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reply_to.as_deref()),
        (NO_COMMANDS, Some(asked.as_str()))
    );
    scene.say("/echo roll 2").await.unwrap();
    assert_eq!(scene.answer().await.unwrap().content, "roll 2");
}

#[tokio::test]
async fn help_lists_the_commands_and_explains_one() {
    let scene = Scene::start(dicebot::commands).await.unwrap();
    let registry = scene.bot.commands().snapshot();

    scene.say("/help").await.unwrap();
    let list = scene.answer().await.unwrap().content;
    assert_eq!(list, render_help(&registry, None, None));
    for command in [
        Roll::declaration(),
        Flip::declaration(),
        Echo::declaration(),
        Files::declaration(),
    ] {
        assert!(list.contains(&usage_line(&command, None)), "{list}");
    }

    scene.say("/help roll").await.unwrap();
    let roll = scene.answer().await.unwrap().content;
    assert_eq!(roll, render_help(&registry, Some("roll"), None));
    // The bounds and the choices are part of it.
    assert!(roll.contains("1 to 20") && roll.contains("12"), "{roll}");
}

#[tokio::test]
async fn files_lists_the_shared_files_through_the_rest_lane() {
    let scene = Scene::builder()
        .server_config(DevServerConfig::default().bot_rest_credentials(true))
        .start(dicebot::commands)
        .await
        .unwrap();

    let asked = scene.say("/files").await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reply_to.as_deref()),
        ("no files shared", Some(asked.as_str()))
    );

    for name in ["notes.txt", "map of the dungeon.png"] {
        scene
            .server
            .add_file(&scene.server_id, name, b"bytes".to_vec())
            .unwrap();
    }
    scene.invoke(&Files).await.unwrap();
    assert_eq!(
        scene.answer().await.unwrap().content,
        r#"2 files: "notes.txt", "map of the dungeon.png""#
    );
    // One credential for both calls: minted and exchanged once.
    assert_eq!(
        (scene.server.mint_count(), scene.server.exchange_count()),
        (1, 1)
    );

    // A failure other than the flag gets the default answer, which names
    // the command only: the credential is purged (the next call gets 401
    // and mints again) and no mint is allowed.
    scene.server.set_mint_rate_limit(0, Duration::from_secs(60));
    assert_eq!(
        scene.server.purge_rest_credentials(scene.bot_id()).unwrap(),
        1
    );
    scene.say("/files").await.unwrap();
    assert_eq!(
        scene.answer().await.unwrap().content,
        "sorry, the files command failed"
    );
}

#[tokio::test]
async fn files_says_when_the_service_keeps_the_rest_lane_off() {
    // The devserver's default, as the real service's: BOT_REST_CREDENTIALS off.
    let scene = Scene::start(dicebot::commands).await.unwrap();

    let asked = scene.say("/files").await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reply_to.as_deref()),
        (REST_LANE_OFF, Some(asked.as_str()))
    );
    // Refused at the mint: nothing went over HTTP.
    assert!(scene.server.http_requests().is_empty());
    assert_eq!(scene.server.mint_count(), 0);

    // The binary's --rest-credentials; in a test, at run time. The bot
    // needs no restart: its next call mints.
    scene.server.set_rest_credentials(true);
    scene.say("/files").await.unwrap();
    assert_eq!(scene.answer().await.unwrap().content, "no files shared");
    assert_eq!(scene.server.mint_count(), 1);
}
