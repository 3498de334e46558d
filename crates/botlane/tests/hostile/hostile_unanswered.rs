//! A service that stays alive but never answers one opcode: without
//! request ids the client keeps a slot per request to keep replies in
//! order, so such a service would grow them without end. The client ends
//! the connection once the oldest has waited twice the request timeout, or
//! once 65,536 of one opcode wait, whichever comes first. Over real
//! sockets, against a fake service (`tests/peer`).

use crate::peer;

use std::sync::atomic::Ordering;
use std::time::Duration;

use botlane::ClientError;
use futures_util::future::join_all;
use peer::{first_session_else_behave, next_frame, send, serve};
use tokio::net::TcpStream;

/// The most requests of one opcode the client leaves unanswered
/// (`MAX_UNANSWERED` in `src/transport/pending.rs`).
const MAX_UNANSWERED: usize = 65_536;

/// The first session answers every request but op 240; later ones behave.
async fn all_but_240_on_the_first_session(tcp: TcpStream, n: usize) {
    let Some(mut ws) = first_session_else_behave(tcp, n).await else {
        return;
    };
    while let Some(frame) = next_frame(&mut ws).await {
        let Some(op) = frame["op"].as_u64() else {
            continue;
        };
        if op != 240 && !send(&mut ws, format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)).await {
            return;
        }
    }
}

/// One request of op 240 left unanswered while the heartbeats are answered
/// (so the session stays alive): the time rule, twice the request timeout
/// checked at each heartbeat, ends the session.
#[tokio::test]
async fn a_service_that_never_answers_an_opcode_is_closed_and_replaced() {
    let (addr, accepted) = serve(all_but_240_on_the_first_session).await;
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
    client.close().await.unwrap();
}

/// 65,537 requests of op 240 at once, one more than the client leaves
/// unanswered, to a service that answers everything else. The request
/// timeout (and with it the time rule) and the idle timeout are far beyond
/// the test, and there are no heartbeats: only the count backstop can end
/// the session, which it does with 1008, naming the count and the opcode.
/// Every caller is failed rather than left to its request timeout (the
/// outgoing queue makes callers wait, it refuses none), and the next
/// session is served.
#[tokio::test]
async fn a_service_leaving_65536_requests_of_an_opcode_unanswered_is_closed_and_replaced() {
    let (addr, accepted) = serve(all_but_240_on_the_first_session).await;
    let dir = tempfile::tempdir().unwrap();
    let options = peer::patient(peer::options(addr, &dir));
    let client = peer::client(options).await;
    let mut events = client.events();
    // A task each: 65,537 futures polled inside one task (`join_all`) took
    // eight times as long in a debug build.
    let requests = join_all((0..=MAX_UNANSWERED).map(|_| {
        let client = client.clone();
        tokio::spawn(async move { client.fetch_emojis().await })
    }));
    // A crowd's bound: 1.3 s here, far more on a loaded debug CI.
    let failed = tokio::time::timeout(4 * peer::WAIT, requests)
        .await
        .expect("every request returns once the connection is closed");
    for result in failed {
        let result = result.unwrap();
        assert!(
            matches!(result, Err(ClientError::ConnectionClosed { opcode: 240 })),
            "{result:?}"
        );
    }
    assert_eq!(
        peer::disconnect_reason(&mut events).await,
        format!("{MAX_UNANSWERED} requests of opcode 240 went unanswered (closed with 1008)")
    );
    assert_eq!(peer::emojis_after_reconnect(&client).await.len(), 1);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    client.close().await.unwrap();
}
