//! The `botlane-devserver` binary: config file, printed URL, Ctrl-C.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use botlane::wire::OpCode;
use common::Raw;
use serde_json::json;

#[tokio::test]
async fn the_binary_serves_its_config_and_stops_on_ctrl_c() {
    let dir = std::env::temp_dir().join(format!("botlane-devserver-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("devserver.json");
    std::fs::write(
        &config,
        r#"{
            "bots": [{"name": "dicebot", "token": "bin-bot-token", "id": "6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55"}],
            "users": [{"name": "alice", "token": "bin-alice-token"}],
            "servers": [{"name": "lobby", "id": "s-1", "channels": [
                {"name": "general", "id": "c-1", "members": ["dicebot", "alice"]}
            ]}]
        }"#,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
        .args(["--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.strip_prefix("realtime: ").unwrap().to_owned();
    assert!(
        url.starts_with("ws://127.0.0.1:") && url.ends_with("/ws"),
        "{first}"
    );
    let rest: Vec<String> = lines.by_ref().take(4).map(Result::unwrap).collect();
    assert_eq!(
        rest,
        [
            "bot dicebot: 6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55",
            &rest[1],
            "server lobby: s-1",
            "  channel general: c-1",
        ]
    );
    assert!(rest[1].starts_with("user alice: "), "{}", rest[1]);

    let mut bot = Raw::connect(&url).await;
    let (_, ready) = bot.login("bin-bot-token").await;
    assert_eq!(ready["channels"][0]["id"], "c-1");
    assert_eq!(
        bot.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );

    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let logs = String::from_utf8(output.stderr).unwrap();
    assert!(logs.contains("shutting down"), "{logs}");
    assert!(!logs.contains("bin-bot-token"), "a token reached the logs");
    std::fs::remove_dir_all(&dir).unwrap();
}
