//! The recorded run behind `docs/vectors/transcripts/`: the real devserver,
//! a real botlane `Client` (the bot) and a `TestUser` (alice), each behind a
//! recording relay, taken through login, key sharing, an invocation on each
//! lane, and the REST lane's mint, exchange, 401 and re-mint; then the tour
//! of every other opcode and refusal (`tour.rs`).

use std::collections::HashMap;
use std::time::Duration;

use botlane::rest::Method;
use botlane::{
    Client, ClientOptions, CommandArgValue, CommandArgs, CommandContext, CommandDeclaration,
    CommandOption, CommandOptionType,
};
use botlane_devserver::{DevServer, DevServerConfig, Limits, ReceivedMessage, TestUser};

use crate::relay::{http_relay, op, ws_relay, Dir, Event, Payload, Recorder, STEP_TIMEOUT};
use crate::transcript::{render, Header, Known};

/// The service's pre-login timeout in the run: long enough for every
/// client to log in on a loaded machine, short enough to wait out.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(3);

pub(crate) fn roll() -> CommandDeclaration {
    CommandDeclaration::new("roll", "Roll dice")
        .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
        .option(CommandOption::new(
            "sides",
            "Sides",
            CommandOptionType::Integer,
        ))
        .option(CommandOption::new(
            "label",
            "What for",
            CommandOptionType::String,
        ))
}

/// The bot's answer, deterministic so that transcripts are.
async fn roll_handler(ctx: CommandContext) -> Result<(), botlane::ClientError> {
    let count = ctx.get_integer("count").unwrap_or(1);
    let sides = ctx.get_integer("sides").unwrap_or(6);
    let label = ctx.get_string("label").unwrap_or_default();
    ctx.reply(&format!("rolled {count}d{sides} for {label}"))
        .await
}

/// Everything a run produced: the events, the values to replace, the plaintexts.
pub(crate) struct Run {
    pub(crate) recorder: Recorder,
    pub(crate) known: Known,
    pub(crate) plaintexts: HashMap<String, String>,
    /// Where each transcript's events start and end in the record.
    pub(crate) slices: Vec<(&'static str, usize, usize)>,
}

/// alice reads messages until one from `author`; every message read is kept.
async fn read_until_from(
    alice: &TestUser,
    author: &str,
    seen: &mut Vec<ReceivedMessage>,
) -> Result<(), String> {
    loop {
        let message = alice
            .next_message(STEP_TIMEOUT)
            .await
            .map_err(|e| format!("alice: {e}"))?;
        let done = message.author_id == author;
        seen.push(message);
        if done {
            return Ok(());
        }
    }
}

fn rest_address(url: &str) -> Result<std::net::SocketAddr, String> {
    url.strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("unexpected rest url {url}"))
}

/// Runs the scenario and the tour.
pub(crate) async fn run() -> Result<Run, String> {
    let e = |what: &str| {
        let what = what.to_owned();
        move |err: Box<dyn std::error::Error>| format!("{what}: {err}")
    };
    // A short pre-login timeout, so that the tour can record its close.
    let limits = Limits::default().login_timeout(LOGIN_TIMEOUT);
    let config = DevServerConfig::default()
        .bot_rest_credentials(true)
        .limits(limits);
    let server = DevServer::start(config)
        .await
        .map_err(|err| format!("devserver: {err}"))?;
    let bot = server.add_bot("dicebot");
    let alice_account = server.add_user("alice");
    let lobby = server.create_server("lobby");
    let general = server
        .create_channel(&lobby, "general")
        .map_err(|err| format!("channel: {err}"))?;
    for account in [&bot.id, &alice_account.id] {
        server
            .add_member(&general, account)
            .map_err(|err| format!("member: {err}"))?;
    }
    server
        .add_file(&lobby, "notes.txt", b"hello, notes".to_vec())
        .map_err(|err| format!("file: {err}"))?;

    let recorder = Recorder::default();
    let bot_ws = ws_relay(&recorder, "bot", &server.ws_url()).await?;
    let bot_http = http_relay(&recorder, "bot", rest_address(&server.rest_url())?).await?;
    let alice_ws = ws_relay(&recorder, "alice", &server.ws_url()).await?;

    let mut known = Known::default();
    known.add(
        &bot.token,
        "bot-token",
        "the bot's long-lived token: sent once per login, in op 10 only",
    );
    known.add(&alice_account.token, "alice-token", "alice's token");
    known.add(&bot.id, "bot-id", "the bot's account id (a UUID v4)");
    known.add(
        &botlane::framework::canonical_bot_id(&bot.id),
        "bot-id-canonical",
        "the bot's id in canonical form, as a sidecar carries it: the UUID without dashes, lower-case",
    );
    known.add(
        &alice_account.id,
        "alice-id",
        "alice's account id (a UUID v4)",
    );
    known.add(
        &lobby,
        "server-id",
        "the id of the server (room) \"lobby\" (a UUID v4)",
    );
    known.add(
        &general,
        "channel-id",
        "the id of the channel \"general\" (a UUID v4)",
    );

    let keystore = tempfile::tempdir().map_err(|err| format!("tempdir: {err}"))?;
    let client = Client::new(
        ClientOptions::new(bot.token.clone(), keystore.path().join("keystore"), bot_ws)
            .rest_url(bot_http)
            // No heartbeat within the run: transcripts must not depend on timing.
            .heartbeat_interval(Duration::from_secs(300))
            .idle_timeout(Duration::from_secs(600)),
    )
    .map_err(|err| format!("client: {err}"))?;
    client
        .commands()
        .register(roll(), roll_handler)
        .map_err(|err| format!("register: {err}"))?;

    let mut slices = Vec::new();
    let mut seen: Vec<ReceivedMessage> = Vec::new();

    // Login and menu publishing.
    let start = recorder.len();
    client
        .login()
        .await
        .map_err(|err| format!("login: {err}"))?;
    recorder
        .wait_frames(start, "bot", Dir::ToClient, op::MENU, 1)
        .await?;
    let bot_key = server
        .view(|s| s.public_key(&bot.id).map(str::to_owned))
        .ok_or("the bot registered no public key")?;
    known.add(
        &bot_key,
        "bot-public-key",
        "the bot's X25519 identity public key (standard base64, 32 bytes)",
    );
    slices.push(("login", start, recorder.len()));

    // alice logs in and hands the channel key to the bot.
    let start = recorder.len();
    let alice = TestUser::connect(&alice_ws, &alice_account.token)
        .await
        .map_err(|err| e("alice connects")(Box::new(err)))?;
    known.add(
        &alice.public_key().to_base64(),
        "alice-public-key",
        "alice's X25519 identity public key (standard base64, 32 bytes)",
    );
    alice
        .open_channel(&general)
        .await
        .map_err(|err| e("alice shares the key")(Box::new(err)))?;
    recorder
        .wait_frames(start, "bot", Dir::ToClient, op::CHANNEL_KEY, 1)
        .await?;
    slices.push(("key-share", start, recorder.len()));

    // The text lane: a plain line, a true reply.
    let start = recorder.len();
    alice
        .send_text(&general, "/roll 2 6 fire damage")
        .await
        .map_err(|err| e("alice sends a line")(Box::new(err)))?;
    read_until_from(&alice, &bot.id, &mut seen).await?;
    recorder
        .wait_frames(start, "alice", Dir::ToClient, op::NOTIFICATION, 1)
        .await?;
    recorder
        .wait_frames(start, "bot", Dir::ToClient, op::MESSAGE, 2)
        .await?;
    slices.push(("text-lane", start, recorder.len()));

    // The structured lane: the line plus a sealed sidecar addressed to the bot.
    let start = recorder.len();
    let args = CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(3)),
        ("sides".to_owned(), CommandArgValue::Integer(20)),
        ("label".to_owned(), CommandArgValue::from("initiative")),
    ]);
    alice
        .send_command(&general, &bot.id, &roll(), &args)
        .await
        .map_err(|err| e("alice invokes")(Box::new(err)))?;
    read_until_from(&alice, &bot.id, &mut seen).await?;
    recorder
        .wait_frames(start, "alice", Dir::ToClient, op::NOTIFICATION, 1)
        .await?;
    recorder
        .wait_frames(start, "bot", Dir::ToClient, op::MESSAGE, 2)
        .await?;
    slices.push(("structured-lane", start, recorder.len()));

    // The REST lane: mint, exchange, a call; purge; 401, one re-mint, the retry.
    let start = recorder.len();
    let rest = client.rest();
    let list = |what: &'static str| {
        let rest = rest.clone();
        async move {
            rest.json::<serde_json::Value>(Method::GET, "/api/files/list", None)
                .await
                .map_err(|err| format!("{what}: {err}"))
        }
    };
    list("first REST call").await?;
    server
        .purge_rest_credentials(&bot.id)
        .map_err(|e| format!("purge the REST credentials: {e}"))?;
    list("REST call after the purge").await?;
    if server.mint_count() != 2 {
        return Err(format!(
            "expected 2 mints, the service counted {}",
            server.mint_count()
        ));
    }
    slices.push(("rest", start, recorder.len()));

    // The devserver's admin endpoint, on a service of its own.
    let start = recorder.len();
    crate::admin::run(&recorder, &mut known).await?;
    slices.push(("admin", start, recorder.len()));

    let start = recorder.len();
    let mut plaintexts = HashMap::new();
    let bob = crate::tour::run(
        &server,
        &recorder,
        &mut known,
        &mut plaintexts,
        &general,
        &lobby,
    )
    .await?;
    client.shutdown();
    drop(alice);
    crate::tour::shut_down(server, &recorder, bob).await?;
    slices.push(("tour", start, recorder.len()));

    // Every sealed payload alice could open, by the message it belongs to.
    let by_id: HashMap<&str, &ReceivedMessage> = seen.iter().map(|m| (m.id.as_str(), m)).collect();
    for event in recorder.snapshot() {
        let Payload::Frame(text) = &event.payload else {
            continue;
        };
        // The tour's unreadable frames carry no message.
        let Ok(frame) = serde_json::from_str::<serde_json::Value>(text) else {
            continue;
        };
        let messages = frame["d"]["messages"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![frame["d"]["message"].clone()]);
        for message in messages {
            let Some(received) = message["id"].as_str().and_then(|id| by_id.get(id)) else {
                continue;
            };
            if let Some(sealed) = message["content"].as_str() {
                plaintexts.insert(sealed.to_owned(), received.content.clone());
            }
            if let (Some(sealed), Some(json)) =
                (message["command"].as_str(), &received.command_json)
            {
                plaintexts.insert(sealed.to_owned(), json.clone());
            }
        }
    }
    Ok(Run {
        recorder,
        known,
        plaintexts,
        slices,
    })
}

/// The files of a run: name and text.
pub(crate) fn files(run: &Run) -> Result<Vec<(String, String)>, String> {
    let events = run.recorder.snapshot();
    let mut out = Vec::new();
    for (name, start, end) in &run.slices {
        let header = header(name);
        // Only the transcript's own connections: others may be busy meanwhile.
        let slice: Vec<Event> = events[*start..*end]
            .iter()
            .filter(|e| header.connections.iter().any(|(conn, _)| *conn == e.conn))
            .cloned()
            .collect();
        let text = render(&header, &slice, &run.known, &run.plaintexts)
            .map_err(|err| format!("transcripts/{name}.json: {err}"))?;
        out.push((format!("transcripts/{name}.json"), text));
    }
    Ok(out)
}

const BOT: (&str, &str) = ("bot", "the bot: a botlane Client (this library), one WebSocket to the service and HTTP to the REST listener");
const ALICE: (&str, &str) = (
    "alice",
    "a human member: botlane-devserver's TestUser, which seals and opens like a chat app",
);

fn header(name: &str) -> Header<'static> {
    match name {
        "login" => Header {
            about: "A bot logs in and publishes its menu (ops 10, 11, 20).",
            scenario: &[
                "the service has a bot 'dicebot' and a human 'alice', both members of channel 'general' in server 'lobby'",
                "the bot logs in with its token and identity public key; the service answers op 10, then pushes ready (op 11)",
                "the bot publishes its canonical menu (op 20): roll(count: integer, required; sides: integer; label: string)",
            ],
            connections: &[BOT],
        },
        "key-share" => Header {
            about: "A human logs in, creates the channel key and wraps it to the bot (ops 10, 11, 61, 52, 51, 50).",
            scenario: &[
                "alice logs in",
                "alice lists the channel's members (op 61), fetches the bot's public key (op 52) and shares the channel key wrapped to it (op 51)",
                "the service pushes the wrapped key to the bot (op 50)",
            ],
            connections: &[BOT, ALICE],
        },
        "text-lane" => Header {
            about: "An invocation on the text lane and the bot's true reply (ops 30, 32, 33).",
            scenario: &[
                "alice sends the plain line '/roll 2 6 fire damage' (op 30); every member gets it (op 32)",
                "the bot parses the line, runs roll and replies with reply_to (op 30)",
                "every member gets the reply (op 32); alice gets a reply notification (op 33)",
            ],
            connections: &[BOT, ALICE],
        },
        "structured-lane" => Header {
            about: "An invocation on the structured lane: the readable line plus a sealed sidecar addressed to the bot (ops 30, 32, 33).",
            scenario: &[
                "alice invokes roll with count 3, sides 20, label 'initiative': content is the line, command the sealed sidecar (op 30)",
                "the bot opens and decodes the sidecar (structured wins), runs roll and replies with reply_to",
                "every member gets the reply (op 32); alice gets a reply notification (op 33)",
            ],
            connections: &[BOT, ALICE],
        },
        "rest" => Header {
            about: "The REST lane (docs/rest.md): op 638, the exchange, a call; then a purged credential gives 401, the bot mints once more and retries.",
            scenario: &[
                "the bot calls GET /api/files/list: it mints (op 638), exchanges the secret (POST /auth/verify-session) and calls with the verification header",
                "the service purges the bot's credential rows (DevServer::purge_rest_credentials)",
                "the bot calls again: 401 session_expired; it mints once more, exchanges, and the retry succeeds",
            ],
            connections: &[BOT],
        },
        "admin" => crate::admin::header(),
        _ => crate::tour::header(),
    }
}
