//! Crowds the client keeps state for: a service that pushes invocations
//! from more distinct users than the cooldown and answer-limit tables
//! hold, and more events than a subscriber that does not read may keep.
//! Each table stays at its documented size and nobody is evicted to make
//! room; the lagging subscriber loses the oldest events, counted. Over
//! real sockets, against a fake service (`tests/peer`).

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botlane::framework::{
    Answered, CommandFailure, CommandSettings, Cooldown, CooldownError, OnError, UserError,
    ANSWER_LIMIT_CAPACITY, DEFAULT_COOLDOWN_CAPACITY,
};

use botlane::{
    Client, ClientOptions, CommandContext, CommandDeclaration, Event, EventRecvError, Events,
};
use futures_util::{SinkExt, StreamExt};
use peer::{serve, WAIT};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

/// Longer than any test: a cooldown or an answer budget started in the
/// crowd never ends during it.
const HOUR: Duration = Duration::from_secs(3600);

/// A service whose first session logs the bot in to `c1`, shares the
/// channel key, then pushes one message per `(author, text)` of `crowd`,
/// sealed with that key, while it answers every request (counting the
/// sends, op 30, in the returned counter). Later sessions behave.
async fn crowd(crowd: Vec<(String, &'static str)>) -> (SocketAddr, Arc<AtomicUsize>) {
    let crowd = Arc::new(crowd);
    let sends = Arc::new(AtomicUsize::new(0));
    let counted = sends.clone();
    let (addr, _) = serve(move |tcp, n| {
        let (crowd, sends) = (crowd.clone(), sends.clone());
        async move {
            let Some((ws, key, key_push)) = peer::first_session_with_key(tcp, n, "c1").await else {
                return;
            };
            let (mut tx, mut rx) = ws.split();
            let _ = tx.send(Message::text(key_push)).await;
            let (replies, mut outgoing) = mpsc::unbounded_channel::<String>();
            tokio::spawn(async move {
                while let Some(Ok(Message::Text(text))) = rx.next().await {
                    let frame: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
                    let op = frame["op"].as_u64().unwrap();
                    if op == 30 {
                        sends.fetch_add(1, Ordering::SeqCst);
                    }
                    let _ = replies.send(format!(r#"{{"op":{op},"d":{{"code":0}}}}"#));
                }
            });
            // The crowd says few distinct things: each is sealed once.
            let mut sealed = std::collections::HashMap::new();
            for (i, (author, text)) in crowd.iter().enumerate() {
                while let Ok(reply) = outgoing.try_recv() {
                    let _ = tx.feed(Message::text(reply)).await;
                }
                let content = sealed
                    .entry(*text)
                    .or_insert_with(|| key.seal(text.as_bytes(), b"c1").unwrap());
                let push = format!(
                    r#"{{"op":32,"d":{{"message":{{"id":"m{i}","channel_id":"c1","author_id":"{author}","content":"{content}","created_at":1}}}}}}"#
                );
                if tx.send(Message::text(push)).await.is_err() {
                    return;
                }
            }
            while let Some(reply) = outgoing.recv().await {
                if tx.send(Message::text(reply)).await.is_err() {
                    return;
                }
            }
        }
    })
    .await;
    (addr, counted)
}

/// Options for a crowd: every push may wait (none is dropped, so the
/// counts below are exact), and no heartbeat or idle limit cuts a session
/// that a debug build takes seconds to work through.
fn crowd_options(addr: SocketAddr, dir: &tempfile::TempDir) -> ClientOptions {
    peer::options(addr, dir)
        .heartbeat_interval(Duration::from_secs(5))
        .idle_timeout(Duration::from_secs(20))
        .request_timeout(Duration::from_secs(30))
        .push_queue_capacity(20_000)
        .push_queue_bytes(64 * 1024 * 1024)
}

/// `count` users `u0`, `u1`… each saying `text` once, then a newcomer
/// (`u{count}`) and `u0` again.
fn distinct_users_then_newcomer_and_first(
    count: usize,
    text: &'static str,
) -> Vec<(String, &'static str)> {
    (0..=count)
        .map(|i| (format!("u{i}"), text))
        .chain([("u0".to_owned(), text)])
        .collect()
}

/// How long a crowd of ten thousand may take on a loaded 2-core CI.
const CROWD_WAIT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_cooldown_table_refuses_a_newcomer_and_evicts_nobody() {
    let users = DEFAULT_COOLDOWN_CAPACITY;
    let (addr, _) = crowd(distinct_users_then_newcomer_and_first(users, "/cool")).await;
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(crowd_options(addr, &dir)).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let refusals = Arc::new(Mutex::new(Vec::<(String, &'static str)>::new()));
    let seen = refusals.clone();
    let settings = CommandSettings::new()
        .cooldown(Cooldown::per_user(HOUR))
        .on_error(OnError::new(move |failure: CommandFailure| {
            let cooldown = failure
                .error()
                .error
                .as_ref()
                .and_then(|e| e.downcast_ref::<CooldownError>());
            let kind = match cooldown {
                Some(CooldownError::Busy { .. }) => "busy",
                Some(CooldownError::Active { .. }) => "active",
                _ => "other",
            };
            seen.lock()
                .unwrap()
                .push((failure.error().message.author_id.clone(), kind));
            async {}
        }));
    client
        .commands()
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("cool", "Once an hour per user"),
                    settings,
                    move |_ctx: CommandContext| {
                        counter.fetch_add(1, Ordering::SeqCst);
                        async { Ok::<(), std::io::Error>(()) }
                    },
                )
                .map(drop)
        })
        .unwrap();
    tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap();
    peer::eventually_within(CROWD_WAIT, "the crowd's invocations", || {
        ran.load(Ordering::SeqCst) + refusals.lock().unwrap().len() == users + 2
    })
    .await;
    // The table held exactly its capacity: one of the 10,001 distinct users
    // (the newcomer, unless handlers raced it in) was refused as busy, and
    // u0, whose cooldown was not evicted to make room, is still cooling down.
    assert_eq!(ran.load(Ordering::SeqCst), users);
    let mut refusals = refusals.lock().unwrap().clone();
    refusals.sort();
    assert_eq!(
        refusals.iter().filter(|(_, kind)| *kind == "busy").count(),
        1,
        "{refusals:?}"
    );
    assert!(
        refusals.contains(&("u0".to_owned(), "active")),
        "{refusals:?}"
    );
    assert_eq!(client.stats().pushes_dropped, 0);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_answer_limit_table_keeps_newcomers_silent() {
    let users = ANSWER_LIMIT_CAPACITY;
    let (addr, sends) = crowd(distinct_users_then_newcomer_and_first(users, "/fail")).await;
    let dir = tempfile::tempdir().unwrap();
    // One answer per user and channel per hour: every pair answered once
    // stays in the table for the whole test.
    let client = Client::new(crowd_options(addr, &dir).error_answer_limit(1, HOUR)).unwrap();
    let answered = Arc::new(Mutex::new(Vec::<Answered>::new()));
    let seen = answered.clone();
    client.on_error(OnError::new(move |failure: CommandFailure| {
        let seen = seen.clone();
        async move {
            let answer = failure.answer("no").await.unwrap();
            seen.lock().unwrap().push(answer);
        }
    }));
    client
        .commands()
        .register(
            CommandDeclaration::new("fail", "Always fails"),
            |_ctx: CommandContext| async { Err::<(), _>(UserError::new("no")) },
        )
        .unwrap();
    tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap();
    peer::eventually_within(CROWD_WAIT, "the crowd's answers", || {
        answered.lock().unwrap().len() == users + 2
    })
    .await;
    let answered = answered.lock().unwrap().clone();
    let sent = answered.iter().filter(|a| **a == Answered::Sent).count();
    let limited = answered
        .iter()
        .filter(|a| **a == Answered::RateLimited)
        .count();
    // 10,001 distinct pairs and u0 twice: the table admits its capacity,
    // the pair left out and u0's second answer stay silent.
    assert_eq!((sent, limited), (users, 2));
    peer::eventually("the answers to reach the service", || {
        sends.load(Ordering::SeqCst) >= users
    })
    .await;
    assert_eq!(
        sends.load(Ordering::SeqCst),
        users,
        "no answer past the table"
    );
    assert_eq!(client.stats().pushes_dropped, 0);
    client.close().await.unwrap();
}

/// A client whose first session is served `lines` and then `/done`, with a
/// subscriber that reads nothing: returned once `/done` has run. Pushes
/// are dispatched in order, so every message event before it has been
/// sent to the subscriber by then.
async fn unread_until_done(
    mut lines: Vec<(String, &'static str)>,
    dir: &tempfile::TempDir,
) -> (Client, botlane::Events) {
    lines.push(("u1".to_owned(), "/done"));
    let (addr, _) = crowd(lines).await;
    let client = Client::new(crowd_options(addr, dir)).unwrap();
    let (done_tx, mut done) = mpsc::channel::<()>(1);
    client
        .commands()
        .register(
            CommandDeclaration::new("done", "The last push"),
            move |_ctx: CommandContext| {
                let done_tx = done_tx.clone();
                async move {
                    let _ = done_tx.send(()).await;
                    Ok::<(), std::io::Error>(())
                }
            },
        )
        .unwrap();
    // Subscribed before login (the pushes start right after it): it is
    // sent `Ready`, then one event per message.
    let idle = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(CROWD_WAIT, done.recv())
        .await
        .unwrap()
        .unwrap();
    (client, idle)
}

#[tokio::test]
async fn a_subscriber_that_does_not_read_keeps_the_newest_events_and_counts_the_rest() {
    let plain = 3_000;
    let lines: Vec<(String, &'static str)> =
        (0..plain).map(|_| ("u1".to_owned(), "hello")).collect();
    let dir = tempfile::tempdir().unwrap();
    let (client, mut idle) = unread_until_done(lines, &dir).await;
    assert_eq!(idle.len(), Events::CAPACITY);
    let total = plain + 1;
    let missed = u64::try_from(1 + total - Events::CAPACITY).unwrap();
    assert_eq!(
        idle.recv().await.unwrap_err(),
        EventRecvError::Lagged(missed)
    );
    for i in total - Events::CAPACITY..total {
        match idle.recv().await.unwrap() {
            Event::Message(message) => assert_eq!(message.id, format!("m{i}")),
            other => panic!("{other:?}"),
        }
    }
    assert!(idle.try_recv().unwrap().is_none());
    client.close().await.unwrap();
}

/// Large messages for a subscriber that does not read: it holds the
/// newest that fit in `Events::MAX_BYTES`, not `Events::CAPACITY` of them (which
/// would be a gigabyte of plaintext for messages of a frame each), and
/// the rest are counted as missed.
#[tokio::test]
async fn a_subscriber_that_does_not_read_holds_at_most_event_bytes_of_large_messages() {
    const LARGE: usize = 512 * 1024;
    let large: &'static str = Box::leak("x".repeat(LARGE).into_boxed_str());
    let count = 3 * Events::MAX_BYTES / (2 * LARGE);
    let lines: Vec<(String, &'static str)> = (0..count).map(|_| ("u1".to_owned(), large)).collect();
    let dir = tempfile::tempdir().unwrap();
    let (client, mut idle) = unread_until_done(lines, &dir).await;
    assert_eq!(client.stats().pushes_dropped, 0, "every message dispatched");

    let held = idle.len();
    let bytes = idle.unread_bytes();
    assert!(bytes <= Events::MAX_BYTES, "{bytes} bytes held");
    assert!(
        bytes + LARGE > Events::MAX_BYTES,
        "only what did not fit was dropped: {held} events of {bytes} bytes"
    );
    assert!(held < count, "{held} of {count} large messages held");
    // `Ready`, the large messages and `/done` were sent; the oldest missed.
    let total = 1 + count + 1;
    let missed = u64::try_from(total - held).unwrap();
    assert_eq!(
        idle.recv().await.unwrap_err(),
        EventRecvError::Lagged(missed)
    );
    for i in count + 1 - held..=count {
        match idle.recv().await.unwrap() {
            Event::Message(message) => assert_eq!(message.id, format!("m{i}")),
            other => panic!("{other:?}"),
        }
    }
    assert!(idle.try_recv().unwrap().is_none());
    assert_eq!(idle.unread_bytes(), 0, "reading gives the bytes back");
    client.close().await.unwrap();
}
