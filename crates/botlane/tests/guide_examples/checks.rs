//! Guide, "Checks and cooldowns".

use std::time::Duration;

use botlane::framework::{Check, CommandSettings, Cooldown, UserError};

use botlane::{Command, CommandRegistry, DeclarationError};

/// Roll some dice
#[derive(Command)]
pub struct Roll {
    /// How many dice
    #[option(min = 1, max = 100)]
    pub count: u8,
}

/// Registers `roll`: anyone may roll up to 10 dice, the game masters up to
/// 100; each user may roll once every 30 seconds.
pub fn commands(
    registry: &mut CommandRegistry,
    game_masters: Vec<String>,
) -> Result<(), DeclarationError> {
    // Checks run after the arguments are read, so a check can look at them.
    let big_rolls = Check::sync(move |ctx| {
        let count = ctx.require::<u8>("count").unwrap_or(0);
        let author = &ctx.message().author_id;
        if count <= 10 || game_masters.contains(author) {
            Ok(())
        } else {
            Err(UserError::from(
                "only a game master rolls more than 10 dice",
            ))
        }
    });
    let settings = CommandSettings::new()
        .check(big_rolls)
        .cooldown(Cooldown::per_user(Duration::from_secs(30)));
    registry.command_with::<Roll>(settings, |ctx, roll| async move {
        ctx.reply(&format!("rolling {} dice", roll.count)).await
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use botlane::framework::{Cooldown, CooldownError, CooldownTracker};

    use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    use botlane_devserver::Scene;

    use super::*;

    #[tokio::test]
    async fn a_check_refuses_with_its_reason_and_a_cooldown_with_the_wait() {
        let scene = Scene::start(|registry| commands(registry, Vec::new()))
            .await
            .unwrap();

        scene.say("/roll 50").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "only a game master rolls more than 10 dice"
        );
        // A refused roll started no cooldown.
        scene.say("/roll 3").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "rolling 3 dice");
        scene.say("/roll 3").await.unwrap();
        let wait = scene.answer().await.unwrap().content;
        assert!(
            wait.starts_with("this command is cooling down, try again in ") && wait.ends_with(" s"),
            "{wait}"
        );
    }

    #[tokio::test]
    async fn a_client_check_runs_before_every_command() {
        let scene = Scene::start(|registry| commands(registry, Vec::new()))
            .await
            .unwrap();
        let client = &scene.bot;
        client.add_check(Check::allowed_channels(["not-this-one"]).reason("ask me in #dice"));
        scene.say("/roll 2").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "ask me in #dice");
    }

    #[tokio::test]
    async fn a_game_master_rolls_big() {
        let scene = Scene::builder().start(|_| Ok(())).await.unwrap();
        let gm = scene.user_account.id.clone();
        scene
            .bot
            .commands()
            .update(|registry| commands(registry, vec![gm]))
            .unwrap();
        scene.say("/roll 50").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "rolling 50 dice");
    }

    #[tokio::test(start_paused = true)]
    async fn a_cooldown_ends_after_its_duration() {
        let tracker = CooldownTracker::default();
        let cooldown = Cooldown::per_user(Duration::from_secs(30));
        let ctx = CommandContext::for_test(
            CommandInvocation {
                name: "roll".into(),
                args: CommandArgs::new(),
                source: CommandSource::Text,
            },
            Message::new("m1", "c1", "u1", "/roll 3"),
        );
        assert!(tracker.try_start(&cooldown, &ctx).is_ok());
        tokio::time::advance(Duration::from_secs(18)).await;
        let Err(CooldownError::Active { .. }) = tracker.try_start(&cooldown, &ctx) else {
            panic!("still cooling down");
        };
        assert_eq!(
            tracker.try_start(&cooldown, &ctx).unwrap_err().to_string(),
            "this command is cooling down, try again in 12 s"
        );
        tokio::time::advance(Duration::from_secs(12)).await;
        assert!(tracker.try_start(&cooldown, &ctx).is_ok());
    }
}
