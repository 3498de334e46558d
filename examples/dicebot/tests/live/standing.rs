//! The two-terminal way, as separate processes: the `botlane-devserver`
//! binary with `examples/dicebot/devserver.json` and the playground, the
//! `dicebot` binary pointed at it through the environment, and a human
//! (`TestUser`, logged in as the playground's `you`) driving the bot on both
//! lanes. Every wait is on a printed line or a message, within a bound;
//! both processes are stopped with a signal and must exit cleanly.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botlane_devserver::TestUser;
use dicebot::{Flip, Side};
use serde_json::Value;
use tokio::sync::mpsc;

/// For a printed line, a message, or an exit: generous, for a loaded CI.
const WAIT: Duration = Duration::from_secs(30);

/// A child process that is killed if the test ends without stopping it.
struct Process {
    name: &'static str,
    child: Option<Child>,
    lines: mpsc::UnboundedReceiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Process {
    /// Starts `command` with its stdout read line by line and its stderr
    /// collected (both drained, so the child never blocks on a full pipe).
    fn spawn(name: &'static str, mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let (tx, lines) = mpsc::unbounded_channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            name,
            child: Some(child),
            lines,
            stderr,
        }
    }

    /// The next line on stdout.
    async fn line(&mut self) -> String {
        match tokio::time::timeout(WAIT, self.lines.recv()).await {
            Ok(Some(line)) => line,
            Ok(None) => panic!(
                "{} closed its stdout; stderr:\n{}",
                self.name,
                self.stderr()
            ),
            Err(_) => panic!(
                "{} printed nothing for {WAIT:?}; stderr:\n{}",
                self.name,
                self.stderr()
            ),
        }
    }

    /// For each of `prefixes`, the rest of the first line on stdout that
    /// starts with it, whatever the order of the lines (and whatever other
    /// lines come between them).
    async fn lines_after<const N: usize>(&mut self, prefixes: [&str; N]) -> [String; N] {
        let mut found: [Option<String>; N] = std::array::from_fn(|_| None);
        while found.iter().any(Option::is_none) {
            let line = self.line().await;
            for (prefix, slot) in prefixes.iter().zip(&mut found) {
                if let (None, Some(rest)) = (&slot, line.strip_prefix(prefix)) {
                    *slot = Some(rest.to_owned());
                }
            }
        }
        found.map(|rest| rest.unwrap_or_default())
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends `signal` (`INT`, `TERM`) and waits for the exit.
    async fn stop(&mut self, signal: &str) -> ExitStatus {
        let child = self.child.as_ref().unwrap();
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} {}", self.name);
        self.exit(&format!("SIG{signal}")).await
    }

    /// Waits for the exit, which `after` (what should cause it) explains
    /// if it does not come.
    async fn exit(&mut self, after: &str) -> ExitStatus {
        let child = self.child.as_mut().unwrap();
        // Polled, not joined on a thread: a child that never exits must
        // still fail the test within the bound (and be killed on drop).
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} did not exit within {WAIT:?} of {after}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The `botlane-devserver` binary, built by cargo if it is not up to date.
/// Another package's binary has no `CARGO_BIN_EXE_`, so this asks cargo
/// for it (a no-op after `cargo test --workspace`, which built it) and
/// takes its path from cargo's own report.
fn devserver_binary(workspace: &Path) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    // Cargo gives this test the variables it gives a crate (the package's
    // name, manifest dir, ...); build scripts such as ring's watch some of
    // them (`rerun-if-env-changed`), so inheriting them would make the inner
    // build and the next outer one rebuild each other's dependencies.
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_")
            || name.starts_with("CARGO_CFG_")
            || name.starts_with("CARGO_MANIFEST_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&name)
        {
            build.env_remove(name);
        }
    }
    let output = build
        .current_dir(workspace)
        .args([
            "build",
            "--quiet",
            "-p",
            "botlane-devserver",
            "--bin",
            "botlane-devserver",
            "--message-format=json",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo build of botlane-devserver failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| {
            m["reason"] == "compiler-artifact" && m["target"]["name"] == "botlane-devserver"
        })
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reports the binary it built")
}

#[tokio::test]
async fn the_dicebot_binary_runs_against_the_devserver_binary() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config_file = crate_dir.join("devserver.json");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_file).unwrap()).unwrap();
    let token = config["bots"][0]["token"].as_str().unwrap().to_owned();
    let configured_id = config["bots"][0]["id"].as_str().unwrap().to_owned();

    // Terminal one: the shipped config, on free ports instead of its fixed
    // ones (other tests may be running), with the playground.
    let mut devserver = Command::new(devserver_binary(&crate_dir.join("../..")));
    devserver
        .arg("--config")
        .arg(&config_file)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--rest-listen",
            "127.0.0.1:0",
            "--playground",
        ])
        .env_remove("BOT_REST_CREDENTIALS")
        .env_remove("RUST_LOG");
    let mut devserver = Process::spawn("botlane-devserver", devserver);
    let [ws_url, rest_line, playground, bot_id] = devserver
        .lines_after(["realtime: ", "rest: ", "playground: ", "bot dicebot: "])
        .await;
    // `rest: http://127.0.0.1:port (BOT_REST_CREDENTIALS on)`: the config
    // turns the REST lane on (the environment's flag was removed above).
    let (rest_url, flag) = rest_line.split_once(' ').unwrap();
    let rest_url = rest_url.to_owned();
    assert_eq!(flag, "(BOT_REST_CREDENTIALS on)");
    assert_eq!(bot_id, configured_id);

    // Terminal two: the bot, configured through the environment.
    let keystore_dir = tempfile::tempdir().unwrap();
    let keystore = keystore_dir.path().join("dicebot.keystore");
    let mut bot = Command::new(env!("CARGO_BIN_EXE_dicebot"));
    bot.env("BOTLANE_TOKEN", &token)
        .env("BOTLANE_URL", &ws_url)
        .env("BOTLANE_REST_URL", &rest_url)
        .env("BOTLANE_KEYSTORE", &keystore)
        .env_remove("RUST_LOG");
    let mut bot = Process::spawn("dicebot", bot);
    // The playground's channel is the bot's one channel.
    assert_eq!(
        bot.line().await,
        format!("dicebot ready: bot {bot_id} in 1 channel")
    );

    // The browser's side: the playground hands out the login of `you`.
    let session: Value = reqwest::get(format!("{playground}/session"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let channel = session["channel_id"].as_str().unwrap().to_owned();
    let you = TestUser::connect(&ws_url, session["token"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(you.open_channel(&channel).await.unwrap(), 1);
    let from_bot = |m: &botlane_devserver::ReceivedMessage| m.author_id == bot_id;

    // The text lane.
    let asked = you.send_text(&channel, "/roll 3 6 luck").await.unwrap();
    let answer = you.wait_for_message(from_bot, WAIT).await.unwrap();
    assert_eq!(answer.reply_to.as_deref(), Some(asked.as_str()));
    assert!(
        answer.content.starts_with("3d6 for luck: "),
        "{}",
        answer.content
    );

    // The structured lane, the command picker's way.
    you.invoke(&channel, &bot_id, &Flip { call: Side::Tails })
        .await
        .unwrap();
    let answer = you.wait_for_message(from_bot, WAIT).await.unwrap();
    assert!(
        ["tails, you win", "heads, you lose"].contains(&answer.content.as_str()),
        "{}",
        answer.content
    );

    you.send_text(&channel, "/help").await.unwrap();
    let help = you.wait_for_message(from_bot, WAIT).await.unwrap().content;
    for usage in [
        "/roll <count",
        "/flip <call>",
        "/echo <text>",
        "/files",
        "/help [command",
    ] {
        assert!(help.contains(usage), "{usage} missing from {help}");
    }

    you.send_text(&channel, "/echo see you").await.unwrap();
    let echo = you.wait_for_message(from_bot, WAIT).await.unwrap();
    assert_eq!((echo.content.as_str(), echo.reply_to), ("see you", None));

    // The REST lane: the file of the config's server, through a credential
    // minted over the bot's session.
    let file = config["servers"][0]["files"][0]["name"].as_str().unwrap();
    let asked = you.send_text(&channel, "/files").await.unwrap();
    let files = you.wait_for_message(from_bot, WAIT).await.unwrap();
    assert_eq!(
        (files.content, files.reply_to),
        (format!("1 file: {file:?}"), Some(asked))
    );

    // Stopping: the bot closes its session, which writes its keystore (it
    // holds the channel key now), and says so; then the service.
    let status = bot.stop("TERM").await;
    assert!(
        status.success(),
        "dicebot: {status}; stderr:\n{}",
        bot.stderr()
    );
    assert_eq!(bot.line().await, "dicebot stopped");
    assert!(keystore.is_file(), "close wrote the keystore");
    // A token the service does not know: the bot says why on stderr,
    // without the token, prints no readiness line and exits with 1.
    let wrong = "dev-only-a-token-nobody-has";
    let mut refused = Command::new(env!("CARGO_BIN_EXE_dicebot"));
    refused
        .env("BOTLANE_TOKEN", wrong)
        .env("BOTLANE_URL", &ws_url)
        .env("BOTLANE_REST_URL", &rest_url)
        .env(
            "BOTLANE_KEYSTORE",
            keystore_dir.path().join("refused.keystore"),
        )
        .env_remove("RUST_LOG");
    let mut refused = Process::spawn("dicebot with a wrong token", refused);
    let status = refused.exit("a refused login").await;
    assert_eq!(status.code(), Some(1), "{}", refused.stderr());
    assert!(
        tokio::time::timeout(WAIT, refused.lines.recv())
            .await
            .unwrap()
            .is_none(),
        "no readiness line after a refused login"
    );
    let stderr = refused.stderr();
    assert!(stderr.contains("ERROR"), "{stderr}");
    assert!(
        !stderr.contains(wrong),
        "the wrong token was logged: {stderr}"
    );

    let status = devserver.stop("INT").await;
    assert!(
        status.success(),
        "devserver: {status}; stderr:\n{}",
        devserver.stderr()
    );

    // No process wrote the token anywhere we can see.
    for process in [&bot, &devserver] {
        assert!(
            !process.stderr().contains(&token),
            "{} logged the token",
            process.name
        );
    }
}
