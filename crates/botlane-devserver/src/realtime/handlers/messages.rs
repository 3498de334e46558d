//! Sends (op 30, relayed as op 32, replies notified as op 33) and history (op 40).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use botlane_proto::limits::MAX_COMMAND_WIRE;
use botlane_proto::payload::{
    HistoryReply, HistoryRequest, MessageCreate, Notification, SendReply, SendRequest, WireMessage,
};
use botlane_proto::{OpCode, ReplyCode};
use serde_json::value::RawValue;
use uuid::Uuid;

use super::channels::member_channel;
use super::{decode, Handled, Refusal};
use crate::realtime::MAX_FRAME_BYTES;
use crate::records::NotificationRecord;
use crate::state::State;

/// Largest sealed `content` of one message, in bytes.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
/// Room a history reply keeps for its envelope `{"op":40,"d":{"code":0,"messages":[…]}}`.
const HISTORY_ENVELOPE: usize = 64;

/// Most messages one history fetch returns (fewer when they would not fit in
/// [`MAX_FRAME_BYTES`]).
pub const MAX_HISTORY: usize = 100;
/// Messages a history fetch returns when it gives no `limit`.
pub const DEFAULT_HISTORY: usize = 50;

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The fewest bytes a sealed payload decodes to: a 12-byte nonce and a
/// 16-byte tag around an empty plaintext (`docs/crypto.md` §1).
const MIN_SEALED_BYTES: usize = 12 + 16;

/// Refuses a sealed payload no member could open: not canonical base64, or
/// too short to hold a nonce and a tag. (Whether it opens, only members can
/// tell: the service never holds the key.)
/// `scratch` is only a buffer to decode in (its bytes are stale).
fn check_sealed(scratch: &mut Vec<u8>, field: &str, text: &str) -> Result<(), Refusal> {
    scratch.clear();
    STANDARD.decode_vec(text, scratch).map_err(|_| {
        Refusal::new(
            ReplyCode::BadRequest,
            format!("{field} is not a sealed payload: not canonical base64"),
        )
    })?;
    let bytes = &scratch[..];
    if bytes.len() < MIN_SEALED_BYTES {
        return Err(Refusal::new(
            ReplyCode::BadRequest,
            format!(
                "{field} is not a sealed payload: {} bytes, fewer than a nonce and a tag ({MIN_SEALED_BYTES})",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

pub(crate) fn send(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::Send;
    let request: SendRequest = decode(d)?;
    if request.content.len() > MAX_CONTENT_BYTES {
        return Err(Refusal::new(
            ReplyCode::TooLarge,
            format!("content is over {MAX_CONTENT_BYTES} bytes"),
        ));
    }
    if request
        .command
        .as_ref()
        .is_some_and(|c| c.chars().count() > MAX_COMMAND_WIRE)
    {
        return Err(Refusal::new(
            ReplyCode::TooLarge,
            format!("command sidecar is over MAX_COMMAND_WIRE ({MAX_COMMAND_WIRE}) characters"),
        ));
    }
    check_sealed(state.scratch(), "content", &request.content)?;
    if let Some(command) = &request.command {
        check_sealed(state.scratch(), "command", command)?;
    }
    let channel = member_channel(state, &request.channel_id, me)?;
    if let Some(denial) = channel.denial {
        return Err(Refusal::new(denial.code(), denial.reason()));
    }
    let replied_author = match &request.reply_to {
        Some(target) => Some(
            channel
                .messages
                .iter()
                .find(|m| m.id == *target)
                .map(|m| m.author_id.clone())
                .ok_or_else(|| {
                    Refusal::new(
                        ReplyCode::BadRequest,
                        "reply_to names no message of this channel",
                    )
                })?,
        ),
        None => None,
    };
    // Timestamps never go backwards within a channel, so history order and
    // `created_at` order agree even if the clock steps back.
    let created_at = channel
        .messages
        .back()
        .map_or(0, |m| m.created_at)
        .max(now_millis());
    // Each string is allocated once and moved on: into the reply, the
    // message, the push and the history (relaying is what every bot
    // author's test suite spends its time on).
    let id = Uuid::new_v4().hyphenated().to_string();
    let mut reply = SendReply::new(0).with_message_id(id);
    let reply_frame = state.frame(op.code(), &reply);
    let id = reply
        .message_id
        .take()
        .expect("the reply was given the id above");
    let mut message = WireMessage::new(id, request.channel_id, me, request.content, created_at);
    message.command = request.command;
    message.reply_to = request.reply_to;
    let notification = replied_author.filter(|author| author != me).map(|author| {
        let notification =
            Notification::new("reply", message.channel_id.clone(), message.id.clone(), me);
        (author, notification)
    });
    let push = MessageCreate::new(message);
    let push_frame = state.frame(OpCode::MessageCreate.code(), &push);
    let message = push.message;
    state.send_frame(conn, op.code(), reply_frame, None);
    state.push_frame_to_channel(
        &message.channel_id,
        OpCode::MessageCreate.code(),
        push_frame,
    );
    let history = state.limits().channel_history;
    let channel = member_channel(state, &message.channel_id, me)?;
    channel.messages.push_back(message);
    while channel.messages.len() > history {
        channel.messages.pop_front();
    }
    state.meters_mut().messages += 1;
    if let Some((author, notification)) = notification {
        // A reply notification pierces mutes: it goes out whatever the
        // recipient's settings (the dev service has no mutes to consult).
        let delivered = state.push(&author, OpCode::Notification, &notification);
        state.record_notification(NotificationRecord {
            account_id: author,
            notification,
            delivered,
        });
    }
    Ok(())
}

pub(crate) fn history(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::HistoryFetch;
    let request: HistoryRequest = decode(d)?;
    let limit = request
        .limit
        .map_or(DEFAULT_HISTORY, |l| {
            usize::try_from(l).unwrap_or(MAX_HISTORY)
        })
        .min(MAX_HISTORY);
    let channel = member_channel(state, &request.channel_id, me)?;
    // The newest `limit` messages, as many as fit in one frame: a reply is
    // never larger than a frame the service would accept itself.
    let mut room = MAX_FRAME_BYTES - HISTORY_ENVELOPE;
    let mut newest_first = Vec::new();
    for message in channel.messages.iter().rev().take(limit) {
        let size = serde_json::to_string(message).map_or(usize::MAX, |text| text.len() + 1);
        if size > room {
            break;
        }
        room -= size;
        newest_first.push(message.clone());
    }
    newest_first.reverse();
    let reply = HistoryReply::new(0).with_messages(newest_first);
    state.send(conn, op, &reply);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_payloads_that_could_be_sealed_pass() {
        let minimal = STANDARD.encode([7u8; MIN_SEALED_BYTES]);
        assert!(check_sealed(&mut Vec::new(), "content", &minimal).is_ok());
        let reason = |text: &str| {
            check_sealed(&mut Vec::new(), "content", text)
                .err()
                .unwrap()
                .reply()
                .reason
                .unwrap()
        };
        assert_eq!(
            reason(""),
            "content is not a sealed payload: 0 bytes, fewer than a nonce and a tag (28)"
        );
        assert!(reason(&STANDARD.encode([7u8; 27])).contains("27 bytes"));
        assert!(reason("abc").contains("not canonical base64"));
        assert!(reason(minimal.trim_end_matches('=')).contains("not canonical base64"));
        assert!(reason("@@@@").contains("not canonical base64"));
    }
}
