//! A full REST session with `debug: true` and every log record captured at
//! TRACE (the `tracing` events of botlane and the devserver, the `log`
//! records of reqwest and rustls through the bridge, and every span's
//! fields, one of them an invocation whose handler calls the lane): the bot
//! token, the one-time secrets and the credentials appear in no log line,
//! no span field, no `Debug` output of a public type, and no error message;
//! no HTTP request carries the token. The secrets are this test's own, so
//! the lines the binary's other tests log beside it cannot hide or fake a
//! leak.

#![allow(clippy::unwrap_used)]

use crate::capture;

use std::time::Duration;

use botlane::rest::Method;
use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration, RequestInit, RestError};
use botlane_devserver::{DevServer, DevServerConfig, TestUser};
use capture::Capture;

/// Every error's Display, Debug and source chain.
fn describe(err: &RestError) -> String {
    let mut text = format!("{err}\n{err:?}\n");
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(&format!("{s}\n{s:?}\n"));
        source = s.source();
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_a_log_line_a_debug_output_an_error_or_an_http_header() {
    let capture = Capture::global();

    let server = DevServer::start(DevServerConfig::default().bot_rest_credentials(true))
        .await
        .unwrap();
    let bot = server.add_bot("leakbot");
    let room = server.create_server("lobby");
    let file = server.add_file(&room, "notes.txt", b"hi".to_vec()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = ClientOptions::new(bot.token.clone(), dir.path().join("k"), server.ws_url())
        .rest_url(server.rest_url())
        .debug(true);
    let mut shown = vec![format!("{options:?}")];
    let client = Client::new(options.clone()).unwrap();
    // A command whose handler calls the lane: the mint and the call run
    // inside its invocation's span.
    client
        .commands()
        .register(
            CommandDeclaration::new("files", "Counts the files"),
            |ctx: CommandContext| async move {
                let list: serde_json::Value = ctx
                    .rest()?
                    .json(Method::GET, "/api/files/list", None)
                    .await?;
                let count = list["files"].as_array().map_or(0, Vec::len);
                ctx.reply(&format!("{count} files")).await?;
                Ok::<(), botlane::BoxError>(())
            },
        )
        .unwrap();
    client.login().await.unwrap();
    let human = server.add_user("leak-human");
    let channel = server.create_channel(&room, "general").unwrap();
    server.add_member(&channel, &bot.id).unwrap();
    server.add_member(&channel, &human.id).unwrap();
    let alice = TestUser::connect(&server.ws_url(), &human.token)
        .await
        .unwrap();
    alice.open_channel(&channel).await.unwrap();
    alice.send_text(&channel, "/files").await.unwrap();
    let answer = alice
        .wait_for_message(|m| m.author_id == bot.id, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(answer.content, "1 files");
    let rest = client.rest();
    shown.push(format!("{rest:?}"));
    let mut errors = Vec::new();

    // Mint, use, download.
    let list: serde_json::Value = rest
        .json(Method::GET, "/api/files/list", None)
        .await
        .unwrap();
    shown.push(format!("{list:?}"));
    let init = RequestInit::new()
        .query("roomIds", &room)
        .header("x-a", "b");
    shown.push(format!("{init:?}"));
    let download = format!("/api/files/{file}/download");
    let bytes = rest
        .binary(Method::GET, &download, Some(init))
        .await
        .unwrap();
    shown.push(format!("{bytes:?}"));
    let raw = rest
        .request(Method::GET, "/api/files/list", None)
        .await
        .unwrap();
    shown.push(format!("{raw:?}"));
    // A 401, a re-mint and a retry.
    server.purge_rest_credentials(&bot.id).unwrap();
    rest.request(Method::GET, "/api/files/list", None)
        .await
        .unwrap();
    // Refusals and errors of every kind.
    for path in [
        "/api/emoji/rooms",
        "/api/files/nope/download?roomIds=x",
        "//elsewhere/x",
    ] {
        errors.push(rest.request(Method::GET, path, None).await.unwrap_err());
    }
    errors.push(
        rest.json::<Vec<u8>>(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err(),
    );
    server.purge_rest_credentials(&bot.id).unwrap();
    server.set_mint_rate_limit(0, Duration::from_secs(60));
    errors.push(
        rest.request(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err(),
    );
    server.set_mint_rate_limit(100, Duration::from_secs(60));
    server.set_session_lifetime(Duration::ZERO);
    errors.push(
        rest.request(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err(),
    );
    server.set_session_lifetime(Duration::from_secs(900));
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let offline = Client::new(options.clone().rest_url(closed)).unwrap();
    offline.login().await.unwrap();
    errors.push(
        offline
            .rest()
            .request(Method::GET, "/api/files/list", None)
            .await
            .unwrap_err(),
    );
    let capped = Client::new(options.clone().rest_json_limit(8)).unwrap();
    capped.login().await.unwrap();
    let err = capped
        .rest()
        .json::<serde_json::Value>(Method::GET, "/api/files/list", None)
        .await
        .unwrap_err();
    assert!(matches!(err, RestError::BodyTooLarge { .. }), "{err:?}");
    errors.push(err);
    let mut streamed = capped
        .rest()
        .request(Method::GET, "/api/files/list", None)
        .await
        .unwrap();
    shown.push(format!("{streamed:?}"));
    shown.push(format!("{:?}", streamed.chunk().await.unwrap()));
    assert_eq!(errors.len(), 8);

    // What the secrets were: the token we hold; the one-time secrets from the
    // exchange bodies the service received; the credentials from the
    // headers it received.
    let requests = server.http_requests();
    let mut secrets: Vec<String> = Vec::new();
    let mut credentials: Vec<String> = Vec::new();
    for r in &requests {
        if r.path == "/auth/verify-session" {
            let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            secrets.push(body["secret"].as_str().unwrap().to_owned());
        }
        if let Some(v) = r.header("verification")
            && !credentials.iter().any(|c| c == v)
        {
            credentials.push(v.to_owned());
        }
    }
    assert!(secrets.len() >= 4, "{} secrets", secrets.len());
    assert!(credentials.len() >= 3, "{} credentials", credentials.len());

    // Every span's fields too (the fmt layer writes them when it closes).
    let spans = capture.spans();
    let invocation = spans.iter().find(|s| {
        s.name == "invocation" && s.fields.get("bot").map(String::as_str) == Some(bot.id.as_str())
    });
    assert!(
        invocation.is_some_and(|s| s.fields["outcome"] == "ok"),
        "{spans:?}"
    );
    let fields: Vec<String> = spans.iter().map(|s| format!("{:?}", s.fields)).collect();
    let logs = capture.text() + &fields.join("\n");
    // The capture works at every level, for both `tracing` and `log`.
    assert!(
        logs.contains("REST credential minted"),
        "botlane's debug events"
    );
    assert!(
        logs.contains("starting new connection"),
        "reqwest's `log` records"
    );
    let errors: Vec<String> = errors.iter().map(describe).collect();
    let named = std::iter::once(("the token", &bot.token))
        .chain(secrets.iter().map(|s| ("a one-time secret", s)))
        .chain(credentials.iter().map(|c| ("a credential", c)));
    for (what, secret) in named {
        assert!(
            secret.len() >= 16,
            "{what} is a real secret, not a placeholder"
        );
        // On failure, show where, with the secret itself masked.
        let masked = |text: &str| text.replace(secret.as_str(), "<SECRET>");
        if let Some(line) = logs.lines().find(|l| l.contains(secret.as_str())) {
            panic!("{what} in a log line: {}", masked(line));
        }
        for text in shown.iter().chain(&errors) {
            assert!(
                !text.contains(secret.as_str()),
                "{what} in {}",
                masked(text)
            );
        }
    }
    // The token never went over HTTP; the secret only in exchange bodies,
    // the credential only in the `verification` header.
    for r in &requests {
        let body = String::from_utf8_lossy(&r.body);
        for (name, value) in &r.headers {
            assert!(!value.contains(&bot.token), "the token in header {name}");
            for s in &secrets {
                assert!(!value.contains(s.as_str()), "a secret in header {name}");
            }
            if name != "verification" {
                for c in &credentials {
                    assert!(!value.contains(c.as_str()), "a credential in header {name}");
                }
            }
        }
        assert!(!body.contains(&bot.token), "the token in a body");
        assert!(!r.query.as_deref().unwrap_or("").contains(&bot.token));
        for c in &credentials {
            assert!(!body.contains(c.as_str()), "a credential in a body");
        }
    }
    offline.close().await.unwrap();
    capped.close().await.unwrap();
    client.close().await.unwrap();
    server.shutdown().await;
}
