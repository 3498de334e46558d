//! The order of a new session's events against `Event::Reconnected`:
//! everything the client makes of the pushes that follow the new
//! session's `ready` (a message's event, a failed command's error, a reply
//! the service refuses) comes after `Reconnected`, and `Reconnected` comes
//! once, for the connection whose `ready` dispatch applied. Over real
//! sockets on loopback, against a fake service (`tests/peer`); the
//! assertions are on the exact sequence of events a subscriber receives.

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::Arc;
use std::time::Duration;

use botlane::crypto::ChannelKey;
use botlane::framework::OnError;
use botlane::{CommandContext, CommandDeclaration, Event};
use peer::busy::{
    channel_ids, client_with_dispatch_busy, client_with_dispatch_busy_and,
    first_session_keeping_dispatch_busy, message_push, message_push_in,
};
use peer::{behave, next_frame, send, serve, upgrade, WAIT};
use tokio::sync::Notify;

/// `/boom`, which fails at once (polled in place, its `CommandError`
/// comes before dispatch takes the next push), and `/fail`, which replies
/// (the service below refuses every send: a `SendRejected`), then fails.
/// Failures are not answered: no reply of an error hook interleaves.
fn register_failing(client: &botlane::Client) {
    client.on_error(OnError::silent());
    let commands = client.commands();
    commands
        .register(
            CommandDeclaration::new("boom", "Fails at once"),
            |_ctx: CommandContext| async { Err::<(), _>(std::io::Error::other("fails at once")) },
        )
        .unwrap();
    commands
        .register(
            CommandDeclaration::new("fail", "Replies, then fails"),
            |ctx: CommandContext| async move {
                let _ = ctx.reply("refused").await;
                Err::<(), _>(std::io::Error::other("fails on purpose"))
            },
        )
        .unwrap();
}

/// Upgrades and answers the login of session `n` (`bot-N`); returns the
/// bot's identity public key.
async fn logged_in_with_public_key(
    tcp: tokio::net::TcpStream,
    n: usize,
) -> Option<(peer::Ws, String)> {
    let mut ws = upgrade(tcp).await;
    let public_key = peer::accept_login(&mut ws, n, None).await?;
    Some((ws, public_key))
}

/// Upgrades and answers the login of session `n`; returns its `ready`
/// (the bot in `c1`), a new key for `c1` and the key's push, none sent.
async fn logged_in(
    tcp: tokio::net::TcpStream,
    n: usize,
) -> Option<(peer::Ws, String, ChannelKey, String)> {
    let (ws, public_key) = logged_in_with_public_key(tcp, n).await?;
    let (key, key_push) = peer::channel_key_for(&public_key, "c1");
    Some((ws, peer::ready(&format!("bot-{n}"), &["c1"]), key, key_push))
}

/// Answers the menu's publish, once `menu` is notified when given; `false`
/// when the client went away.
async fn answer_the_menu(ws: &mut peer::Ws, menu: Option<Arc<Notify>>) -> bool {
    if peer::read_menu(ws).await.is_none() {
        return false;
    }
    if let Some(menu) = menu {
        menu.notified().await;
    }
    send(ws, r#"{"op":20,"d":{"code":0}}"#).await
}

/// When a reconnect's session sends its pushes.
enum Pushes {
    /// Before the menu's reply, which waits for the `Notify`, when given.
    BeforeTheMenu(Option<Arc<Notify>>),
    /// Once the menu is answered: dispatch, idle, takes them on the spot.
    AfterTheMenu,
}

/// A reconnect's session `n`: the login answered, then, in one go, the
/// `ready` (the bot in `c1`), a new key for `c1`, a plain `m3`, a `/boom`
/// `m4`, the same `ready` again and a `/fail` `m5`, sent as `when` says.
/// Then every send (op 30) is refused with -3 and every other request
/// answered.
async fn reconnect_session(tcp: tokio::net::TcpStream, n: usize, when: Pushes) {
    let Some((mut ws, ready, key, key_push)) = logged_in(tcp, n).await else {
        return;
    };
    let pushes = [
        ready.clone(),
        key_push,
        message_push(&key, "m3", "hello"),
        message_push(&key, "m4", "/boom"),
        ready,
        message_push(&key, "m5", "/fail"),
    ];
    let (first, menu) = match when {
        Pushes::BeforeTheMenu(menu) => (true, menu),
        Pushes::AfterTheMenu => (false, None),
    };
    for push in pushes.iter().filter(|_| first) {
        send(&mut ws, push).await;
    }
    if !answer_the_menu(&mut ws, menu).await {
        return;
    }
    for push in pushes.iter().filter(|_| !first) {
        send(&mut ws, push).await;
    }
    refuse_sends(&mut ws).await;
}

/// Refuses every send (op 30) with -3 and answers every other request,
/// until the client goes away.
async fn refuse_sends(ws: &mut peer::Ws) {
    while let Some(frame) = next_frame(ws).await {
        let op = frame["op"].as_u64().unwrap();
        let reply = if op == 30 {
            r#"{"op":30,"d":{"code":-3,"reason":"no permission"}}"#.to_owned()
        } else {
            format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)
        };
        if !send(ws, reply).await {
            return;
        }
    }
}

/// A reconnect's session `n` that ends right after its login: its
/// `ready`, a new key for `c1` and a plain `m2b`, the menu answered, and
/// the close.
async fn session_that_ends_at_once(tcp: tokio::net::TcpStream, n: usize) {
    let Some((mut ws, ready, key, key_push)) = logged_in(tcp, n).await else {
        return;
    };
    for push in [ready, key_push, message_push(&key, "m2b", "hello")] {
        send(&mut ws, push).await;
    }
    if answer_the_menu(&mut ws, None).await {
        let _ = futures_util::SinkExt::close(&mut ws).await;
    }
}

/// A service whose first session puts the bot in `c1`, with its key, and
/// lasts until `kill` is notified, and whose later sessions are
/// [`reconnect_session`]s, sending their pushes as `when` says.
async fn serve_reconnects(
    kill: Arc<Notify>,
    when: impl Fn() -> Pushes + Send + Sync + 'static,
) -> std::net::SocketAddr {
    let when = Arc::new(when);
    let (addr, _) = serve(move |tcp, n| {
        let (kill, when) = (kill.clone(), when.clone());
        async move {
            if n > 1 {
                return reconnect_session(tcp, n, when()).await;
            }
            let Some((mut ws, _, key_push)) = peer::first_session_with_key(tcp, n, "c1").await
            else {
                return;
            };
            send(&mut ws, key_push).await;
            tokio::select! {
                () = behave(&mut ws) => {}
                () = kill.notified() => {}
            }
        }
    })
    .await;
    addr
}

/// A service whose first session keeps dispatch busy
/// ([`first_session_keeping_dispatch_busy`]) until `kill` is notified, and
/// whose later sessions are `later(tcp, n)`.
async fn serve_busy_first<F, Fut>(kill: Arc<Notify>, later: F) -> std::net::SocketAddr
where
    F: Fn(tokio::net::TcpStream, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let later = Arc::new(later);
    let (addr, _) = serve(move |tcp, n| {
        let (kill, later) = (kill.clone(), later.clone());
        async move {
            if n == 1 {
                first_session_keeping_dispatch_busy(tcp, kill).await;
            } else {
                later(tcp, n).await;
            }
        }
    })
    .await;
    addr
}

/// The events `before`, then those every test's new session ends with:
/// its messages, `/boom`'s error, `/fail`'s reply refused and its error.
fn then_the_new_session(before: &[&str]) -> Vec<String> {
    let new_session = [
        "message m3",
        "message m4",
        "error boom m4",
        "message m5",
        "rejected m5",
        "error fail m5",
    ];
    before
        .iter()
        .chain(&new_session)
        .map(|e| (*e).to_owned())
        .collect()
}

/// Waits until the messages `ids` wait in the push queue (dispatch is
/// held by the busy handler), so that the case under test is set up when
/// the gate opens, whatever the machine's load.
async fn queued(client: &botlane::Client, ids: &[&str]) {
    let what = format!("{ids:?} wait for dispatch");
    peer::eventually(&what, || client.stats().push_queue_len == ids.len()).await;
}

/// The events `events` receives, in words, until `/fail`'s `CommandError`:
/// `Reconnected` with the channels `client` lists as it is read.
async fn events_until_the_failure(
    client: &botlane::Client,
    events: &mut botlane::Events,
) -> Vec<String> {
    let mut seen = Vec::new();
    tokio::time::timeout(WAIT, async {
        loop {
            let said = match events.recv().await.unwrap() {
                Event::Ready { .. } => "ready".to_owned(),
                Event::Message(m) => format!("message {}", m.id),
                Event::SendRejected(r) => format!("rejected {}", r.reply_to.unwrap_or_default()),
                Event::CommandError(e) => format!("error {} {}", e.command, e.message.id),
                Event::Disconnected { .. } => "disconnected".to_owned(),
                Event::ReconnectFailed { reason, .. } => format!("failed: {reason}"),
                Event::Reconnected => format!("reconnected {}", channel_ids(client).join(",")),
                other => format!("{other:?}"),
            };
            let done = said.starts_with("error fail");
            seen.push(said);
            if done {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("/fail's CommandError comes; so far {seen:?}"));
    seen
}

/// What follows the new session's `ready` comes after `Reconnected`, also
/// when the service sends it before the menu's reply, while the login
/// still waits for that: `Reconnected` (once, for two `ready`s), then the
/// messages' events, the reply refused and the command's error, and the
/// reply goes out on the new session. They used to come before
/// `Reconnected`, when the supervisor sent it: dispatch took the pushes on
/// the spot as they came, and `Reconnected` waited for the login.
#[tokio::test]
async fn every_event_of_the_new_session_comes_after_reconnected() {
    let (kill, menu) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let addr = {
        let menu = menu.clone();
        serve_reconnects(kill.clone(), move || {
            Pushes::BeforeTheMenu(Some(menu.clone()))
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    register_failing(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    let before = client.stats().frames_received;

    kill.notify_one();
    // The new session's login reply and its six pushes read before the
    // menu's reply is let go.
    peer::eventually("the new session's pushes are read", || {
        client.stats().frames_received >= before + 7
    })
    .await;
    menu.notify_one();
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        then_the_new_session(&["ready", "disconnected", "reconnected c1"])
    );
    client.close().await.unwrap();
}

/// The same when the service sends the pushes once the menu is answered:
/// dispatch, idle, takes them on the spot, on the connection task, and
/// polls `/boom` there in place; `Reconnected` is sent in the step that
/// applies the `ready`. `m3`'s event used to come before it, when the
/// supervisor sent it: told that the `ready` was handed over, it was still
/// to send it.
#[tokio::test]
async fn every_event_of_the_new_session_comes_after_reconnected_on_the_spot() {
    let kill = Arc::new(Notify::new());
    let addr = serve_reconnects(kill.clone(), || Pushes::AfterTheMenu).await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    register_failing(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();

    kill.notify_one();
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        then_the_new_session(&["ready", "disconnected", "reconnected c1"])
    );
    client.close().await.unwrap();
}

/// The same while dispatch is busy with the old session (a handler holds
/// the only permit, the next invocation waits for it, a third waits in
/// the queue): the new session's pushes queue behind its `ready`, and once
/// the handler returns, dispatch works through them in wire order, with
/// `Reconnected` sent as it applies the `ready`. `m3`'s event used to come
/// before it, when the supervisor sent it once told that dispatch had
/// caught up: dispatch went on to the next pushes meanwhile.
#[tokio::test]
async fn every_event_of_the_new_session_comes_after_reconnected_while_dispatch_is_busy() {
    let kill = Arc::new(Notify::new());
    let addr = serve_busy_first(kill.clone(), |tcp, n| {
        reconnect_session(tcp, n, Pushes::BeforeTheMenu(None))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    register_failing(&client);

    kill.notify_one();
    peer::eventually("the new session is up", || client.stats().sessions == 2).await;
    queued(&client, &["m2", "m3", "m4", "m5"]).await;
    slow.gate.send_replace(true);
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        then_the_new_session(&[
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "message m2",
            "reconnected c1",
        ])
    );
    client.close().await.unwrap();
}

/// A connection whose session was never announced is no session,
/// whatever it sent: the second session ends while its `ready` (a key and
/// a message after it) still waits for a busy dispatch, a failed attempt;
/// its `ready` is never applied, and its key and message wait behind the
/// third session's `ready`. Dispatch works through the first session's
/// pushes, then `Reconnected` comes as it applies the third session's
/// `ready`, before the second session's message and the third's. That
/// message used to come before `Reconnected`: dispatch applied the dead
/// connection's `ready` in wire order, announcing nothing, and what
/// followed it was handled with no session announced.
#[tokio::test]
async fn the_ready_of_a_connection_that_ended_does_not_announce_the_next() {
    let kill = Arc::new(Notify::new());
    let addr = serve_busy_first(kill.clone(), |tcp, n| async move {
        match n {
            2 => session_that_ends_at_once(tcp, n).await,
            _ => reconnect_session(tcp, n, Pushes::BeforeTheMenu(None)).await,
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    register_failing(&client);

    kill.notify_one();
    peer::eventually("the third session is up", || client.stats().sessions == 3).await;
    queued(&client, &["m2", "m2b", "m3", "m4", "m5"]).await;
    slow.gate.send_replace(true);
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        then_the_new_session(&[
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "failed: the service closed the connection (1005)",
            "message m2",
            "reconnected c1",
            "message m2b",
        ])
    );
    client.close().await.unwrap();
}

/// When dispatch has not reached the new `ready` within the request
/// timeout (a handler holds the only permit and runs on, with handler
/// timeouts off), the supervisor sends `Reconnected` (with a warning):
/// the new session's pushes wait behind that `ready` in the queue, so
/// their events still come after it, and dispatch, applying the `ready`
/// once the handler returns, sends no second `Reconnected`.
#[tokio::test]
async fn a_reconnected_sent_before_dispatch_reached_the_ready_still_comes_first_and_once() {
    let kill = Arc::new(Notify::new());
    let addr = serve_busy_first(kill.clone(), |tcp, n| {
        reconnect_session(tcp, n, Pushes::BeforeTheMenu(None))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy_and(addr, &dir, |options| {
        // Long enough for a loaded machine's login; short against `WAIT`.
        options
            .request_timeout(Duration::from_secs(3))
            .handler_timeout(None)
    })
    .await;
    register_failing(&client);
    let mut reconnected = client.events();

    kill.notify_one();
    // The gate stays shut: dispatch never reaches the new `ready`.
    tokio::time::timeout(WAIT, async {
        while !matches!(reconnected.recv().await, Ok(Event::Reconnected)) {}
    })
    .await
    .expect("Reconnected comes while the handler still runs");
    slow.gate.send_replace(true);
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        then_the_new_session(&[
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "reconnected c1",
            "message m2",
        ])
    );
    client.close().await.unwrap();
}

/// A reconnect's `ready` that the client refuses (a membership push
/// waits for a busy dispatch, and the two would hold more than
/// `control_queue_bytes`) is never applied: the connection, closed with
/// 1008, is a failed attempt, not `Reconnected` then `Disconnected`, and
/// the next session is the one `Reconnected` reports.
#[tokio::test]
async fn a_ready_refused_by_a_full_control_queue_is_a_failed_attempt() {
    let kill = Arc::new(Notify::new());
    let addr = serve_busy_first(kill.clone(), |tcp, n| async move {
        match n {
            2 => {
                let Some((mut ws, _, _, _)) = logged_in(tcp, n).await else {
                    return;
                };
                if !answer_the_menu(&mut ws, None).await {
                    return;
                }
                let added = serde_json::json!({"op": 34, "d": {"channel":
                    {"id": "c9", "server_id": "s1", "name": "c9"}}});
                let ready = serde_json::json!({"op": 11, "d": {"user_id": "bot-2",
                    "name": "bot", "kind": "bot", "channels":
                    [{"id": "c1", "server_id": "s1", "name": "n".repeat(1000)}]}});
                send(&mut ws, added.to_string()).await;
                send(&mut ws, ready.to_string()).await;
                // Until the client closes.
                while next_frame(&mut ws).await.is_some() {}
            }
            _ => reconnect_session(tcp, n, Pushes::BeforeTheMenu(None)).await,
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) =
        client_with_dispatch_busy_and(addr, &dir, |options| options.control_queue_bytes(1024))
            .await;
    register_failing(&client);

    kill.notify_one();
    peer::eventually("the third session is up", || client.stats().sessions == 3).await;
    queued(&client, &["m2", "m3", "m4", "m5"]).await;
    slow.gate.send_replace(true);
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        then_the_new_session(&[
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "failed: the service sent more channel-key, ready and membership pushes than may \
             wait for dispatch (control_queue_bytes = 1024 bytes; closed with 1008)",
            "message m2",
            "reconnected c1",
        ])
    );
    client.close().await.unwrap();
}

/// The first login's window: the `ready`, a key and a `/fail` pushed
/// before the menu's reply. Dispatch starts once the login is over, so
/// `/fail`'s reply goes out on the session (the service refuses it: a
/// `SendRejected`) rather than failing with no connection to go out on,
/// and `Ready` comes first.
#[tokio::test]
async fn an_invocation_pushed_before_the_first_menu_s_reply_is_answered_on_the_session() {
    let (addr, _) = serve(|tcp, n| async move {
        let Some((mut ws, ready, key, key_push)) = logged_in(tcp, n).await else {
            return;
        };
        for push in [ready, key_push, message_push(&key, "m1", "/fail")] {
            send(&mut ws, push).await;
        }
        if answer_the_menu(&mut ws, None).await {
            refuse_sends(&mut ws).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    register_failing(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        ["ready", "message m1", "rejected m1", "error fail m1"]
    );
    client.close().await.unwrap();
}

/// A reconnect's session `n` that pushes, before its `ready`, a new key
/// for `c2` (a channel only that `ready` lists), a `/fail` `m6` in `c1`
/// sealed with `old_key` (the first session's) and a plain `m7` in `c2`;
/// then the `ready` (`c1`, `c2`). Then the menu is answered and sends are
/// refused.
async fn session_pushing_before_its_ready(
    tcp: tokio::net::TcpStream,
    n: usize,
    old_key: ChannelKey,
) {
    let Some((mut ws, public_key)) = logged_in_with_public_key(tcp, n).await else {
        return;
    };
    let (new_key, key_push) = peer::channel_key_for(&public_key, "c2");
    let pushes = [
        key_push,
        message_push(&old_key, "m6", "/fail"),
        message_push_in(&new_key, "c2", "m7", "hello"),
        peer::ready(&format!("bot-{n}"), &["c1", "c2"]),
    ];
    for push in pushes {
        send(&mut ws, push).await;
    }
    if answer_the_menu(&mut ws, None).await {
        refuse_sends(&mut ws).await;
    }
}

/// What a reconnect's service pushes before the new session's `ready`,
/// during the login, waits for that `ready`: `Reconnected` comes first,
/// the key is applied once the `ready` lists its channel (`m7`, sealed
/// with it, opens), and `/fail`'s reply goes out on the new session (the
/// service refuses it: a `SendRejected`). They used to be dispatched at
/// once, during the login, with the old session's state: `m6`'s event
/// came before `Reconnected`, its reply failed with `NotConnected`, and
/// the key, for a channel the old session did not list, was refused.
#[tokio::test]
async fn pushes_before_a_reconnect_s_ready_wait_for_it_and_answer_on_the_new_session() {
    let kill = Arc::new(Notify::new());
    let old_key = ChannelKey::generate().unwrap();
    let (addr, _) = {
        let (kill, old_key) = (kill.clone(), old_key.clone());
        serve(move |tcp, n| {
            let (kill, old_key) = (kill.clone(), old_key.clone());
            async move {
                if n > 1 {
                    return session_pushing_before_its_ready(tcp, n, old_key).await;
                }
                let mut ws = upgrade(tcp).await;
                let Some(public_key) = peer::login(&mut ws, n, &["c1"]).await else {
                    return;
                };
                send(&mut ws, peer::key_push(&old_key, &public_key, "c1")).await;
                send(&mut ws, message_push(&old_key, "m0", "hello")).await;
                tokio::select! {
                    () = behave(&mut ws) => {}
                    () = kill.notified() => {}
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    register_failing(&client);
    let (mut events, mut first) = (client.events(), client.events());
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    // The old key is in place (`m0` opened with it) before the session ends.
    tokio::time::timeout(WAIT, async {
        while !matches!(first.recv().await, Ok(Event::Message(_))) {}
    })
    .await
    .expect("the first session's message is dispatched");

    kill.notify_one();
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        [
            "ready",
            "message m0",
            "disconnected",
            "reconnected c1,c2",
            "message m6",
            "message m7",
            "rejected m6",
            "error fail m6",
        ]
    );
    client.close().await.unwrap();
}
