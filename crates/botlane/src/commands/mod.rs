//! The command area: declarations, validation, the canonical menu, the text
//! lane, the structured sidecar codec and the registry.
//!
//! Everything here is re-exported from the crate root.

pub(crate) mod coerce;
mod context;
mod data;
mod handler;
pub(crate) mod limits;
mod menu;
mod registry;
mod text;
mod typed;
mod types;
mod validate;

pub use context::*;
pub use data::*;
pub use handler::*;
pub use limits::{
    COMMAND_DATA_VERSION, DEFAULT_COMMAND_PREFIX, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN,
    MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT, MAX_COMMAND_DESC, MAX_COMMAND_WIRE,
    MAX_OPTIONS_PER_COMMAND,
};
pub use menu::*;
pub use registry::*;
pub use text::*;
pub use typed::*;
pub use types::*;
pub use validate::*;
