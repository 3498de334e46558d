//! The dispatch rule for inbound messages (spec: "Dispatch rule for inbound
//! messages"), over one registry snapshot, and the argument step that
//! follows the lane decision.
//!
//! 1. The bot's own messages are delivered as messages, never as commands
//!    (checked by the caller).
//! 2. A sidecar is decrypted and decoded *without* a registry. A well-formed
//!    payload addressed to another bot (compared in canonical form) drops the
//!    invocation, with no text fallback. One addressed to us is the
//!    invocation: structured wins over the text line, even when its
//!    arguments then fail the checks below (they are well-formed). One
//!    naming an unregistered command, or one of a command's aliases (the
//!    menu never offers them), is ignored, also without a text fallback.
//! 3. A sidecar that does not decrypt or decode is malformed: the text lane
//!    decides, as if there were no sidecar.
//!
//! Then the arguments, on the lane chosen: the structured lane's
//! [`check_invocation`](crate::CommandDeclaration::check_invocation)
//! (coercion, choices, required options, bounds); the text lane's parse,
//! then [`check_bounds`](crate::CommandDeclaration::check_bounds); and for
//! a typed command, its conversion. A failure is one [`ArgumentError`] with
//! the usage line; a conversion that panics is caught here.

use crate::commands::argument_error::ArgumentError;
use crate::commands::data::decode_command_data;
use crate::commands::text::error::ParseError;
use crate::commands::text::format::usage_line;
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::text::TextParseResult;
use crate::commands::types::{same_bot_id, CommandInvocation, CommandSource};
use crate::framework::registered::RegisteredCommand;
use crate::framework::registry::CommandRegistry;

use super::handlers::panic_text;
use super::spare_name;

/// What the dispatch rule decided for one message.
pub(super) enum Verdict {
    Plain,
    /// An invocation of the command at this position of the registry.
    Invoke(CommandInvocation, usize),
    ParseFailed {
        name: String,
        error: ParseError,
    },
    ArgumentsRejected {
        name: String,
        source: CommandSource,
        /// The invocation, when the text lane parsed it.
        invocation: Option<CommandInvocation>,
        error: ArgumentError,
    },
    /// A typed command's conversion (the application's `Command::from_args`)
    /// panicked; the text of the panic.
    ConversionPanicked {
        invocation: CommandInvocation,
        panic: String,
    },
}

/// Decides for a message from someone else, with its opened `content`;
/// `sidecar` is the decrypted sidecar, when there was one and it decrypted.
/// The text line is read under the prefix it uses; usage lines are written
/// with the main one.
pub(super) fn decide<D>(
    registry: &CommandRegistry<D>,
    me: &str,
    content: &str,
    sidecar: Option<&[u8]>,
    prefixes: PrefixSet<'_>,
) -> Verdict {
    let prefix = prefixes.main;
    let structured = sidecar
        .and_then(|json| std::str::from_utf8(json).ok())
        .and_then(|json| decode_command_data(json, None));
    if let Some(data) = structured {
        if !same_bot_id(&data.bot_id, me) {
            tracing::debug!("dropping a structured invocation addressed to another bot");
            return Verdict::Plain;
        }
        // `get`, not `find_command`: the menu never offers an alias, so a
        // sidecar naming one is no invocation of the menu's.
        let Some(index) = registry.position(&data.name) else {
            tracing::debug!("ignoring a structured invocation of an unregistered command");
            return Verdict::Plain;
        };
        let command = registry.at(index);
        return match command.decl.check_invocation(data.args, Some(prefix)) {
            Ok(args) => convert(
                command,
                index,
                CommandInvocation {
                    name: data.name,
                    args,
                    source: CommandSource::Structured,
                },
                prefix,
            ),
            Err(error) => Verdict::ArgumentsRejected {
                name: data.name,
                source: CommandSource::Structured,
                invocation: None,
                error,
            },
        };
    }
    match registry.parse_among(content, prefixes, spare_name) {
        // The parse found the command it names at `index`.
        (TextParseResult::Ok(invocation), Some(index)) => {
            let command = registry.at(index);
            match command.decl.check_bounds(&invocation.args, Some(prefix)) {
                Ok(()) => convert(command, index, invocation, prefix),
                Err(error) => Verdict::ArgumentsRejected {
                    name: invocation.name.clone(),
                    source: CommandSource::Text,
                    invocation: Some(invocation),
                    error,
                },
            }
        }
        (TextParseResult::Error { name, error }, _) => Verdict::ParseFailed { name, error },
        _ => Verdict::Plain,
    }
}

/// The last argument step: a typed command's conversion (`command` is at
/// `index` of the registry).
fn convert<D>(
    command: &RegisteredCommand<D>,
    index: usize,
    invocation: CommandInvocation,
    prefix: &str,
) -> Verdict {
    let Some(convert) = command.convert else {
        return Verdict::Invoke(invocation, index);
    };
    // The conversion is the application's code when `Command` is written by
    // hand: a panic in it must take down neither dispatch nor the
    // connection task that may be running it.
    let converted = std::panic::catch_unwind(|| convert(&invocation.args));
    match converted {
        Ok(Ok(())) => Verdict::Invoke(invocation, index),
        Err(payload) => Verdict::ConversionPanicked {
            invocation,
            panic: panic_text(payload.as_ref()),
        },
        Ok(Err(error)) => Verdict::ArgumentsRejected {
            name: invocation.name.clone(),
            source: invocation.source,
            error: error.with_usage(usage_line(&command.decl, Some(prefix))),
            invocation: Some(invocation),
        },
    }
}
