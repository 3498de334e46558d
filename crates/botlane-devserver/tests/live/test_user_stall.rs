//! A `TestUser` against a service that stops reading: its writer gives up
//! after `REQUEST_TIMEOUT` and the socket is let go, so a test pointed at
//! a stuck service cannot leave a task and a connection behind for good.
//! Over a real socket, against a fake service (tokio-tungstenite).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use botlane_devserver::{TestUser, TestUserError, REQUEST_TIMEOUT};
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

/// Longer than the writer's bound, with room for a loaded CI.
const WAIT: Duration = Duration::from_secs(40);

#[tokio::test]
async fn a_writer_the_service_does_not_read_gives_up_and_lets_the_socket_go() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let (stopped_tx, stopped) = oneshot::channel::<()>();
    let (eof_tx, eof) = oneshot::channel::<Instant>();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        // The login, answered, then `ready`.
        while let Some(Ok(message)) = ws.next().await {
            if message.is_text() {
                break;
            }
        }
        ws.send(Message::text(r#"{"op":10,"d":{"code":0,"user_id":"u1"}}"#))
            .await
            .unwrap();
        ws.send(Message::text(
            r#"{"op":11,"d":{"user_id":"u1","name":"alice","kind":"user","channels":[]}}"#,
        ))
        .await
        .unwrap();
        // Never read again, until the test says the user has given up;
        // then read everything the socket holds, to its end.
        let _ = stopped.await;
        let mut tcp = ws.into_inner();
        let mut buf = vec![0u8; 64 * 1024];
        while tcp.read(&mut buf).await.is_ok_and(|n| n > 0) {}
        let _ = eof_tx.send(Instant::now());
    });
    let user = TestUser::connect(&url, "t").await.unwrap();
    // Frames of 1 MiB until the writer gives up: the socket's buffers fill,
    // a write stalls, and the bound ends the writer (the queue of unsent
    // bytes refuses more meanwhile).
    let frame = format!(r#"{{"op":12,"d":{{"pad":"{}"}}}}"#, "p".repeat(1 << 20));
    let started = Instant::now();
    let gave_up = loop {
        assert!(started.elapsed() < WAIT, "the writer never gave up");
        match user.send_raw(&frame) {
            Ok(()) | Err(TestUserError::SendQueueFull { .. }) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(TestUserError::Closed) => break Instant::now(),
            Err(other) => panic!("{other:?}"),
        }
    };
    assert!(
        gave_up.duration_since(started) >= REQUEST_TIMEOUT,
        "only a write stalled for REQUEST_TIMEOUT ends the writer"
    );
    // A request fails at once instead of waiting for a reply.
    let heartbeat = tokio::time::timeout(Duration::from_secs(1), user.heartbeat())
        .await
        .expect("a request on a closed user returns at once");
    assert!(
        matches!(heartbeat, Err(TestUserError::Closed)),
        "{heartbeat:?}"
    );
    // The user still exists, yet the socket is gone: what the service
    // reads now ends.
    stopped_tx.send(()).unwrap();
    tokio::time::timeout(WAIT, eof)
        .await
        .expect("the user let go of its socket")
        .unwrap();
    drop(user);
}
