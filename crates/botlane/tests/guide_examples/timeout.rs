//! Guide, "Timeouts": a command that may hang is cut off and answered.

use std::time::Duration;

use botlane::framework::CommandSettings;

use botlane::{CommandContext, CommandDeclaration, CommandRegistry, DeclarationError};

/// Registers `forecast`, which asks a slow weather service, with a timeout
/// of its own (the client's default is 300 s).
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    let forecast = CommandDeclaration::new("forecast", "Tomorrow's weather");
    let settings = CommandSettings::new().timeout(Duration::from_millis(300));
    registry.register_with(forecast, settings, |ctx: CommandContext| async move {
        let weather = ask_the_weather_service().await;
        ctx.reply(&weather).await
    })?;
    Ok(())
}

/// A service that never answers.
async fn ask_the_weather_service() -> String {
    std::future::pending().await
}

#[cfg(test)]
mod tests {
    use botlane::framework::HandlerTimeout;
    use botlane::CommandErrorReason;
    use botlane_devserver::Scene;

    use super::*;

    #[tokio::test]
    async fn a_handler_past_its_timeout_is_aborted_and_answered() {
        let scene = Scene::start(commands).await.unwrap();
        let mut events = scene.bot.events();
        scene.say("/forecast").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "sorry, the forecast command failed"
        );
        let failure = crate::next_failure(&mut events).await;
        assert_eq!(failure.reason, CommandErrorReason::Timeout);
        let timeout = failure
            .error
            .as_deref()
            .and_then(|e| e.downcast_ref::<HandlerTimeout>());
        assert_eq!(
            timeout,
            Some(&HandlerTimeout {
                after: Duration::from_millis(300)
            })
        );
    }
}
