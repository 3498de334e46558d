//! A moderation bot ported from poise, as its author would write it, run
//! against the devserver: typed commands with choices, optional and
//! greedy options, a "group" as a choice, a permission-like check (one
//! that reads the arguments), cooldowns, shared state behind a lock, a
//! custom error hook, aliases of a prefix command, the generated help
//! grouped by category with a line at its bottom, owners (an owners-only command, owners skipping checks
//! and cooldowns), a follow-up answer, a REST call from a handler, an event
//! loop that moderates plain messages (poise's `event_handler`) and a
//! shutdown command that ends it. The bot is built as its `main` builds it
//! and started in a `Scene` (`start_bot`). The test is the transcript a
//! user sees.

#![cfg(feature = "macros")]
#![allow(clippy::unwrap_used)]

use crate::support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use botlane::framework::{
    Check, CommandFailure, CommandSettings, Cooldown, CooldownError, NotAnOwner, OnError,
    UserError, UserId,
};
use botlane::rest::Method;
use botlane::{
    BoxError, Client, ClientOptions, Command, CommandChoice, CommandContext, CommandErrorReason,
    DeclarationError, Event, EventRecvError, Events,
};
use botlane_devserver::{DevServerConfig, ReceivedMessage, Scene, TestUser, UserAccount};
use serde::Deserialize;
use support::WAIT;

/// What every handler, check and hook of the bot shares (poise's `Data`).
#[derive(Default)]
struct ModData {
    /// Who may moderate (user ids).
    moderators: Vec<String>,
    /// Warnings per user id, oldest first.
    warnings: Mutex<HashMap<String, Vec<String>>>,
    /// Commands that ran to the end.
    commands_run: AtomicU64,
    /// Every failure the error hook saw, as `command: reason`.
    failures: Mutex<Vec<String>>,
    /// Set by `shutdown` once its `close` returned.
    stopped: AtomicBool,
}

impl ModData {
    fn is_moderator(&self, user: &str) -> bool {
        self.moderators.iter().any(|m| m == user)
    }

    fn warnings_of(&self, user: &str) -> Vec<String> {
        let warnings = self.warnings.lock().unwrap_or_else(|p| p.into_inner());
        warnings.get(user).cloned().unwrap_or_default()
    }
}

type Ctx = CommandContext<ModData>;

/// Check that the bot is alive
#[derive(Command)]
struct Ping;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// How many dice
    #[option(min = 1, max = 20)]
    count: u8,
    /// Sides per die
    #[option(choices("6", "20"))]
    sides: Option<u32>,
}

/// Warn a user
#[derive(Command)]
struct Warn {
    /// Who to warn
    user: UserId,
    /// Why
    #[option(max_length = 200)]
    reason: String,
}

/// What `warnings` does: poise would have two subcommands.
#[derive(CommandChoice, Debug, Clone, Copy, PartialEq, Eq)]
enum WarningsAction {
    /// Show a user's warnings.
    List,
    /// Forget a user's warnings (moderators only).
    Clear,
}

/// List or clear a user's warnings
#[derive(Command)]
struct Warnings {
    /// list or clear
    action: WarningsAction,
    /// Whose warnings
    user: UserId,
}

/// Show what the bot knows about a user
#[derive(Command)]
struct Userinfo {
    /// Who (you, when left out)
    user: Option<UserId>,
}

/// List the files of the service
#[derive(Command)]
struct Files;

/// Read a server's audit log
#[derive(Command)]
struct Audit;

/// Show the bot's counters
#[derive(Command)]
struct Stats;

/// Stop the bot
#[derive(Command)]
struct Shutdown;

/// poise's `check = "is_mod"`: the reason is what the user reads.
fn moderators_only() -> Check<ModData> {
    Check::sync(|ctx: &Ctx| {
        if ctx.data().is_moderator(&ctx.message().author_id) {
            Ok(())
        } else {
            Err(UserError::from("only a moderator may do that"))
        }
    })
}

/// `warnings clear` is for moderators, `warnings list` for anyone: poise
/// puts the check on the subcommand; here the check reads the argument.
fn clearing_needs_a_moderator() -> Check<ModData> {
    Check::sync(|ctx: &Ctx| {
        let action: WarningsAction = ctx.require("action")?;
        if action == WarningsAction::Clear && !ctx.data().is_moderator(&ctx.message().author_id) {
            return Err(UserError::from("only a moderator may clear warnings"));
        }
        Ok(())
    })
}

/// The body of `GET /api/files/list` (the fields used).
#[derive(Deserialize)]
struct FileList {
    files: Vec<FileEntry>,
}

#[derive(Deserialize)]
struct FileEntry {
    name: String,
    size: u64,
}

/// poise's `on_error`: everything is counted; the bot's own failures, a
/// cooldown and a command for the owner get a sentence of this bot's, the
/// rest the default answers.
fn on_error() -> OnError<ModData> {
    OnError::new(|failure: CommandFailure<ModData>| async move {
        let error = failure.error();
        failure
            .data()
            .failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("{}: {}", error.command, error.reason.as_str()));
        let users_fault = error.error_as::<UserError>().is_some();
        let answered = if error.reason == CommandErrorReason::Handler && !users_fault {
            let text = format!(
                "something went wrong with {}; the moderators were told",
                error.command
            );
            failure.answer(&text).await
        } else if let Some(cooldown) = error.error_as::<CooldownError>() {
            let seconds = cooldown.wait().as_secs_f64().ceil();
            failure
                .answer(&format!(
                    "slow down: {} again in {seconds} s",
                    error.command
                ))
                .await
        } else if error.error_as::<NotAnOwner>().is_some() {
            // poise's `FrameworkError::NotAnOwner`.
            let text = format!("{} is for the bot's owner", error.command);
            failure.answer(&text).await
        } else {
            failure.answer_default().await
        };
        drop(answered);
    })
}

/// The bot: poise's `Framework::builder().options(..).setup(..)`.
fn modbot(options: ClientOptions, moderators: Vec<String>) -> Result<Client<ModData>, BoxError> {
    let data = ModData {
        moderators,
        ..ModData::default()
    };
    let client = Client::with_data(options, data)?;
    client.on_error(on_error());
    // poise's `ctx.framework()`: a handler that needs the client holds a
    // weak handle (a `Client` there would keep the bot running forever).
    let weak = client.downgrade();
    // poise's `owners_only`: the owners are the client's (`ClientOptions::owners`).
    let owner_only = CommandSettings::new().owners_only().category("Owner");
    // poise's `category`: the headings of the generated help.
    let fun = CommandSettings::new().category("Fun");
    let moderation = CommandSettings::new().category("Moderation");
    let info = CommandSettings::new().category("Info");
    let mods = moderation.clone().check(moderators_only());
    client.commands().update(|registry| {
        registry
            .command::<Ping>(|ctx, _ping| async move { ctx.reply("pong").await })?
            .command_with::<Roll>(
                // poise's `aliases("r", "dice")`: on the text lane only.
                fun.cooldown(Cooldown::per_user(Duration::from_secs(60)))
                    .aliases(["r", "dice"]),
                |ctx, roll| async move {
                    ctx.data().commands_run.fetch_add(1, Ordering::Relaxed);
                    let sides = roll.sides.unwrap_or(6);
                    ctx.reply(&format!("rolling {}d{sides}", roll.count)).await
                },
            )?
            .command_with::<Warn>(mods.clone(), |ctx, warn| async move {
                let n = {
                    let mut all = ctx
                        .data()
                        .warnings
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    let theirs = all.entry(warn.user.to_string()).or_default();
                    theirs.push(warn.reason.clone());
                    theirs.len()
                };
                ctx.data().commands_run.fetch_add(1, Ordering::Relaxed);
                let plural = if n == 1 { "" } else { "s" };
                ctx.reply(&format!(
                    "warned {} for: {} ({n} warning{plural})",
                    warn.user, warn.reason
                ))
                .await
            })?
            .command_with::<Warnings>(
                moderation.clone().check(clearing_needs_a_moderator()),
                |ctx, w| async move {
                    let user = w.user.to_string();
                    let text = match w.action {
                        WarningsAction::List => {
                            let theirs = ctx.data().warnings_of(&user);
                            if theirs.is_empty() {
                                format!("{user} has no warnings")
                            } else {
                                format!("{user}: {}", theirs.join("; "))
                            }
                        }
                        WarningsAction::Clear => {
                            let mut all = ctx
                                .data()
                                .warnings
                                .lock()
                                .unwrap_or_else(|p| p.into_inner());
                            let n = all.remove(&user).map_or(0, |w| w.len());
                            format!("cleared {n} warnings of {user}")
                        }
                    };
                    ctx.data().commands_run.fetch_add(1, Ordering::Relaxed);
                    ctx.reply(&text).await
                },
            )?
            .command_with::<Userinfo>(moderation, |ctx, info| async move {
                let user = info
                    .user
                    .map_or_else(|| ctx.message().author_id.clone(), |u| u.to_string());
                let warnings = ctx.data().warnings_of(&user).len();
                let role = if ctx.data().is_moderator(&user) {
                    "moderator"
                } else {
                    "member"
                };
                ctx.reply(&format!("{user}: {role}, {warnings} warnings"))
                    .await
            })?
            .command_with::<Files>(info.clone(), |ctx, _files| async move {
                // A first answer at once, the result when the service answers.
                ctx.reply("looking…").await?;
                let list: FileList = ctx
                    .rest()?
                    .json(Method::GET, "/api/files/list", None)
                    .await?;
                let names: Vec<String> = list
                    .files
                    .iter()
                    .map(|f| format!("{} ({} bytes)", f.name, f.size))
                    .collect();
                ctx.say(&format!("files: {}", names.join(", "))).await?;
                Ok::<(), BoxError>(())
            })?
            .command_with::<Audit>(mods.clone(), |ctx, _audit| async move {
                let server = ctx.server_id().unwrap_or_default().to_owned();
                // The service refuses this scope: a failure of the bot's own.
                let log = ctx
                    .rest()?
                    .request(Method::GET, &format!("/api/audit-log/{server}"), None)
                    .await?;
                let body = log.bytes().await?;
                ctx.reply(&format!("{} bytes of audit log", body.len()))
                    .await?;
                Ok::<(), BoxError>(())
            })?
            .command_with::<Stats>(
                info.cooldown(Cooldown::global(Duration::from_secs(60))),
                |ctx, _stats| async move {
                    let run = ctx.data().commands_run.load(Ordering::Relaxed);
                    let failed = ctx
                        .data()
                        .failures
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .len();
                    ctx.reply(&format!("{run} commands run, {failed} failures"))
                        .await
                },
            )?
            .command_with::<Shutdown>(owner_only, move |ctx, _shutdown| {
                let weak = weak.clone();
                async move {
                    ctx.reply("shutting down").await?;
                    if let Some(client) = weak.upgrade() {
                        client.close().await?;
                    }
                    ctx.data().stopped.store(true, Ordering::SeqCst);
                    Ok::<(), BoxError>(())
                }
            })?
            .enable_help()?
            // poise's `extra_text_at_bottom`.
            .help_footer("Moderators: ask them in #help.");
        Ok::<(), DeclarationError>(())
    })?;
    Ok(client)
}

/// poise's `event_handler` on `FullEvent::Message`: a message with a link
/// to the spam site gets an answer and a warning, commands or not. It runs
/// until the bot is closed, as `main`'s event loop would.
async fn automod(client: Client<ModData>, mut events: Events) -> u64 {
    let mut seen = 0;
    loop {
        let message = match events.recv().await {
            Ok(Event::Message(message)) => message,
            Ok(_) | Err(EventRecvError::Lagged(_)) => continue,
            Err(EventRecvError::Closed) => return seen,
        };
        let own = client.bot_id().as_deref() == Some(message.author_id.as_str());
        if own || !message.content.contains("spam.example") {
            continue;
        }
        seen += 1;
        client
            .data()
            .warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(message.author_id.clone())
            .or_default()
            .push("spam link".to_owned());
        // The message from the event answers through its client.
        if message
            .reply("no links to spam.example here")
            .await
            .is_err()
        {
            return seen;
        }
    }
}

/// Another human in the scene's channel, with its key.
async fn second_human<D: Send + Sync + 'static>(
    scene: &Scene<D>,
    account: &UserAccount,
) -> TestUser {
    scene
        .server
        .add_member(&scene.channel, &account.id)
        .unwrap();
    let user = TestUser::connect(&scene.server.ws_url(), &account.token)
        .await
        .unwrap();
    scene
        .user
        .share_key_with(&scene.channel, user.user_id())
        .await
        .unwrap();
    user.wait_for_key(&scene.channel, WAIT).await.unwrap();
    user
}

/// The bot's next message `to` sees. Every answer is read from alice's
/// queue, also those to bob and carol: she sees every message of the
/// channel, in order, and their queues would hold the answers to her too.
async fn said(to: &TestUser, bot: &str) -> String {
    answer(to, bot).await.content
}

async fn answer(to: &TestUser, bot: &str) -> ReceivedMessage {
    to.wait_for_message(|m| m.author_id == bot, WAIT)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_moderation_bot_ported_from_poise_answers_as_its_users_expect() {
    // Carol owns the bot, bob moderates: it knows their ids before it
    // starts, as `main` would read them from its configuration. Not one
    // person for both: an owner skips the checks, so a moderator who owns
    // the bot would pass the moderators' check without it being asked.
    let mut accounts = None;
    let scene = Scene::builder()
        .server_config(DevServerConfig::default().bot_rest_credentials(true))
        .start_bot(|setup| {
            let bob = setup.server.add_user("bob");
            let carol = setup.server.add_user("carol");
            // The default answers 3 failures per user and channel, then one
            // per 10 s: this transcript has more mistakes than that in a row.
            let options = setup
                .options
                .owners([carol.id.as_str()])
                .skip_checks_for_owners(true)
                .error_answer_limit(20, Duration::from_secs(10));
            let moderators = vec![bob.id.clone()];
            accounts = Some((bob, carol));
            modbot(options, moderators)
        })
        .await
        .unwrap();
    let (bob_account, carol_account) = accounts.expect("start_bot ran the builder");
    let archive = scene.server.create_server("archive");
    scene
        .server
        .add_file(&archive, "rules.txt", b"be kind".to_vec())
        .unwrap();
    let client = scene.bot.clone();
    let mut events = client.events();
    let automod = tokio::spawn(automod(client.clone(), client.events()));
    let alice = &scene.user;
    let bob = second_human(&scene, &bob_account).await;
    let carol = second_human(&scene, &carol_account).await;
    let (alice_id, bob_id) = (scene.user_account.id.clone(), bob_account.id.clone());
    let channel = scene.channel.clone();
    let bot = scene.bot_id();

    alice.send_text(&channel, "/ping").await.unwrap();
    assert_eq!(said(alice, bot).await, "pong");

    // Bounds and choices, then the per-user cooldown.
    alice.send_text(&channel, "/roll 30").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        "option \"count\" must be at most 20\nusage: /roll <count (1 to 20)> [sides]"
    );
    alice.send_text(&channel, "/roll 2 7").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        "option \"sides\" must be one of 6, 20\nusage: /roll <count (1 to 20)> [sides]"
    );
    alice.send_text(&channel, "/roll 2 20").await.unwrap();
    assert_eq!(said(alice, bot).await, "rolling 2d20");
    // An alias is the command: the same cooldown, under the command's name.
    alice.send_text(&channel, "/r 1").await.unwrap();
    let cooling = said(alice, bot).await;
    // The hook's own words, with the wait from the `CooldownError`.
    assert!(
        cooling.starts_with("slow down: roll again in ") && cooling.ends_with(" s"),
        "{cooling}"
    );
    // Per user: bob's first roll is not cooling down.
    bob.send_text(&channel, "/dice 1").await.unwrap();
    assert_eq!(said(alice, bot).await, "rolling 1d6");
    // The owner skips checks and cooldowns: twice in a row.
    for _ in 0..2 {
        carol.send_text(&channel, "/roll 3").await.unwrap();
        assert_eq!(said(alice, bot).await, "rolling 3d6");
    }

    // The moderators' check, and a missing required option.
    alice
        .send_text(&channel, &format!("/warn {bob_id} no reason"))
        .await
        .unwrap();
    assert_eq!(said(alice, bot).await, "only a moderator may do that");
    bob.send_text(&channel, &format!("/warn {alice_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        "option \"reason\" is required\nusage: /warn <user> <reason (up to 200 characters)>"
    );
    // The greedy last string: the reason needs no quotes.
    bob.send_text(&channel, &format!("/warn {alice_id} spamming links"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("warned {alice_id} for: spamming links (1 warning)")
    );
    bob.send_text(&channel, &format!("/warn {alice_id} shouting"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("warned {alice_id} for: shouting (2 warnings)")
    );

    // The "group": anyone lists, only a moderator clears.
    alice
        .send_text(&channel, &format!("/warnings list {alice_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("{alice_id}: spamming links; shouting")
    );
    alice
        .send_text(&channel, &format!("/warnings clear {alice_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        "only a moderator may clear warnings"
    );
    alice
        .send_text(&channel, &format!("/warnings forget {alice_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        "option \"action\" must be one of list, clear\nusage: /warnings <action> <user>"
    );

    // Not a command: the event loop answers it, and warns.
    alice
        .send_text(&channel, "free stuff at https://spam.example/win")
        .await
        .unwrap();
    assert_eq!(said(alice, bot).await, "no links to spam.example here");
    alice
        .send_text(&channel, &format!("/warnings list {alice_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("{alice_id}: spamming links; shouting; spam link")
    );

    // An optional option: yourself when left out.
    alice.send_text(&channel, "/userinfo").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("{alice_id}: member, 3 warnings")
    );
    alice
        .send_text(&channel, &format!("/userinfo {bob_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("{bob_id}: moderator, 0 warnings")
    );
    // The same command from the menu (the structured lane).
    alice
        .invoke(&channel, bot, &Userinfo { user: None })
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("{alice_id}: member, 3 warnings")
    );
    bob.send_text(&channel, &format!("/warnings clear {alice_id}"))
        .await
        .unwrap();
    assert_eq!(
        said(alice, bot).await,
        format!("cleared 3 warnings of {alice_id}")
    );

    // A first answer, then the REST call's result: `ctx.reply` answers the
    // invocation, `ctx.say` posts a plain message.
    let asked = alice.send_text(&channel, "/files").await.unwrap();
    let looking = answer(alice, bot).await;
    assert_eq!(looking.content, "looking…");
    assert_eq!(looking.reply_to, Some(asked));
    let files = answer(alice, bot).await;
    assert_eq!(files.content, "files: rules.txt (7 bytes)");
    assert_eq!(files.reply_to, None);

    // The bot's own failure: the hook's sentence, not the error's text.
    bob.send_text(&channel, "/audit").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        "something went wrong with audit; the moderators were told"
    );

    // Help lists every command with its usage, the uncategorised first,
    // then by category in the order registered; and explains one.
    alice.send_text(&channel, "/help").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        "Commands (send /help <command> for details):\n\
         /help [command (up to 32 characters)] - List the commands, or explain one\n\
         /ping - Check that the bot is alive\n\
         \n\
         Fun:\n\
         /roll <count (1 to 20)> [sides] - Roll some dice (aliases: /r, /dice)\n\
         \n\
         Moderation:\n\
         /audit - Read a server's audit log\n\
         /userinfo [user] - Show what the bot knows about a user\n\
         /warn <user> <reason (up to 200 characters)> - Warn a user\n\
         /warnings <action> <user> - List or clear a user's warnings\n\
         \n\
         Info:\n\
         /files - List the files of the service\n\
         /stats - Show the bot's counters\n\
         \n\
         Owner:\n\
         /shutdown - Stop the bot\n\
         \n\
         Moderators: ask them in #help."
    );
    alice.send_text(&channel, "/help r").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        "Command roll: Roll some dice\n\
         usage: /roll <count (1 to 20)> [sides]\n\
         aliases: /r, /dice\n\
         - count (integer, required, 1 to 20): How many dice\n\
         - sides (integer, one of 6, 20): Sides per die"
    );
    alice.send_text(&channel, "/help warnings").await.unwrap();
    assert_eq!(
        said(alice, bot).await,
        "Command warnings: List or clear a user's warnings\n\
         usage: /warnings <action> <user>\n\
         - action (string, required, one of list, clear): list or clear\n\
         - user (user, required): Whose warnings"
    );

    // Shared state, read by a handler and from outside; a global
    // cooldown, which the owner's invocations neither wait for nor start.
    carol.send_text(&channel, "/stats").await.unwrap();
    let stats = said(alice, bot).await;
    alice.send_text(&channel, "/stats").await.unwrap();
    assert_eq!(said(alice, bot).await, stats, "carol's did not start it");
    carol.send_text(&channel, "/stats").await.unwrap();
    assert_eq!(said(alice, bot).await, stats, "alice's did, carol skips it");
    alice.send_text(&channel, "/stats").await.unwrap();
    let again = said(alice, bot).await;
    assert!(again.starts_with("slow down: stats again in "), "{again}");
    let failures = client.data().failures.lock().unwrap().clone();
    assert_eq!(
        stats,
        format!("9 commands run, {} failures", failures.len() - 1)
    );
    // On the text lane a wrong choice or a missing option is a `Parse`
    // failure; only a bound (or a typed field's range) is `Arguments`.
    assert_eq!(
        failures,
        [
            "roll: arguments",
            "roll: parse",
            "roll: cooldown",
            "warn: check",
            "warn: parse",
            "warnings: check",
            "warnings: parse",
            "audit: handler",
            "stats: cooldown",
        ]
    );

    // Graceful shutdown from a command: the answer, then the session ends.
    alice.send_text(&channel, "/shutdown").await.unwrap();
    assert_eq!(said(alice, bot).await, "shutdown is for the bot's owner");
    // A moderator is no owner.
    bob.send_text(&channel, "/shutdown").await.unwrap();
    assert_eq!(said(alice, bot).await, "shutdown is for the bot's owner");
    carol.send_text(&channel, "/shutdown").await.unwrap();
    assert_eq!(said(alice, bot).await, "shutting down");
    // poise's `shard_manager().shutdown_all()`: the event loop of `main`
    // ends, although `main` still holds the client.
    tokio::time::timeout(WAIT, async {
        loop {
            if let Err(EventRecvError::Closed) = events.recv().await {
                break;
            }
        }
    })
    .await
    .expect("the closed bot's events end");
    // The auto-moderation loop, holding a clone of the client, ends too.
    let spam = tokio::time::timeout(WAIT, automod).await;
    assert_eq!(spam.expect("the event loop ends").unwrap(), 1);
    // As `main` would after its loop; closing twice is harmless.
    client.close().await.unwrap();
    tokio::time::timeout(WAIT, async {
        while !client.data().stopped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the handler's own close returns");
    alice.send_text(&channel, "/ping").await.unwrap();
    assert!(alice
        .wait_for_message(|m| m.author_id == bot, Duration::from_millis(500))
        .await
        .is_err());
}
