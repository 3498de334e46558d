//! Command handlers: async closures taking a [`CommandContext`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::context::CommandContext;

/// The error a handler may fail with: anything that converts to a boxed error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The future a [`CommandHandler`] returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send + 'static>>;

/// A registered command's handler, cheap to clone.
///
/// Built from any `Fn(CommandContext<D>) -> impl Future<Output = Result<(), E>>`
/// where `E: Into<BoxError>`, which is what an async closure gives. `D` is
/// the client's shared state ([`CommandContext::data`]), `()` by default:
///
/// ```
/// use botlane::{CommandContext, CommandHandler};
///
/// let handler = CommandHandler::new(|ctx: CommandContext| async move {
///     let _count = ctx.get_integer("count");
///     Ok::<(), std::io::Error>(())
/// });
/// # let _ = handler;
/// ```
///
/// # Where it runs
///
/// An invocation is first polled where the client's dispatch stands (the
/// task that reads the connection) and moves to a task of its own at the
/// first `.await` that waits: a handler that finishes at once costs no
/// task. So never block the thread in a handler, and put long computations
/// in [`tokio::task::spawn_blocking`]: a command whose handler waited, or
/// ran past 50 µs before it finished or waited, is spawned straight away
/// from then on (and looked at again one invocation in 32), but its first
/// invocation has held up the reading of the connection meanwhile (10 ms
/// or more of that is logged as a warning naming the command).
pub struct CommandHandler<D = ()>(Arc<dyn Fn(CommandContext<D>) -> HandlerFuture + Send + Sync>);

impl<D> Clone for CommandHandler<D> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<D> CommandHandler<D> {
    /// Wraps an async function or closure.
    pub fn new<F, Fut, E>(handler: F) -> Self
    where
        F: Fn(CommandContext<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Self(Arc::new(move |ctx| {
            let fut = handler(ctx);
            Box::pin(async move { fut.await.map_err(Into::into) })
        }))
    }

    /// Runs the handler on one invocation.
    pub fn call(&self, ctx: CommandContext<D>) -> HandlerFuture {
        (self.0)(ctx)
    }
}

impl<D> fmt::Debug for CommandHandler<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CommandHandler(..)")
    }
}

/// A handler of the typed command `C`: an async function or closure taking
/// the [`CommandContext`] and the converted `C`, failing with any error that
/// converts to a [`BoxError`].
///
/// Implemented for every such function; it exists so that
/// [`CommandRegistry::command`](crate::CommandRegistry::command) can be called as `command::<Roll>(...)` with
/// the closure's argument types inferred.
pub trait TypedHandler<C, D = ()>:
    Fn(CommandContext<D>, C) -> <Self as TypedHandler<C, D>>::Future + Send + Sync + 'static
{
    /// The future the handler returns.
    type Future: Future<Output = Result<(), Self::Error>> + Send + 'static;
    /// The handler's error.
    type Error: Into<BoxError>;
}

impl<C, D, F, Fut, E> TypedHandler<C, D> for F
where
    F: Fn(CommandContext<D>, C) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: Into<BoxError>,
{
    type Future = Fut;
    type Error = E;
}
