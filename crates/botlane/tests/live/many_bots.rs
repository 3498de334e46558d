//! Many bot sessions in one process (issue 13): 200 bots, each with a
//! channel of its own shared with one human, all start their login at once
//! against one in-process devserver whose pre-login pool is smaller, over
//! loopback; the human invokes `/ping` once in every channel and every bot
//! answers. Counts only: every bot logged in once (within its login
//! deadline: the first login waits out the full pool, issue 34), ran its
//! handler once, and its answer reached the human in its own channel. And
//! a bot logs in while strangers that never log in hold the pre-login pool.
//! The time bounds are there so that a hang fails; no test asserts a time.
//! The 1,000-bot run with its figures is `benches/scale.rs`.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration, Event};
use botlane_devserver::{DevServer, DevServerConfig, Limits, TestUser};
use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;

const BOTS: usize = 200;
/// The devserver's pre-login pool: smaller than the bots logging in at once.
const PRELOGIN_POOL: usize = 16;
/// Key shares and invocations in flight at once.
const CONCURRENCY: usize = 16;
/// Generous for a loaded 2-core machine running a debug build.
const PHASE_LIMIT: Duration = Duration::from_secs(240);

/// Raises the soft open-file limit to what `BOTS` sessions need here: both
/// ends of each socket live in this process, plus keystore files and
/// spares. `None` (with the limit) when the hard limit is too low.
fn raise_nofile() -> Result<(), String> {
    let need = BOTS as u64 * 4 + 256;
    match rlimit::increase_nofile_limit(need) {
        Ok(got) if got >= need => Ok(()),
        Ok(got) => Err(format!(
            "{BOTS} sessions need about {need} open files; RLIMIT_NOFILE allows {got}"
        )),
        Err(e) => Err(format!("cannot raise RLIMIT_NOFILE ({e})")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_bots_each_answer_one_invocation() {
    if let Err(reason) = raise_nofile() {
        eprintln!("SKIPPED two_hundred_bots_each_answer_one_invocation: {reason}");
        return;
    }
    let limits = Limits::default().prelogin_connections(PRELOGIN_POOL);
    let server = DevServer::start(DevServerConfig::default().limits(limits))
        .await
        .unwrap();
    let url = server.ws_url();
    let space = server.create_server("many");
    let human = server.add_user("alice");
    let mut bots = Vec::new();
    for i in 0..BOTS {
        let account = server.add_bot(&format!("bot{i}"));
        let channel = server.create_channel(&space, &format!("c{i}")).unwrap();
        server.add_member(&channel, &account.id).unwrap();
        server.add_member(&channel, &human.id).unwrap();
        bots.push((account, channel));
    }
    let handled: Vec<Arc<AtomicUsize>> = (0..BOTS).map(|_| Arc::default()).collect();
    let waited = Arc::new(AtomicUsize::new(0));
    let dir = tempfile::tempdir().unwrap();

    let logins = futures_util::stream::iter(0..BOTS)
        .map(|i| {
            let options = ClientOptions::new(
                bots[i].0.token.clone(),
                dir.path().join(format!("bot{i}.keystore")),
                url.clone(),
            );
            let (count, waited) = (handled[i].clone(), waited.clone());
            async move {
                let client = Client::new(options).unwrap();
                client
                    .commands()
                    .register(
                        CommandDeclaration::new("ping", "Answer"),
                        move |ctx: CommandContext| {
                            count.fetch_add(1, Ordering::SeqCst);
                            async move { ctx.reply("pong").await }
                        },
                    )
                    .unwrap();
                let mut events = client.events();
                client
                    .login()
                    .await
                    .expect("a bot logs in within its login deadline");
                while let Ok(Some(event)) = events.try_recv() {
                    if matches!(event, Event::LoginFailed { .. }) {
                        waited.fetch_add(1, Ordering::SeqCst);
                    }
                }
                client
            }
        })
        // All at once.
        .buffered(BOTS)
        .collect::<Vec<Client>>();
    let clients = tokio::time::timeout(PHASE_LIMIT, logins)
        .await
        .expect("200 bots log in");
    eprintln!(
        "{BOTS} bots against a pre-login pool of {PRELOGIN_POOL}: {} attempts waited out",
        waited.load(Ordering::SeqCst)
    );
    for (client, (account, channel)) in clients.iter().zip(&bots) {
        assert_eq!(client.bot_id().as_deref(), Some(account.id.as_str()));
        let channels: Vec<String> = client.channels().into_iter().map(|c| c.id).collect();
        assert_eq!(&channels, std::slice::from_ref(channel));
    }

    let alice = TestUser::connect(&url, &human.token).await.unwrap();
    let shares = futures_util::stream::iter(&bots).for_each_concurrent(CONCURRENCY, |(_, c)| {
        let alice = &alice;
        async move {
            alice.open_channel(c).await.unwrap();
        }
    });
    tokio::time::timeout(PHASE_LIMIT, shares)
        .await
        .expect("keys shared with 200 bots");
    let sends = futures_util::stream::iter(&bots).for_each_concurrent(CONCURRENCY, |(_, c)| {
        let alice = &alice;
        async move {
            alice.send_text(c, "/ping").await.unwrap();
        }
    });
    tokio::time::timeout(PHASE_LIMIT, sends)
        .await
        .expect("200 invocations sent");

    // channel -> (author, content) of every message not from alice.
    let mut answers = BTreeMap::new();
    let deadline = tokio::time::Instant::now() + PHASE_LIMIT;
    while answers.len() < BOTS {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let message = alice.next_message(left).await.unwrap_or_else(|e| {
            panic!("{} of {BOTS} answers arrived ({e})", answers.len());
        });
        if message.author_id != human.id {
            let previous = answers.insert(
                message.channel_id.clone(),
                (message.author_id, message.content),
            );
            assert!(
                previous.is_none(),
                "two answers in channel {}",
                message.channel_id
            );
        }
    }
    for (i, (account, channel)) in bots.iter().enumerate() {
        let (author, content) = &answers[channel];
        assert_eq!(author, &account.id, "the answer in c{i} is its bot's");
        assert_eq!(content, "pong");
        assert_eq!(handled[i].load(Ordering::SeqCst), 1, "bot{i} ran once");
        let stats = clients[i].stats();
        assert_eq!(stats.sessions, 1, "bot{i} logged in once");
        assert_eq!(stats.pushes_dropped, 0, "bot{i} dropped nothing");
    }
    let closes = futures_util::stream::iter(&clients)
        .for_each_concurrent(CONCURRENCY, |c| async move { c.close().await.unwrap() });
    tokio::time::timeout(PHASE_LIMIT, closes)
        .await
        .expect("200 bots close");
}

/// Connects to `url` again and again, never sending a frame: each
/// connection is held until the service ends it, and a refused upgrade is
/// tried again at once. Counts the connections the service closed to make
/// room for a newcomer.
async fn stranger(url: String, evicted: Arc<AtomicUsize>) {
    loop {
        let Ok((mut ws, _)) = tokio_tungstenite::connect_async(&url).await else {
            tokio::task::yield_now().await;
            continue;
        };
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Close(Some(frame)) = &message
                && frame.reason.starts_with("pre-login pool full")
            {
                evicted.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// Strangers as many as the pre-login pool's slots hold it, each
/// connecting again the moment the service closes it, and never log in;
/// their login timeout (2 minutes) is past the bot's login deadline
/// (1 minute). The bot's first login, refused while every stranger is
/// within its grace, waits out the `Retry-After`, takes the place of the
/// oldest, and is never evicted once its login has arrived; the strangers
/// go on holding the rest of the pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_logs_in_while_strangers_churn_through_the_prelogin_pool() {
    const POOL: usize = 8;
    let limits = Limits::default()
        .prelogin_connections(POOL)
        .prelogin_grace(Duration::from_millis(200))
        .login_timeout(Duration::from_secs(120));
    let server = DevServer::start(DevServerConfig::default().limits(limits))
        .await
        .unwrap();
    let url = server.ws_url();
    let account = server.add_bot("bot");
    let evicted = Arc::new(AtomicUsize::new(0));
    let strangers: Vec<_> = (0..POOL)
        .map(|_| tokio::spawn(stranger(url.clone(), evicted.clone())))
        .collect();
    server
        .wait_for(|s| s.prelogin_count() == POOL, PHASE_LIMIT)
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(ClientOptions::new(
        account.token.clone(),
        dir.path().join("bot.keystore"),
        url,
    ))
    .unwrap();
    tokio::time::timeout(PHASE_LIMIT, client.login())
        .await
        .expect("the login returns")
        .expect("the bot logs in within its login deadline");
    assert_eq!(client.bot_id().as_deref(), Some(account.id.as_str()));
    assert!(
        evicted.load(Ordering::SeqCst) >= 1,
        "the bot took a stranger's place"
    );
    // The strangers go on: the one put out came back and holds a slot.
    server
        .wait_for(
            |s| s.session_count() == 1 && s.prelogin_count() == POOL,
            PHASE_LIMIT,
        )
        .await
        .unwrap();
    for stranger in strangers {
        stranger.abort();
    }
    client.close().await.unwrap();
}
