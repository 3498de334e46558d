//! The command area: declarations, validation, the canonical menu, the text
//! lane, the structured sidecar codec, the registry, and the pure parts of
//! the command framework (argument checks with detail, bounds, checks,
//! cooldowns, owners, help, error answers); and what a handler is given: the [`CommandContext`]
//! and the [`Message`], which answer through an `Outbound` handle the
//! client attaches (`outbound.rs`), never through the client itself.
//!
//! Everything here is re-exported from the crate root.

mod after;
mod aliases;
mod answer;
mod args_check;
mod argument_error;
mod bounds;
mod check;
pub(crate) mod coerce;
mod command_error;
mod context;
mod cooldown;
mod data;
mod excerpt;
mod handler;
mod help;
pub(crate) mod limits;
mod live;
mod menu;
mod message;
mod on_error;
mod option;
mod outbound;
mod owners;
mod pace;
mod registry;
mod settings;
mod text;
mod typed;
mod types;
mod user_error;
mod validate;

pub use after::CommandRan;
pub(crate) use after::{after_command, AfterCommand};
pub use answer::{
    neutralise_answer, neutralise_answer_among, Answered, ANSWER_LIMIT_CAPACITY, ANSWER_MARKER,
    DEFAULT_ANSWER_BURST, DEFAULT_ANSWER_INTERVAL,
};
pub(crate) use answer::{AnswerGate, AnswerRate};
pub use argument_error::*;
pub use check::*;
pub use command_error::{CommandError, CommandErrorReason, HandlerTimeout};
pub use context::*;
pub use cooldown::*;
pub use data::*;
pub use handler::*;
pub use help::*;
pub use limits::{
    COMMAND_DATA_VERSION, DEFAULT_COMMAND_PREFIX, MAX_ADDITIONAL_PREFIXES, MAX_ALIASES_PER_COMMAND,
    MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT,
    MAX_COMMAND_DESC, MAX_COMMAND_PREFIX_CHARS, MAX_COMMAND_WIRE, MAX_HELP_TEXT_CHARS,
    MAX_OPTIONS_PER_COMMAND, MAX_OPTION_LENGTH,
};
pub use live::Commands;
pub(crate) use live::MenuFeed;
pub use menu::*;
pub use message::{Channel, Message};
pub use on_error::{CommandFailure, ErrorHookFuture, OnError};
pub use option::*;
pub(crate) use outbound::Outbound;
pub use owners::NotAnOwner;
pub(crate) use owners::{owner_gate, Owners};
pub use registry::*;
pub use settings::*;
pub use text::*;
pub use typed::*;
pub(crate) use types::same_bot_id;
pub use types::*;
pub use user_error::*;
pub use validate::*;
