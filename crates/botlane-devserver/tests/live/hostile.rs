//! A service a hostile client cannot exhaust: the connection budgets, the
//! timeouts, the bounded outbound queue and the record caps, each shown at
//! small limits over real sockets, with a well-behaved client still served.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::{Duration, Instant};

use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, Limits, ServerConfig,
};
use botlane_proto::OpCode;
use common::{logged_in, sealed, End, Raw, WAIT};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, Message};

const BOT: &str = "hostile-bot";
const ALICE: &str = "hostile-alice";
const SINK: &str = "hostile-sink";

/// Small budgets and short timeouts, as the tests need them.
fn small() -> Limits {
    Limits::default()
        .prelogin_connections(50)
        .http_connections(60)
        .login_timeout(Duration::from_millis(400))
        .header_read_timeout(Duration::from_millis(400))
        .request_body_timeout(Duration::from_millis(400))
        .flush_timeout(Duration::from_millis(300))
}

async fn start(limits: Limits) -> (DevServer, String) {
    let config = DevServerConfig::default()
        .limits(limits)
        .bot(AccountConfig::new("dicebot", BOT))
        .user(AccountConfig::new("alice", ALICE))
        .user(AccountConfig::new("sink", SINK))
        .server(
            ServerConfig::new("lobby").id("s-1").channel(
                ChannelConfig::new("general")
                    .id("c-1")
                    .member("dicebot")
                    .member("alice")
                    .member("sink"),
            ),
        );
    let server = DevServer::start(config).await.unwrap();
    let url = server.ws_url();
    (server, url)
}

/// Whether the peer closed `tcp` (EOF or reset) within [`WAIT`]; what it
/// sent before is discarded.
async fn closed_by_peer(tcp: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, tcp.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn connections_that_never_log_in_are_closed_with_1008() {
    let (server, url) = start(small()).await;
    let mut strangers = Vec::new();
    for _ in 0..3 {
        strangers.push(Raw::connect(&url).await);
    }
    for raw in &mut strangers {
        assert_eq!(raw.next().await, Err(End::Closed(Some(1008))));
        assert_eq!(raw.close_reason.as_deref(), Some("no login within 0.4 s"));
    }
    server
        .wait_for(|s| s.connection_count() == 0, WAIT)
        .await
        .unwrap();
    // A client that logs in in time stays, past the login timeout.
    let mut alice = logged_in(&url, ALICE).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        alice.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
}

/// Connects, which must be refused with 503; returns its `Retry-After`.
async fn refused_with_503(url: &str) -> String {
    match tokio_tungstenite::connect_async(url).await {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 503);
            let retry_after = response.headers().get("retry-after");
            retry_after
                .expect("a 503 says when to come back")
                .to_str()
                .unwrap()
                .to_owned()
        }
        other => panic!("expected 503, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test]
async fn a_full_prelogin_pool_answers_503_and_never_locks_out_a_bot() {
    // A grace longer than the test: nobody is evicted.
    let limits = small()
        .login_timeout(Duration::from_millis(1500))
        .prelogin_grace(Duration::from_secs(60));
    let (server, url) = start(limits).await;
    let mut session = logged_in(&url, ALICE).await;
    // The bot has upgraded, then 49 strangers fill the pool.
    let mut bot = Raw::connect(&url).await;
    let mut strangers = Vec::new();
    for _ in 0..49 {
        strangers.push(Raw::connect(&url).await);
    }
    assert_eq!(server.view(|s| s.prelogin_count()), 50);
    assert_eq!(refused_with_503(&url).await, "60", "the grace, in seconds");
    // The pool full, the bot still logs in, and the session is served.
    bot.login(BOT).await;
    assert_eq!(
        bot.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
    assert_eq!(
        session.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
    assert_eq!(
        server.view(|s| (s.prelogin_count(), s.session_count())),
        (49, 2)
    );
    // The strangers go at their login timeout; new connections fit again.
    server
        .wait_for(|s| s.prelogin_count() == 0, WAIT)
        .await
        .unwrap();
    for raw in &mut strangers {
        assert_eq!(raw.next().await, Err(End::Closed(Some(1008))));
    }
    let mut again = logged_in(&url, BOT).await;
    assert_eq!(
        again.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
}

/// A full pre-login pool makes room for a newcomer by closing the oldest
/// connection upgraded at least the grace ago without a login from a known
/// token (an idle stranger, or one that sent only other frames), never one
/// whose login has arrived (here answered `-9`, the session pool full);
/// with none to close, the newcomer gets 503 and `Retry-After`.
#[tokio::test]
async fn a_full_prelogin_pool_evicts_the_oldest_idle_stranger_never_a_connection_whose_login_arrived(
) {
    let grace = Duration::from_secs(2);
    let limits = small()
        .prelogin_connections(3)
        .sessions(1)
        .prelogin_grace(grace)
        .login_timeout(Duration::from_secs(60));
    let (server, url) = start(limits).await;
    let alice = logged_in(&url, ALICE).await;
    let mut bot = Raw::connect(&url).await;
    let login = json!({"token": BOT, "public_key": common::fake_key('B'), "client": "t"});
    let reply = bot.request(OpCode::Login, login.clone()).await;
    assert_eq!(reply["code"], -9, "{reply}");
    let mut first = Raw::connect(&url).await;
    let mut second = Raw::connect(&url).await;
    let reply = second.request(OpCode::Heartbeat, json!({})).await;
    assert_eq!(reply["code"], -6, "not logged in: {reply}");
    assert_eq!(server.view(|s| s.prelogin_count()), 3);
    // Everyone within the grace: nobody may be evicted yet.
    assert_eq!(refused_with_503(&url).await, "2");

    tokio::time::sleep(grace).await;
    let mut third = Raw::connect(&url).await;
    assert_eq!(first.next().await, Err(End::Closed(Some(1008))));
    assert_eq!(
        first.close_reason.as_deref(),
        Some("pre-login pool full: no login within 2 s of the upgrade")
    );
    let _fourth = Raw::connect(&url).await;
    assert_eq!(second.next().await, Err(End::Closed(Some(1008))));
    // The bot's login arrived; the newcomers are within their grace.
    assert_eq!(refused_with_503(&url).await, "2");
    assert_eq!(server.view(|s| s.prelogin_count()), 3);
    server
        .wait_for(|s| s.connection_count() == 4, WAIT)
        .await
        .unwrap();

    // The oldest stranger goes first: the third, not the fourth.
    tokio::time::sleep(grace).await;
    let _fifth = Raw::connect(&url).await;
    assert_eq!(third.next().await, Err(End::Closed(Some(1008))));
    // The bot, there all along, logs in once a session is free.
    drop(alice);
    server
        .wait_for(|s| s.session_count() == 0, WAIT)
        .await
        .unwrap();
    let reply = bot.request(OpCode::Login, login).await;
    assert_eq!(reply["code"], 0, "{reply}");
}

#[tokio::test]
async fn a_full_session_pool_answers_minus_9_and_the_login_can_be_retried() {
    let (server, url) = start(small().sessions(2).login_timeout(Duration::from_secs(5))).await;
    let first = logged_in(&url, ALICE).await;
    let _second = logged_in(&url, BOT).await;
    let mut third = Raw::connect(&url).await;
    let login = json!({"token": SINK, "public_key": common::fake_key('S'), "client": "t"});
    let reply = third.request(OpCode::Login, login.clone()).await;
    assert_eq!(reply["code"], -9);
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .contains("session pool full"),
        "{reply}"
    );
    drop(first);
    server
        .wait_for(|s| s.session_count() == 1, WAIT)
        .await
        .unwrap();
    let reply = third.request(OpCode::Login, login).await;
    assert_eq!(reply["code"], 0, "{reply}");
}

#[tokio::test]
async fn slowloris_is_closed_by_the_header_read_timeout_on_both_listeners() {
    let (server, _) = start(small()).await;
    let realtime = server.local_addr();
    let rest = server.rest_addr();
    let mut slow = Vec::new();
    for addr in [realtime, rest] {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        slow.push(tcp);
    }
    // One more header line every 100 ms: the headers never end.
    let trickle = async {
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            for tcp in &mut slow {
                let _ = tcp.write_all(b"X-Slow: 1\r\n").await;
            }
        }
    };
    trickle.await;
    for tcp in &mut slow {
        assert!(
            closed_by_peer(tcp).await,
            "a slowloris connection stayed open"
        );
    }
    // A connection that says nothing at all goes the same way.
    let mut silent = TcpStream::connect(rest).await.unwrap();
    assert!(closed_by_peer(&mut silent).await);
    // Well-behaved clients are still served on both.
    let mut alice = logged_in(&server.ws_url(), ALICE).await;
    assert_eq!(
        alice.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
    let status = reqwest::get(format!("{}/api/files/list", server.rest_url()))
        .await
        .unwrap()
        .status();
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_silent_tls_client_is_closed_by_the_same_timeout() {
    let config = DevServerConfig::default()
        .limits(small())
        .rest_tls(true)
        .realtime_tls(true);
    let server = DevServer::start(config).await.unwrap();
    for addr in [server.local_addr(), server.rest_addr()] {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        // Half a ClientHello record header, then nothing.
        tcp.write_all(&[0x16, 0x03]).await.unwrap();
        assert!(closed_by_peer(&mut tcp).await, "{addr}");
    }
}

#[tokio::test]
async fn the_http_connection_budget_holds_newcomers_until_a_slot_frees() {
    let limits = small()
        .http_connections(3)
        .header_read_timeout(Duration::from_millis(600));
    let (server, _) = start(limits).await;
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(server.rest_addr()).await.unwrap());
    }
    // Let the listener accept the three before the newcomer connects.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    let mut newcomer = TcpStream::connect(server.rest_addr()).await.unwrap();
    newcomer
        .write_all(b"GET /api/files/list HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, newcomer.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    // Served, but only once a silent connection was closed for its timeout.
    assert!(answer.starts_with(b"HTTP/1.1 401"), "{answer:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    for tcp in &mut silent {
        assert!(closed_by_peer(tcp).await);
    }
    assert_eq!(server.http_requests().len(), 1);
}

/// One response on a keep-alive connection: its head and a body of its
/// `content-length`, within [`WAIT`].
async fn keep_alive_response(tcp: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    tokio::time::timeout(WAIT, async {
        while !got.ends_with(b"\r\n\r\n") {
            assert_eq!(tcp.read(&mut byte).await.unwrap(), 1, "closed mid-head");
            got.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
        let length: usize = head
            .split("content-length: ")
            .nth(1)
            .and_then(|rest| rest.split("\r\n").next())
            .unwrap()
            .parse()
            .unwrap();
        let mut body = vec![0u8; length];
        tcp.read_exact(&mut body).await.unwrap();
        got.extend_from_slice(&body);
    })
    .await
    .expect("a whole response within the wait");
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn a_full_budget_closes_the_longest_idle_keep_alive_connection_for_a_newcomer() {
    // The keep-alive timeout (the header-read timeout) is far longer than
    // the wait: the newcomer is served because an idle connection made room.
    let limits = small()
        .http_connections(2)
        .header_read_timeout(Duration::from_secs(600));
    let (server, _) = start(limits).await;
    let request = b"GET /api/files/list HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut idle = Vec::new();
    for _ in 0..2 {
        let mut tcp = TcpStream::connect(server.rest_addr()).await.unwrap();
        tcp.write_all(request).await.unwrap();
        assert!(keep_alive_response(&mut tcp)
            .await
            .starts_with("HTTP/1.1 401"));
        idle.push(tcp);
    }
    let answer = http(
        server.rest_addr(),
        b"GET /api/files/list HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer:?}");
    // The one idle longest was closed for it (which of them closes first
    // is shown in `listener/idle.rs`).
    assert!(closed_by_peer(&mut idle[0]).await);
    let connections: Vec<u64> = server
        .http_requests()
        .iter()
        .map(|r| r.connection)
        .collect();
    assert_eq!(connections, [1, 2, 3]);
}

#[tokio::test]
async fn a_client_that_never_reads_is_closed_and_others_are_unaffected() {
    let limits = small()
        .login_timeout(Duration::from_secs(30))
        .outbound_queue_bytes(64 * 1024);
    let (server, url) = start(limits).await;
    // Logged in, a member of the channel, and never reads again.
    let sink = logged_in(&url, SINK).await;
    let Raw { ws, .. } = logged_in(&url, ALICE).await;
    let (mut tx, mut rx) = ws.split();
    // Enough pushes to fill the socket buffers and then the queue.
    const N: usize = 2_000;
    let content = sealed(&"m".repeat(8_000));
    let writer = tokio::spawn(async move {
        for _ in 0..N {
            let frame = json!({"op": 30, "d": {"channel_id": "c-1", "content": content}});
            tx.send(Message::text(frame.to_string())).await.unwrap();
        }
        tx
    });
    let mut accepted = 0;
    let mut replies = 0;
    while replies < N {
        let message = tokio::time::timeout(WAIT, rx.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let Message::Text(text) = message else {
            panic!("alice got {message:?} after {replies} replies");
        };
        let frame: Value = serde_json::from_str(text.as_str()).unwrap();
        if frame["op"] == 30 {
            replies += 1;

            accepted += usize::from(frame["d"]["code"] == 0);
        }
    }
    drop(writer.await.unwrap());
    // Alice, who reads, got every reply; the sink was cut off once.
    assert_eq!(accepted, N);
    server
        .wait_for(|s| s.queue_overflows() == 1 && s.session_count() == 1, WAIT)
        .await
        .unwrap();
    let alice = server.account_id("alice").unwrap();
    assert!(server.view(|s| s.is_online(&alice)));
    // What reached the sink's socket ends the stream (with the close frame
    // if it could still be written), and it is fewer than all pushes.
    let mut sink = sink;
    let mut pushes = 0;
    let end = loop {
        match sink.next().await {
            Ok((32, _)) => pushes += 1,
            Ok(_) => {}
            Err(end) => break end,
        }
    };
    assert!(pushes < N, "{pushes}");
    if end == End::Closed(Some(1008)) {
        assert_eq!(
            sink.close_reason.as_deref(),
            Some("outbound queue full: the client is not reading")
        );
    } else {
        assert_eq!(end, End::Dropped);
    }
}

#[tokio::test]
async fn shutdown_is_bounded_with_clients_that_do_not_cooperate() {
    let (server, url) = start(small().login_timeout(Duration::from_secs(30))).await;
    let _sink = logged_in(&url, SINK).await;
    let _stranger = Raw::connect(&url).await;
    let mut slow = TcpStream::connect(server.rest_addr()).await.unwrap();
    slow.write_all(b"POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        .await
        .unwrap();
    tokio::time::timeout(WAIT, server.shutdown()).await.unwrap();
}

/// Sends raw bytes as one HTTP request and returns the whole answer.
async fn http(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn oversize_and_slow_bodies_are_refused_and_records_keep_a_prefix() {
    let limits = small().max_request_body(1024).http_record_body_bytes(16);
    let (server, _) = start(limits).await;
    let addr = server.rest_addr();

    let big = format!(
        "POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n{}",
        "b".repeat(4096)
    );
    let answer = http(addr, big.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");

    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten..")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");

    let small_body = format!(
        "POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{}",
        "s".repeat(100)
    );
    let answer = http(addr, small_body.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");

    let records = server.http_requests();
    let summary: Vec<_> = records
        .iter()
        .map(|r| (r.status, r.body.len(), r.body_size))
        .collect();
    assert_eq!(summary[1], (Some(408), 0, 10));
    assert_eq!(summary[2], (Some(401), 16, 100));
    let (status, kept, size) = summary[0];
    assert_eq!((status, kept), (Some(413), 0));
    assert!(size > 1024, "{size}");
    assert_eq!(records[2].body, b"ssssssssssssssss");
}

#[tokio::test]
async fn records_keep_the_newest_within_their_caps() {
    let limits = small().frame_records(10).http_records(5);
    let (server, url) = start(limits).await;
    let mut alice = logged_in(&url, ALICE).await;
    for i in 0..30 {
        let reply = alice.request(OpCode::Heartbeat, json!({"n": i})).await;
        assert_eq!(reply["code"], 0);
    }
    let frames = server.frames();
    assert_eq!(frames.len(), 10);
    // login, its reply, ready, then 30 heartbeats and their replies: 63.
    assert_eq!(server.view(|s| s.frames_evicted()), 53);
    assert_eq!(frames[8].payload, r#"{"n":29}"#);
    assert_eq!(frames[9].payload, r#"{"code":0}"#);

    for i in 0..12 {
        let answer = http(
            server.rest_addr(),
            format!("GET /api/n/{i} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    }
    let paths: Vec<_> = server.http_requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        ["/api/n/7", "/api/n/8", "/api/n/9", "/api/n/10", "/api/n/11"]
    );
    assert_eq!(server.view(|s| s.http_requests_evicted()), 7);

    // The byte cap bites first when payloads are large.
    let limits = small().frame_record_bytes(4 * 1024);
    let (server, url) = start(limits).await;
    let mut alice = logged_in(&url, ALICE).await;
    let pad = "p".repeat(1000);
    for _ in 0..20 {
        alice.request(OpCode::Heartbeat, json!({"pad": pad})).await;
    }
    let kept = server.frames();
    assert!(kept.len() < 10, "{}", kept.len());
    let bytes: usize = kept.iter().map(|f| f.payload.len()).sum();
    assert!(bytes <= 4 * 1024, "{bytes}");
}

#[tokio::test]
async fn nothing_is_recorded_from_a_connection_before_it_logs_in() {
    let (server, url) = start(small()).await;
    let mut raw = Raw::connect(&url).await;
    raw.send(OpCode::Heartbeat, json!({"secret": "pre-login"}))
        .await;
    assert_eq!(raw.next().await.unwrap().1["code"], -6);
    raw.send_text(r#"{"op":777,"d":{"secret":"pre-login"}}"#)
        .await;
    assert_eq!(raw.next().await.unwrap().0, 777);
    raw.send(
        OpCode::Login,
        json!({"token": "wrong-token", "public_key": common::fake_key('W'), "client": "t"}),
    )
    .await;
    assert_eq!(raw.next().await.unwrap().1["code"], -6);
    assert!(server.frames().is_empty());
    // A stranger's frames stay unrecorded even when it sends a lot.
    let mut stranger = Raw::connect(&url).await;
    for _ in 0..50 {
        stranger
            .send_text(format!(r#"{{"op":777,"d":"{}"}}"#, "x".repeat(10_000)))
            .await;
    }
    assert_eq!(stranger.next().await.unwrap().0, 777);
    assert!(server.frames().is_empty());

    let mut alice = Raw::connect(&url).await;
    alice.login(ALICE).await;
    let ops: Vec<_> = server.frames().into_iter().map(|f| f.opcode).collect();
    assert_eq!(ops, [Some(10), Some(10), Some(11)]);
}

#[tokio::test]
async fn a_client_that_pipelines_faster_than_it_reads_is_slowed_not_closed() {
    let limits = small()
        .login_timeout(Duration::from_secs(30))
        .outbound_queue_bytes(4 * 1024);
    let (server, url) = start(limits).await;
    let mut seed = logged_in(&url, BOT).await;
    for i in 0..100 {
        let text = format!("seed {i:03} {}", "s".repeat(9_000));
        let d = json!({"channel_id": "c-1", "content": sealed(&text)});
        assert_eq!(seed.request(OpCode::Send, d).await["code"], 0);
    }
    let Raw { ws, .. } = logged_in(&url, ALICE).await;
    let (mut tx, mut rx) = ws.split();
    // 40 history fetches of replies near the frame limit each (~40 MB),
    // written without reading: far more than the socket buffers and the
    // queue's 4 KiB together.
    const N: usize = 40;
    let writer = tokio::spawn(async move {
        for _ in 0..N {
            let frame = json!({"op": 40, "d": {"channel_id": "c-1", "limit": 100}});
            tx.send(Message::text(frame.to_string())).await.unwrap();
        }
        tx
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut full_replies = 0;
    while full_replies < N {
        let message = tokio::time::timeout(WAIT, rx.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let Message::Text(text) = message else {
            panic!("alice got {message:?} after {full_replies} replies");
        };
        let frame: Value = serde_json::from_str(text.as_str()).unwrap();
        if frame["op"] == 40 {
            // As many of the newest as fit in one frame.
            let messages = frame["d"]["messages"].as_array().unwrap().len();
            assert!((80..100).contains(&messages), "{messages}");
            assert!(text.len() <= botlane_devserver::MAX_FRAME_BYTES);
            full_replies += 1;
        }
    }
    drop(writer.await.unwrap());
    assert_eq!(
        server.view(|s| (s.queue_overflows(), s.session_count())),
        (0, 2)
    );
}

#[tokio::test]
async fn a_client_that_floods_pings_is_closed_and_its_pongs_stay_bounded() {
    use botlane_proto::ping::MAX_PINGS_PER_WINDOW;
    use tokio_tungstenite::MaybeTlsStream;

    let (server, url) = start(small()).await;
    let mut bot = logged_in(&url, BOT).await;
    // The budget: every ping is answered.
    let budget = MAX_PINGS_PER_WINDOW as usize;
    for i in 0..budget {
        let payload = vec![u8::try_from(i).unwrap()];
        bot.ws.send(Message::Ping(payload.into())).await.unwrap();
    }
    let mut answered = 0;
    while answered < budget {
        match tokio::time::timeout(WAIT, bot.ws.next()).await.unwrap() {
            Some(Ok(Message::Pong(_))) => answered += 1,
            other => panic!("expected pongs, got {other:?} after {answered}"),
        }
    }
    // The flood, written past the WebSocket layer: 0x89 ping, masked (with
    // a zero mask) 125-byte payload, as a client's frames must be. The
    // sockets' buffers take all of it (127 KiB) without the client reading.
    let mut frame = vec![0x89, 0x80 | 125, 0, 0, 0, 0];
    frame.extend_from_slice(&[b'p'; 125]);
    let flood = frame.repeat(1_000);
    let MaybeTlsStream::Plain(tcp) = bot.ws.get_mut() else {
        panic!("the test connects without TLS");
    };
    let _ = tcp.write_all(&flood).await;
    let mut after_flood = 0;
    let end = loop {
        match tokio::time::timeout(WAIT, bot.ws.next()).await.unwrap() {
            Some(Ok(Message::Pong(_))) => after_flood += 1,
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => {}
            Some(Err(_)) | None => break None,
        }
    };
    // The window was spent: the flood's first ping is over the budget (on
    // a machine so slow that the window ended first, a new one answers 32
    // more; without the budget, all 1,000 would be).
    assert!(
        after_flood <= budget + 1,
        "{after_flood} pongs after the flood"
    );
    let end = end.expect("the close frame leaves before the socket");
    assert_eq!(u16::from(end.code), 1008);
    assert_eq!(end.reason.as_str(), "more than 32 pings within 10 s");
    server
        .wait_for(|s| s.session_count() == 0, WAIT)
        .await
        .unwrap();
    // The bot can come back.
    let mut bot = logged_in(&url, BOT).await;
    let reply = bot.request(OpCode::Heartbeat, json!({})).await;
    assert_eq!(reply["code"], 0);
}

#[tokio::test]
async fn a_client_that_stops_reading_and_keeps_pinging_is_closed() {
    // A queue large enough that the client's own replies never fill it: the
    // service keeps reading its frames, pings included, while the socket
    // takes nothing more.
    let limits = small()
        .login_timeout(Duration::from_secs(30))
        .outbound_queue_bytes(64 * 1024 * 1024);
    let (server, url) = start(limits).await;
    // History to ask for: five messages of 53 KB.
    let mut alice = logged_in(&url, ALICE).await;
    let content = sealed(&"m".repeat(40_000));
    for _ in 0..5 {
        let reply = alice
            .request(
                OpCode::Send,
                json!({"channel_id": "c-1", "content": content}),
            )
            .await;
        assert_eq!(reply["code"], 0);
    }
    drop(alice);
    server
        .wait_for(|s| s.session_count() == 0, WAIT)
        .await
        .unwrap();
    // The sink: a small receive buffer, and it never reads.
    let addr: std::net::SocketAddr = url
        .trim_start_matches("ws://")
        .trim_end_matches("/ws")
        .parse()
        .unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let tcp = socket.connect(addr).await.unwrap();
    let (mut sink, _) = tokio_tungstenite::client_async(url.as_str(), tcp)
        .await
        .unwrap();
    let login = json!({"op": 10, "d": {"token": SINK, "public_key": common::fake_key('S'), "client": "raw-test/0"}});
    sink.send(Message::text(login.to_string())).await.unwrap();
    server
        .wait_for(|s| s.session_count() == 1, WAIT)
        .await
        .unwrap();
    // About 10.7 MB of replies, more than the sockets' buffers hold. Once
    // the service has queued them all, its writer fills the buffers within
    // moments and the socket takes nothing more.
    const FETCHES: usize = 40;
    for _ in 0..FETCHES {
        let fetch = json!({"op": 40, "d": {"channel_id": "c-1", "limit": 5}});
        sink.send(Message::text(fetch.to_string())).await.unwrap();
    }
    let replies = |s: &botlane_devserver::StateView<'_>| {
        s.frames()
            .iter()
            .filter(|f| f.opcode == Some(40) && f.direction == botlane_devserver::Direction::Sent)
            .count()
    };
    server
        .wait_for(|s| replies(s) == FETCHES, WAIT)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A drip of pings, fewer than the ping budget allows in a window.
    let mut pings = 0;
    while server.view(|s| s.session_count()) == 1 {
        assert!(
            pings < botlane_proto::ping::MAX_PINGS_PER_WINDOW,
            "the session outlived {pings} pings with its socket full"
        );
        sink.send(Message::Ping(vec![1].into())).await.unwrap();
        pings += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Closed by the count of pings the socket took nothing after (the
    // ninth once the socket is full; a loaded machine may take a few more
    // to fill it), not by the budget; its queue was far from full.
    assert!((9..=24).contains(&pings), "{pings}");
    assert_eq!(server.view(|s| s.queue_overflows()), 0);
}
