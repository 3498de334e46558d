//! The dispatch rule for inbound messages (spec: "Dispatch rule for inbound
//! messages"), over one registry snapshot.
//!
//! 1. The bot's own messages are delivered as messages, never as commands
//!    (checked by the caller).
//! 2. A sidecar is decrypted and decoded *without* a registry. A well-formed
//!    payload addressed to another bot (compared in canonical form) drops the
//!    invocation, with no text fallback. One addressed to us is the
//!    invocation: structured wins over the text line.
//! 3. A sidecar that does not decrypt or decode is malformed: the text lane
//!    decides, as if there were no sidecar.

use crate::commands::{
    canonical_bot_id, decode_command_data, CommandInvocation, CommandLookup, CommandRegistry,
    CommandSource, Message, ParseError, TextParseResult,
};

/// What the dispatch rule decided for one message.
pub(super) enum Verdict {
    Plain,
    Invoke(CommandInvocation),
    ParseFailed { name: String, error: ParseError },
    ArgumentsRejected { name: String },
}

/// Decides for a message from someone else; `sidecar` is the decrypted
/// sidecar, when there was one and it decrypted.
pub(super) fn decide(
    registry: &CommandRegistry,
    me: &str,
    message: &Message,
    sidecar: Option<&[u8]>,
    prefix: &str,
) -> Verdict {
    let structured = sidecar
        .and_then(|json| std::str::from_utf8(json).ok())
        .and_then(|json| decode_command_data(json, None));
    if let Some(data) = structured {
        if canonical_bot_id(&data.bot_id) != canonical_bot_id(me) {
            tracing::debug!("dropping a structured invocation addressed to another bot");
            return Verdict::Plain;
        }
        if registry.get(&data.name).is_none() {
            tracing::debug!("ignoring a structured invocation of an unregistered command");
            return Verdict::Plain;
        }
        return match registry.coerce(&data.name, data.args) {
            Some(args) => Verdict::Invoke(CommandInvocation {
                name: data.name,
                args,
                source: CommandSource::Structured,
            }),
            None => Verdict::ArgumentsRejected { name: data.name },
        };
    }
    match registry.parse_from_text(&message.content, Some(prefix)) {
        TextParseResult::Ok(invocation) => Verdict::Invoke(invocation),
        TextParseResult::Error { name, error } => Verdict::ParseFailed { name, error },
        _ => Verdict::Plain,
    }
}
