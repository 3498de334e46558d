//! The service's side of every opcode of `docs/protocol.md`: one frame in,
//! routed to the handler of its opcode.
//!
//! A connection's frames are handled one at a time, in arrival order, each
//! under the state lock, so replies to one opcode leave in request order and
//! every member sees the messages of a channel in the order they were stored.

use botlane_proto::payload::{CodeReply, EmojiReply};
use botlane_proto::{OpCode, ReplyCode};
use serde_json::value::RawValue;

use super::emoji::catalog;
use super::envelope::{check_unique_keys, read_envelope};
use super::handlers::{channels, keys, login, menu, messages, Flow, Handled, Refusal};
use crate::state::State;

/// The request payload `d`: present, a JSON object, no key repeated at any
/// depth.
fn payload(d: Option<&RawValue>) -> Result<&RawValue, Refusal> {
    let d =
        d.ok_or_else(|| Refusal::new(ReplyCode::BadRequest, "malformed payload: d is missing"))?;
    if !d.get().starts_with('{') {
        return Err(Refusal::new(
            ReplyCode::BadRequest,
            "malformed payload: d must be a JSON object",
        ));
    }
    check_unique_keys(d.get())
        .map_err(|why| Refusal::new(ReplyCode::BadRequest, format!("malformed payload: {why}")))?;
    Ok(d)
}

/// Handles one text frame from a connection. What it queues for that
/// connection counts as its own (backpressure, never an overflow).
pub(crate) fn handle_text(state: &mut State, conn: u64, text: &str) -> Flow {
    state.meters_mut().frames_received += 1;
    state.set_handling(Some(conn));
    let flow = handle(state, conn, text);
    state.set_handling(None);
    flow
}

fn handle(state: &mut State, conn: u64, text: &str) -> Flow {
    let envelope = match read_envelope(text) {
        Ok(envelope) => envelope,
        Err(why) => {
            // Its opcode, hence the reply queue it belongs to, is unknown:
            // closing is the only answer that leaves no request hanging.
            state.record_received(conn, None, text.len(), "[UNPARSED]".into());
            state.note_bad_envelope(conn, why.what());
            return Flow::Close {
                code: 1007,
                reason: format!("malformed frame envelope: {}", why.what()),
            };
        }
    };
    let (code, d) = (envelope.op, envelope.d);
    let size = d.map_or(0, |d| d.get().len());
    let shown = match d {
        Some(d) if code == OpCode::Login.code() => login::redact_login(d.get()),
        Some(d) => d.get().to_owned(),
        None => String::new(),
    };
    let logged_in = state.account_of(conn).is_some();
    let shown = if logged_in {
        state.record_received(conn, Some(code), size, shown);
        None
    } else {
        Some(shown)
    };
    tracing::debug!(connection = conn, op = code, size, "frame received");

    let op = OpCode::from(code).filter(|op| is_request(*op));
    let Some(op) = op else {
        // Unknown, or a push only the service sends: answered on its own
        // opcode, so a client waiting for a reply to it is not left hanging.
        let reply = CodeReply::new(ReplyCode::BadRequest.code())
            .with_reason(format!("unknown opcode {code}"));
        state.send_op(conn, code, &reply);
        return Flow::Continue;
    };
    let Some(me) = state.account_of(conn).map(str::to_owned) else {
        if op == OpCode::Login {
            return match payload(d) {
                // Recorded only if the login succeeds.
                Ok(d) => login::login(state, conn, d, (size, shown.unwrap_or_default())),
                Err(refusal) => {
                    state.send(conn, op, &refusal.reply());
                    Flow::Continue
                }
            };
        }
        let refusal = Refusal::new(ReplyCode::Unauthorized, "not logged in");
        state.send(conn, op, &refusal.reply());
        return Flow::Continue;
    };
    if state.take_injected_failure(code) {
        let refusal = Refusal::new(ReplyCode::ServerError, "injected failure");
        state.send(conn, op, &refusal.reply());
        return Flow::Continue;
    }
    let outcome = payload(d).and_then(|d| serve(state, conn, op, &me, d));
    if let Err(refusal) = outcome {
        state.send(conn, op, &refusal.reply());
    }
    Flow::Continue
}

/// Whether `op` is a request (every opcode that is not a push, by
/// botlane-proto's table), which `serve` answers.
fn is_request(op: OpCode) -> bool {
    !op.is_push()
}

/// Serves request `op` of logged-in account `me`, its payload checked.
fn serve(state: &mut State, conn: u64, op: OpCode, me: &str, d: &RawValue) -> Handled {
    match op {
        OpCode::Login => Err(Refusal::new(ReplyCode::BadRequest, "already logged in")),
        OpCode::MenuPublish => menu::menu_publish(state, conn, me, d),
        OpCode::Send => messages::send(state, conn, me, d),
        OpCode::HistoryFetch => messages::history(state, conn, me, d),
        OpCode::KeyShare => keys::key_share(state, conn, me, d),
        OpCode::PublicKeyFetch => keys::public_key(state, conn, d),
        OpCode::ChannelJoin => channels::join(state, conn, me, d),
        OpCode::ChannelMembers => channels::members(state, conn, me, d),
        OpCode::FetchEmojis => {
            let reply = EmojiReply::new(0).with_emojis(catalog());
            state.send(conn, op, &reply);
            Ok(())
        }
        OpCode::RestMint => {
            login::rest_mint(state, conn, me);
            Ok(())
        }
        OpCode::Heartbeat => {
            state.send(conn, op, &CodeReply::default());
            Ok(())
        }
        // A request of botlane-proto's table this service has no arm for
        // yet (`OpCode` is non-exhaustive): answered as an unknown opcode,
        // never as a heartbeat would be.
        _ => Err(Refusal::new(
            ReplyCode::BadRequest,
            format!("unknown opcode {}", op.code()),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn payloads_must_be_objects_without_repeated_keys() {
        let why = |d: Option<&str>| {
            let d = d.map(|d| RawValue::from_string(d.to_owned()).unwrap());
            payload(d.as_deref())
                .map(|_| ())
                .unwrap_err()
                .reply()
                .reason
                .unwrap()
        };
        assert_eq!(why(None), "malformed payload: d is missing");
        assert_eq!(
            why(Some("[]")),
            "malformed payload: d must be a JSON object"
        );
        assert_eq!(
            why(Some(r#""x""#)),
            "malformed payload: d must be a JSON object"
        );
        assert_eq!(
            why(Some(r#"{"a":{"b":1,"b":2}}"#)),
            "malformed payload: duplicate key d.a.b"
        );
    }
}
