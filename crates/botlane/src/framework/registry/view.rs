//! The registry as its contexts see it: the [`RegistryView`] a context
//! holds, and [`CommandContext::with_registry`], which gives it one.

use std::sync::Arc;

use super::CommandRegistry;
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::types::CommandDeclaration;
use crate::framework::context::view::RegistryView;
use crate::framework::context::CommandContext;
use crate::framework::help::render;

impl<D: Send + Sync + 'static> RegistryView for CommandRegistry<D> {
    fn declaration(&self, name: &str) -> Option<&CommandDeclaration> {
        self.find_decl(name)
    }

    fn help(&self, command: Option<&str>, prefixes: PrefixSet<'_>) -> String {
        render(self, command, prefixes)
    }

    fn len(&self) -> usize {
        CommandRegistry::len(self)
    }
}

impl<D: Send + Sync + 'static> CommandContext<D> {
    /// Sets the registry snapshot the invocation was dispatched from
    /// (builder style): [`declaration`](Self::declaration), usage lines in
    /// errors, and the built-in help read it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// # use botlane::{CommandArgs, CommandContext, CommandDeclaration, CommandInvocation, CommandRegistry, CommandSource, Message};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register(CommandDeclaration::new("ping", "Pong"), |_ctx| async { Ok::<(), std::io::Error>(()) })?;
    /// # let invocation = CommandInvocation { name: "ping".into(), args: CommandArgs::new(), source: CommandSource::Text };
    /// let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "/ping"))
    ///     .with_registry(Arc::new(registry));
    /// assert_eq!(ctx.declaration().map(|d| d.description.as_str()), Some("Pong"));
    /// assert_eq!(ctx.usage().as_deref(), Some("/ping"));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    #[must_use]
    pub fn with_registry(self, registry: Arc<CommandRegistry<D>>) -> Self {
        self.with_view(registry)
    }
}
