//! A service that grows the bot's channel list without end: membership
//! pushes (op 34) past the cap, and channels whose ids or names are too
//! long to keep. Over real sockets, against a fake service
//! (`tests/peer`).

use crate::peer;

use std::time::Duration;

use peer::{behave, login, send, serve, upgrade};

/// The cap of the session's channel list (`session/membership.rs`).
const MAX_CHANNELS: usize = 10_000;

fn added(id: &str, name: &str) -> String {
    serde_json::json!({"op": 34, "d": {"channel": {"id": id, "server_id": "s1", "name": name}}})
        .to_string()
}

#[tokio::test]
async fn membership_pushes_past_the_cap_or_too_long_are_not_kept() {
    let (addr, _) = serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        // The ready lists one channel whose id is too long to keep.
        let long = "r".repeat(257);
        if login(&mut ws, n, &["c0", &long]).await.is_none() {
            return;
        }
        // Overlong: an id past the keystore's 256 bytes, a name past 1 KiB.
        send(&mut ws, added(&"i".repeat(257), "long id")).await;
        send(&mut ws, added("long-name", &"n".repeat(1025))).await;
        // One more than the cap, counting c0 from the ready.
        for i in 1..=MAX_CHANNELS {
            send(&mut ws, added(&format!("c{i}"), "a channel")).await;
        }
        // A channel already kept may still be renamed at the cap.
        send(&mut ws, added("c0", "renamed")).await;
        behave(&mut ws).await;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::options(addr, &dir)).await;
    let renamed = || {
        client
            .channels()
            .iter()
            .any(|c| c.id == "c0" && c.name == "renamed")
    };
    let deadline = tokio::time::Instant::now() + peer::WAIT;
    while !renamed() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the pushes were applied"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let channels = client.channels();
    assert_eq!(channels.len(), MAX_CHANNELS, "the list stops at its cap");
    assert!(channels
        .iter()
        .any(|c| c.id == format!("c{}", MAX_CHANNELS - 1)));
    assert!(
        !channels.iter().any(|c| c.id == format!("c{MAX_CHANNELS}")),
        "the channel past the cap is not kept"
    );
    assert!(
        channels
            .iter()
            .all(|c| c.id.len() <= 256 && c.name.len() <= 1024),
        "no overlong channel is kept, from the ready or an op 34"
    );
    assert_eq!(client.stats().sessions, 1, "the session goes on");
    client.close().await.unwrap();
}
