//! One invocation as a future written by hand: the attempt (checks,
//! cooldown, handler) under the command's timeout, then its failure, if
//! any, reported and its hook run, then the hooks after the command, if
//! any (`after.rs`), all under the handler permit.
//!
//! By hand rather than as an `async fn` for its size, which every
//! invocation pays (moved while it is polled in place, the task cell when
//! it waits), and to be `Unpin` (polled in place without a box): an
//! `async fn` keeps a slot for each argument it has moved
//! out of (the context, 64 bytes, moved into the attempt) and room for its
//! other locals beside the attempt; here the attempt is the only large
//! field and the failure path is boxed. 240 bytes fewer per invocation;
//! the task of one that waits went from 768 to 512 bytes
//! (`docs/benchmarks.md`, stage 8).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use pin_project_lite::pin_project;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Sleep;

use super::attempt::Attempt;
use super::{is_argument_error, panic_text, HandlerPanic, Outcome, Runner};
use crate::framework::after::CommandRan;
use crate::framework::command_error::{CommandErrorReason, HandlerTimeout};
use crate::framework::context::SharedParts;
use crate::framework::registered::RegisteredCommand;
use crate::framework::registry::CommandRegistry;
use crate::telemetry::{end_span, InvocationOutcome, Lane};

/// The runtime's clock (tokio's, which a test may pause), where an
/// invocation's timeout, latency and pace are read.
pub(super) fn runtime_now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// The time on the runtime's clock since `began`, a [`runtime_now`].
pub(super) fn since(began: Instant) -> Duration {
    runtime_now().saturating_duration_since(began)
}

pin_project! {
    /// The future of one invocation (see the module's documentation).
    pub(super) struct Run<D> {
        runner: Arc<Runner<D>>,
        // `None` once it has ended: dropped in place, so that the
        // handler's guards have run before a failure is reported.
        attempt: Option<Attempt<D>>,
        // Set only once the attempt waits: most finish at their first poll,
        // and a timer set for nothing costs a clock read and a runtime
        // lookup. Boxed, so that the future is not sized for it.
        timer: Option<Pin<Box<Sleep>>>,
        limit: Option<Duration>,
        // When the timeout and the latency count from: the clock read
        // when dispatch started the invocation.
        began: Instant,
        registry: Arc<CommandRegistry<D>>,
        index: usize,
        shared: Option<SharedParts>,
        // What follows the attempt, when anything does: the failure's
        // report and hook, the hooks after the command.
        finishing: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
        permit: Option<OwnedSemaphorePermit>,
        lane: Lane,
        // Set while polled in place until the poll is told to its
        // command's pace: by the poll itself when it ends there with a
        // success and nothing after it, sharing the attempt's end reading,
        // else by `Runner::start`.
        pace_owed: bool,
        // Entered at each poll: the handler's own spans are inside it.
        span: Option<Box<tracing::Span>>,
    }

    // It counted in `botlane_handlers_running` from its start.
    impl<D> PinnedDrop for Run<D> {
        fn drop(this: Pin<&mut Self>) {
            this.project().runner.telemetry.handler_ended();
        }
    }
}

/// What [`Run::new`] needs besides the attempt.
pub(super) struct RunParts<D> {
    pub(super) runner: Arc<Runner<D>>,
    pub(super) registry: Arc<CommandRegistry<D>>,
    pub(super) index: usize,
    pub(super) shared: SharedParts,
    pub(super) limit: Option<Duration>,
    pub(super) began: Instant,
    /// `None` on the spot: the free permit is taken only if the run waits.
    pub(super) permit: Option<OwnedSemaphorePermit>,
    pub(super) lane: Lane,
    pub(super) in_place: bool,
    pub(super) span: Option<Box<tracing::Span>>,
}

impl<D> Run<D>
where
    D: Send + Sync + 'static,
{
    /// Counts a handler running until the run is dropped.
    pub(super) fn new(parts: RunParts<D>, attempt: Attempt<D>) -> Self {
        parts.runner.telemetry.handler_started();
        Self {
            runner: parts.runner,
            attempt: Some(attempt),
            timer: None,
            limit: parts.limit,
            began: parts.began,
            registry: parts.registry,
            index: parts.index,
            shared: Some(parts.shared),
            finishing: None,
            permit: parts.permit,
            lane: parts.lane,
            pace_owed: parts.in_place,
            span: parts.span,
        }
    }

    /// Holds `permit` from here on: a run polled in place without one
    /// takes it when it has to wait.
    pub(super) fn hold(self: Pin<&mut Self>, permit: OwnedSemaphorePermit) {
        *self.project().permit = Some(permit);
    }

    /// The command it runs.
    pub(super) fn command(&self) -> &RegisteredCommand<D> {
        self.registry.at(self.index)
    }

    /// Whether the poll in place is still to be told to its command's
    /// pace, which the caller then does: not owed from here on.
    pub(super) fn take_pace_owed(self: Pin<&mut Self>) -> bool {
        std::mem::take(self.project().pace_owed)
    }
}

impl<D> Future for Run<D>
where
    D: Send + Sync + 'static,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        let _entered = this.span.as_deref().map(tracing::Span::enter);
        if let Some(attempt) = this.attempt.as_mut() {
            // The closures the attempt calls are the application's: a
            // panic in one leaves nothing of ours half-updated (the
            // cooldown tracker holds no lock across them).
            let (runner, registry) = (&*this.runner, &*this.registry);
            let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
                attempt.poll_with(cx, runner, registry)
            }));
            let ended = match polled {
                Ok(Poll::Ready(ended)) => Some(Ok(ended)),
                Err(payload) => Some(Err(payload)),
                Ok(Poll::Pending) => {
                    let Some(limit) = *this.limit else {
                        return Poll::Pending;
                    };
                    // On the runtime's clock (which a test may pause), less
                    // what the attempt took before it first waited.
                    let began = *this.began;
                    let timer = this.timer.get_or_insert_with(|| {
                        Box::pin(tokio::time::sleep(limit.saturating_sub(since(began))))
                    });
                    ready!(timer.as_mut().poll(cx));
                    None
                }
            };
            *this.attempt = None;
            *this.timer = None;
            // The invocation's second clock reading: its latency, told to
            // the metrics, the span and a hook after the command.
            let ran = since(*this.began);
            let ended_as = match &ended {
                Some(Ok(Outcome::Done)) => InvocationOutcome::Ok,
                Some(Ok(Outcome::Refused(_) | Outcome::NotAnOwner(_))) => InvocationOutcome::Check,
                Some(Ok(Outcome::Cooling(_))) => InvocationOutcome::Cooldown,
                Some(Ok(Outcome::Failed(error))) if is_argument_error(error) => {
                    InvocationOutcome::Arguments
                }
                Some(Ok(Outcome::Failed(_))) => InvocationOutcome::Handler,
                Some(Err(_)) => InvocationOutcome::Panic,
                None => InvocationOutcome::Timeout,
            };
            let command = this.registry.at(*this.index);
            let telemetry = &this.runner.telemetry;
            if let Some(series) = telemetry.command(&command.series, &command.decl.name) {
                series.record(*this.lane, ended_as, Some(ran));
            }
            if let Some(span) = this.span.as_deref() {
                end_span(span, ended_as, Some(ran));
            }
            let failed = match ended {
                Some(Ok(Outcome::Done)) => {
                    // The one check a success pays when no hook after the
                    // command is set.
                    if !this.runner.after_set() {
                        *this.permit = None;
                        if let Some(shared) = this.shared.take() {
                            crate::dispatch::recycle_message(shared.into_message());
                        }
                        if std::mem::take(this.pace_owed) {
                            this.runner.paced(command, false, ran);
                        }
                        return Poll::Ready(());
                    }
                    None
                }
                Some(Ok(Outcome::Refused(refusal))) => {
                    Some((CommandErrorReason::Check, refusal.into()))
                }
                Some(Ok(Outcome::NotAnOwner(refusal))) => {
                    Some((CommandErrorReason::Check, refusal.into()))
                }
                Some(Ok(Outcome::Cooling(wait))) => {
                    Some((CommandErrorReason::Cooldown, wait.into()))
                }
                Some(Ok(Outcome::Failed(error))) => Some((CommandErrorReason::Handler, error)),
                Some(Err(payload)) => Some((
                    CommandErrorReason::Handler,
                    HandlerPanic(panic_text(payload.as_ref())).into(),
                )),
                None => {
                    let after = this.limit.unwrap_or_default();
                    Some((CommandErrorReason::Timeout, HandlerTimeout { after }.into()))
                }
            };
            // Hooks are never removed: a success got here with them set.
            let elapsed = this.runner.after_set().then_some(ran);
            let Some(shared) = this.shared.take() else {
                // Taken only here, and the attempt ended only once.
                return Poll::Ready(());
            };
            let runner = Arc::clone(this.runner);
            // Boxed: what follows is large and rare (a failure), or paid
            // for by whoever set a hook after the command.
            *this.finishing = Some(match failed {
                None => {
                    let (invocation, message, prefixes) = shared.parts();
                    let data = Arc::clone(&runner.data);
                    let elapsed = elapsed.unwrap_or_default();
                    let prefixes = prefixes.unwrap_or(&runner.prefixes).set();
                    let ran = CommandRan::new(invocation, message, prefixes, elapsed, None, data);
                    Box::pin(runner.after(ran, *this.limit))
                }
                Some((reason, error)) => {
                    let settings = &this.registry.at(*this.index).settings;
                    let on_error = runner.on_error_for(Some(settings));
                    Box::pin(runner.failed(reason, error, shared, on_error, *this.limit, elapsed))
                }
            });
        }
        if let Some(finishing) = this.finishing.as_mut() {
            ready!(finishing.as_mut().poll(cx));
            *this.finishing = None;
        }
        *this.permit = None;
        Poll::Ready(())
    }
}
