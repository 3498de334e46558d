//! The realtime transport: opening a WebSocket (`dial.rs`: DNS, TCP, TLS,
//! the bounded upgrade; `tls.rs`: the rustls configuration both lanes
//! share) and running it (`connection.rs`: one task that reads every
//! frame and writes requests and heartbeats; `route.rs`: each reply to its
//! caller by position within its opcode (`pending.rs`), each push to the
//! session; `frames.rs`: reading a frame and its payload in one pass).
//!
//! Its handle, [`Connection`], is the client's requester:
//! `request(op, payload)` resolves with the reply. The transport names
//! nothing above it: pushes go to an [`Inbound`] that the session
//! implements.

mod connection;
mod dial;
mod frames;
mod pending;
mod route;
pub(crate) mod tls;

pub(crate) use connection::{Closed, Connection, Ended, Settings, CLOSE_GRACE};
pub(crate) use dial::{dial, endpoint};
#[cfg(feature = "fuzzing")]
pub(crate) use frames::read_message;
pub(crate) use frames::{MessageView, Push};
pub(crate) use route::{Inbound, Warnings};
