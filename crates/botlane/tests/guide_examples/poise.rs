//! `docs/coming-from-poise.md`: the botlane side of the comparison, a dice
//! bot with bounds, a check, a cooldown, shared state and help.

use std::sync::atomic::{AtomicU64, Ordering};

use botlane::framework::UserError;
use botlane::prelude::*;
use botlane::BoxError;

/// What every handler shares.
#[derive(Default)]
pub struct Data {
    /// Rolls made since the bot started.
    pub rolls: AtomicU64,
    /// The server whose channels get no dice.
    pub library: String,
}

/// Refuses the library's channels: the check's reason is the answer.
fn not_in_the_library(ctx: &CommandContext<Data>) -> Result<(), UserError> {
    match ctx.server_id() == Some(ctx.data().library.as_str()) {
        true => Err(UserError::from("no dice in the library")),
        false => Ok(()),
    }
}

/// Roll some dice
///
/// # Options
/// * `count`: How many dice
/// * `sides`: Sides per die
#[command(check = not_in_the_library, user_cooldown = 5)]
async fn roll(
    ctx: CommandContext<Data>,
    #[option(min = 1, max = 20)] count: u8,
    #[option(choices("6", "20"))] sides: Option<u32>,
) -> Result<(), ClientError> {
    let n = ctx.data().rolls.fetch_add(1, Ordering::Relaxed) + 1;
    let sides = sides.unwrap_or(6);
    ctx.reply(&format!("roll #{n}: {count}d{sides}")).await
}

/// The bot: `roll` and `help`, answers to failures by default.
pub fn dicebot(options: ClientOptions, library: String) -> Result<Client<Data>, BoxError> {
    let data = Data {
        library,
        ..Data::default()
    };
    let client = Client::with_data(options, data)?;
    client
        .commands()
        .add(roll())?
        .update(|registry| registry.enable_help().map(drop))?;
    Ok(client)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use botlane::ClientOptions;
    use botlane_devserver::{DevServer, TestUser};

    use super::*;

    #[tokio::test]
    async fn the_dicebot_of_the_comparison() {
        let server = DevServer::start(Default::default()).await.unwrap();
        let tavern = server.create_server("tavern");
        let library = server.create_server("library");
        let games = server.create_channel(&tavern, "games").unwrap();
        let quiet = server.create_channel(&library, "quiet").unwrap();
        let bot = server.add_bot("dicebot");
        let human = server.add_user("alice");
        for channel in [&games, &quiet] {
            server.add_member(channel, &bot.id).unwrap();
            server.add_member(channel, &human.id).unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let options = ClientOptions::new(
            bot.token.clone(),
            dir.path().join("bot.keystore"),
            server.ws_url(),
        );
        let client = dicebot(options, library).unwrap();
        client.login().await.unwrap();

        let alice = TestUser::connect(&server.ws_url(), &human.token)
            .await
            .unwrap();
        alice.open_channel(&games).await.unwrap();
        alice.open_channel(&quiet).await.unwrap();
        let answer = || alice.wait_for_message(|m| m.author_id == bot.id, Duration::from_secs(10));

        alice.send_text(&quiet, "/roll 2").await.unwrap();
        assert_eq!(answer().await.unwrap().content, "no dice in the library");
        alice.send_text(&games, "/roll 30").await.unwrap();
        assert_eq!(
            answer().await.unwrap().content,
            "option \"count\" must be at most 20\nusage: /roll <count (1 to 20)> [sides]"
        );
        alice.send_text(&games, "/roll 2 20").await.unwrap();
        assert_eq!(answer().await.unwrap().content, "roll #1: 2d20");
        alice.send_text(&games, "/roll 2").await.unwrap();
        let cooling = answer().await.unwrap().content;
        assert!(
            cooling.starts_with("this command is cooling down"),
            "{cooling}"
        );
        alice.send_text(&games, "/help").await.unwrap();
        let help = answer().await.unwrap().content;
        assert!(help.contains("/roll <count (1 to 20)> [sides]"), "{help}");
        assert_eq!(client.data().rolls.load(Ordering::Relaxed), 1);
    }
}
