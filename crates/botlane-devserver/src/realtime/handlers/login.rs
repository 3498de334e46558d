//! Login (op 10, then `ready` and the keys waiting for the account) and the
//! REST mint (op 638).

use botlane_proto::crypto::PublicKey;
use botlane_proto::payload::{AccountKind, LoginReply, LoginRequest, Ready};
use botlane_proto::{OpCode, ReplyCode};
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::{decode, Flow, Refusal};
use crate::state::{Refused, State};

/// The text a recorded login payload shows: `token` and `client` with
/// their values replaced, `public_key` as sent when it reads as a key, and
/// nothing else. Kept by an allow-list rather than by replacing the token
/// alone: a token under a misspelt key (`tojen`), in another field, or as a
/// key must not reach the records either (the fuzz target
/// `realtime_frames` found the misspelt key).
pub(crate) fn redact_login(payload: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(payload) else {
        return "\"[REDACTED]\"".to_owned();
    };
    let shown: serde_json::Map<String, serde_json::Value> = map
        .into_iter()
        .filter_map(|(key, value)| match key.as_str() {
            "public_key"
                if value
                    .as_str()
                    .is_some_and(|text| PublicKey::from_base64(text).is_ok()) =>
            {
                Some((key, value))
            }
            "token" | "client" | "public_key" => Some((key, "[REDACTED]".into())),
            _ => None,
        })
        .collect();
    serde_json::Value::Object(shown).to_string()
}

/// Checks an identity public key: canonical base64 of 32 bytes, and not a
/// low-order point (with which every key agreement gives all zeros, so
/// nothing sealed to it would be secret).
fn check_public_key(text: &str) -> Result<(), &'static str> {
    let key = PublicKey::from_base64(text)
        .map_err(|_| "public_key is not a base64 X25519 key (32 bytes, canonical base64)")?;
    if key.is_low_order() {
        Err("public_key is a low-order X25519 point: no key agreement with it is secret")
    } else {
        Ok(())
    }
}

/// Logs connection `conn` in; `recorded` is the login frame's size and
/// redacted payload, recorded once the login succeeds.
pub(crate) fn login(state: &mut State, conn: u64, d: &RawValue, recorded: (usize, String)) -> Flow {
    let op = OpCode::Login;
    let request: LoginRequest = match decode(d) {
        Ok(request) => request,
        Err(refusal) => {
            state.send(conn, op, &refusal.reply());
            return Flow::Continue;
        }
    };
    let Some(account) = state.account_by_token(&request.token) else {
        tracing::info!(connection = conn, "login refused: unknown or revoked token");
        state.meters_mut().refuse(Refused::Unauthorized);
        let reply = LoginReply::new(ReplyCode::Unauthorized.code());
        state.send(conn, op, &reply);
        return Flow::Close {
            code: 1008,
            reason: "unauthorized".to_owned(),
        };
    };
    let (id, name, kind) = (account.id.clone(), account.name.clone(), account.kind);
    // Evicted from a full pre-login pool before its login was read: it is
    // ending, and this login is not handled.
    if !state.login_arrived(conn) {
        return Flow::Continue;
    }
    if let Err(why) = check_public_key(&request.public_key) {
        state.meters_mut().refuse(Refused::BadPublicKey);
        state.send(conn, op, &Refusal::new(ReplyCode::BadRequest, why).reply());
        return Flow::Continue;
    }
    if !state.session_room() {
        state.meters_mut().refuse(Refused::SessionsFull);
        let refusal = Refusal::new(
            ReplyCode::RateLimited,
            format!(
                "session pool full: {} sessions are logged in, the most this service allows",
                state.limits().sessions
            ),
        );
        state.send(conn, op, &refusal.reply());
        return Flow::Continue;
    }
    if let Some(account) = state.account_mut(&id) {
        account.public_key = Some(request.public_key);
    }
    state.set_account(conn, &id);
    state.record_login(conn, recorded.0, recorded.1);
    state.meters_mut().logins += 1;
    tracing::info!(connection = conn, account = %id, ?kind, "logged in");
    state.send(conn, op, &LoginReply::new(0).with_user_id(id.clone()));
    let ready = Ready::new(id.clone(), name, kind, state.channels_of(&id));
    state.send(conn, OpCode::Ready, &ready);
    for key in state.take_held_keys(&id) {
        state.send(conn, OpCode::ChannelKey, &key);
    }
    Flow::LoggedIn
}

pub(crate) fn rest_mint(state: &mut State, conn: u64, me: &str) {
    let kind = state.account(me).map_or(AccountKind::User, |a| a.kind);
    let reply = state.rest_mut().mint(me, kind, Instant::now());
    let recorded = reply.secret.as_ref().map(|_| {
        let shown = reply.clone().with_secret("[REDACTED]");
        serde_json::to_string(&shown).expect("wire payloads always serialize")
    });
    state.send_recorded_as(conn, OpCode::RestMint.code(), &reply, recorded);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;

    use super::*;

    #[test]
    fn low_order_and_malformed_keys_are_refused() {
        let good = botlane_proto::crypto::IdentityKeyPair::generate()
            .unwrap()
            .public_key();
        assert_eq!(check_public_key(&good.to_base64()), Ok(()));
        let mut p_minus_1 = [0xff; 32];
        p_minus_1[0] = 0xec;
        p_minus_1[31] = 0x7f;
        // The points of order 1, 2, 4 and 8 (RFC 7748 §7 asks to refuse them).
        let order_8: [u8; 32] = [
            0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f,
            0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16,
            0x5f, 0x49, 0xb8, 0x00,
        ];
        let mut one = [0u8; 32];
        one[0] = 1;
        for low in [[0u8; 32], one, p_minus_1, order_8] {
            let why = check_public_key(&STANDARD.encode(low)).unwrap_err();
            assert!(why.contains("low-order"), "{why}");
        }
        for bad in ["", "not base64", &STANDARD.encode([1u8; 31])] {
            let why = check_public_key(bad).unwrap_err();
            assert!(why.contains("not a base64 X25519 key"), "{bad}: {why}");
        }
    }

    #[test]
    fn login_payloads_are_redacted() {
        let key = STANDARD.encode([9u8; 32]);
        let shown = redact_login(&format!(
            r#"{{"token":"tok-secret","public_key":"{key}","client":"c"}}"#
        ));
        assert_eq!(
            shown,
            format!(r#"{{"client":"[REDACTED]","public_key":"{key}","token":"[REDACTED]"}}"#)
        );
        // The token anywhere else: a misspelt key, another field, a key.
        for payload in [
            r#"{"tojen":"tok-secret"}"#,
            r#"{"public_key":"tok-secret","client":"my tok-secret"}"#,
            r#"{"tok-secret":1}"#,
            r#"{"token":{"nested":"tok-secret"}}"#,
            r#""tok-secret""#,
            r#"["tok-secret"]"#,
            "not json tok-secret",
        ] {
            let shown = redact_login(payload);
            assert!(!shown.contains("tok-secret"), "{payload} shown as {shown}");
        }
    }
}
