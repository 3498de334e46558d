//! Membership and channel keys (decision D3), against a scripted service on
//! loopback: a key is accepted only for a channel the bot is in (from
//! `ready` and op 34), and forgotten, in memory and in the keystore file,
//! on op 35 and when a new `ready` no longer lists its channel.

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::Arc;
use std::time::Duration;

use botlane::crypto::ChannelKey;
use botlane::keystore::Keystore;
use botlane::Event;
use botlane::Events;
use peer::{behave, login, send, serve, upgrade, WAIT};

struct Keys {
    c1: ChannelKey,
    c2: ChannelKey,
    c3: ChannelKey,
}

fn message(key: &ChannelKey, channel: &str, id: &str) -> String {
    let content = key.seal(id.as_bytes(), channel.as_bytes()).unwrap();
    serde_json::json!({"op": 32, "d": {"message": {
        "id": id, "channel_id": channel, "author_id": "u1", "content": content, "created_at": 1
    }}})
    .to_string()
}

/// The ids of the messages delivered until (and including) `last`.
async fn delivered_until(events: &mut Events, last: &str) -> Vec<String> {
    tokio::time::timeout(WAIT, async {
        let mut ids = Vec::new();
        loop {
            if let Ok(Event::Message(m)) = events.recv().await {
                assert_eq!(m.content, m.id, "decrypted with the right key");
                ids.push(m.id.clone());
                if m.id == last {
                    return ids;
                }
            }
        }
    })
    .await
    .expect("the marker message arrives")
}

fn stored_channels(path: &std::path::Path) -> Vec<String> {
    let keystore = Keystore::open_or_create(path).unwrap();
    let mut ids: Vec<String> = keystore.channel_ids().map(str::to_owned).collect();
    ids.sort();
    ids
}

/// The keystore's channels once its background write has landed (writes
/// are asynchronous even with a zero window), or what it held after `WAIT`.
async fn eventually_stored(path: &std::path::Path, expected: &[&str]) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let stored = stored_channels(path);
        if stored == expected || tokio::time::Instant::now() > deadline {
            return stored;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn keys_follow_membership() {
    let keys = Arc::new(Keys {
        c1: ChannelKey::generate().unwrap(),
        c2: ChannelKey::generate().unwrap(),
        c3: ChannelKey::generate().unwrap(),
    });
    let (addr, _) = {
        let keys = keys.clone();
        serve(move |tcp, n| {
            let keys = keys.clone();
            async move {
                let mut ws = upgrade(tcp).await;
                if n == 1 {
                    let Some(pk) = login(&mut ws, n, &["c1"]).await else {
                        return;
                    };
                    for frame in [
                        peer::key_push(&keys.c1, &pk, "c1"),
                        // Not a member of c2 yet: refused, so m1 cannot be read.
                        peer::key_push(&keys.c2, &pk, "c2"),
                        message(&keys.c2, "c2", "m1"),
                        r#"{"op":34,"d":{"channel":{"id":"c2","server_id":"s1","name":"c2"}}}"#
                            .to_owned(),
                        peer::key_push(&keys.c2, &pk, "c2"),
                        message(&keys.c2, "c2", "m2"),
                        // Removed from c1: its key goes, so m3 cannot be read.
                        r#"{"op":35,"d":{"channel_id":"c1"}}"#.to_owned(),
                        message(&keys.c1, "c1", "m3"),
                        message(&keys.c2, "c2", "m4"),
                    ] {
                        send(&mut ws, frame).await;
                    }
                    // Wait for the test to look, then drop the session.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let _ = ws.close(None).await;
                } else {
                    // The new session's ready lists c3 only: c2's key goes.
                    let Some(pk) = login(&mut ws, n, &["c3"]).await else {
                        return;
                    };
                    for frame in [
                        message(&keys.c2, "c2", "m5"),
                        peer::key_push(&keys.c3, &pk, "c3"),
                        message(&keys.c3, "c3", "m6"),
                    ] {
                        send(&mut ws, frame).await;
                    }
                    behave(&mut ws).await;
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k");
    let client = botlane::Client::new(
        peer::options(addr, &dir)
            .idle_timeout(Duration::from_secs(5))
            .keystore_save_window(Duration::ZERO),
    )
    .unwrap();
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap();

    assert_eq!(delivered_until(&mut events, "m4").await, ["m2", "m4"]);
    let channels: Vec<String> = client.channels().into_iter().map(|c| c.id).collect();
    assert_eq!(channels, ["c2"]);
    assert_eq!(
        eventually_stored(&path, &["c2"]).await,
        ["c2"],
        "c1's key left the keystore"
    );

    assert_eq!(delivered_until(&mut events, "m6").await, ["m6"]);
    let channels: Vec<String> = client.channels().into_iter().map(|c| c.id).collect();
    assert_eq!(channels, ["c3"]);
    assert_eq!(
        eventually_stored(&path, &["c3"]).await,
        ["c3"],
        "c2's key left the keystore"
    );
    client.close().await.unwrap();
}
