//! Typed commands in the registry: one Rust type per command
//! ([`Command`]), registered with a handler that takes the converted value.

use super::CommandRegistry;
use crate::commands::validate::DeclarationError;
use crate::framework::function::{typed_parts, FnCommand};
use crate::framework::handler::TypedHandler;
use crate::framework::settings::CommandSettings;
use crate::framework::typed::Command;

impl<D: Send + Sync + 'static> CommandRegistry<D> {
    /// Registers the typed command `C` with a handler that takes the
    /// converted arguments; otherwise like [`register`](Self::register).
    ///
    /// The conversion is [`CommandContext::args_as`](crate::CommandContext::args_as). Dispatch runs it with
    /// the argument checks, before the command's checks and cooldown: when
    /// the arguments do not convert (300 for a `u8` field), the invocation
    /// fails with reason [`Arguments`](crate::CommandErrorReason::Arguments)
    /// and the [`ArgumentError`](crate::ArgumentError) (with the usage line), the handler is not
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
    /// otherwise like [`command`](Self::command). `settings` go over those
    /// `C` declares ([`C::settings`](Command::settings), its help text
    /// [`C::help_text`](Command::help_text)): each one set here wins, the
    /// checks given here run after the declared ones.
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
        settings: CommandSettings<D>,
        handler: impl TypedHandler<C, D>,
    ) -> Result<&mut Self, DeclarationError> {
        self.add_with(typed_parts::<C, D>(handler), settings)
    }

    /// Registers a command written as a function with
    /// [`#[command]`](crate::framework::command), as it declares itself.
    ///
    /// ```
    /// use botlane::prelude::*;
    ///
    /// /// Check that the bot is alive
    /// #[command]
    /// async fn ping(ctx: CommandContext) -> Result<(), ClientError> {
    ///     ctx.reply("pong").await
    /// }
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.add(ping())?;
    /// assert_eq!(registry.list().next().map(|d| d.name.as_str()), Some("ping"));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn add(&mut self, command: FnCommand<D>) -> Result<&mut Self, DeclarationError> {
        self.add_with(command, CommandSettings::new())
    }

    /// Registers a function command with `settings` over those it declares:
    /// each setting given here wins, the checks given here run after its
    /// own; otherwise like [`add`](Self::add).
    pub fn add_with(
        &mut self,
        command: FnCommand<D>,
        settings: CommandSettings<D>,
    ) -> Result<&mut Self, DeclarationError> {
        let FnCommand {
            decl,
            handler,
            settings: declared,
            convert,
        } = command;
        self.insert(decl, handler, settings.over(declared), Some(convert))
    }
}
