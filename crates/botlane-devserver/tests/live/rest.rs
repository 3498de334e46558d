//! The REST lane of the dev service, over real sockets with raw clients: a
//! raw WebSocket for opcode 638 and `reqwest` for HTTP.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use botlane_devserver::{DevServer, DevServerConfig, Direction};
use botlane_proto::OpCode;
use common::{
    lobby, lobby_config, lobby_with, logged_in, mint, Lobby, ALICE, BOT, NOTES, OTHER_BOT,
};
use reqwest::{redirect, Client, StatusCode};
use serde_json::{json, Value};

/// The lobby with the flag on.
async fn fixture() -> Lobby {
    lobby_with(lobby_config().bot_rest_credentials(true)).await
}

/// The status and `error_code` of an error response.
async fn refusal(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    (status, body["error_code"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn the_flag_is_off_by_default_and_638_answers_minus_7() {
    let f = lobby().await;
    assert!(!f.server.rest_credentials());
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    assert_eq!(mint(&mut bot).await, json!({"code": -7}));
    let mut alice = logged_in(&f.server.ws_url(), ALICE).await;
    // The flag is checked first: a human gets -7 too while it is off.
    assert_eq!(mint(&mut alice).await, json!({"code": -7}));
    f.server.set_rest_credentials(true);
    assert_eq!(mint(&mut bot).await["code"], 0);
    f.server.set_rest_credentials(false);
    assert_eq!(mint(&mut bot).await, json!({"code": -7}));
    assert_eq!(f.server.mint_count(), 1);
}

#[tokio::test]
async fn a_human_session_gets_minus_1() {
    let f = fixture().await;
    let mut alice = logged_in(&f.server.ws_url(), ALICE).await;
    assert_eq!(mint(&mut alice).await, json!({"code": -1}));
    assert_eq!(f.server.mint_count(), 0);
}

#[tokio::test]
async fn the_rate_limit_gives_minus_9_per_bot() {
    let f = fixture().await;
    f.server.set_mint_rate_limit(2, Duration::from_secs(60));
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    assert_eq!(mint(&mut bot).await["code"], 0);
    assert_eq!(mint(&mut bot).await["code"], 0);
    assert_eq!(mint(&mut bot).await, json!({"code": -9}));
    // Another bot has its own budget.
    let mut other = logged_in(&f.server.ws_url(), OTHER_BOT).await;
    assert_eq!(mint(&mut other).await["code"], 0);
    assert_eq!(f.server.mint_count(), 3);
}

#[tokio::test]
async fn an_injected_failure_gives_minus_2_then_mints_again() {
    let f = fixture().await;
    f.server.fail_next_mints(2);
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    assert_eq!(mint(&mut bot).await, json!({"code": -2}));
    assert_eq!(mint(&mut bot).await, json!({"code": -2}));
    assert_eq!(mint(&mut bot).await["code"], 0);
    assert_eq!(f.server.mint_count(), 1);
}

#[tokio::test]
async fn every_638_gets_one_reply_in_order() {
    let f = fixture().await;
    f.server.set_mint_rate_limit(5, Duration::from_secs(60));
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    for _ in 0..7 {
        bot.send(OpCode::RestMint, json!({})).await;
    }
    let mut codes = Vec::new();
    let mut secrets = std::collections::HashSet::new();
    for _ in 0..7 {
        let reply = bot.next_of(OpCode::RestMint).await;
        codes.push(reply["code"].as_i64().unwrap());
        if let Some(secret) = reply["secret"].as_str() {
            secrets.insert(secret.to_owned());
        }
    }
    assert_eq!(codes, [0, 0, 0, 0, 0, -9, -9]);
    assert_eq!(secrets.len(), 5, "every secret is fresh");
    bot.expect_silence(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn mint_exchange_list_and_download() {
    let f = fixture().await;
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    let minted = mint(&mut bot).await;
    assert_eq!(minted["code"], 0);
    assert_eq!(minted["bot_id"], f.bot.as_str());
    let secret = minted["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 43, "32 bytes, base64url without padding");
    assert!(secret
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    assert_eq!(minted["row_id"].as_str().unwrap().len(), 36);
    // The service's frame log never shows the secret.
    let recorded: Vec<_> = f
        .server
        .frames()
        .into_iter()
        .filter(|r| r.is(Direction::Sent, OpCode::RestMint))
        .collect();
    assert_eq!(recorded.len(), 1);
    assert!(!recorded[0].payload.contains(secret));
    assert!(recorded[0].payload.contains("[REDACTED]"));

    let response = f
        .exchange(&json!({"secret": secret, "row_id": minted["row_id"]}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["expires_in"], 900);
    let verification = body["verification"].as_str().unwrap();
    assert_ne!(verification, secret);
    assert_eq!(f.server.exchange_count(), 1);

    let response = f.get("/api/files/list", Some(verification)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let listed: Value = response.json().await.unwrap();
    let files = listed["files"].as_array().unwrap();
    assert!(files.contains(&json!({
        "id": f.notes, "name": "notes.txt", "size": NOTES.len(), "room_id": f.lobby
    })));
    assert!(files.contains(&json!({
        "id": f.plans, "name": "plans.md", "size": 7, "room_id": f.attic
    })));

    let path = format!("/api/files/{}/download?roomIds={}", f.notes, f.lobby);
    let response = f.get(&path, Some(verification)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/octet-stream"
    );
    let iv = response.headers()["x-file-iv"].to_str().unwrap().to_owned();
    assert_eq!(iv, f.server.file(&f.notes).unwrap().iv);
    assert_ne!(iv, f.server.file(&f.plans).unwrap().iv);
    assert_eq!(response.bytes().await.unwrap(), NOTES.as_bytes());

    // A realtime reconnect does not invalidate the credential.
    drop(bot);
    f.server.drop_connections();
    let response = f.get("/api/files/list", Some(verification)).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn downloads_need_the_room_that_holds_the_file() {
    let f = fixture().await;
    let v = f.credential().await;
    let cases = [
        (
            format!("/api/files/{}/download?roomIds={}", f.notes, f.attic),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            format!("/api/files/no-such-file/download?roomIds={}", f.lobby),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            format!("/api/files/{}/download", f.notes),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
    ];
    for (path, status, code) in cases {
        let got = refusal(f.get(&path, Some(&v)).await).await;
        assert_eq!(got, (status, code.to_owned()), "{path}");
    }
    // A list of rooms works when one of them holds the file.
    let path = format!(
        "/api/files/{}/download?roomIds={},{}",
        f.plans, f.lobby, f.attic
    );
    assert_eq!(f.get(&path, Some(&v)).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_secret_is_exchanged_once() {
    let f = fixture().await;
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    let minted = mint(&mut bot).await;
    let body = json!({"secret": minted["secret"], "row_id": minted["row_id"]});
    assert_eq!(f.exchange(&body).await.status(), StatusCode::OK);
    let again = refusal(f.exchange(&body).await).await;
    assert_eq!(again, (StatusCode::UNAUTHORIZED, "invalid_secret".into()));

    // A wrong row id refuses, and consumes the secret.
    let minted = mint(&mut bot).await;
    let wrong = json!({"secret": minted["secret"], "row_id": "another-row"});
    let got = refusal(f.exchange(&wrong).await).await;
    assert_eq!(got, (StatusCode::UNAUTHORIZED, "invalid_secret".into()));
    let right = json!({"secret": minted["secret"], "row_id": minted["row_id"]});
    assert_eq!(f.exchange(&right).await.status(), StatusCode::UNAUTHORIZED);

    let unknown = json!({"secret": "never-minted", "row_id": minted["row_id"]});
    let got = refusal(f.exchange(&unknown).await).await;
    assert_eq!(got, (StatusCode::UNAUTHORIZED, "invalid_secret".into()));
    assert_eq!(f.server.exchange_count(), 1);
}

#[tokio::test]
async fn a_malformed_exchange_is_400() {
    let f = fixture().await;
    for body in [
        "",
        "{",
        r#"{"secret": "s"}"#,
        r#"{"secret": 1, "row_id": "r"}"#,
    ] {
        let response = f
            .http
            .post(f.rest("/auth/verify-session"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let got = refusal(response).await;
        assert_eq!(
            got,
            (StatusCode::BAD_REQUEST, "bad_request".into()),
            "{body}"
        );
    }
    let response = f.get("/auth/verify-session", None).await;
    let got = refusal(response).await;
    assert_eq!(
        got,
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed".into())
    );
}

#[tokio::test]
async fn refused_and_unlisted_routes_are_403() {
    let f = fixture().await;
    let v = f.credential().await;
    let refused = [
        (reqwest::Method::GET, "/api/emoji/rooms".to_owned()),
        (reqwest::Method::GET, format!("/api/audit-log/{}", f.lobby)),
        (reqwest::Method::GET, "/api/users/me".to_owned()),
        (reqwest::Method::GET, "/api".to_owned()),
        (reqwest::Method::GET, "/api/".to_owned()),
        (reqwest::Method::GET, "/api/files/list/".to_owned()),
        (reqwest::Method::POST, "/api/files/list".to_owned()),
        (reqwest::Method::HEAD, "/api/files/list".to_owned()),
        (
            reqwest::Method::DELETE,
            format!("/api/files/{}/download?roomIds={}", f.notes, f.lobby),
        ),
    ];
    for (method, path) in refused {
        let response = f
            .http
            .request(method.clone(), f.rest(&path))
            .header("verification", &v)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{method} {path}");
        if method != reqwest::Method::HEAD {
            let got = refusal(response).await;
            assert_eq!(got.1, "scope_forbidden", "{method} {path}");
        }
    }
    // Outside /api nothing is served, and that is recorded too.
    let got = refusal(f.get("/files/list", Some(&v)).await).await;
    assert_eq!(got, (StatusCode::NOT_FOUND, "not_found".into()));
    let last = f.server.http_requests().pop().unwrap();
    assert_eq!(
        (last.path.as_str(), last.status),
        ("/files/list", Some(404))
    );
}

#[tokio::test]
async fn a_missing_or_wrong_verification_is_401() {
    let f = fixture().await;
    let v = f.credential().await;
    let wrong = format!("{v}x");
    for path in ["/api/files/list", "/api/emoji/rooms", "/api/anything"] {
        for value in [None, Some(wrong.as_str()), Some("")] {
            let got = refusal(f.get(path, value).await).await;
            assert_eq!(
                got,
                (StatusCode::UNAUTHORIZED, "unauthorized".into()),
                "{path} {value:?}"
            );
        }
    }
    // The bot token is no credential for HTTP.
    let got = refusal(f.get("/api/files/list", Some(BOT)).await).await;
    assert_eq!(got.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn revoking_the_bot_purges_its_rows() {
    let f = fixture().await;
    let v = f.credential().await;
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    let pending = mint(&mut bot).await;
    f.server.revoke_bot(&f.bot).unwrap();
    let got = refusal(f.get("/api/files/list", Some(&v)).await).await;
    assert_eq!(got, (StatusCode::UNAUTHORIZED, "session_expired".into()));
    // The secret minted but not yet exchanged is gone too.
    let got = refusal(
        f.exchange(&json!({"secret": pending["secret"], "row_id": pending["row_id"]}))
            .await,
    )
    .await;
    assert_eq!(got, (StatusCode::UNAUTHORIZED, "invalid_secret".into()));
}

#[tokio::test]
async fn a_purge_without_revocation_lets_the_bot_mint_again() {
    let f = fixture().await;
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    let v = f.credential_over(&mut bot).await;
    assert_eq!(f.server.purge_rest_credentials(&f.bot).unwrap(), 1);
    let got = refusal(f.get("/api/files/list", Some(&v)).await).await;
    assert_eq!(got, (StatusCode::UNAUTHORIZED, "session_expired".into()));
    let fresh = f.credential_over(&mut bot).await;
    assert_eq!(
        f.get("/api/files/list", Some(&fresh)).await.status(),
        StatusCode::OK
    );
    assert_eq!(f.server.mint_count(), 2);
}

/// The configured lifetime, on the real clock (its boundary, to the
/// second, is the unit test `state::rest::tests::expiry_and_purge_give_session_expired`):
/// a credential of 3 s works at once and is `session_expired` once the
/// 3 s are over.
#[tokio::test]
async fn a_session_expires_after_its_lifetime() {
    const LIFETIME: Duration = Duration::from_secs(3);
    let f = fixture().await;
    f.server.set_session_lifetime(LIFETIME);
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    let minted = mint(&mut bot).await;
    let exchanged = tokio::time::Instant::now();
    let body: Value = f
        .exchange(&json!({"secret": minted["secret"], "row_id": minted["row_id"]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["expires_in"], 3);
    let v = body["verification"].as_str().unwrap();
    let fresh = f.get("/api/files/list", Some(v)).await.status();
    // Only meaningful while the lifetime lasts: a machine that stalled
    // for 3 s between the two requests proves nothing either way.
    if exchanged.elapsed() < LIFETIME {
        assert_eq!(fresh, StatusCode::OK);
    }
    tokio::time::sleep_until(exchanged + LIFETIME + Duration::from_millis(500)).await;
    let got = refusal(f.get("/api/files/list", Some(v)).await).await;
    assert_eq!(got, (StatusCode::UNAUTHORIZED, "session_expired".into()));
}

#[tokio::test]
async fn https_with_the_generated_root_trusted() {
    let mut f = lobby_with(lobby_config().bot_rest_credentials(true).rest_tls(true)).await;
    let url = f.server.rest_url();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    // Without the root, the handshake fails: the certificate is real TLS.
    let err = f
        .http
        .get(f.rest("/api/files/list"))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect(), "{err:?}");
    assert!(f.server.http_requests().is_empty());

    let root =
        reqwest::Certificate::from_der(&f.server.rest_root_certificate_der().unwrap()).unwrap();
    f.http = Client::builder()
        .redirect(redirect::Policy::none())
        .add_root_certificate(root)
        .build()
        .unwrap();
    let v = f.credential().await;
    let response = f.get("/api/files/list", Some(&v)).await;
    assert_eq!(response.status(), StatusCode::OK);

    // The certificate covers `localhost` as well, and the PEM is the same root.
    let port = f.server.rest_addr().port();
    let pem = f.server.rest_root_certificate_pem().unwrap();
    let by_name = Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap())
        .build()
        .unwrap()
        .get(format!("https://localhost:{port}/api/files/list"))
        .header("verification", &v)
        .send()
        .await
        .unwrap();
    assert_eq!(by_name.status(), StatusCode::OK);

    // Idle keep-alive connections do not hold up a shutdown.
    tokio::time::timeout(Duration::from_secs(5), f.server.shutdown())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_redirect_to_another_server_and_what_reaches_it() {
    let f = fixture().await;
    let elsewhere = DevServer::start(DevServerConfig::default()).await.unwrap();
    let target = format!("{}/api/files/list", elsewhere.rest_url());
    f.server.redirect("/api/files/list", &target);
    let v = f.credential().await;

    // The redirect comes before every check, and a client that does not
    // follow it sends nothing to the second server.
    let response = f.get("/api/files/list", Some(&v)).await;
    assert_eq!(response.status(), StatusCode::FOUND);
    assert_eq!(response.headers()["location"], target.as_str());
    assert!(elsewhere.http_requests().is_empty());
    let recorded = f.server.http_requests();
    assert_eq!(recorded.last().unwrap().status, Some(302));

    // A client that follows it carries the custom header across origins,
    // and the second server's record shows it: the leak the lane prevents.
    let following = Client::new()
        .get(f.rest("/api/files/list"))
        .header("verification", &v)
        .send()
        .await
        .unwrap();
    assert_eq!(following.status(), StatusCode::UNAUTHORIZED);
    let leaked = elsewhere.http_requests();
    assert_eq!(leaked.len(), 1);
    assert_eq!(leaked[0].header("verification"), Some(v.as_str()));
}

#[tokio::test]
async fn every_request_is_recorded_as_received() {
    let f = fixture().await;
    let response = f
        .http
        .post(f.rest("/api/some/thing?b=2&a=1"))
        .header("X-Custom", "one")
        .header("x-custom", "two")
        .header("verification", "not-a-credential")
        .body("payload bytes")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let v = f.credential().await;
    assert_eq!(
        f.get("/api/files/list", Some(&v)).await.status(),
        StatusCode::OK
    );

    let recorded = f.server.http_requests();
    assert_eq!(recorded.len(), 3);
    let first = &recorded[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/api/some/thing");
    assert_eq!(first.query.as_deref(), Some("b=2&a=1"));
    assert_eq!(first.body, b"payload bytes");
    assert_eq!(first.status, Some(401));
    let custom: Vec<_> = first
        .headers
        .iter()
        .filter(|(name, _)| name == "x-custom")
        .map(|(_, value)| value.as_str())
        .collect();
    assert_eq!(custom, ["one", "two"]);
    assert_eq!(first.header("VERIFICATION"), Some("not-a-credential"));

    let exchange = &recorded[1];
    assert_eq!(exchange.path, "/auth/verify-session");
    assert_eq!(exchange.header("content-type"), Some("application/json"));
    assert!(exchange.header("verification").is_none());
    assert_eq!(exchange.status, Some(200));
    assert_eq!(recorded[2].header("verification"), Some(v.as_str()));
    // No request carried the bot token.
    for request in &recorded {
        assert!(
            request
                .headers
                .iter()
                .all(|(_, value)| !value.contains(BOT)),
            "{request:?}"
        );
    }
    f.server
        .wait_for(|s| s.http_requests().len() == 3, Duration::from_secs(1))
        .await
        .unwrap();
}

/// A session lifetime past what the clock can name (`Duration::MAX`) is
/// forever, not an overflow in the exchange's handler.
#[tokio::test]
async fn a_session_lifetime_of_duration_max_is_forever() {
    let f = fixture().await;
    f.server.set_session_lifetime(Duration::MAX);
    let mut bot = logged_in(&f.server.ws_url(), BOT).await;
    let minted = mint(&mut bot).await;
    let response = f
        .exchange(&json!({"secret": minted["secret"], "row_id": minted["row_id"]}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    let v = body["verification"].as_str().unwrap();
    assert_eq!(
        f.get("/api/files/list", Some(v)).await.status(),
        StatusCode::OK
    );
}
