//! The realtime transport: opening a WebSocket (`dial.rs`: DNS, TCP, TLS,
//! the bounded upgrade; `tls.rs`: the rustls configuration both lanes
//! share) and running it (`connection.rs`: one task that reads every
//! frame, writes requests and heartbeats, routes each reply to its caller
//! by position within its opcode and hands each push to the session;
//! `frames.rs`: reading a frame and its payload in one pass).
//!
//! Its handle, [`Connection`], is the client's requester:
//! `request(op, payload)` resolves with the reply. The transport names
//! nothing above it: pushes go to an [`Inbound`] that the session
//! implements.

mod connection;
mod dial;
mod frames;
mod pending;
pub(crate) mod tls;

pub(crate) use connection::{Closed, Connection, Ended, Inbound, Push, Settings, CLOSE_GRACE};
pub(crate) use dial::{dial, endpoint};
#[cfg(feature = "fuzzing")]
pub(crate) use frames::read_message;
pub(crate) use frames::MessageView;

use crate::throttle::Throttle;

/// The connection's rate-limited warnings: one set per client, kept across
/// reconnects, so a service that misbehaves again after a reconnect is not
/// logged afresh.
#[derive(Debug)]
pub(crate) struct Warnings {
    malformed_frame: Throttle,
    unknown_opcode: Throttle,
    unexpected_reply: Throttle,
}

impl Warnings {
    pub(crate) const fn new() -> Self {
        Self {
            malformed_frame: Throttle::new("ignoring a malformed or binary frame"),
            unknown_opcode: Throttle::new("ignoring a frame with an unknown opcode"),
            unexpected_reply: Throttle::new("ignoring a reply nobody asked for"),
        }
    }

    /// Each kind, for the client's stats and its line at shutdown.
    pub(crate) fn throttles(&self) -> [&Throttle; 3] {
        [
            &self.malformed_frame,
            &self.unknown_opcode,
            &self.unexpected_reply,
        ]
    }
}
