//! One invocation as a future written by hand: the attempt (checks,
//! cooldown, handler) under the command's timeout, then its failure, if
//! any, reported and its hook run, then the hooks after the command, if
//! any (`after.rs`), all under the handler permit.
//!
//! By hand rather than as an `async fn` for its size, which every
//! invocation pays (the box it is polled in place from, the task cell when
//! it waits): an `async fn` keeps a slot for each argument it has moved
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

use futures_util::future::CatchUnwind;
use pin_project_lite::pin_project;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Sleep;

use super::{panic_text, HandlerPanic, Outcome, Runner};
use crate::framework::after::CommandRan;
use crate::framework::command_error::{CommandErrorReason, HandlerTimeout};
use crate::framework::context::SharedParts;
use crate::framework::registry::CommandRegistry;

pin_project! {
    /// The future of one invocation (see the module's documentation).
    pub(super) struct Run<D, A> {
        runner: Arc<Runner<D>>,
        // `None` once it has ended: dropped in place, so that the
        // handler's guards have run before a failure is reported.
        #[pin]
        attempt: Option<CatchUnwind<AssertUnwindSafe<A>>>,
        // Set only once the attempt waits: most finish at their first poll,
        // and a timer set for nothing costs a clock read and a runtime
        // lookup. Boxed, so that the future is not sized for it.
        timer: Option<Pin<Box<Sleep>>>,
        limit: Option<Duration>,
        // When the timeout counts from: the clock read before a poll in
        // place, else the first poll.
        began: Option<Instant>,
        registry: Arc<CommandRegistry<D>>,
        index: usize,
        shared: Option<SharedParts>,
        // What follows the attempt, when anything does: the failure's
        // report and hook, the hooks after the command.
        finishing: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
        permit: Option<OwnedSemaphorePermit>,
    }
}

/// What [`Run::new`] needs besides the attempt.
pub(super) struct RunParts<D> {
    pub(super) runner: Arc<Runner<D>>,
    pub(super) registry: Arc<CommandRegistry<D>>,
    pub(super) index: usize,
    pub(super) shared: SharedParts,
    pub(super) limit: Option<Duration>,
    pub(super) began: Option<Instant>,
    pub(super) permit: OwnedSemaphorePermit,
}

impl<D, A> Run<D, A>
where
    D: Send + Sync + 'static,
    A: Future<Output = Outcome>,
{
    pub(super) fn new(parts: RunParts<D>, attempt: A) -> Self {
        // The closures the attempt calls are the application's: a panic in
        // one leaves nothing of ours half-updated (the cooldown tracker
        // holds no lock across them).
        let attempt = futures_util::FutureExt::catch_unwind(AssertUnwindSafe(attempt));
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
            permit: Some(parts.permit),
        }
    }
}

impl<D, A> Future for Run<D, A>
where
    D: Send + Sync + 'static,
    A: Future<Output = Outcome>,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        if let Some(attempt) = this.attempt.as_mut().as_pin_mut() {
            // A hook after the command is told how long the attempt took.
            if this.began.is_none() && (this.limit.is_some() || this.runner.after_set()) {
                *this.began = Some(Instant::now());
            }
            let ended = match attempt.poll(cx) {
                Poll::Ready(ended) => Some(ended),
                Poll::Pending => {
                    let (Some(limit), Some(began)) = (*this.limit, *this.began) else {
                        return Poll::Pending;
                    };
                    // On the runtime's clock (which a test may pause), less
                    // what the attempt took before it first waited.
                    let timer = this.timer.get_or_insert_with(|| {
                        Box::pin(tokio::time::sleep(limit.saturating_sub(began.elapsed())))
                    });
                    ready!(timer.as_mut().poll(cx));
                    None
                }
            };
            this.attempt.set(None);
            *this.timer = None;
            let failed = match ended {
                Some(Ok(Outcome::Done)) => {
                    // The one check a success pays when no hook after the
                    // command is set.
                    if !this.runner.after_set() {
                        *this.permit = None;
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
            // One added while the attempt ran, which had no timeout, finds
            // no start time: zero.
            let elapsed = this
                .runner
                .after_set()
                .then(|| this.began.map(|began| began.elapsed()).unwrap_or_default());
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
