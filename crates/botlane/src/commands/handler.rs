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
