//! The record caps a test's own traffic can reach: notifications by
//! count, HTTP requests by bytes. Each is driven past its cap over real
//! sockets; the newest records are kept and the rest counted as evicted.
//! (Frame records: `hostile.rs`.)
#![allow(clippy::unwrap_used)]

use crate::common;

use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, Limits, ServerConfig,
};
use botlane_proto::OpCode;
use common::{logged_in, sealed, WAIT};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BOT: &str = "records-bot";
const ALICE: &str = "records-alice";

async fn start(limits: Limits) -> (DevServer, String) {
    let config = DevServerConfig::default()
        .limits(limits)
        .bot(AccountConfig::new("dicebot", BOT))
        .user(AccountConfig::new("alice", ALICE))
        .server(
            ServerConfig::new("lobby").channel(
                ChannelConfig::new("general")
                    .id("c-1")
                    .member("dicebot")
                    .member("alice"),
            ),
        );
    let server = DevServer::start(config).await.unwrap();
    let url = server.ws_url();
    (server, url)
}

#[tokio::test]
async fn notification_records_keep_the_newest_within_their_cap() {
    let (server, url) = start(Limits::default().notification_records(5)).await;
    let mut alice = logged_in(&url, ALICE).await;
    let mut bot = logged_in(&url, BOT).await;
    let original = alice
        .request(
            OpCode::Send,
            json!({"channel_id": "c-1", "content": sealed("roll please")}),
        )
        .await;
    let original = original["message_id"].as_str().unwrap().to_owned();
    // Each reply notifies alice: twelve notifications for a cap of five.
    let mut replies = Vec::new();
    for i in 0..12 {
        let reply = bot
            .request(
                OpCode::Send,
                json!({"channel_id": "c-1", "content": sealed(&i.to_string()), "reply_to": original}),
            )
            .await;
        replies.push(reply["message_id"].as_str().unwrap().to_owned());
    }
    for _ in 0..12 {
        alice.next_of(OpCode::Notification).await;
    }
    let alice_id = server.account_id("alice").unwrap();
    let kept: Vec<_> = server
        .notifications_for(&alice_id)
        .into_iter()
        .map(|n| n.message_id)
        .collect();
    assert_eq!(kept, replies[7..], "the newest five, oldest first");
    assert_eq!(server.view(|s| s.notification_records().len()), 5);
}

#[tokio::test]
async fn http_records_keep_the_newest_within_their_byte_cap() {
    // Room for a few records of about a kilobyte each, not for twenty.
    let cap = 4 * 1024;
    let (server, _) = start(Limits::default().http_record_bytes(cap)).await;
    let padding = "h".repeat(1000);
    for i in 0..20 {
        let mut tcp = TcpStream::connect(server.rest_addr()).await.unwrap();
        let request = format!(
            "GET /api/n/{i} HTTP/1.1\r\nHost: x\r\nX-Padding: {padding}\r\nConnection: close\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(WAIT, tcp.read_to_end(&mut answer))
            .await
            .unwrap()
            .unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 401"));
    }
    let records = server.http_requests();
    let kept = records.len();
    assert!((1..20).contains(&kept), "{kept} records kept");
    let held: usize = records
        .iter()
        .flat_map(|r| &r.headers)
        .map(|(name, value)| name.len() + value.len())
        .sum();
    assert!(
        held <= cap,
        "{held} bytes of headers held under a cap of {cap}"
    );
    let paths: Vec<_> = records.into_iter().map(|r| r.path).collect();
    let newest: Vec<_> = (20 - kept..20).map(|i| format!("/api/n/{i}")).collect();
    assert_eq!(paths, newest);
    assert_eq!(
        server.view(|s| s.http_requests_evicted()),
        u64::try_from(20 - kept).unwrap()
    );
}
