//! Guide, "When a command fails": what the user sees, and how to change it.

use botlane::framework::{CommandFailure, CommandSettings, OnError, UserError};

use botlane::{BoxError, Command, CommandErrorReason, CommandRegistry, DeclarationError};

/// Divide two whole numbers
#[derive(Command)]
pub struct Divide {
    /// The number to divide
    pub dividend: i64,
    /// What to divide it by
    pub divisor: i64,
}

/// Copy the bot's data somewhere safe
#[derive(Command)]
pub struct Backup {}

/// Registers `divide`, whose mistakes are the user's, and `backup`, whose
/// failures are the bot's own.
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    registry
        .command::<Divide>(|ctx, divide| async move {
            let Some(quotient) = divide.dividend.checked_div(divide.divisor) else {
                // Written for the user: sent to them as it is.
                return Err(UserError::from("I cannot divide by zero").into());
            };
            ctx.reply(&quotient.to_string()).await?;
            Ok::<(), BoxError>(())
        })?
        .command::<Backup>(|_ctx, _backup| async move {
            // Not written for the user (it names a path): they are told
            // `sorry, the backup command failed`, and the event has the rest.
            Err::<(), _>(std::io::Error::other("/var/backups is full"))
        })?;
    Ok(())
}

/// `backup` again, with its error answers off: its failures are only events.
pub fn quiet_backup(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    let quiet = CommandSettings::new().on_error(OnError::silent());
    registry.command_with::<Backup>(quiet, |_ctx, _backup| async move {
        Err::<(), _>(std::io::Error::other("/var/backups is full"))
    })?;
    Ok(())
}

/// The default answers, except for a timeout, which gets a hint.
pub fn patient_answers() -> OnError {
    OnError::new(|failure: CommandFailure| async move {
        let answered = match failure.error().reason {
            CommandErrorReason::Timeout => failure.answer("that took too long, try later").await,
            _ => failure.answer_default().await,
        };
        // Only fails without a session, when there is nobody to answer.
        drop(answered);
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use botlane::framework::{neutralise_answer, Answered};
    use botlane_devserver::{Scene, Sidecar};
    use tokio::sync::mpsc;

    use super::*;

    #[tokio::test]
    async fn each_failure_gets_its_answer() {
        let scene = Scene::start(commands).await.unwrap();

        // The text lane: the parse error and the usage line.
        scene.say("/divide 7 x").await.unwrap();
        let answer = scene.answer().await.unwrap();
        assert_eq!(
            answer.content,
            "option \"divisor\" expects an integer\nusage: /divide <dividend> <divisor>"
        );
        // A plain message, not a reply.
        assert_eq!(answer.reply_to, None);

        // The structured lane: the option, the rule, the usage line.
        let wrong = Sidecar::to(scene.bot_id()).invoking(&Divide {
            dividend: 7,
            divisor: 2,
        });
        scene
            .send_sidecar("/divide 7 2", &wrong.wrong_type("divisor"))
            .await
            .unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "option \"divisor\" expects an integer, got a boolean\nusage: /divide <dividend> <divisor>"
        );

        // A `UserError` as it is.
        scene.say("/divide 7 0").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "I cannot divide by zero"
        );
    }

    #[tokio::test]
    async fn any_other_failure_gets_a_generic_answer() {
        let scene = Scene::start(commands).await.unwrap();
        scene.say("/backup").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "sorry, the backup command failed"
        );
    }

    #[test]
    fn an_answer_never_reads_as_a_command() {
        assert_eq!(
            neutralise_answer("/roll is for dice", "/"),
            "⚠ /roll is for dice"
        );
        assert_eq!(
            neutralise_answer("!ban is not mine", "/"),
            "⚠ !ban is not mine"
        );
        assert_eq!(neutralise_answer("try /help", "/"), "try /help");
    }

    #[tokio::test]
    async fn a_hook_of_your_own_answers_instead() {
        let scene = Scene::start(crate::timeout::commands).await.unwrap();
        let client = &scene.bot;
        client.on_error(patient_answers());
        scene.say("/forecast").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "that took too long, try later"
        );
        scene.say("/forecast now").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "too many values for the command \"forecast\"\nusage: /forecast"
        );
    }

    #[tokio::test]
    async fn answers_are_rate_limited_per_user_and_channel() {
        // One answer, then one per minute: the second mistake is not answered.
        let scene = Scene::builder()
            .client_options(|options| options.error_answer_limit(1, Duration::from_secs(60)))
            .start(commands)
            .await
            .unwrap();
        let (answered, mut results) = mpsc::unbounded_channel();
        let client = &scene.bot;
        client.on_error(OnError::new(move |failure| {
            let answered = answered.clone();
            async move {
                let _ = answered.send(failure.answer_default().await.ok());
            }
        }));
        scene.say("/divide 1 0").await.unwrap();
        scene.say("/divide 2 0").await.unwrap();
        // The hooks run concurrently: the order of the two results is open.
        let mut both = Vec::new();
        for _ in 0..2 {
            let result = tokio::time::timeout(Duration::from_secs(10), results.recv()).await;
            both.push(result.unwrap().unwrap());
        }
        both.sort_by_key(|answered| answered == &Some(Answered::RateLimited));
        assert_eq!(both, [Some(Answered::Sent), Some(Answered::RateLimited)]);
        assert_eq!(
            scene.answer().await.unwrap().content,
            "I cannot divide by zero"
        );
    }

    #[tokio::test]
    async fn answers_can_be_turned_off_per_command_and_per_client() {
        let scene = Scene::start(|registry| {
            quiet_backup(registry)?;
            registry.command::<Divide>(|ctx, d| async move {
                ctx.reply(&(d.dividend / d.divisor.max(1)).to_string())
                    .await
            })?;
            Ok(())
        })
        .await
        .unwrap();
        let mut events = scene.bot.events();
        scene.say("/backup").await.unwrap();
        let failure = crate::next_failure(&mut events).await;
        assert_eq!(
            (failure.reason, failure.command.as_str()),
            (CommandErrorReason::Handler, "backup")
        );
        // The next message from the bot is the answer to the next command.
        scene.say("/divide 6 3").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "2");

        // For the whole client, in one line.
        let client = &scene.bot;
        client.on_error(OnError::silent());
        scene.say("/divide 6 x").await.unwrap();
        scene.say("/divide 8 4").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "2");
    }

    #[tokio::test]
    async fn text_lane_argument_errors_can_be_left_to_the_other_bots() {
        let scene = Scene::start(commands).await.unwrap();
        // Every failure but the text lane's argument errors.
        let client = &scene.bot;
        client.on_error(OnError::answer().text_argument_errors(false));
        scene.say("/divide 7 x").await.unwrap();
        let wrong = Sidecar::to(scene.bot_id()).invoking(&Divide {
            dividend: 7,
            divisor: 2,
        });
        scene
            .send_sidecar("/divide 7 2", &wrong.remove_arg("divisor"))
            .await
            .unwrap();
        // Only the structured mistake, addressed to this bot, is answered.
        assert_eq!(
            scene.answer().await.unwrap().content,
            "option \"divisor\" is required\nusage: /divide <dividend> <divisor>"
        );
    }
}
