//! botlane: bots for an end-to-end-encrypted chat service.
#![deny(missing_docs)]

mod client;
pub mod commands;
pub mod crypto;
pub mod keystore;
mod message;
pub mod rest;
pub mod wire;

#[doc(hidden)]
pub mod fuzzing;

pub use client::{
    Client, ClientError, ClientOptions, CommandError, CommandErrorReason, Commands, Event,
    SendRejected, DEFAULT_REST_URL,
};
pub use commands::*;
pub use message::{Channel, Message};
pub use rest::{
    BinaryResponse, RequestInit, RestError, RestLane, ServiceActionError, ServiceRestError,
};
