//! The HTTP admin endpoint (`--admin`), driven the way a client in another
//! language drives it: HTTP/1.1 written by hand over a TCP socket on
//! loopback, against a real devserver started by the test.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, ServerConfig, TestUser, TestUserError,
};
use botlane_proto::OpCode;
use common::{interrupt, End, Raw};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An answer: status, headers (names lower-case) and the body as JSON (a
/// `text/plain` body as a JSON string).
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A refusal's `error_code`, after checking the error body's shape.
    fn error_code(&self) -> &str {
        let message = self.body["message"].as_str().unwrap();
        assert!(!message.is_empty(), "{self:?}");
        self.body["error_code"].as_str().unwrap()
    }
}

/// One request on a fresh connection, with exactly the given headers (and
/// `Content-Length`, `Connection: close`).
async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(common::WAIT, tcp.read_to_end(&mut raw))
        .await
        .expect("an answer within the wait")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let text = headers
        .iter()
        .any(|(k, v): &(String, String)| k == "content-type" && v.starts_with("text/plain"));
    let body = if body.is_empty() {
        Value::Null
    } else if text {
        Value::String(body.to_owned())
    } else {
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// The admin endpoint of a running service, spoken to as its documentation says.
struct Admin {
    addr: SocketAddr,
    host: String,
    bearer: String,
}

impl Admin {
    fn of(server: &DevServer) -> Self {
        let addr = server.admin_addr().unwrap();
        Self {
            addr,
            host: format!("127.0.0.1:{}", addr.port()),
            bearer: format!("Bearer {}", server.admin_token().unwrap()),
        }
    }

    async fn call(&self, method: &str, route: &str, body: Option<Value>) -> Answer {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut headers = vec![
            ("Host", self.host.as_str()),
            ("Authorization", self.bearer.as_str()),
        ];
        if !body.is_empty() {
            headers.push(("Content-Type", "application/json"));
        }
        http(self.addr, method, route, &headers, &body).await
    }

    /// A POST that must succeed; its answer's body.
    async fn post(&self, route: &str, body: Value) -> Value {
        let answer = self.call("POST", route, Some(body)).await;
        assert_eq!(answer.status, 200, "{route}: {answer:?}");
        assert_eq!(answer.header("cache-control"), Some("no-store"));
        assert!(answer.header("access-control-allow-origin").is_none());
        answer.body
    }

    async fn state(&self) -> Value {
        let answer = self.call("GET", "/admin/state", None).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.body
    }
}

/// Polls `cond` until it holds, for at most [`common::WAIT`].
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + common::WAIT;
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn admin_server(config: DevServerConfig) -> (DevServer, Admin) {
    let server = DevServer::start(config.admin(true)).await.unwrap();
    let admin = Admin::of(&server);
    (server, admin)
}

#[tokio::test]
async fn the_index_lists_every_route_and_the_state_reports_counters() {
    let (server, admin) = admin_server(DevServerConfig::default()).await;
    assert_eq!(
        server.admin_url().unwrap(),
        format!("http://{}/admin", admin.addr)
    );
    let index = admin.call("GET", "/admin", None).await;
    assert_eq!(index.status, 200);
    assert_eq!(index.header("content-type"), Some("application/json"));
    let routes: Vec<String> = index.body["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["method"].as_str().unwrap(),
                r["path"].as_str().unwrap()
            )
        })
        .collect();
    for expected in [
        "GET /admin",
        "GET /admin/state",
        "POST /admin/add_bot",
        "POST /admin/add_user",
        "POST /admin/create_server",
        "POST /admin/create_channel",
        "POST /admin/add_member",
        "POST /admin/remove_member",
        "POST /admin/deny_sends",
        "POST /admin/drop_connections",
        "POST /admin/revoke_bot",
        "POST /admin/set_rest_credentials",
        "POST /admin/set_mint_rate_limit",
        "POST /admin/fail_next_mints",
        "POST /admin/fail_next_requests",
        "POST /admin/set_session_lifetime",
        "POST /admin/purge_rest_credentials",
    ] {
        assert!(
            routes.contains(&expected.to_owned()),
            "{expected}: {routes:?}"
        );
    }
    assert_eq!(routes.len(), 17);
    assert_eq!(
        admin.state().await,
        json!({"rest_credentials": false, "mint_count": 0, "exchange_count": 0,
               "connection_count": 0, "session_count": 0})
    );
}

#[tokio::test]
async fn the_scene_is_set_over_http_with_the_same_effects_as_the_rust_api() {
    let (server, admin) = admin_server(DevServerConfig::default()).await;
    let alice = admin
        .post("/admin/add_user", json!({"name": "alice"}))
        .await;
    let bot = admin
        .post("/admin/add_bot", json!({"name": "dicebot"}))
        .await;
    let alice_id = alice["id"].as_str().unwrap();
    let bot_id = bot["id"].as_str().unwrap();
    assert_eq!(server.account_id("alice").as_deref(), Some(alice_id));
    assert_eq!(server.account_id("dicebot").as_deref(), Some(bot_id));
    assert!(bot["token"].as_str().unwrap().starts_with("bot_"));
    let lobby = admin
        .post("/admin/create_server", json!({"name": "lobby"}))
        .await;
    let lobby = lobby["id"].as_str().unwrap();
    assert_eq!(server.server_id("lobby").as_deref(), Some(lobby));
    let general = admin
        .post(
            "/admin/create_channel",
            json!({"server_id": lobby, "name": "general"}),
        )
        .await;
    let general = general["id"].as_str().unwrap().to_owned();
    assert_eq!(server.channel_id(lobby, "general"), Some(general.clone()));

    // The tokens handed out log in; membership changes reach an online account.
    let user = TestUser::connect(&server.ws_url(), alice["token"].as_str().unwrap())
        .await
        .unwrap();
    let mut raw_bot = Raw::connect(&server.ws_url()).await;
    raw_bot.login(bot["token"].as_str().unwrap()).await;
    let member = json!({"channel_id": general, "account_id": alice_id});
    assert_eq!(
        admin.post("/admin/add_member", member.clone()).await,
        json!({})
    );
    admin
        .post(
            "/admin/add_member",
            json!({"channel_id": general, "account_id": bot_id}),
        )
        .await;
    assert_eq!(
        raw_bot.next_of(OpCode::ChannelAdded).await["channel"]["id"],
        general.as_str()
    );
    assert_eq!(
        server.view(|s| s.members(&general).to_vec()),
        [alice_id, bot_id]
    );
    eventually("alice learns of general", || !user.channels().is_empty()).await;
    assert_eq!(user.channels()[0].id, general);

    // Sends denied, then accepted again.
    user.open_channel(&general).await.unwrap();
    admin
        .post(
            "/admin/deny_sends",
            json!({"channel_id": general, "denial": "rate_limited"}),
        )
        .await;
    match user.send_text(&general, "hello").await {
        Err(TestUserError::Refused { code, .. }) => assert_eq!(code, -9),
        other => panic!("expected -9, got {other:?}"),
    }
    admin
        .post(
            "/admin/deny_sends",
            json!({"channel_id": general, "denial": null}),
        )
        .await;
    user.send_text(&general, "hello").await.unwrap();

    // -2 injected on another opcode than 638, once.
    admin
        .post("/admin/fail_next_requests", json!({"op": 12, "count": 1}))
        .await;
    match user.heartbeat().await {
        Err(TestUserError::Refused { code, .. }) => assert_eq!(code, -2),
        other => panic!("expected -2, got {other:?}"),
    }
    user.heartbeat().await.unwrap();

    // Removal: op 35 and the member is gone.
    admin.post("/admin/remove_member", member).await;
    assert!(!server.view(|s| s.members(&general).contains(&alice_id.to_owned())));
    eventually("alice forgets general", || user.channels().is_empty()).await;

    // Dropping connections: both sockets end.
    assert_eq!(admin.state().await["session_count"], 2);
    admin.post("/admin/drop_connections", json!({})).await;
    // Whatever was pushed before (alice's channel key), then no close frame.
    let end = loop {
        if let Err(end) = raw_bot.next().await {
            break end;
        }
    };
    assert_eq!(end, End::Dropped);
    server
        .wait_for(|s| s.connection_count() == 0, common::WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_rest_lane_is_steered_over_http() {
    let config = DevServerConfig::default().bot(AccountConfig::new("dicebot", "admin-bot"));
    let (server, admin) = admin_server(config).await;
    let bot_id = server.account_id("dicebot").unwrap();
    let mut bot = Raw::connect(&server.ws_url()).await;
    bot.login("admin-bot").await;
    assert_eq!(bot.request(OpCode::RestMint, json!({})).await["code"], -7);
    admin
        .post("/admin/set_rest_credentials", json!({"on": true}))
        .await;
    assert_eq!(admin.state().await["rest_credentials"], true);
    assert!(server.rest_credentials());
    admin
        .post(
            "/admin/set_mint_rate_limit",
            json!({"max": 0, "window_ms": 60000}),
        )
        .await;
    assert_eq!(bot.request(OpCode::RestMint, json!({})).await["code"], -9);
    admin
        .post(
            "/admin/set_mint_rate_limit",
            json!({"max": 30, "window_ms": 60000}),
        )
        .await;
    admin
        .post("/admin/fail_next_mints", json!({"count": 1}))
        .await;
    assert_eq!(bot.request(OpCode::RestMint, json!({})).await["code"], -2);
    assert_eq!(bot.request(OpCode::RestMint, json!({})).await["code"], 0);
    assert_eq!(admin.state().await["mint_count"], 1);
    // The minted secret is a row; purging removes it, so it cannot be exchanged.
    let purged = admin
        .post("/admin/purge_rest_credentials", json!({"bot_id": bot_id}))
        .await;
    assert_eq!(purged, json!({"purged": 1}));
    // The lifetime of the next exchanged credential.
    admin
        .post("/admin/set_session_lifetime", json!({"lifetime_ms": 5000}))
        .await;
    let minted = bot.request(OpCode::RestMint, json!({})).await;
    let exchange = json!({"secret": minted["secret"], "row_id": minted["row_id"]}).to_string();
    let rest_host = server.rest_addr().to_string();
    let headers = [
        ("Host", rest_host.as_str()),
        ("Content-Type", "application/json"),
    ];
    let answer = http(
        server.rest_addr(),
        "POST",
        "/auth/verify-session",
        &headers,
        &exchange,
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["expires_in"], 5);
    assert_eq!(admin.state().await["exchange_count"], 1);
    // Revoking closes the bot's socket with 1008.
    admin
        .post("/admin/revoke_bot", json!({"bot_id": bot_id}))
        .await;
    assert_eq!(bot.next().await, Err(End::Closed(Some(1008))));
    assert_eq!(bot.close_reason.as_deref(), Some("token revoked"));
}

#[tokio::test]
async fn a_request_without_the_token_or_with_a_wrong_one_is_401_and_changes_nothing() {
    let (server, admin) = admin_server(DevServerConfig::default()).await;
    let other = DevServer::start(DevServerConfig::default().admin(true))
        .await
        .unwrap()
        .admin_token()
        .unwrap();
    let token = server.admin_token().unwrap();
    let body = r#"{"name":"mallory"}"#;
    for authorization in [
        None,
        Some(format!("Bearer {other}")),
        Some(format!("Bearer {}", &token[..token.len() - 1])),
        Some(format!("Bearer {token}x")),
        Some(format!("Basic {token}")),
        Some(token.clone()),
        Some("Bearer ".to_owned()),
    ] {
        let mut headers = vec![
            ("Host", admin.host.as_str()),
            ("Content-Type", "application/json"),
        ];
        if let Some(value) = &authorization {
            headers.push(("Authorization", value.as_str()));
        }
        let answer = http(admin.addr, "POST", "/admin/add_user", &headers, body).await;
        assert_eq!(answer.status, 401, "{authorization:?}: {answer:?}");
        assert_eq!(answer.error_code(), "unauthorized");
        assert!(answer
            .header("www-authenticate")
            .unwrap()
            .starts_with("Bearer"));
        // The refusal never shows the token, right or wrong.
        assert!(!answer.body.to_string().contains(&token[4..]));
    }
    // Unknown routes are not revealed to a caller without the token.
    let answer = http(
        admin.addr,
        "GET",
        "/admin/nope",
        &[("Host", &admin.host)],
        "",
    )
    .await;
    assert_eq!(answer.status, 401);
    assert_eq!(server.account_id("mallory"), None);
}

#[tokio::test]
async fn a_foreign_host_is_refused_even_with_the_token_and_no_cors_is_offered() {
    let (server, admin) = admin_server(DevServerConfig::default()).await;
    let port = admin.addr.port();
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "127.0.0.1".to_owned(),
    ] {
        let headers = [
            ("Host", host.as_str()),
            ("Authorization", admin.bearer.as_str()),
            ("Content-Type", "application/json"),
            ("Origin", "http://evil.example"),
        ];
        let answer = http(
            admin.addr,
            "POST",
            "/admin/add_user",
            &headers,
            r#"{"name":"mallory"}"#,
        )
        .await;
        assert_eq!(answer.status, 403, "{host}: {answer:?}");
        assert_eq!(answer.error_code(), "host_not_allowed");
        assert!(answer.header("access-control-allow-origin").is_none());
    }
    assert_eq!(server.account_id("mallory"), None);
    // A browser's preflight gets no CORS permission either.
    let preflight = [
        ("Host", admin.host.as_str()),
        ("Origin", "http://evil.example"),
        ("Access-Control-Request-Method", "POST"),
        (
            "Access-Control-Request-Headers",
            "authorization, content-type",
        ),
    ];
    let answer = http(admin.addr, "OPTIONS", "/admin/add_user", &preflight, "").await;
    assert_eq!(answer.status, 401);
    assert!(answer
        .headers
        .iter()
        .all(|(name, _)| !name.starts_with("access-control-")));
    // Every loopback name of this listener is served.
    for host in [
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        format!("127.0.0.1:{port}"),
    ] {
        let headers = [
            ("Host", host.as_str()),
            ("Authorization", admin.bearer.as_str()),
        ];
        let answer = http(admin.addr, "GET", "/admin/state", &headers, "").await;
        assert_eq!(answer.status, 200, "{host}: {answer:?}");
    }
}

#[tokio::test]
async fn a_repeated_host_or_a_foreign_absolute_target_is_refused() {
    let (server, admin) = admin_server(DevServerConfig::default()).await;
    let port = admin.addr.port();
    let body = r#"{"name":"mallory"}"#;
    // Its own Host first, a foreign one second: two parsers could each
    // read another one (RFC 9112 §3.2).
    let headers = [
        ("Host", admin.host.as_str()),
        ("Host", "evil.example"),
        ("Authorization", admin.bearer.as_str()),
        ("Content-Type", "application/json"),
    ];
    let answer = http(admin.addr, "POST", "/admin/add_user", &headers, body).await;
    assert_eq!((answer.status, answer.error_code()), (400, "bad_request"));
    assert!(
        answer.body["message"]
            .as_str()
            .unwrap()
            .contains("one Host header"),
        "{answer:?}"
    );
    // An absolute-form target's authority stands for the Host (RFC 9112
    // §3.2.2): a foreign one is refused whatever the Host says...
    let headers = [
        ("Host", admin.host.as_str()),
        ("Authorization", admin.bearer.as_str()),
        ("Content-Type", "application/json"),
    ];
    let foreign = format!("http://evil.example:{port}/admin/add_user");
    let answer = http(admin.addr, "POST", &foreign, &headers, body).await;
    assert_eq!(
        (answer.status, answer.error_code()),
        (403, "host_not_allowed")
    );
    assert_eq!(server.account_id("mallory"), None);
    // ...and its own is served.
    let own = format!("http://127.0.0.1:{port}/admin/state");
    let answer = http(admin.addr, "GET", &own, &headers, "").await;
    assert_eq!(answer.status, 200, "{answer:?}");
}

#[tokio::test]
async fn every_route_naming_an_account_answers_an_unknown_one_with_404() {
    let config = DevServerConfig::default()
        .user(AccountConfig::new("alice", "admin-alice"))
        .server(ServerConfig::new("lobby").channel(ChannelConfig::new("general")));
    let (server, admin) = admin_server(config).await;
    let lobby = server.server_id("lobby").unwrap();
    let general = server.channel_id(&lobby, "general").unwrap();
    let unknown = "no-such-account";
    let membership = json!({"channel_id": general, "account_id": unknown});
    // Every route, in the index's order, with a body naming an unknown
    // account (everything else valid); `None` for a route that names none.
    let routes: Vec<(&str, Option<Value>)> = vec![
        ("/admin", None),
        ("/admin/state", None),
        ("/admin/add_bot", None),
        ("/admin/add_user", None),
        ("/admin/create_server", None),
        ("/admin/create_channel", None),
        ("/admin/add_member", Some(membership.clone())),
        ("/admin/remove_member", Some(membership)),
        ("/admin/deny_sends", None),
        ("/admin/drop_connections", None),
        ("/admin/revoke_bot", Some(json!({"bot_id": unknown}))),
        ("/admin/set_rest_credentials", None),
        ("/admin/set_mint_rate_limit", None),
        ("/admin/fail_next_mints", None),
        ("/admin/fail_next_requests", None),
        ("/admin/set_session_lifetime", None),
        (
            "/admin/purge_rest_credentials",
            Some(json!({"bot_id": unknown})),
        ),
    ];
    let index = admin.call("GET", "/admin", None).await.body;
    let listed: Vec<&str> = index["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|route| route["path"].as_str().unwrap())
        .collect();
    let covered: Vec<&str> = routes.iter().map(|(path, _)| *path).collect();
    assert_eq!(
        listed, covered,
        "a route was added: say whether it names an account"
    );
    for (path, body) in routes {
        let Some(body) = body else { continue };
        let answer = admin.call("POST", path, Some(body)).await;
        assert_eq!(
            (answer.status, answer.error_code()),
            (404, "unknown_account"),
            "{path}: {answer:?}"
        );
        assert_eq!(answer.body["message"], format!("unknown account {unknown}"));
    }
    // A human where a bot is named is 400 not_a_bot, on both such routes.
    let alice = server.account_id("alice").unwrap();
    for path in ["/admin/revoke_bot", "/admin/purge_rest_credentials"] {
        let answer = admin
            .call("POST", path, Some(json!({"bot_id": alice})))
            .await;
        assert_eq!(
            (answer.status, answer.error_code()),
            (400, "not_a_bot"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn routes_methods_and_bodies_are_checked() {
    let config = DevServerConfig::default()
        .user(AccountConfig::new("alice", "admin-alice"))
        .server(ServerConfig::new("lobby").channel(ChannelConfig::new("general")));
    let (server, admin) = admin_server(config).await;
    let alice = server.account_id("alice").unwrap();
    let cases: Vec<(&str, &str, Option<Value>, u16, &str)> = vec![
        ("GET", "/admin/nope", None, 404, "not_found"),
        ("GET", "/admin/", None, 404, "not_found"),
        ("GET", "/admin/add_bot", None, 405, "method_not_allowed"),
        (
            "POST",
            "/admin/state",
            Some(json!({})),
            405,
            "method_not_allowed",
        ),
        ("POST", "/admin/add_bot", None, 400, "bad_request"),
        (
            "POST",
            "/admin/add_bot",
            Some(json!({"name": 7})),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/admin/add_bot",
            Some(json!({"name": "a", "admin": true})),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/admin/create_channel",
            Some(json!({"server_id": "no-such-server", "name": "x"})),
            404,
            "unknown_server",
        ),
        (
            "POST",
            "/admin/add_member",
            Some(json!({"channel_id": "no-such-channel", "account_id": alice})),
            404,
            "unknown_channel",
        ),
        (
            "POST",
            "/admin/revoke_bot",
            Some(json!({"bot_id": "no-such-bot"})),
            404,
            "unknown_account",
        ),
        (
            "POST",
            "/admin/revoke_bot",
            Some(json!({"bot_id": alice})),
            400,
            "not_a_bot",
        ),
        (
            "POST",
            "/admin/deny_sends",
            Some(json!({"channel_id": "x", "denial": "sometimes"})),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/admin/fail_next_requests",
            Some(json!({"op": 10, "count": 1})),
            400,
            "not_failable",
        ),
        (
            "POST",
            "/admin/fail_next_requests",
            Some(json!({"op": 638, "count": 1})),
            400,
            "not_failable",
        ),
        (
            "POST",
            "/admin/fail_next_requests",
            Some(json!({"op": 9999, "count": 1})),
            400,
            "not_failable",
        ),
        (
            "POST",
            "/admin/set_mint_rate_limit",
            Some(json!({"max": -1, "window_ms": 1})),
            400,
            "bad_request",
        ),
    ];
    for (method, path, body, status, code) in cases {
        let answer = admin.call(method, path, body.clone()).await;
        assert_eq!(
            answer.status, status,
            "{method} {path} {body:?}: {answer:?}"
        );
        assert_eq!(answer.error_code(), code, "{method} {path} {body:?}");
    }
    // The 405 says which method the route takes.
    let answer = admin.call("GET", "/admin/add_bot", None).await;
    assert_eq!(answer.body["message"], "/admin/add_bot takes POST only");
    // A message names the field at fault.
    let answer = admin.call("POST", "/admin/add_bot", None).await;
    assert_eq!(
        answer.body["message"],
        "the body of add_bot is not what it takes: missing field `name`"
    );
    // A body that is not declared as JSON (what a browser form can send) is refused.
    let headers = [
        ("Host", admin.host.as_str()),
        ("Authorization", admin.bearer.as_str()),
        ("Content-Type", "text/plain"),
    ];
    let answer = http(
        admin.addr,
        "POST",
        "/admin/add_user",
        &headers,
        r#"{"name":"x"}"#,
    )
    .await;
    assert_eq!(answer.status, 415);
    assert_eq!(answer.error_code(), "unsupported_media_type");
    assert_eq!(server.account_id("x"), None);
    // A body over 64 KiB: 413 and the connection closed.
    let big = json!({"name": "x".repeat(64 * 1024)});
    let answer = admin.call("POST", "/admin/add_user", Some(big)).await;
    assert_eq!(answer.status, 413);
    assert_eq!(answer.error_code(), "payload_too_large");
    assert_eq!(answer.header("connection"), Some("close"));
}

#[tokio::test]
async fn without_the_flag_there_is_no_admin_endpoint() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    assert_eq!(server.admin_url(), None);
    assert_eq!(server.admin_addr(), None);
    assert_eq!(server.admin_token(), None);
    // Neither listener serves the routes.
    for addr in [server.local_addr(), server.rest_addr()] {
        let host = addr.to_string();
        let headers = [
            ("Host", host.as_str()),
            ("Authorization", "Bearer adm_guess"),
            ("Content-Type", "application/json"),
        ];
        for (method, path) in [("GET", "/admin"), ("POST", "/admin/add_bot")] {
            let answer = http(addr, method, path, &headers, r#"{"name":"x"}"#).await;
            assert_eq!(answer.status, 404, "{addr} {method} {path}: {answer:?}");
        }
    }
    assert_eq!(server.account_id("x"), None);
}

#[tokio::test]
async fn the_admin_endpoint_listens_on_loopback_only() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0"] {
        let config = DevServerConfig::default()
            .admin(true)
            .admin_listen(addr.parse().unwrap());
        let err = DevServer::start(config).await.unwrap_err().to_string();
        assert!(err.contains("loopback address only"), "{addr}: {err}");
    }
    // The listen address alone changes nothing while the endpoint is off.
    let config = DevServerConfig::default().admin_listen("0.0.0.0:0".parse().unwrap());
    assert!(DevServer::start(config)
        .await
        .unwrap()
        .admin_url()
        .is_none());
}

/// End to end, as a client in another language would test its REST lane: a
/// raw HTTP client purges the bot's credentials over the admin endpoint,
/// and a real botlane `Client` sees 401, mints once more and succeeds.
#[tokio::test]
async fn a_raw_admin_call_purges_credentials_and_the_client_re_mints() {
    let config = DevServerConfig::default()
        .bot_rest_credentials(true)
        .bot(AccountConfig::new("dicebot", "admin-e2e-bot"))
        .server(ServerConfig::new("lobby"));
    let (server, admin) = admin_server(config).await;
    let lobby = server.server_id("lobby").unwrap();
    server
        .add_file(&lobby, "notes.txt", b"hello".to_vec())
        .unwrap();
    let keystore = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(
        botlane::ClientOptions::new(
            "admin-e2e-bot",
            keystore.path().join("keystore"),
            server.ws_url(),
        )
        .rest_url(server.rest_url())
        .heartbeat_interval(Duration::from_secs(300))
        .idle_timeout(Duration::from_secs(600)),
    )
    .unwrap();
    tokio::time::timeout(common::WAIT, client.login())
        .await
        .unwrap()
        .unwrap();
    let list = || async {
        client
            .rest()
            .json::<Value>(botlane::rest::Method::GET, "/api/files/list", None)
            .await
            .unwrap()
    };
    assert_eq!(list().await["files"][0]["name"], "notes.txt");
    assert_eq!(admin.state().await["mint_count"], 1);

    let bot_id = server.account_id("dicebot").unwrap();
    let purged = admin
        .post("/admin/purge_rest_credentials", json!({"bot_id": bot_id}))
        .await;
    assert_eq!(purged, json!({"purged": 1}));

    assert_eq!(list().await["files"][0]["name"], "notes.txt");
    let state = admin.state().await;
    assert_eq!(state["mint_count"], 2, "{state}");
    assert_eq!(state["exchange_count"], 2, "{state}");
    // The path the client took: 200, then 401 session_expired, the second
    // exchange, and the retry.
    let statuses: Vec<(String, Option<u16>)> = server
        .http_requests()
        .iter()
        .map(|r| (r.path.clone(), r.status))
        .collect();
    let expected = [
        ("/auth/verify-session", 200),
        ("/api/files/list", 200),
        ("/api/files/list", 401),
        ("/auth/verify-session", 200),
        ("/api/files/list", 200),
    ];
    assert_eq!(
        statuses,
        expected
            .iter()
            .map(|(p, s)| ((*p).to_owned(), Some(*s)))
            .collect::<Vec<_>>()
    );
    // No admin call reached the REST listener's records.
    assert!(statuses.iter().all(|(p, _)| !p.starts_with("/admin")));
    client.close().await.unwrap();
}

/// The binary: `--admin` prints the URL and the token; the endpoint
/// answers them; a non-loopback `--admin-listen` stops the start.
#[cfg(unix)]
#[tokio::test]
async fn the_binary_prints_the_admin_url_and_token() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let mut child = Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
        .args(["--listen", "127.0.0.1:0", "--admin"])
        .env_remove(botlane_devserver::BOT_REST_CREDENTIALS)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (url, token) = tokio::task::spawn_blocking(move || {
        let mut url = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(u) = line.strip_prefix("admin: ") {
                url = Some(u.to_owned());
            }
            if let Some(t) = line.strip_prefix("admin token: ") {
                return (url.unwrap(), t.to_owned());
            }
        }
        panic!("no admin lines");
    })
    .await
    .unwrap();
    let addr: SocketAddr = url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/admin"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(addr.ip().is_loopback(), "{url}");
    assert!(token.starts_with("adm_"), "{token}");
    let host = addr.to_string();
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Host", host.as_str()),
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
    ];
    let answer = http(addr, "POST", "/admin/add_bot", &headers, r#"{"name":"b"}"#).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body["token"].is_string());
    // The token went to stdout only, never to the logs.
    let stderr = interrupt(child).await;
    assert!(!stderr.contains(&token[4..]), "{stderr}");

    let refused = Command::new(env!("CARGO_BIN_EXE_botlane-devserver"))
        .args(["--admin", "--admin-listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("loopback address only"), "{stderr}");
}

/// `GET /metrics` on the admin listener: the service's own counters in the
/// Prometheus text format, behind the admin token and the `Host` check,
/// counting connections by state, logins and each refused one by why,
/// frames, messages and mints; no token of any kind in it.
#[tokio::test]
async fn metrics_count_connections_logins_refusals_frames_messages_and_mints() {
    use botlane_devserver::Limits;
    let limits = Limits::default()
        .prelogin_connections(1)
        .prelogin_grace(Duration::from_secs(60))
        .login_timeout(Duration::from_millis(300));
    let config = DevServerConfig::default()
        .limits(limits)
        .bot_rest_credentials(true)
        .bot(AccountConfig::new(
            "metricsbot",
            "metrics-bot-token-0123456789",
        ))
        .server(ServerConfig::new("lobby"));
    let (server, admin) = admin_server(config).await;
    let scrape = || async {
        let answer = admin.call("GET", "/metrics", None).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(
            answer.header("content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        answer.body.as_str().unwrap().to_owned()
    };
    let sample = |text: &str, series: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {series} in:\n{text}"))
    };
    let refused =
        |reason: &str| format!("botlane_devserver_logins_refused_total{{reason=\"{reason}\"}}");

    // A stranger fills the pre-login pool: the next upgrade is refused
    // (503), then the stranger is closed for not logging in.
    let _stranger = Raw::connect(&server.ws_url()).await;
    assert!(TestUser::connect(&server.ws_url(), "whoever")
        .await
        .is_err());
    let deadline = tokio::time::Instant::now() + common::WAIT;
    while sample(&scrape().await, &refused("login_timeout")) < 1 {
        assert!(tokio::time::Instant::now() < deadline, "the stranger stays");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let wrong = TestUser::connect(&server.ws_url(), "no-such-token").await;
    assert!(
        matches!(wrong, Err(TestUserError::LoginRefused(_))),
        "{wrong:?}"
    );

    // A bot and a human log in; the human says one thing; the bot mints.
    let keystore = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(
        botlane::ClientOptions::new(
            "metrics-bot-token-0123456789",
            keystore.path().join("keystore"),
            server.ws_url(),
        )
        .rest_url(server.rest_url()),
    )
    .unwrap();
    client.login().await.unwrap();
    client
        .rest()
        .request(botlane::rest::Method::GET, "/api/files/list", None)
        .await
        .unwrap();
    let human = server.add_user("alice");
    let lobby = server.server_id("lobby").unwrap();
    let channel = server.create_channel(&lobby, "general").unwrap();
    server.add_member(&channel, &human.id).unwrap();
    let alice = TestUser::connect(&server.ws_url(), &human.token)
        .await
        .unwrap();
    alice.open_channel(&channel).await.unwrap();
    alice.send_text(&channel, "hello").await.unwrap();

    let text = scrape().await;
    for (series, n) in [
        (refused("pool_full"), 1),
        (refused("login_timeout"), 1),
        (refused("unauthorized"), 1),
        (refused("evicted"), 0),
        (refused("sessions_full"), 0),
        (refused("bad_public_key"), 0),
        ("botlane_devserver_logins_total".to_owned(), 2),
        (
            "botlane_devserver_connections{state=\"session\"}".to_owned(),
            2,
        ),
        (
            "botlane_devserver_connections{state=\"prelogin\"}".to_owned(),
            0,
        ),
        ("botlane_devserver_messages_total".to_owned(), 1),
        ("botlane_devserver_rest_mints_total".to_owned(), 1),
        ("botlane_devserver_rest_exchanges_total".to_owned(), 1),
        ("botlane_devserver_queue_overflows_total".to_owned(), 0),
    ] {
        assert_eq!(sample(&text, &series), n, "{series} in:\n{text}");
    }
    for direction in ["received", "sent"] {
        let series = format!("botlane_devserver_frames_total{{direction=\"{direction}\"}}");
        assert!(sample(&text, &series) >= 4, "{series} in:\n{text}");
    }
    let admin_token = server.admin_token().unwrap();
    for secret in [
        admin_token.as_str(),
        "metrics-bot-token-0123456789",
        &human.token,
    ] {
        assert!(!text.contains(secret), "a token in the exposition");
    }

    // Refused like every admin route: no token, a foreign host.
    let host = admin.host.as_str();
    let no_token = http(admin.addr, "GET", "/metrics", &[("Host", host)], "").await;
    assert_eq!(
        (no_token.status, no_token.error_code()),
        (401, "unauthorized")
    );
    let bearer = admin.bearer.as_str();
    let headers = [("Host", "evil.example"), ("Authorization", bearer)];
    let foreign = http(admin.addr, "GET", "/metrics", &headers, "").await;
    assert_eq!(
        (foreign.status, foreign.error_code()),
        (403, "host_not_allowed")
    );
    client.close().await.unwrap();
    server.shutdown().await;
}
