//! Timeouts and budgets at their extremes: `Duration::MAX` as "wait for
//! ever" for a `TestUser` or `DevServer::wait_for`, and limits at
//! `Duration::MAX` or `usize::MAX`. Each is refused with a named error or
//! works; none panics.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use botlane_devserver::{DevServer, DevServerConfig, Limits, TestUser};

const WAIT: Duration = Duration::from_secs(5);

async fn server_with(limits: Limits) -> DevServer {
    DevServer::start(DevServerConfig::default().limits(limits))
        .await
        .unwrap()
}

#[tokio::test]
async fn waits_of_duration_max_wait_for_what_they_wait_for() {
    let common::World {
        server,
        channel,
        alice,
        bob,
    } = common::world().await;
    server
        .wait_for(|s| s.connection_count() == 2, Duration::MAX)
        .await
        .unwrap();
    alice.open_channel(&channel).await.unwrap();
    tokio::time::timeout(WAIT, bob.wait_for_key(&channel, Duration::MAX))
        .await
        .unwrap()
        .unwrap();
    alice.send_text(&channel, "hello").await.unwrap();
    let seen = tokio::time::timeout(
        WAIT,
        bob.wait_for_message(|m| m.content == "hello", Duration::MAX),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(seen.content, "hello");
}

#[tokio::test]
async fn limits_of_duration_max_work() {
    let limits = Limits::default()
        .header_read_timeout(Duration::MAX)
        .request_body_timeout(Duration::MAX)
        .login_timeout(Duration::MAX)
        .flush_timeout(Duration::MAX);
    let server = server_with(limits).await;
    let user = server.add_user("alice");
    let alice = TestUser::connect(&server.ws_url(), &user.token)
        .await
        .unwrap();
    assert_eq!(alice.name(), "alice");
    let response = reqwest::Client::new()
        .post(format!("{}/api/files/upload", server.rest_url()))
        .body("x")
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error(), "{}", response.status());
    drop(alice);
    server
        .wait_for(|s| s.connection_count() == 0, WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_connection_budget_past_what_a_semaphore_holds_is_refused() {
    let err = DevServer::start(
        DevServerConfig::default().limits(Limits::default().http_connections(usize::MAX)),
    )
    .await
    .err()
    .unwrap();
    assert!(
        err.to_string()
            .contains("limits.http_connections must be at most"),
        "{err}"
    );
}
