//! The client against hostile services over real sockets on loopback:
//! silent listeners, stalled handshakes, peers that go quiet, garbage,
//! oversize frames, floods, endless headers and reconnect storms, and a
//! first login against a service that is down, busy or restarting. Timings
//! are short (connect 300 ms, idle 400 ms) and every bound generous; the
//! assertions are on structure: errors, events, counters, bytes written.

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::crypto::ChannelKey;
use botlane::{ClientError, ConnectErrorKind, Event};
use botlane::{EventRecvError, Events};
use futures_util::{SinkExt, StreamExt};
use peer::{behave, eventually, login, next_frame, send, serve, upgrade, WAIT};
use tokio::io::AsyncWriteExt;
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
                if !peer::read_request_head(&mut tcp).await {
                    return;
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
    // One attempt: the first login would otherwise be tried again.
    let once = peer::options(addr, &dir).login_deadline(Duration::ZERO);
    let client = botlane::Client::new(once).unwrap();
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

// A first login against a service that is down, busy or restarting: what
// fails for a reason that may pass is tried again, within the login
// deadline; what will not pass fails at once. Attempts are counted, and
// timed, where the service sees them.

/// Every `LoginFailed` waiting in `events`, as `(attempt, reason, retry_in)`.
fn login_failures(events: &mut Events) -> Vec<(u32, String, Duration)> {
    let mut failures = Vec::new();
    while let Ok(Some(event)) = events.try_recv() {
        if let Event::LoginFailed {
            attempt,
            reason,
            retry_in,
        } = event
        {
            failures.push((attempt, reason, retry_in));
        }
    }
    failures
}

#[tokio::test]
async fn a_first_login_makes_no_attempt_before_the_retry_after_of_a_503() {
    let arrivals = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (addr, accepted) = {
        let arrivals = arrivals.clone();
        serve(move |tcp, n| {
            // Taken as the service accepts the connection.
            arrivals.lock().unwrap().push(std::time::Instant::now());
            async move {
                if n == 1 {
                    return peer::refuse_upgrade(tcp, "503 Service Unavailable", Some("2")).await;
                }
                let mut ws = upgrade(tcp).await;
                if login(&mut ws, n, &[]).await.is_some() {
                    behave(&mut ws).await;
                }
            }
        })
        .await
    };
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the login returns")
        .expect("the second attempt logs in");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    let arrivals = arrivals.lock().unwrap().clone();
    let waited = arrivals[1] - arrivals[0];
    assert!(
        waited >= Duration::from_secs(2),
        "tried again after {waited:?}"
    );
    let failures = login_failures(&mut events);
    let [(1, reason, retry_in)] = &failures[..] else {
        panic!("{failures:?}");
    };
    assert_eq!(
        reason,
        &format!(
            "could not connect to the realtime wire at ws://{addr}: \
             the service answered the upgrade with http status 503 instead of 101"
        )
    );
    assert!(
        *retry_in >= Duration::from_secs(2) && *retry_in <= Duration::from_secs(3),
        "{retry_in:?}: the Retry-After, spread over up to half as long again"
    );
    client.close().await.unwrap();
}

/// A bot started before its service, which then comes up and is busy for
/// a while: refused connections, a connection dropped during the upgrade,
/// a 502, a connection closed before the login's reply and a login
/// answered `-9` are each tried again, and reported in words, in order;
/// the next attempt logs in.
#[tokio::test]
async fn a_first_login_waits_out_a_service_that_is_down_then_busy() {
    let reserved = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = reserved.local_addr().unwrap();
    drop(reserved);
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    let mut events = client.events();
    let logging_in = tokio::spawn({
        let client = client.clone();
        async move { client.login().await }
    });
    // The service comes up once the bot has been refused at least once.
    let first = next_event(&mut events, |e| matches!(e, Event::LoginFailed { .. })).await;
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let (_, accepted) = peer::serve_on(listener, |tcp, n| async move {
        match n {
            // Hung up on before the upgrade is read.
            1 => drop(tcp),
            2 => peer::refuse_upgrade(tcp, "502 Bad Gateway", None).await,
            3 => {
                let mut ws = upgrade(tcp).await;
                if peer::read_login(&mut ws).await.is_some() {
                    let _ = ws.close(None).await;
                }
            }
            4 => {
                let mut ws = upgrade(tcp).await;
                if peer::read_login(&mut ws).await.is_some() {
                    send(&mut ws, r#"{"op":10,"d":{"code":-9}}"#).await;
                    while next_frame(&mut ws).await.is_some() {}
                }
            }
            _ => {
                let mut ws = upgrade(tcp).await;
                if login(&mut ws, n, &[]).await.is_some() {
                    behave(&mut ws).await;
                }
            }
        }
    });
    tokio::time::timeout(WAIT, logging_in)
        .await
        .expect("the login returns")
        .unwrap()
        .expect("the fifth connection logs in");
    assert_eq!(accepted.load(Ordering::SeqCst), 5);
    let mut failures = login_failures(&mut events);
    let Event::LoginFailed {
        attempt,
        reason,
        retry_in,
    } = first
    else {
        unreachable!("picked by next_event");
    };
    failures.insert(0, (attempt, reason, retry_in));
    let attempts: Vec<u32> = failures.iter().map(|(attempt, _, _)| *attempt).collect();
    let expected: Vec<u32> = (1..=attempts.len() as u32).collect();
    assert_eq!(attempts, expected, "numbered from 1, each one reported");
    let reasons: Vec<&str> = failures.iter().map(|(_, r, _)| r.as_str()).collect();
    let [refusals @ .., hung_up, status, closed, busy] = &reasons[..] else {
        panic!("{reasons:?}");
    };
    assert!(!refusals.is_empty(), "{reasons:?}");
    for refused in refusals {
        assert!(
            refused.contains(": no address accepted a tcp connection ("),
            "{refused}"
        );
    }
    assert!(hung_up.contains("websocket upgrade"), "{hung_up}");
    assert!(
        status.ends_with("http status 502 instead of 101"),
        "{status}"
    );
    assert!(
        closed.starts_with("the connection closed before the reply to opcode 10 arrived"),
        "{closed}"
    );
    assert_eq!(*busy, "the service refused opcode 10 with code -9");
    client.close().await.unwrap();
}

/// A service that answers every upgrade with `status` (and `Retry-After`).
async fn serve_refusing(
    status: &'static str,
    retry_after: Option<&'static str>,
) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    serve(move |tcp, _| peer::refuse_upgrade(tcp, status, retry_after)).await
}

#[tokio::test]
async fn what_will_not_pass_is_not_tried_again() {
    // A keystore directory per client.
    let dirs: Vec<_> = (0..5).map(|_| tempfile::tempdir().unwrap()).collect();
    let login_once = |options: botlane::ClientOptions| async move {
        let client = botlane::Client::new(options).unwrap();
        let mut events = client.events();
        let err = tokio::time::timeout(WAIT, client.login())
            .await
            .expect("the login returns")
            .unwrap_err();
        assert!(
            login_failures(&mut events).is_empty(),
            "{err}: nothing retried"
        );
        err
    };

    // A refused token.
    let (addr, accepted) = serve(|tcp, _| async move {
        let mut ws = upgrade(tcp).await;
        if peer::read_login(&mut ws).await.is_some() {
            send(&mut ws, r#"{"op":10,"d":{"code":-6}}"#).await;
            while next_frame(&mut ws).await.is_some() {}
        }
    })
    .await;
    let err = login_once(peer::options(addr, &dirs[0])).await;
    assert!(matches!(err, ClientError::LoginRefused), "{err}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    // A wrong path: the service answers 404.
    let (addr, accepted) = serve_refusing("404 Not Found", Some("1")).await;
    let err = login_once(peer::options(addr, &dirs[1])).await;
    let ClientError::Connect(connect) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(connect.status(), Some(404));
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    // A keystore that cannot be opened: nothing is dialled.
    let (addr, accepted) = peer::serve_well_behaved().await;
    let options = peer::options(addr, &dirs[2]);
    std::fs::write(&options.keystore_path, b"not a keystore").unwrap();
    let err = login_once(options).await;
    assert!(matches!(err, ClientError::Keystore(_)), "{err}");
    assert_eq!(accepted.load(Ordering::SeqCst), 0);

    // A 503 with one attempt allowed.
    let (addr, accepted) = serve_refusing("503 Service Unavailable", None).await;
    let err = login_once(peer::options(addr, &dirs[3]).login_deadline(Duration::ZERO)).await;
    assert!(
        matches!(&err, ClientError::Connect(c) if c.status() == Some(503)),
        "{err}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    // A 503 whose Retry-After is past the deadline: no attempt could be
    // made in time, so the login returns at once (not after 120 s).
    let (addr, accepted) = serve_refusing("503 Service Unavailable", Some("120")).await;
    let err = login_once(peer::options(addr, &dirs[4])).await;
    assert!(
        matches!(&err, ClientError::Connect(c) if c.status() == Some(503)),
        "{err}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn at_the_login_deadline_the_last_attempt_s_error_is_returned() {
    let (addr, accepted) = serve_refusing("503 Service Unavailable", None).await;
    let dir = tempfile::tempdir().unwrap();
    let options = peer::options(addr, &dir).login_deadline(Duration::from_secs(1));
    let client = botlane::Client::new(options).unwrap();
    let mut events = client.events();
    let err = tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the login gives up by itself")
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Connect(c) if c.status() == Some(503)),
        "{err}"
    );
    let attempts = accepted.load(Ordering::SeqCst);
    // Delays of 10–20 ms growing to 100–200 ms: several fit in 1 s.
    assert!(attempts >= 3, "{attempts} attempts");
    let failures = login_failures(&mut events);
    assert_eq!(
        failures.len(),
        attempts - 1,
        "each attempt reported but the last, returned"
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_close_during_the_wait_between_attempts_ends_the_login_at_once() {
    // 30 s, within the default login deadline of 60 s.
    let (addr, accepted) = serve_refusing("503 Service Unavailable", Some("30")).await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    let mut events = client.events();
    let login = tokio::spawn({
        let client = client.clone();
        async move { client.login().await }
    });
    let failed = next_event(&mut events, |e| matches!(e, Event::LoginFailed { .. })).await;
    assert!(
        matches!(failed, Event::LoginFailed { retry_in, .. } if retry_in >= Duration::from_secs(30)),
        "{failed:?}"
    );
    tokio::time::timeout(WAIT, client.close())
        .await
        .expect("close returns")
        .unwrap();
    // Within WAIT (20 s), before the 30 s wait would end.
    let login = tokio::time::timeout(WAIT, login)
        .await
        .expect("the close ends the wait")
        .unwrap();
    assert!(matches!(login, Err(ClientError::NotConnected)), "{login:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn dropping_the_login_stops_its_attempts() {
    let (addr, accepted) = serve_refusing("503 Service Unavailable", None).await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    let mut events = client.events();
    tokio::select! {
        _ = client.login() => panic!("the service never lets it in"),
        _ = next_event(&mut events, |e| matches!(e, Event::LoginFailed { attempt: 3, .. })) => {}
    }
    // An attempt dialled as the future was dropped may still be accepted.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let attempts = accepted.load(Ordering::SeqCst);
    assert!(attempts >= 3, "{attempts}");
    // The delays are at most 200 ms: several attempts would fit in 1 s.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        attempts,
        "no attempt after the drop"
    );
    assert!(login_failures(&mut events).is_empty(), "nor any report");
}
