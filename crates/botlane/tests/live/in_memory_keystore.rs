//! A client whose keystore lives in memory only (`keystore_in_memory`):
//! it logs in to a real devserver, receives a channel key, answers an
//! invocation, and leaves no file behind, not even at its `keystore_path`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{DevServer, DevServerConfig, TestUser};

/// Generous for a loaded 2-core machine; only a hang fails on it.
const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_memory_keystore_serves_a_session_and_writes_no_file() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let space = server.create_server("memory");
    let human = server.add_user("alice");
    let bot = server.add_bot("membot");
    let channel = server.create_channel(&space, "c").unwrap();
    server.add_member(&channel, &bot.id).unwrap();
    server.add_member(&channel, &human.id).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let options = ClientOptions::new(
        bot.token.clone(),
        dir.path().join("bot.keystore"),
        server.ws_url(),
    )
    .keystore_in_memory(true);
    let client = Client::new(options).unwrap();
    client
        .commands()
        .register(
            CommandDeclaration::new("ping", "Answer"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap();
    client.login().await.unwrap();

    let alice = TestUser::connect(&server.ws_url(), &human.token)
        .await
        .unwrap();
    alice.open_channel(&channel).await.unwrap();
    alice.send_text(&channel, "/ping").await.unwrap();
    let answer = loop {
        let message = alice.next_message(LIMIT).await.unwrap();
        if message.author_id == bot.id {
            break message;
        }
    };
    assert_eq!(
        answer.content, "pong",
        "the bot opened the message with the key it holds in memory"
    );
    client.close().await.unwrap();

    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files were written: {left:?}");
}
