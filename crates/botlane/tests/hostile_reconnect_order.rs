//! The order of a new session's events against `Event::Reconnected`:
//! everything the client makes of the pushes that follow the new
//! session's `ready` (a message's event, a failed command's error, a reply
//! the service refuses) comes after `Reconnected`, and `Reconnected` comes
//! once, for the connection whose `ready` dispatch applied. Over real
//! sockets on loopback, against a fake service (`tests/peer`); the
//! assertions are on the exact sequence of events a subscriber receives.

#![allow(clippy::unwrap_used)]

mod peer;

use std::sync::Arc;
use std::time::Duration;

use botlane::{CommandContext, CommandDeclaration, Event};
use peer::busy::{
    channel_ids, client_with_dispatch_busy, first_session_keeping_dispatch_busy, message_push,
};
use peer::{behave, next_frame, send, serve, upgrade, WAIT};
use tokio::sync::Notify;

/// `/fail`: replies (the service below refuses every send: a
/// `SendRejected`), then returns an error (a `CommandError`).
fn register_fail(client: &botlane::Client) {
    client
        .commands()
        .register(
            CommandDeclaration::new("fail", "Replies, then fails"),
            |ctx: CommandContext| async move {
                let _ = ctx.reply("refused").await;
                Err::<(), _>(std::io::Error::other("fails on purpose"))
            },
        )
        .unwrap();
}

/// A reconnect's session `n`: the login answered, then, in one go and
/// before the menu's reply, the `ready` (the bot in `c1`), a new key for
/// `c1`, a plain `m3`, the same `ready` again and a `/fail` `m4`. The
/// menu's reply waits for `menu`, when given. Then every send (op 30) is
/// refused with -3 and every other request answered.
async fn reconnect_session(tcp: tokio::net::TcpStream, n: usize, menu: Option<Arc<Notify>>) {
    let mut ws = upgrade(tcp).await;
    let Some(frame) = next_frame(&mut ws).await else {
        return;
    };
    assert_eq!(frame["op"], 10, "the first frame is the login");
    let public_key = frame["d"]["public_key"].as_str().unwrap().to_owned();
    let bot = format!("bot-{n}");
    send(
        &mut ws,
        format!(r#"{{"op":10,"d":{{"code":0,"user_id":"{bot}"}}}}"#),
    )
    .await;
    let ready = peer::ready(&bot, &["c1"]);
    let (key, key_push) = peer::channel_key_for(&public_key, "c1");
    let pushes = [
        ready.clone(),
        key_push,
        message_push(&key, "m3", "hello"),
        ready,
        message_push(&key, "m4", "/fail"),
    ];
    for push in pushes {
        send(&mut ws, push).await;
    }
    let Some(frame) = next_frame(&mut ws).await else {
        return;
    };
    assert_eq!(frame["op"], 20, "then the menu");
    if let Some(menu) = menu {
        menu.notified().await;
    }
    send(&mut ws, r#"{"op":20,"d":{"code":0}}"#).await;
    while let Some(frame) = next_frame(&mut ws).await {
        let op = frame["op"].as_u64().unwrap();
        let reply = if op == 30 {
            r#"{"op":30,"d":{"code":-3,"reason":"no permission"}}"#.to_owned()
        } else {
            format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)
        };
        if !send(&mut ws, reply).await {
            return;
        }
    }
}

/// The events `events` receives, in words, until `m4`'s `CommandError`:
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
                Event::ReconnectFailed { .. } => "failed".to_owned(),
                Event::Reconnected => format!("reconnected {}", channel_ids(client).join(",")),
                other => format!("{other:?}"),
            };
            let done = said.starts_with("error");
            seen.push(said);
            if done {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("m4's CommandError comes; so far {seen:?}"));
    seen
}

/// What follows the new session's `ready` comes after `Reconnected`, also
/// when the service sends it before the menu's reply, while the login
/// still waits for that: `Reconnected` (once, for two `ready`s), then the
/// messages' events, the reply refused and the command's error, and the
/// reply goes out on the new session. They came before `Reconnected`:
/// dispatch took the pushes on the spot as they came, and `Reconnected`
/// waited for the login.
#[tokio::test]
async fn every_event_of_the_new_session_comes_after_reconnected() {
    let (kill, menu) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (addr, _) = {
        let (kill, menu) = (kill.clone(), menu.clone());
        serve(move |tcp, n| {
            let (kill, menu) = (kill.clone(), menu.clone());
            async move {
                if n > 1 {
                    return reconnect_session(tcp, n, Some(menu)).await;
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
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    register_fail(&client);
    let (mut events, mut early) = (client.events(), client.events());
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();

    kill.notify_one();
    // Room for the new session's messages to be dispatched before the
    // menu's reply (they were, at once); nothing here is a time limit.
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while !matches!(early.recv().await, Ok(Event::Message(_))) {}
    })
    .await;
    menu.notify_one();
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        [
            "ready",
            "disconnected",
            "reconnected c1",
            "message m3",
            "message m4",
            "rejected m4",
            "error fail m4",
        ]
    );
    client.close().await.unwrap();
}

/// The same while dispatch is busy with the old session (a handler holds
/// the only permit, the next invocation waits for it, a third waits in
/// the queue): the new session's pushes queue behind its `ready`, and once
/// the handler returns, dispatch works through them in wire order, with
/// `Reconnected` sent as it applies the `ready`. `m3`'s event came before
/// `Reconnected`: dispatch went on to the next pushes while the
/// supervisor, told that dispatch had caught up, was still to send it.
#[tokio::test]
async fn every_event_of_the_new_session_comes_after_reconnected_while_dispatch_is_busy() {
    let kill = Arc::new(Notify::new());
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let kill = kill.clone();
            async move {
                if n > 1 {
                    return reconnect_session(tcp, n, None).await;
                }
                first_session_keeping_dispatch_busy(tcp, kill).await;
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    register_fail(&client);

    kill.notify_one();
    peer::eventually("the new session is up", || client.stats().sessions == 2).await;
    // Room for the new session's pushes to reach the queue; nothing here
    // is a time limit.
    tokio::time::sleep(Duration::from_millis(200)).await;
    slow.gate.send_replace(true);
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        [
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "message m2",
            "reconnected c1",
            "message m3",
            "message m4",
            "rejected m4",
            "error fail m4",
        ]
    );
    client.close().await.unwrap();
}

/// A `ready` of an earlier connection announces nothing for a later one:
/// the second session (the bot in `c2`) ends before dispatch reached its
/// `ready`, a failed attempt; the third logs in while that `ready` still
/// waits in the queue. Dispatch applies both in wire order, and
/// `Reconnected` comes as it applies the third session's, with its
/// channel listed, before that session's messages.
#[tokio::test]
async fn the_ready_of_a_connection_that_ended_does_not_announce_the_next() {
    let kill = Arc::new(Notify::new());
    let (addr, _) = {
        let kill = kill.clone();
        serve(move |tcp, n| {
            let kill = kill.clone();
            async move {
                match n {
                    1 => first_session_keeping_dispatch_busy(tcp, kill).await,
                    2 => {
                        let mut ws = upgrade(tcp).await;
                        if peer::login(&mut ws, n, &["c2"]).await.is_some() {
                            let _ = futures_util::SinkExt::close(&mut ws).await;
                        }
                    }
                    _ => reconnect_session(tcp, n, None).await,
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let (client, slow, mut events) = client_with_dispatch_busy(addr, &dir).await;
    register_fail(&client);

    kill.notify_one();
    peer::eventually("the third session is up", || client.stats().sessions == 3).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    slow.gate.send_replace(true);
    assert_eq!(
        events_until_the_failure(&client, &mut events).await,
        [
            "ready",
            "message m0",
            "message m1",
            "disconnected",
            "failed",
            "message m2",
            "reconnected c1",
            "message m3",
            "message m4",
            "rejected m4",
            "error fail m4",
        ]
    );
    client.close().await.unwrap();
}
