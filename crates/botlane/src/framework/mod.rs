//! The command framework, built on the spec's command area: the registry
//! with its handlers and settings, the context a handler is given, typed
//! commands, checks, cooldowns, owners, the built-in help, error answers
//! and the hooks around a command.
//!
//! The names a bot meets first ([`CommandRegistry`](crate::CommandRegistry),
//! [`CommandContext`](crate::CommandContext), [`Command`](crate::Command),
//! [`CommandError`](crate::CommandError), …) are at the crate root, with the
//! spec's; this module holds the rest of the framework, each name at this
//! one path.

pub(crate) mod after;
pub(crate) mod aliases;
pub(crate) mod answer;
pub(crate) mod check;
pub(crate) mod command_error;
pub(crate) mod context;
pub(crate) mod cooldown;
pub(crate) mod dynamic_prefix;
pub(crate) mod function;
pub(crate) mod handler;
pub(crate) mod help;
pub(crate) mod live;
pub(crate) mod on_error;
pub(crate) mod owners;
pub(crate) mod pace;
pub(crate) mod registered;
pub(crate) mod registry;
pub(crate) mod settings;
pub(crate) mod typed;
pub(crate) mod user_error;

pub use crate::commands::argument_error::ArgValueKind;
pub use crate::commands::limits::{
    MAX_ADDITIONAL_PREFIXES, MAX_ALIASES_PER_COMMAND, MAX_COMMAND_PREFIX_CHARS, MAX_HELP_TEXT_CHARS,
};
pub use crate::commands::text::format::usage_line;
pub use crate::commands::types::canonical_bot_id;
pub use crate::commands::validate::HelpTextFault;
pub use after::CommandRan;
pub use answer::{
    neutralise_answer, neutralise_answer_among, Answered, ANSWER_LIMIT_CAPACITY, ANSWER_MARKER,
    DEFAULT_ANSWER_BURST, DEFAULT_ANSWER_INTERVAL,
};
#[cfg(feature = "macros")]
pub use botlane_macros::command;
pub use check::{Check, CheckFuture};
pub use command_error::HandlerTimeout;
pub use cooldown::{
    Clock, Cooldown, CooldownError, CooldownScope, CooldownSubject, CooldownTracker, ManualClock,
    TokioClock, DEFAULT_COOLDOWN_CAPACITY,
};
pub use dynamic_prefix::PrefixRequest;
pub use function::FnCommand;
pub use handler::{HandlerFuture, TypedHandler};
pub use help::{help_declaration, HelpUnavailable};
pub use on_error::{CommandFailure, ErrorHookFuture, OnError};
pub use owners::NotAnOwner;
pub use registry::render_help;
pub use settings::{CommandSettings, DEFAULT_HANDLER_TIMEOUT};
pub use typed::{ChannelId, CommandOptionValue, RoleId, UserId};
pub use user_error::UserError;
