//! The two-terminal way, as separate processes: the `botlane-devserver`
//! binary with `examples/dicebot/devserver.json` and the playground, the
//! `dicebot` binary pointed at it through the environment, and a human
//! (`TestUser`, logged in as the playground's `you`) driving the bot on both
//! lanes. Every wait is on a printed line or a message, within a bound;
//! both processes are stopped with a signal and must exit cleanly.
//!
//! And the bot as a service watched by an orchestrator: `dicebot --metrics`
//! against an in-process devserver (whose failures the test injects), its
//! probes and its Prometheus exposition scraped over HTTP.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::BTreeMap;

use botlane_devserver::{DevServer, DevServerConfig, TestUser};
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
/// for it and takes its path from cargo's own report. Its features must be
/// resolved as `cargo test --workspace` (`scripts/test`) resolves them, so
/// that after that build this one is a no-op: the whole workspace with its
/// dev-dependencies, which a build takes in only when it names an example
/// (any; `quickstart` is small). `-p botlane-devserver` alone leaves out
/// `fuzzing` and the dev-dependencies' features, and so built half the
/// graph (115 of its 223 units) a second time.
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
            "--workspace",
            "--bin",
            "botlane-devserver",
            "--example",
            "quickstart",
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

/// One sample of a Prometheus text exposition: its series' name and
/// labels, and its value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of a text exposition (`# HELP` and `# TYPE` lines skipped);
/// panics on a line that is not `name{labels} value` or `name value`.
fn parse_exposition(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').unwrap_or_else(|| panic!("{line}"));
                let mut labels = BTreeMap::new();
                // Our label values hold no comma, quote or backslash.
                for pair in body.split(',').filter(|p| !p.is_empty()) {
                    let (key, quoted) = pair.split_once('=').unwrap_or_else(|| panic!("{line}"));
                    let value = quoted.trim_matches('"');
                    labels.insert(key.to_owned(), value.to_owned());
                }
                (name, labels)
            }
            None => (series, BTreeMap::new()),
        };
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    samples
}

/// The exposition of a bot's `/metrics`, and its probes.
struct Scraper {
    http: reqwest::Client,
    base: String,
}

impl Scraper {
    async fn get(&self, path: &str) -> (u16, String) {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .timeout(WAIT)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn samples(&self) -> (String, Vec<Sample>) {
        let (status, text) = self.get("/metrics").await;
        assert_eq!(status, 200, "{text}");
        let samples = parse_exposition(&text);
        (text, samples)
    }

    /// Scrapes until `done` holds for the samples (within `WAIT`), and
    /// returns them.
    async fn until(&self, what: &str, done: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let (text, samples) = self.samples().await;
            if done(&samples) {
                return samples;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} not seen within {WAIT:?}:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Asks `/readyz` until it answers `status` (within `WAIT`).
    async fn until_ready_is(&self, status: u16) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.get("/readyz").await.0 != status {
            assert!(
                tokio::time::Instant::now() < deadline,
                "/readyz did not answer {status} within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The value of the one sample named `name` with exactly `labels`; 0 when
/// there is none.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let found: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == name && s.labels == wanted)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} twice");
    found.first().map_or(0.0, |s| s.value)
}

/// The sum of the samples named `name`.
fn total(samples: &[Sample], name: &str) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .map(|s| s.value)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dicebot_serves_exact_metrics_and_probes_that_follow_its_session() {
    let server = DevServer::start(DevServerConfig::default().bot_rest_credentials(true))
        .await
        .unwrap();
    let bot = server.add_bot("dicebot");
    let (owner, other) = (server.add_user("alice"), server.add_user("bob"));
    let room = server.create_server("room");
    let channel = server.create_channel(&room, "general").unwrap();
    for id in [&bot.id, &owner.id, &other.id] {
        server.add_member(&channel, id).unwrap();
    }
    server.add_file(&room, "notes.txt", b"hi".to_vec()).unwrap();
    // Every menu publish fails until the test says otherwise: each login
    // attempt fails (a reason that may pass), so the bot is up, not ready.
    let publish = 20;
    server.fail_next_requests(publish, 1_000_000).unwrap();

    let keystore_dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_dicebot"));
    command
        .args(["--metrics", "127.0.0.1:0", "--owner", &owner.id])
        .env("BOTLANE_TOKEN", &bot.token)
        .env("BOTLANE_URL", server.ws_url())
        .env("BOTLANE_REST_URL", server.rest_url())
        .env(
            "BOTLANE_KEYSTORE",
            keystore_dir.path().join("dicebot.keystore"),
        )
        .env_remove("BOTLANE_OWNERS")
        .env_remove("BOTLANE_METRICS")
        .env_remove("RUST_LOG");
    let mut dicebot = Process::spawn("dicebot", command);
    let line = dicebot.line().await;
    let base = line
        .strip_prefix("dicebot metrics on ")
        .unwrap_or_else(|| panic!("not the metrics line: {line}"))
        .to_owned();
    let scrape = Scraper {
        http: reqwest::Client::new(),
        base,
    };

    // Up, and not ready before its login: its first attempts fail.
    assert_eq!(scrape.get("/healthz").await, (200, "ok\n".to_owned()));
    assert_eq!(scrape.get("/readyz").await, (503, "not ready\n".to_owned()));
    let first = [("phase", "first"), ("result", "failed")];
    scrape
        .until("a failed first login attempt", |s| {
            value(s, "botlane_login_attempts_total", &first) >= 1.0
        })
        .await;
    assert_eq!(scrape.get("/readyz").await.0, 503);
    assert_eq!(scrape.get("/healthz").await.0, 200);
    server.fail_next_requests(publish, 0).unwrap();
    assert_eq!(
        dicebot.line().await,
        format!("dicebot ready: bot {} in 1 channel", bot.id)
    );
    scrape.until_ready_is(200).await;

    // The script: five successes (two lanes), two refusals by the
    // owners-only check, one panic.
    // Both logged in before alice shares her channel key with the members.
    let alice = TestUser::connect(&server.ws_url(), &owner.token)
        .await
        .unwrap();
    let bob = TestUser::connect(&server.ws_url(), &other.token)
        .await
        .unwrap();
    assert_eq!(alice.open_channel(&channel).await.unwrap(), 2);
    bob.wait_for_key(&channel, WAIT).await.unwrap();
    let from_bot = |m: &botlane_devserver::ReceivedMessage| m.author_id == bot.id;
    let marker = "sekrit-argument-51d2";
    let script: [(&TestUser, String, &str); 7] = [
        (&alice, format!("/roll 2 6 {marker}"), "2d6 for "),
        (&bob, "/roll 1".to_owned(), "1d6: "),
        (&alice, format!("/echo {marker}-echo"), marker),
        (&alice, "/files".to_owned(), "1 file: "),
        (
            &bob,
            "/drill".to_owned(),
            "only the bot's owners may use this command",
        ),
        (
            &bob,
            "/drill".to_owned(),
            "only the bot's owners may use this command",
        ),
        (
            &alice,
            "/drill".to_owned(),
            "sorry, the drill command failed",
        ),
    ];
    // Each waits for its own answer: a user also sees the answers to the
    // other, which stay in its inbox until then.
    for (user, line, answer) in script {
        user.send_text(&channel, &line).await.unwrap();
        let answered =
            |m: &botlane_devserver::ReceivedMessage| from_bot(m) && m.content.starts_with(answer);
        user.wait_for_message(answered, WAIT).await.unwrap();
    }
    alice
        .invoke(&channel, &bot.id, &Flip { call: Side::Heads })
        .await
        .unwrap();
    let flipped = |m: &botlane_devserver::ReceivedMessage| {
        from_bot(m) && (m.content.ends_with("you win") || m.content.ends_with("you lose"))
    };
    alice.wait_for_message(flipped, WAIT).await.unwrap();

    // Counted as each invocation's future ends, after its answer went out.
    let invocations = "botlane_invocations_total";
    let samples = scrape
        .until("the script's eight invocations", |s| {
            total(s, invocations) == 8.0 && value(s, "botlane_handlers_running", &[]) == 0.0
        })
        .await;
    let counted = [
        ("roll", "text", "ok", 2.0),
        ("echo", "text", "ok", 1.0),
        ("files", "text", "ok", 1.0),
        ("flip", "structured", "ok", 1.0),
        ("drill", "text", "check", 2.0),
        ("drill", "text", "panic", 1.0),
    ];
    for (command, lane, outcome, n) in counted {
        let labels = [("command", command), ("lane", lane), ("outcome", outcome)];
        assert_eq!(value(&samples, invocations, &labels), n, "{labels:?}");
    }
    // Every other outcome of these commands is a series at zero.
    let series = samples.iter().filter(|s| s.name == invocations).count();
    assert_eq!(
        series,
        5 * 2 * 8,
        "five commands, two lanes, eight outcomes"
    );
    let durations = "botlane_handler_duration_seconds_count";
    for (command, n) in [
        ("roll", 2.0),
        ("echo", 1.0),
        ("files", 1.0),
        ("flip", 1.0),
        ("drill", 3.0),
    ] {
        assert_eq!(
            value(&samples, durations, &[("command", command)]),
            n,
            "{command}"
        );
    }
    for (name, labels, n) in [
        ("botlane_rest_mints_total", &[("result", "ok")][..], 1.0),
        ("botlane_rest_mints_total", &[("result", "failed")][..], 0.0),
        ("botlane_rest_requests_total", &[("status", "2xx")][..], 1.0),
        ("botlane_rest_remints_total", &[][..], 0.0),
        (
            "botlane_login_attempts_total",
            &[("phase", "first"), ("result", "ok")][..],
            1.0,
        ),
        (
            "botlane_login_attempts_total",
            &[("phase", "first"), ("result", "refused")][..],
            0.0,
        ),
        (
            "botlane_connection_state",
            &[("state", "connected")][..],
            1.0,
        ),
        (
            "botlane_connection_state",
            &[("state", "logging_in")][..],
            0.0,
        ),
        (
            "botlane_connection_state",
            &[("state", "reconnecting")][..],
            0.0,
        ),
        ("botlane_push_queue_length", &[][..], 0.0),
        ("botlane_pushes_dropped_total", &[][..], 0.0),
    ] {
        assert_eq!(value(&samples, name, labels), n, "{name} {labels:?}");
    }
    assert_eq!(total(&samples, "botlane_reconnects_total"), 0.0);

    // A reconnect: not ready while it lasts (its attempts fail until the
    // test lets them through), ready after.
    server.fail_next_requests(publish, 1_000_000).unwrap();
    server.drop_connections();
    scrape.until_ready_is(503).await;
    let reconnecting = [("state", "reconnecting")];
    let failed = [("phase", "reconnect"), ("result", "failed")];
    scrape
        .until("a failed reconnect attempt", |s| {
            value(s, "botlane_connection_state", &reconnecting) == 1.0
                && value(s, "botlane_login_attempts_total", &failed) >= 1.0
        })
        .await;
    assert_eq!(scrape.get("/readyz").await.0, 503);
    server.fail_next_requests(publish, 0).unwrap();
    scrape.until_ready_is(200).await;
    let back = [("phase", "reconnect"), ("result", "ok")];
    let samples = scrape
        .until("the reconnect", |s| {
            value(s, "botlane_login_attempts_total", &back) == 1.0
                && value(s, "botlane_connection_state", &[("state", "connected")]) == 1.0
        })
        .await;
    assert_eq!(total(&samples, "botlane_reconnects_total"), 1.0);
    assert_eq!(
        value(&samples, "botlane_connection_state", &reconnecting),
        0.0
    );

    // No id, argument or token anywhere in what the bot exposes.
    let (text, _) = scrape.samples().await;
    let undashed = |id: &str| id.replace('-', "");
    let never = [
        bot.id.clone(),
        undashed(&bot.id),
        owner.id.clone(),
        other.id.clone(),
        channel.clone(),
        room.clone(),
        marker.to_owned(),
        bot.token.clone(),
        owner.token.clone(),
        other.token.clone(),
    ];
    for secret in &never {
        assert!(
            !text.contains(secret.as_str()),
            "{secret:?} in the exposition"
        );
    }
    let status = dicebot.stop("TERM").await;
    assert!(
        status.success(),
        "dicebot: {status}; stderr:\n{}",
        dicebot.stderr()
    );
    assert_eq!(dicebot.line().await, "dicebot stopped");
    assert!(!dicebot.stderr().contains(&bot.token));
    server.shutdown().await;
}
