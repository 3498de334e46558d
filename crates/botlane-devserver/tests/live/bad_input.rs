//! What the service does with bad input on the realtime wire (D2): every
//! request gets an answer or fails fast with the connection, never hangs.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::{Duration, Instant};

use botlane_devserver::{TestUser, TestUserError, MAX_FRAME_BYTES, REQUEST_TIMEOUT};
use botlane_proto::OpCode;
use common::{code, fake_key, lobby, logged_in, sealed, End, Raw, ALICE, BOT};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn an_unreadable_envelope_closes_with_1007_and_its_reason() {
    let f = lobby().await;
    for (text, what) in [
        ("not json", "not valid JSON"),
        (r#"{"op":12,"d":{}"#, "not valid JSON"),
        (r#"[12,{}]"#, "not a JSON object"),
        (r#""frame""#, "not a JSON object"),
        (
            r#"{"op":12,"op":12,"d":{}}"#,
            "a top-level key appears twice",
        ),
        (
            r#"{"op":12,"d":{},"x":1,"x":1}"#,
            "a top-level key appears twice",
        ),
        (r#"{"d":{}}"#, "op is missing"),
        (r#"{"op":"12","d":{}}"#, "op is not an integer in 0..=65535"),
        (r#"{"op":12.5,"d":{}}"#, "op is not an integer in 0..=65535"),
        (
            r#"{"op":70000,"d":{}}"#,
            "op is not an integer in 0..=65535",
        ),
    ] {
        let mut raw = logged_in(&f.url, ALICE).await;
        // A request before the bad frame is answered; nothing after it is.
        raw.send(OpCode::Heartbeat, json!({})).await;
        raw.send_text(text).await;
        raw.send(OpCode::Heartbeat, json!({})).await;
        assert_eq!(raw.next().await, Ok((12, json!({"code": 0}))), "{text}");
        assert_eq!(raw.next().await, Err(End::Closed(Some(1007))), "{text}");
        let reason = format!("malformed frame envelope: {what}");
        assert_eq!(raw.close_reason.as_deref(), Some(reason.as_str()), "{text}");
    }
    // Before login too: the same close, and nothing recorded.
    let mut raw = Raw::connect(&f.url).await;
    raw.send_text("{").await;
    assert_eq!(raw.next().await, Err(End::Closed(Some(1007))));
    f.server
        .wait_for(|s| s.connection_count() == 0, common::WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn every_pending_request_fails_fast_after_a_bad_envelope() {
    let f = lobby().await;
    let alice = TestUser::connect(&f.url, ALICE).await.unwrap();
    alice.send_raw(r#"{"op":"30","d":{}}"#).unwrap();
    let started = Instant::now();
    let (heartbeat, history, again) = tokio::join!(
        alice.heartbeat(),
        alice.history(&f.general),
        alice.heartbeat()
    );
    let elapsed = started.elapsed();
    for result in [heartbeat, history.map(|_| ()), again] {
        assert!(matches!(result, Err(TestUserError::Closed)), "{result:?}");
    }
    // Failed by the close, not by waiting out the request timeout.
    assert!(elapsed < REQUEST_TIMEOUT / 2, "{elapsed:?}");
    assert_eq!(
        alice.close_reason(),
        Some((
            1007,
            "malformed frame envelope: op is not an integer in 0..=65535".to_owned()
        ))
    );
}

#[tokio::test]
async fn a_binary_frame_closes_with_1003() {
    let f = lobby().await;
    let mut raw = logged_in(&f.url, ALICE).await;
    raw.ws.send(Message::binary(vec![1, 2, 3])).await.unwrap();
    assert_eq!(raw.next().await, Err(End::Closed(Some(1003))));
    assert!(raw.close_reason.unwrap().contains("binary"));
}

#[tokio::test]
async fn a_message_over_the_frame_limit_closes_with_1009() {
    let f = lobby().await;
    let mut raw = logged_in(&f.url, ALICE).await;
    // Exactly at the limit: served (unknown fields of d are ignored).
    let head = r#"{"op":12,"d":{"pad":""#;
    let tail = r#""}}"#;
    let pad = "x".repeat(MAX_FRAME_BYTES - head.len() - tail.len());
    let at_limit = format!("{head}{pad}{tail}");
    assert_eq!(at_limit.len(), MAX_FRAME_BYTES);
    raw.send_text(at_limit).await;
    assert_eq!(raw.next().await, Ok((12, json!({"code": 0}))));
    // One byte more: closed with 1009, the close frame flushed first.
    let over = format!("{head}{pad}x{tail}");
    raw.send_text(over).await;
    assert_eq!(raw.next().await, Err(End::Closed(Some(1009))));
    f.server
        .wait_for(|s| s.connection_count() == 0, common::WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_1009_close_reaches_a_client_that_sends_more_right_after_the_oversize_message() {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode as Ws};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let f = lobby().await;
    let over = format!(
        r#"{{"op":12,"d":{{"pad":"{}"}}}}"#,
        "x".repeat(MAX_FRAME_BYTES)
    );
    let (first, second) = over.as_bytes().split_at(over.len() / 2);
    for attempt in 0..24 {
        let mut raw = logged_in(&f.url, ALICE).await;
        if attempt % 2 == 0 {
            raw.send_text(over.clone()).await;
        } else {
            // Two frames under the limit, one message over it.
            for (part, opcode, last) in [
                (first, Ws::Data(Data::Text), false),
                (second, Ws::Data(Data::Continue), true),
            ] {
                let frame = Frame::message(part.to_vec(), opcode, last);
                raw.ws.send(Message::Frame(frame)).await.unwrap();
            }
        }
        // More behind it before the close can have arrived: the service
        // reads and discards it rather than resetting the connection.
        raw.send(OpCode::Heartbeat, json!({})).await;
        assert_eq!(
            raw.next().await,
            Err(End::Closed(Some(1009))),
            "attempt {attempt}"
        );
        assert_eq!(raw.close_reason.as_deref(), Some("max length: 1048576"));
    }
    f.server
        .wait_for(|s| s.connection_count() == 0, common::WAIT)
        .await
        .unwrap();
}

/// Sends `bad` then `good` on opcode `op` without waiting, then reads the
/// two replies of that opcode, in order.
async fn bad_then_good(raw: &mut Raw, op: u16, bad: &str, good: Value) -> (Value, Value) {
    raw.send_text(bad.to_owned()).await;
    raw.send_text(json!({"op": op, "d": good}).to_string())
        .await;
    let mut replies = Vec::new();
    while replies.len() < 2 {
        let (got, d) = raw.next().await.unwrap();
        if got == op {
            replies.push(d);
        }
    }
    (replies.remove(0), replies.remove(0))
}

#[tokio::test]
async fn a_bad_payload_gets_its_opcodes_minus_5_and_the_next_request_its_own_reply() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let ch = f.general.clone();
    let wrapped = json!({"ephemeral": "ZXBr", "ciphertext": "Y3Q="});
    let cases: Vec<(u16, String, &str, Value, i64)> = vec![
        (12, r#"{"op":12}"#.into(), "d is missing", json!({}), 0),
        (
            12,
            r#"{"op":12,"d":[]}"#.into(),
            "d must be a JSON object",
            json!({}),
            0,
        ),
        (
            12,
            r#"{"op":12,"d":"ping"}"#.into(),
            "d must be a JSON object",
            json!({}),
            0,
        ),
        (
            30,
            format!(
                r#"{{"op":30,"d":{{"channel_id":"{ch}","channel_id":"{ch}","content":"{}"}}}}"#,
                sealed("x")
            ),
            "duplicate key d.channel_id",
            json!({"channel_id": ch, "content": sealed("x")}),
            0,
        ),
        (
            30,
            json!({"op": 30, "d": {"channel_id": ch, "content": 5}}).to_string(),
            "invalid type: integer, expected a string",
            json!({"channel_id": ch, "content": sealed("y")}),
            0,
        ),
        (
            40,
            json!({"op": 40, "d": {"channel_id": 7}}).to_string(),
            "invalid type",
            json!({"channel_id": ch}),
            0,
        ),
        (
            51,
            json!({"op": 51, "d": {"channel_id": ch, "to": f.alice}}).to_string(),
            "missing field `wrapped`",
            json!({"channel_id": ch, "to": f.alice, "wrapped": wrapped}),
            0,
        ),
        (
            52,
            json!({"op": 52, "d": {"user_id": ["x"]}}).to_string(),
            "invalid type",
            json!({"user_id": f.alice}),
            0,
        ),
        (
            60,
            json!({"op": 60, "d": {"channel": ch}}).to_string(),
            "missing field `channel_id`",
            json!({"channel_id": ch}),
            0,
        ),
        (
            61,
            r#"{"op":61,"d":{"channel_id":"a","x":{"k":1,"k":2}}}"#.into(),
            "duplicate key d.x.k",
            json!({"channel_id": ch}),
            0,
        ),
        (
            240,
            r#"{"op":240,"d":null}"#.into(),
            "d must be a JSON object",
            json!({}),
            0,
        ),
        (638, r#"{"op":638}"#.into(), "d is missing", json!({}), -7),
        (
            10,
            r#"{"op":10,"d":{}}"#.into(),
            "already logged in",
            json!({"token": ALICE, "public_key": fake_key('A'), "client": "t"}),
            -5,
        ),
    ];
    for (op, bad, why, good, good_code) in cases {
        let (refused, served) = bad_then_good(&mut alice, op, &bad, good).await;
        assert_eq!(code(&refused), -5, "{bad}");
        let reason = refused["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{bad}: {reason}");
        assert!(!reason.contains(ALICE), "{reason}");
        assert_eq!(code(&served), good_code, "after {bad}: {served}");
    }

    // The menu (bots only), and a menu out of canonical order.
    let mut bot = logged_in(&f.url, BOT).await;
    let (refused, served) = bad_then_good(
        &mut bot,
        20,
        r#"{"op":20,"d":{"menu":[["roll","Roll",[]],["ping","Ping",[]]]}}"#,
        json!({"menu": [["ping", "Ping", []], ["roll", "Roll", []]]}),
    )
    .await;
    assert_eq!(code(&refused), -5);
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains(r#"not in canonical order (sorted by name): "ping" comes after "roll""#),
        "{refused}"
    );
    assert_eq!(code(&served), 0);
    let stored = f
        .server
        .menu(&f.server.account_id("dicebot").unwrap())
        .unwrap();
    let names: Vec<_> = stored.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ping", "roll"]);
}

#[tokio::test]
async fn a_bad_login_payload_gets_minus_5_and_a_good_login_still_works() {
    let f = lobby().await;
    let mut raw = Raw::connect(&f.url).await;
    let zero_key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    for (d, why) in [
        (None, "d is missing"),
        (
            Some(json!({"token": ALICE, "public_key": fake_key('A')})),
            "missing field `client`",
        ),
        (
            Some(json!({"token": ALICE, "client": "t"})),
            "missing field `public_key`",
        ),
        (
            Some(json!({"token": ALICE, "public_key": "not a key", "client": "t"})),
            "not a base64 X25519 key",
        ),
        (
            Some(json!({"token": ALICE, "public_key": zero_key, "client": "t"})),
            "low-order",
        ),
    ] {
        let frame = match &d {
            Some(d) => json!({"op": 10, "d": d}),
            None => json!({"op": 10}),
        };
        raw.send_text(frame.to_string()).await;
        let reply = raw.next_of(OpCode::Login).await;
        assert_eq!(code(&reply), -5, "{d:?}");
        let reason = reply["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{d:?}: {reason}");
        assert!(!reason.contains(ALICE), "{reason}");
    }
    // An unknown opcode before login is answered as such, not with -6.
    raw.send_text(r#"{"op":4242,"d":{}}"#.to_owned()).await;
    assert_eq!(
        raw.next().await,
        Ok((4242, json!({"code": -5, "reason": "unknown opcode 4242"})))
    );
    // The socket stayed open and no key was registered; a good login works.
    assert!(f.server.view(|s| s.public_key(&f.alice).is_none()));
    raw.login(ALICE).await;
    assert!(f.server.frames().iter().all(|r| !r.payload.contains(ALICE)));
}

#[tokio::test]
async fn sealed_payloads_that_cannot_be_valid_are_refused() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    let short = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode([7u8; 27])
    };
    for (field, value, why) in [
        ("content", String::new(), "0 bytes"),
        ("content", "AAAA".to_owned(), "3 bytes"),
        ("content", "not base64!".to_owned(), "not canonical base64"),
        (
            "content",
            sealed("x").trim_end_matches('=').to_owned(),
            "not canonical base64",
        ),
        (
            "content",
            sealed("x").replace('A', "-"),
            "not canonical base64",
        ),
        ("content", short, "27 bytes"),
        ("command", "AAAA".to_owned(), "3 bytes"),
    ] {
        let mut d = json!({"channel_id": f.general, "content": sealed("ok")});
        d[field] = json!(value);
        let reply = alice.request(OpCode::Send, d).await;
        assert_eq!(code(&reply), -5, "{field} {value:?}");
        let reason = reply["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!("{field} is not a sealed payload")),
            "{reason}"
        );
        assert!(reason.contains(why), "{value:?}: {reason}");
    }
    assert!(f.server.messages(&f.general).is_empty());
    // Exactly a nonce and a tag (an empty plaintext) is a sealed payload.
    let empty = json!({"channel_id": f.general, "content": sealed("")});
    assert_eq!(code(&alice.request(OpCode::Send, empty).await), 0);
}

#[tokio::test]
async fn a_heartbeat_needs_an_object() {
    let f = lobby().await;
    let mut alice = logged_in(&f.url, ALICE).await;
    for d in [json!([]), json!(1), json!("x"), json!(null), json!(true)] {
        let reply = alice.request(OpCode::Heartbeat, d.clone()).await;
        assert_eq!(code(&reply), -5, "{d}");
    }
    let with_fields = alice.request(OpCode::Heartbeat, json!({"seq": 1})).await;
    assert_eq!(with_fields, json!({"code": 0}));
    alice.expect_silence(Duration::from_millis(50)).await;
}
