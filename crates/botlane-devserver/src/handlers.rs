//! The service's side of every opcode of `docs/protocol.md`.
//!
//! A connection's frames are handled one at a time, in arrival order, each
//! under the state lock, so replies to one opcode leave in request order and
//! every member sees the messages of a channel in the order they were stored.

use std::time::{SystemTime, UNIX_EPOCH};

use botlane::crypto::PublicKey;
use botlane::wire::{
    decode_frame, decode_payload, AccountKind, ChannelKeyPush, CodeReply, EmojiReply, HistoryReply,
    HistoryRequest, JoinRequest, KeyShare, LoginReply, LoginRequest, MembersReply, MembersRequest,
    MenuPublish, MessageCreate, Notification, OpCode, PublicKeyReply, PublicKeyRequest, Ready,
    ReplyCode, RestMintReply, SendReply, SendRequest, WireMessage,
};
use botlane::MAX_COMMAND_WIRE;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::time::Instant;
use uuid::Uuid;

use crate::emoji::catalog;
use crate::menu::MenuRejection;
use crate::state::{NotificationRecord, State};
use crate::StoredMenu;

/// Largest sealed `content` of one message, in bytes.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
/// Most messages one history fetch returns.
pub const MAX_HISTORY: usize = 100;
/// Messages a history fetch returns when it gives no `limit`.
pub const DEFAULT_HISTORY: usize = 50;

/// What the reader loop does after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// Close the socket (after flushing the replies queued so far).
    Close,
}

/// A refusal: a reply code and an optional reason.
struct Refusal(ReplyCode, Option<String>);

impl Refusal {
    fn new(code: ReplyCode, reason: impl Into<String>) -> Self {
        Self(code, Some(reason.into()))
    }

    fn reply(self) -> CodeReply {
        CodeReply {
            code: self.0.code(),
            reason: self.1,
        }
    }
}

type Handled = Result<(), Refusal>;

/// The text a recorded login payload shows: the token replaced.
fn redact_login(payload: &str) -> String {
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

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn decode<T: DeserializeOwned>(op: u16, d: &RawValue) -> Result<T, Refusal> {
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
        redact_login(d.get())
    } else {
        d.get().to_owned()
    };
    state.record_received(conn, Some(frame.op), d.get().len(), payload);
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
            return login(state, conn, d);
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
        OpCode::MenuPublish => menu_publish(state, conn, &me, d),
        OpCode::Send => send(state, conn, &me, d),
        OpCode::HistoryFetch => history(state, conn, &me, d),
        OpCode::KeyShare => key_share(state, conn, &me, d),
        OpCode::PublicKeyFetch => public_key(state, conn, d),
        OpCode::ChannelJoin => join(state, conn, &me, d),
        OpCode::ChannelMembers => members(state, conn, &me, d),
        OpCode::FetchEmojis => {
            let reply = EmojiReply {
                code: 0,
                emojis: catalog(),
            };
            state.send(conn, op, &reply);
            Ok(())
        }
        OpCode::RestMint => {
            rest_mint(state, conn, &me);
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

fn login(state: &mut State, conn: u64, d: &RawValue) -> Flow {
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
        return Flow::Close;
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
    if let Some(account) = state.accounts.get_mut(&id) {
        account.public_key = Some(request.public_key);
    }
    state.set_account(conn, &id);
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
    Flow::Continue
}

fn rest_mint(state: &mut State, conn: u64, me: &str) {
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

fn menu_publish(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::MenuPublish;
    let request: MenuPublish = decode(op.code(), d)?;
    if state.accounts.get(me).map(|a| a.kind) != Some(AccountKind::Bot) {
        return Err(Refusal::new(ReplyCode::NotBot, "only bots publish menus"));
    }
    let value: serde_json::Value = serde_json::from_str(request.menu.get())
        .map_err(|e| Refusal::new(ReplyCode::BadRequest, format!("menu is not JSON: {e}")))?;
    let menu = StoredMenu::from_value(&value).map_err(|rejection| match rejection {
        MenuRejection::TooLarge(_) => Refusal::new(ReplyCode::TooLarge, rejection.to_string()),
        _ => Refusal::new(ReplyCode::BadRequest, rejection.to_string()),
    })?;
    tracing::info!(connection = conn, account = %me, commands = menu.commands.len(), "menu stored");
    state.menus.insert(me.to_owned(), menu);
    state.send(conn, op, &CodeReply::default());
    Ok(())
}

/// The channel, if it exists and `me` is a member.
fn member_channel<'a>(
    state: &'a mut State,
    channel_id: &str,
    me: &str,
) -> Result<&'a mut crate::state::Channel, Refusal> {
    state
        .channels
        .get_mut(channel_id)
        .filter(|c| c.members.iter().any(|m| m == me))
        .ok_or_else(|| Refusal::new(ReplyCode::UnknownChannel, "unknown channel or not a member"))
}

fn send(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::Send;
    let request: SendRequest = decode(op.code(), d)?;
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
        .last()
        .map_or(0, |m| m.created_at)
        .max(now_millis());
    let message = WireMessage {
        id: Uuid::new_v4().hyphenated().to_string(),
        channel_id: request.channel_id.clone(),
        author_id: me.to_owned(),
        content: request.content,
        command: request.command,
        reply_to: request.reply_to,
        created_at,
    };
    channel.messages.push(message.clone());
    let members = channel.members.clone();
    state.send(
        conn,
        op,
        &SendReply {
            code: 0,
            message_id: Some(message.id.clone()),
            reason: None,
        },
    );
    let push = MessageCreate { message };
    for member in &members {
        state.push(member, OpCode::MessageCreate, &push);
    }
    if let Some(author) = replied_author.filter(|author| author != me) {
        let notification = Notification {
            kind: "reply".into(),
            channel_id: push.message.channel_id.clone(),
            message_id: push.message.id.clone(),
            from: me.to_owned(),
        };
        // A reply notification pierces mutes: it goes out whatever the
        // recipient's settings (the dev service has no mutes to consult).
        let delivered = state.push(&author, OpCode::Notification, &notification);
        state.notifications.push(NotificationRecord {
            account_id: author,
            notification,
            delivered,
        });
    }
    Ok(())
}

fn history(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::HistoryFetch;
    let request: HistoryRequest = decode(op.code(), d)?;
    let limit = request
        .limit
        .map_or(DEFAULT_HISTORY, |l| {
            usize::try_from(l).unwrap_or(MAX_HISTORY)
        })
        .min(MAX_HISTORY);
    let channel = member_channel(state, &request.channel_id, me)?;
    let skip = channel.messages.len().saturating_sub(limit);
    let messages = channel.messages[skip..].to_vec();
    state.send(conn, op, &HistoryReply { code: 0, messages });
    Ok(())
}

fn key_share(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::KeyShare;
    let request: KeyShare = decode(op.code(), d)?;
    let channel = member_channel(state, &request.channel_id, me)?;
    if !channel.members.contains(&request.to) {
        return Err(Refusal::new(
            ReplyCode::UnknownChannel,
            "the recipient is not a member of the channel",
        ));
    }
    let push = ChannelKeyPush {
        channel_id: request.channel_id,
        from: me.to_owned(),
        wrapped: request.wrapped,
    };
    state.send(conn, op, &CodeReply::default());
    if !state.push(&request.to, OpCode::ChannelKey, &push) {
        state.pending_keys.entry(request.to).or_default().push(push);
    }
    Ok(())
}

fn public_key(state: &mut State, conn: u64, d: &RawValue) -> Handled {
    let op = OpCode::PublicKeyFetch;
    let request: PublicKeyRequest = decode(op.code(), d)?;
    let account = state
        .accounts
        .get(&request.user_id)
        .ok_or_else(|| Refusal::new(ReplyCode::BadRequest, "unknown account"))?;
    let reply = PublicKeyReply {
        code: 0,
        public_key: account.public_key.clone(),
    };
    state.send(conn, op, &reply);
    Ok(())
}

fn join(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::ChannelJoin;
    let request: JoinRequest = decode(op.code(), d)?;
    if state.accounts.get(me).map(|a| a.kind) != Some(AccountKind::User) {
        return Err(Refusal::new(
            ReplyCode::NoPermission,
            "bots are added to channels by the service's admins",
        ));
    }
    let channel = state
        .channels
        .get_mut(&request.channel_id)
        .ok_or_else(|| Refusal::new(ReplyCode::UnknownChannel, "unknown channel"))?;
    if !channel.members.iter().any(|m| m == me) {
        channel.members.push(me.to_owned());
    }
    state.send(conn, op, &CodeReply::default());
    Ok(())
}

fn members(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::ChannelMembers;
    let request: MembersRequest = decode(op.code(), d)?;
    let members = member_channel(state, &request.channel_id, me)?
        .members
        .clone();
    state.send(conn, op, &MembersReply { code: 0, members });
    Ok(())
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
