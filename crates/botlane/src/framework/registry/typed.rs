//! Typed commands in the registry: one Rust type per command
//! ([`Command`]), registered with a handler that takes the converted value.

use super::CommandRegistry;
use crate::commands::argument_error::ArgumentError;
use crate::commands::types::CommandArgs;
use crate::commands::validate::DeclarationError;
use crate::framework::context::CommandContext;
use crate::framework::handler::{BoxError, CommandHandler, TypedHandler};
use crate::framework::settings::CommandSettings;
use crate::framework::typed::Command;

impl<D: Send + Sync + 'static> CommandRegistry<D> {
    /// Registers the typed command `C` with a handler that takes the
    /// converted arguments; otherwise like [`register`](Self::register).
    ///
    /// The conversion is [`CommandContext::args_as`]. Dispatch runs it with
    /// the argument checks, before the command's checks and cooldown: when
    /// the arguments do not convert (300 for a `u8` field), the invocation
    /// fails with reason [`Arguments`](crate::CommandErrorReason::Arguments)
    /// and the [`ArgumentError`] (with the usage line), the handler is not
    /// called and no cooldown starts.
    ///
    /// ```
    /// use botlane::{Command, CommandRegistry};
    ///
    /// /// Roll some dice
    /// #[derive(Command)]
    /// struct Roll {
    ///     /// How many dice
    ///     count: u8,
    /// }
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.command::<Roll>(|ctx, roll| async move {
    ///     let _ = (ctx.name(), roll.count);
    ///     Ok::<(), std::io::Error>(())
    /// })?;
    /// assert_eq!(registry.list().next(), Some(&Roll::declaration()));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn command<C: Command + 'static>(
        &mut self,
        handler: impl TypedHandler<C, D>,
    ) -> Result<&mut Self, DeclarationError> {
        self.command_with::<C>(CommandSettings::new(), handler)
    }

    /// Registers the typed command `C` with its checks and cooldown;
    /// otherwise like [`command`](Self::command). The settings' help text,
    /// when they have none, is [`C::help_text`](Command::help_text).
    ///
    /// ```
    /// use std::time::Duration;
    /// use botlane::framework::{CommandSettings, Cooldown};
    /// use botlane::{Command, CommandRegistry};
    ///
    /// /// Roll some dice
    /// #[derive(Command)]
    /// struct Roll {
    ///     /// How many dice
    ///     count: u8,
    /// }
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.command_with::<Roll>(
    ///     CommandSettings::new().cooldown(Cooldown::per_user(Duration::from_secs(3))),
    ///     |_ctx, _roll| async { Ok::<(), std::io::Error>(()) },
    /// )?;
    /// assert!(registry.get("roll").is_some_and(|c| c.settings.cooldown.is_some()));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn command_with<C: Command + 'static>(
        &mut self,
        mut settings: CommandSettings<D>,
        handler: impl TypedHandler<C, D>,
    ) -> Result<&mut Self, DeclarationError> {
        let handler = CommandHandler::new(move |ctx: CommandContext<D>| {
            let call = ctx.args_as::<C>().map(|typed| handler(ctx, typed));
            async move {
                match call {
                    Ok(fut) => fut.await.map_err(Into::into),
                    Err(error) => Err(BoxError::from(error)),
                }
            }
        });
        if settings.help_text.is_none() {
            settings.help_text = C::help_text();
        }
        self.insert(C::declaration(), handler, settings, Some(convert::<C>))
    }
}

/// Whether `args` convert to `C`, for dispatch's argument step.
fn convert<C: Command>(args: &CommandArgs) -> Result<(), ArgumentError> {
    C::from_args(args).map(drop)
}
