//! The `botlane-devserver` binary: config file, printed URL, Ctrl-C.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};

use botlane_devserver::BOT_REST_CREDENTIALS;
use botlane_proto::OpCode;
use common::{interrupt, stop_with, Raw};
use serde_json::{json, Value};

/// Starts the binary as `command` says, with its output piped: the child
/// (for `interrupt`, which reads its stderr) and its stdout.
fn devserver(command: &mut Command) -> (Child, ChildStdout) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, stdout)
}

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
    let (child, stdout) = devserver(
        Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
            .args(["--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .env_remove(BOT_REST_CREDENTIALS),
    );
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.strip_prefix("realtime: ").unwrap().to_owned();
    assert!(
        url.starts_with("ws://127.0.0.1:") && url.ends_with("/ws"),
        "{first}"
    );
    let rest_line = lines.next().unwrap().unwrap();
    assert!(
        rest_line.starts_with("rest: http://127.0.0.1:")
            && rest_line.ends_with(" (BOT_REST_CREDENTIALS off)"),
        "{rest_line}"
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
    assert_eq!(
        bot.request(OpCode::RestMint, json!({})).await,
        json!({"code": -7})
    );

    let logs = interrupt(child).await;
    assert!(logs.contains("shutting down"), "{logs}");
    assert!(!logs.contains("bin-bot-token"), "a token reached the logs");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_binary_serves_the_rest_lane_over_https_when_asked() {
    let dir = std::env::temp_dir().join(format!("botlane-devserver-rest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("devserver.json");
    std::fs::write(
        &config,
        r#"{
            "bots": [{"name": "dicebot", "token": "bin-rest-bot-token"}],
            "servers": [{"name": "lobby", "id": "s-1",
                "files": [{"name": "notes.txt", "id": "f1", "content": "hello, world"}]}]
        }"#,
    )
    .unwrap();
    let root_file = dir.join("root.pem");
    // The flag comes from the environment variable, as on the real service.
    let (child, stdout) = devserver(
        Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
            .args([
                "--listen",
                "127.0.0.1:0",
                "--rest-listen",
                "127.0.0.1:0",
                "--rest-tls",
            ])
            .arg("--config")
            .arg(&config)
            .arg("--rest-root-cert")
            .arg(&root_file)
            .env(BOT_REST_CREDENTIALS, "1"),
    );
    let lines: Vec<String> = BufReader::new(stdout)
        .lines()
        .take(6)
        .map(Result::unwrap)
        .collect();
    let ws_url = lines[0].strip_prefix("realtime: ").unwrap();
    let rest_url = lines[1]
        .strip_prefix("rest: ")
        .and_then(|l| l.strip_suffix(" (BOT_REST_CREDENTIALS on)"))
        .unwrap();
    assert!(rest_url.starts_with("https://127.0.0.1:"), "{}", lines[1]);
    assert_eq!(
        lines[2],
        format!("rest root certificate: {}", root_file.display())
    );
    assert_eq!(lines[5], "  file notes.txt: f1");

    let mut bot = Raw::connect(ws_url).await;
    bot.login("bin-rest-bot-token").await;
    let minted = bot.request(OpCode::RestMint, json!({})).await;
    assert_eq!(minted["code"], 0, "{minted}");
    let pem = std::fs::read(&root_file).unwrap();
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let exchanged: Value = http
        .post(format!("{rest_url}/auth/verify-session"))
        .json(&json!({"secret": minted["secret"], "row_id": minted["row_id"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let bytes = http
        .get(format!("{rest_url}/api/files/f1/download?roomIds=s-1"))
        .header("verification", exchanged["verification"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(bytes, "hello, world");

    let logs = interrupt(child).await;
    let secret = minted["secret"].as_str().unwrap();
    assert!(!logs.contains(secret), "a secret reached the logs");
    assert!(logs.contains("rest credential minted"), "{logs}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_binary_serves_wss_with_its_root_written_to_a_file() {
    use base64::Engine as _;
    use botlane_devserver::TestUser;

    let dir = std::env::temp_dir().join(format!("botlane-devserver-wss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("devserver.json");
    std::fs::write(
        &config,
        r#"{"users": [{"name": "alice", "token": "bin-wss-alice-token"}]}"#,
    )
    .unwrap();
    let root_file = dir.join("root.pem");
    let (child, stdout) = devserver(
        Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
            .args(["--listen", "127.0.0.1:0", "--realtime-tls", "--config"])
            .arg(&config)
            .arg("--realtime-root-cert")
            .arg(&root_file)
            .env_remove(BOT_REST_CREDENTIALS),
    );
    let lines: Vec<String> = BufReader::new(stdout)
        .lines()
        .take(4)
        .map(Result::unwrap)
        .collect();
    let url = lines[0].strip_prefix("realtime: ").unwrap().to_owned();
    assert!(url.starts_with("wss://127.0.0.1:"), "{}", lines[0]);
    assert_eq!(
        lines[2],
        format!("realtime root certificate: {}", root_file.display())
    );
    assert!(lines[3].starts_with("user alice: "), "{}", lines[3]);
    let pem = std::fs::read_to_string(&root_file).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();

    let alice = TestUser::connect_tls(&url, "bin-wss-alice-token", &der)
        .await
        .unwrap();
    alice.heartbeat().await.unwrap();

    let logs = interrupt(child).await;
    assert!(
        !logs.contains("bin-wss-alice-token"),
        "a token reached the logs"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_binary_applies_its_limit_flags() {
    let (child, stdout) = devserver(
        Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
            .args(["--listen", "127.0.0.1:0", "--login-timeout", "1"])
            .args(["--prelogin-connections", "1", "--sessions", "7"])
            .env_remove(BOT_REST_CREDENTIALS),
    );
    let lines: Vec<String> = BufReader::new(stdout)
        .lines()
        .take(2)
        .map(Result::unwrap)
        .collect();
    let url = lines[0].strip_prefix("realtime: ").unwrap().to_owned();
    let mut first = Raw::connect(&url).await;
    // --prelogin-connections 1: a second stranger is refused before the upgrade.
    match tokio_tungstenite::connect_async(&url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 503);
        }
        other => panic!("expected 503, got {:?}", other.map(|_| ())),
    }
    // --login-timeout 1: the first is closed after a second.
    assert_eq!(first.next().await, Err(common::End::Closed(Some(1008))));
    assert_eq!(first.close_reason.as_deref(), Some("no login within 1 s"));
    interrupt(child).await;
}

/// A container runtime or a supervisor stops a service with SIGTERM: its
/// bots get the same 1001 close as at Ctrl-C, and it exits with 0, rather
/// than dying with the signal and dropping every socket.
#[tokio::test]
async fn the_binary_closes_its_connections_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("botlane-devserver-term-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("devserver.json");
    std::fs::write(
        &config,
        r#"{"bots": [{"name": "dicebot", "token": "term-bot-token"}]}"#,
    )
    .unwrap();
    let (child, stdout) = devserver(
        Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
            .args(["--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .env_remove(BOT_REST_CREDENTIALS),
    );
    let first = BufReader::new(stdout).lines().next().unwrap().unwrap();
    let url = first.strip_prefix("realtime: ").unwrap().to_owned();
    let mut bot = Raw::connect(&url).await;
    bot.login("term-bot-token").await;
    let reading = tokio::spawn(async move {
        let end = bot.next().await;
        (end, bot.close_reason)
    });
    let logs = stop_with("-TERM", child).await;
    assert!(logs.contains("shutting down"), "{logs}");
    let (end, reason) = reading.await.unwrap();
    assert_eq!(end, Err(common::End::Closed(Some(1001))));
    assert_eq!(reason.as_deref(), Some("service shutting down"));
    std::fs::remove_dir_all(&dir).unwrap();
}
