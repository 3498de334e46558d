//! Running invocations: each on its own task, at most
//! `max_concurrent_handlers` at once. On that task, in order: the client's
//! checks, the command's checks, the cooldown, the handler, all under the
//! command's timeout; a refusal, an `Err`, a panic or the timeout becomes a
//! [`CommandError`] (`failure.rs`).

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::commands::{
    run_checks, AnswerGate, ArgumentError, BoxError, Check, CommandContext, CommandError,
    CommandErrorReason, CommandHandler, CooldownError, CooldownTracker, HandlerTimeout, OnError,
    UserError,
};
use crate::events::EventSender;

/// How long a timed-out invocation's task gets to be dropped after its
/// abort before the failure is reported anyway.
const ABORT_GRACE: Duration = Duration::from_secs(1);

/// A handler panicked.
#[derive(Debug, thiserror::Error)]
#[error("handler panicked: {0}")]
struct HandlerPanic(String);

/// What the client sets for every command: its checks (run before each
/// command's own) and its error hook.
pub(crate) struct ClientHooks<D> {
    pub(crate) checks: Vec<Check<D>>,
    pub(crate) on_error: OnError<D>,
}

impl<D> Clone for ClientHooks<D> {
    fn clone(&self) -> Self {
        Self {
            checks: self.checks.clone(),
            on_error: self.on_error.clone(),
        }
    }
}

/// What runs invocations and their failures, shared by dispatch, the
/// handler tasks and the client (which sets the hooks and reads the
/// permits for its stats).
pub(crate) struct Runner<D> {
    pub(crate) events: EventSender,
    /// One permit per handler (or error hook) allowed to run at once.
    pub(crate) handlers: Arc<Semaphore>,
    pub(crate) data: Arc<D>,
    pub(crate) hooks: ArcSwap<ClientHooks<D>>,
    /// The live cooldowns, keyed by command: outside the registry snapshot,
    /// so a registration never resets them.
    pub(crate) cooldowns: CooldownTracker,
    pub(crate) answers: Arc<AnswerGate>,
    /// The client's handler timeout; a command's own replaces it.
    pub(crate) handler_timeout: Option<Duration>,
}

/// How the checks, the cooldown and the handler of one invocation ended.
enum Outcome {
    Done,
    Refused(UserError),
    Cooling(CooldownError),
    Failed(BoxError),
}

impl<D: Send + Sync + 'static> Runner<D> {
    /// Waits for a permit (dispatch waits, in arrival order), then runs the
    /// invocation in `ctx` on a task of its own.
    pub(super) async fn invoke(self: &Arc<Self>, ctx: CommandContext<D>) {
        let Some(permit) = self.permit().await else {
            return;
        };
        let runner = Arc::clone(self);
        tokio::spawn(runner.run(ctx, permit));
    }

    pub(super) async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        // The semaphore is never closed; without a permit nothing runs.
        self.handlers.clone().acquire_owned().await.ok()
    }

    /// The checks, the cooldown and the handler under the timeout; then the
    /// failure, if any, reported and its hook run, still under the permit.
    async fn run(self: Arc<Self>, ctx: CommandContext<D>, permit: OwnedSemaphorePermit) {
        let Some(command) = ctx.registry().and_then(|r| r.get(ctx.name())) else {
            return;
        };
        let handler = command.handler.clone();
        let settings = command.settings.clone();
        let hooks = self.hooks.load_full();
        let timeout = settings.timeout.or(self.handler_timeout);
        let on_error = settings.on_error.clone().unwrap_or(hooks.on_error.clone());
        let (invocation, message) = ctx.shared_parts();

        let runner = Arc::clone(&self);
        let mut attempt = tokio::spawn(async move {
            runner
                .attempt(
                    ctx,
                    &hooks.checks,
                    &settings.checks,
                    settings.cooldown,
                    handler,
                )
                .await
        });
        let joined = match timeout {
            Some(limit) => match tokio::time::timeout(limit, &mut attempt).await {
                Ok(joined) => Some(joined),
                Err(_) => {
                    attempt.abort();
                    // Abort only schedules the drop: wait (bounded, in case
                    // the handler blocks its thread) until the handler's
                    // future is gone, so its guards have run before the
                    // failure is reported.
                    let _ = tokio::time::timeout(ABORT_GRACE, &mut attempt).await;
                    None
                }
            },
            None => Some(attempt.await),
        };
        let (reason, error) = match joined {
            Some(Ok(Outcome::Done)) => return,
            Some(Ok(Outcome::Refused(refusal))) => (CommandErrorReason::Check, refusal.into()),
            Some(Ok(Outcome::Cooling(wait))) => (CommandErrorReason::Cooldown, wait.into()),
            Some(Ok(Outcome::Failed(error))) => (CommandErrorReason::Handler, error),
            Some(Err(join)) => match join.try_into_panic() {
                Ok(payload) => (
                    CommandErrorReason::Handler,
                    HandlerPanic(panic_text(payload.as_ref())).into(),
                ),
                Err(_) => return,
            },
            None => {
                let after = timeout.unwrap_or_default();
                (CommandErrorReason::Timeout, HandlerTimeout { after }.into())
            }
        };
        // The handler's context is gone by now, so these are the last
        // references: no copy.
        let invocation = Arc::unwrap_or_clone(invocation);
        let mut failure = CommandError::new(
            reason,
            invocation.name.clone(),
            invocation.source,
            Arc::unwrap_or_clone(message),
        );
        failure.invocation = Some(invocation);
        match error.downcast::<ArgumentError>() {
            // An argument error from the handler (`ctx.require`) is the
            // user's mistake, not the handler's.
            Ok(argument) if reason == CommandErrorReason::Handler => {
                failure.reason = CommandErrorReason::Arguments;
                failure.argument_error = Some(*argument);
            }
            Ok(argument) => failure.error = Some(Arc::new(argument)),
            Err(error) => failure.error = Some(Arc::new(error)),
        }
        self.fail(failure, &on_error, timeout).await;
        drop(permit);
    }

    async fn attempt(
        self: Arc<Self>,
        ctx: CommandContext<D>,
        client_checks: &[Check<D>],
        command_checks: &[Check<D>],
        cooldown: Option<crate::commands::Cooldown>,
        handler: CommandHandler<D>,
    ) -> Outcome {
        if let Err(refusal) = run_checks(client_checks, &ctx).await {
            return Outcome::Refused(refusal);
        }
        if let Err(refusal) = run_checks(command_checks, &ctx).await {
            return Outcome::Refused(refusal);
        }
        if let Some(cooldown) = cooldown {
            if let Err(wait) = self.cooldowns.try_start(&cooldown, &ctx) {
                return Outcome::Cooling(wait);
            }
        }
        match handler.call(ctx).await {
            Ok(()) => Outcome::Done,
            Err(error) => Outcome::Failed(error),
        }
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
