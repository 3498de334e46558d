//! botlane: bots for an end-to-end-encrypted chat service.
#![deny(missing_docs)]

pub mod commands;
pub mod crypto;
pub mod keystore;
mod message;
pub mod wire;

#[doc(hidden)]
pub mod fuzzing;

pub use commands::*;
pub use message::Message;
