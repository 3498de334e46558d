//! A rate-limited warning counts what it swallows, to the last one: a flood
//! of pushes for a channel the bot holds no key for, from a fake service
//! (`tests/peer`), writes one line, and the burst's tail, which no later
//! line carries, is written at shutdown. The lines counted are those naming
//! its own channel or count: the binary's other tests log beside it.

#![allow(clippy::unwrap_used)]

use crate::{capture, peer};

use capture::Capture;
use peer::{behave, eventually, send, serve};

/// The channel of the flood, named in its warning.
const CHANNEL: &str = "swallowed-log-no-key";

/// It once wrote one line and counted the rest nowhere.
#[tokio::test]
async fn a_flood_of_messages_without_a_key_is_counted_to_the_last_one() {
    const FLOOD: u64 = 2000;
    let capture = Capture::global();
    let (addr, _) = serve(|tcp, n| async move {
        let Some(mut ws) = peer::first_session_else_behave(tcp, n).await else {
            return;
        };
        let content = "A".repeat(56);
        for i in 0..FLOOD {
            let push = format!(
                r#"{{"op":32,"d":{{"message":{{"id":"m{i}","channel_id":"{CHANNEL}","author_id":"u1","content":"{content}","created_at":1}}}}}}"#
            );
            if !send(&mut ws, push).await {
                return;
            }
        }
        behave(&mut ws).await;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // Room for the whole flood: none of it is dropped for a full queue.
    let options = peer::options(addr, &dir).push_queue_capacity(4096);
    let client = peer::client(peer::patient(options)).await;
    eventually("the whole flood to be dropped for want of a key", || {
        client.stats().messages_without_key == FLOOD
    })
    .await;
    assert_eq!(client.stats().warnings_swallowed, FLOOD - 1);
    let logged = capture.text();
    let first: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("no key for its channel") && l.contains(CHANNEL))
        .collect();
    assert_eq!(first.len(), 1, "{first:#?}");
    assert!(first[0].contains("swallowed=0"), "{}", first[0]);

    client.close().await.unwrap();
    let logged = capture.text();
    let tail: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("swallowed since its last line"))
        .filter(|l| l.contains(&format!("swallowed={}", FLOOD - 1)))
        .collect();
    assert_eq!(tail.len(), 1, "{tail:#?}");
    assert!(tail[0].contains("no key for its channel"), "{}", tail[0]);
}
