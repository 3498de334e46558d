//! The command registry: declarations and their handlers.

use super::handler::CommandHandler;
use super::types::{CommandArgs, CommandDeclaration};

/// Something that can tell whether an invocation fits a set of declarations.
pub trait CommandLookup {
    /// True when `name` is registered, every arg key is a declared option,
    /// every value fits its type and choices, and every required option is present.
    fn accepts(&self, name: &str, args: &CommandArgs) -> bool;

    /// Coerces structured-lane `args` to the declared types; `None` when they
    /// do not fit. The default accepts the args unchanged when [`accepts`](Self::accepts) does.
    fn coerce(&self, name: &str, args: CommandArgs) -> Option<CommandArgs> {
        self.accepts(name, &args).then_some(args)
    }
}

/// A declaration with its handler.
#[derive(Debug, Clone)]
pub struct RegisteredCommand {
    /// The declaration.
    pub decl: CommandDeclaration,
    /// The handler.
    pub handler: CommandHandler,
}

/// SKELETON
#[derive(Debug, Default)]
pub struct CommandRegistry {
    commands: Vec<RegisteredCommand>,
}
