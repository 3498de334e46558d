//! Guide, "Typed access and typed sending".

use botlane::{
    BoxError, CommandContext, CommandDeclaration, CommandOption, CommandOptionType,
    CommandRegistry, DeclarationError,
};

/// `/repeat <text> [times]`, declared by hand and read with `require`.
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    let repeat = CommandDeclaration::new("repeat", "Say something several times")
        .option(CommandOption::new("text", "What to say", CommandOptionType::String).required(true))
        .option(CommandOption::new("times", "How often", CommandOptionType::Integer).max(5));
    registry.register(repeat, |ctx: CommandContext| async move {
        // An `ArgumentError` naming the option, never a silent `None`.
        let text: String = ctx.require("text")?;
        let times: u8 = ctx.optional("times")?.unwrap_or(2);
        let said = vec![text; usize::from(times)].join(" ");
        ctx.reply(&said).await?;
        Ok::<(), BoxError>(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use botlane::{Client, ClientOptions, Command, Event};
    use botlane_devserver::Scene;

    use super::*;
    use crate::bounds::Remind;

    #[tokio::test]
    async fn require_reads_a_typed_value() {
        let scene = Scene::start(commands).await.unwrap();
        scene.say("/repeat hip times:3").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "hip hip hip");
        scene.say("/repeat hooray").await.unwrap();
        assert_eq!(scene.answer().await.unwrap().content, "hooray hooray");
        scene.say("/repeat hip times:9").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "option \"times\" must be at most 5\nusage: /repeat <text> [times (at most 5)]"
        );
    }

    /// Another bot of the same channel invokes the scene's bot, typed.
    #[tokio::test]
    async fn send_typed_invokes_another_bot() {
        let scene = Scene::start(crate::bounds::commands).await.unwrap();
        let caller = scene.server.add_bot("caller");
        scene.server.add_member(&scene.channel, &caller.id).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = ClientOptions::new(
            caller.token.clone(),
            dir.path().join("caller.keystore"),
            scene.server.ws_url(),
        );
        let client = Client::new(options).unwrap();
        client.login().await.unwrap();
        // Alice shares the channel key with the bot that just logged in.
        scene
            .user
            .share_key_with(&scene.channel, &caller.id)
            .await
            .unwrap();

        // Once the caller reads what alice says, it holds the channel key.
        let mut events = client.events();
        scene.say("hello").await.unwrap();
        crate::next_event(&mut events, |e| {
            matches!(e, Event::Message(_)).then_some(())
        })
        .await;

        let tea = Remind {
            minutes: 5,
            note: Some("tea".into()),
        };
        client
            .send_typed(&scene.channel, scene.bot_id(), &tea)
            .await
            .unwrap();
        // Formatted and encoded like any invocation: the line and the sidecar.
        assert_eq!(tea.to_args().len(), 2);
        assert_eq!(
            scene.answer().await.unwrap().content,
            "in 5 minutes I will remind you of tea"
        );
    }
}
