//! Soak tests of the service: a devserver that runs through a long test
//! suite, or stands for weeks as a binary, must not grow per connection or
//! per request. Each test repeats a cycle many times over real sockets on
//! loopback (humans who connect, talk and leave, politely or by dropping
//! the socket; a bot that logs in and closes; HTTP requests of every kind
//! on the REST listener; members added to and removed from channels) and
//! proves, structurally, that nothing accumulates: the runtime's alive
//! tasks (`RuntimeMetrics::num_alive_tasks`), the live heap blocks and
//! bytes counted by a global allocator wrapper (`stats_alloc`: allocated
//! minus freed, no `unsafe` in this crate) and the service's own figures
//! (`StateView`: connections, pools, records) are the same after the last
//! cycle as after an early one.
//!
//! The service keeps bounded records on purpose (frames, notifications,
//! HTTP requests, each channel's history, the REST values that ended):
//! the tests set the record caps low, so that they are full after the
//! first cycles, and take their reference after that.
//!
//! The allocator counts the whole process, so the tests run one at a time
//! (a lock), each on its own runtime; neither RSS nor wall-clock time is
//! measured. Run alone: `cargo test -p botlane-devserver --test soak`; with
//! `-- --nocapture` each test prints its series.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../botlane/tests/soak_harness/mod.rs"]
mod soak_harness;

use std::time::Duration;

use botlane::rest::Method;
use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, FileConfig, Limits, ServerConfig,
    TestUser, TestUserError,
};
use botlane_proto::OpCode;
use common::{logged_in, sealed, WAIT};
use serde_json::json;
use soak_harness::{held, soak, Series, SETTLE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BOT: &str = "soak-bot-token";
const ALICE: &str = "soak-alice-token";
const BOB: &str = "soak-bob-token";

/// Record caps low enough to be full after a few cycles, so that what the
/// service keeps on purpose stops growing before the reference is taken.
fn few_records() -> Limits {
    Limits::default()
        .frame_records(8)
        .notification_records(8)
        .http_records(8)
        .channel_history(8)
}

/// A service with a bot, alice and bob, a server `lobby` with one file and
/// a channel `c-1` of which all three are members.
async fn start(rest: bool) -> DevServer {
    let config = DevServerConfig::default()
        .limits(few_records())
        .bot_rest_credentials(rest)
        .bot(AccountConfig::new("soakbot", BOT))
        .user(AccountConfig::new("alice", ALICE))
        .user(AccountConfig::new("bob", BOB))
        .server(
            ServerConfig::new("lobby")
                .channel(
                    ChannelConfig::new("general")
                        .id("c-1")
                        .member("soakbot")
                        .member("alice")
                        .member("bob"),
                )
                .file(FileConfig::new("notes.txt", "hello, world")),
        );
    DevServer::start(config).await.unwrap()
}

/// Waits until the service holds exactly `n` connections.
async fn connections(server: &DevServer, n: usize) {
    server
        .wait_for(|s| s.connection_count() == n, WAIT)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the service holds {} connections, not {n}",
                server.view(|s| s.connection_count())
            )
        });
}

/// Polls `check` until it holds, within [`WAIT`].
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Takes every message alice has been pushed off her queue (the test's,
/// not the service's), opened or not: the raw cycles seal under a key she
/// does not have.
async fn read_all(alice: &TestUser) {
    while !matches!(
        alice.next_message(Duration::from_millis(1)).await,
        Err(TestUserError::Timeout(_) | TestUserError::Closed)
    ) {}
}

const VISITS: usize = 60;

/// Bob visits channel `c-1` where alice stays online: he connects, shares
/// a new channel key, sends a few messages, asks for the history and a
/// heartbeat, and leaves; on even cycles as `TestUser` (dropped: the
/// socket is closed politely), on odd cycles over a raw socket dropped
/// without a close frame, as a network failure would. The service holds
/// alice's connection only, and nothing of bob's visits but what its
/// (full) records keep.
#[test]
fn users_who_connect_talk_and_leave_leave_nothing_behind() {
    soak(|| async {
        let server = start(false).await;
        let url = server.ws_url();
        let alice = TestUser::connect(&url, ALICE).await.unwrap();
        connections(&server, 1).await;
        let mut series = Series::new("visits", 20, VISITS);
        for cycle in 0..VISITS {
            if cycle % 2 == 0 {
                let bob = TestUser::connect(&url, BOB).await.unwrap();
                bob.open_channel("c-1").await.unwrap();
                for i in 0..3 {
                    bob.send_text("c-1", &format!("hello {cycle}.{i}"))
                        .await
                        .unwrap();
                }
                bob.heartbeat().await.unwrap();
                drop(bob);
            } else {
                let mut bob = logged_in(&url, BOB).await;
                for i in 0..3 {
                    let reply = bob
                        .request(
                            OpCode::Send,
                            json!({"channel_id": "c-1", "content": sealed(&format!("raw {cycle}.{i}"))}),
                        )
                        .await;
                    assert_eq!(reply["code"], 0, "{reply}");
                }
                let reply = bob.request(OpCode::Heartbeat, json!({})).await;
                assert_eq!(reply["code"], 0, "{reply}");
                // Raw: TestUser's would open every message, sealed under
                // keys bob no longer has.
                let reply = bob
                    .request(
                        OpCode::HistoryFetch,
                        json!({"channel_id": "c-1", "limit": 100}),
                    )
                    .await;
                let kept = reply["messages"].as_array().map_or(0, Vec::len);
                assert!((1..=8).contains(&kept), "{reply}");
                // No close frame: the TCP connection just goes.
                drop(bob);
            }
            connections(&server, 1).await;
            read_all(&alice).await;
            series.record().await;
        }
        let bob = server.account_id("bob").unwrap();
        let (sessions, prelogin, online) =
            server.view(|s| (s.session_count(), s.prelogin_count(), s.is_online(&bob)));
        assert_eq!((sessions, prelogin, online), (1, 0, false), "alice only");
        assert_eq!(server.messages("c-1").len(), 8, "the history cap");
        assert_eq!(alice.messages_dropped(), 0);
        series.assert_flat(24, Some(8 * 1024)).await;
        drop(alice);
        server.shutdown().await;
    });
}

/// The bot's options: its keystore in `dir` (the same identity each time).
fn bot_options(server: &DevServer, dir: &tempfile::TempDir) -> ClientOptions {
    ClientOptions::new(BOT, dir.path().join("k"), server.ws_url())
        .rest_url(server.rest_url())
        .keystore_save_window(Duration::ZERO)
}

/// A `/ping` command that answers `pong`.
fn with_ping(client: &Client) {
    client
        .commands()
        .register(
            CommandDeclaration::new("ping", "Answers pong"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap();
}

const BOT_SESSIONS: usize = 30;

/// A bot logs in (publishing its menu, taking the keys waiting for it),
/// answers a command from alice and closes; a new `Client` each time, on
/// the same keystore. Alice comes and goes with it (a `TestUser` keeps the
/// notifications it was sent, and the bot's answer is a reply). The
/// service is back to no connection at all.
#[test]
fn bots_that_log_in_and_close_leave_nothing_behind() {
    soak(|| async {
        let server = start(false).await;
        let bot_id = server.account_id("soakbot").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut series = Series::new("bot sessions", 10, BOT_SESSIONS);
        let idle = held().tasks;
        let mut patient = true;
        for _ in 0..BOT_SESSIONS {
            let client = Client::new(bot_options(&server, &dir)).unwrap();
            with_ping(&client);
            tokio::time::timeout(WAIT, client.login())
                .await
                .unwrap()
                .unwrap();
            let alice = TestUser::connect(&server.ws_url(), ALICE).await.unwrap();
            connections(&server, 2).await;
            // A new key each time: the bot gets it pushed, live.
            alice.open_channel("c-1").await.unwrap();
            alice.send_text("c-1", "/ping").await.unwrap();
            let answer = alice
                .wait_for_message(|m| m.author_id == bot_id, WAIT)
                .await
                .unwrap();
            assert_eq!(answer.content, "pong");
            client.close().await.unwrap();
            drop((client, alice));
            connections(&server, 0).await;
            // A closed connection's task may take up to the flush timeout
            // (2 s) to end: let it, or the tail would measure up to twenty
            // closing sessions. A task that never ends fails at the end.
            // After the first wait in vain, a task is left for good: wait no more.
            let deadline = tokio::time::Instant::now() + SETTLE;
            while patient && held().tasks > idle {
                patient = tokio::time::Instant::now() < deadline;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            series.record().await;
        }
        let (sessions, online, waiting) = server.view(|s| {
            (
                s.session_count(),
                s.is_online(&bot_id),
                s.pending_key_count(&bot_id),
            )
        });
        assert_eq!((sessions, online, waiting), (0, false, 0));
        assert!(server.menu(&bot_id).is_some(), "the menu it published");
        series.assert_flat(24, Some(8 * 1024)).await;
        server.shutdown().await;
    });
}

/// One HTTP/1.1 request on a connection of its own (`Connection: close`)
/// to `addr`; the response's status code.
async fn http(addr: std::net::SocketAddr, request: &str) -> u16 {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut response))
        .await
        .unwrap()
        .unwrap();
    let response = String::from_utf8_lossy(&response);
    response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"))
}

const HTTP_REQUESTS: usize = 200;

/// Requests of every kind on the REST listener: the bot's own `/api` calls
/// over its REST lane (a kept-alive connection; every 20th after its
/// credential was purged, so it mints and exchanges again), and strangers'
/// on connections of their own: no credential, a wrong one, a wrong
/// secret at the exchange, an unknown path. The service records the
/// requests within their cap and holds the bot's session only.
#[test]
fn http_requests_of_every_kind_leave_nothing_behind() {
    soak(|| async {
        let server = start(true).await;
        server.set_mint_rate_limit(1_000, Duration::from_millis(1));
        let bot_id = server.account_id("soakbot").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let client = Client::new(bot_options(&server, &dir)).unwrap();
        tokio::time::timeout(WAIT, client.login())
            .await
            .unwrap()
            .unwrap();
        let rest = client.rest();
        let addr = server.rest_addr();
        let host = format!("Host: {addr}\r\nConnection: close\r\n");
        let exchange = r#"{"secret":"AAAA","row_id":"nope"}"#;
        let mut series = Series::new("http", 50, HTTP_REQUESTS);
        for cycle in 0..HTTP_REQUESTS {
            let kind = cycle % 5;
            let status = match kind {
                0 => {
                    if cycle % 20 == 0 {
                        server.purge_rest_credentials(&bot_id).unwrap();
                    }
                    let response = rest
                        .request(Method::GET, "/api/files/list", None)
                        .await
                        .unwrap();
                    response.status().as_u16()
                }
                1 => http(addr, &format!("GET /api/files/list HTTP/1.1\r\n{host}\r\n")).await,
                2 => {
                    let request = format!(
                        "GET /api/files/list HTTP/1.1\r\n{host}verification: not-a-credential\r\n\r\n"
                    );
                    http(addr, &request).await
                }
                3 => {
                    let request = format!(
                        "POST /auth/verify-session HTTP/1.1\r\n{host}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{exchange}",
                        exchange.len()
                    );
                    http(addr, &request).await
                }
                _ => http(addr, &format!("GET /nowhere HTTP/1.1\r\n{host}\r\n")).await,
            };
            let expected: &[u16] = match kind {
                0 => &[200],
                1 | 2 => &[401],
                3 => &[400, 401, 403],
                _ => &[404],
            };
            assert!(expected.contains(&status), "cycle {cycle}: {status}");
            series.record().await;
        }
        assert_eq!(
            server.view(|s| s.connection_count()),
            1,
            "the bot's session"
        );
        assert_eq!(
            server.view(|s| s.http_requests().len()),
            8,
            "the record cap"
        );
        assert_eq!(server.mint_count(), (HTTP_REQUESTS / 20) as u64);
        // Bytes: room for one more doubling of a kept-alive connection's
        // read buffer (hyper's adaptive reads, at both ends), seen once
        // between cycle 30 and 110.
        series.assert_flat(24, Some(16 * 1024)).await;
        client.close().await.unwrap();
        server.shutdown().await;
    });
}

const MEMBERSHIPS: usize = 60;

/// Bob, online, is added to one of three rooms, gets its key from alice,
/// says something there and is removed again; the bot, offline, is taken
/// out of the room and put back, which drops the key waiting for it. Bob's
/// channels, the keys waiting for the bot and the connections are back to
/// what they were.
#[test]
fn members_added_and_removed_leave_nothing_behind() {
    soak(|| async {
        let server = start(false).await;
        let url = server.ws_url();
        let lobby = server.server_id("lobby").unwrap();
        let bot_id = server.account_id("soakbot").unwrap();
        let alice_id = server.account_id("alice").unwrap();
        let bob_id = server.account_id("bob").unwrap();
        let rooms: Vec<String> = (0..3)
            .map(|i| {
                let room = server.create_channel(&lobby, &format!("room-{i}")).unwrap();
                server.add_member(&room, &alice_id).unwrap();
                server.add_member(&room, &bot_id).unwrap();
                room
            })
            .collect();
        let alice = TestUser::connect(&url, ALICE).await.unwrap();
        let bob = TestUser::connect(&url, BOB).await.unwrap();
        let mut series = Series::new("memberships", 30, MEMBERSHIPS);
        for cycle in 0..MEMBERSHIPS {
            let room = &rooms[cycle % rooms.len()];
            server.add_member(room, &bob_id).unwrap();
            alice.open_channel(room).await.unwrap();
            bob.wait_for_key(room, WAIT).await.unwrap();
            assert_eq!(bob.channels().len(), 2, "c-1 and {room}");
            bob.send_text(room, &format!("in {room}")).await.unwrap();
            read_all(&alice).await;
            read_all(&bob).await;
            server.remove_member(room, &bob_id).unwrap();
            if cycle % 2 == 0 {
                server.remove_member(room, &bot_id).unwrap();
                server.add_member(room, &bot_id).unwrap();
            }
            eventually("bob's channel list without the room", || {
                bob.channels().len() == 1
            })
            .await;
            series.record().await;
        }
        let (connections, waiting) =
            server.view(|s| (s.connection_count(), s.pending_key_count(&bot_id)));
        assert_eq!(connections, 2, "alice and bob");
        assert!(
            waiting <= rooms.len() + 1,
            "one key per room and sender: {waiting}"
        );
        assert!(
            !bob.has_channel_key(&rooms[0]),
            "a key forgotten with its channel"
        );
        // Bytes: room for one doubling of a queue's or a buffer's capacity.
        series.assert_flat(24, Some(16 * 1024)).await;
        drop((alice, bob));
        server.shutdown().await;
    });
}
