//! Channel keys handed between members (op 51, pushed as op 50, kept for
//! offline members) and identity public keys (op 52).

use botlane_proto::payload::{
    ChannelKeyPush, CodeReply, KeyShare, PublicKeyReply, PublicKeyRequest,
};
use botlane_proto::{OpCode, ReplyCode};
use serde_json::value::RawValue;

use super::channels::member_channel;
use super::{decode, Handled, Refusal};
use crate::state::State;

pub(crate) fn key_share(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::KeyShare;
    let request: KeyShare = decode(d)?;
    let channel = member_channel(state, &request.channel_id, me)?;
    if !channel.members.contains(&request.to) {
        return Err(Refusal::new(
            ReplyCode::UnknownChannel,
            "the recipient is not a member of the channel",
        ));
    }
    let push = ChannelKeyPush::new(request.channel_id, me, request.wrapped);
    state.send(conn, op, &CodeReply::default());
    if !state.push(&request.to, OpCode::ChannelKey, &push) {
        state.hold_key(request.to, push);
    }
    Ok(())
}

pub(crate) fn public_key(state: &mut State, conn: u64, d: &RawValue) -> Handled {
    let op = OpCode::PublicKeyFetch;
    let request: PublicKeyRequest = decode(d)?;
    let account = state
        .account(&request.user_id)
        .ok_or_else(|| Refusal::new(ReplyCode::BadRequest, "unknown account"))?;
    let mut reply = PublicKeyReply::new(0);
    reply.public_key.clone_from(&account.public_key);
    state.send(conn, op, &reply);
    Ok(())
}
