//! A service that floods pings: the WebSocket layer queues a pong for each
//! ping whether or not the service reads, so the client answers at most
//! `MAX_PINGS_PER_WINDOW` within `PING_WINDOW` and closes (1008) on the
//! next. Over real sockets, against a fake service (`tests/peer`).

use crate::peer;

use std::sync::atomic::Ordering;

use botlane_proto::ping::MAX_PINGS_PER_WINDOW;
use futures_util::{SinkExt, StreamExt};
use peer::{first_session_else_behave, serve};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// Pings of the flood: far over the budget, and few enough (127 KiB) that
/// the sockets' buffers take them without the service having to wait.
const FLOOD: usize = 1_000;

/// What the fake service saw: pongs to the budget's pings, pongs after the
/// flood, and the close frame.
#[derive(Debug)]
struct Seen {
    answered: usize,
    after_flood: usize,
    close: Option<CloseFrame>,
}

#[tokio::test]
async fn a_service_that_floods_pings_is_closed_and_its_pongs_stay_bounded() {
    let (seen_tx, mut seen_rx) = mpsc::channel(1);
    let (addr, accepted) = serve(move |tcp, n| {
        let seen_tx = seen_tx.clone();
        async move {
            let Some(mut ws) = first_session_else_behave(tcp, n).await else {
                return;
            };
            // The budget: every ping is answered.
            let budget = MAX_PINGS_PER_WINDOW as usize;
            for i in 0..budget {
                ws.send(Message::Ping(vec![u8::try_from(i).unwrap()].into()))
                    .await
                    .unwrap();
            }
            let mut answered = 0;
            while answered < budget {
                match ws.next().await {
                    Some(Ok(Message::Pong(_))) => answered += 1,
                    Some(Ok(Message::Text(text))) => {
                        // Heartbeats go on; answer them to keep the session.
                        let op: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
                        let op = op["op"].as_u64().unwrap();
                        ws.send(Message::text(format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)))
                            .await
                            .unwrap();
                    }
                    other => panic!("the client went away during the budget: {other:?}"),
                }
            }
            // The flood, written past the WebSocket layer (server frames are
            // not masked): 0x89 ping, 125 bytes of payload.
            let mut frame = vec![0x89, 125];
            frame.extend_from_slice(&[b'p'; 125]);
            let flood = frame.repeat(FLOOD);
            let _ = ws.get_mut().write_all(&flood).await;
            let mut after_flood = 0;
            let mut close = None;
            while let Some(Ok(message)) = ws.next().await {
                match message {
                    Message::Pong(_) => after_flood += 1,
                    Message::Close(frame) => {
                        close = frame;
                        break;
                    }
                    _ => {}
                }
            }
            let _ = seen_tx
                .send(Seen {
                    answered,
                    after_flood,
                    close,
                })
                .await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::options(addr, &dir)).await;
    let mut events = client.events();
    let reason = peer::disconnect_reason(&mut events).await;
    assert_eq!(
        reason,
        "the service sent more than 32 pings within 10 s (closed with 1008)"
    );
    let seen = tokio::time::timeout(peer::WAIT, seen_rx.recv())
        .await
        .expect("the fake service reports")
        .unwrap();
    assert_eq!(seen.answered, MAX_PINGS_PER_WINDOW as usize, "{seen:?}");
    // The window was spent: the flood's first ping is over the budget. On
    // a machine so slow that the window ended before the flood, a new one
    // answers 32 more; without the budget, all 1,000 would be.
    assert!(
        seen.after_flood <= MAX_PINGS_PER_WINDOW as usize + 1,
        "{seen:?}"
    );
    if let Some(close) = &seen.close {
        assert_eq!(u16::from(close.code), 1008, "{seen:?}");
    }
    // The client reconnects to a service that behaves.
    assert_eq!(peer::emojis_after_reconnect(&client).await.len(), 1);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    client.close().await.unwrap();
}
