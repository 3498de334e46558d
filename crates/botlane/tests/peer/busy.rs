//! A service and a client that keep dispatch busy: the first session's
//! `/slow` invocations hold the only handler permit, so what the service
//! sends next waits for dispatch in the push queue (`hostile_reconnect.rs`,
//! `hostile_reconnect_order.rs`).

use std::sync::Arc;

use tokio::sync::Notify;

use super::{behave, send, WAIT};

/// A message push (op 32) of `content`, sealed with `key` for channel `c1`.
pub fn message_push(key: &botlane::crypto::ChannelKey, id: &str, content: &str) -> String {
    message_push_in(key, "c1", id, content)
}

/// A message push (op 32) of `content`, sealed with `key` for `channel`.
pub fn message_push_in(
    key: &botlane::crypto::ChannelKey,
    channel: &str,
    id: &str,
    content: &str,
) -> String {
    let sealed = key.seal(content.as_bytes(), channel.as_bytes()).unwrap();
    format!(
        r#"{{"op":32,"d":{{"message":{{"id":"{id}","channel_id":"{channel}","author_id":"u1","content":"{sealed}","created_at":1}}}}}}"#
    )
}

/// The ids of the channels `client` lists now.
pub fn channel_ids(client: &botlane::Client) -> Vec<String> {
    client.channels().into_iter().map(|c| c.id).collect()
}

/// The first session of a service that keeps dispatch busy: the bot in
/// `c1` with its key, three `/slow` messages, and the end once `kill` is
/// notified.
pub async fn first_session_keeping_dispatch_busy(tcp: tokio::net::TcpStream, kill: Arc<Notify>) {
    let Some((mut ws, key, key_push)) = super::first_session_with_key(tcp, 1, "c1").await else {
        return;
    };
    send(&mut ws, key_push).await;
    for id in ["m0", "m1", "m2"] {
        send(&mut ws, message_push(&key, id, "/slow")).await;
    }
    tokio::select! {
        () = behave(&mut ws) => {}
        () = kill.notified() => {}
    }
}

/// A client of `addr` logged in to [`first_session_keeping_dispatch_busy`]
/// with one handler permit, once dispatch is busy: `m0` holds the permit,
/// dispatch holds `m1` waiting for it, `m2` waits in the queue. With its
/// `/slow` gate and a subscription taken before the login.
pub async fn client_with_dispatch_busy(
    addr: std::net::SocketAddr,
    dir: &tempfile::TempDir,
) -> (botlane::Client, super::Slow, botlane::Events) {
    client_with_dispatch_busy_and(addr, dir, |options| options).await
}

/// [`client_with_dispatch_busy`], its options changed by `change`.
pub async fn client_with_dispatch_busy_and(
    addr: std::net::SocketAddr,
    dir: &tempfile::TempDir,
    change: impl FnOnce(botlane::ClientOptions) -> botlane::ClientOptions,
) -> (botlane::Client, super::Slow, botlane::Events) {
    let options = change(super::patient(super::options(addr, dir)).max_concurrent_handlers(1));
    let client = botlane::Client::new(options).unwrap();
    let slow = super::register_slow(&client);
    let (events, mut taken) = (client.events(), client.events());
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(botlane::Event::Message(m)) = taken.recv().await
                && m.id == "m1"
            {
                return;
            }
        }
    })
    .await
    .expect("dispatch takes the second message");
    assert_eq!(channel_ids(&client), ["c1"]);
    (client, slow, events)
}
