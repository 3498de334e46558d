//! Many bot sessions in one process (issue 13): 200 bots, each with a
//! channel of its own shared with one human, log in to one in-process
//! devserver over loopback; the human invokes `/ping` once in every channel
//! and every bot answers. Counts only: every bot logged in once, ran its
//! handler once, and its answer reached the human in its own channel. The
//! time bounds are there so that a hang fails; no test asserts a time.
//! The 1,000-bot run with its figures is `benches/scale.rs`.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{DevServer, DevServerConfig, TestUser};
use futures_util::StreamExt;

const BOTS: usize = 200;
/// Logins and key shares in flight at once: under the devserver's pre-login
/// connection pool.
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
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
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
    let dir = tempfile::tempdir().unwrap();

    let logins = futures_util::stream::iter(0..BOTS)
        .map(|i| {
            let options = ClientOptions::new(
                bots[i].0.token.clone(),
                dir.path().join(format!("bot{i}.keystore")),
                url.clone(),
            );
            let count = handled[i].clone();
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
                client.login().await.unwrap();
                client
            }
        })
        .buffered(CONCURRENCY)
        .collect::<Vec<Client>>();
    let clients = tokio::time::timeout(PHASE_LIMIT, logins)
        .await
        .expect("200 bots log in");
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
