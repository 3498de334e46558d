//! One registered command: its declaration, handler and settings, and
//! what dispatch keeps of it (a typed command's conversion, its handler's
//! pace, its metric series, its options' parsed choices).

use std::fmt;

use super::handler::CommandHandler;
use super::pace::Pace;
use super::settings::CommandSettings;
use crate::commands::argument_error::ArgumentError;
use crate::commands::coerce::ParsedChoices;
use crate::commands::types::{CommandArgs, CommandDeclaration};
use crate::telemetry::CommandSlot;

/// A declaration with its handler and settings.
#[non_exhaustive]
pub struct RegisteredCommand<D = ()> {
    /// The declaration.
    pub decl: CommandDeclaration,
    /// The handler.
    pub handler: CommandHandler<D>,
    /// Its checks, cooldown, timeout and error hook.
    pub settings: CommandSettings<D>,
    /// For a typed command, its conversion, run with the argument checks
    /// (before the checks and the cooldown) so that arguments that fit the
    /// declaration but not the Rust type never start a cooldown.
    pub(crate) convert: Option<ConvertCheck>,
    /// How its handler has behaved, for dispatch.
    pub(crate) pace: Pace,
    /// Its metric series, resolved by dispatch at its first invocation
    /// (shared by the snapshots that copy it).
    pub(crate) series: CommandSlot,
    /// Its options' integer and number choices, parsed for the text lane's
    /// choice check (empty when it has none).
    pub(crate) choices: Box<[Option<ParsedChoices>]>,
}

/// A typed command's conversion, without its value.
pub(crate) type ConvertCheck = fn(&CommandArgs) -> Result<(), ArgumentError>;

impl<D> Clone for RegisteredCommand<D> {
    fn clone(&self) -> Self {
        Self {
            decl: self.decl.clone(),
            handler: self.handler.clone(),
            settings: self.settings.clone(),
            convert: self.convert,
            pace: self.pace.clone(),
            series: self.series.clone(),
            choices: self.choices.clone(),
        }
    }
}

impl<D> fmt::Debug for RegisteredCommand<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredCommand")
            .field("decl", &self.decl)
            .field("handler", &self.handler)
            .field("settings", &self.settings)
            .field("typed", &self.convert.is_some())
            .finish()
    }
}
