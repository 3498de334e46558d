//! An invocation's attempt: the owners-only rule, the client's checks, the
//! command's checks, the cooldown (these three skipped for an owner when
//! the client says so), then the handler, polled by its run as one future
//! (`poll_with`, which lends it the run's runner and registry).
//!
//! By hand, and `Unpin`, so that the invocation's future ([`Run`](super::run::Run))
//! is polled where dispatch stands without a box of its own, and moved to
//! a task only if it waits: a command without checks (most) decides all
//! but its handler at the first poll without waiting, and is then its
//! handler's own boxed future; a command with checks runs them, which may
//! wait, in a boxed `async` block. The first poll decides, inside the
//! run's panic guard and span, as the handler's own code runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use super::{Outcome, Runner};
use crate::framework::check::run_checks;
use crate::framework::context::CommandContext;
use crate::framework::cooldown::CooldownError;
use crate::framework::handler::{BoxError, HandlerFuture};
use crate::framework::owners::owner_gate;
use crate::framework::registered::RegisteredCommand;
use crate::framework::registry::CommandRegistry;

/// What an invocation has still to do.
pub(super) enum Attempt<D> {
    /// Not polled yet.
    Start(Start<D>),
    /// The checks, then the cooldown and the handler.
    Checking(Pin<Box<dyn Future<Output = Outcome> + Send>>),
    /// The handler, all else passed.
    Handler(HandlerFuture),
    /// Decided at the first poll, or taken apart by it.
    Over,
}

/// What the first poll decides from: the invocation of the command at
/// `index` of the run's registry, which dispatch started at `began`.
pub(super) struct Start<D> {
    pub(super) ctx: CommandContext<D>,
    pub(super) index: usize,
    pub(super) began: Instant,
}

impl<D: Send + Sync + 'static> Attempt<D> {
    /// Polls the attempt with its run's runner and registry, lent rather
    /// than held: a command without checks needs them only at the first
    /// poll, and holding them would cost each invocation two counts more.
    pub(super) fn poll_with(
        &mut self,
        cx: &mut Context<'_>,
        runner: &Arc<Runner<D>>,
        registry: &Arc<CommandRegistry<D>>,
    ) -> Poll<Outcome> {
        if let Attempt::Start(_) = self {
            let Attempt::Start(start) = std::mem::replace(self, Attempt::Over) else {
                unreachable!("matched as Start just above")
            };
            match start.decide(runner, registry) {
                Ok(next) => *self = next,
                Err(ended) => return Poll::Ready(ended),
            }
        }
        match self {
            Attempt::Checking(checking) => checking.as_mut().poll(cx),
            Attempt::Handler(handler) => handler.as_mut().poll(cx).map(handled),
            Attempt::Start(_) | Attempt::Over => unreachable!(
                "the first poll replaced the start with what follows it, or returned; the run \
                 drops its attempt once it is ready and never polls it again"
            ),
        }
    }
}

impl<D: Send + Sync + 'static> Start<D> {
    /// The owners-only rule, and for a command without checks its cooldown
    /// and its handler's future: what needs no wait. `Err`: how it ended
    /// without its handler.
    fn decide(
        self,
        runner: &Arc<Runner<D>>,
        registry: &Arc<CommandRegistry<D>>,
    ) -> Result<Attempt<D>, Outcome> {
        let Self { ctx, index, began } = self;
        let command = registry.at(index);
        let owners_only = command.settings.owners_only;
        let skip_checks = owner_gate(
            runner.owners.as_ref(),
            owners_only,
            &ctx.message().author_id,
        )
        .map_err(Outcome::NotAnOwner)?;
        // An owner who skips them neither waits for a cooldown nor starts
        // one: the others do not wait for the owner's tries.
        if skip_checks {
            return Ok(Attempt::Handler(command.handler.call(ctx)));
        }
        // Checks looked for before any is run: most commands have none,
        // and an empty run costs a future and a hooks snapshot.
        let client_checks = runner.checks_set.load(Ordering::Acquire);
        if client_checks || !command.settings.checks.is_empty() {
            let (runner, registry) = (Arc::clone(runner), Arc::clone(registry));
            let checking = async move {
                let command = registry.at(index);
                if client_checks {
                    let hooks = runner.hooks.load_full();
                    if let Err(refusal) = run_checks(&hooks.checks, &ctx).await {
                        return Outcome::Refused(refusal);
                    }
                }
                let checks = &command.settings.checks;
                if !checks.is_empty()
                    && let Err(refusal) = run_checks(checks, &ctx).await
                {
                    return Outcome::Refused(refusal);
                }
                if let Err(wait) = runner.cool(command, &ctx, began) {
                    return Outcome::Cooling(wait);
                }
                handled(command.handler.call(ctx).await)
            };
            return Ok(Attempt::Checking(Box::pin(checking)));
        }
        runner
            .cool(command, &ctx, began)
            .map_err(Outcome::Cooling)?;
        Ok(Attempt::Handler(command.handler.call(ctx)))
    }
}

/// How a handler's result ends its attempt.
fn handled(ended: Result<(), BoxError>) -> Outcome {
    match ended {
        Ok(()) => Outcome::Done,
        Err(error) => Outcome::Failed(error),
    }
}

impl<D> Runner<D> {
    /// Starts `command`'s cooldown, if it has one, for the invocation in
    /// `ctx` that dispatch started at `began` (with the default clock, that
    /// reading is when it starts).
    fn cool(
        &self,
        command: &RegisteredCommand<D>,
        ctx: &CommandContext<D>,
        began: Instant,
    ) -> Result<(), CooldownError> {
        let Some(cooldown) = command.settings.cooldown else {
            return Ok(());
        };
        let subject = cooldown.subject(ctx);
        self.cooldowns
            .try_start_at(ctx.name(), &cooldown, subject, self.clock.at(began))
    }
}
