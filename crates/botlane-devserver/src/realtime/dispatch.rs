//! The service's side of every opcode of `docs/protocol.md`: one frame in,
//! routed to the handler of its opcode.
//!
//! A connection's frames are handled one at a time, in arrival order, each
//! under the state lock, so replies to one opcode leave in request order and
//! every member sees the messages of a channel in the order they were stored.

use botlane::wire::{decode_frame, decode_payload, CodeReply, EmojiReply, OpCode, ReplyCode};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::emoji::catalog;
use super::handlers::{channels, keys, login, menu, messages};
use crate::state::State;

/// What the reader loop does after a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The connection has just logged in: no login timeout any more.
    LoggedIn,
    /// Close the socket with this code and reason (after flushing the
    /// replies queued so far).
    Close {
        code: u16,
        reason: String,
    },
}

/// A refusal: a reply code and an optional reason.
pub(crate) struct Refusal(ReplyCode, Option<String>);

impl Refusal {
    pub(crate) fn new(code: ReplyCode, reason: impl Into<String>) -> Self {
        Self(code, Some(reason.into()))
    }

    pub(crate) fn reply(self) -> CodeReply {
        CodeReply {
            code: self.0.code(),
            reason: self.1,
        }
    }
}

pub(crate) type Handled = Result<(), Refusal>;

pub(crate) fn decode<T: DeserializeOwned>(op: u16, d: &RawValue) -> Result<T, Refusal> {
    decode_payload::<T>(op, d).map_err(|e| {
        let reason =
            std::error::Error::source(&e).map_or_else(|| e.to_string(), ToString::to_string);
        Refusal::new(
            ReplyCode::BadRequest,
            format!("malformed payload: {reason}"),
        )
    })
}

/// Handles one text frame from a connection.
pub(crate) fn handle_text(state: &mut State, conn: u64, text: &str) -> Flow {
    let frame = match decode_frame(text) {
        Ok(frame) => frame,
        Err(_) => {
            tracing::warn!(
                connection = conn,
                size = text.len(),
                "invalid frame envelope ignored"
            );
            state.record_received(conn, None, text.len(), "[UNPARSED]".into());
            return Flow::Continue;
        }
    };
    let d = frame.d;
    let payload = if frame.op == OpCode::Login.code() {
        login::redact_login(d.get())
    } else {
        d.get().to_owned()
    };
    let size = d.get().len();
    let logged_in = state.account_of(conn).is_some();
    let payload = if logged_in {
        state.record_received(conn, Some(frame.op), size, payload);
        None
    } else {
        Some(payload)
    };
    tracing::debug!(
        connection = conn,
        op = frame.op,
        size = d.get().len(),
        "frame received"
    );

    let Some(op) = OpCode::from(frame.op).filter(|op| !op.is_push()) else {
        tracing::debug!(connection = conn, op = frame.op, "not a request: ignored");
        return Flow::Continue;
    };
    let Some(me) = state.account_of(conn).map(str::to_owned) else {
        if op == OpCode::Login {
            // Recorded only if the login succeeds.
            return login::login(state, conn, d, (size, payload.unwrap_or_default()));
        }
        let refusal = Refusal::new(ReplyCode::Unauthorized, "not logged in");
        state.send(conn, op, &refusal.reply());
        return Flow::Continue;
    };

    let outcome = match op {
        OpCode::Login => Err(Refusal::new(ReplyCode::BadRequest, "already logged in")),
        OpCode::Heartbeat => {
            state.send(conn, op, &CodeReply::default());
            Ok(())
        }
        OpCode::MenuPublish => menu::menu_publish(state, conn, &me, d),
        OpCode::Send => messages::send(state, conn, &me, d),
        OpCode::HistoryFetch => messages::history(state, conn, &me, d),
        OpCode::KeyShare => keys::key_share(state, conn, &me, d),
        OpCode::PublicKeyFetch => keys::public_key(state, conn, d),
        OpCode::ChannelJoin => channels::join(state, conn, &me, d),
        OpCode::ChannelMembers => channels::members(state, conn, &me, d),
        OpCode::FetchEmojis => {
            let reply = EmojiReply {
                code: 0,
                emojis: catalog(),
            };
            state.send(conn, op, &reply);
            Ok(())
        }
        OpCode::RestMint => {
            login::rest_mint(state, conn, &me);
            Ok(())
        }
        _ => {
            tracing::debug!(
                connection = conn,
                op = frame.op,
                "opcode not served: ignored"
            );
            Ok(())
        }
    };
    if let Err(refusal) = outcome {
        state.send(conn, op, &refusal.reply());
    }
    Flow::Continue
}
