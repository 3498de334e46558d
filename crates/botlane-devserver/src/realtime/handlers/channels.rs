//! Joining a channel (op 60) and listing its members (op 61).

use botlane_proto::payload::{AccountKind, CodeReply, JoinRequest, MembersReply, MembersRequest};
use botlane_proto::{OpCode, ReplyCode};
use serde_json::value::RawValue;

use super::{decode, Handled, Refusal};
use crate::state::{Channel, State};

/// The channel, if it exists and `me` is a member.
pub(crate) fn member_channel<'a>(
    state: &'a mut State,
    channel_id: &str,
    me: &str,
) -> Result<&'a mut Channel, Refusal> {
    state
        .channel_mut(channel_id)
        .filter(|c| c.members.iter().any(|m| m == me))
        .ok_or_else(|| Refusal::new(ReplyCode::UnknownChannel, "unknown channel or not a member"))
}

pub(crate) fn join(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::ChannelJoin;
    let request: JoinRequest = decode(d)?;
    if state.account(me).map(|a| a.kind) != Some(AccountKind::User) {
        return Err(Refusal::new(
            ReplyCode::NoPermission,
            "bots are added to channels by the service's admins",
        ));
    }
    if state.channel(&request.channel_id).is_none() {
        return Err(Refusal::new(ReplyCode::UnknownChannel, "unknown channel"));
    }
    state.send(conn, op, &CodeReply::default());
    // Then `channel_added` to each of the account's connections, unless it
    // was a member already. Both exist: this cannot fail.
    let _ = state.add_member(&request.channel_id, me);
    Ok(())
}

pub(crate) fn members(state: &mut State, conn: u64, me: &str, d: &RawValue) -> Handled {
    let op = OpCode::ChannelMembers;
    let request: MembersRequest = decode(d)?;
    let members = member_channel(state, &request.channel_id, me)?
        .members
        .clone();
    state.send(conn, op, &MembersReply::new(0).with_members(members));
    Ok(())
}
