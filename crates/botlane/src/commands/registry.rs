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

// SKELETON stubs with the api.md signatures, added by the codec branch only so
// that the fuzz harness compiles before the merge; the registry branch's
// implementation replaces them.
impl CommandRegistry {
    /// SKELETON
    pub fn register(
        &mut self,
        decl: CommandDeclaration,
        handler: CommandHandler,
    ) -> Result<&mut Self, super::validate::DeclarationError> {
        todo!("{decl:?}{handler:?}{:?}", self.commands)
    }

    /// SKELETON
    pub fn parse_from_text(
        &self,
        text: &str,
        prefix: Option<&str>,
    ) -> super::text::TextParseResult {
        todo!("{text}{prefix:?}{:?}", self.commands)
    }
}
