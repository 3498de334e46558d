//! The REST lane's behaviour that needs no REST service: the flag-off
//! refusal from the devserver, the rules checked before anything is sent,
//! and the mint refusals and cancellation against a scripted realtime
//! service on loopback (the devserver cannot log a human in through
//! `Client`, which publishes a menu, so `-1` is scripted here).
//! The tests against the devserver's REST listener are in `rest.rs`.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::rest::{Method, Response};
use botlane::wire::OpCode;
use botlane::{Client, ClientOptions, RestError};
use botlane_devserver::{DevServer, DevServerConfig, Direction};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// A loopback TCP listener that only counts the connections it gets: the
/// `rest_url` of tests where nothing must reach HTTP at all.
async fn counting_listener() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((_socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    (url, count)
}

async fn devserver_client(server: &DevServer, dir: &tempfile::TempDir, rest_url: &str) -> Client {
    let bot = server.add_bot("restbot");
    let options = ClientOptions::new(bot.token, dir.path().join("bot.keystore"), server.ws_url())
        .rest_url(rest_url);
    let client = Client::new(options).unwrap();
    client.login().await.unwrap();
    client
}

fn mints_received(server: &DevServer) -> usize {
    server
        .frames()
        .iter()
        .filter(|f| f.is(Direction::Received, OpCode::RestMint))
        .count()
}

#[tokio::test]
async fn flag_off_by_default_rejects_with_opcode_638_code_minus_7() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (rest_url, connections) = counting_listener().await;
    let client = devserver_client(&server, &dir, &rest_url).await;
    for method in [Method::GET, Method::POST] {
        let err = client
            .rest()
            .request(method, "/api/files/list", None)
            .await
            .unwrap_err();
        let RestError::Action(action) = &err else {
            panic!("expected a ServiceActionError, got {err:?}");
        };
        assert_eq!((action.opcode, action.code), (638, -7));
        let text = err.to_string();
        assert!(text.contains("BOT_REST_CREDENTIALS is unset"), "{text}");
        assert!(text.contains("bot is not at fault"), "{text}");
    }
    // Each call tried a mint (no credential stays no credential) and none
    // reached HTTP.
    assert_eq!(mints_received(&server), 2);
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn a_non_https_rest_url_fails_on_first_use_before_any_mint_or_request() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (listening, connections) = counting_listener().await;
    let port = listening.rsplit(':').next().unwrap();
    for rest_url in [
        format!("http://localhost.example.com:{port}"),
        format!("http://127.0.0.1.nip.io:{port}"),
        "http://example.com".to_owned(),
    ] {
        let client = devserver_client(&server, &dir, &rest_url).await;
        for _ in 0..2 {
            let err = client
                .rest()
                .json::<serde_json::Value>(Method::GET, "/api/files/list", None)
                .await
                .unwrap_err();
            assert!(
                matches!(err, RestError::InvalidRestUrl { .. }),
                "{rest_url}: {err:?}"
            );
            assert!(err.to_string().contains("https"), "{err}");
        }
        client.shutdown();
    }
    assert_eq!(mints_received(&server), 0);
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn paths_must_be_origin_relative() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (rest_url, connections) = counting_listener().await;
    let client = devserver_client(&server, &dir, &rest_url).await;
    for path in [
        "https://elsewhere.example/api/files/list",
        "//elsewhere.example/api/files/list",
        "api/files/list",
    ] {
        let err = client
            .rest()
            .binary(Method::GET, path, None)
            .await
            .unwrap_err();
        assert!(
            matches!(err, RestError::InvalidPath { .. }),
            "{path}: {err:?}"
        );
    }
    assert_eq!(mints_received(&server), 0);
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn before_login_the_lane_is_not_connected() {
    let dir = tempfile::tempdir().unwrap();
    let (rest_url, connections) = counting_listener().await;
    let options =
        ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:9/ws").rest_url(rest_url);
    let client = Client::new(options).unwrap();
    let err = client
        .rest()
        .request(Method::GET, "/api/files/list", None)
        .await
        .unwrap_err();
    assert!(matches!(err, RestError::NotConnected), "{err:?}");
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}

/// A scripted realtime service: logs anyone in as a bot, accepts menus and
/// heartbeats, and answers the n-th opcode 638 with `codes[n]` after
/// `delay`. Counts the 638 requests it received.
struct ScriptedRealtime {
    url: String,
    mints: Arc<AtomicUsize>,
}

async fn scripted_realtime(codes: Vec<i32>, delay: Duration) -> ScriptedRealtime {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let mints = Arc::new(AtomicUsize::new(0));
    let counted = mints.clone();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let (mut sink, mut stream) = ws.split();
        let mut codes = codes.into_iter();
        while let Some(Ok(WsMessage::Text(text))) = stream.next().await {
            let frame: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
            let op = frame["op"].as_u64().unwrap();
            let d = match op {
                10 => json!({"code": 0, "user_id": "00000000-0000-4000-8000-000000000001"}),
                638 => {
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    json!({"code": codes.next().unwrap_or(-2)})
                }
                _ => json!({"code": 0}),
            };
            let reply = json!({"op": op, "d": d}).to_string();
            if sink.send(WsMessage::text(reply)).await.is_err() {
                break;
            }
        }
    });
    ScriptedRealtime { url, mints }
}

async fn scripted_client(service: &ScriptedRealtime, dir: &tempfile::TempDir) -> Client {
    let (rest_url, _) = counting_listener().await;
    let options =
        ClientOptions::new("t", dir.path().join("bot.keystore"), &service.url).rest_url(rest_url);
    let client = Client::new(options).unwrap();
    client.login().await.unwrap();
    client
}

fn refusal_code(result: Result<Response, RestError>) -> i32 {
    match result {
        Err(RestError::Action(e)) => {
            assert_eq!(e.opcode, 638);
            e.code
        }
        other => panic!("expected a ServiceActionError, got {other:?}"),
    }
}

#[tokio::test]
async fn every_mint_refusal_rejects_and_leaves_no_credential() {
    let service = scripted_realtime(vec![-1, -9, -2, -7], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let client = scripted_client(&service, &dir).await;
    let rest = client.rest();
    let mut seen = Vec::new();
    for _ in 0..4 {
        let result = rest.request(Method::GET, "/api/files/list", None).await;
        if let Err(e) = &result {
            assert!(e.to_string().contains("opcode 638"), "{e}");
        }
        seen.push(refusal_code(result));
    }
    assert_eq!(seen, [-1, -9, -2, -7]);
    assert_eq!(service.mints.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_dropped_initiator_neither_cancels_nor_repeats_the_mint() {
    let service = scripted_realtime(vec![-9, -2], Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    let client = scripted_client(&service, &dir).await;
    let rest = client.rest();
    let first = tokio::spawn({
        let rest = rest.clone();
        async move { rest.request(Method::GET, "/api/files/list", None).await }
    });
    tokio::time::timeout(Duration::from_secs(5), async {
        while service.mints.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    // The next caller joins the mint still in flight and gets its reply...
    let joined = rest.request(Method::GET, "/api/files/list", None).await;
    assert_eq!(refusal_code(joined), -9);
    assert_eq!(service.mints.load(Ordering::SeqCst), 1);
    // ...and the mint after it gets its own reply, not a left-over one.
    let next = rest.request(Method::GET, "/api/files/list", None).await;
    assert_eq!(refusal_code(next), -2);
    assert_eq!(service.mints.load(Ordering::SeqCst), 2);
}
