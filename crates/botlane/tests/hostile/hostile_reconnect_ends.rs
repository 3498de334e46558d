//! A reconnect whose connection ends before its `ready`: what the service
//! pushed on it before that `ready` (a key, a command) is pushed once and
//! never again, so it waits for the next session's `ready`, as a failed
//! login's pushes do, and is dispatched after `Reconnected` with the new
//! session's channels and keys, its answer going out on the new session.
//! A reconnect whose `ready` came but was not applied before it ended is
//! no session either. When no session will come (the token is refused,
//! on a reconnect or on a retried first login), what waited is let go:
//! the messages dropped and counted. Over real sockets on loopback,
//! against a fake service (`tests/peer`).

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::crypto::ChannelKey;
use botlane::{ClientError, CommandContext, CommandDeclaration, Event};
use peer::busy::{
    channel_ids, client_with_dispatch_busy, first_session_keeping_dispatch_busy, message_push_in,
};
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
/// `/echo` `id` in `c2` sealed with it; then the end, as `ends` says.
async fn ending_before_its_ready(mut ws: peer::Ws, n: usize, ends: Ends, id: &str) {
    let Some(public_key) = peer::accept_login(&mut ws, n, None).await else {
        return;
    };
    let (key, key_push) = peer::channel_key_for(&public_key, "c2");
    send(&mut ws, key_push).await;
    send(&mut ws, message_push_in(&key, "c2", id, "/echo")).await;
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

/// The events `events` receives, in words, until `last`.
async fn events_until(
    client: &botlane::Client,
    events: &mut botlane::Events,
    last: &str,
) -> Vec<String> {
    let mut seen = Vec::new();
    tokio::time::timeout(WAIT, async {
        while seen.last().map(String::as_str) != Some(last) {
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
    .unwrap_or_else(|_| panic!("{last} comes; so far {seen:?}"));
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
                    2 => ending_before_its_ready(ws, n, ends, "m2").await,
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
        events_until(&client, &mut events, "message m2").await,
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
                1 => ending_before_its_ready(ws, n, Ends::AfterTheMenu, "m2").await,
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
        events_until(&client, &mut events, "message m2").await,
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
                    2 => ending_before_its_ready(ws, n, Ends::BeforeTheMenu, "m2").await,
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

/// Connection `n`: the login answered with a `ready` listing `c1`, then a
/// new key for `c1` and an `/echo` `m3` in `c1` sealed with it, the menu
/// answered, and the close.
async fn ending_after_its_ready(mut ws: peer::Ws, n: usize) {
    let Some(public_key) = peer::accept_login(&mut ws, n, Some(&["c1"])).await else {
        return;
    };
    let (key, key_push) = peer::channel_key_for(&public_key, "c1");
    send(&mut ws, key_push).await;
    send(&mut ws, message_push_in(&key, "c1", "m3", "/echo")).await;
    if peer::answer_menu(&mut ws, 0).await {
        let _ = ws.close(None).await;
    }
}

/// A reconnect whose `ready` came, but still waited for a busy dispatch
/// when its connection ended, is no session: a failed attempt, its
/// `ready` never applied. What followed that `ready` (a key, an `/echo`
/// `m3`), and what a failed login before it left behind it (a key for
/// `c2`, an `/echo` `m2x`), wait for the next session's `ready`: after
/// `Reconnected`, opened with the keys they came with, and answered on
/// the next session. The dead connection's `ready` used to be applied in
/// wire order, announcing nothing: `m3` came before `Reconnected` (its
/// answer went out on the next connection before its `Reconnected`), and
/// `m2x`, whose channel that `ready` did not list, lost its key and was
/// never opened.
#[tokio::test]
async fn what_follows_a_ready_not_applied_before_its_connection_ended_waits_for_the_next() {
    let kill = Arc::new(Notify::new());
    let (sends_tx, mut sends) = mpsc::unbounded_channel();
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let (kill, sends_tx) = (kill.clone(), sends_tx.clone());
            async move {
                if n == 1 {
                    return first_session_keeping_dispatch_busy(tcp, kill).await;
                }
                let ws = upgrade(tcp).await;
                match n {
                    2 => ending_before_its_ready(ws, n, Ends::BeforeTheMenu, "m2x").await,
                    3 => ending_after_its_ready(ws, n).await,
                    _ => next_session(ws, n, sends_tx).await,
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    let runs = register_echo(&client);

    kill.notify_one();
    // The fourth connection logged in once the third was given up on,
    // while dispatch still held the first session's `m1`.
    peer::eventually("the fourth connection is up", || {
        client.stats().sessions == 3
    })
    .await;
    peer::eventually("m2, m2x and m3 wait for dispatch", || {
        client.stats().push_queue_len == 3
    })
    .await;
    slow.gate.send_replace(true);
    assert_eq!(
        events_until(&client, &mut events, "message m3").await,
        [
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "reconnect failed",
            "reconnect failed",
            "message m2",
            "reconnected c1,c2",
            "message m2x",
            "message m3",
        ]
    );
    let mut answered = Vec::new();
    for _ in 0..2 {
        let sent = tokio::time::timeout(WAIT, sends.recv())
            .await
            .expect("/echo's answers reach the fourth connection")
            .unwrap();
        answered.push(format!("{} {}", sent["channel_id"], sent["reply_to"]));
    }
    answered.sort();
    assert_eq!(answered, [r#""c1" "m3""#, r#""c2" "m2x""#]);
    client.close().await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2, "/echo ran twice");
}

/// A first login retried after a failed attempt (the connection closed
/// before the menu's reply, after a key and an `/echo` `m1` were pushed),
/// then refused for good (-6): `login` returns `LoginRefused`, and `m1`
/// is dropped and counted in `pushes_dropped`, as when a reconnect is
/// refused. It used to wait in the push queue, uncounted, until close.
/// `login` may be called again: that is a new session, in which `m1`
/// does not come back and `/echo` never runs, while the key, which the
/// service pushes once, is kept for that session's `ready` (`m3`, sealed
/// with it, opens).
#[tokio::test]
async fn messages_a_failed_first_login_left_are_dropped_when_its_retry_is_refused() {
    let key = ChannelKey::generate().unwrap();
    let (addr, _) = serve(move |tcp, n| {
        let key = key.clone();
        async move {
            let mut ws = upgrade(tcp).await;
            match n {
                1 => {
                    let Some(public_key) = peer::accept_login(&mut ws, n, None).await else {
                        return;
                    };
                    send(&mut ws, peer::key_push(&key, &public_key, "c1")).await;
                    send(&mut ws, message_push_in(&key, "c1", "m1", "/echo")).await;
                    if peer::read_menu(&mut ws).await.is_some() {
                        let _ = ws.close(None).await;
                    }
                }
                2 => {
                    if peer::read_login(&mut ws).await.is_some() {
                        send(&mut ws, r#"{"op":10,"d":{"code":-6}}"#).await;
                        while next_frame(&mut ws).await.is_some() {}
                    }
                }
                _ => {
                    if peer::login(&mut ws, n, &["c1"]).await.is_some() {
                        send(&mut ws, message_push_in(&key, "c1", "m3", "hello")).await;
                        behave(&mut ws).await;
                    }
                }
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // One attempt per login: the application tries again here, not the client.
    let once = peer::patient(peer::options(addr, &dir)).login_deadline(Duration::ZERO);
    let client = botlane::Client::new(once).unwrap();
    let runs = register_echo(&client);
    let mut events = client.events();
    let login = || async {
        tokio::time::timeout(WAIT, client.login())
            .await
            .expect("the login finishes")
    };

    let first = login().await;
    assert!(
        matches!(first, Err(ref e) if !matches!(e, ClientError::LoginRefused)),
        "the first attempt fails: {first:?}"
    );
    let stats = client.stats();
    assert_eq!(
        (stats.push_queue_len, stats.pushes_dropped),
        (1, 0),
        "m1 held"
    );
    assert!(matches!(login().await, Err(ClientError::LoginRefused)));
    let stats = client.stats();
    assert_eq!((stats.push_queue_len, stats.pushes_dropped), (0, 1));

    login().await.unwrap();
    assert_eq!(
        events_until(&client, &mut events, "message m3").await,
        ["ready", "message m3"]
    );
    client.close().await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0, "/echo never ran");
}
