//! Two size bounds shown over real sockets: the bytes hyper buffers for a
//! request's headers, on both listeners, and the messages a channel keeps.
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

/// What `listener.rs` lets hyper buffer for one request's headers.
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
