//! The opcodes of the realtime wire.

/// The opcodes, one row each: the variant, its number and whether the
/// service sends it unprompted (`push`) or answers it (`request`). The enum,
/// [`OpCode::from`] and [`OpCode::is_push`] are all made from this one
/// table, so a new opcode is one row here; then the compiler and the tests
/// name the rest (docs/architecture.md, "Adding a push").
macro_rules! opcodes {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal, $kind:ident;)*) => {
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
            $($(#[doc = $doc])* $variant = $code,)*
        }

        impl OpCode {
            /// The opcode with this number, if there is one.
            pub const fn from(code: u16) -> Option<Self> {
                match code {
                    $($code => Some(Self::$variant),)*
                    _ => None,
                }
            }

            /// The number on the wire.
            pub const fn code(self) -> u16 {
                self as u16
            }

            /// Whether the service sends this opcode unprompted (never as a reply).
            pub const fn is_push(self) -> bool {
                match self {
                    $(Self::$variant => opcodes!(@push $kind),)*
                }
            }
        }
    };
    (@push push) => { true };
    (@push request) => { false };
}

opcodes! {
    /// Request: present a token (once per login) and the identity public key.
    Login = 10, request;
    /// Push: the session is ready; who we are and which channels we are in.
    Ready = 11, push;
    /// Request: keep the session alive.
    Heartbeat = 12, request;
    /// Request: publish the canonical command menu.
    MenuPublish = 20, request;
    /// Request: post a message (or a reply) into a channel. A denial is a reply with a negative code.
    Send = 30, request;
    /// Push: a message was posted in a channel we are a member of.
    MessageCreate = 32, push;
    /// Push: a notification for this user, such as "someone replied to you".
    Notification = 33, push;
    /// Push: this account was added to a channel.
    ChannelAdded = 34, push;
    /// Push: this account was removed from a channel.
    ChannelRemoved = 35, push;
    /// Request: fetch a channel's history.
    HistoryFetch = 40, request;
    /// Push: a channel key wrapped to our identity key.
    ChannelKey = 50, push;
    /// Request: hand a wrapped channel key to another member.
    KeyShare = 51, request;
    /// Request: look up a member's identity public key.
    PublicKeyFetch = 52, request;
    /// Request: join a channel (human users).
    ChannelJoin = 60, request;
    /// Request: list a channel's members (to know whom to share its key with).
    ChannelMembers = 61, request;
    /// Request: the static unicode emoji catalog.
    FetchEmojis = 240, request;
    /// Request: mint a one-time secret for the REST lane.
    RestMint = 638, request;
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

    /// Every opcode with whether it is a push, in order.
    fn table() -> Vec<(u16, bool)> {
        (0..=u16::MAX)
            .filter_map(OpCode::from)
            .map(|op| (op.code(), op.is_push()))
            .collect()
    }

    /// docs/protocol.md's table of opcodes and its two lists of the push
    /// opcodes are this table: an opcode added here without its row there
    /// (or there without its row here) fails.
    #[test]
    fn protocol_md_lists_every_opcode() {
        let doc = include_str!("../../../docs/protocol.md");
        let section = doc
            .split("\n## Opcodes\n")
            .nth(1)
            .expect("protocol.md has a section \"Opcodes\"");
        let rows: Vec<(u16, bool)> = section
            .lines()
            .skip_while(|line| !line.starts_with("| op |"))
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let code = cells[1]
                    .parse()
                    .unwrap_or_else(|_| panic!("not an opcode number: {line}"));
                (code, cells[3] == "push")
            })
            .collect();
        assert_eq!(rows, table(), "protocol.md's table of opcodes (op, push?)");
        let pushes: Vec<String> = table()
            .into_iter()
            .filter(|(_, push)| *push)
            .map(|(code, _)| code.to_string())
            .collect();
        let list = format!("({})", pushes.join(", "));
        assert_eq!(
            doc.matches(&list).count(),
            2,
            "protocol.md names the push opcodes {list} under \"Requests, replies and pushes\" and \"Bad input\""
        );
    }

    #[test]
    fn membership_pushes_are_pushes() {
        assert_eq!(OpCode::from(34), Some(OpCode::ChannelAdded));
        assert_eq!(OpCode::from(35), Some(OpCode::ChannelRemoved));
        assert!(OpCode::ChannelAdded.is_push() && OpCode::ChannelRemoved.is_push());
        assert!(!OpCode::Heartbeat.is_push());
    }
}
