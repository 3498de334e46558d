//! A service that floods channel-key pushes while the bot's dispatch is
//! stuck: control pushes are never dropped, so what may wait is bounded by
//! `control_queue_bytes` and the client closes with 1008 past it, then
//! reconnects. Over real sockets, against a fake service (`tests/peer`).

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::atomic::Ordering;
use std::time::Duration;

use botlane::{Client, ClientOptions, Event, Events};
use futures_util::{SinkExt, StreamExt};
use peer::{
    disconnect_reason, emojis_after_reconnect, eventually, register_slow, serve, Slow, WAIT,
};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

/// Key pushes in the byte budget's flood: under the 4,096 control pushes
/// that may wait, so only a byte budget can close the session.
const FLOOD: usize = 3_000;

/// A client logged in on [`flood_keys`]' service, and what that service
/// reports.
struct Flood {
    client: Client,
    events: Events,
    /// Key pushes the service wrote, once the flood is over.
    written: mpsc::Receiver<usize>,
    /// The code of the client's close frame, when it sends one.
    closed: mpsc::Receiver<Option<u16>>,
    slow: Slow,
    _dir: tempfile::TempDir,
}

/// Logs a bot in on a service whose first session sends two `/slow`
/// invocations (the first holds the only handler permit until the gate
/// opens, the second holds dispatch waiting for it), then `flood` key
/// pushes, all queued behind them, and then answers requests until the
/// client goes; later sessions behave. The service reports how many key
/// pushes it wrote and the code of the client's close frame, if one comes;
/// the events are subscribed before login.
async fn flood_keys(flood: usize, options: impl FnOnce(ClientOptions) -> ClientOptions) -> Flood {
    let (written_tx, written) = mpsc::channel(1);
    let (closed_tx, closed) = mpsc::channel(1);
    let (addr, _) = serve(move |tcp, n| {
        let (written_tx, closed_tx) = (written_tx.clone(), closed_tx.clone());
        async move {
            let Some((ws, key, key_push)) = peer::first_session_with_key(tcp, n, "c1").await else {
                return;
            };
            let slow = key.seal(b"/slow", b"c1").unwrap();
            let (mut tx, mut rx) = ws.split();
            let _ = tx.send(Message::text(key_push.clone())).await;
            for i in 0..2 {
                let push = format!(
                    r#"{{"op":32,"d":{{"message":{{"id":"m{i}","channel_id":"c1","author_id":"u1","content":"{slow}","created_at":1}}}}}}"#
                );
                let _ = tx.send(Message::text(push)).await;
            }
            // Requests (heartbeats) are answered in between the flood's
            // frames; the client's close frame is reported.
            let (replies, mut outgoing) = mpsc::unbounded_channel::<String>();
            tokio::spawn(async move {
                while let Some(Ok(message)) = rx.next().await {
                    match message {
                        Message::Text(text) => {
                            let frame: serde_json::Value =
                                serde_json::from_str(text.as_str()).unwrap();
                            let op = frame["op"].as_u64().unwrap();
                            let _ = replies.send(format!(r#"{{"op":{op},"d":{{"code":0}}}}"#));
                        }
                        Message::Close(frame) => {
                            let _ = closed_tx.send(frame.map(|f| u16::from(f.code))).await;
                            return;
                        }
                        _ => {}
                    }
                }
            });
            let mut written = 0;
            for _ in 0..flood {
                while let Ok(reply) = outgoing.try_recv() {
                    let _ = tx.feed(Message::text(reply)).await;
                }
                if tx.send(Message::text(key_push.clone())).await.is_err() {
                    break;
                }
                written += 1;
            }
            let _ = written_tx.send(written).await;
            while let Some(reply) = outgoing.recv().await {
                if tx.send(Message::text(reply)).await.is_err() {
                    return;
                }
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // No heartbeats during the flood: every frame the client reads is the
    // service's login, `ready`, menu reply, pushes, or the next session's.
    let quiet = peer::options(addr, &dir)
        .heartbeat_interval(Duration::from_secs(5))
        .idle_timeout(Duration::from_secs(10));
    let client = Client::new(options(quiet.max_concurrent_handlers(1))).unwrap();
    let events = client.events();
    let slow = register_slow(&client);
    tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap();
    Flood {
        client,
        events,
        written,
        closed,
        slow,
        _dir: dir,
    }
}

/// Frames the client reads before the flood: the login reply, `ready`, the
/// menu reply, the first key push and the two invocations.
const BEFORE_FLOOD: u64 = 6;

impl Flood {
    /// Waits for the session to end over `limit` (as the reason names it)
    /// with a 1008 close frame; returns the frames the client had read.
    async fn closed_over(&mut self, limit: &str) -> u64 {
        let reason = disconnect_reason(&mut self.events).await;
        assert!(
            reason.contains(&format!("({limit}; closed with 1008)")),
            "{reason}"
        );
        let code = tokio::time::timeout(WAIT, self.closed.recv()).await;
        assert_eq!(
            code.expect("the client sends a close frame"),
            Some(Some(1008))
        );
        self.client.stats().frames_received
    }

    /// Opens the gate; the waiting invocation runs after the first.
    async fn both_invocations_run(&self) {
        self.slow.gate.send_replace(true);
        eventually("the second /slow to run", || {
            self.slow.started.load(Ordering::SeqCst) == 2
        })
        .await;
    }
}

#[tokio::test]
async fn key_pushes_past_control_queue_bytes_close_the_session_and_it_recovers() {
    const BUDGET: usize = 64 * 1024;
    let mut flood = flood_keys(FLOOD, |o| o.control_queue_bytes(BUDGET)).await;
    // A key push weighs ~160 bytes (ids and the wrapped key): ~410 fit
    // before the client closes, and it reads nothing more of the flood.
    let read = flood.closed_over("control_queue_bytes = 65536 bytes").await;
    assert!(
        read < (FLOOD / 2) as u64,
        "the client read {read} frames of a flood of {FLOOD} before closing"
    );
    flood.both_invocations_run().await;
    let emojis = emojis_after_reconnect(&flood.client).await;
    assert_eq!(emojis.len(), 1, "the next session is served");
    flood.client.close().await.unwrap();
}

#[tokio::test]
async fn the_same_flood_under_the_default_budget_waits_without_closing() {
    let mut flood = flood_keys(FLOOD, |o| o).await;
    let written = tokio::time::timeout(WAIT, flood.written.recv()).await;
    assert_eq!(written.expect("the flood ends"), Some(FLOOD));
    eventually("the whole flood to be read", || {
        flood.client.stats().frames_received >= BEFORE_FLOOD + FLOOD as u64
    })
    .await;
    // Each push is taken or refused as it is read: a close would follow
    // the last one at once.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(flood.closed.try_recv().is_err(), "no close frame");
    while let Ok(Some(event)) = flood.events.try_recv() {
        assert!(!matches!(event, Event::Disconnected { .. }), "{event:?}");
    }
    assert_eq!(
        flood.client.stats().connect_attempts,
        1,
        "never disconnected"
    );
    flood.both_invocations_run().await;
    flood.client.close().await.unwrap();
}

#[tokio::test]
async fn more_than_4096_waiting_key_pushes_close_the_session_whatever_their_bytes() {
    const COUNT: u64 = 4096;
    let mut flood = flood_keys(6_000, |o| o).await;
    // The 4,096 waiting key pushes and the one over, then at most the next
    // session's few frames.
    let read = flood.closed_over("4096 pushes").await;
    let closed_at = BEFORE_FLOOD + COUNT + 1;
    assert!(
        (closed_at..closed_at + 16).contains(&read),
        "the client read {read} frames before closing"
    );
    flood.both_invocations_run().await;
    assert_eq!(emojis_after_reconnect(&flood.client).await.len(), 1);
    flood.client.close().await.unwrap();
}
