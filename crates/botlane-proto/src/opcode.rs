//! The opcodes of the realtime wire.

/// Every opcode the realtime wire knows.
///
/// Requests and their replies share an opcode and are correlated by position:
/// the service answers each opcode's requests in the order it received them.
/// Pushes use opcodes of their own and are never replies. A frame whose opcode
/// is not listed here is ignored.
///
/// ```
/// use botlane_proto::OpCode;
/// assert_eq!(OpCode::from(240), Some(OpCode::FetchEmojis));
/// assert_eq!(OpCode::FetchEmojis.code(), 240);
/// assert_eq!(OpCode::from(9999), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
#[non_exhaustive]
pub enum OpCode {
    /// Request: present a token (once per login) and the identity public key.
    Login = 10,
    /// Push: the session is ready; who we are and which channels we are in.
    Ready = 11,
    /// Request: keep the session alive.
    Heartbeat = 12,
    /// Request: publish the canonical command menu.
    MenuPublish = 20,
    /// Request: post a message (or a reply) into a channel. A denial is a reply with a negative code.
    Send = 30,
    /// Push: a message was posted in a channel we are a member of.
    MessageCreate = 32,
    /// Push: a notification for this user, such as "someone replied to you".
    Notification = 33,
    /// Push: this account was added to a channel.
    ChannelAdded = 34,
    /// Push: this account was removed from a channel.
    ChannelRemoved = 35,
    /// Request: fetch a channel's history.
    HistoryFetch = 40,
    /// Push: a channel key wrapped to our identity key.
    ChannelKey = 50,
    /// Request: hand a wrapped channel key to another member.
    KeyShare = 51,
    /// Request: look up a member's identity public key.
    PublicKeyFetch = 52,
    /// Request: join a channel (human users).
    ChannelJoin = 60,
    /// Request: list a channel's members (to know whom to share its key with).
    ChannelMembers = 61,
    /// Request: the static unicode emoji catalog.
    FetchEmojis = 240,
    /// Request: mint a one-time secret for the REST lane.
    RestMint = 638,
}

impl OpCode {
    /// The opcode with this number, if there is one.
    pub const fn from(code: u16) -> Option<Self> {
        Some(match code {
            10 => Self::Login,
            11 => Self::Ready,
            12 => Self::Heartbeat,
            20 => Self::MenuPublish,
            30 => Self::Send,
            32 => Self::MessageCreate,
            33 => Self::Notification,
            34 => Self::ChannelAdded,
            35 => Self::ChannelRemoved,
            40 => Self::HistoryFetch,
            50 => Self::ChannelKey,
            51 => Self::KeyShare,
            52 => Self::PublicKeyFetch,
            60 => Self::ChannelJoin,
            61 => Self::ChannelMembers,
            240 => Self::FetchEmojis,
            638 => Self::RestMint,
            _ => return None,
        })
    }

    /// The number on the wire.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// Whether the service sends this opcode unprompted (never as a reply).
    pub const fn is_push(self) -> bool {
        matches!(
            self,
            Self::Ready
                | Self::MessageCreate
                | Self::Notification
                | Self::ChannelAdded
                | Self::ChannelRemoved
                | Self::ChannelKey
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_round_trips() {
        for code in 0..=u16::MAX {
            if let Some(op) = OpCode::from(code) {
                assert_eq!(op.code(), code);
            }
        }
        assert_eq!(OpCode::from(638), Some(OpCode::RestMint));
    }

    #[test]
    fn membership_pushes_are_pushes() {
        assert_eq!(OpCode::from(34), Some(OpCode::ChannelAdded));
        assert_eq!(OpCode::from(35), Some(OpCode::ChannelRemoved));
        assert!(OpCode::ChannelAdded.is_push() && OpCode::ChannelRemoved.is_push());
        assert!(!OpCode::Heartbeat.is_push());
    }
}
