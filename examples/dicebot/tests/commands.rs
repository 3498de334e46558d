//! dicebot's commands in a devserver `Scene`: the service, the bot and a
//! human member in this process, over real sockets, on both lanes.
#![allow(clippy::unwrap_used)]

use botlane::{help_text, usage_line, Command};
use botlane_devserver::Scene;
use dicebot::{Echo, Flip, Roll, Side, NO_COMMANDS};

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
async fn help_lists_the_commands_and_explains_one() {
    let scene = Scene::start(dicebot::commands).await.unwrap();
    let registry = scene.bot.commands().snapshot();

    scene.say("/help").await.unwrap();
    let list = scene.answer().await.unwrap().content;
    assert_eq!(list, help_text(&registry, None, None));
    for command in [
        Roll::declaration(),
        Flip::declaration(),
        Echo::declaration(),
    ] {
        assert!(list.contains(&usage_line(&command, None)), "{list}");
    }

    scene.say("/help roll").await.unwrap();
    let roll = scene.answer().await.unwrap().content;
    assert_eq!(roll, help_text(&registry, Some("roll"), None));
    // The bounds and the choices are part of it.
    assert!(roll.contains("1 to 20") && roll.contains("12"), "{roll}");
}
