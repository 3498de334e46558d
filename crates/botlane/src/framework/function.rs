//! Commands written as functions: `#[command] async fn`, whose parameters
//! are the options. The attribute turns the parameters into a struct it
//! hands to the `Command` derive's expander, so a function command is a
//! typed command underneath, declared, checked and converted by the one
//! path every typed command takes.

use std::fmt;

use super::check::Check;
use super::context::CommandContext;
use super::handler::{BoxError, CommandHandler, TypedHandler};
use super::registered::ConvertCheck;
use super::settings::CommandSettings;
use super::typed::Command;
use super::user_error::UserError;
use crate::commands::argument_error::ArgumentError;
use crate::commands::types::{CommandArgs, CommandDeclaration};

/// A command written as an `async fn` with `#[command]`: the function the
/// attribute leaves behind returns one, ready for
/// [`CommandRegistry::add`](crate::CommandRegistry::add) or
/// [`Commands::add`](crate::Commands::add).
///
/// ```
/// use botlane::prelude::*;
///
/// /// Roll some dice
/// ///
/// /// # Options
/// /// * `count`: How many dice
/// #[command(aliases("r"), user_cooldown = 2)]
/// async fn roll(ctx: CommandContext, #[option(min = 1, max = 10)] count: u8) -> Result<(), ClientError> {
///     ctx.reply(&format!("{count} dice")).await
/// }
///
/// let mut registry = CommandRegistry::new();
/// registry.add(roll())?;
/// let roll = registry.get("roll").expect("just registered");
/// assert_eq!(roll.decl.options[0].description, "How many dice");
/// assert_eq!(roll.decl.options[0].max_value, Some(10.0));
/// assert_eq!(roll.settings.aliases, ["r"]);
/// assert!(roll.settings.cooldown.is_some());
/// # Ok::<(), botlane::DeclarationError>(())
/// ```
pub struct FnCommand<D = ()> {
    pub(crate) decl: CommandDeclaration,
    pub(crate) handler: CommandHandler<D>,
    pub(crate) settings: CommandSettings<D>,
    pub(crate) convert: ConvertCheck,
}

impl<D> FnCommand<D> {
    /// The declaration the function's name, doc comment and parameters
    /// give.
    pub fn declaration(&self) -> &CommandDeclaration {
        &self.decl
    }

    /// The settings its `#[command(...)]` attribute gives.
    pub fn settings(&self) -> &CommandSettings<D> {
        &self.settings
    }
}

impl<D> fmt::Debug for FnCommand<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnCommand")
            .field("decl", &self.decl)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The context parameter of a `#[command]` function: the state type comes
/// from the parameter's type through this trait, so an alias of
/// `CommandContext<MyState>` works as well as the type itself.
#[diagnostic::on_unimplemented(
    message = "the first parameter of a #[command] fn must be the context, `CommandContext<D>`, not `{Self}`",
    label = "not a CommandContext"
)]
pub trait ContextParam {
    /// The bot's shared state, `D` of `CommandContext<D>`.
    type Data: Send + Sync + 'static;
}

#[doc(hidden)]
impl<D: Send + Sync + 'static> ContextParam for CommandContext<D> {
    type Data = D;
}

/// What `#[command(check = ...)]` takes: a [`Check`], or a synchronous
/// predicate as [`Check::sync`] takes one.
#[diagnostic::on_unimplemented(
    message = "`check = ...` takes a `Check<D>` or a `fn(&CommandContext<D>) -> Result<(), UserError>`"
)]
pub trait IntoCheck<D> {
    /// The check.
    fn into_check(self) -> Check<D>;
}

#[doc(hidden)]
impl<D> IntoCheck<D> for Check<D> {
    fn into_check(self) -> Check<D> {
        self
    }
}

#[doc(hidden)]
impl<D: 'static, F> IntoCheck<D> for F
where
    F: Fn(&CommandContext<D>) -> Result<(), UserError> + Send + Sync + 'static,
{
    fn into_check(self) -> Check<D> {
        Check::sync(self)
    }
}

/// The command `#[command]` generates: `C` (the parameters as a struct
/// the derive's expander declared) with its handler, its declared settings
/// and `checks`.
pub fn fn_command<C: Command + 'static, D: Send + Sync + 'static>(
    checks: Vec<Check<D>>,
    handler: impl TypedHandler<C, D>,
) -> FnCommand<D> {
    let mut command = typed_parts::<C, D>(handler);
    command.settings.checks.extend(checks);
    command
}

/// What registering the typed command `C` with `handler` adds: its
/// declaration, the handler that converts the arguments before calling
/// `handler`, the settings `C` declares (its help text among them) and
/// the conversion dispatch runs with the argument checks. The one path of
/// every typed command, derived or written as a function.
pub(crate) fn typed_parts<C: Command + 'static, D: Send + Sync + 'static>(
    handler: impl TypedHandler<C, D>,
) -> FnCommand<D> {
    let handler = CommandHandler::new(move |ctx: CommandContext<D>| {
        let call = ctx.args_as::<C>().map(|typed| handler(ctx, typed));
        async move {
            match call {
                Ok(fut) => fut.await.map_err(Into::into),
                Err(error) => Err(BoxError::from(error)),
            }
        }
    });
    let mut settings = C::settings::<D>();
    if settings.help_text.is_none() {
        settings.help_text = C::help_text();
    }
    FnCommand {
        decl: C::declaration(),
        handler,
        settings,
        convert: convert::<C>,
    }
}

/// Whether `args` convert to `C`, for dispatch's argument step.
fn convert<C: Command>(args: &CommandArgs) -> Result<(), ArgumentError> {
    C::from_args(args).map(drop)
}
