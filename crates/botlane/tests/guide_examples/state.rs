//! Guide, "Shared state": a `Client<D>` whose handlers read `D`, typed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use botlane::{Command, CommandRegistry, DeclarationError};

/// What every handler of the bot shares.
#[derive(Default)]
pub struct Scores {
    /// Rolls made since the bot started.
    pub rolls: AtomicU64,
    /// Each player's best roll.
    pub best: Mutex<HashMap<String, u32>>,
}

/// Roll one die
#[derive(Command)]
pub struct Roll {
    /// The die's value, for a game of honesty
    #[option(min = 1, max = 6)]
    pub value: u32,
}

/// Registers `roll` on a registry whose handlers get a `CommandContext<Scores>`.
pub fn commands(registry: &mut CommandRegistry<Scores>) -> Result<(), DeclarationError> {
    registry.command::<Roll>(|ctx, roll| async move {
        let scores = ctx.data();
        let n = scores.rolls.fetch_add(1, Ordering::Relaxed) + 1;
        let best = {
            let mut best = scores
                .best
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            let mine = best.entry(ctx.message().author_id.clone()).or_default();
            *mine = (*mine).max(roll.value);
            *mine
        };
        ctx.reply(&format!("roll #{n}: {}, your best is {best}", roll.value))
            .await
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use botlane::{Client, ClientOptions};
    use botlane_devserver::{DevServer, TestUser};

    use super::*;

    #[tokio::test]
    async fn handlers_share_the_clients_data() {
        let server = DevServer::start(Default::default()).await.unwrap();
        let channel = server
            .create_channel(&server.create_server("lobby"), "general")
            .unwrap();
        let bot = server.add_bot("dicebot");
        let human = server.add_user("alice");
        server.add_member(&channel, &bot.id).unwrap();
        server.add_member(&channel, &human.id).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let options = ClientOptions::new(
            bot.token.clone(),
            dir.path().join("bot.keystore"),
            server.ws_url(),
        );
        let client = Client::with_data(options, Scores::default()).unwrap();
        client.commands().update(commands).unwrap();
        client.login().await.unwrap();

        let alice = TestUser::connect(&server.ws_url(), &human.token)
            .await
            .unwrap();
        alice.open_channel(&channel).await.unwrap();
        let answer = || alice.wait_for_message(|m| m.author_id == bot.id, Duration::from_secs(10));
        alice.send_text(&channel, "/roll 4").await.unwrap();
        assert_eq!(
            answer().await.unwrap().content,
            "roll #1: 4, your best is 4"
        );
        alice.send_text(&channel, "/roll 2").await.unwrap();
        assert_eq!(
            answer().await.unwrap().content,
            "roll #2: 2, your best is 4"
        );
        // The client reads the same state.
        assert_eq!(client.data().rolls.load(Ordering::Relaxed), 2);
    }
}
