//! The reply codes: the `code` every reply payload carries.

/// The `code` of a reply: `0` for success, a negative number for a refusal.
///
/// ```
/// use botlane_proto::ReplyCode;
/// assert_eq!(ReplyCode::from_code(-7), Some(ReplyCode::FlagOff));
/// assert_eq!(ReplyCode::RateLimited.code(), -9);
/// assert_eq!(ReplyCode::from_code(-10), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplyCode {
    /// Done.
    Ok,
    /// The session is not a bot session.
    NotBot,
    /// The service failed.
    ServerError,
    /// The account may not do this (for a send: no permission to post).
    NoPermission,
    /// The channel does not exist or the account is not a member.
    UnknownChannel,
    /// The request was malformed.
    BadRequest,
    /// Not logged in, or the token is unknown.
    Unauthorized,
    /// The feature is switched off on the service (REST lane: `BOT_REST_CREDENTIALS` unset).
    FlagOff,
    /// The payload is too large.
    TooLarge,
    /// Rate limited.
    RateLimited,
}

impl ReplyCode {
    /// The number on the wire.
    pub const fn code(self) -> i32 {
        match self {
            Self::Ok => 0,
            Self::NotBot => -1,
            Self::ServerError => -2,
            Self::NoPermission => -3,
            Self::UnknownChannel => -4,
            Self::BadRequest => -5,
            Self::Unauthorized => -6,
            Self::FlagOff => -7,
            Self::TooLarge => -8,
            Self::RateLimited => -9,
        }
    }

    /// The reply code with this number, if known.
    pub const fn from_code(code: i32) -> Option<Self> {
        Some(match code {
            0 => Self::Ok,
            -1 => Self::NotBot,
            -2 => Self::ServerError,
            -3 => Self::NoPermission,
            -4 => Self::UnknownChannel,
            -5 => Self::BadRequest,
            -6 => Self::Unauthorized,
            -7 => Self::FlagOff,
            -8 => Self::TooLarge,
            -9 => Self::RateLimited,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        let mut known = 0;
        for code in -20..=20 {
            if let Some(reply) = ReplyCode::from_code(code) {
                assert_eq!(reply.code(), code);
                known += 1;
            }
        }
        assert_eq!(known, 10, "0 and -1..=-9");
    }
}
