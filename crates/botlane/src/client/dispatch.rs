//! The dispatch rule for inbound messages (spec: "Dispatch rule for inbound
//! messages"), and running handlers.
//!
//! 1. The bot's own messages are delivered as messages, never as commands.
//! 2. A sidecar is decrypted and decoded *without* a registry. A well-formed
//!    payload addressed to another bot (compared in canonical form) drops the
//!    invocation, with no text fallback. One addressed to us is the
//!    invocation: structured wins over the text line.
//! 3. A sidecar that does not decrypt or decode is malformed: the text lane
//!    decides, as if there were no sidecar.

use std::any::Any;
use std::sync::Arc;

use super::connection::Push;
use super::event::HandlerPanic;
use super::{channels, lock, CommandError, CommandErrorReason, Event, Shared};
use crate::commands::{
    canonical_bot_id, decode_command_data, ArgsError, CommandContext, CommandInvocation,
    CommandLookup, CommandSource, ParseError, TextParseResult,
};
use crate::message::Message;
use crate::wire;

/// Takes pushes off the push queue in wire order until it is closed.
pub(super) async fn run(shared: Arc<Shared>) {
    while let Some(push) = shared.queue.next().await {
        match push {
            Push::Message(m) => on_message(&shared, &m).await,
            Push::Ready(ready) => channels::on_ready(&shared, ready),
            Push::ChannelAdded(channel) => channels::on_added(&shared, channel),
            Push::ChannelRemoved(id) => channels::on_removed(&shared, &id),
            Push::ChannelKey(key) => channels::on_channel_key(&shared, &key),
            Push::Notification => {}
        }
    }
}

/// What the dispatch rule decided for one message.
enum Verdict {
    Plain,
    Invoke(CommandInvocation),
    ParseFailed { name: String, error: ParseError },
    ArgumentsRejected { name: String },
}

async fn on_message(shared: &Arc<Shared>, wire_message: &wire::WireMessage) {
    let Some(mut message) = shared.open_message(wire_message) else {
        return;
    };
    let me = super::read(&shared.bot_id).unwrap_or_default();
    let verdict = if canonical_bot_id(&message.author_id) == canonical_bot_id(&me) {
        Verdict::Plain
    } else {
        decide(shared, &me, &message, wire_message.command.as_deref())
    };
    match verdict {
        Verdict::Plain => emit(shared, Event::Message(message)),
        Verdict::Invoke(invocation) => {
            message.command = Some(invocation.clone());
            emit(shared, Event::Message(message.clone()));
            run_handler(shared, invocation, message).await;
        }
        Verdict::ParseFailed { name, error } => {
            emit(shared, Event::Message(message.clone()));
            emit_command_error(
                shared,
                CommandErrorReason::Parse,
                name,
                None,
                message,
                Some(error),
                None,
            );
        }
        Verdict::ArgumentsRejected { name } => {
            emit(shared, Event::Message(message.clone()));
            emit_command_error(
                shared,
                CommandErrorReason::Arguments,
                name,
                None,
                message,
                None,
                None,
            );
        }
    }
}

fn decide(shared: &Shared, me: &str, message: &Message, sidecar: Option<&str>) -> Verdict {
    let structured = sidecar.and_then(|sealed| {
        let key = shared.channel_key(&message.channel_id).ok()?;
        let json = key.open(sealed, message.channel_id.as_bytes()).ok()?;
        decode_command_data(std::str::from_utf8(&json).ok()?, None)
    });
    let registry = lock(&shared.registry);
    if let Some(data) = structured {
        if canonical_bot_id(&data.bot_id) != canonical_bot_id(me) {
            tracing::debug!("dropping a structured invocation addressed to another bot");
            return Verdict::Plain;
        }
        if registry.get(&data.name).is_none() {
            tracing::debug!(command = %data.name, "ignoring a structured invocation of an unregistered command");
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
    match registry.parse_from_text(&message.content, Some(&shared.options.command_prefix)) {
        TextParseResult::Ok(invocation) => Verdict::Invoke(invocation),
        TextParseResult::Error { name, error } => Verdict::ParseFailed { name, error },
        _ => Verdict::Plain,
    }
}

fn emit(shared: &Shared, event: Event) {
    // No subscriber is not an error: events are for whoever listens.
    let _ = shared.events.send(event);
}

fn emit_command_error(
    shared: &Shared,
    reason: CommandErrorReason,
    command: String,
    invocation: Option<CommandInvocation>,
    message: Message,
    parse_error: Option<ParseError>,
    error: Option<crate::commands::BoxError>,
) {
    emit(
        shared,
        Event::CommandError(CommandError {
            reason,
            command,
            invocation,
            message,
            parse_error,
            error: error.map(Arc::new),
        }),
    );
}

/// Runs the handler on its own task once one of `max_concurrent_handlers`
/// permits is free (dispatch waits for it, in arrival order); an `Err` or a
/// panic becomes `commandError` with reason `handler`.
async fn run_handler(shared: &Arc<Shared>, invocation: CommandInvocation, message: Message) {
    let Some(handler) = lock(&shared.registry)
        .get(&invocation.name)
        .map(|c| c.handler.clone())
    else {
        return;
    };
    let Ok(permit) = shared.handlers.clone().acquire_owned().await else {
        // The semaphore is never closed; without a permit nothing runs.
        return;
    };
    let ctx = CommandContext::new(invocation.clone(), message.clone());
    let task = tokio::spawn(handler.call(ctx));
    let shared = shared.clone();
    tokio::spawn(async move {
        let outcome = task.await;
        drop(permit);
        let error: crate::commands::BoxError = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(join) => match join.try_into_panic() {
                Ok(payload) => Box::new(HandlerPanic(panic_text(payload.as_ref()))),
                Err(_) => return,
            },
        };
        // A typed command whose arguments fit the declaration but not the
        // Rust type (300 for a `u8`) is the user's mistake, not the handler's.
        let reason = if error.is::<ArgsError>() {
            CommandErrorReason::Arguments
        } else {
            CommandErrorReason::Handler
        };
        let name = invocation.name.clone();
        emit_command_error(
            &shared,
            reason,
            name,
            Some(invocation),
            message,
            None,
            Some(error),
        );
    });
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
