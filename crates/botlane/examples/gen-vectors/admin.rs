//! The admin transcript: a raw HTTP client, written here line by line,
//! drives the devserver's admin endpoint (`--admin`) through every route
//! and its refusals, on a service of its own, so that
//! `transcripts/admin.json` shows a client in any language how to set the
//! scene and steer the service in its tests.

use std::net::SocketAddr;

use botlane_devserver::{DevServer, DevServerConfig};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::relay::{http_relay, read_message, Recorder, STEP_TIMEOUT};
use crate::transcript::{Header, Known};

/// The raw client: one connection per request, through the relay.
struct AdminClient {
    relay: SocketAddr,
    bearer: String,
}

impl AdminClient {
    /// Sends one request with exactly these headers (plus `Host`, and
    /// `Content-Length` for a body) and reads the answer.
    async fn send(
        &self,
        method: &str,
        path: &str,
        host: Option<&str>,
        authorization: Option<&str>,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let mut tcp = TcpStream::connect(self.relay)
            .await
            .map_err(|e| format!("connect to the admin relay: {e}"))?;
        let relay = self.relay.to_string();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n",
            host.unwrap_or(&relay)
        );
        if let Some(value) = authorization {
            request.push_str(&format!("Authorization: {value}\r\n"));
        }
        let body = body.map(Value::to_string).unwrap_or_default();
        if !body.is_empty() {
            request.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        tcp.write_all(request.as_bytes())
            .await
            .map_err(|e| format!("send {method} {path}: {e}"))?;
        let answer = tokio::time::timeout(STEP_TIMEOUT, read_message(&mut tcp))
            .await
            .map_err(|_| format!("no answer to {method} {path}"))??
            .ok_or_else(|| format!("no answer to {method} {path}"))?;
        let status = answer
            .start_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {:?}", answer.start_line))?;
        let body = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("{method} {path}: the answer is not JSON: {e}"))?;
        Ok((status, body))
    }

    /// A request with the token, whose answer must have `status`.
    async fn expect(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        status: u16,
    ) -> Result<Value, String> {
        let (got, answer) = self
            .send(method, path, None, Some(&self.bearer), body.as_ref())
            .await?;
        if got == status {
            Ok(answer)
        } else {
            Err(format!(
                "{method} {path}: expected {status}, got {got}: {answer}"
            ))
        }
    }

    async fn post(&self, route: &str, body: Value) -> Result<Value, String> {
        self.expect("POST", &format!("/admin/{route}"), Some(body), 200)
            .await
    }
}

/// The string under `key` of an answer.
fn field(answer: &Value, key: &str) -> Result<String, String> {
    answer[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no {key} in {answer}"))
}

/// Runs the admin transcript on a service of its own; registers its values.
pub(crate) async fn run(recorder: &Recorder, known: &mut Known) -> Result<(), String> {
    let server = DevServer::start(DevServerConfig::default().admin(true))
        .await
        .map_err(|e| format!("devserver with --admin: {e}"))?;
    let (Some(addr), Some(token)) = (server.admin_addr(), server.admin_token()) else {
        return Err("the admin endpoint did not start".into());
    };
    known.add(
        &token,
        "admin-token",
        "the admin token the devserver printed at start (adm_ and 32 random bytes in base64url)",
    );
    let relay = http_relay(recorder, "admin", addr).await?;
    let relay = relay
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .ok_or("unexpected relay url")?;
    let admin = AdminClient {
        relay,
        bearer: format!("Bearer {token}"),
    };

    // Refused: no token, a wrong token, a foreign Host (with the token).
    let (status, _) = admin.send("GET", "/admin", None, None, None).await?;
    let wrong = admin
        .send(
            "POST",
            "/admin/add_user",
            None,
            Some("Bearer adm_not-the-token"),
            Some(&json!({"name": "mallory"})),
        )
        .await?;
    let foreign = admin
        .send(
            "POST",
            "/admin/add_user",
            Some("evil.example"),
            Some(&admin.bearer),
            Some(&json!({"name": "mallory"})),
        )
        .await?;
    if (status, wrong.0, foreign.0) != (401, 401, 403) {
        return Err(format!(
            "refusals: expected 401, 401, 403, got {status}, {}, {}",
            wrong.0, foreign.0
        ));
    }

    // The routes, and the scene.
    admin.expect("GET", "/admin", None, 200).await?;
    let erin = admin.post("add_user", json!({"name": "erin"})).await?;
    known.add(
        &field(&erin, "id")?,
        "erin-id",
        "erin's account id (a UUID v4)",
    );
    known.add(&field(&erin, "token")?, "erin-token", "erin's login token");
    let echobot = admin.post("add_bot", json!({"name": "echobot"})).await?;
    let echobot_id = field(&echobot, "id")?;
    known.add(
        &echobot_id,
        "echobot-id",
        "echobot's account id (a UUID v4)",
    );
    known.add(
        &field(&echobot, "token")?,
        "echobot-token",
        "echobot's login token",
    );
    let lab = field(
        &admin.post("create_server", json!({"name": "lab"})).await?,
        "id",
    )?;
    known.add(&lab, "lab-id", "the id of the server \"lab\" (a UUID v4)");
    let bench = admin
        .post("create_channel", json!({"server_id": lab, "name": "bench"}))
        .await?;
    let bench = field(&bench, "id")?;
    known.add(
        &bench,
        "bench-id",
        "the id of the channel \"bench\" (a UUID v4)",
    );
    let erin_id = field(&erin, "id")?;
    for account in [&erin_id, &echobot_id] {
        admin
            .post(
                "add_member",
                json!({"channel_id": bench, "account_id": account}),
            )
            .await?;
    }

    // Steering: sends, injected failures, the REST lane.
    admin
        .post(
            "deny_sends",
            json!({"channel_id": bench, "denial": "rate_limited"}),
        )
        .await?;
    admin
        .post("deny_sends", json!({"channel_id": bench, "denial": null}))
        .await?;
    admin
        .post("fail_next_requests", json!({"op": 30, "count": 1}))
        .await?;
    admin
        .expect(
            "POST",
            "/admin/fail_next_requests",
            Some(json!({"op": 10, "count": 1})),
            400,
        )
        .await?;
    admin
        .post("set_rest_credentials", json!({"on": true}))
        .await?;
    admin
        .post("set_mint_rate_limit", json!({"max": 5, "window_ms": 60000}))
        .await?;
    admin.post("fail_next_mints", json!({"count": 1})).await?;
    admin
        .post("set_session_lifetime", json!({"lifetime_ms": 2000}))
        .await?;
    admin
        .post("purge_rest_credentials", json!({"bot_id": echobot_id}))
        .await?;

    // Taking the scene apart.
    admin
        .post(
            "remove_member",
            json!({"channel_id": bench, "account_id": erin_id}),
        )
        .await?;
    admin
        .post("revoke_bot", json!({"bot_id": echobot_id}))
        .await?;
    admin
        .expect(
            "POST",
            "/admin/revoke_bot",
            Some(json!({"bot_id": erin_id})),
            400,
        )
        .await?;
    admin.post("drop_connections", json!({})).await?;
    admin.expect("GET", "/admin/state", None, 200).await?;

    // Mistakes: a method, a path, a body.
    admin.expect("GET", "/admin/add_bot", None, 405).await?;
    admin.expect("GET", "/admin/nope", None, 404).await?;
    admin
        .expect("POST", "/admin/add_bot", Some(json!({"nmae": "typo"})), 400)
        .await?;
    server.shutdown().await;
    Ok(())
}

pub(crate) fn header() -> Header<'static> {
    Header {
        about: "The devserver's HTTP admin endpoint (botlane-devserver --admin; not part of the protocol): a raw HTTP client calls every route and meets every refusal. The devserver prints the endpoint's URL and the admin token at start.",
        scenario: &[
            "the client asks without the token, with a wrong one, and with the token but a foreign Host: 401, 401, 403",
            "it lists the routes, then creates a human erin, a bot echobot, a server lab with a channel bench, and makes both members",
            "it makes bench refuse sends and accept them again, fails the next send (op 30) and tries to fail logins (refused), turns BOT_REST_CREDENTIALS on, sets the mint rate limit, fails the next mint, sets the credential lifetime and purges echobot's credentials",
            "it removes erin from bench, revokes echobot, tries to revoke erin (not a bot), drops every connection and reads the counters",
            "mistakes: a GET on a POST route (405), an unknown route (404), a body with an unknown field (400)",
        ],
        connections: &[(
            "admin",
            "a raw HTTP/1.1 client of the admin endpoint (the Host header, not kept, names the endpoint's own address unless said otherwise)",
        )],
    }
}
