//! The quickstart: an embedded devserver, a dice bot with three commands and
//! the built-in help, and a human test user driving it on both lanes, with a
//! readable transcript: answers, the default answers to mistakes (a line
//! that does not parse, a value out of bounds), and the help.
//!
//! Run it with `cargo run --example quickstart`. With
//! `cargo run --example quickstart -- --playground` the devserver also serves
//! the playground page, and the bot keeps running after the transcript so
//! you can chat with it in a browser until Ctrl-C.

// The transcript on stdout is this example's whole point.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::time::Duration;

use botlane::{
    Client, ClientOptions, CommandArgValue, CommandArgs, CommandContext, CommandDeclaration,
    CommandOption, CommandOptionType,
};
use botlane_devserver::{DevServer, DevServerConfig, ReceivedMessage, TestUser};
use rand_core::{OsRng, RngCore};

const WAIT: Duration = Duration::from_secs(10);

fn roll() -> CommandDeclaration {
    CommandDeclaration::new("roll", "Roll some dice")
        .option(
            CommandOption::new("count", "How many dice", CommandOptionType::Integer)
                .required(true)
                .min(1)
                .max(20),
        )
        .option(
            CommandOption::new("sides", "Sides per die", CommandOptionType::Integer)
                .choices(["4", "6", "8", "12", "20"]),
        )
        .option(CommandOption::new(
            "label",
            "What the roll is for",
            CommandOptionType::String,
        ))
}

fn echo() -> CommandDeclaration {
    CommandDeclaration::new("echo", "Say something back")
        .option(CommandOption::new("text", "What to say", CommandOptionType::String).required(true))
}

async fn roll_handler(ctx: CommandContext) -> Result<(), Box<dyn Error + Send + Sync>> {
    // Dispatch enforced the bounds: a count outside 1 to 20 never gets here.
    let count: i64 = ctx.require("count")?;
    let sides = ctx.get_integer("sides").unwrap_or(6);
    let dice: Vec<i64> = (0..count)
        .map(|_| i64::from(OsRng.next_u32() % u32::try_from(sides).unwrap_or(6)) + 1)
        .collect();
    let total: i64 = dice.iter().sum();
    let shown: Vec<String> = dice.iter().map(ToString::to_string).collect();
    let label = ctx
        .get_string("label")
        .map(|l| format!(" for {l}"))
        .unwrap_or_default();
    ctx.reply(&format!(
        "{count}d{sides}{label}: {} = {total}",
        shown.join(" + ")
    ))
    .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    println!("botlane quickstart\n");

    let playground = std::env::args().any(|a| a == "--playground");

    // 1. The reference service, embedded, on loopback.
    let server = DevServer::start(DevServerConfig::default().playground(playground)).await?;
    let bot = server.add_bot("dicebot");
    let human = server.add_user("alice");
    let space = server.create_server("playground");
    let general = server.create_channel(&space, "general")?;
    server.add_member(&general, &bot.id)?;
    server.add_member(&general, &human.id)?;
    println!("  devserver  {} (embedded, loopback only)", server.ws_url());

    // 2. The bot: three commands and the built-in help. A failing command
    //    is answered by default (`OnError::answer`): the option, the rule it
    //    broke and the usage line for a mistake in the arguments.
    //    Its keystore (identity and channel keys) lives in a directory of
    //    its own, removed with everything in it at the end.
    let dir = tempfile::tempdir()?;
    let keystore = dir.path().join("quickstart.keystore");
    let client = Client::new(ClientOptions::new(
        bot.token.clone(),
        &keystore,
        server.ws_url(),
    ))?;
    client.commands().update(|registry| {
        registry
            .register(roll(), roll_handler)?
            .register(echo(), |ctx: CommandContext| async move {
                let text = ctx.get_string("text").unwrap_or_default();
                ctx.message().channel().send(&text).await
            })?
            .register(
                CommandDeclaration::new("ping", "Check that the bot is alive"),
                |ctx: CommandContext| async move { ctx.reply("pong").await },
            )?
            .enable_help()
            .map(drop)
    })?;
    client.login().await?;
    let registry = client.commands().snapshot();
    let names: Vec<_> = registry.list().map(|d| d.name.clone()).collect();
    println!(
        "  bot        dicebot logged in, menu published: {}",
        names.join(", ")
    );

    // 3. A human member of the channel, who shares the channel key with the bot.
    let alice = TestUser::connect(&server.ws_url(), &human.token).await?;
    alice.open_channel(&general).await?;
    println!("  alice      joined #general and shared the channel key\n");

    let bot_id = bot.id.clone();
    let said = |who: &str, text: &str| println!("  {who:<8}› {text}");
    let answer = |m: &ReceivedMessage| {
        let how = if m.reply_to.is_some() {
            "↪ alice: "
        } else {
            ""
        };
        let content = m.content.replace('\n', &format!("\n  {:<8}  ", ""));
        println!("  {:<8}› {how}{content}", "dicebot");
    };

    println!("text lane");
    for line in [
        "/roll 2 6 fire damage",
        "/ping",
        "/echo hello from the text lane",
        "/roll two",
        "/roll 50",
        "/help",
        "/help roll",
    ] {
        said("alice", line);
        alice.send_text(&general, line).await?;
        answer(
            &alice
                .wait_for_message(|m| m.author_id == bot_id, WAIT)
                .await?,
        );
    }

    println!("\nstructured lane (encrypted sidecar addressed to dicebot)");
    let args = CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(3)),
        ("sides".to_owned(), CommandArgValue::Integer(20)),
        ("label".to_owned(), CommandArgValue::from("initiative")),
    ]);
    said(
        "alice",
        &botlane::format_invocation_text(&roll(), &args, None)?,
    );
    alice
        .send_command(&general, &bot_id, &roll(), &args)
        .await?;
    answer(
        &alice
            .wait_for_message(|m| m.author_id == bot_id, WAIT)
            .await?,
    );

    let notified = server
        .notifications_for(&human.id)
        .iter()
        .filter(|n| n.kind == "reply")
        .count();
    let stored = server.messages(&general).len();
    println!("\n  alice got {notified} replied-to-you notifications; the service stored {stored} messages, all ciphertext");

    if let Some(url) = server.playground_url() {
        println!("\n  playground {url}  (chat with dicebot in a browser; Ctrl-C to stop)");
        tokio::signal::ctrl_c().await?;
    }

    // `close` waits for the keystore's last write (writes are batched off
    // the runtime), so nothing lands in the directory after it is removed.
    client.close().await?;
    server.shutdown().await;
    dir.close()?;
    println!("done");
    Ok(())
}
