//! A service that stays alive (it answers heartbeats) but never answers
//! one opcode: without request ids the client keeps a slot per request to
//! keep replies in order, so such a service would grow them without end.
//! The client ends the connection once the oldest has waited twice the
//! request timeout. Over real sockets, against a fake service
//! (`tests/peer`).

mod peer;

use std::sync::atomic::Ordering;
use std::time::Duration;

use botlane::ClientError;
use peer::{first_session_else_behave, next_frame, send, serve};

#[tokio::test]
async fn a_service_that_never_answers_an_opcode_is_closed_and_replaced() {
    let (addr, accepted) = serve(|tcp, n| async move {
        let Some(mut ws) = first_session_else_behave(tcp, n).await else {
            return;
        };
        // The first session: every request answered but op 240.
        while let Some(frame) = next_frame(&mut ws).await {
            let Some(op) = frame["op"].as_u64() else {
                continue;
            };
            if op != 240 && !send(&mut ws, format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)).await {
                return;
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let options = peer::options(addr, &dir).request_timeout(Duration::from_millis(300));
    let client = peer::client(options).await;
    let mut events = client.events();
    let unanswered = client.fetch_emojis().await;
    assert!(
        matches!(unanswered, Err(ClientError::Timeout { opcode: 240 })),
        "{unanswered:?}"
    );
    let ended = peer::disconnect_reason(&mut events).await;
    assert!(
        ended.contains("unanswered") && ended.contains("opcode 240"),
        "{ended}"
    );
    // The next session answers, and the client uses it.
    assert_eq!(peer::emojis_after_reconnect(&client).await.len(), 1);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    client.shutdown();
}
