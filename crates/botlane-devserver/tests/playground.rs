//! The playground in a real browser: headless Chromium driven over WebDriver
//! (`chromedriver`), against a devserver and a real botlane bot.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's `chromium`
//! and `chromium-driver`), which `scripts/install-browser` installs and
//! `scripts/test` runs first. Without them these tests fail; they never skip.
//!
//! On failure a screenshot goes to `target/playground-failure.png`. With
//! `BOTLANE_UPDATE_SCREENSHOT=1` the conversation test saves its final
//! screenshot as `docs/playground.png` (the README's picture).
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::any::Any;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use botlane::framework::OnError;
use botlane::{
    canonical_menu_json, decode_command_data, format_invocation_text, Client, ClientOptions,
    CommandArgValue, CommandArgs, CommandContext, CommandDeclaration, CommandErrorReason,
    CommandOption, CommandOptionType, Event, FormatError,
};
use botlane_devserver::{Denial, DevServer, DevServerConfig};
use botlane_proto::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair, PublicKey, WrappedKey};
use fantoccini::{ClientBuilder, Locator};
use futures_util::FutureExt;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long the page gets for anything it is waited for.
const WAIT: Duration = Duration::from_secs(20);

// ------------------------------------------------------------ the browser

/// `chromedriver` in its own process group, killed with it on drop (so a
/// browser it started cannot outlive a failed test).
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn spawn() -> Self {
        for binary in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(binary).exists(),
                "{binary} is missing: run scripts/install-browser (the playground tests never skip)"
            );
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
        Self { child, port }
    }

    async fn ready(&self) {
        let deadline = Instant::now() + WAIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on port {} within {WAIT:?}",
                self.port
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let killed = Command::new("kill")
            .args(["-KILL", "--", &group])
            .status()
            .is_ok_and(|s| s.success());
        if !killed {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A headless Chromium session with a throw-away profile.
struct Browser {
    page: fantoccini::Client,
    _driver: Driver,
    _profile: tempfile::TempDir,
}

impl Browser {
    async fn start() -> Self {
        let driver = Driver::spawn();
        driver.ready().await;
        let profile = tempfile::tempdir().unwrap();
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--window-size=1200,1080",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let page = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .unwrap_or_else(|e| panic!("cannot open a Chromium session: {e}"));
        Self {
            page,
            _driver: driver,
            _profile: profile,
        }
    }

    /// Ends the session; on a failed scenario saves a screenshot first and
    /// then re-raises the failure.
    async fn finish(self, outcome: Result<(), Box<dyn Any + Send>>) {
        if outcome.is_err() {
            let path = workspace().join("target/playground-failure.png");
            match self.page.screenshot().await {
                Ok(png) => {
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(&path, png).unwrap();
                    eprintln!("screenshot of the failure: {}", path.display());
                }
                Err(e) => eprintln!("no screenshot of the failure: {e}"),
            }
        }
        let _ = self.page.close().await;
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `script` until it returns something other than `null` or `false`.
async fn wait_until(page: &fantoccini::Client, what: &str, script: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let value = page.execute(script, vec![]).await.unwrap();
        if !matches!(value, Value::Null | Value::Bool(false)) {
            return value;
        }
        if Instant::now() > deadline {
            let shown = snapshot(page).await;
            panic!("{what}: not within {WAIT:?}; the page shows {shown:#?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn open_playground(page: &fantoccini::Client, url: &str) {
    page.goto(url).await.unwrap();
    let state = wait_until(
        page,
        "the page becomes ready",
        "const s = document.body.dataset.state; \
         return s === 'loading' ? null : [s, document.getElementById('status').textContent];",
    )
    .await;
    assert_eq!(state[0], "ready", "the page failed: {}", state[1]);
}

/// One entry of the page's message list, as a person sees it.
#[derive(Debug, Clone)]
struct Shown {
    class: String,
    id: Option<String>,
    author: Option<String>,
    reply_to: Option<String>,
    lane: Option<String>,
    text: String,
}

async fn snapshot(page: &fantoccini::Client) -> Vec<Shown> {
    let items = page
        .execute(
            "return [...document.querySelectorAll('#messages > li')].map((li) => [
                li.className, li.dataset.id ?? null, li.dataset.author ?? null,
                li.dataset.replyTo ?? null, li.dataset.lane ?? null,
                (li.querySelector('.body') ?? li).textContent]);",
            vec![],
        )
        .await
        .unwrap();
    let text = |v: &Value| v.as_str().map(str::to_owned);
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|item| Shown {
            class: text(&item[0]).unwrap(),
            id: text(&item[1]),
            author: text(&item[2]),
            reply_to: text(&item[3]),
            lane: text(&item[4]),
            text: text(&item[5]).unwrap(),
        })
        .collect()
}

/// Waits for a list entry that satisfies `pred`.
async fn wait_shown(page: &fantoccini::Client, what: &str, pred: impl Fn(&Shown) -> bool) -> Shown {
    let deadline = Instant::now() + WAIT;
    loop {
        let shown = snapshot(page).await;
        if let Some(found) = shown.iter().find(|s| pred(s)) {
            return found.clone();
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not shown within {WAIT:?}; the page shows {shown:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn find(page: &fantoccini::Client, css: &str) -> fantoccini::elements::Element {
    page.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no element {css}: {e}"))
}

/// Picks `value` in the `<select>` at `css` as a person would, by clicking
/// its option. The page rebuilds a picker's options whenever its two-second
/// menu poll sees a change, so an option found a moment before the click
/// can be gone: that one is looked up again.
async fn pick(page: &fantoccini::Client, css: &str, value: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        match find(page, css).await.select_by_value(value).await {
            Ok(()) => return,
            Err(e) if e.is_stale_element_reference() && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("picking {value} in {css}: {e}"),
        }
    }
}

async fn text_of(page: &fantoccini::Client, css: &str) -> String {
    find(page, css).await.text().await.unwrap()
}

// ----------------------------------------------------------------- the bot

fn roll() -> CommandDeclaration {
    CommandDeclaration::new("roll", "Roll some dice")
        .option(
            CommandOption::new("count", "How many dice", CommandOptionType::Integer).required(true),
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

/// One option of every kind the picker renders differently.
fn coin() -> CommandDeclaration {
    CommandDeclaration::new("coin", "Call a coin flip")
        .option(
            CommandOption::new("call", "Heads or tails", CommandOptionType::String)
                .choices(["heads", "tails"])
                .required(true),
        )
        .option(
            CommandOption::new("loud", "Shout the result", CommandOptionType::Boolean)
                .required(true),
        )
        .option(CommandOption::new(
            "bias",
            "Chance of heads",
            CommandOptionType::Number,
        ))
        .option(CommandOption::new(
            "again",
            "Flip twice",
            CommandOptionType::Boolean,
        ))
        .option(CommandOption::new(
            "for",
            "Who called it",
            CommandOptionType::User,
        ))
}

/// A dice bot like the quickstart's: `roll`, `echo` and `coin` answer with
/// true replies, and a line that does not parse gets its error and usage back.
async fn start_bot(server: &DevServer, keystore: &Path) -> (Client, String) {
    let bot = server.add_bot("dicebot");
    let client = Client::new(ClientOptions::new(
        bot.token.clone(),
        keystore,
        server.ws_url(),
    ))
    .unwrap();
    client
        .commands()
        .register(roll(), |ctx: CommandContext| async move {
            let count = ctx.get_integer("count").unwrap_or(1).clamp(1, 20);
            let sides = ctx.get_integer("sides").unwrap_or(6);
            // Deterministic dice: the test checks the arithmetic, not the luck.
            let dice: Vec<i64> = (0..count).map(|i| i % sides + 1).collect();
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
            .await
        })
        .unwrap()
        .register(echo(), |ctx: CommandContext| async move {
            let text = ctx.get_string("text").unwrap_or_default();
            ctx.reply(&text).await
        })
        .unwrap()
        .register(coin(), |ctx: CommandContext| async move {
            // Says back what arrived; each getter answers only for its own type.
            let shown = |value: Option<String>| value.unwrap_or_else(|| "not set".into());
            let loud = match ctx.get_boolean("loud") {
                Some(true) => "loudly",
                Some(false) => "quietly",
                None => "loud not set",
            };
            ctx.reply(&format!(
                "{}, {loud} · bias {} · again {} · for {}",
                shown(ctx.get_string("call")),
                shown(ctx.get_number("bias").map(|b| b.to_string())),
                shown(ctx.get_boolean("again").map(|a| a.to_string())),
                shown(ctx.get_string("for")),
            ))
            .await
        })
        .unwrap();
    // This bot answers parse errors itself, as replies (the page threads
    // them under the line); the client's default answers are off.
    client.on_error(OnError::silent());
    let mut events = client.events();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if let Event::CommandError(error) = event
                && error.reason == CommandErrorReason::Parse
                && let Some(parse) = &error.parse_error
            {
                let answer = format!("{parse}. usage: {}", parse.usage());
                let _ = error.message.reply(&answer).await;
            }
        }
    });
    client.login().await.unwrap();
    server
        .wait_for(|s| s.menu(&bot.id).is_some(), WAIT)
        .await
        .unwrap();
    (client, bot.id)
}

/// A second bot with one command, started while the page is open.
async fn start_ping_bot(server: &DevServer) -> (Client, String, tempfile::TempDir) {
    let bot = server.add_bot("pingbot");
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(ClientOptions::new(
        bot.token.clone(),
        dir.path().join("keystore"),
        server.ws_url(),
    ))
    .unwrap();
    client
        .commands()
        .register(
            CommandDeclaration::new("ping", "Check that the bot is alive"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap();
    client.login().await.unwrap();
    server
        .wait_for(|s| s.menu(&bot.id).is_some(), WAIT)
        .await
        .unwrap();
    (client, bot.id, dir)
}

// --------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_chats_with_a_bot_in_the_playground() {
    let server = DevServer::start(DevServerConfig::default().playground(true))
        .await
        .unwrap();
    let channel = server.playground_channel().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (bot, bot_id) = start_bot(&server, &dir.path().join("keystore")).await;

    let browser = Browser::start().await;
    let outcome = AssertUnwindSafe(conversation(&browser.page, &server, &bot_id))
        .catch_unwind()
        .await;
    if outcome.is_ok() && std::env::var_os("BOTLANE_UPDATE_SCREENSHOT").is_some_and(|v| v == "1") {
        let png = browser.page.screenshot().await.unwrap();
        std::fs::write(workspace().join("docs/playground.png"), png).unwrap();
    }
    browser.finish(outcome).await;

    // The service relayed and stored ciphertext only: no frame it received
    // or sent, and no stored message, holds any of the plaintext.
    let plaintexts = [
        "initiative",
        "hello from the browser",
        "/roll two",
        "usage",
        "anyone there?",
        // Not "3d20" alone: four hex digits turn up by chance in the ids
        // and keys of a run's frames (it did once, in an opcode 30 frame).
        "3d20 for initiative",
        "ada lovelace",
    ];
    let stored = server.messages(&channel);
    assert_eq!(stored.len(), 10, "five invocations and five replies");
    for message in &stored {
        for sealed in std::iter::once(&message.content).chain(message.command.as_ref()) {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(sealed)
                .unwrap();
            assert!(bytes.len() >= 12 + 16, "not a sealed payload: {sealed}");
        }
    }
    let structured: Vec<_> = stored.iter().filter(|m| m.command.is_some()).collect();
    assert_eq!(
        structured.len(),
        3,
        "only the picked commands have a sidecar"
    );
    assert!(structured
        .iter()
        .all(|m| m.author_id == server.account_id("you").unwrap()));
    for frame in server.frames() {
        for plaintext in plaintexts {
            assert!(
                !frame.payload.contains(plaintext),
                "the service saw {plaintext:?} in a frame with opcode {:?}",
                frame.opcode
            );
        }
    }
    bot.shutdown();
    server.shutdown().await;
}

/// The conversation: the picker, the text box, a parse error and a denial.
async fn conversation(page: &fantoccini::Client, server: &DevServer, bot_id: &str) {
    open_playground(page, &server.playground_url().unwrap()).await;
    let channel = server.playground_channel().unwrap();

    // The picker is built from the menu the bot published.
    wait_until(
        page,
        "the picker lists roll",
        "return document.querySelector('#pick-command option[value=roll]') !== null;",
    )
    .await;
    let fields = "return [...document.querySelectorAll('#fields [data-option]')].map((c) =>
        [c.dataset.option, c.tagName.toLowerCase(), c.type, c.required,
         [...(c.options ?? [])].map((o) => o.value)]);";

    // Every kind of option, through the picker and back from the bot typed.
    pick(page, "#pick-command", "coin").await;
    assert_eq!(
        page.execute(fields, vec![]).await.unwrap(),
        json!([
            ["call", "select", "select-one", true, ["", "heads", "tails"]],
            ["loud", "input", "checkbox", true, []],
            ["bias", "input", "number", false, []],
            [
                "again",
                "select",
                "select-one",
                false,
                ["", "true", "false"]
            ],
            ["for", "input", "text", false, []],
        ])
    );
    pick(page, "#option-call", "tails").await;
    find(page, "#option-bias")
        .await
        .send_keys("0.25")
        .await
        .unwrap();
    find(page, "#option-for")
        .await
        .send_keys("ada lovelace")
        .await
        .unwrap();
    let args = CommandArgs::from([
        ("call".to_owned(), CommandArgValue::from("tails")),
        ("loud".to_owned(), CommandArgValue::Boolean(false)),
        ("bias".to_owned(), CommandArgValue::Number(0.25)),
        ("for".to_owned(), CommandArgValue::from("ada lovelace")),
    ]);
    let line = format_invocation_text(&coin(), &args, None).unwrap();
    assert_eq!(line, "/coin tails false 0.25 for:\"ada lovelace\"");
    assert_eq!(text_of(page, "#preview").await, line);
    find(page, "#run-command").await.click().await.unwrap();
    let flipped = wait_shown(page, "the picked coin", |s| {
        s.class.contains("from-me") && s.text == line
    })
    .await;
    let answer = wait_shown(page, "the bot's reply to the coin", |s| {
        s.class.contains("from-bot") && s.reply_to == flipped.id
    })
    .await;
    assert_eq!(
        answer.text,
        "tails, quietly · bias 0.25 · again not set · for ada lovelace"
    );

    pick(page, "#pick-command", "roll").await;
    assert_eq!(
        page.execute(fields, vec![]).await.unwrap(),
        json!([
            ["count", "input", "number", true, []],
            [
                "sides",
                "select",
                "select-one",
                false,
                ["", "4", "6", "8", "12", "20"]
            ],
            ["label", "input", "text", false, []],
        ]),
        "one typed input per option, choices as a select, required marked"
    );

    // A required option left empty is refused in the page, before sending.
    find(page, "#run-command").await.click().await.unwrap();
    assert_eq!(text_of(page, "#picker-error").await, "count is required");
    assert_eq!(server.messages(&channel).len(), 2);

    find(page, "#option-count")
        .await
        .send_keys("3")
        .await
        .unwrap();
    pick(page, "#option-sides", "20").await;
    find(page, "#option-label")
        .await
        .send_keys("initiative")
        .await
        .unwrap();
    let args = CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(3)),
        ("sides".to_owned(), CommandArgValue::Integer(20)),
        ("label".to_owned(), CommandArgValue::from("initiative")),
    ]);
    let line = format_invocation_text(&roll(), &args, None).unwrap();
    assert_eq!(text_of(page, "#preview").await, line);

    // A bot that comes later joins the channel and the picker, and what
    // was typed stays.
    let (pingbot, pingbot_id, _pingbot_keys) = start_ping_bot(server).await;
    wait_until(
        page,
        "the picker lists the second bot",
        &format!(
            "return document.querySelector('#pick-bot option[value=\"{pingbot_id}\"]') !== null;"
        ),
    )
    .await;
    assert!(server.view(|s| s.members(&channel).contains(&pingbot_id)));
    assert_eq!(text_of(page, "#preview").await, line);
    assert_eq!(
        find(page, "#pick-bot")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some(bot_id)
    );
    find(page, "#run-command").await.click().await.unwrap();

    let invocation = wait_shown(page, "the picked command", |s| {
        s.class.contains("from-me") && s.text == line
    })
    .await;
    assert_eq!(invocation.lane.as_deref(), Some("structured"));
    let answer = wait_shown(page, "the bot's reply to the picked command", |s| {
        s.class.contains("from-bot") && s.reply_to == invocation.id
    })
    .await;
    assert_eq!(answer.author.as_deref(), Some("dicebot"));
    assert_eq!(answer.text, "3d20 for initiative: 1 + 2 + 3 = 6");

    // Both picked commands went with a sidecar, the bot's replies without.
    let stored = server.messages(&channel);
    let you = server.account_id("you").unwrap();
    let lanes: Vec<_> = stored
        .iter()
        .map(|m| {
            (
                m.author_id == you,
                m.author_id == bot_id,
                m.command.is_some(),
            )
        })
        .collect();
    assert_eq!(
        lanes,
        [
            (true, false, true),
            (false, true, false),
            (true, false, true),
            (false, true, false)
        ]
    );

    // The second bot answers its own command, sealed with the key the page
    // wrapped to it before sending.
    pick(page, "#pick-bot", &pingbot_id).await;
    assert_eq!(text_of(page, "#preview").await, "/ping");
    find(page, "#run-command").await.click().await.unwrap();
    let ping = wait_shown(page, "the picked ping", |s| {
        s.class.contains("from-me") && s.text == "/ping"
    })
    .await;
    let pong = wait_shown(page, "the second bot's pong", |s| {
        s.class.contains("from-bot") && s.reply_to == ping.id
    })
    .await;
    assert_eq!(
        (pong.author.as_deref(), pong.text.as_str()),
        (Some("pingbot"), "pong")
    );
    pingbot.shutdown();

    // The text box: a line on the text lane.
    let line_box = find(page, "#line").await;
    line_box
        .send_keys("/echo hello from the browser")
        .await
        .unwrap();
    find(page, "#send-line").await.click().await.unwrap();
    let typed = wait_shown(page, "the typed line", |s| {
        s.class.contains("from-me") && s.text == "/echo hello from the browser"
    })
    .await;
    assert_eq!(typed.lane.as_deref(), Some("text"));
    let echoed = wait_shown(page, "the bot's echo", |s| {
        s.class.contains("from-bot") && s.reply_to == typed.id
    })
    .await;
    assert_eq!(echoed.text, "hello from the browser");

    // A line that does not parse: the bot answers with the error and usage.
    line_box.send_keys("/roll two").await.unwrap();
    find(page, "#send-line").await.click().await.unwrap();
    let bad = wait_shown(page, "the unparsable line", |s| {
        s.class.contains("from-me") && s.text == "/roll two"
    })
    .await;
    let parse_error = wait_shown(page, "the bot's parse error", |s| {
        s.class.contains("from-bot") && s.reply_to == bad.id
    })
    .await;
    assert!(
        parse_error.text.contains("count") && parse_error.text.contains("usage: /roll <count>"),
        "{}",
        parse_error.text
    );

    // A denied send (sendRejected) is a visible notice, and nothing is stored.
    server
        .deny_sends(&channel, Some(Denial::RateLimited))
        .unwrap();
    line_box.send_keys("anyone there?").await.unwrap();
    find(page, "#send-line").await.click().await.unwrap();
    let denial = wait_shown(page, "the denial notice", |s| s.class.contains("denial")).await;
    assert!(denial.text.contains("rate limited (-9)"), "{}", denial.text);
    server.deny_sends(&channel, None).unwrap();
    assert_eq!(server.messages(&channel).len(), 10);
    // The refused line stays in the box, to be sent again.
    assert_eq!(
        line_box.prop("value").await.unwrap().as_deref(),
        Some("anyone there?")
    );

    // Back to the first bot: the picker starts afresh for it, and formats
    // the grammar's own example as the Rust formatter does.
    pick(page, "#pick-bot", bot_id).await;
    pick(page, "#pick-command", "roll").await;
    assert_eq!(text_of(page, "#preview").await, "(count is required)");
    find(page, "#option-count")
        .await
        .send_keys("2")
        .await
        .unwrap();
    pick(page, "#option-sides", "6").await;
    find(page, "#option-label")
        .await
        .send_keys("fire damage")
        .await
        .unwrap();
    let args = CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(2)),
        ("sides".to_owned(), CommandArgValue::Integer(6)),
        ("label".to_owned(), CommandArgValue::from("fire damage")),
    ]);
    assert_eq!(
        text_of(page, "#preview").await,
        format_invocation_text(&roll(), &args, None).unwrap()
    );
}

/// The page's JavaScript against the Rust implementation: the test vectors
/// of docs/crypto.md, sealing and wrapping in both directions, the formatter
/// of text-grammar §5 on hundreds of generated cases, and the sidecar.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_javascript_agrees_with_the_rust_implementation() {
    let server = DevServer::start(DevServerConfig::default().playground(true))
        .await
        .unwrap();
    let browser = Browser::start().await;
    let outcome = AssertUnwindSafe(async {
        open_playground(&browser.page, &server.playground_url().unwrap()).await;
        crypto_vectors(&browser.page).await;
        crypto_both_ways(&browser.page).await;
        formatter_agrees(&browser.page).await;
        numbers_agree(&browser.page).await;
        sidecar_agrees(&browser.page).await;
    })
    .catch_unwind()
    .await;
    browser.finish(outcome).await;
    server.shutdown().await;
}

/// Runs an async function body in the page; `arguments[0]` is `arg`.
async fn run_js(page: &fantoccini::Client, body: &str, arg: Value) -> Value {
    let script = format!(
        "const done = arguments[arguments.length - 1];
         const p = window.playground;
         const hex = (h) => Uint8Array.from(h.match(/../g), (x) => parseInt(x, 16));
         const range = (from, n) => Uint8Array.from({{ length: n }}, (_, i) => from + i);
         const pkcs8 = (secret) => crypto.subtle.importKey('pkcs8',
             hex('302e020100300506032b656e04220420' + secret), {{ name: 'X25519' }}, false, ['deriveBits']);
         (async (arg) => {{ {body} }})(arguments[0]).then(
             (value) => done({{ value }}),
             (error) => done({{ error: String(error) }}));"
    );
    let result = page.execute_async(&script, vec![arg]).await.unwrap();
    assert!(
        result.get("error").is_none(),
        "the page's script failed: {}",
        result["error"]
    );
    result["value"].clone()
}

async fn crypto_vectors(page: &fantoccini::Client) {
    let out = run_js(
        page,
        "const sealed = await p.seal(range(0, 32), 'botlane test vector: hello, channel!', 'channel-42', range(0x10, 12));
         let wrongChannel = true;
         try { await p.open(range(0, 32), sealed, 'channel-43'); } catch { wrongChannel = false; }
         const ephemeral = {
           privateKey: await pkcs8('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'),
           publicKey: await crypto.subtle.importKey('raw',
             hex('8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a'), { name: 'X25519' }, true, []),
         };
         const botPublic = hex('de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f');
         const wrapped = await p.wrapChannelKey(range(0x20, 32), botPublic, 'channel-42', ephemeral, range(0xc0, 12));
         const bot = await pkcs8('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb');
         const unwrapped = p.b64(await p.unwrapChannelKey(bot, botPublic, wrapped, 'channel-42'));
         return { sealed, opened: await p.openText(range(0, 32), sealed, 'channel-42'), wrongChannel, wrapped, unwrapped };",
        Value::Null,
    )
    .await;
    // The vectors of docs/crypto.md.
    assert_eq!(
        out["sealed"],
        "EBESExQVFhcYGRobH5HseiinX5O+EHtpLw8MMKM/PDQ7qjLdi5bORz08NbU+jDsiCG6ebCopcfCxenpyTTJYXw=="
    );
    assert_eq!(out["opened"], "botlane test vector: hello, channel!");
    assert_eq!(
        out["wrongChannel"], false,
        "a payload must not open under another channel id"
    );
    assert_eq!(
        out["wrapped"],
        json!({
            "ephemeral": "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=",
            "ciphertext": "wMHCw8TFxsfIycrLAI49MdZ6QBYsOpqNpLB7wpNmpL5OIFhXgYo58IteRH1D1gopsSBe4QjWZssb0Ngq"
        })
    );
    assert_eq!(
        out["unwrapped"],
        "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8="
    );
    // And the Rust implementation reads what the page made.
    let key = ChannelKey::from_bytes(std::array::from_fn(|i| u8::try_from(i).unwrap()));
    let opened = key
        .open(out["sealed"].as_str().unwrap(), b"channel-42")
        .unwrap();
    assert_eq!(opened, b"botlane test vector: hello, channel!");
}

async fn crypto_both_ways(page: &fantoccini::Client) {
    let channel = "c-ü 42";
    let raw: [u8; 32] = std::array::from_fn(|i| u8::try_from(i * 7 + 3).unwrap());
    let raw_b64 = base64::engine::general_purpose::STANDARD.encode(raw);
    let key = ChannelKey::from_bytes(raw);
    let text = "héllo 🎲 \"quoted\" \\ line\nbreak";
    let rust_identity = IdentityKeyPair::generate().unwrap();

    // The page: opens what Rust sealed, seals for Rust, wraps to Rust's
    // identity, and makes an identity of its own for Rust to wrap to.
    let out = run_js(
        page,
        "const raw = p.unb64(arg.raw);
         window.testIdentity = await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits']);
         window.testIdentityPublic = new Uint8Array(await crypto.subtle.exportKey('raw', window.testIdentity.publicKey));
         return {
           opened: await p.openText(raw, arg.sealed, arg.channel),
           sealed: await p.seal(raw, arg.text, arg.channel),
           wrapped: await p.wrapChannelKey(raw, p.unb64(arg.rustPublic), arg.channel),
           pagePublic: p.b64(window.testIdentityPublic),
         };",
        json!({
            "raw": raw_b64,
            "channel": channel,
            "text": text,
            "sealed": key.seal(text.as_bytes(), channel.as_bytes()).unwrap(),
            "rustPublic": rust_identity.public_key().to_base64(),
        }),
    )
    .await;
    assert_eq!(out["opened"], text);
    let opened = key
        .open(out["sealed"].as_str().unwrap(), channel.as_bytes())
        .unwrap();
    assert_eq!(opened, text.as_bytes());
    let wrapped: WrappedKey = serde_json::from_value(out["wrapped"].clone()).unwrap();
    let unwrapped = rust_identity.unwrap_channel_key(&wrapped, channel).unwrap();
    let sealed = unwrapped
        .seal(b"via the unwrapped key", channel.as_bytes())
        .unwrap();
    assert_eq!(
        key.open(&sealed, channel.as_bytes()).unwrap(),
        b"via the unwrapped key"
    );

    let page_public = PublicKey::from_base64(out["pagePublic"].as_str().unwrap()).unwrap();
    let to_page = wrap_channel_key(&key, &page_public, channel).unwrap();
    let back = run_js(
        page,
        "return p.b64(await p.unwrapChannelKey(window.testIdentity.privateKey, window.testIdentityPublic, arg.wrapped, arg.channel));",
        json!({ "wrapped": to_page, "channel": channel }),
    )
    .await;
    assert_eq!(back, raw_b64);
}

/// A small deterministic generator (SplitMix64): the cases are the same on every run.
struct Cases(u64);

impl Cases {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(n).unwrap()).unwrap()
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn string(&mut self) -> String {
        const PARTS: &[&str] = &[
            "",
            " ",
            "a",
            "fire",
            "fire damage",
            "\"",
            "“",
            "«",
            "»",
            "”",
            "\\",
            ":",
            "count:",
            "COUNT:2",
            "label:",
            "a:b",
            "x-y:1",
            "\n",
            "\t",
            "\u{3000}",
            "\u{85}",
            "\u{feff}",
            "\u{a0}",
            "é",
            "🎲",
            "it's",
            "  padded  ",
            "https://x.y",
            "12:30",
            "\"quoted\"",
        ];
        (0..self.below(4)).map(|_| *self.pick(PARTS)).collect()
    }

    fn integer(&mut self) -> i64 {
        const SPECIAL: &[i64] = &[
            0,
            1,
            -1,
            7,
            20,
            9_007_199_254_740_991,
            -9_007_199_254_740_991,
            9_007_199_254_740_992,
        ];
        if self.chance(40) {
            *self.pick(SPECIAL)
        } else {
            i64::try_from(self.next() % 2_000_001).unwrap() - 1_000_000
        }
    }

    fn number(&mut self) -> f64 {
        const SPECIAL: &[f64] = &[
            0.0,
            -0.0,
            0.1,
            0.5,
            10.0,
            -2.0,
            1e21,
            1e-7,
            123_456.789,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            9_007_199_254_740_993.0,
        ];
        if self.chance(40) {
            return *self.pick(SPECIAL);
        }
        loop {
            let n = f64::from_bits(self.next());
            if n.is_finite() {
                return n;
            }
        }
    }
}

fn arg_json(value: &CommandArgValue) -> Value {
    match value {
        CommandArgValue::String(s) => json!(s),
        CommandArgValue::Integer(i) => json!(i),
        CommandArgValue::Number(n) => json!(n),
        CommandArgValue::Boolean(b) => json!(b),
    }
}

fn error_kind(error: &FormatError) -> &'static str {
    match error {
        FormatError::UnknownOption { .. } => "unknown-option",
        FormatError::MissingRequired { .. } => "missing-required",
        FormatError::WrongType { .. } => "wrong-type",
        FormatError::NotInChoices { .. } => "not-in-choices",
        other => panic!("a new kind of format error: {other:?}"),
    }
}

/// A declaration with 0 to 4 options of random types, names and choices.
fn declaration(cases: &mut Cases) -> CommandDeclaration {
    const NAMES: &[&str] = &["a", "b", "count", "label", "x-y", "n_1", "sides"];
    const TYPES: &[CommandOptionType] = &[
        CommandOptionType::String,
        CommandOptionType::Integer,
        CommandOptionType::Boolean,
        CommandOptionType::User,
        CommandOptionType::Channel,
        CommandOptionType::Role,
        CommandOptionType::Number,
    ];
    let mut decl = CommandDeclaration::new("cmd", "A generated command");
    let mut names: Vec<&str> = Vec::new();
    let mut required = cases.chance(60);
    for _ in 0..cases.below(5) {
        let name = *cases.pick(NAMES);
        if names.contains(&name) {
            continue;
        }
        names.push(name);
        let kind = *cases.pick(TYPES);
        required = required && cases.chance(70);
        let mut option = CommandOption::new(name, "An option", kind).required(required);
        if kind != CommandOptionType::Boolean && cases.chance(30) {
            let choices: Vec<String> = match kind {
                CommandOptionType::Integer => {
                    vec!["4".into(), "+6".into(), "-20".into(), "007".into()]
                }
                CommandOptionType::Number => {
                    vec!["0.5".into(), "1e1".into(), "-2".into(), ".25".into()]
                }
                _ => (0..3)
                    .map(|_| cases.string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            };
            if !choices.is_empty() {
                option = option.choices(choices);
            }
        }
        decl = decl.option(option);
    }
    decl
}

/// A value for an option: mostly of its type (often one of its choices),
/// sometimes of another type.
fn value_for(cases: &mut Cases, option: &CommandOption) -> CommandArgValue {
    let numeric = matches!(
        option.kind,
        CommandOptionType::Integer | CommandOptionType::Number
    );
    if cases.chance(10) {
        // Another type. JSON cannot tell an integral float from an integer,
        // so numeric options get a string or a boolean.
        return if numeric || cases.chance(50) {
            if cases.chance(50) {
                CommandArgValue::Boolean(true)
            } else {
                CommandArgValue::String(cases.string())
            }
        } else if option.kind == CommandOptionType::Boolean {
            CommandArgValue::Integer(1)
        } else {
            CommandArgValue::Number(1.5)
        };
    }
    if let Some(choices) = option.choices.as_ref().filter(|_| cases.chance(70)) {
        let choice = cases.pick(choices).clone();
        return match option.kind {
            CommandOptionType::Integer => {
                CommandArgValue::Integer(choice.trim_start_matches('+').parse().unwrap())
            }
            CommandOptionType::Number => CommandArgValue::Number(choice.parse().unwrap()),
            _ => CommandArgValue::String(choice),
        };
    }
    match option.kind {
        CommandOptionType::Integer => CommandArgValue::Integer(cases.integer()),
        CommandOptionType::Number => CommandArgValue::Number(cases.number()),
        CommandOptionType::Boolean => CommandArgValue::Boolean(cases.chance(50)),
        _ => CommandArgValue::String(cases.string()),
    }
}

async fn formatter_agrees(page: &fantoccini::Client) {
    let mut cases = Cases(0x00b0_71a5_e5ee_d001);
    let mut inputs = Vec::new();
    let mut expected = Vec::new();
    let mut push = |decl: &CommandDeclaration, args: &CommandArgs, prefix: &str| {
        let menu: Value =
            serde_json::from_str(&canonical_menu_json(std::slice::from_ref(decl))).unwrap();
        let args_json: serde_json::Map<String, Value> =
            args.iter().map(|(k, v)| (k.clone(), arg_json(v))).collect();
        inputs.push(json!({ "command": menu[0], "args": args_json, "prefix": prefix }));
        expected.push(match format_invocation_text(decl, args, Some(prefix)) {
            Ok(line) => json!({ "ok": line }),
            Err(e) => json!({ "error": error_kind(&e) }),
        });
    };

    // The examples of text-grammar.md.
    let mut args = CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(2)),
        ("label".to_owned(), CommandArgValue::from("fire damage")),
    ]);
    push(&roll(), &args, "/");
    args.insert("sides".into(), CommandArgValue::Integer(6));
    push(&roll(), &args, "/");

    for _ in 0..600 {
        let decl = declaration(&mut cases);
        let mut args = CommandArgs::new();
        for option in &decl.options {
            if cases.chance(if option.required { 92 } else { 55 }) {
                args.insert(option.name.clone(), value_for(&mut cases, option));
            }
        }
        if cases.chance(4) {
            args.insert("zz-unknown".into(), CommandArgValue::Integer(1));
        }
        let prefix = *cases.pick(&["/", "/", "/", "!", "bot "]);
        push(&decl, &args, prefix);
    }

    let got = run_js(
        page,
        "return arg.map(({ command, args, prefix }) => {
           try { return { ok: p.formatInvocationText(p.commandFromCanonical(command), args, prefix) }; }
           catch (error) { return { error: error instanceof p.FormatError ? error.kind : `exception: ${error}` }; }
         });",
        Value::Array(inputs.clone()),
    )
    .await;
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got[0], json!({ "ok": "/roll 2 label:\"fire damage\"" }));
    assert_eq!(got[1], json!({ "ok": "/roll 2 6 fire damage" }));
    let mismatches: Vec<_> = inputs
        .iter()
        .zip(&expected)
        .zip(got)
        .filter(|((_, want), got)| want != got)
        .map(|((input, want), got)| format!("{input}\n  rust: {want}\n  page: {got}"))
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        expected.len(),
        mismatches.join("\n")
    );
    let accepted = expected.iter().filter(|e| e.get("ok").is_some()).count();
    assert!(
        accepted > expected.len() / 3 && accepted < expected.len(),
        "the cases should mix accepted and refused arguments: {accepted} of {}",
        expected.len()
    );
}

async fn numbers_agree(page: &fantoccini::Client) {
    let mut cases = Cases(42);
    let numbers: Vec<f64> = (0..400).map(|_| cases.number()).collect();
    let got = run_js(page, "return arg.map(p.formatNumber);", json!(numbers)).await;
    let want: Vec<String> = numbers
        .iter()
        .map(|n| CommandArgValue::Number(*n).to_string())
        .collect();
    assert_eq!(got, json!(want));
}

async fn sidecar_agrees(page: &fantoccini::Client) {
    let args = json!({
        "count": 3,
        "label": "fire \"damage\" 🎲",
        "ratio": 0.25,
        "whole": 2.0,
        "loud": true,
    });
    let json_text = run_js(
        page,
        "return p.encodeCommandData('3F2504E0-4F89-11D3-9A0C-0305E82C3301', 'Roll', arg);",
        args,
    )
    .await;
    let data = decode_command_data(json_text.as_str().unwrap(), None).unwrap();
    assert_eq!(data.bot_id, "3f2504e04f8911d39a0c0305e82c3301");
    assert_eq!(data.name, "roll");
    assert_eq!(
        data.args,
        CommandArgs::from([
            ("count".to_owned(), CommandArgValue::Integer(3)),
            (
                "label".to_owned(),
                CommandArgValue::from("fire \"damage\" 🎲")
            ),
            ("loud".to_owned(), CommandArgValue::Boolean(true)),
            ("ratio".to_owned(), CommandArgValue::Number(0.25)),
            // JSON has one kind of number: an integral float reads back as an
            // integer, which the registry coerces for a number option.
            ("whole".to_owned(), CommandArgValue::Integer(2)),
        ])
    );
}

// ------------------------------------------------- the binary and its HTTP

/// A GET of `target` with a `Host` header for each of `hosts`.
async fn http_get(addr: &str, target: &str, hosts: &[&str]) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let hosts: String = hosts.iter().map(|h| format!("Host: {h}\r\n")).collect();
    let request = format!("GET {target} HTTP/1.1\r\n{hosts}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
    let body = response
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, body)| body.to_owned());
    (status, body)
}

#[tokio::test]
async fn the_binary_serves_the_playground_on_loopback_host_names_only() {
    use std::io::{BufRead, BufReader};

    let mut child = Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
        .args(["--listen", "127.0.0.1:0", "--playground"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let realtime = lines.next().unwrap().unwrap();
    let rest = lines.next().unwrap().unwrap();
    assert!(rest.starts_with("rest: "), "{rest}");
    let playground = lines.next().unwrap().unwrap();
    let url = playground
        .strip_prefix("playground: ")
        .unwrap_or_else(|| panic!("no playground URL: {playground}"));
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/playground"))
        .unwrap_or_else(|| panic!("unexpected URL {url}"));
    assert_eq!(realtime, format!("realtime: ws://{addr}/ws"));

    let (status, page) = http_get(addr, "/playground", &[addr]).await;
    assert_eq!(status, 200);
    assert!(page.contains("<title>botlane playground</title>"), "{page}");
    let (status, session) = http_get(addr, "/playground/session", &["localhost"]).await;
    assert_eq!(status, 200);
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["name"], "you");
    assert!(session["token"].as_str().unwrap().starts_with("usr_"));
    // A page on another host name that resolves to 127.0.0.1 (DNS rebinding)
    // gets nothing.
    for path in ["/playground/session", "/playground/menus", "/playground"] {
        let (status, body) = http_get(addr, path, &["rebound.example:80"]).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert!(!body.contains("usr_"));
    }
    let (status, menus) = http_get(addr, "/playground/menus", &[addr]).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&menus).unwrap(),
        json!({ "bots": [] })
    );

    child.kill().unwrap();
    child.wait().unwrap();
}

/// The host a request names is judged by the admin endpoint's rule: more
/// than one `Host` is refused (RFC 9112 §3.2: two parsers could each read
/// another), and an absolute-form target's authority stands for the
/// `Host` (§3.2.2).
#[tokio::test]
async fn a_repeated_host_or_a_foreign_absolute_target_is_refused() {
    let server = DevServer::start(DevServerConfig::default().playground(true))
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    let (status, body) = http_get(&addr, "/playground/session", &[&addr, "rebound.example"]).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("one Host header"), "{body}");
    let foreign = "http://rebound.example/playground/session";
    let (status, body) = http_get(&addr, foreign, &[&addr]).await;
    assert_eq!(status, 403, "{body}");
    assert!(!body.contains("usr_"), "{body}");
    let own = format!("http://{addr}/playground/session");
    let (status, body) = http_get(&addr, &own, &["rebound.example"]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("usr_"), "{body}");
    server.shutdown().await;
}

#[tokio::test]
async fn without_the_flag_there_is_no_playground() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    assert!(server.playground_url().is_none());
    assert!(server.playground_channel().is_none());
    let addr = server.local_addr().to_string();
    let (status, _) = http_get(&addr, "/playground/session", &[&addr]).await;
    assert_eq!(status, 404);
    server.shutdown().await;
}
