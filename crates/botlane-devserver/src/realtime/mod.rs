//! The realtime wire: the `/ws` listener, its connections and the handlers
//! of every opcode.

pub(crate) mod connection;
pub(crate) mod dispatch;
pub(crate) mod emoji;
mod handlers;

pub use emoji::EMOJI_CATALOG;
pub use handlers::messages::{DEFAULT_HISTORY, MAX_CONTENT_BYTES, MAX_HISTORY};

/// Largest WebSocket message the service reads; larger ones end the connection.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;
