//! The service's own counters, which `GET /metrics` on the admin listener
//! shows with the pools and the REST counts (`admin/metrics.rs`).

/// Why a connection never got a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The pre-login pool was full of connections it may not evict: `503`.
    PoolFull,
    /// An idle stranger closed to make room in a full pre-login pool.
    Evicted,
    /// No login within the login timeout.
    LoginTimeout,
    /// An unknown or revoked token.
    Unauthorized,
    /// The session pool was full (`-9`).
    SessionsFull,
    /// A public key that is not a usable X25519 key (`-1`).
    BadPublicKey,
}

impl Refused {
    pub(crate) const ALL: [Self; 6] = [
        Self::PoolFull,
        Self::Evicted,
        Self::LoginTimeout,
        Self::Unauthorized,
        Self::SessionsFull,
        Self::BadPublicKey,
    ];

    /// Its label value.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::PoolFull => "pool_full",
            Self::Evicted => "evicted",
            Self::LoginTimeout => "login_timeout",
            Self::Unauthorized => "unauthorized",
            Self::SessionsFull => "sessions_full",
            Self::BadPublicKey => "bad_public_key",
        }
    }
}

/// Counted since the service started.
#[derive(Debug, Default)]
pub(crate) struct Meters {
    /// Text frames read from clients.
    pub(crate) frames_received: u64,
    /// Frames queued to clients.
    pub(crate) frames_sent: u64,
    /// Messages accepted (op 30) and relayed to their channel.
    pub(crate) messages: u64,
    /// Logins that succeeded.
    pub(crate) logins: u64,
    /// By [`Refused::ALL`] order.
    refused: [u64; Refused::ALL.len()],
}

impl Meters {
    pub(crate) fn refuse(&mut self, why: Refused) {
        self.refused[why as usize] += 1;
    }

    pub(crate) fn refused(&self, why: Refused) -> u64 {
        self.refused[why as usize]
    }
}
