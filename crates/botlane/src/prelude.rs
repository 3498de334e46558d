//! The names a common bot uses, for `use botlane::prelude::*;`: the client,
//! declarations, typed commands and their derives, the context, events,
//! and the framework's settings, checks, cooldowns and error answers. Each
//! is also at its own path (the crate root or [`framework`](crate::framework)),
//! the one other way to reach it.

#[cfg(feature = "macros")]
pub use crate::framework::command;
pub use crate::framework::{Check, CommandSettings, Cooldown, OnError, UserError};
pub use crate::{
    Client, ClientError, ClientOptions, Command, CommandChoice, CommandContext, CommandDeclaration,
    CommandOption, CommandOptionType, CommandRegistry, Event,
};
