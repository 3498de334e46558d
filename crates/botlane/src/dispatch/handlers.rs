//! Running handlers: each on its own task, at most
//! `max_concurrent_handlers` at once; an `Err` or a panic becomes
//! [`Event::CommandError`](crate::Event::CommandError).

use std::any::Any;

use super::Dispatcher;
use crate::commands::{
    ArgsError, BoxError, CommandContext, CommandHandler, CommandInvocation, Message,
};
use crate::events::{CommandError, CommandErrorReason, Event};

/// A handler panicked.
#[derive(Debug, thiserror::Error)]
#[error("handler panicked: {0}")]
struct HandlerPanic(String);

impl Dispatcher {
    /// Runs the handler on its own task once one of the permits is free
    /// (dispatch waits for it, in arrival order); an `Err` or a panic
    /// becomes `commandError` with reason `handler`.
    pub(super) async fn run_handler(
        &self,
        handler: CommandHandler,
        ctx: CommandContext,
        invocation: CommandInvocation,
        message: Message,
    ) {
        let Ok(permit) = self.handlers.clone().acquire_owned().await else {
            // The semaphore is never closed; without a permit nothing runs.
            return;
        };
        let task = tokio::spawn(handler.call(ctx));
        let events = self.events.clone();
        tokio::spawn(async move {
            let outcome = task.await;
            drop(permit);
            let error: BoxError = match outcome {
                Ok(Ok(())) => return,
                Ok(Err(e)) => e,
                Err(join) => match join.try_into_panic() {
                    Ok(payload) => Box::new(HandlerPanic(panic_text(payload.as_ref()))),
                    Err(_) => return,
                },
            };
            // A typed command whose arguments fit the declaration but not
            // the Rust type (300 for a `u8`) is the user's mistake, not the
            // handler's.
            let reason = if error.is::<ArgsError>() {
                CommandErrorReason::Arguments
            } else {
                CommandErrorReason::Handler
            };
            events.send(Event::CommandError(CommandError {
                reason,
                command: invocation.name.clone(),
                invocation: Some(invocation),
                message,
                parse_error: None,
                error: Some(std::sync::Arc::new(error)),
            }));
        });
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
