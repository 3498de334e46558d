//! The text lane: which command a line invokes, parsing its arguments, and
//! formatting an invocation back into a line (see `docs/text-grammar.md`).

use super::types::{CommandArgs, CommandDeclaration, CommandInvocation};

/// SKELETON: to be designed per text-grammar.md §6.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {}

/// SKELETON: error of `format_invocation_text`.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatError {}

/// The outcome of running the text grammar over a line against a registry.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TextParseResult {
    /// The line invokes no registered command.
    None,
    /// A registered command, with its arguments.
    Ok(CommandInvocation),
    /// A registered command whose arguments did not parse.
    Error {
        /// The lower-case command name.
        name: String,
        /// What went wrong.
        error: ParseError,
    },
}

/// SKELETON
pub fn match_command_name(text: &str, prefix: Option<&str>) -> Option<String> {
    todo!("{text}{prefix:?}")
}

/// SKELETON
pub fn parse_invocation_text(
    decl: &CommandDeclaration,
    text: &str,
    prefix: Option<&str>,
) -> Result<CommandArgs, ParseError> {
    todo!("{decl:?}{text}{prefix:?}")
}

/// SKELETON
pub fn format_invocation_text(
    decl: &CommandDeclaration,
    args: &CommandArgs,
    prefix: Option<&str>,
) -> Result<String, FormatError> {
    todo!("{decl:?}{args:?}{prefix:?}")
}
