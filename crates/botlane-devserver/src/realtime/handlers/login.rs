//! Login (op 10, then `ready` and the keys waiting for the account) and the
//! REST mint (op 638).

use botlane::crypto::PublicKey;
use botlane::wire::{
    AccountKind, LoginReply, LoginRequest, OpCode, Ready, ReplyCode, RestMintReply,
};
use serde_json::value::RawValue;
use tokio::time::Instant;

use crate::realtime::dispatch::{decode, Flow, Refusal};
use crate::state::State;

/// The text a recorded login payload shows: the token replaced.
pub(crate) fn redact_login(payload: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(payload) {
        Ok(serde_json::Value::Object(mut map)) => {
            if map.contains_key("token") {
                map.insert("token".into(), "[REDACTED]".into());
            }
            serde_json::Value::Object(map).to_string()
        }
        _ => "\"[REDACTED]\"".to_owned(),
    }
}

/// Logs connection `conn` in; `recorded` is the login frame's size and
/// redacted payload, recorded once the login succeeds.
pub(crate) fn login(state: &mut State, conn: u64, d: &RawValue, recorded: (usize, String)) -> Flow {
    let op = OpCode::Login;
    let request: LoginRequest = match decode(op.code(), d) {
        Ok(request) => request,
        Err(refusal) => {
            state.send(conn, op, &refusal.reply());
            return Flow::Continue;
        }
    };
    let Some(account) = state.account_by_token(&request.token) else {
        tracing::info!(connection = conn, "login refused: unknown or revoked token");
        let reply = LoginReply {
            code: ReplyCode::Unauthorized.code(),
            user_id: None,
        };
        state.send(conn, op, &reply);
        return Flow::Close {
            code: 1008,
            reason: "unauthorized".to_owned(),
        };
    };
    let (id, name, kind) = (account.id.clone(), account.name.clone(), account.kind);
    if PublicKey::from_base64(&request.public_key).is_err() {
        let refusal = Refusal::new(
            ReplyCode::BadRequest,
            "public_key is not a base64 X25519 key",
        );
        state.send(conn, op, &refusal.reply());
        return Flow::Continue;
    }
    if !state.session_room() {
        let refusal = Refusal::new(
            ReplyCode::RateLimited,
            format!(
                "session pool full: {} sessions are logged in, the most this service allows",
                state.limits.sessions
            ),
        );
        state.send(conn, op, &refusal.reply());
        return Flow::Continue;
    }
    if let Some(account) = state.accounts.get_mut(&id) {
        account.public_key = Some(request.public_key);
    }
    state.set_account(conn, &id);
    state.record_login(conn, recorded.0, recorded.1);
    tracing::info!(connection = conn, account = %id, ?kind, "logged in");
    state.send(
        conn,
        op,
        &LoginReply {
            code: 0,
            user_id: Some(id.clone()),
        },
    );
    let ready = Ready {
        user_id: id.clone(),
        name,
        kind,
        channels: state.channels_of(&id),
    };
    state.send(conn, OpCode::Ready, &ready);
    for key in state.pending_keys.remove(&id).unwrap_or_default() {
        state.send(conn, OpCode::ChannelKey, &key);
    }
    Flow::LoggedIn
}

pub(crate) fn rest_mint(state: &mut State, conn: u64, me: &str) {
    let kind = state.accounts.get(me).map_or(AccountKind::User, |a| a.kind);
    let reply = state.rest.mint(me, kind, Instant::now());
    let recorded = reply.secret.as_ref().map(|_| {
        let shown = RestMintReply {
            secret: Some("[REDACTED]".into()),
            ..reply.clone()
        };
        serde_json::to_string(&shown).expect("wire payloads always serialize")
    });
    state.send_recorded_as(conn, OpCode::RestMint, &reply, recorded);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_payloads_are_redacted() {
        let shown = redact_login(r#"{"token":"tok-secret","public_key":"pk","client":"c"}"#);
        assert!(
            !shown.contains("tok-secret") && shown.contains("[REDACTED]"),
            "{shown}"
        );
        assert!(shown.contains(r#""client":"c""#), "{shown}");
        assert_eq!(redact_login(r#""tok-secret""#), "\"[REDACTED]\"");
    }
}
