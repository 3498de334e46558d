//! The test kit end to end: a `Scene` in one line, `TestUser::invoke` with a
//! typed command, each kind of wrong `Sidecar` against a real bot `Client`
//! over the devserver, the scene's bot on the devserver's REST API, and a
//! bot the test builds whole (`start_bot`).
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::framework::{CommandFailure, CommandSettings, NotAnOwner, OnError, UserId};

use botlane::{
    BoxError, Client, Command, CommandChoice, CommandContext, CommandDeclaration, CommandError,
    CommandErrorReason, CommandSource, Event, Events, Message,
};
use botlane_devserver::{Scene, SceneError, Sidecar};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_scene_in_one_line_answers_ping() {
    let scene = Scene::start(|commands| {
        let ping = CommandDeclaration::new("ping", "Check that the bot is alive");
        commands.register(ping, |ctx: CommandContext| async move {
            ctx.reply("pong").await
        })?;
        Ok(())
    })
    .await
    .unwrap();

    // The scene is what it says: one channel with the bot and alice in it,
    // the bot logged in with its menu published.
    assert_eq!(scene.bot.bot_id().as_deref(), Some(scene.bot_id()));
    assert_eq!(scene.bot.channels().len(), 1);
    assert_eq!(scene.bot.channels()[0].id, scene.channel);
    assert_eq!(scene.user.channels()[0].id, scene.channel);
    assert!(scene.user.has_channel_key(&scene.channel));
    let menu = scene.server.menu(scene.bot_id()).unwrap();
    assert!(menu.command("ping").is_some());

    let asked = scene.say("/ping").await.unwrap();
    let answer = scene.answer().await.unwrap();
    assert_eq!(answer.content, "pong");
    assert_eq!(answer.reply_to, Some(asked));
    // The service relayed ciphertext only.
    assert!(scene
        .server
        .messages(&scene.channel)
        .iter()
        .all(|m| m.content != "pong" && m.content != "/ping"));

    // The bot's close writes its keystore (it got a channel key); the
    // scene's close removes the directory.
    let keystore = scene.keystore_path();
    scene.bot.close().await.unwrap();
    assert!(keystore.is_file());
    let dir = keystore.parent().unwrap().to_owned();
    scene.close().await.unwrap();
    assert!(!dir.exists(), "close removes the keystore directory");
}

/// Roll some dice
#[derive(Command, Debug, Clone, PartialEq)]
struct Roll {
    /// How many dice
    #[option(min = 1, max = 20)]
    count: u8,
    /// Sides per die
    #[option(choices("4", "6", "20"))]
    sides: Option<u32>,
    /// Keep the highest
    best: Option<bool>,
    /// A modifier to add
    bonus: Option<f64>,
    /// Who rolls
    player: Option<UserId>,
    /// How to show it
    style: Option<Style>,
    /// What the roll is for
    label: Option<String>,
}

/// How a roll is shown.
#[derive(CommandChoice, Debug, Clone, Copy, PartialEq)]
enum Style {
    Plain,
    Fancy,
}

/// A scene whose `roll` handler counts its runs and hands every `Roll` it
/// gets (with the lane it came on) to the test.
async fn roll_scene() -> (
    Scene,
    mpsc::Receiver<(CommandSource, Roll)>,
    Arc<AtomicUsize>,
) {
    let (tx, rx) = mpsc::channel(16);
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let scene = Scene::start(move |commands| {
        commands.command::<Roll>(move |ctx, roll| {
            counted.fetch_add(1, Ordering::SeqCst);
            let tx = tx.clone();
            async move {
                let answer = format!("rolled {}", roll.count);
                tx.try_send((ctx.source(), roll))
                    .map_err(|_| "the test stopped listening")?;
                ctx.reply(&answer).await?;
                Ok::<(), botlane::BoxError>(())
            }
        })?;
        Ok(())
    })
    .await
    .unwrap();
    (scene, rx, runs)
}

#[tokio::test]
async fn a_typed_invoke_reaches_the_typed_handler_with_equal_values() {
    let (scene, mut rolls, _) = roll_scene().await;
    let sent = Roll {
        count: 3,
        sides: Some(20),
        best: Some(true),
        bonus: Some(-1.5),
        player: Some(UserId(scene.user_account.id.clone())),
        style: Some(Style::Fancy),
        label: Some("fire damage, \"twice\"".to_owned()),
    };
    let asked = scene.invoke(&sent).await.unwrap();
    let (source, got) = tokio::time::timeout(WAIT, rolls.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(source, CommandSource::Structured);
    assert_eq!(got, sent);
    let answer = scene.answer().await.unwrap();
    assert_eq!(
        (answer.content.as_str(), answer.reply_to),
        ("rolled 3", Some(asked))
    );

    // What alice sent is what `Client::send_command` sends: the line the
    // library formats, the sidecar it encodes, addressed to the bot.
    let echo = scene
        .user
        .history(&scene.channel)
        .await
        .unwrap()
        .messages
        .into_iter()
        .find(|m| m.author_id == scene.user_account.id)
        .unwrap();
    let line =
        botlane::format_invocation_text(&Roll::declaration(), &sent.to_args(), None).unwrap();
    assert_eq!(echo.content, line);
    let data = echo.command.unwrap();
    assert_eq!(
        data.bot_id,
        botlane::framework::canonical_bot_id(scene.bot_id())
    );
    assert_eq!(Roll::from_args(&data.args).unwrap(), sent);

    // Optional fields left out stay out, on the structured lane too.
    let few = Roll {
        count: 1,
        sides: None,
        best: None,
        bonus: None,
        player: None,
        style: None,
        label: None,
    };
    scene.invoke(&few).await.unwrap();
    let (_, got) = tokio::time::timeout(WAIT, rolls.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got, few);
}

/// Waits for the bot's event about message `id`: its `Message` event, then
/// the `CommandError` that follows it, if one does before the event of
/// message `after` (sent after `id`; dispatch handles messages in order and
/// reports a rejected invocation before it takes the next one).
async fn outcome(events: &mut Events, id: &str, after: &str) -> (Message, Option<CommandError>) {
    let mut message = None;
    let mut error = None;
    loop {
        let event = tokio::time::timeout(WAIT, events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::Message(m) if m.id == id => message = Some(m),
            Event::CommandError(e) if e.message.id == id => error = Some(e),
            Event::Message(m) if m.id == after => break,
            _ => {}
        }
    }
    (message.unwrap(), error)
}

/// Sends `content` with `sidecar`, then a plain line as a marker; returns
/// what the bot made of the first.
async fn send(
    scene: &Scene,
    events: &mut Events,
    content: &str,
    sidecar: &Sidecar,
) -> (Message, Option<CommandError>) {
    let id = scene.send_sidecar(content, sidecar).await.unwrap();
    let marker = scene.say("a plain line").await.unwrap();
    outcome(events, &id, &marker).await
}

/// The bot rejected the structured invocation of `roll`: an argument error,
/// no command on the message, the handler not run (no fallback to the line).
fn assert_rejected(outcome: &(Message, Option<CommandError>), what: &str) {
    let (message, error) = outcome;
    assert!(message.command.is_none(), "{what}: {:?}", message.command);
    let error = error
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no command error"));
    assert_eq!(error.reason, CommandErrorReason::Arguments, "{what}");
    assert_eq!(error.command, "roll", "{what}");
}

#[tokio::test]
async fn each_wrong_sidecar_gets_an_argument_error_and_never_the_text_lane() {
    let (scene, mut rolls, runs) = roll_scene().await;
    let mut events = scene.bot.events();
    let roll = Sidecar::to(scene.bot_id()).declaration(&Roll::declaration());
    // Every content is a valid line: structured wins, so it must not run.
    let line = "/roll 2";
    let valid = roll.clone().arg("count", 2_i64);

    let cases = [
        ("a wrong type", valid.clone().wrong_type("count")),
        (
            "a string that is not an integer",
            valid.clone().arg("count", "abc"),
        ),
        ("an unknown choice", valid.clone().unknown_choice("sides")),
        (
            "an unknown string choice",
            valid.clone().unknown_choice("style"),
        ),
        (
            "a required option missing",
            valid.clone().remove_arg("count"),
        ),
        ("an undeclared option", valid.clone().arg("nope", 1_i64)),
        ("an empty user id", valid.clone().arg("player", "")),
        ("a count over its max", valid.clone().out_of_bounds("count")),
    ];
    for (what, sidecar) in &cases {
        assert_rejected(&send(&scene, &mut events, line, sidecar).await, what);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(rolls.try_recv().is_err());

    // The same sidecar, right, runs the command from the sidecar, not the line.
    let (message, error) = send(&scene, &mut events, "/roll 5", &valid).await;
    assert!(error.is_none());
    let invocation = message.command.unwrap();
    assert_eq!(invocation.source, CommandSource::Structured);
    let (_, got) = tokio::time::timeout(WAIT, rolls.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.count, 2);
}

#[tokio::test]
async fn a_sidecar_for_another_bot_is_dropped_without_text_fallback() {
    let (scene, mut rolls, runs) = roll_scene().await;
    let mut events = scene.bot.events();
    let other = Sidecar::to(scene.bot_id())
        .invoking(&Roll {
            count: 2,
            sides: None,
            best: None,
            bonus: None,
            player: None,
            style: None,
            label: None,
        })
        .for_another_bot();
    assert_ne!(
        other.bot_id(),
        botlane::framework::canonical_bot_id(scene.bot_id())
    );

    let (message, error) = send(&scene, &mut events, "/roll 2", &other).await;
    assert!(message.command.is_none(), "{:?}", message.command);
    assert!(error.is_none(), "{error:?}");
    // A command this bot does not have is dropped the same way.
    let unknown = Sidecar::to(scene.bot_id()).command("dance");
    let (message, error) = send(&scene, &mut events, "/roll 2", &unknown).await;
    assert!(message.command.is_none() && error.is_none());

    // The handler never ran: a later invocation is the first to reach it
    // (handlers start in arrival order on the test's single thread).
    scene.say("/roll 4").await.unwrap();
    let (source, got) = tokio::time::timeout(WAIT, rolls.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((source, got.count), (CommandSource::Text, 4));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_malformed_sidecar_leaves_the_decision_to_the_text_line() {
    let (scene, mut rolls, _) = roll_scene().await;
    let mut events = scene.bot.events();
    let valid = Sidecar::to(scene.bot_id())
        .declaration(&Roll::declaration())
        .arg("count", 2_i64);

    let cases = [
        ("version 2", valid.clone().version(2), "/roll 3", 3),
        (
            "args not an object",
            valid.clone().raw_args("[2]"),
            "/roll 4",
            4,
        ),
        (
            "a null argument",
            valid.clone().raw_args(r#"{"count":null}"#),
            "/roll 5",
            5,
        ),
        (
            "a repeated argument",
            valid.clone().raw_args(r#"{"count":2,"count":9}"#),
            "/roll 6",
            6,
        ),
        (
            "a repeated bot",
            valid.clone().field("bot", r#""ff""#),
            "/roll 7",
            7,
        ),
    ];
    for (what, sidecar, line, count) in cases {
        let (message, error) = send(&scene, &mut events, line, &sidecar).await;
        assert!(error.is_none(), "{what}: {error:?}");
        let invocation = message
            .command
            .unwrap_or_else(|| panic!("{what}: not invoked"));
        assert_eq!(invocation.source, CommandSource::Text, "{what}");
        let (source, got) = tokio::time::timeout(WAIT, rolls.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((source, got.count), (CommandSource::Text, count), "{what}");
    }

    // A malformed sidecar with a line that is no command is a plain message.
    let (message, error) = send(&scene, &mut events, "just chatting", &valid.version(0)).await;
    assert!(message.command.is_none() && error.is_none());
}

#[tokio::test]
async fn the_scene_s_bot_reaches_the_devserver_s_rest_api() {
    let scene = Scene::builder()
        .server_config(botlane_devserver::DevServerConfig::default().bot_rest_credentials(true))
        .start(|_| Ok(()))
        .await
        .unwrap();
    scene
        .server
        .add_file(&scene.server_id, "notes.txt", b"hello".to_vec())
        .unwrap();

    let files: serde_json::Value = scene
        .bot
        .rest()
        .json(botlane::rest::Method::GET, "/api/files/list", None)
        .await
        .unwrap();
    let names: Vec<&str> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(names, ["notes.txt"]);
    // The call went to this devserver, with a minted credential.
    assert_eq!(scene.server.mint_count(), 1);
    scene.close().await.unwrap();
}

/// Log lines, captured for the test's thread (a current-thread runtime:
/// the bot's tasks run here too).
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A scene dropped without `close`: its bot is closed first (its last
/// keystore write lands), then its keystore directory is removed. Removed
/// at once, the write in flight failed and warned twice.
#[tokio::test]
async fn a_scene_dropped_without_close_closes_its_bot_before_removing_its_keystore() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    let _logs = tracing::subscriber::set_default(subscriber);
    let scene = Scene::start(|_| Ok(())).await.unwrap();
    let dir = scene.keystore_path().parent().unwrap().to_owned();
    let mut events = scene.bot.events();
    // The channel key alice shared is waiting for its write.
    drop(scene);
    tokio::time::timeout(WAIT, async {
        while !matches!(events.recv().await, Err(botlane::EventRecvError::Closed)) {}
        while dir.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the bot's tasks end and the keystore directory is removed");
    // A keystore write still on its way (its window is 0.5 s) would fail
    // now, and warn.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(!logs.contains("WARN"), "{logs}");
}

/// `start_bot`: the test builds the whole client (shared state, an error
/// hook, owners known before it starts), with the builder's
/// options change made; the scene logs it in. A builder's error fails the
/// scene, saying whose it is.
#[tokio::test]
async fn start_bot_runs_the_client_the_test_built() {
    let mut bob = None;
    let scene = Scene::builder()
        .client_options(|options| options.command_prefix("!"))
        .start_bot(|setup| {
            // An account made before the bot starts, to be its owner.
            let owner = setup.server.add_user("bob");
            let options = setup.options.owners([owner.id.as_str()]);
            bob = Some(owner);
            let client = Client::with_data(options, AtomicUsize::new(0))?;
            client.on_error(OnError::new(
                |failure: CommandFailure<AtomicUsize>| async move {
                    failure.data().fetch_add(1, Ordering::SeqCst);
                    if failure.error().error_as::<NotAnOwner>().is_some() {
                        drop(failure.answer("that is for bob").await);
                    }
                },
            ));
            client.commands().update(|registry| {
                registry.register_with(
                CommandDeclaration::new("reload", "Reload"),
                CommandSettings::new().owners_only(),
                |ctx: CommandContext<AtomicUsize>| async move { ctx.reply("reloaded").await },
            ).map(drop)
            })?;
            Ok::<_, BoxError>(client)
        })
        .await
        .unwrap();
    let bob = bob.expect("the builder ran before start_bot returned");
    assert!(scene.bot.is_owner(&bob.id));

    scene.say("!reload").await.unwrap();
    assert_eq!(scene.answer().await.unwrap().content, "that is for bob");
    assert_eq!(scene.bot.data().load(Ordering::SeqCst), 1);
    scene.close().await.unwrap();

    let failed = Scene::builder()
        .start_bot(|_setup| Err::<Client, _>("no token in the vault"))
        .await
        .unwrap_err();
    assert!(matches!(failed, SceneError::Build(_)), "{failed:?}");
    assert_eq!(failed.to_string(), "the scene's bot builder failed");
    let source = std::error::Error::source(&failed).unwrap().to_string();
    assert_eq!(source, "no token in the vault");
}
