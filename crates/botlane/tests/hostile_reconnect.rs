//! Across a disconnect and the reconnect after it, and around shutdown:
//! what the service is sent again (the menu), what dispatch still does,
//! what a reconnect refused or answered with an error leads to. Over real
//! sockets on loopback, against a fake service (`tests/peer`); the
//! assertions are on structure (frames the service saw, counts, events).

#![allow(clippy::unwrap_used)]

mod peer;

use std::sync::{Arc, Mutex};

use botlane::{CommandContext, CommandDeclaration};
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
                let frame = next_frame(&mut ws).await.unwrap();
                assert_eq!(frame["op"], 10, "the first frame is the login");
                send(
                    &mut ws,
                    format!(r#"{{"op":10,"d":{{"code":0,"user_id":"bot-{n}"}}}}"#),
                )
                .await;
                send(&mut ws, peer::ready(&format!("bot-{n}"), &[])).await;
                // The menu publish of the login: held until the test says.
                let mut frame = next_frame(&mut ws).await.unwrap();
                assert_eq!(frame["op"], 20, "then the menu");
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
