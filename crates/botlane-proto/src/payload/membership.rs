//! Membership: the channel list entry, the pushes 34 `channel_added` and
//! 35 `channel_removed`, and the requests 60 `channel_join` and 61
//! `channel_members`.

use serde::{Deserialize, Serialize};

/// A channel as listed in [`Ready`](super::Ready) and [`ChannelAdded`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChannelInfo {
    /// The channel id.
    pub id: String,
    /// The server (room) it belongs to.
    pub server_id: String,
    /// The channel's name.
    pub name: String,
}

impl ChannelInfo {
    /// The channel `id` of the server `server_id`, called `name`.
    pub fn new(
        id: impl Into<String>,
        server_id: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            server_id: server_id.into(),
            name: name.into(),
        }
    }
}

/// Opcode 34 push: this account was added to a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChannelAdded {
    /// The channel, as [`Ready`](super::Ready) lists it.
    pub channel: ChannelInfo,
}

impl ChannelAdded {
    /// Added to `channel`.
    pub fn new(channel: ChannelInfo) -> Self {
        Self { channel }
    }
}

/// Opcode 35 push: this account was removed from a channel. The client
/// forgets the channel's key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChannelRemoved {
    /// The channel.
    pub channel_id: String,
}

impl ChannelRemoved {
    /// Removed from `channel_id`.
    pub fn new(channel_id: impl Into<String>) -> Self {
        Self {
            channel_id: channel_id.into(),
        }
    }
}

/// Opcode 60 request: join a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JoinRequest {
    /// The channel.
    pub channel_id: String,
}

impl JoinRequest {
    /// Join `channel_id`.
    pub fn new(channel_id: impl Into<String>) -> Self {
        Self {
            channel_id: channel_id.into(),
        }
    }
}

/// Opcode 61 request: a channel's members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MembersRequest {
    /// The channel; the requester must be a member.
    pub channel_id: String,
}

impl MembersRequest {
    /// The members of `channel_id`.
    pub fn new(channel_id: impl Into<String>) -> Self {
        Self {
            channel_id: channel_id.into(),
        }
    }
}

/// Opcode 61 reply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MembersReply {
    /// `0` on success.
    pub code: i32,
    /// The members' ids, in the order they joined.
    #[serde(default)]
    pub members: Vec<String>,
}

impl MembersReply {
    /// A reply with `code` and no member.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            members: Vec::new(),
        }
    }

    /// With the members' ids.
    #[must_use]
    pub fn with_members(mut self, members: Vec<String>) -> Self {
        self.members = members;
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{encode_frame, OpCode};

    #[test]
    fn membership_payloads() {
        let added: ChannelAdded =
            serde_json::from_str(r#"{"channel":{"id":"c1","server_id":"s1","name":"general"}}"#)
                .unwrap();
        assert_eq!(added.channel.id, "c1");
        let removed: ChannelRemoved = serde_json::from_str(r#"{"channel_id":"c1"}"#).unwrap();
        assert_eq!(removed.channel_id, "c1");
        assert_eq!(
            encode_frame(OpCode::ChannelRemoved, &removed),
            r#"{"op":35,"d":{"channel_id":"c1"}}"#
        );
    }
}
