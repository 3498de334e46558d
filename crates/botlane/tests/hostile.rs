//! The client against hostile services over real sockets on loopback:
//! silent listeners, stalled handshakes, peers that go quiet, garbage,
//! oversize frames, floods, endless headers and reconnect storms. Timings
//! are short (connect 300 ms, idle 400 ms) and every bound generous; the
//! assertions are on structure: errors, events, counters, bytes written.

#![allow(clippy::unwrap_used)]

mod peer;
// Its `install` is for the suites alone in their process; this one captures
// on its own thread.
#[allow(dead_code)]
#[path = "support/capture.rs"]
mod capture;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::crypto::ChannelKey;
use botlane::{ClientError, ConnectErrorKind, Event};
use botlane::{EventRecvError, Events};
use futures_util::{SinkExt, StreamExt};
use peer::{behave, eventually, login, next_frame, send, serve, upgrade, WAIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

async fn next_event(events: &mut Events, pred: impl Fn(&Event) -> bool) -> Event {
    tokio::time::timeout(WAIT, async {
        loop {
            match events.recv().await {
                Ok(e) if pred(&e) => return e,
                Ok(_) | Err(EventRecvError::Lagged(_)) => {}
                Err(EventRecvError::Closed) => panic!("events closed"),
            }
        }
    })
    .await
    .expect("the expected event arrives in time")
}

fn disconnected_reason(e: &Event) -> Option<&str> {
    match e {
        Event::Disconnected {
            reason,
            will_reconnect: true,
        } => Some(reason),
        _ => None,
    }
}

#[tokio::test]
async fn a_silent_listener_fails_login_within_the_connect_timeout() {
    // Accepts TCP, never answers the upgrade.
    let (addr, accepted) = serve(|tcp, _| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(tcp);
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    peer::assert_login_times_out(
        peer::options(addr, &dir),
        &format!("ws://{addr}"),
        (Duration::from_millis(300), "300 ms"),
        "the websocket upgrade (the service accepted tcp but did not answer)",
    )
    .await;
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn reconnect_keeps_trying_through_a_stalled_peer_and_recovers() {
    let stalled = Arc::new(AtomicBool::new(false));
    let kill = Arc::new(Notify::new());
    let (addr, _) = {
        let stalled = stalled.clone();
        let kill = kill.clone();
        serve(move |tcp, n| {
            let stalled = stalled.clone();
            let kill = kill.clone();
            async move {
                if stalled.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    return;
                }
                let mut ws = upgrade(tcp).await;
                if login(&mut ws, n, &[]).await.is_none() {
                    return;
                }
                tokio::select! {
                    () = behave(&mut ws) => {}
                    () = kill.notified() => {}
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::options(addr, &dir)).await;
    let mut events = client.events();
    let before = client.stats().connect_attempts;

    stalled.store(true, Ordering::SeqCst);
    kill.notify_one();
    next_event(&mut events, |e| disconnected_reason(e).is_some()).await;
    // Each stalled attempt times out and the backoff goes on.
    eventually("three attempts against the stalled peer", || {
        client.stats().connect_attempts >= before + 3
    })
    .await;
    assert!(client.wait_until_connected(Duration::ZERO).await.is_err());

    stalled.store(false, Ordering::SeqCst);
    next_event(&mut events, |e| matches!(e, Event::Reconnected)).await;
    assert_eq!(client.stats().sessions, 2);
    client.wait_until_connected(WAIT).await.unwrap();
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_peer_that_goes_silent_mid_session_is_noticed_and_replaced() {
    let (addr, accepted) = serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        if login(&mut ws, n, &[]).await.is_none() {
            return;
        }
        if n == 1 {
            // Reads nothing, answers nothing, keeps the socket open.
            tokio::time::sleep(Duration::from_secs(60)).await;
        } else {
            behave(&mut ws).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::options(addr, &dir)).await;
    let mut events = client.events();
    let event = next_event(&mut events, |e| disconnected_reason(e).is_some()).await;
    assert_eq!(
        disconnected_reason(&event),
        Some("no frame from the service for 400 ms")
    );
    next_event(&mut events, |e| matches!(e, Event::Reconnected)).await;
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_healthy_quiet_session_is_never_cut_by_the_idle_timer() {
    let (addr, accepted) = peer::serve_well_behaved().await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::options(addr, &dir)).await;
    // Ten idle timeouts' worth of silence from the bot's side: heartbeats
    // (every 100 ms) and their replies keep it alive.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    assert_eq!(client.stats().sessions, 1);
    assert!(client.stats().frames_received >= 10, "{:?}", client.stats());
    client.close().await.unwrap();
}

#[tokio::test]
async fn malformed_frames_and_unknown_opcodes_are_ignored() {
    let (addr, accepted) = serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        if login(&mut ws, n, &[]).await.is_none() {
            return;
        }
        for text in [
            "not json at all",
            "[1,2,3]",
            r#"{"op":"ten","d":{}}"#,
            r#"{"op":70000,"d":{}}"#,
            r#"{"op":9999,"d":{"anything":true}}"#,
            r#"{"op":32,"d":{"message":"not an object"}}"#,
            r#"{"op":34,"d":{}}"#,
            r#"{"op":35,"d":{"channel_id":42}}"#,
            r#"{"op":50,"d":{"channel_id":"c9","from":"u","wrapped":{"bogus":1}}}"#,
            r#"{"op":240,"d":{"code":0,"emojis":[]}}"#,
        ] {
            send(&mut ws, text).await;
        }
        let _ = ws.send(Message::binary(vec![0u8, 1, 2, 3])).await;
        behave(&mut ws).await;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = peer::client(peer::options(addr, &dir)).await;
    let mut events = client.events();
    // The unsolicited op 240 reply above was consumed without a caller: the
    // next caller gets its own reply, with its one emoji.
    eventually("the garbage to arrive", || {
        client.stats().frames_received >= 14
    })
    .await;
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        !matches!(events.try_recv(), Ok(Some(Event::Disconnected { .. }))),
        "the session survived the garbage"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    assert_eq!(client.stats().sessions, 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn an_oversize_frame_is_closed_with_1009() {
    let close_code = Arc::new(AtomicU64::new(0));
    let (addr, _) = {
        let close_code = close_code.clone();
        serve(move |tcp, n| {
            let close_code = close_code.clone();
            async move {
                let Some(ws) = peer::first_session_else_behave(tcp, n).await else {
                    return;
                };
                let (mut tx, mut rx) = ws.split();
                let big = format!(
                    r#"{{"op":33,"d":{{"kind":"{}","channel_id":"c","message_id":"m","from":"u"}}}}"#,
                    "x".repeat(2 * 1024 * 1024)
                );
                tokio::spawn(async move {
                    let _ = tx.send(Message::text(big)).await;
                });
                while let Some(Ok(msg)) = rx.next().await {
                    if let Message::Close(Some(frame)) = msg {
                        close_code.store(u16::from(frame.code).into(), Ordering::SeqCst);
                        return;
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    // Subscribed before login: the oversize frame follows the login at once.
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("login finishes")
        .unwrap();
    let event = next_event(&mut events, |e| disconnected_reason(e).is_some()).await;
    let reason = disconnected_reason(&event).unwrap();
    assert!(
        reason.starts_with("the service sent a message of at least ")
            && reason.ends_with("over the limit of 1048576 bytes (closed with 1009)"),
        "{reason}"
    );
    eventually("the peer to see the close frame", || {
        close_code.load(Ordering::SeqCst) != 0
    })
    .await;
    assert_eq!(
        close_code.load(Ordering::SeqCst),
        u64::from(u16::from(CloseCode::Size))
    );
    next_event(&mut events, |e| matches!(e, Event::Reconnected)).await;
    client.close().await.unwrap();
}

/// A service that floods `flood` message pushes while dispatch cannot keep
/// up: the first `/slow` takes the only handler permit and waits for a gate
/// that never opens, the second holds dispatch waiting for that permit, and
/// the rest queue (`/slow` too, or plain text of `filler` bytes). Returns
/// the client once the whole flood is read, a reply has flowed during it
/// and the first handler has started, with its `/slow` (held shut) and
/// the keystore's directory.
async fn flood_while_dispatch_waits(
    flood: usize,
    filler: Option<usize>,
    options: impl FnOnce(botlane::ClientOptions) -> botlane::ClientOptions,
) -> (botlane::Client, peer::Slow, tempfile::TempDir) {
    let key = Arc::new(ChannelKey::generate().unwrap());
    let sent = Arc::new(AtomicUsize::new(0));
    let (addr, _) = {
        let key = key.clone();
        let sent = sent.clone();
        serve(move |tcp, n| {
            let key = key.clone();
            let sent = sent.clone();
            async move {
                let mut ws = upgrade(tcp).await;
                let Some(public_key) = login(&mut ws, n, &["c1"]).await else {
                    return;
                };
                send(&mut ws, peer::key_push(&key, &public_key, "c1")).await;
                let slow = key.seal(b"/slow", b"c1").unwrap();
                let filler = filler.map(|bytes| key.seal(&vec![b'x'; bytes], b"c1").unwrap());
                let (mut tx, mut rx) = ws.split();
                let (replies, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<String>();
                // Requests are answered in between the flood's frames.
                tokio::spawn(async move {
                    while let Some(Ok(Message::Text(text))) = rx.next().await {
                        let frame: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
                        let op = frame["op"].as_u64().unwrap();
                        let reply = if op == 240 {
                            r#"{"op":240,"d":{"code":0,"emojis":[{"name":"ok","emoji":"👌"}]}}"#.to_owned()
                        } else {
                            format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)
                        };
                        if replies.send(reply).is_err() {
                            return;
                        }
                    }
                });
                for i in 0..flood {
                    while let Ok(reply) = outgoing.try_recv() {
                        let _ = tx.feed(Message::text(reply)).await;
                    }
                    let content = match &filler {
                        Some(filler) if i >= 2 => filler,
                        _ => &slow,
                    };
                    let push = format!(
                        r#"{{"op":32,"d":{{"message":{{"id":"m{i}","channel_id":"c1","author_id":"u1","content":"{content}","created_at":1}}}}}}"#
                    );
                    if tx.feed(Message::text(push)).await.is_err() {
                        return;
                    }
                    sent.fetch_add(1, Ordering::SeqCst);
                }
                let _ = tx.flush().await;
                while let Some(reply) = outgoing.recv().await {
                    if tx.send(Message::text(reply)).await.is_err() {
                        return;
                    }
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let options = options(peer::options(addr, &dir).max_concurrent_handlers(1));
    let client = botlane::Client::new(options).unwrap();
    let slow = peer::register_slow(&client);
    tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap();

    // A reply arrives while the flood is under way, handlers are all busy
    // and dispatch is stuck waiting for one.
    let emojis = tokio::time::timeout(WAIT, client.fetch_emojis()).await;
    assert_eq!(emojis.expect("the reply flows").unwrap().len(), 1);
    eventually("the whole flood to be read", || {
        sent.load(Ordering::SeqCst) == flood && client.stats().frames_received >= flood as u64
    })
    .await;
    eventually("the first handler to start", || {
        slow.started.load(Ordering::SeqCst) == 1
    })
    .await;
    (client, slow, dir)
}

#[tokio::test]
async fn a_push_flood_stays_bounded_and_replies_still_flow() {
    const FLOOD: usize = 3000;
    const CAPACITY: usize = 16;
    let (client, slow, _dir) =
        flood_while_dispatch_waits(FLOOD, None, |o| o.push_queue_capacity(CAPACITY)).await;
    let stats = client.stats();
    assert!(stats.push_queue_len <= CAPACITY, "{stats:?}");
    assert!(stats.push_queue_peak <= CAPACITY, "{stats:?}");
    assert_eq!(stats.handlers_running, 1, "{stats:?}");
    assert_eq!(
        slow.started.load(Ordering::SeqCst),
        1,
        "one handler ran, the rest wait"
    );
    // Everything that was not queued, running, or held by dispatch was dropped and counted.
    assert!(
        stats.pushes_dropped >= (FLOOD - CAPACITY - 2) as u64,
        "{stats:?}"
    );
    assert!(stats.pushes_dropped <= FLOOD as u64, "{stats:?}");
    // And the session is still up and answering.
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    assert_eq!(stats.sessions, 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_flood_of_large_messages_is_bounded_by_bytes_not_count() {
    const FLOOD: usize = 40;
    // Each sealed filler is ~267 KB of base64: a 1 MiB budget holds three,
    // beside the second `/slow` while it waits in the queue for dispatch.
    const FILLER: usize = 200_000;
    let (client, slow, _dir) = flood_while_dispatch_waits(FLOOD, Some(FILLER), |o| {
        o.push_queue_capacity(1024).push_queue_bytes(1024 * 1024)
    })
    .await;
    let stats = client.stats();
    assert!(stats.push_queue_peak <= 4, "{stats:?}");
    assert!(stats.push_queue_peak >= 1, "{stats:?}");
    assert_eq!(slow.started.load(Ordering::SeqCst), 1);
    assert!(stats.pushes_dropped >= (FLOOD - 4 - 2) as u64, "{stats:?}");
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    assert_eq!(stats.sessions, 1);
    client.close().await.unwrap();
}

/// The most bytes the kernel may buffer between a writer and a reader on
/// loopback: the writer's send buffer and the reader's receive buffer at
/// their largest.
fn socket_buffers() -> u64 {
    peer::most_of("/proc/sys/net/ipv4/tcp_wmem") + peer::most_of("/proc/sys/net/ipv4/tcp_rmem")
}

#[tokio::test]
async fn an_endless_handshake_header_fails_the_connect_with_bounded_reading() {
    let written = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let (addr, _) = {
        let written = written.clone();
        let done = done.clone();
        serve(move |mut tcp, _| {
            let written = written.clone();
            let done = done.clone();
            async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nX-Endless: ";
                let chunk = vec![b'a'; 16 * 1024];
                let mut total = 0u64;
                if tcp.write_all(head).await.is_ok() {
                    total += head.len() as u64;
                    while tcp.write_all(&chunk).await.is_ok() {
                        total += chunk.len() as u64;
                        written.store(total, Ordering::SeqCst);
                    }
                }
                written.store(total, Ordering::SeqCst);
                done.notify_one();
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let options = peer::options(addr, &dir).connect_timeout(Duration::from_secs(10));
    let client = botlane::Client::new(options).unwrap();
    let err = tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap_err();
    let ClientError::Connect(connect) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(connect.kind(), ConnectErrorKind::Handshake, "{err}");
    assert!(
        err.to_string()
            .ends_with("the upgrade response is over 16384 bytes without ending its headers"),
        "{err}"
    );
    tokio::time::timeout(WAIT, done.notified())
        .await
        .expect("the client hung up, so the peer's writes fail");
    let written = written.load(Ordering::SeqCst);
    assert!(
        written <= 16 * 1024 + socket_buffers(),
        "the peer wrote {written} bytes before the client hung up"
    );
}

#[tokio::test]
async fn a_service_that_drops_every_session_after_login_is_not_hammered() {
    let logins = Arc::new(AtomicUsize::new(0));
    let (addr, _) = {
        let logins = logins.clone();
        serve(move |tcp, n| {
            let logins = logins.clone();
            async move {
                let mut ws = upgrade(tcp).await;
                if login(&mut ws, n, &[]).await.is_some() {
                    logins.fetch_add(1, Ordering::SeqCst);
                    let _ = ws.close(None).await;
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let options = peer::options(addr, &dir)
        .reconnect_delays(Duration::from_millis(20), Duration::from_millis(320));
    let (client, mut events) = peer::client_with_events(options).await;
    let event = next_event(&mut events, |e| disconnected_reason(e).is_some()).await;
    let reason = disconnected_reason(&event).unwrap();
    assert!(
        reason.starts_with("the service closed the connection"),
        "{reason}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let count = logins.load(Ordering::SeqCst);
    // The delays keep doubling (10–20, 20–40, … up to 160–320 ms): at most
    // about 16 logins fit in 2 s; resetting after each login would allow ~100.
    assert!(count >= 3, "it keeps trying: {count} logins");
    assert!(count <= 20, "{count} logins in 2 s: the backoff was reset");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_service_closing_with_a_code_is_reported_in_words() {
    let (addr, _) = serve(|tcp, n| async move {
        let mut ws = upgrade(tcp).await;
        if n == 1 {
            // Like the devserver's pre-login timeout, before any login.
            let _ = next_frame(&mut ws).await;
            let _ = ws
                .close(Some(tokio_tungstenite::tungstenite::protocol::CloseFrame {
                    code: CloseCode::Policy,
                    reason: "no login within 5 s".into(),
                }))
                .await;
            return;
        }
        if login(&mut ws, n, &[]).await.is_some() {
            let _ = ws
                .close(Some(tokio_tungstenite::tungstenite::protocol::CloseFrame {
                    code: CloseCode::Away,
                    reason: "".into(),
                }))
                .await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    let err = tokio::time::timeout(WAIT, client.login())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the connection closed before the reply to opcode 10 arrived: \
         the service closed the connection (1008: no login within 5 s)"
    );
    let (client, mut events) = peer::client_with_events(peer::options(addr, &dir)).await;
    let event = next_event(&mut events, |e| disconnected_reason(e).is_some()).await;
    assert_eq!(
        disconnected_reason(&event),
        Some("the service closed the connection (1001)")
    );
    client.close().await.unwrap();
}

/// A flood of pushes for a channel the bot holds no key for once wrote one
/// line and counted the rest nowhere: each is counted now, and the burst's
/// tail, which no later line carries, is written at shutdown.
#[tokio::test(flavor = "current_thread")]
async fn a_flood_of_messages_without_a_key_is_counted_to_the_last_one() {
    const FLOOD: u64 = 2000;
    // The client runs on this thread: a thread-local subscriber sees it all.
    let capture = capture::Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(capture.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let (addr, _) = serve(|tcp, n| async move {
        let Some(mut ws) = peer::first_session_else_behave(tcp, n).await else {
            return;
        };
        let content = "A".repeat(56);
        for i in 0..FLOOD {
            let push = format!(
                r#"{{"op":32,"d":{{"message":{{"id":"m{i}","channel_id":"elsewhere","author_id":"u1","content":"{content}","created_at":1}}}}}}"#
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
        .filter(|l| l.contains("no key for its channel"))
        .collect();
    assert_eq!(first.len(), 1, "{logged}");
    assert!(first[0].contains("swallowed=0"), "{}", first[0]);

    client.close().await.unwrap();
    let logged = capture.text();
    let tail: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("swallowed since its last line"))
        .collect();
    assert_eq!(tail.len(), 1, "{logged}");
    assert!(
        tail[0].contains("no key for its channel")
            && tail[0].contains(&format!("swallowed={}", FLOOD - 1)),
        "{}",
        tail[0]
    );
}
