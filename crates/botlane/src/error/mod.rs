//! The client's errors, below every part that returns them: the
//! transport, the session, dispatch, the message handle and the client all
//! name [`ClientError`], and it names none of them.

mod connect;

pub use connect::{ConnectError, ConnectErrorKind};

/// What can go wrong in the client.
///
/// `Display` is complete on its own (what failed and why); `source()` only
/// returns an error whose text `Display` did not already include, so a
/// `{:#}` reporter never prints a reason twice. Messages never contain the
/// token, a credential, a raw frame or a plaintext.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// An option broke its rule.
    #[error("invalid client option `{option}`: {rule}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// The rule it broke.
        rule: String,
    },
    /// The realtime connection could not be opened; the [`ConnectError`]
    /// says where and why.
    #[error(transparent)]
    Connect(ConnectError),
    /// The service refused the token: at login, or on a reconnect, after
    /// which the session has ended for good and every call that needs it
    /// (`wait_until_connected` too) fails with this at once.
    #[error("login refused: the service does not know this bot token (or it was revoked)")]
    LoginRefused,
    /// The call needs a session and there is none (not logged in, shut
    /// down, or reconnecting).
    #[error("not connected to the service")]
    NotConnected,
    /// `login` was called on a client that already logged in, or while
    /// another login of it is under way (which may yet fail): one session
    /// per client. A client shut down before it logged in gets
    /// [`NotConnected`](Self::NotConnected) instead.
    #[error("this client already logged in; a client runs one session")]
    AlreadyLoggedIn,
    /// The connection closed while the request waited for its reply.
    #[error("the connection closed before the reply to opcode {opcode} arrived")]
    ConnectionClosed {
        /// The request's opcode.
        opcode: u16,
    },
    /// The connection ended while logging in, and why is known (the
    /// service's close code and reason, the idle timer…).
    #[error("the connection closed before the reply to opcode {opcode} arrived: {reason}")]
    SessionEnded {
        /// The request's opcode.
        opcode: u16,
        /// Why the connection ended, in words.
        reason: String,
    },
    /// No reply came within the request timeout.
    #[error("no reply to opcode {opcode} within the request timeout")]
    Timeout {
        /// The request's opcode.
        opcode: u16,
    },
    /// The service answered with a payload of the wrong shape.
    #[error("the service sent a malformed reply to opcode {opcode}")]
    MalformedReply {
        /// The request's opcode.
        opcode: u16,
    },
    /// The service refused a request.
    #[error("the service refused opcode {opcode} with code {code}")]
    Refused {
        /// The request's opcode.
        opcode: u16,
        /// The reply code.
        code: i32,
    },
    /// The bot has no key for this channel yet (no member has shared one).
    #[error("no channel key for channel {channel_id}: no member has shared one with this bot")]
    NoChannelKey {
        /// The channel.
        channel_id: String,
    },
    /// Sealing or opening failed; the [`CryptoError`](crate::crypto::CryptoError) says why.
    #[error(transparent)]
    Crypto(crate::crypto::CryptoError),
    /// The keystore could not be opened or written; the
    /// [`KeystoreError`](crate::keystore::KeystoreError) names the file and the reason.
    #[error(transparent)]
    Keystore(crate::keystore::KeystoreError),
    /// The invocation could not be formatted as a text line
    /// ([`Client::send_command`](crate::Client::send_command) checks this
    /// before building any frame); `reason` is the
    /// [`FormatError`](crate::FormatError)'s text, which names the option
    /// and the command. Call
    /// [`format_invocation_text`](crate::format_invocation_text) for the
    /// error as a value.
    #[error("the invocation cannot be formatted as a text line: {reason}")]
    Format {
        /// What does not fit, naming the option and the command.
        reason: String,
    },
    /// The request's frame is over the protocol's limit for one WebSocket
    /// message (`MAX_FRAME_BYTES`), which the service answers by closing
    /// the session with 1009; it was not sent. Only the caller's own input
    /// can make a request that long (a channel id, or a message text of over
    /// about 768 KiB, which sealing and base64 make over 1 MiB).
    #[error("the request of opcode {opcode} is {len} bytes, over the limit of {max} bytes for one message (MAX_FRAME_BYTES); it was not sent")]
    RequestTooLarge {
        /// The request's opcode.
        opcode: u16,
        /// Its frame's length in bytes.
        len: usize,
        /// `MAX_FRAME_BYTES`.
        max: usize,
    },
    /// The encrypted sidecar is over `MAX_COMMAND_WIRE` characters.
    #[error("the encrypted command sidecar is {len} characters, over the limit of {max} (MAX_COMMAND_WIRE)")]
    SidecarTooLarge {
        /// Its length in characters.
        len: usize,
        /// `MAX_COMMAND_WIRE`.
        max: usize,
    },
}
