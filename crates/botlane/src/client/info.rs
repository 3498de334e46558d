//! What the client reports about the service, in botlane's own types (the
//! wire's payload structs stay internal, so a change of the wire is never a
//! change of this API).

use crate::wire;

/// A channel the bot is a member of ([`Client::channels`](crate::Client::channels)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ChannelInfo {
    /// The channel id.
    pub id: String,
    /// The server (room) it belongs to.
    pub server_id: String,
    /// The channel's name.
    pub name: String,
}

// Conversions are inherent and crate-private, not `From` impls: a trait
// impl would put the wire's type in the public API.
impl ChannelInfo {
    pub(super) fn from_wire(c: wire::ChannelInfo) -> Self {
        Self {
            id: c.id,
            server_id: c.server_id,
            name: c.name,
        }
    }
}

/// One entry of the static unicode emoji catalog
/// ([`Client::fetch_emojis`](crate::Client::fetch_emojis)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Emoji {
    /// Its short name, such as `thumbs_up`.
    pub name: String,
    /// The emoji itself.
    pub emoji: String,
}

impl Emoji {
    pub(super) fn from_wire(e: wire::Emoji) -> Self {
        Self {
            name: e.name,
            emoji: e.emoji,
        }
    }
}
