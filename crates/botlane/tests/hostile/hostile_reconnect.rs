//! Across a disconnect and the reconnect after it, and around shutdown:
//! what the service is sent again (the menu), what a handler's replies
//! and dispatch still do, what a reconnect refused, answered with an error
//! (a 503's `Retry-After` waited out) or dropped at once leads to, and a
//! shutdown during the first dial or as a reconnect completes. Over real sockets on loopback, against a fake
//! service (`tests/peer`); the assertions are on structure (frames the
//! service saw, counts, errors, events).

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botlane::{CommandContext, CommandDeclaration};
use peer::busy::{
    channel_ids, client_with_dispatch_busy, client_with_dispatch_busy_and,
    first_session_keeping_dispatch_busy, message_push, message_push_in,
};
use peer::{behave, next_frame, send, serve, upgrade, WAIT};
use tokio::sync::{mpsc, Notify};

/// A command that does nothing, to change the menu with.
fn register(client: &botlane::Client, name: &str) {
    client
        .commands()
        .register(
            CommandDeclaration::new(name, "Does nothing"),
            |_ctx: CommandContext| async { Ok::<(), std::io::Error>(()) },
        )
        .unwrap();
}

/// A command registered while the reconnect's menu publish is under way
/// (after the login took its snapshot of the menu, before the session is
/// up again) is published on the new session. It used to be lost: the
/// menu task, woken by the change, found no connection and went back to
/// sleep, and the login published the menu as it was before the change.
#[tokio::test]
async fn a_command_registered_during_the_reconnect_is_published_on_the_new_session() {
    let kill = Arc::new(Notify::new());
    let (publishing_tx, mut publishing) = mpsc::channel::<()>(1);
    let (go_tx, go) = mpsc::channel::<()>(1);
    let go = Arc::new(tokio::sync::Mutex::new(go));
    // Every menu the second session received, in order.
    let menus = Arc::new(Mutex::new(Vec::<String>::new()));
    let (addr, _) = {
        let (kill, menus) = (kill.clone(), menus.clone());
        serve(move |tcp, n| {
            let (kill, menus, go) = (kill.clone(), menus.clone(), go.clone());
            let publishing_tx = publishing_tx.clone();
            async move {
                let mut ws = upgrade(tcp).await;
                if n == 1 {
                    if peer::login(&mut ws, n, &[]).await.is_some() {
                        tokio::select! {
                            () = behave(&mut ws) => {}
                            () = kill.notified() => {}
                        }
                    }
                    return;
                }
                peer::accept_login(&mut ws, n, Some(&[])).await.unwrap();
                // The menu publish of the login: held until the test says.
                let mut frame = peer::read_menu(&mut ws).await.unwrap();
                publishing_tx.send(()).await.unwrap();
                go.lock().await.recv().await.unwrap();
                loop {
                    let op = frame["op"].as_u64().unwrap();
                    if op == 20 {
                        menus.lock().unwrap().push(frame["d"]["menu"].to_string());
                    }
                    let reply = if op == 240 {
                        r#"{"op":240,"d":{"code":0,"emojis":[]}}"#.to_owned()
                    } else {
                        format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)
                    };
                    if !send(&mut ws, reply).await {
                        return;
                    }
                    match next_frame(&mut ws).await {
                        Some(next) => frame = next,
                        None => return,
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    register(&client, "first");
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    let mut events = client.events();

    kill.notify_one();
    tokio::time::timeout(WAIT, publishing.recv())
        .await
        .expect("the reconnect publishes its menu")
        .unwrap();
    register(&client, "late");
    go_tx.send(()).await.unwrap();
    tokio::time::timeout(WAIT, async {
        while !matches!(events.recv().await, Ok(botlane::Event::Reconnected)) {}
    })
    .await
    .expect("the client reconnects");

    peer::eventually("a menu with the late command on the new session", || {
        menus
            .lock()
            .unwrap()
            .iter()
            .any(|m| m.contains(r#""late""#))
    })
    .await;
    let menus = menus.lock().unwrap().clone();
    assert!(
        !menus[0].contains(r#""late""#),
        "the login's menu was taken before the registration: {menus:?}"
    );
    assert_eq!(menus.len(), 2, "published once more, not again and again");
    assert_eq!(client.stats().sessions, 2);
    client.close().await.unwrap();
}

/// Shutdown ends dispatch, also while it waits for a handler permit: the
/// invocation it holds is not started once a running handler frees one.
/// It used to be (a handler run after `shutdown()`, its answers failing),
/// and until then the dispatch task kept the session alive.
#[tokio::test]
async fn an_invocation_waiting_for_a_permit_at_shutdown_never_starts() {
    // Never killed: the first session lasts.
    let addr = serve_after_a_busy_first_session(Arc::new(Notify::new()), |_| ("c1", false)).await;
    let dir = tempfile::tempdir().unwrap();
    // `m0` runs and holds the only permit; dispatch has taken `m1` (its
    // event is out) and waits for the permit; `m2` waits in the queue.
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    assert_eq!(slow.started.load(Ordering::SeqCst), 1);

    client.shutdown();
    drop(client);
    slow.gate.send_replace(true);
    // `m0` returns and frees its permit; an invocation started with it
    // would count itself at its first poll, which the slack below gives.
    peer::eventually("the running handler returns", || {
        slow.finished.load(Ordering::SeqCst) == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        slow.started.load(Ordering::SeqCst),
        1,
        "no handler starts after shutdown"
    );
    tokio::time::timeout(WAIT, async {
        while !matches!(events.recv().await, Err(botlane::EventRecvError::Closed)) {}
    })
    .await
    .expect("the events end");
}

/// A handler that shuts its own client down frees its permit as the
/// shutdown wakes dispatch: dispatch, waiting for that permit with the
/// next invocation, found both ready and started the invocation about half
/// the time. 32 rounds, each a new client; none may start `/slow`.
#[tokio::test(flavor = "current_thread")]
async fn a_handler_that_shuts_its_client_down_lets_no_waiting_invocation_start() {
    for round in 0..32 {
        let (addr, _) = serve(|tcp, n| async move {
            let Some((mut ws, key, key_push)) = peer::first_session_with_key(tcp, n, "c1").await
            else {
                return;
            };
            send(&mut ws, key_push).await;
            send(&mut ws, message_push(&key, "m0", "/stop")).await;
            send(&mut ws, message_push(&key, "m1", "/slow")).await;
            behave(&mut ws).await;
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let options = peer::patient(peer::options(addr, &dir)).max_concurrent_handlers(1);
        let client = botlane::Client::new(options).unwrap();
        let slow = peer::register_slow(&client);
        let weak = client.downgrade();
        client
            .commands()
            .register(
                CommandDeclaration::new("stop", "Shuts the bot down"),
                move |_ctx: CommandContext| {
                    let weak = weak.clone();
                    async move {
                        // Waits, so that it runs on a task of its own with
                        // the permit while `/slow` waits for it.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        if let Some(client) = weak.upgrade() {
                            client.shutdown();
                        }
                        Ok::<(), std::io::Error>(())
                    }
                },
            )
            .unwrap();
        let mut events = client.events();
        tokio::time::timeout(WAIT, client.login())
            .await
            .expect("login finishes")
            .unwrap();
        tokio::time::timeout(WAIT, async {
            while !matches!(events.recv().await, Err(botlane::EventRecvError::Closed)) {}
        })
        .await
        .expect("the stop command shuts the client down");
        // A `/slow` started with the freed permit counts itself at its
        // first poll, on this thread: give it turns.
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            slow.started.load(Ordering::SeqCst),
            0,
            "round {round}: an invocation started after the shutdown"
        );
        slow.gate.send_replace(true);
    }
}

/// A service that, from its second connection on, answers the login with
/// `code` (and then behaves, or closes after a `-6` as the devserver
/// does) until `recover` is set; every login frame it reads is counted.
async fn refusing_reconnects(
    code: i32,
) -> (
    std::net::SocketAddr,
    Arc<std::sync::atomic::AtomicUsize>,
    Arc<std::sync::atomic::AtomicBool>,
    Arc<Notify>,
) {
    let logins = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let recover = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let kill = Arc::new(Notify::new());
    let (addr, _) = {
        let (logins, recover, kill) = (logins.clone(), recover.clone(), kill.clone());
        serve(move |tcp, n| {
            let (logins, recover, kill) = (logins.clone(), recover.clone(), kill.clone());
            async move {
                let mut ws = upgrade(tcp).await;
                if n == 1 || recover.load(Ordering::SeqCst) {
                    if peer::login(&mut ws, n, &[]).await.is_some() {
                        logins.fetch_add(1, Ordering::SeqCst);
                        tokio::select! {
                            () = behave(&mut ws) => {}
                            () = kill.notified() => {}
                        }
                    }
                    return;
                }
                if peer::read_login(&mut ws).await.is_none() {
                    return;
                }
                logins.fetch_add(1, Ordering::SeqCst);
                send(&mut ws, format!(r#"{{"op":10,"d":{{"code":{code}}}}}"#)).await;
                if code == -6 {
                    let _ = ws.close(None).await;
                } else {
                    behave(&mut ws).await;
                }
            }
        })
        .await
    };
    (addr, logins, recover, kill)
}

/// The `Event::Disconnected` (`disconnected`, or `ended` when it will not
/// reconnect), `Event::ReconnectFailed` (a run of them as one `failed`) and
/// `Event::Reconnected` received so far, in order.
fn reconnect_events(events: &mut botlane::Events) -> Vec<&'static str> {
    reconnect_events_and_failures(events).0
}

/// One failed reconnect attempt, as `Event::ReconnectFailed` reports it.
type Failure = (u32, String, Duration);

/// The reconnect events waiting in `events`, in order, a run of failed
/// attempts as one `"failed"`; and the failed attempts themselves.
fn reconnect_events_and_failures(
    events: &mut botlane::Events,
) -> (Vec<&'static str>, Vec<Failure>) {
    let (mut seen, mut failures) = (Vec::new(), Vec::new());
    while let Ok(Some(event)) = events.try_recv() {
        match event {
            botlane::Event::Disconnected {
                will_reconnect: true,
                ..
            } => seen.push("disconnected"),
            botlane::Event::Disconnected {
                will_reconnect: false,
                ..
            } => seen.push("ended"),
            botlane::Event::ReconnectFailed {
                attempt,
                reason,
                retry_in,
                ..
            } => {
                if seen.last() != Some(&"failed") {
                    seen.push("failed");
                }
                failures.push((attempt, reason, retry_in));
            }
            botlane::Event::Reconnected => seen.push("reconnected"),
            _ => {}
        }
    }
    (seen, failures)
}

/// Each failed attempt is reported once, numbered from 1 in order, with
/// `reason` in its words and a next delay within the backoff's bounds
/// (`reconnect_delays(20 ms, 320 ms)`: jittered to at least half the
/// first).
fn assert_failures(failures: &[Failure], at_least: usize, reason: &str) {
    assert!(failures.len() >= at_least, "{failures:?}");
    for (n, (attempt, said, retry_in)) in failures.iter().enumerate() {
        assert_eq!(*attempt as usize, n + 1, "{failures:?}");
        assert!(said.contains(reason), "{said}");
        assert!(
            (Duration::from_millis(10)..=Duration::from_millis(320)).contains(retry_in),
            "{retry_in:?}"
        );
    }
}

/// Once `attempts` (logins or connections the service counts) shows three
/// failed reconnects, the client keeps trying within its backoff over a
/// fixed 2 s: delays of 160–320 ms by then (`reconnect_delays(20 ms,
/// 320 ms)`: 10–20, 20–40, … doubling), so at most about 13 attempts fit;
/// with no backoff, hundreds.
async fn backs_off(attempts: &std::sync::atomic::AtomicUsize) {
    peer::eventually("three failed reconnects", || {
        attempts.load(Ordering::SeqCst) >= 4
    })
    .await;
    let before = attempts.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let tried = attempts.load(Ordering::SeqCst) - before;
    assert!(tried >= 2, "it keeps trying: {tried} attempts in 2 s");
    assert!(tried <= 15, "{tried} attempts in 2 s: no backoff");
}

/// A reconnect whose login the service answers with an error (`-2`):
/// each attempt waits its backoff delay (the dials over a fixed window
/// are counted), nothing but the one `Disconnected` is reported until the
/// service takes the login again, and then `Reconnected` once.
#[tokio::test]
async fn a_reconnect_answered_with_an_error_backs_off_and_recovers() {
    let (addr, logins, recover, kill) = refusing_reconnects(-2).await;
    let dir = tempfile::tempdir().unwrap();
    let options = peer::patient(peer::options(addr, &dir))
        .reconnect_delays(Duration::from_millis(20), Duration::from_millis(320));
    let client = peer::client(options).await;
    let mut events = client.events();
    kill.notify_one();
    backs_off(&logins).await;
    assert!(client.wait_until_connected(Duration::ZERO).await.is_err());

    recover.store(true, Ordering::SeqCst);
    client.wait_until_connected(WAIT).await.unwrap();
    let (seen, failures) = reconnect_events_and_failures(&mut events);
    assert_eq!(seen, ["disconnected", "failed", "reconnected"]);
    assert_failures(&failures, 3, "refused opcode 10 with code -2");
    assert_eq!(client.stats().sessions, 2);
    client.close().await.unwrap();
}

/// A service that, after the first session, accepts each connection and
/// closes it at once (before the upgrade): the reconnect attempts wait
/// their backoff delays (the accepts over a fixed window are counted),
/// with the one `Disconnected` reported and the session back once the
/// service is.
#[tokio::test]
async fn a_service_that_closes_every_connection_at_once_is_not_hammered() {
    let kill = Arc::new(Notify::new());
    let recover = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (addr, accepted) = {
        let (kill, recover) = (kill.clone(), recover.clone());
        serve(move |tcp, n| {
            let (kill, recover) = (kill.clone(), recover.clone());
            async move {
                if n > 1 && !recover.load(Ordering::SeqCst) {
                    drop(tcp);
                    return;
                }
                let mut ws = upgrade(tcp).await;
                if peer::login(&mut ws, n, &[]).await.is_some() {
                    tokio::select! {
                        () = behave(&mut ws) => {}
                        () = kill.notified() => {}
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let options = peer::patient(peer::options(addr, &dir))
        .reconnect_delays(Duration::from_millis(20), Duration::from_millis(320));
    let client = peer::client(options).await;
    let mut events = client.events();
    kill.notify_one();
    backs_off(&accepted).await;

    recover.store(true, Ordering::SeqCst);
    client.wait_until_connected(WAIT).await.unwrap();
    let (seen, failures) = reconnect_events_and_failures(&mut events);
    assert_eq!(seen, ["disconnected", "failed", "reconnected"]);
    // A reset ("the websocket upgrade failed (connection reset)") or an
    // end of stream ("… closed the connection during the websocket
    // upgrade"), depending on which side the drop reaches first.
    assert_failures(&failures, 3, "websocket upgrade");
    client.close().await.unwrap();
}

/// A token refused on reconnect (`-6`, then the service closes): the
/// session ends with `Disconnected { will_reconnect: false }` after the
/// first `Disconnected`, nothing is dialled after it, and what needs the
/// session says so at once with `LoginRefused`: `wait_until_connected`
/// used to wait its whole timeout (60 s here) for a session that could not
/// come back, and requests said `NotConnected`.
#[tokio::test]
async fn a_token_refused_on_reconnect_ends_the_session_and_dials_no_more() {
    let (addr, logins, _recover, kill) = refusing_reconnects(-6).await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::patient(peer::options(addr, &dir))).await;
    let mut events = client.events();
    let waiting = tokio::spawn({
        let client = client.clone();
        async move {
            peer::eventually("the session to go down", || {
                client.stats().connect_attempts >= 2
            })
            .await;
            client.wait_until_connected(Duration::from_secs(60)).await
        }
    });
    kill.notify_one();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(botlane::Event::Disconnected {
                will_reconnect: false,
                reason,
            }) = events.recv().await
            {
                return reason;
            }
        }
    })
    .await
    .expect("the session ends");
    let waited = tokio::time::timeout(WAIT, waiting)
        .await
        .expect("a wait under way ends with the refusal")
        .unwrap();
    assert!(
        matches!(waited, Err(botlane::ClientError::LoginRefused)),
        "{waited:?}"
    );
    let again = tokio::time::timeout(WAIT, client.wait_until_connected(Duration::from_secs(60)))
        .await
        .expect("a wait after the refusal ends at once");
    assert!(
        matches!(again, Err(botlane::ClientError::LoginRefused)),
        "{again:?}"
    );
    let emojis = client.fetch_emojis().await;
    assert!(
        matches!(emojis, Err(botlane::ClientError::LoginRefused)),
        "{emojis:?}"
    );
    // Many reconnect delays (20–200 ms) long.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        logins.load(Ordering::SeqCst),
        2,
        "no login after the refusal"
    );
    client.close().await.unwrap();
}

/// A handler running when the connection drops: its reply while the
/// session is down fails at once with `NotConnected` (not after the
/// request timeout, 60 s here), and once the client has reconnected its
/// next reply goes out on the new session.
#[tokio::test]
async fn a_handler_s_reply_fails_at_once_while_down_and_goes_out_once_back() {
    let kill = Arc::new(Notify::new());
    let (hold_tx, hold) = mpsc::channel::<()>(1);
    let hold = Arc::new(tokio::sync::Mutex::new(hold));
    let (sent_tx, mut sent) = mpsc::unbounded_channel::<String>();
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let (kill, hold, sent_tx) = (kill.clone(), hold.clone(), sent_tx.clone());
            async move {
                if n == 1 {
                    let Some((mut ws, key, key_push)) =
                        peer::first_session_with_key(tcp, n, "c1").await
                    else {
                        return;
                    };
                    send(&mut ws, key_push).await;
                    send(&mut ws, message_push(&key, "m0", "/relay")).await;
                    tokio::select! {
                        () = behave(&mut ws) => {}
                        () = kill.notified() => {}
                    }
                    return;
                }
                // The reconnect's login is held until the test says (the
                // request timeout is 60 s: the client waits for it).
                let mut ws = upgrade(tcp).await;
                hold.lock().await.recv().await.unwrap();
                if peer::login(&mut ws, n, &["c1"]).await.is_none() {
                    return;
                }
                while let Some(frame) = next_frame(&mut ws).await {
                    let op = frame["op"].as_u64().unwrap();
                    if op == 30 {
                        sent_tx.send(frame["d"]["reply_to"].to_string()).unwrap();
                    }
                    if !send(&mut ws, format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)).await {
                        return;
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    // `/relay` replies each time the test says, and hands back the result.
    let (go_tx, go) = mpsc::channel::<()>(1);
    let go = Arc::new(tokio::sync::Mutex::new(go));
    let (result_tx, mut results) = mpsc::unbounded_channel();
    client
        .commands()
        .register(
            CommandDeclaration::new("relay", "Replies when told"),
            move |ctx: CommandContext| {
                let (go, result_tx) = (go.clone(), result_tx.clone());
                async move {
                    let mut go = go.lock().await;
                    while go.recv().await.is_some() {
                        result_tx.send(ctx.reply("relayed").await).unwrap();
                    }
                    Ok::<(), std::io::Error>(())
                }
            },
        )
        .unwrap();
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    peer::eventually("the handler runs", || client.stats().handlers_running == 1).await;

    kill.notify_one();
    peer::disconnect_reason(&mut events).await;
    go_tx.send(()).await.unwrap();
    let down = tokio::time::timeout(WAIT, results.recv())
        .await
        .expect("the reply fails at once")
        .unwrap();
    assert!(
        matches!(down, Err(botlane::ClientError::NotConnected)),
        "{down:?}"
    );

    hold_tx.send(()).await.unwrap();
    client.wait_until_connected(WAIT).await.unwrap();
    go_tx.send(()).await.unwrap();
    let back = tokio::time::timeout(WAIT, results.recv())
        .await
        .expect("the reply is answered")
        .unwrap();
    assert!(back.is_ok(), "{back:?}");
    let reply_to = tokio::time::timeout(WAIT, sent.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        reply_to, r#""m0""#,
        "a reply to the message of the old session"
    );
    assert!(sent.try_recv().is_err(), "one reply reached the service");
    drop(go_tx);
    client.close().await.unwrap();
}

/// A client closed while its first login is still dialling (the service
/// took the TCP connection and holds back the upgrade's answer): the login
/// ends at once with `NotConnected` rather than at the connect timeout
/// (60 s here), and the connection is let go, so the service, answering
/// the upgrade after `close()` returned, never sees a frame. It used to
/// get the upgrade through, then a close frame: a connection made after
/// `close()` had returned.
#[tokio::test]
async fn a_close_during_the_first_dial_ends_the_login_and_the_dial() {
    let answer = Arc::new(Notify::new());
    let (after_tx, mut after) = mpsc::unbounded_channel::<Option<String>>();
    let (addr, accepted) = {
        let answer = answer.clone();
        serve(move |tcp, _| {
            let (answer, after_tx) = (answer.clone(), after_tx.clone());
            async move {
                answer.notified().await;
                // What the client sends once its upgrade is answered.
                let frame = match tokio_tungstenite::accept_async(tcp).await {
                    Ok(mut ws) => match futures_util::StreamExt::next(&mut ws).await {
                        Some(Ok(frame)) => Some(format!("{frame:?}")),
                        _ => None,
                    },
                    Err(_) => None,
                };
                after_tx.send(frame).unwrap();
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let options = peer::patient(peer::options(addr, &dir)).connect_timeout(Duration::from_secs(60));
    let client = botlane::Client::new(options).unwrap();
    let login = tokio::spawn({
        let client = client.clone();
        async move { client.login().await }
    });
    peer::eventually("the service takes the tcp connection", || {
        accepted.load(Ordering::SeqCst) == 1
    })
    .await;
    tokio::time::timeout(WAIT, client.close())
        .await
        .expect("close returns")
        .unwrap();
    let login = tokio::time::timeout(WAIT, login)
        .await
        .expect("the login ends with the close, not at the connect timeout")
        .unwrap();
    assert!(
        matches!(login, Err(botlane::ClientError::NotConnected)),
        "{login:?}"
    );
    answer.notify_one();
    let after = tokio::time::timeout(WAIT, after.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after, None, "no frame after close() returned");
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "nothing dialled again");
}

/// A `tracing` writer that, once armed, shuts `client` down when it is
/// given the line saying the menu was published: in a login, after its
/// last reply came and before its connection is stored.
#[derive(Clone)]
struct ShutDownOnPublish {
    armed: Arc<std::sync::atomic::AtomicBool>,
    client: botlane::WeakClient,
    /// Notified once it has shut the client down.
    stopped: Arc<Notify>,
}

impl std::io::Write for ShutDownOnPublish {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let published = String::from_utf8_lossy(buf).contains("menu published");
        if published
            && self.armed.load(Ordering::SeqCst)
            && let Some(client) = self.client.upgrade()
        {
            client.shutdown();
            self.stopped.notify_one();
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for ShutDownOnPublish {
    type Writer = Self;
    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

/// One round of a shutdown made while the reconnect's login has its last
/// reply in hand: the menu's reply has come and the connection is not
/// stored yet. It is made by the debug line that says the menu was
/// published, on this thread's subscriber: every task of the test runs
/// here. (It was made by a `/stop` pushed with the menu's reply and run on
/// the spot; a push that comes during a login now waits for the session.)
/// What the client says after that: the emoji catalog, whether it is
/// connected, its reconnect events, and how many sessions it counted.
async fn shutdown_as_the_reconnect_completes() -> (
    Result<Vec<botlane::Emoji>, botlane::ClientError>,
    Result<(), botlane::ClientError>,
    Vec<&'static str>,
    u64,
) {
    let kill = Arc::new(Notify::new());
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let kill = kill.clone();
            async move {
                let mut ws = upgrade(tcp).await;
                if peer::login(&mut ws, n, &["c1"]).await.is_none() {
                    return;
                }
                tokio::select! {
                    () = behave(&mut ws) => {}
                    () = kill.notified(), if n == 1 => {}
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = Arc::new(Notify::new());
    let writer = ShutDownOnPublish {
        armed: armed.clone(),
        client: client.downgrade(),
        stopped: stopped.clone(),
    };
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(writer)
        .finish();
    let _on_this_thread = tracing::subscriber::set_default(subscriber);
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    let (mut events, mut closing) = (client.events(), client.events());
    // tracing caches each callsite's interest process-wide: a test on
    // another thread that registered the menu's line while this
    // subscriber was being set could have left it cached as wanted by
    // nobody. The login above has registered it, so a rebuild now sees it.
    tracing::callsite::rebuild_interest_cache();
    armed.store(true, Ordering::SeqCst);
    kill.notify_one();
    tokio::time::timeout(WAIT, stopped.notified())
        .await
        .expect("the reconnect's login shuts the client down");
    // The events end once every connection task has ended, after the
    // shutdown: the login and the supervisor have done what they make of
    // it (they run on with no await until they return), and a connection
    // stored after it would have ended too.
    tokio::time::timeout(WAIT, async {
        while !matches!(closing.recv().await, Err(botlane::EventRecvError::Closed)) {}
    })
    .await
    .expect("the client's events end after the shutdown");
    let emojis = client.fetch_emojis().await;
    let connected = client.wait_until_connected(Duration::ZERO).await;
    let sessions = client.stats().sessions;
    (emojis, connected, reconnect_events(&mut events), sessions)
}

/// A shutdown while the reconnect's login has its last reply in hand
/// leaves no session behind (none is counted) and reports no reconnect:
/// the client is shut down, and says so. It used to store the connection
/// it had just logged in on, after the shutdown had cleared it (the
/// supervisor saw the finished login before the shutdown): `Reconnected`
/// came after the shutdown, a request failed with `ConnectionClosed`
/// instead of `NotConnected`, and `wait_until_connected` could answer
/// `Ok`. The shutdown lands in that window every round (without the
/// check in `login.rs`, round 0 counts a second session); sixteen rounds.
#[tokio::test]
async fn a_shutdown_as_the_reconnect_completes_leaves_no_session_behind() {
    for round in 0..16 {
        let (emojis, connected, events, sessions) = shutdown_as_the_reconnect_completes().await;
        assert_eq!(
            sessions, 1,
            "round {round}: no session stored after the shutdown"
        );
        assert!(
            matches!(emojis, Err(botlane::ClientError::NotConnected)),
            "round {round}: {emojis:?}"
        );
        assert!(
            connected.is_err(),
            "round {round}: connected after shutdown"
        );
        assert_eq!(events, ["disconnected"], "round {round}");
    }
}

/// A service whose first session keeps dispatch busy until `kill`
/// ([`first_session_keeping_dispatch_busy`]) and whose session `n` after it
/// logs in to the one channel `later(n)` names, then closes at once when
/// it says so, or answers what comes.
async fn serve_after_a_busy_first_session(
    kill: Arc<Notify>,
    later: fn(usize) -> (&'static str, bool),
) -> std::net::SocketAddr {
    let (addr, _) = serve(move |tcp, n| {
        let kill = kill.clone();
        async move {
            if n == 1 {
                return first_session_keeping_dispatch_busy(tcp, kill).await;
            }
            let (channel, close) = later(n);
            let mut ws = upgrade(tcp).await;
            if peer::login(&mut ws, n, &[channel]).await.is_none() {
                return;
            }
            if close {
                let _ = ws.close(None).await;
            } else {
                behave(&mut ws).await;
            }
        }
    })
    .await;
    addr
}

/// `channels()` as the application reads it on the next
/// `Event::Reconnected` of `client`.
fn channels_on_reconnected(client: &botlane::Client) -> tokio::task::JoinHandle<Vec<String>> {
    let mut events = client.events();
    let client = client.clone();
    tokio::spawn(async move {
        while !matches!(events.recv().await, Ok(botlane::Event::Reconnected)) {}
        channel_ids(&client)
    })
}

/// `Event::Reconnected` comes once dispatch has applied the new session's
/// `ready`, so an application that reads `channels()` on it sees the new
/// session's channels, also while dispatch is still busy with pushes of
/// the old session (a handler holds the only permit, the next invocation
/// waits for it, a third waits in the queue, and the new `ready` queues
/// behind them). It used to come as soon as the login and the menu were
/// answered, and `channels()` still listed the old session's. What
/// dispatch held of the old session is still dispatched in wire order,
/// before the new `ready` forgets the old channel's key: all three
/// invocations run.
#[tokio::test]
async fn reconnected_comes_once_channels_list_the_new_session_s_channels() {
    let kill = Arc::new(Notify::new());
    // The bot is in `c2` now, and no longer in `c1`.
    let addr = serve_after_a_busy_first_session(kill.clone(), |_| ("c2", false)).await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    let on_reconnected = channels_on_reconnected(&client);

    kill.notify_one();
    peer::eventually("the new session is up", || client.stats().sessions == 2).await;
    // Room for a `Reconnected` sent before dispatch reached the new
    // `ready` to arrive (it used to, right after the menu's reply);
    // nothing here is a time limit.
    tokio::time::sleep(Duration::from_millis(200)).await;
    slow.gate.send_replace(true);
    let listed = tokio::time::timeout(WAIT, on_reconnected)
        .await
        .expect("the client reconnects")
        .unwrap();
    assert_eq!(listed, ["c2"], "channels() as Reconnected is read");
    peer::eventually("the old session's invocations all run", || {
        slow.finished.load(Ordering::SeqCst) == 3
    })
    .await;
    assert_eq!(
        reconnect_events(&mut events),
        ["disconnected", "reconnected"]
    );
    client.close().await.unwrap();
}

/// The wait for dispatch before `Reconnected` has a bound: with a handler
/// that holds the only permit and never returns (handler timeouts off, the
/// application's choice), `Reconnected` still comes, once
/// `request_timeout` has passed after the new `ready`, with the old
/// channels still listed (the documented exception). It used to wait for
/// dispatch for as long as the handler ran.
#[tokio::test]
async fn reconnected_comes_within_the_request_timeout_while_handlers_hold_dispatch() {
    let kill = Arc::new(Notify::new());
    let addr = serve_after_a_busy_first_session(kill.clone(), |_| ("c2", false)).await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy_and(addr, &dir, |options| {
        // Long enough for a loaded machine's login; short against `WAIT`.
        options
            .request_timeout(Duration::from_secs(3))
            .handler_timeout(None)
    })
    .await;
    let on_reconnected = channels_on_reconnected(&client);

    kill.notify_one();
    // The gate stays shut: dispatch never reaches the new `ready`.
    let listed = tokio::time::timeout(WAIT, on_reconnected)
        .await
        .expect("Reconnected comes while the handler still runs")
        .unwrap();
    assert_eq!(listed, ["c1"], "dispatch has not applied the new ready");
    assert_eq!(
        slow.finished.load(Ordering::SeqCst),
        0,
        "the handler runs on"
    );
    assert_eq!(
        reconnect_events(&mut events),
        ["disconnected", "reconnected"]
    );
    slow.gate.send_replace(true);
    peer::eventually("dispatch applies the new ready", || {
        channel_ids(&client) == ["c2"]
    })
    .await;
    client.close().await.unwrap();
}

/// A reconnect whose session ends before dispatch has caught up with its
/// `ready` is a failed attempt (`ReconnectFailed`, with the end's reason):
/// the application never saw the session, and a `Reconnected` for it would
/// have come with the old channels. The next session that lasts is the
/// one `Reconnected` reports, with its channels.
#[tokio::test]
async fn a_reconnect_that_ends_before_dispatch_caught_up_is_a_failed_attempt() {
    let kill = Arc::new(Notify::new());
    // The second session ends right after its login; the third lasts.
    let addr = serve_after_a_busy_first_session(kill.clone(), |n| {
        if n == 2 {
            ("c2", true)
        } else {
            ("c3", false)
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    let on_reconnected = channels_on_reconnected(&client);

    kill.notify_one();
    peer::eventually("the third session is up", || client.stats().sessions == 3).await;
    slow.gate.send_replace(true);
    let listed = tokio::time::timeout(WAIT, on_reconnected)
        .await
        .expect("the client reconnects")
        .unwrap();
    assert_eq!(listed, ["c3"]);
    let (seen, failures) = reconnect_events_and_failures(&mut events);
    assert_eq!(seen, ["disconnected", "failed", "reconnected"]);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0]
            .1
            .starts_with("the service closed the connection"),
        "{failures:?}"
    );
    client.close().await.unwrap();
}

/// The session's events of a subscriber so far, in order: `ready` (with
/// its bot id), `disconnected`, `failed` and `reconnected`.
fn session_events(events: &mut botlane::Events) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(Some(event)) = events.try_recv() {
        match event {
            botlane::Event::Ready { bot_id } => seen.push(format!("ready {bot_id}")),
            botlane::Event::Disconnected { .. } => seen.push("disconnected".into()),
            botlane::Event::ReconnectFailed { .. } => seen.push("failed".into()),
            botlane::Event::Reconnected => seen.push("reconnected".into()),
            _ => {}
        }
    }
    seen
}

/// `Event::Ready` is the session's first event, also when the first
/// connection ends after its login but before its `ready` came: it is sent
/// (once, with the channels still unlisted) before that connection's
/// `Disconnected`, and `login` returns `Ok` with it; `Reconnected` follows
/// with the next session's channels. It used to come after `Reconnected`,
/// once the next session's `ready` had been applied, and `login` waited
/// for that.
#[tokio::test]
async fn ready_comes_first_when_the_first_session_ends_before_its_ready() {
    let (addr, _) = serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        if n > 1 {
            if peer::login(&mut ws, n, &["c1"]).await.is_some() {
                behave(&mut ws).await;
            }
            return;
        }
        // The login and the menu answered, no `ready`; then the end.
        peer::accept_login(&mut ws, 1, None).await.unwrap();
        peer::read_menu(&mut ws).await.unwrap();
        send(&mut ws, r#"{"op":20,"d":{"code":0}}"#).await;
        let _ = ws.close(None).await;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let mut events = client.events();
    let mut reconnected = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login returns with Ready, not after the request timeout (60 s)")
        .unwrap();
    tokio::time::timeout(WAIT, async {
        while !matches!(reconnected.recv().await, Ok(botlane::Event::Reconnected)) {}
    })
    .await
    .expect("the client reconnects");
    assert_eq!(channel_ids(&client), ["c1"]);
    assert_eq!(
        session_events(&mut events),
        ["ready bot-1", "disconnected", "reconnected"]
    );
    client.close().await.unwrap();
    assert!(session_events(&mut events).is_empty(), "one Ready");
}

/// `Event::Ready` is the session's first event also when messages follow
/// the first `ready` closely: the service pushes `ready` right after the
/// login reply, and a channel's messages (its key kept from an earlier
/// run, or pushed at once) may come before the menu's reply. Dispatch then
/// applies the `ready` and opens the messages in one go, and `Ready`, sent
/// by a task that only wakes once the `ready` has been applied, came after
/// their `Message` events.
#[tokio::test]
async fn ready_comes_before_the_messages_that_follow_the_first_ready() {
    let (addr, _) = serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        let Some(public_key) = peer::accept_login(&mut ws, n, Some(&["c1"])).await else {
            return;
        };
        let (key, key_push) = peer::channel_key_for(&public_key, "c1");
        send(&mut ws, key_push).await;
        send(&mut ws, message_push(&key, "m1", "hello")).await;
        behave(&mut ws).await;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let (mut events, mut messages) = (client.events(), client.events());
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    tokio::time::timeout(WAIT, async {
        while !matches!(messages.recv().await, Ok(botlane::Event::Message(_))) {}
    })
    .await
    .expect("the message is dispatched");
    let mut seen = Vec::new();
    while let Ok(Some(event)) = events.try_recv() {
        match event {
            botlane::Event::Ready { .. } => seen.push("ready".to_owned()),
            botlane::Event::Message(m) => seen.push(format!("message {}", m.id)),
            _ => {}
        }
    }
    assert_eq!(seen, ["ready", "message m1"], "Ready is the first event");
    client.close().await.unwrap();
}

/// A first login that fails after its `ready` came (the service refuses
/// the menu) was no session: its `ready` is not applied, and `Ready` (sent
/// once, for the retry) lists only the retry's channels (`c1`, `c2`; not
/// the failed connection's `c9`). What the service pushed on the failed
/// connection that it never pushes again waits for the retry's `ready`,
/// in wire order: the keys (for `c2`, which the retry's `ready` lists, and
/// for `c9`, which it does not: ignored), the `/echo` `m1a` in `c2`,
/// opened with the kept key after `Ready` and answered on the retry's
/// session, and `m1b` in `c9`, handled as any message of a channel the bot
/// is not in (not opened). Then the retry's own `m2`. The failed
/// connection's `ready` used to be applied by the retry's dispatch,
/// sending `Ready` with its channels; its messages were then dropped.
#[tokio::test]
async fn a_failed_first_login_s_ready_is_not_applied_and_its_messages_wait_for_the_retry_s_ready() {
    let (c2_key, c9_key) = (
        botlane::crypto::ChannelKey::generate().unwrap(),
        botlane::crypto::ChannelKey::generate().unwrap(),
    );
    // The sends (op 30) each session saw, with its number.
    let (sends_tx, mut sends) = mpsc::unbounded_channel::<(usize, serde_json::Value)>();
    let (addr, _) = {
        let (c2_key, c9_key) = (c2_key.clone(), c9_key.clone());
        serve(move |tcp, n| {
            let (c2_key, c9_key, sends_tx) = (c2_key.clone(), c9_key.clone(), sends_tx.clone());
            async move {
                let mut ws = upgrade(tcp).await;
                let listed: &[&str] = if n == 1 { &["c9", "c2"] } else { &["c1", "c2"] };
                let Some(public_key) = peer::accept_login(&mut ws, n, Some(listed)).await else {
                    return;
                };
                let pushes = if n == 1 {
                    vec![
                        peer::key_push(&c2_key, &public_key, "c2"),
                        peer::key_push(&c9_key, &public_key, "c9"),
                        message_push_in(&c2_key, "c2", "m1a", "/echo"),
                        message_push_in(&c9_key, "c9", "m1b", "hello"),
                    ]
                } else {
                    vec![message_push_in(&c2_key, "c2", "m2", "hello")]
                };
                for push in pushes {
                    send(&mut ws, push).await;
                }
                if !peer::answer_menu(&mut ws, if n == 1 { -1 } else { 0 }).await {
                    return;
                }
                while let Some(frame) = next_frame(&mut ws).await {
                    let op = frame["op"].as_u64().unwrap();
                    if op == 30 {
                        let _ = sends_tx.send((n, frame["d"].clone()));
                    }
                    let reply = format!(r#"{{"op":{op},"d":{{"code":0,"message_id":"r{n}"}}}}"#);
                    if !send(&mut ws, reply).await {
                        return;
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let (replied_tx, mut replied) = mpsc::unbounded_channel();
    client
        .commands()
        .register(
            CommandDeclaration::new("echo", "Replies"),
            move |ctx: CommandContext| {
                let replied_tx = replied_tx.clone();
                async move {
                    let _ = replied_tx.send(ctx.reply("echo").await.map(|_| ()));
                    Ok::<(), std::io::Error>(())
                }
            },
        )
        .unwrap();
    let mut events = client.events();
    let refused = tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the first login ends")
        .unwrap_err();
    assert!(
        matches!(
            refused,
            botlane::ClientError::Refused {
                opcode: 20,
                code: -1
            }
        ),
        "{refused:?}"
    );
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the retry finishes")
        .unwrap();
    let mut listed = channel_ids(&client);
    listed.sort();
    assert_eq!(
        listed,
        ["c1", "c2"],
        "channels() as login returns, on Ready"
    );
    let mut seen = Vec::new();
    tokio::time::timeout(WAIT, async {
        while seen.last().map(String::as_str) != Some("message m2") {
            seen.push(match events.recv().await.unwrap() {
                botlane::Event::Ready { bot_id } => format!("ready {bot_id}"),
                botlane::Event::Message(m) => format!("message {}", m.id),
                other => format!("{other:?}"),
            });
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the retry's message is dispatched; so far {seen:?}"));
    assert_eq!(seen, ["ready bot-2", "message m1a", "message m2"]);
    let reply = tokio::time::timeout(WAIT, replied.recv())
        .await
        .expect("/echo replies")
        .unwrap();
    assert!(reply.is_ok(), "{reply:?}");
    let (session, sent) = sends.try_recv().expect("the reply reached the service");
    assert_eq!(session, 2, "on the retry's session");
    assert_eq!(
        (&sent["channel_id"], &sent["reply_to"]),
        (&serde_json::json!("c2"), &serde_json::json!("m1a"))
    );
    client.close().await.unwrap();
}

/// A reconnect answered 503 with `Retry-After: 1` makes no attempt sooner,
/// as the service sees it (the backoff alone would try again within 40
/// ms), and says how long it waits in its `ReconnectFailed`.
#[tokio::test]
async fn a_reconnect_waits_out_the_retry_after_of_a_503() {
    let kill = Arc::new(Notify::new());
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let (addr, _) = {
        let (kill, arrivals) = (kill.clone(), arrivals.clone());
        serve(move |tcp, n| {
            // Taken as the service accepts the connection.
            arrivals.lock().unwrap().push(std::time::Instant::now());
            let kill = kill.clone();
            async move {
                if n == 2 {
                    return peer::refuse_upgrade(tcp, "503 Service Unavailable", Some("1")).await;
                }
                let mut ws = upgrade(tcp).await;
                if peer::login(&mut ws, n, &[]).await.is_some() {
                    tokio::select! {
                        () = behave(&mut ws) => {}
                        () = kill.notified(), if n == 1 => {}
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    // The longest delay above the Retry-After, which it caps.
    let options = peer::options(addr, &dir)
        .reconnect_delays(Duration::from_millis(20), Duration::from_secs(5));
    let (client, mut events) = peer::client_with_events(options).await;
    kill.notify_one();
    let mut failed = Vec::new();
    tokio::time::timeout(WAIT, async {
        loop {
            match events.recv().await.unwrap() {
                botlane::Event::ReconnectFailed {
                    attempt, retry_in, ..
                } => failed.push((attempt, retry_in)),
                botlane::Event::Reconnected => return,
                _ => {}
            }
        }
    })
    .await
    .expect("the third connection logs in");
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 3);
    let waited = arrivals[2] - arrivals[1];
    assert!(
        waited >= Duration::from_secs(1),
        "tried again after {waited:?}"
    );
    let [(1, retry_in)] = failed[..] else {
        panic!("{failed:?}");
    };
    assert!(
        retry_in >= Duration::from_secs(1) && retry_in <= Duration::from_millis(1500),
        "{retry_in:?}"
    );
    client.close().await.unwrap();
}
