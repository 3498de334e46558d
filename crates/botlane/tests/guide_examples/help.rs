//! Guide, "Help": the generated `/help`, shown on the `remind` command.

use botlane::{CommandRegistry, DeclarationError};

/// Registers `remind` and the built-in `help`.
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    crate::bounds::commands(registry)?;
    registry.enable_help()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use botlane::{CommandContext, CommandDeclaration, DeclarationRule};
    use botlane_devserver::Scene;

    use super::*;

    #[tokio::test]
    async fn help_lists_the_commands_and_explains_one() {
        let scene = Scene::start(commands).await.unwrap();
        scene.say("/help").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "Commands (send /help <command> for details):\n\
             /help [command (up to 32 characters)] - List the commands, or explain one\n\
             /remind <minutes (1 to 3600)> [note (up to 200 characters)] - Remind me later"
        );
        scene.say("/help remind").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "Command remind: Remind me later\n\
             usage: /remind <minutes (1 to 3600)> [note (up to 200 characters)]\n\
             - minutes (integer, required, 1 to 3600): In how many minutes\n\
             - note (string, up to 200 characters): What to remind you of"
        );
    }

    #[test]
    fn a_help_of_your_own_clashes() {
        let mut registry = CommandRegistry::new();
        registry.enable_help().unwrap();
        let mine = CommandDeclaration::new("help", "My own help");
        let err = registry
            .register(
                mine,
                |ctx: CommandContext| async move { ctx.reply("...").await },
            )
            .unwrap_err();
        assert_eq!(err.violations()[0].rule(), &DeclarationRule::HelpClash);
    }
}
