//! The hard caps of the command area, as the spec's Limits table gives them:
//! defined in `botlane-proto`, so that `botlane-macros` checks derived
//! declarations against the very same constants. The name rule comes from
//! there too (internal by the spec: not exported). Only the text lane's
//! default prefix, a choice of this library rather than a limit, is defined
//! here, and so are the caps on a command's aliases and help text (
//! conveniences of the text lane and the built-in help the spec does not
//! know; the help text's value comes from `botlane-proto`, hidden there, as
//! the derive checks a doc comment against it).

pub(crate) use botlane_proto::limits::MAX_SAFE_INTEGER;
pub use botlane_proto::limits::{
    COMMAND_DATA_VERSION, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_COMMANDS_PAYLOAD,
    MAX_COMMANDS_PER_BOT, MAX_COMMAND_DESC, MAX_COMMAND_WIRE, MAX_OPTIONS_PER_COMMAND,
    MAX_OPTION_LENGTH,
};
pub(crate) use botlane_proto::names::{is_valid_name, MAX_NAME_LEN};

/// The text-lane prefix used when none is given.
pub const DEFAULT_COMMAND_PREFIX: &str = "/";

/// The longest text-lane prefix, in characters
/// ([`ClientOptions::command_prefix`](crate::ClientOptions::command_prefix)):
/// the help repeats it in every usage line and alias, and a prefix of a
/// few kilobytes would take one command's explanation past a message.
pub const MAX_COMMAND_PREFIX_CHARS: usize = 32;

/// The most additional text-lane prefixes a client may read
/// ([`ClientOptions::additional_prefixes`](crate::ClientOptions::additional_prefixes)):
/// a few spellings people type (`!`, `?`), not a list to search; every
/// line of chat is compared with each.
pub const MAX_ADDITIONAL_PREFIXES: usize = 8;

/// The most aliases one command may have
/// ([`CommandSettings::aliases`](crate::framework::CommandSettings::aliases)): a few
/// short names for people who type, not a second menu.
pub const MAX_ALIASES_PER_COMMAND: usize = 10;

/// The most characters a command's help text may have
/// ([`CommandSettings::help_text`](crate::framework::CommandSettings::help_text)):
/// a few paragraphs, as much as a whole Discord message, so that with
/// the rest of the explanation (bounded by the menu's
/// [`MAX_COMMANDS_PAYLOAD`]) it fits in one message of the service
/// (65 536 bytes sealed, about 48 KiB of text) with room to spare.
/// Defined in `botlane-proto`, hidden there, so that `#[derive(Command)]`
/// checks a doc comment's help text against it at compile time.
pub const MAX_HELP_TEXT_CHARS: usize = botlane_proto::limits::MAX_HELP_TEXT_CHARS;
