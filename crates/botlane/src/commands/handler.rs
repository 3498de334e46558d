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
/// Built from any `Fn(CommandContext) -> impl Future<Output = Result<(), E>>`
/// where `E: Into<BoxError>`, which is what an async closure gives:
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
#[derive(Clone)]
pub struct CommandHandler(Arc<dyn Fn(CommandContext) -> HandlerFuture + Send + Sync>);

impl CommandHandler {
    /// Wraps an async function or closure.
    pub fn new<F, Fut, E>(handler: F) -> Self
    where
        F: Fn(CommandContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Self(Arc::new(move |ctx| {
            let fut = handler(ctx);
            Box::pin(async move { fut.await.map_err(Into::into) })
        }))
    }

    /// Runs the handler on one invocation.
    pub fn call(&self, ctx: CommandContext) -> HandlerFuture {
        (self.0)(ctx)
    }
}

impl fmt::Debug for CommandHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CommandHandler(..)")
    }
}
