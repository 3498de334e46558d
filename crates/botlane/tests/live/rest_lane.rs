//! The REST lane against peers other than the devserver's REST listener:
//! the flag-off refusal and the rules checked before anything is sent; the
//! mint refusals and cancellation against a scripted realtime service on
//! loopback (the devserver cannot log a human in through `Client`, which
//! publishes a menu, so `-1` is scripted here); and a hostile REST origin
//! that streams endless bodies (the caps), states odd credential
//! lifetimes (the clamp) or answers the exchange oddly (its shape). The tests against the devserver's REST listener
//! are in `rest.rs`.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::rest::{Method, Response};
use botlane::{Client, ClientOptions, RestError};
use botlane_devserver::{DevServer, DevServerConfig};
use botlane_proto::OpCode;
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::io::AsyncBufRead;
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
    assert_eq!(support::received(&server, OpCode::RestMint), 2);
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
    assert_eq!(support::received(&server, OpCode::RestMint), 0);
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
    assert_eq!(support::received(&server, OpCode::RestMint), 0);
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

// ---------------------------------------------------------------------------
// A hostile REST origin: a raw HTTP/1.1 server on loopback whose answers the
// test scripts per route, with bodies generated on the fly (never held in
// memory) and a count of the bytes it managed to write before the client
// hung up. The realtime side is the devserver, so every mint is real.

/// 2 GiB: far more than any cap, never materialised.
const HUGE: u64 = 2 << 30;

/// The socket buffers between the two sides (the hostile sender's, the
/// client's receiver's, both grown by the kernel's autotuning) and the HTTP
/// client's read buffer: what a hostile origin can push past a cap before
/// the client's hang-up reaches it. Measured on loopback: 3.7 to 8.3 MiB.
const IN_FLIGHT: u64 = 16 << 20;

/// How the hostile origin sends a body.
#[derive(Clone)]
enum Body {
    /// These bytes, with their `content-length`.
    Small(Vec<u8>),
    /// `HUGE` bytes of `x`, chunked (no length announced).
    EndlessChunked,
    /// `HUGE` bytes of `x`, with `content-length: HUGE` announced.
    EndlessDeclared,
    /// `content-length: declared` announced, then three pieces of 64 KiB
    /// and the connection closed.
    Lying { declared: u64 },
}

#[derive(Clone)]
struct Answer {
    status: u16,
    body: Body,
}

impl Answer {
    fn json(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            body: Body::Small(body.to_string().into_bytes()),
        }
    }

    fn endless(status: u16) -> Self {
        Self {
            status,
            body: Body::EndlessChunked,
        }
    }
}

/// One generated body as the hostile origin saw it go out.
#[derive(Debug, Clone)]
struct Sent {
    path: String,
    status: u16,
    /// Bytes the kernel accepted, head excluded.
    written: u64,
    /// Whether the whole body went out (it never should).
    finished: bool,
}

type Script = Arc<dyn Fn(&str, &str) -> Answer + Send + Sync>;

struct Hostile {
    url: String,
    sent: Arc<std::sync::Mutex<Vec<Sent>>>,
    requests: Arc<std::sync::Mutex<Vec<(String, String)>>>,
}

impl Hostile {
    /// Serves `script(method, path)` on every request.
    async fn start(script: impl Fn(&str, &str) -> Answer + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let script: Script = Arc::new(script);
        let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
        let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (log, seen) = (sent.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (script, log, seen) = (script.clone(), log.clone(), seen.clone());
                tokio::spawn(serve_connection(socket, script, log, seen));
            }
        });
        Self {
            url,
            sent,
            requests,
        }
    }

    /// The generated bodies sent so far, once `n` of them have ended.
    async fn sent(&self, n: usize) -> Vec<Sent> {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let sent = self.sent.lock().unwrap().clone();
                if sent.len() >= n {
                    return sent;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the client hangs up on every generated body")
    }

    fn paths(&self) -> Vec<(String, String)> {
        self.requests.lock().unwrap().clone()
    }
}

/// Reads one request of a stand-in origin's connection: its head, then a
/// body of its `content-length`. Its method and path; `None` once the
/// connection ends or breaks.
async fn read_request(read: &mut (impl AsyncBufRead + Unpin)) -> Option<(String, String)> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        match read.read_line(&mut line).await {
            Ok(0) | Err(_) => return None,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => head.push(line),
        }
    }
    let mut parts = head.first()?.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let length = head
        .iter()
        .find_map(|h| {
            let (name, value) = h.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some((method, path))
}

async fn serve_connection(
    socket: tokio::net::TcpStream,
    script: Script,
    log: Arc<std::sync::Mutex<Vec<Sent>>>,
    seen: Arc<std::sync::Mutex<Vec<(String, String)>>>,
) {
    use tokio::io::{AsyncWriteExt, BufReader};
    let (read, mut write) = socket.into_split();
    let mut read = BufReader::new(read);
    while let Some((method, path)) = read_request(&mut read).await {
        seen.lock().unwrap().push((method.clone(), path.clone()));
        let answer = script(&method, &path);
        let status = answer.status;
        let head = |extra: &str| {
            format!("HTTP/1.1 {status} Hostile\r\ncontent-type: application/json\r\n{extra}\r\n")
        };
        match answer.body {
            Body::Lying { declared } => {
                let head = head(&format!("content-length: {declared}\r\n"));
                let piece = vec![b'x'; 64 * 1024];
                if write.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for _ in 0..3 {
                    if write.write_all(&piece).await.is_err() {
                        return;
                    }
                    // Pieces apart, so that the client reads more than one chunk.
                    let _ = write.flush().await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                return;
            }
            Body::Small(bytes) => {
                let head = head(&format!("content-length: {}\r\n", bytes.len()));
                if write.write_all(head.as_bytes()).await.is_err()
                    || write.write_all(&bytes).await.is_err()
                {
                    return;
                }
            }
            endless => {
                let chunked = matches!(endless, Body::EndlessChunked);
                let extra = if chunked {
                    "transfer-encoding: chunked\r\n".to_owned()
                } else {
                    format!("content-length: {HUGE}\r\n")
                };
                if write.write_all(head(&extra).as_bytes()).await.is_err() {
                    return;
                }
                let (written, finished) = write_endless(&mut write, chunked).await;
                log.lock().unwrap().push(Sent {
                    path,
                    status,
                    written,
                    finished,
                });
                return;
            }
        }
    }
}

/// Writes `HUGE` bytes of `x` (chunk framing included when `chunked`),
/// counting every byte the kernel accepts; stops at the first write error.
async fn write_endless(write: &mut tokio::net::tcp::OwnedWriteHalf, chunked: bool) -> (u64, bool) {
    use tokio::io::AsyncWriteExt;
    const PIECE: usize = 64 * 1024;
    let payload = vec![b'x'; PIECE];
    let mut framed = Vec::with_capacity(PIECE + 16);
    if chunked {
        framed.extend_from_slice(format!("{PIECE:x}\r\n").as_bytes());
    }
    framed.extend_from_slice(&payload);
    if chunked {
        framed.extend_from_slice(b"\r\n");
    }
    let mut written = 0u64;
    let mut body = 0u64;
    while body < HUGE {
        let mut offset = 0;
        while offset < framed.len() {
            match write.write(&framed[offset..]).await {
                Ok(0) | Err(_) => return (written, false),
                Ok(n) => {
                    offset += n;
                    written += n as u64;
                }
            }
        }
        body += PIECE as u64;
    }
    (written, true)
}

/// A devserver with the flag on and a logged-in client whose `rest_url` is
/// the hostile origin.
async fn hostile_client(
    rest_url: &str,
    dir: &tempfile::TempDir,
    tune: impl FnOnce(ClientOptions) -> ClientOptions,
) -> (DevServer, Client) {
    let server = DevServer::start(DevServerConfig::default().bot_rest_credentials(true))
        .await
        .unwrap();
    let bot = server.add_bot("restbot");
    let options = ClientOptions::new(bot.token, dir.path().join("bot.keystore"), server.ws_url())
        .rest_url(rest_url)
        .rest_timeout(Duration::from_secs(60));
    let client = Client::new(tune(options)).unwrap();
    client.login().await.unwrap();
    (server, client)
}

/// A well-behaved exchange reply.
fn exchanged(expires_in: Option<u64>) -> Answer {
    let mut body = json!({"verification": "hostile-origin-credential-0001"});
    if let Some(seconds) = expires_in {
        body["expires_in"] = json!(seconds);
    }
    Answer::json(200, body)
}

fn assert_bounded(sent: &Sent, cap: u64) {
    assert!(!sent.finished, "the whole 2 GiB body went out: {sent:?}");
    assert!(
        sent.written <= cap + IN_FLIGHT,
        "the origin wrote {} bytes past a cap of {cap}: {sent:?}",
        sent.written
    );
    eprintln!(
        "{} {}: {} bytes written (cap {cap})",
        sent.status, sent.path, sent.written
    );
}

#[tokio::test]
async fn an_endless_exchange_reply_is_cut_at_4_kib() {
    for body in [Body::EndlessChunked, Body::EndlessDeclared] {
        let origin = Hostile::start(move |_, _| Answer {
            status: 200,
            body: body.clone(),
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let (server, client) = hostile_client(&origin.url, &dir, |o| o).await;
        let err = client
            .rest()
            .request(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err();
        let RestError::BodyTooLarge { path, limit, .. } = &err else {
            panic!("expected BodyTooLarge, got {err:?}");
        };
        assert_eq!((path.as_str(), *limit), ("/auth/verify-session", 4096));
        assert!(err.to_string().contains("4 KiB limit"), "{err}");
        let sent = origin.sent(1).await;
        assert_bounded(&sent[0], 4096);
        // The mint went no further: no request under /api.
        assert_eq!(origin.paths().len(), 1);
        assert_eq!(server.mint_count(), 1);
        client.shutdown();
    }
}

#[tokio::test]
async fn an_endless_500_body_is_cut_at_4_kib() {
    let origin = Hostile::start(|_, path| match path {
        "/auth/verify-session" => exchanged(Some(900)),
        _ => Answer::endless(500),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (_server, client) = hostile_client(&origin.url, &dir, |o| o).await;
    let err = client
        .rest()
        .json::<serde_json::Value>(Method::GET, "/api/files/list", None)
        .await
        .unwrap_err();
    let RestError::Rest(e) = &err else {
        panic!("expected a ServiceRestError, got {err:?}");
    };
    assert_eq!(
        (e.status, e.path.as_str(), e.error_code.as_deref()),
        (500, "/api/files/list", None)
    );
    assert_eq!(
        err.to_string(),
        "the REST service answered 500 to /api/files/list"
    );
    assert_bounded(&origin.sent(1).await[0], 4096);
    client.close().await.unwrap();
}

#[tokio::test]
async fn endless_401_bodies_are_cut_at_4_kib_on_the_call_and_its_retry() {
    let origin = Hostile::start(|_, path| match path {
        "/auth/verify-session" => exchanged(Some(900)),
        _ => Answer::endless(401),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = hostile_client(&origin.url, &dir, |o| o).await;
    let err = client
        .rest()
        .request(Method::GET, "/api/files/list", None)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(401), "{err:?}");
    let sent = origin.sent(2).await;
    for s in &sent {
        assert_bounded(s, 4096);
    }
    // The 401 dropped the credential: one re-mint, one retry, no more.
    assert_eq!(server.mint_count(), 2);
    let paths: Vec<String> = origin.paths().into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        [
            "/auth/verify-session",
            "/api/files/list",
            "/auth/verify-session",
            "/api/files/list"
        ]
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn json_over_its_cap_fails_naming_the_cap() {
    let origin = Hostile::start(|_, path| match path {
        "/auth/verify-session" => exchanged(Some(900)),
        _ => Answer::endless(200),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    for (limit, tune) in [
        (1 << 20, Some(1 << 20)),
        (botlane::rest::DEFAULT_JSON_LIMIT, None),
    ] {
        let (_server, client) = hostile_client(&origin.url, &dir, |o| match tune {
            Some(bytes) => o.rest_json_limit(bytes),
            None => o,
        })
        .await;
        let before = origin.sent.lock().unwrap().len();
        let err = client
            .rest()
            .json::<serde_json::Value>(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err();
        let RestError::BodyTooLarge {
            path,
            limit: named,
            cap,
        } = &err
        else {
            panic!("expected BodyTooLarge, got {err:?}");
        };
        assert_eq!((path.as_str(), *named), ("/api/files/list", limit));
        assert!(cap.contains("rest_json_limit"), "{cap}");
        assert!(
            err.to_string().contains(&format!("over {limit} bytes")),
            "{err}"
        );
        let sent = origin.sent(before + 1).await;
        assert_bounded(&sent[before], limit as u64);
        client.shutdown();
    }
}

#[tokio::test]
async fn binary_over_its_cap_fails_and_request_streams_past_it() {
    let origin = Hostile::start(|_, path| match path {
        "/auth/verify-session" => exchanged(Some(900)),
        _ => Answer {
            status: 200,
            body: Body::EndlessDeclared,
        },
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let limit = 1 << 20;
    let (_server, client) = hostile_client(&origin.url, &dir, |o| o.rest_binary_limit(limit)).await;
    let rest = client.rest();
    let err = rest
        .binary(Method::GET, "/api/files/f1/download", None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RestError::BodyTooLarge { limit: l, cap, .. } if *l == limit && cap.contains("rest_binary_limit")),
        "{err:?}"
    );
    // Declared over the cap: refused before reading anything.
    assert_bounded(&origin.sent(1).await[0], 0);

    // The same body through `request`: `bytes` has the same cap, a stream none.
    let response = rest
        .request(Method::GET, "/api/files/f1/download", None)
        .await
        .unwrap();
    assert_eq!(response.content_length(), Some(HUGE));
    assert!(matches!(
        response.bytes().await,
        Err(RestError::BodyTooLarge { .. })
    ));
    let mut response = rest
        .request(Method::GET, "/api/files/f1/download", None)
        .await
        .unwrap();
    let mut read = 0;
    while read < 4 * limit {
        let chunk = response.chunk().await.unwrap().expect("the body goes on");
        assert!(chunk.iter().all(|&b| b == b'x'));
        read += chunk.len();
    }
    drop(response);
    let mut sent = origin.sent(3).await;
    sent.sort_by_key(|s| s.written);
    assert_bounded(&sent[1], 0);
    assert_bounded(&sent[2], read as u64);
    assert!(sent[2].written >= read as u64);
    client.close().await.unwrap();
}

/// A body whose declared length is past what memory can hold, with no cap
/// on the client (`rest_binary_limit(usize::MAX)`): the client reserves
/// no more than it is sent (a declared length is the service's word, not
/// memory), and the short body ends in an error, not a panic or an abort.
#[tokio::test]
async fn a_declared_length_past_memory_is_not_reserved() {
    let declared = u64::MAX / 2 + 2;
    let origin = Hostile::start(move |_, path| match path {
        "/auth/verify-session" => exchanged(Some(900)),
        _ => Answer {
            status: 200,
            body: Body::Lying { declared },
        },
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (_server, client) =
        hostile_client(&origin.url, &dir, |o| o.rest_binary_limit(usize::MAX)).await;
    let err = client
        .rest()
        .binary(Method::GET, "/api/files/f1/download", None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RestError::Rest(e) if e.status == 0),
        "the body ended short of its declared length: {err:?}"
    );
    client.close().await.unwrap();
}

// ---------------------------------------------------------------------------
// The credential's lifetime as the exchange states it: 15 minutes when
// absent, believed between 30 s and 15 minutes. Counted in mints on the
// devserver, with an origin that accepts any credential.

/// An origin whose exchange says `expires_in` and whose API accepts anything.
async fn lenient_origin(expires_in: Option<u64>) -> Hostile {
    Hostile::start(move |_, path| match path {
        "/auth/verify-session" => exchanged(expires_in),
        _ => Answer::json(200, json!({"files": []})),
    })
    .await
}

#[tokio::test]
async fn a_zero_or_tiny_expires_in_does_not_mint_on_every_call() {
    for expires_in in [0, 1] {
        let origin = lenient_origin(Some(expires_in)).await;
        let dir = tempfile::tempdir().unwrap();
        let (server, client) = hostile_client(&origin.url, &dir, |o| o).await;
        let rest = client.rest();
        for _ in 0..10 {
            rest.json::<serde_json::Value>(Method::GET, "/api/files/list", None)
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        // 1.5 s of calls, past the stated lifetime: still the first mint.
        assert_eq!(server.mint_count(), 1, "expires_in {expires_in}");
        assert_eq!(origin.paths().len(), 11);
        client.shutdown();
    }
}

#[tokio::test]
async fn an_absent_or_over_long_expires_in_is_accepted() {
    for expires_in in [None, Some(86_400), Some(u64::MAX)] {
        let origin = lenient_origin(expires_in).await;
        let dir = tempfile::tempdir().unwrap();
        let (server, client) = hostile_client(&origin.url, &dir, |o| o).await;
        for _ in 0..3 {
            let list: serde_json::Value = client
                .rest()
                .json(Method::GET, "/api/files/list", None)
                .await
                .unwrap();
            assert_eq!(list, json!({"files": []}));
        }
        assert_eq!(server.mint_count(), 1, "expires_in {expires_in:?}");
        client.shutdown();
    }
}

/// An origin whose exchange answers `status` with `raw` as its body, and
/// whose API accepts anything.
async fn exchange_answering(status: u16, raw: &str) -> Hostile {
    let raw = raw.as_bytes().to_vec();
    Hostile::start(move |_, path| match path {
        "/auth/verify-session" => Answer {
            status,
            body: Body::Small(raw.clone()),
        },
        _ => Answer::json(200, json!({"files": []})),
    })
    .await
}

// rest.md, "A service of your own": the exchange's answer is any 2xx whose
// `expires_in` is a JSON integer from 0 to 2^64 - 1 (or absent, or null) and
// whose `verification` is a non-empty header value of visible ASCII without
// surrounding whitespace. Anything else fails the call at the exchange, before
// any /api request, and leaves no credential (the next call mints again).
#[tokio::test]
async fn the_exchange_answer_s_shape_is_checked_before_any_call() {
    let accepted = [
        (201, r#"{"verification":"v-1","expires_in":1000000000000}"#),
        (
            200,
            r#"{"verification":"v 2","expires_in":null,"other":[1]}"#,
        ),
        (
            200,
            r#"{"verification":"v~3","expires_in":18446744073709551615}"#,
        ),
    ];
    for (status, raw) in accepted {
        let origin = exchange_answering(status, raw).await;
        let dir = tempfile::tempdir().unwrap();
        let (server, client) = hostile_client(&origin.url, &dir, |o| o).await;
        for _ in 0..2 {
            let list: serde_json::Value = client
                .rest()
                .json(Method::GET, "/api/files/list", None)
                .await
                .unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(list, json!({"files": []}), "{raw}");
        }
        assert_eq!(server.mint_count(), 1, "{raw}");
        client.shutdown();
    }
    let refused = [
        r#"{"verification":"v","expires_in":900.0}"#,
        r#"{"verification":"v","expires_in":9e2}"#,
        r#"{"verification":"v","expires_in":"900"}"#,
        r#"{"verification":"v","expires_in":-1}"#,
        r#"{"verification":"v","expires_in":18446744073709551616}"#,
        r#"{"verification":""}"#,
        r#"{"verification":" padded"}"#,
        r#"{"verification":"padded\t"}"#,
        r#"{"verification":"caf\u00e9"}"#,
        r#"{"verification":"a\u007fb"}"#,
        r#"{"verification":"a\nb"}"#,
        r#"{"verification":42}"#,
        r#"{"expires_in":900}"#,
    ];
    for raw in refused {
        let origin = exchange_answering(200, raw).await;
        let dir = tempfile::tempdir().unwrap();
        let (server, client) = hostile_client(&origin.url, &dir, |o| o).await;
        for _ in 0..2 {
            let err = client
                .rest()
                .request(Method::GET, "/api/files/list", None)
                .await
                .err()
                .unwrap_or_else(|| panic!("{raw}: the call succeeded"));
            let RestError::Decode { path, .. } = &err else {
                panic!("{raw}: expected a decode error, got {err:?}");
            };
            assert_eq!(path, "/auth/verify-session", "{raw}");
        }
        // No credential kept: each call minted, and none reached /api.
        assert_eq!(server.mint_count(), 2, "{raw}");
        assert!(
            origin
                .paths()
                .iter()
                .all(|(_, p)| p == "/auth/verify-session"),
            "{raw}: {:?}",
            origin.paths()
        );
        client.shutdown();
    }
}

#[tokio::test]
async fn an_origin_that_never_answers_times_out_with_status_0() {
    // Accepts and reads, never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (_server, client) =
        hostile_client(&url, &dir, |o| o.rest_timeout(Duration::from_millis(300))).await;
    let err = client
        .rest()
        .request(Method::GET, "/api/files/list", None)
        .await
        .unwrap_err();
    let RestError::Rest(e) = &err else {
        panic!("expected a ServiceRestError, got {err:?}");
    };
    assert_eq!((e.status, e.path.as_str()), (0, "/auth/verify-session"));
    assert!(err.to_string().contains("timed out"), "{err}");
    client.close().await.unwrap();
}

/// How a broken origin ends its answer to every request.
#[derive(Clone, Copy, Debug)]
enum Breakage {
    /// A header line of 1 MiB.
    HugeHeader,
    /// Header lines without end.
    EndlessHeaders,
    /// A status line that is not HTTP.
    Malformed,
    /// Half a head, then a reset.
    ResetMidHead,
    /// A head announcing 1,000 bytes, ten of them, then a reset.
    ResetMidBody,
}

/// An origin that reads each request ([`read_request`]) and answers it with
/// `breakage`.
async fn broken_origin(breakage: Breakage) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                // The exchange's body is read too: a close with it unread
                // would be a reset, whatever the breakage.
                let mut socket = BufReader::new(socket);
                if read_request(&mut socket).await.is_none() {
                    return;
                }
                let reset = |socket: BufReader<tokio::net::TcpStream>| {
                    // Linger 0: the close is a reset, not a FIN.
                    socket.into_inner().set_zero_linger().unwrap();
                };
                match breakage {
                    Breakage::HugeHeader => {
                        let line = format!("x-big: {}\r\n\r\n", "a".repeat(1 << 20));
                        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\n").await;
                        let _ = socket.write_all(line.as_bytes()).await;
                    }
                    Breakage::EndlessHeaders => {
                        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\n").await;
                        while socket.write_all(b"x-more: yes\r\n").await.is_ok() {}
                    }
                    Breakage::Malformed => {
                        let _ = socket.write_all(b"HTTP/1.1 2x0 Nope\r\n\r\n").await;
                    }
                    Breakage::ResetMidHead => {
                        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-").await;
                        reset(socket);
                        return;
                    }
                    Breakage::ResetMidBody => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n0123456789";
                        let _ = socket.write_all(head.as_bytes()).await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        reset(socket);
                        return;
                    }
                }
                // Open until the client hangs up.
                let _ = socket.read_to_end(&mut Vec::new()).await;
            });
        }
    });
    url
}

#[tokio::test]
async fn each_way_an_answer_breaks_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    for (breakage, says) in [
        (
            Breakage::HugeHeader,
            "the response's status line and headers are larger than the HTTP client reads",
        ),
        (
            Breakage::EndlessHeaders,
            "the response's status line and headers are larger than the HTTP client reads",
        ),
        (
            Breakage::Malformed,
            "the response is not valid HTTP/1.1 (a malformed status line or header)",
        ),
        (
            Breakage::ResetMidHead,
            "the connection was closed or reset before the response's head was complete",
        ),
        (
            Breakage::ResetMidBody,
            "the connection was closed or reset while the body was read",
        ),
    ] {
        let url = broken_origin(breakage).await;
        let (_server, client) = hostile_client(&url, &dir, |o| o).await;
        let err = client
            .rest()
            .request(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err();
        let RestError::Rest(e) = &err else {
            panic!("{breakage:?}: expected a ServiceRestError, got {err:?}");
        };
        assert_eq!((e.status, e.path.as_str()), (0, "/auth/verify-session"));
        let text = err.to_string();
        assert!(
            text.starts_with("no response from the REST service for /auth/verify-session: ")
                && text.contains(says),
            "{breakage:?}: {text}"
        );
        // The HTTP client's own error stays behind `source()`, unrepeated.
        let source = std::error::Error::source(&err).unwrap().to_string();
        assert!(!text.contains(&source), "{breakage:?}: {text} / {source}");
        client.close().await.unwrap();
    }
}

/// A well-behaved origin that answers each request after `delay`, counting
/// the connections open and the requests in flight at once.
struct Counting {
    url: String,
    open_peak: Arc<AtomicUsize>,
    in_flight_peak: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
}

async fn counting_origin(delay: Duration) -> Counting {
    use tokio::io::{AsyncWriteExt, BufReader};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let counting = Counting {
        url: format!("http://{}", listener.local_addr().unwrap()),
        open_peak: Arc::default(),
        in_flight_peak: Arc::default(),
        connections: Arc::default(),
    };
    let (open_peak, in_flight_peak, connections) = (
        counting.open_peak.clone(),
        counting.in_flight_peak.clone(),
        counting.connections.clone(),
    );
    let (open, in_flight) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            connections.fetch_add(1, Ordering::SeqCst);
            let now = open.fetch_add(1, Ordering::SeqCst) + 1;
            open_peak.fetch_max(now, Ordering::SeqCst);
            let (open, in_flight, in_flight_peak) =
                (open.clone(), in_flight.clone(), in_flight_peak.clone());
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut read = BufReader::new(read);
                while let Some((method, path)) = read_request(&mut read).await {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    in_flight_peak.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    let body = if method == "POST" && path == "/auth/verify-session" {
                        r#"{"verification":"counting-origin-credential"}"#
                    } else {
                        r#"{"files":[]}"#
                    };
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if write.write_all(answer.as_bytes()).await.is_err() {
                        break;
                    }
                }
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    counting
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lane_has_at_most_rest_max_connections_requests_in_flight() {
    let origin = counting_origin(Duration::from_millis(20)).await;
    let dir = tempfile::tempdir().unwrap();
    let (_server, client) = hostile_client(&origin.url, &dir, |o| o.rest_max_connections(4)).await;
    let calls: Vec<_> = (0..200)
        .map(|_| {
            let rest = client.rest();
            tokio::spawn(async move {
                rest.json::<serde_json::Value>(Method::GET, "/api/files/list", None)
                    .await
            })
        })
        .collect();
    for call in futures_util::future::join_all(calls).await {
        call.unwrap().unwrap();
    }
    // Never more than four requests at once, and connections are reused:
    // the HTTP client may open one while another is on its way back to its
    // pool, never one per call.
    assert_eq!(origin.in_flight_peak.load(Ordering::SeqCst), 4);
    let (open, opened) = (
        origin.open_peak.load(Ordering::SeqCst),
        origin.connections.load(Ordering::SeqCst),
    );
    assert!(
        open <= 8 && opened <= 8,
        "{open} open at once, {opened} opened"
    );
    client.close().await.unwrap();
}

/// The attempt's timeout covers the wait for a connection and the exchange
/// together: a call that waited most of it for the lane's only connection
/// has only what is left for its own exchange, never a whole timeout more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_for_a_connection_counts_against_the_timeout() {
    // Every answer takes 2 s; the timeout is 3 s: a call that waits for a
    // busy connection has at most about 1.5 s left for its own 2 s.
    let origin = counting_origin(Duration::from_secs(2)).await;
    let dir = tempfile::tempdir().unwrap();
    let (_server, client) = hostile_client(&origin.url, &dir, |o| {
        o.rest_max_connections(1)
            .rest_timeout(Duration::from_secs(3))
    })
    .await;
    let list = |rest: botlane::rest::RestLane| async move {
        rest.json::<serde_json::Value>(Method::GET, "/api/files/list", None)
            .await
    };
    // The credential first (its exchange holds the connection too).
    list(client.rest()).await.unwrap();
    let first = tokio::spawn(list(client.rest()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let err = list(client.rest()).await.unwrap_err();
    assert_eq!(err.status(), Some(0), "{err:?}");
    assert!(err.to_string().contains("timed out"), "{err}");
    first.await.unwrap().unwrap();
    client.close().await.unwrap();
}
