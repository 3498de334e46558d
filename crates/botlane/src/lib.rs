//! botlane: bots for an end-to-end-encrypted chat service.
#![deny(missing_docs)]

pub mod commands;
mod message;

#[doc(hidden)]
pub mod fuzzing;

pub use commands::*;
pub use message::Message;
