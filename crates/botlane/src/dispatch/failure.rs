//! Reporting a failed invocation: the event (always), one log line with the
//! command name and the reason only (the error's text may hold the user's
//! plaintext, so it goes to the event, never to the log), then the error
//! hook, under a handler permit and the command's timeout.

use std::sync::Arc;
use std::time::Duration;

use super::handlers::Runner;
use crate::commands::{CommandError, CommandFailure, OnError};
use crate::events::Event;

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

    /// Reports a failure found by dispatch itself (the arguments), then
    /// runs its hook on a task of its own once a permit is free, so that
    /// dispatch never waits for an answer to be posted.
    pub(super) async fn fail_early(
        self: &Arc<Self>,
        failure: CommandError,
        on_error: OnError<D>,
        timeout: Option<Duration>,
    ) {
        self.report(&failure);
        if !on_error.acts_on(&failure) {
            return;
        }
        let Some(permit) = self.permit().await else {
            return;
        };
        let runner = Arc::clone(self);
        tokio::spawn(async move {
            runner.run_hook(failure, &on_error, timeout).await;
            drop(permit);
        });
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
            Arc::clone(&self.data),
            Arc::clone(&self.answers),
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

    fn report(&self, failure: &CommandError) {
        tracing::debug!(
            command = %failure.command,
            reason = failure.reason.as_str(),
            "command failed"
        );
        self.events.send(Event::CommandError(failure.clone()));
    }
}
