//! Reporting a failed invocation: the event (always), one log line with the
//! command name and the reason only (the error's text may hold the user's
//! plaintext, so it goes to the event, never to the log), then the error
//! hook, under a handler permit and the command's timeout.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;
use tracing::Instrument;

use super::handlers::Runner;
use crate::events::Event;
use crate::framework::command_error::CommandError;
use crate::framework::on_error::{CommandFailure, OnError};

/// A failure of the argument step, already reported, with its hook.
pub(super) struct EarlyFailure<D> {
    pub(super) failure: CommandError,
    pub(super) on_error: OnError<D>,
    pub(super) timeout: Option<Duration>,
    /// Its invocation's span, which the hook runs in.
    pub(super) span: tracing::Span,
}

impl<D: Send + Sync + 'static> Runner<D> {
    /// Reports `failure` and runs its hook here (the caller holds a permit).
    pub(super) async fn fail(
        &self,
        failure: CommandError,
        on_error: &OnError<D>,
        timeout: Option<Duration>,
    ) {
        self.report(&failure);
        self.run_hook(failure, on_error, timeout).await;
    }

    /// Runs the hook of a failure found by dispatch itself (the
    /// arguments) on a task of its own, under `permit`, so that dispatch
    /// never waits for an answer to be posted.
    pub(super) fn start_hook(
        self: &Arc<Self>,
        early: Box<EarlyFailure<D>>,
        permit: OwnedSemaphorePermit,
    ) {
        let runner = Arc::clone(self);
        let EarlyFailure {
            failure,
            on_error,
            timeout,
            span,
        } = *early;
        tokio::spawn(
            async move {
                let running = runner.telemetry().running();
                runner.run_hook(failure, &on_error, timeout).await;
                drop((permit, running));
            }
            .instrument(span),
        );
    }

    async fn run_hook(
        &self,
        failure: CommandError,
        on_error: &OnError<D>,
        timeout: Option<Duration>,
    ) {
        if !on_error.acts_on(&failure) {
            return;
        }
        let hook = on_error.run(CommandFailure::new(
            failure,
            Arc::clone(self.data()),
            Arc::clone(self.answers()),
        ));
        match timeout {
            Some(limit) => {
                if tokio::time::timeout(limit, hook).await.is_err() {
                    tracing::debug!("an error hook ran past the command's timeout");
                }
            }
            None => hook.await,
        }
    }

    pub(super) fn report(&self, failure: &CommandError) {
        tracing::debug!(
            command = %failure.command,
            reason = failure.reason.as_str(),
            "command failed"
        );
        self.events().send(Event::CommandError(failure.clone()));
    }
}
