//! A reconnect whose connection ends before its `ready`: what the service
//! pushed on it before that `ready` (a key, a command) is pushed once and
//! never again, so it waits for the next session's `ready`, as a failed
//! login's pushes do, and is dispatched after `Reconnected` with the new
//! session's channels and keys, its answer going out on the new session.
//! When no session will come (the token is refused), what waited is let
//! go: the messages dropped and counted. Over real sockets on loopback,
//! against a fake service (`tests/peer`).

#![allow(clippy::unwrap_used)]

mod peer;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use botlane::{CommandContext, CommandDeclaration, Event};
use peer::busy::{channel_ids, message_push_in};
use peer::{behave, next_frame, send, serve, upgrade, WAIT};
use tokio::sync::{mpsc, Notify};

/// Where the second connection ends.
#[derive(Clone, Copy)]
enum Ends {
    /// Once the menu is answered: the login is over, the `ready` never came.
    AfterTheMenu,
    /// Before the menu's reply: a failed login.
    BeforeTheMenu,
}

/// Connection `n`: the login answered, then, before any `ready`, a new key
/// for `c2` (a channel only the next session's `ready` lists) and an
/// `/echo` `m2` in `c2` sealed with it; then the end, as `ends` says.
async fn ending_before_its_ready(mut ws: peer::Ws, n: usize, ends: Ends) {
    let Some(public_key) = peer::accept_login(&mut ws, n, None).await else {
        return;
    };
    let (key, key_push) = peer::channel_key_for(&public_key, "c2");
    send(&mut ws, key_push).await;
    send(&mut ws, message_push_in(&key, "c2", "m2", "/echo")).await;
    if peer::read_menu(&mut ws).await.is_none() {
        return;
    }
    if matches!(ends, Ends::AfterTheMenu) {
        send(&mut ws, r#"{"op":20,"d":{"code":0}}"#).await;
    }
    let _ = ws.close(None).await;
}

/// Connection `n`, logged in with `c1` and `c2`; then every send (op 30)
/// is reported on `sends` and answered, as every other request.
async fn next_session(mut ws: peer::Ws, n: usize, sends: mpsc::UnboundedSender<serde_json::Value>) {
    if peer::login(&mut ws, n, &["c1", "c2"]).await.is_none() {
        return;
    }
    while let Some(frame) = next_frame(&mut ws).await {
        let op = frame["op"].as_u64().unwrap();
        if op == 30 {
            let _ = sends.send(frame["d"].clone());
        }
        let reply = format!(r#"{{"op":{op},"d":{{"code":0,"message_id":"r3"}}}}"#);
        if !send(&mut ws, reply).await {
            return;
        }
    }
}

/// `/echo`, which counts its runs and replies `echo`.
fn register_echo(client: &botlane::Client) -> Arc<AtomicUsize> {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    client
        .commands()
        .register(
            CommandDeclaration::new("echo", "Replies"),
            move |ctx: CommandContext| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move { ctx.reply("echo").await.map(|_| ()) }
            },
        )
        .unwrap();
    runs
}

/// The events `events` receives, in words, until `m2`'s.
async fn events_until_m2(client: &botlane::Client, events: &mut botlane::Events) -> Vec<String> {
    let mut seen = Vec::new();
    tokio::time::timeout(WAIT, async {
        while seen.last().map(String::as_str) != Some("message m2") {
            seen.push(match events.recv().await.unwrap() {
                Event::Ready { .. } => "ready".to_owned(),
                Event::Message(m) => format!("message {}", m.id),
                Event::Disconnected { .. } => "disconnected".to_owned(),
                Event::ReconnectFailed { .. } => "reconnect failed".to_owned(),
                Event::Reconnected => format!("reconnected {}", channel_ids(client).join(",")),
                other => format!("{other:?}"),
            });
        }
    })
    .await
    .unwrap_or_else(|_| panic!("m2 is dispatched; so far {seen:?}"));
    seen
}

/// A first session (the bot in `c1`) that lasts until `kill`, a second
/// connection that ends before its `ready` as `ends` says, and a third
/// that logs in with `c1` and `c2`: `m2`, pushed on the second, opens with
/// the key pushed there (kept once the third session's `ready` lists
/// `c2`), after `Reconnected`, and `/echo` runs once and answers on the
/// third connection.
async fn pushes_of_a_connection_that_ends_wait_for_the_next_ready(ends: Ends) {
    let kill = Arc::new(Notify::new());
    let (sends_tx, mut sends) = mpsc::unbounded_channel();
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let (kill, sends_tx) = (kill.clone(), sends_tx.clone());
            async move {
                let mut ws = upgrade(tcp).await;
                match n {
                    1 => {
                        if peer::login(&mut ws, n, &["c1"]).await.is_some() {
                            tokio::select! {
                                () = behave(&mut ws) => {}
                                () = kill.notified() => {}
                            }
                        }
                    }
                    2 => ending_before_its_ready(ws, n, ends).await,
                    _ => next_session(ws, n, sends_tx).await,
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let runs = register_echo(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();

    kill.notify_one();
    assert_eq!(
        events_until_m2(&client, &mut events).await,
        [
            "ready",
            "disconnected",
            "reconnect failed",
            "reconnected c1,c2",
            "message m2"
        ]
    );
    let sent = tokio::time::timeout(WAIT, sends.recv())
        .await
        .expect("/echo's answer reaches the third connection")
        .unwrap();
    assert_eq!(
        (&sent["channel_id"], &sent["reply_to"]),
        (&serde_json::json!("c2"), &serde_json::json!("m2"))
    );
    client.close().await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1, "/echo ran once");
    assert!(sends.try_recv().is_err(), "one answer");
    // The case is the one named: the second login over, or failed.
    let sessions = match ends {
        Ends::AfterTheMenu => 3,
        Ends::BeforeTheMenu => 2,
    };
    assert_eq!(client.stats().sessions, sessions);
}

/// The second connection's login is over (the menu answered) when it
/// ends, before its `ready`. Its pushes used to be dispatched as it ended,
/// with the old session's state: the key, for `c2` which the old session
/// did not list, was refused, and `m2` was not opened (nor answered).
#[tokio::test]
async fn pushes_of_a_reconnect_that_ends_before_its_ready_wait_for_the_next_ready() {
    pushes_of_a_connection_that_ends_wait_for_the_next_ready(Ends::AfterTheMenu).await;
}

/// The same when the second connection ends before the menu's reply: a
/// failed login.
#[tokio::test]
async fn pushes_of_a_reconnect_that_ends_during_its_login_wait_for_the_next_ready() {
    pushes_of_a_connection_that_ends_wait_for_the_next_ready(Ends::BeforeTheMenu).await;
}

/// The first connection ends the same way, its login over and no `ready`
/// come: `Ready` is sent without it (before `Disconnected`, listing no
/// channels), and what it pushed waits for the next session's `ready`:
/// `m2` opens after `Reconnected`, and `/echo` answers on the second
/// connection. It used to be dispatched with `Ready`, with no channels
/// listed: the key was refused and `m2` was not opened.
#[tokio::test]
async fn pushes_of_a_first_connection_that_ends_before_its_ready_wait_for_the_next_ready() {
    let (sends_tx, mut sends) = mpsc::unbounded_channel();
    let (addr, _) = serve(move |tcp, n| {
        let sends_tx = sends_tx.clone();
        async move {
            let ws = upgrade(tcp).await;
            match n {
                1 => ending_before_its_ready(ws, n, Ends::AfterTheMenu).await,
                _ => next_session(ws, n, sends_tx).await,
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let runs = register_echo(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    assert_eq!(
        events_until_m2(&client, &mut events).await,
        ["ready", "disconnected", "reconnected c1,c2", "message m2"]
    );
    let sent = tokio::time::timeout(WAIT, sends.recv())
        .await
        .expect("/echo's answer reaches the second connection")
        .unwrap();
    assert_eq!(sent["reply_to"], serde_json::json!("m2"));
    client.close().await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1, "/echo ran once");
}

/// When the next login is refused for good (-6), no session will come to
/// take what the second connection (a failed login) left waiting: `m2` is
/// dropped and counted in `pushes_dropped`, nothing waits in the push
/// queue, and `/echo` never runs. It used to wait in memory until
/// shutdown.
#[tokio::test]
async fn what_waits_for_a_session_that_will_not_come_is_dropped_and_counted() {
    let kill = Arc::new(Notify::new());
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let kill = kill.clone();
            async move {
                let mut ws = upgrade(tcp).await;
                match n {
                    1 => {
                        if peer::login(&mut ws, n, &["c1"]).await.is_some() {
                            tokio::select! {
                                () = behave(&mut ws) => {}
                                () = kill.notified() => {}
                            }
                        }
                    }
                    2 => ending_before_its_ready(ws, n, Ends::BeforeTheMenu).await,
                    _ => {
                        if peer::read_login(&mut ws).await.is_some() {
                            send(&mut ws, r#"{"op":10,"d":{"code":-6}}"#).await;
                            while next_frame(&mut ws).await.is_some() {}
                        }
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let runs = register_echo(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();

    kill.notify_one();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Event::Disconnected {
                will_reconnect: false,
                ..
            } = events.recv().await.unwrap()
            {
                return;
            }
        }
    })
    .await
    .expect("the refused login ends the session for good");
    let stats = client.stats();
    assert_eq!((stats.push_queue_len, stats.pushes_dropped), (0, 1));
    client.close().await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0, "/echo never ran");
}
