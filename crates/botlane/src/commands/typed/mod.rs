//! Typed commands: one Rust type per command, its declaration generated and
//! its arguments converted both ways, so a handler takes a struct instead of
//! reading options by name, and a bot sends a struct instead of a map.

mod value;

use std::future::Future;

pub use value::{ChannelId, CommandChoice, CommandOptionValue, RoleId, UserId};

use super::argument_error::{ArgumentError, ArgumentRule};
use super::context::CommandContext;
use super::handler::{BoxError, CommandHandler};
use super::registry::CommandRegistry;
use super::settings::CommandSettings;
use super::types::{CommandArgs, CommandDeclaration};
use super::validate::DeclarationError;

/// A command as a Rust type: its declaration, its value built from an
/// invocation's arguments, and its arguments built from a value.
///
/// Usually derived with `#[derive(Command)]` (feature `macros`, on by
/// default), which also checks at compile time every rule of
/// [`validate_declaration`](crate::validate_declaration) it can know:
///
/// | source | gives |
/// |---|---|
/// | `#[command(name = "...")]`, else the struct name in kebab case (`RollDice` → `roll-dice`) | the command name |
/// | `#[command(description = "...")]`, else the doc comment's first paragraph | the command description |
/// | `#[command(help_text = "...")]`, else the doc comment's later paragraphs | [`help_text`](Command::help_text) |
/// | each named field, in declared order | one option, named after the field (`r#type` → `type`) or `#[option(name = "...")]` |
/// | the field's doc comment, or `#[option(description = "...")]` | the option description |
/// | `Option<T>` / any other `T` | an optional / a required option |
/// | `T`'s [`CommandOptionValue::KIND`]; for a `String` field `#[option(kind = "user" \| "channel" \| "role")]` | the option type |
/// | `#[option(choices("6", "20"))]`, or an enum deriving [`CommandChoice`] | the choices |
/// | `#[option(min = 1, max = 3600)]` on an integer or `f64` field, `#[option(min_length = 3, max_length = 200)]` on a string field | the local bounds |
///
/// A doc comment is read as poise reads one: each line trimmed (a line
/// ending in `\` continued by the next; a `/** */` comment's column of `*`
/// dropped, as rustdoc drops it), the first paragraph, its lines
/// joined by single spaces, the description, and the paragraphs after the
/// first blank line the help text, each line kept and one blank line
/// between paragraphs. An explicit description or help text replaces only
/// its own part of the doc comment. A field's doc comment is its option's
/// description whole, its non-blank lines joined by single spaces.
///
/// A missing doc comment, a name breaking `^[a-z0-9_-]{1,32}$`, a
/// description outside 1 to 100 characters, a help text that is blank,
/// longer than [`MAX_HELP_TEXT_CHARS`](crate::MAX_HELP_TEXT_CHARS) or
/// holds a tab or another control character but `\n` (U+2028 and U+2029
/// too), more than 25 options, duplicate option names, a required field
/// after an `Option` one, choices on a `bool`, empty, too many, too long,
/// duplicate or ill-typed choices, and bounds on the wrong type, of the
/// wrong type, inverted, too long, or excluding a choice are compile
/// errors on the field or attribute at fault.
///
/// ```
/// use botlane::{
///     validate_declaration, ArgumentRule, CommandArgValue, CommandArgs, CommandOptionType, Command, UserId,
/// };
///
/// /// Roll some dice
/// #[derive(Command, Debug, PartialEq)]
/// struct Roll {
///     /// How many dice
///     #[option(min = 1)]
///     count: u8,
///     /// Sides per die
///     #[option(choices("6", "20"))]
///     sides: Option<i64>,
///     /// Who rolls
///     player: Option<UserId>,
/// }
///
/// let decl = Roll::declaration();
/// assert_eq!(decl.name, "roll");
/// assert_eq!(decl.description, "Roll some dice");
/// assert_eq!(decl.options[0].min_value, Some(1.0));
/// assert_eq!(decl.options[1].choices.as_deref(), Some(&["6".into(), "20".into()][..]));
/// assert_eq!(decl.options[2].kind, CommandOptionType::User);
/// assert!(validate_declaration(&decl).is_ok());
///
/// let args = CommandArgs::from([("count".to_string(), CommandArgValue::Integer(2))]);
/// let roll = Roll::from_args(&args)?;
/// assert_eq!(roll, Roll { count: 2, sides: None, player: None });
/// assert_eq!(roll.to_args(), args);
///
/// let too_many = CommandArgs::from([("count".to_string(), CommandArgValue::Integer(300))]);
/// let err = Roll::from_args(&too_many).unwrap_err();
/// assert_eq!(err.rule(), &ArgumentRule::OutOfRange { min: 0, max: 255 });
/// assert_eq!(err.to_string(), "option \"count\" must be a whole number from 0 to 255");
/// # Ok::<(), botlane::ArgumentError>(())
/// ```
pub trait Command: Sized {
    /// The declaration registered for this command.
    fn declaration() -> CommandDeclaration;

    /// The longer explanation the built-in help ends `/help <name>` with,
    /// registered as the command's
    /// [`CommandSettings::help_text`](crate::CommandSettings::help_text)
    /// unless the settings given at registration have one. `None` by
    /// default; derived, it is `#[command(help_text = "...")]`, else the
    /// doc comment's paragraphs after the first. The built-in
    /// help's answer, this text at its end, is
    /// [`render_help`](crate::render_help)'s.
    ///
    /// ```
    /// use botlane::{render_help, Command, CommandRegistry};
    ///
    /// /// Roll some dice
    /// ///
    /// /// Rolls six-sided dice and adds them up.
    /// /// • /roll 2 rolls two.
    /// #[derive(Command)]
    /// struct Roll {
    ///     /// How many dice
    ///     count: Option<u8>,
    /// }
    ///
    /// assert_eq!(Roll::declaration().description, "Roll some dice");
    /// assert_eq!(
    ///     Roll::help_text().as_deref(),
    ///     Some("Rolls six-sided dice and adds them up.\n• /roll 2 rolls two.")
    /// );
    /// let mut registry = CommandRegistry::new();
    /// registry.command::<Roll>(|_ctx, _roll| async { Ok::<(), std::io::Error>(()) })?;
    /// assert!(render_help(&registry, Some("roll"), None).ends_with("\n\nRolls six-sided dice and adds them up.\n• /roll 2 rolls two."));
    /// // Not in the menu.
    /// assert!(!registry.canonical_menu_json().contains("Rolls"));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    fn help_text() -> Option<String> {
        None
    }

    /// Builds the value from an invocation's arguments (as
    /// [`CommandContext::args`] gives them).
    ///
    /// Dispatch has already coerced the arguments to the declared types and
    /// checked their choices and bounds on both lanes; this checks that
    /// every argument is declared, every required one is present and every
    /// value converts to its field's type. The error has no usage line (it
    /// depends on the client's prefix); [`CommandContext::args_as`] adds it.
    fn from_args(args: &CommandArgs) -> Result<Self, ArgumentError>;

    /// The arguments of this value: one per filled field, each as
    /// [`CommandOptionValue::to_arg`] gives it, an unfilled `Option` field
    /// absent. For declared values `Self::from_args(&v.to_args())` gives `v`
    /// back, and the args are what
    /// [`format_invocation_text`](crate::format_invocation_text) and
    /// [`encode_command_data`](crate::encode_command_data) take, so a bot
    /// sends a typed command with `Client::send_command(channel, bot,
    /// &C::declaration(), &value.to_args())`.
    ///
    /// ```
    /// use botlane::{format_invocation_text, Command};
    ///
    /// /// Remind me
    /// #[derive(Command)]
    /// struct Remind {
    ///     /// In how many minutes
    ///     minutes: u16,
    ///     /// What about
    ///     note: Option<String>,
    /// }
    ///
    /// let remind = Remind { minutes: 5, note: Some("tea time".into()) };
    /// let line = format_invocation_text(&Remind::declaration(), &remind.to_args(), None)?;
    /// assert_eq!(line, "/remind 5 tea time");
    /// # Ok::<(), botlane::FormatError>(())
    /// ```
    fn to_args(&self) -> CommandArgs;
}

/// The error of a typed conversion: the same type as [`ArgumentError`],
/// under the name [`Command::from_args`] had before the two were unified.
pub type ArgsError = ArgumentError;

/// Whether `args` convert to `C`, for dispatch's argument step.
fn convert<C: Command>(args: &CommandArgs) -> Result<(), ArgumentError> {
    C::from_args(args).map(drop)
}

/// Fails on the first argument whose name is not in `declared`; used by
/// derived [`Command::from_args`].
///
/// ```
/// use botlane::{check_arg_names, ArgumentRule, CommandArgs};
///
/// let args = CommandArgs::from([("cuont".to_string(), 2_i64.into())]);
/// assert!(check_arg_names(&args, &["cuont", "sides"]).is_ok());
/// let err = check_arg_names(&args, &["count", "sides"]).unwrap_err();
/// assert_eq!((err.option(), err.rule()), ("cuont", &ArgumentRule::Unknown));
/// ```
pub fn check_arg_names(args: &CommandArgs, declared: &[&str]) -> Result<(), ArgumentError> {
    match args.keys().find(|key| !declared.contains(&key.as_str())) {
        Some(key) => Err(ArgumentError::new(key.clone(), ArgumentRule::Unknown)),
        None => Ok(()),
    }
}

/// The value of optional option `option`, `None` when it is unfilled.
///
/// ```
/// use botlane::{optional_arg, ArgValueKind, CommandArgs};
///
/// let args = CommandArgs::from([("sides".to_string(), 6_i64.into())]);
/// assert_eq!(optional_arg::<u32>(&args, "sides")?, Some(6));
/// assert_eq!(optional_arg::<u32>(&args, "label")?, None);
/// let err = optional_arg::<bool>(&args, "sides").unwrap_err();
/// assert_eq!(err.value_kind(), Some(ArgValueKind::Integer));
/// # Ok::<(), botlane::ArgumentError>(())
/// ```
pub fn optional_arg<T: CommandOptionValue>(
    args: &CommandArgs,
    option: &str,
) -> Result<Option<T>, ArgumentError> {
    args.get(option)
        .map(|value| {
            T::from_arg(value).map_err(|rule| {
                ArgumentError::new(option, rule).with_value_kind(value.value_kind())
            })
        })
        .transpose()
}

/// The value of required option `option`; an [`ArgumentRule::Missing`]
/// error when it is unfilled.
///
/// ```
/// use botlane::{required_arg, ArgumentRule, CommandArgs};
///
/// let args = CommandArgs::from([("label".to_string(), "fire".into())]);
/// assert_eq!(required_arg::<String>(&args, "label")?, "fire");
/// let err = required_arg::<String>(&args, "count").unwrap_err();
/// assert_eq!((err.option(), err.rule()), ("count", &ArgumentRule::Missing));
/// # Ok::<(), botlane::ArgumentError>(())
/// ```
pub fn required_arg<T: CommandOptionValue>(
    args: &CommandArgs,
    option: &str,
) -> Result<T, ArgumentError> {
    optional_arg(args, option)?.ok_or_else(|| ArgumentError::new(option, ArgumentRule::Missing))
}

/// Inserts the argument of a filled field into `args`; used by derived
/// [`Command::to_args`], where an unfilled `Option` field passes `None`.
///
/// ```
/// use botlane::{put_arg, CommandArgValue, CommandArgs};
///
/// let mut args = CommandArgs::new();
/// put_arg(&mut args, "count", Some(&3_u8));
/// put_arg::<String>(&mut args, "label", None);
/// assert_eq!(args, CommandArgs::from([("count".to_string(), CommandArgValue::Integer(3))]));
/// ```
pub fn put_arg<T: CommandOptionValue>(args: &mut CommandArgs, option: &str, value: Option<&T>) {
    if let Some(value) = value {
        args.insert(option.to_owned(), value.to_arg());
    }
}

/// A handler of the typed command `C`: an async function or closure taking
/// the [`CommandContext`] and the converted `C`, failing with any error that
/// converts to a [`BoxError`].
///
/// Implemented for every such function; it exists so that
/// [`CommandRegistry::command`] can be called as `command::<Roll>(...)` with
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
    /// use botlane::{Command, CommandRegistry, CommandSettings, Cooldown};
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
