//! Running invocations: each as one future, at most
//! `max_concurrent_handlers` at once. In it, in order: the owners-only
//! rule, the client's checks, the command's checks, the cooldown (these
//! three skipped for an owner when the client says so), the handler, all under the
//! command's timeout; a refusal, an `Err`, a panic or the timeout becomes a
//! [`CommandError`] (`failure.rs`).
//!
//! The future (`run.rs`, its attempt in `attempt.rs`) is polled once
//! where dispatch stands, and moved to a task of its own only if it waits,
//! while its command's handler keeps finishing at once and quickly
//! (`framework/pace.rs`); otherwise it is spawned straight away. A handler
//! that finishes at once then costs no task, no box and no wake-up of
//! another worker (docs/benchmarks.md, stage 6).
//!
//! One future, not a handler task watched by a second one: the timeout drops
//! the handler's future in place, so its guards have run before the
//! failure is reported, and a panic is caught where it unwinds. A second
//! task doubled the spawns of every invocation (docs/benchmarks.md,
//! stage 4). What it would add is only for a handler that blocks its thread
//! instead of awaiting: no design interrupts that thread, and here its
//! timeout is reported once it gives control back.

mod after;
mod attempt;
mod run;

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::commands::argument_error::ArgumentError;
use crate::commands::text::prefixes::Prefixes;
use crate::commands::types::CommandSource;
use crate::events::EventSender;
use attempt::{Attempt, Start};
use run::{runtime_now, since, Run, RunParts};

use crate::framework::after::{AfterCommand, CommandRan};
use crate::framework::answer::{AnswerGate, AnswerRate};
use crate::framework::check::Check;
use crate::framework::command_error::{CommandError, CommandErrorReason};
use crate::framework::context::{CommandContext, SharedParts};
use crate::framework::cooldown::{
    CooldownError, CooldownTracker, SharedClock, DEFAULT_COOLDOWN_CAPACITY,
};
use crate::framework::dynamic_prefix::{DynamicPrefix, PrefixChooser};
use crate::framework::handler::BoxError;
use crate::framework::on_error::OnError;
use crate::framework::owners::{NotAnOwner, Owners};
use crate::framework::registered::RegisteredCommand;
use crate::framework::registry::CommandRegistry;
use crate::framework::settings::{CommandSettings, DEFAULT_HANDLER_TIMEOUT};
use crate::framework::user_error::UserError;
use crate::message::Message;
use crate::telemetry::{InvocationOutcome, Lane, Telemetry};
use crate::throttle::Throttle;
use after::AfterState;

/// A handler panicked.
#[derive(Debug, thiserror::Error)]
#[error("handler panicked: {0}")]
pub(super) struct HandlerPanic(pub(super) String);

/// A typed command's conversion (`Command::from_args`) panicked.
#[derive(Debug, thiserror::Error)]
#[error("the typed command's conversion panicked: {0}")]
pub(super) struct ConversionPanic(pub(super) String);

/// What the client sets for every command: its checks (run before each
/// command's own), its error hook and its hooks after the command.
pub(crate) struct ClientHooks<D> {
    pub(crate) checks: Vec<Check<D>>,
    pub(crate) on_error: OnError<D>,
    /// In the order added; see `after.rs`.
    pub(crate) after: Vec<AfterCommand<D>>,
}

impl<D> Clone for ClientHooks<D> {
    fn clone(&self) -> Self {
        Self {
            checks: self.checks.clone(),
            on_error: self.on_error.clone(),
            after: self.after.clone(),
        }
    }
}

/// What a runner takes of the client's options, checked by the client.
pub(crate) struct RunnerConfig<D> {
    pub(crate) events: EventSender,
    pub(crate) data: D,
    pub(crate) max_concurrent_handlers: usize,
    pub(crate) handler_timeout: Option<Duration>,
    /// Where the cooldowns and the error answers' rate limit read the time.
    pub(crate) clock: SharedClock,
    pub(crate) answer_rate: AnswerRate,
    pub(crate) owners: Option<Owners>,
    pub(crate) prefixes: Arc<Prefixes>,
    pub(crate) dynamic_prefix: Option<DynamicPrefix>,
    pub(crate) telemetry: Arc<Telemetry>,
}

/// What runs invocations and their failures, shared by dispatch, the
/// handler tasks and the client (which sets the hooks and reads the
/// permits for its stats).
pub(crate) struct Runner<D> {
    events: EventSender,
    /// One permit per handler (or error hook) allowed to run at once.
    handlers: Arc<Semaphore>,
    data: Arc<D>,
    hooks: ArcSwap<ClientHooks<D>>,
    /// Set once the client has a check, after it is in `hooks` (checks are
    /// never removed): an invocation that reads `false` loads no hooks.
    checks_set: AtomicBool,
    /// The live cooldowns, keyed by command: outside the registry snapshot,
    /// so a registration never resets them.
    cooldowns: CooldownTracker,
    /// Where a cooldown starts: see [`SharedClock::at`].
    clock: SharedClock,
    answers: Arc<AnswerGate>,
    /// The client's handler timeout; a command's own replaces it.
    handler_timeout: Option<Duration>,
    /// The warning of a handler that blocked where it was polled in place.
    held_up: Throttle,
    /// The warning of an error hook that panicked.
    hook_panicked: Throttle,
    /// Whether hooks after the command are set (`after.rs`).
    after: AfterState,
    /// The client's owners, if it has any.
    owners: Option<Owners>,
    /// The text lane's prefixes, the client's: those dispatch reads a
    /// line with unless the dynamic prefix chose others for its message
    /// (which the message's context and failure then carry). Shared with
    /// `answers`.
    prefixes: Arc<Prefixes>,
    /// The application's dynamic prefix, if it set one (boxed: a client
    /// without one, the many bots of a hosting platform, holds 8 bytes).
    chooser: Option<Box<PrefixChooser>>,
    /// The client's metrics (its handles resolved at login).
    telemetry: Arc<Telemetry>,
}

impl<D: Send + Sync + 'static> Runner<D> {
    /// A runner with no hooks yet: the error hook answers, no check, no
    /// hook after the command.
    pub(crate) fn new(config: RunnerConfig<D>) -> Self {
        let RunnerConfig {
            events,
            data,
            max_concurrent_handlers,
            handler_timeout,
            clock,
            answer_rate,
            owners,
            prefixes,
            dynamic_prefix,
            telemetry,
        } = config;
        Self {
            events,
            handlers: Arc::new(Semaphore::new(max_concurrent_handlers)),
            data: Arc::new(data),
            hooks: ArcSwap::from_pointee(ClientHooks {
                checks: Vec::new(),
                on_error: OnError::answer(),
                after: Vec::new(),
            }),
            checks_set: AtomicBool::new(false),
            cooldowns: CooldownTracker::with_shared_clock(DEFAULT_COOLDOWN_CAPACITY, clock.clone()),
            answers: Arc::new(AnswerGate::new(
                Arc::clone(&prefixes),
                answer_rate,
                clock.clone(),
            )),
            clock,
            handler_timeout,
            held_up: Throttle::new("a handler held up the reading of the connection"),
            hook_panicked: Throttle::new("an error hook panicked"),
            after: AfterState::new(DEFAULT_HANDLER_TIMEOUT),
            owners,
            prefixes,
            chooser: dynamic_prefix.map(|f| Box::new(PrefixChooser::new(f))),
            telemetry,
        }
    }
}

impl<D> Runner<D> {
    /// The application's shared state.
    pub(crate) fn data(&self) -> &Arc<D> {
        &self.data
    }

    /// The gate of the error answers (the default error hook's).
    pub(super) fn answers(&self) -> &Arc<AnswerGate> {
        &self.answers
    }

    /// Where the client's events go.
    pub(crate) fn events(&self) -> &EventSender {
        &self.events
    }

    /// The client's prefixes.
    pub(crate) fn prefixes(&self) -> &Arc<Prefixes> {
        &self.prefixes
    }

    /// The application's dynamic prefix, if it set one.
    pub(crate) fn chooser(&self) -> Option<&PrefixChooser> {
        self.chooser.as_deref()
    }

    /// The client's metrics.
    pub(crate) fn telemetry(&self) -> &Telemetry {
        &self.telemetry
    }

    /// The client's owners, if it has any.
    pub(crate) fn owners(&self) -> Option<&Owners> {
        self.owners.as_ref()
    }

    /// How many handler permits are free (for the client's stats).
    pub(crate) fn free_permits(&self) -> usize {
        self.handlers.available_permits()
    }

    /// Swaps in a copy of the client's hooks with `change` made to it
    /// (`change` may run more than once, when two updates race); a hook
    /// after the command is marked set once it is in, so that an
    /// invocation that sees the mark finds it.
    pub(crate) fn update_hooks(&self, change: impl Fn(&mut ClientHooks<D>)) {
        self.hooks.rcu(|hooks| {
            let mut next = ClientHooks::clone(hooks);
            change(&mut next);
            next
        });
        let hooks = self.hooks.load();
        if !hooks.checks.is_empty() {
            self.checks_set.store(true, Ordering::Release);
        }
        if !hooks.after.is_empty() {
            self.after.mark_set();
        }
    }

    /// Its rate-limited warnings, for the client's stats and its line at
    /// shutdown.
    pub(crate) fn throttles(&self) -> impl Iterator<Item = &Throttle> {
        [&self.held_up, &self.hook_panicked, self.after.throttle()]
            .into_iter()
            .chain(self.chooser.as_ref().map(|chooser| &chooser.warning))
    }
}

/// A poll in place that runs this long is logged: its handler blocked the
/// thread (past 50 µs, a poll in place only gives its command a task of
/// its own for a while: `framework/pace.rs`).
const HELD_UP_WARNING: Duration = Duration::from_millis(10);

/// How the checks, the cooldown and the handler of one invocation ended.
pub(super) enum Outcome {
    Done,
    Refused(UserError),
    NotAnOwner(NotAnOwner),
    Cooling(CooldownError),
    Failed(BoxError),
}

impl<D: Send + Sync + 'static> Runner<D> {
    /// Runs the invocation in `ctx` of the command at `index` of
    /// `registry` under `permit`, inside `span` (if a
    /// subscriber wants one): polled once here first when its command's
    /// handler has finished at once so far (`Pace`), and on a task of its
    /// own from where it stopped if it waits. Without a `permit` (on the
    /// spot, [`spot_permit`](Self::spot_permit)), the free one is taken
    /// only for a run that waits or is spawned: one that ends in place
    /// costs no permit.
    pub(super) fn start(
        self: &Arc<Self>,
        ctx: CommandContext<D>,
        registry: Arc<CommandRegistry<D>>,
        index: usize,
        permit: Option<OwnedSemaphorePermit>,
        span: Option<Box<tracing::Span>>,
    ) {
        let command = registry.at(index);
        let (in_place, limit) = (
            command.pace.poll_in_place(),
            self.timeout_for(Some(&command.settings)),
        );
        let permit = match permit {
            None if !in_place => Some(self.spot_permit()),
            permit => permit,
        };
        // The invocation's one clock reading before its end: its timeout,
        // its latency and its pace count from here, and its cooldown
        // starts here unless the application injected a clock.
        let began = runtime_now();
        let (shared, source) = (ctx.shared_parts(&self.prefixes), ctx.source());
        let attempt = Attempt::Start(Start { ctx, index, began });
        let parts = RunParts {
            runner: Arc::clone(self),
            registry,
            index,
            shared,
            limit,
            began,
            permit,
            lane: lane(source),
            in_place,
            span,
        };
        let has_permit = parts.permit.is_some();
        let mut run = Run::new(parts, attempt);
        if !in_place {
            tokio::spawn(run);
            return;
        }
        // Polled where it stands, not boxed: the run is `Unpin`
        // (`attempt.rs`), so that one that waits moves to its task.
        let mut cx = Context::from_waker(Waker::noop());
        // The run catches the handler's panics; this catches an error
        // hook's, which must not unwind through the connection task.
        let polled =
            std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut run).poll(&mut cx)));
        let waited = matches!(polled, Ok(Poll::Pending));
        // A success with nothing after it told its pace at its end.
        if Pin::new(&mut run).take_pace_owed() {
            self.paced(run.command(), waited, since(began));
        }
        if waited {
            if !has_permit {
                Pin::new(&mut run).hold(self.spot_permit());
            }
            // Polled again at once by the runtime, with the task's waker,
            // which replaces the no-op one wherever the future waits.
            tokio::spawn(run);
        }
    }

    /// Tells `command`'s pace how its poll in place went: whether it was
    /// left waiting, and how long it ran (logged when it held the thread).
    pub(super) fn paced(&self, command: &RegisteredCommand<D>, waited: bool, ran: Duration) {
        command.pace.record(waited, ran);
        if ran >= HELD_UP_WARNING {
            self.warn_held_up(&command.decl.name, ran);
        }
    }

    /// Says, at most once per `WARN_INTERVAL` (`throttle.rs`), that a
    /// handler blocked the task that polled it in place: the user's bug,
    /// which only the log can point at. The command's name is in the menu,
    /// not a secret.
    #[cold]
    fn warn_held_up(&self, command: &str, ran: Duration) {
        if let Some(swallowed) = self.held_up.allow() {
            tracing::warn!(
                command,
                ran = %crate::human::duration(ran),
                swallowed,
                "a handler ran this long before its first wait, holding up the reading \
                 of the connection; blocking work belongs in \
                 tokio::task::spawn_blocking (the command's next invocations get a task \
                 of their own)"
            );
        }
    }

    /// Waits for a handler permit (dispatch waits, in arrival order).
    pub(super) async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        // The semaphore is never closed; without a permit nothing runs.
        self.handlers.clone().acquire_owned().await.ok()
    }

    /// The timeout of a command with `settings`: its own, else the
    /// client's.
    pub(super) fn timeout_for(&self, settings: Option<&CommandSettings<D>>) -> Option<Duration> {
        settings.and_then(|s| s.timeout).or(self.handler_timeout)
    }

    /// The error hook of a command with `settings`: its own, else the
    /// client's.
    pub(super) fn on_error_for(&self, settings: Option<&CommandSettings<D>>) -> OnError<D> {
        match settings.and_then(|s| s.on_error.as_ref()) {
            Some(on_error) => on_error.clone(),
            None => self.hooks.load().on_error.clone(),
        }
    }

    /// A failure with no detail yet, of a message read with `prefixes`
    /// (`None`: the client's).
    pub(super) fn failure(
        &self,
        reason: CommandErrorReason,
        command: String,
        source: CommandSource,
        message: Message,
        prefixes: Option<Arc<Prefixes>>,
    ) -> CommandError {
        let prefixes = prefixes.unwrap_or_else(|| Arc::clone(&self.prefixes));
        CommandError::new(reason, command, source, message, Some(prefixes))
    }

    /// Whether a handler permit is free, without taking it.
    pub(super) fn has_free_permit(&self) -> bool {
        self.handlers.available_permits() > 0
    }

    /// The handler permit that was free when a message was taken on the
    /// spot ([`has_free_permit`](Self::has_free_permit)), taken now.
    pub(super) fn spot_permit(&self) -> OwnedSemaphorePermit {
        self.try_permit().expect(
            "a permit free before a message taken on the spot is free until its run waits: \
             dispatch is idle, and this connection task is the only other taker",
        )
    }

    /// A handler permit, if one is free.
    pub(super) fn try_permit(&self) -> Option<OwnedSemaphorePermit> {
        self.handlers.clone().try_acquire_owned().ok()
    }

    /// Builds the failure of an invocation whose context is gone, reports
    /// it and runs its hook; then, given how long the attempt ran
    /// (`elapsed`, only when hooks after the command are set), those hooks.
    pub(super) async fn failed(
        self: Arc<Self>,
        reason: CommandErrorReason,
        error: BoxError,
        shared: SharedParts,
        on_error: OnError<D>,
        timeout: Option<Duration>,
        elapsed: Option<Duration>,
    ) {
        // The handler's context is gone by now, so the message is not
        // copied, unless the handler kept a clone of its context.
        let (invocation, message, prefixes) = shared.into_parts();
        let mut ran = elapsed.map(|elapsed| {
            let data = Arc::clone(&self.data);
            let set = prefixes.as_ref().unwrap_or(&self.prefixes).set();
            CommandRan::new(&invocation, &message, set, elapsed, None, data)
        });
        let (command, source) = (invocation.name.clone(), invocation.source);
        let mut failure = self.failure(reason, command, source, message, prefixes);
        failure.invocation = Some(invocation);
        // An argument error from the handler (`ctx.require`, also through
        // a `UserError` made from it by `?`) is the user's mistake, not the
        // handler's. A check's refusal stays a refusal, whatever it was
        // made from.
        let handler = reason == CommandErrorReason::Handler;
        match error.downcast::<ArgumentError>() {
            Ok(argument) if handler => {
                failure.reason = CommandErrorReason::Arguments;
                failure.argument_error = Some(*argument);
            }
            Ok(argument) => failure.error = Some(Arc::new(argument)),
            Err(error) => match error
                .downcast_ref::<UserError>()
                .and_then(UserError::argument)
                .filter(|_| handler)
            {
                Some(argument) => {
                    failure.reason = CommandErrorReason::Arguments;
                    failure.argument_error = Some(argument.clone());
                }
                None => failure.error = Some(Arc::new(error)),
            },
        }
        if let Some(ran) = &mut ran {
            // The final reason: a handler's argument error is `Arguments`.
            ran.failure = Some(failure.reason);
        }
        // For the warning below: the failure goes to the hook.
        let command = failure.command.clone();
        let failing = AssertUnwindSafe(self.fail(failure, &on_error, timeout));
        // An error hook that panics (unwinding here rather than through
        // the connection task or into tokio) leaves the hooks after the
        // command their turn: they see every failure.
        if futures_util::FutureExt::catch_unwind(failing)
            .await
            .is_err()
        {
            // The application's bug, which only the log can point at; the
            // payload is its text, which may quote a user: not logged.
            if let Some(swallowed) = self.hook_panicked.allow() {
                tracing::warn!(command = %command, swallowed, "an error hook panicked");
            }
        }
        if let Some(ran) = ran {
            self.after(ran, timeout).await;
        }
    }
}

/// The lane label of an invocation from `source`.
pub(super) fn lane(source: CommandSource) -> Lane {
    match source {
        CommandSource::Text => Lane::Text,
        CommandSource::Structured => Lane::Structured,
    }
}

/// The outcome label of a failure for `reason`, a handler's panic told
/// apart from its `Err`.
pub(super) fn outcome(reason: CommandErrorReason, panicked: bool) -> InvocationOutcome {
    match reason {
        CommandErrorReason::Handler if panicked => InvocationOutcome::Panic,
        CommandErrorReason::Parse => InvocationOutcome::Parse,
        CommandErrorReason::Arguments => InvocationOutcome::Arguments,
        CommandErrorReason::Check => InvocationOutcome::Check,
        CommandErrorReason::Cooldown => InvocationOutcome::Cooldown,
        CommandErrorReason::Timeout => InvocationOutcome::Timeout,
        CommandErrorReason::Handler => InvocationOutcome::Handler,
    }
}

/// Whether a handler's `Err` is the user's mistake: an [`ArgumentError`],
/// also inside a [`UserError`] made from one (its failure's reason is then
/// `Arguments`, [`Runner::failed`]).
pub(super) fn is_argument_error(error: &BoxError) -> bool {
    error.is::<ArgumentError>()
        || error
            .downcast_ref::<UserError>()
            .and_then(UserError::argument)
            .is_some()
}

pub(super) fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
