//! Two size bounds shown over real sockets: the bytes of a request's line
//! and headers, on every listener, and the messages a channel keeps.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Instant;

use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, Limits, ServerConfig,
};
use botlane_proto::OpCode;
use common::{logged_in, sealed, WAIT};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const ALICE: &str = "bounds-alice";

/// The most bytes of one request's line and headers (`listener/mod.rs`).
const MAX_HEADER_BYTES: usize = 64 * 1024;

async fn start(limits: Limits) -> DevServer {
    let config = DevServerConfig::default()
        .limits(limits)
        .user(AccountConfig::new("alice", ALICE))
        .server(
            ServerConfig::new("lobby")
                .id("s-1")
                .channel(ChannelConfig::new("general").id("c-1").member("alice")),
        );
    DevServer::start(config).await.unwrap()
}

/// A request line and `bytes` of header lines of 1 KiB each, with no blank
/// line after them unless `end`.
fn request_head(path: &str, bytes: usize, end: bool) -> Vec<u8> {
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: x\r\n").into_bytes();
    let line = |i: usize| format!("X-Pad-{i:04}: {}\r\n", "p".repeat(1024 - 15));
    for i in 0..bytes / 1024 {
        head.extend_from_slice(line(i).as_bytes());
    }
    if end {
        head.extend_from_slice(b"Connection: close\r\n\r\n");
    }
    head
}

/// Everything the peer sends until it closes (EOF or reset), within [`WAIT`].
async fn answer_until_closed(tcp: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read_all = async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(WAIT, read_all)
        .await
        .expect("the connection stayed open");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn headers_over_64_kib_get_431_on_both_listeners_without_waiting_for_their_end() {
    // The header-read timeout is far longer than the wait: an answer within
    // the wait comes from the size bound, not from the timeout.
    let server = start(Limits::default()).await;
    for (addr, path) in [(server.local_addr(), "/ws"), (server.rest_addr(), "/api/x")] {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        // Past the bound, and the headers never end.
        tcp.write_all(&request_head(path, MAX_HEADER_BYTES + 16 * 1024, false))
            .await
            .unwrap();
        let started = Instant::now();
        let answer = answer_until_closed(&mut tcp).await;
        assert!(
            answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{path}: {answer:?}"
        );
        assert!(started.elapsed() < WAIT, "{:?}", started.elapsed());
    }
    // The refusal left no record of the request.
    assert!(server.http_requests().is_empty());

    // Headers just under the bound are read, and well-behaved clients are
    // still served on both listeners.
    let mut tcp = TcpStream::connect(server.rest_addr()).await.unwrap();
    tcp.write_all(&request_head("/api/files/list", 60 * 1024, true))
        .await
        .unwrap();
    let answer = answer_until_closed(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer:?}");
    assert_eq!(server.http_requests().len(), 1);
    let mut alice = logged_in(&server.ws_url(), ALICE).await;
    assert_eq!(
        alice.request(OpCode::Heartbeat, json!({})).await,
        json!({"code": 0})
    );
}

/// A whole request of exactly `len` bytes of line and headers: a request
/// line of `line` bytes (its target padded), then padding headers.
fn exact_head(path: &str, line: usize, len: usize) -> Vec<u8> {
    let bare = format!("GET {path}?pad= HTTP/1.1\r\n").len();
    let pad = "x".repeat(line.saturating_sub(bare));
    let mut head = format!("GET {path}?pad={pad} HTTP/1.1\r\n");
    head.push_str("Host: x\r\nConnection: close\r\n");
    let end = "\r\n";
    let fixed = "X-Pad: \r\n".len();
    let mut left = len - head.len() - end.len();
    while left > 0 {
        let value = (left - fixed).min(1000);
        head.push_str(&format!("X-Pad: {}\r\n", "p".repeat(value)));
        left -= fixed + value;
    }
    head.push_str(end);
    assert_eq!(head.len(), len, "the head is exactly {len} bytes");
    head.into_bytes()
}

#[tokio::test]
async fn the_head_limit_is_exact_when_the_head_arrives_in_one_write() {
    let server = start(Limits::default()).await;
    let admin = DevServer::start(DevServerConfig::default().admin(true))
        .await
        .unwrap();
    let listeners = [
        (server.local_addr(), "/ws"),
        (server.rest_addr(), "/api/x"),
        (admin.admin_addr().unwrap(), "/admin"),
    ];
    for (addr, path) in listeners {
        for (what, head, refused) in [
            (
                "a 70 KiB request line",
                exact_head(path, 70 * 1024, 71 * 1024),
                true,
            ),
            ("a 100 KiB head", exact_head(path, 100, 100 * 1024), true),
            (
                "a head one byte over",
                exact_head(path, 100, MAX_HEADER_BYTES + 1),
                true,
            ),
            (
                "a head at the limit",
                exact_head(path, 100, MAX_HEADER_BYTES),
                false,
            ),
        ] {
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            tcp.write_all(&head).await.unwrap();
            let answer = answer_until_closed(&mut tcp).await;
            let refusal = "HTTP/1.1 431 Request Header Fields Too Large\r\n";
            assert!(
                answer.starts_with("HTTP/1.1 "),
                "{path}, {what}: {answer:?}"
            );
            assert_eq!(
                answer.starts_with(refusal),
                refused,
                "{path}, {what}: {answer:?}"
            );
        }
    }
    // Only the REST request at the limit reached the recorder.
    assert_eq!(server.http_requests().len(), 1);
}

fn contents(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_channel_keeps_only_its_newest_channel_history_messages() {
    let server = start(Limits::default().channel_history(5)).await;
    let mut alice = logged_in(&server.ws_url(), ALICE).await;
    let mut ids = Vec::new();
    for i in 0..8 {
        let reply = alice
            .request(
                OpCode::Send,
                json!({"channel_id": "c-1", "content": sealed(&i.to_string())}),
            )
            .await;
        assert_eq!(reply["code"], 0, "{reply}");
        ids.push(reply["message_id"].as_str().unwrap().to_owned());
    }
    let newest: Vec<_> = (3..8).map(|i| sealed(&i.to_string())).collect();

    // History asks for more than there are and gets the newest five.
    let history = alice
        .request(
            OpCode::HistoryFetch,
            json!({"channel_id": "c-1", "limit": 100}),
        )
        .await;
    assert_eq!(history["code"], 0, "{history}");
    assert_eq!(contents(&history["messages"]), newest);

    // The service's own record is the same five: the older ones are gone.
    let stored = server.messages("c-1");
    let stored_ids: Vec<_> = stored.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(stored_ids, ids[3..]);

    // A reply to a dropped message names no message of the channel.
    let reply = alice
        .request(
            OpCode::Send,
            json!({"channel_id": "c-1", "content": sealed("re"), "reply_to": ids[2]}),
        )
        .await;
    assert_eq!(reply["code"], -5, "{reply}");
    let reply = alice
        .request(
            OpCode::Send,
            json!({"channel_id": "c-1", "content": sealed("re"), "reply_to": ids[3]}),
        )
        .await;
    assert_eq!(reply["code"], 0, "{reply}");
    assert_eq!(server.messages("c-1").len(), 5);
    assert_eq!(server.messages("c-1")[0].id, ids[4]);
}
