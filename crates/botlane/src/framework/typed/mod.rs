//! Typed commands: one Rust type per command, its declaration generated and
//! its arguments converted both ways, so a handler takes a struct instead of
//! reading options by name, and a bot sends a struct instead of a map.

mod context;
pub(crate) mod value;

pub use value::{ChannelId, CommandChoice, CommandOptionValue, RoleId, UserId};

use crate::commands::argument_error::{ArgumentError, ArgumentRule};
use crate::commands::types::{CommandArgs, CommandDeclaration};
use crate::framework::settings::CommandSettings;

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
/// longer than [`MAX_HELP_TEXT_CHARS`](crate::framework::MAX_HELP_TEXT_CHARS) or
/// holds a tab or another control character but `\n` (U+2028 and U+2029
/// too), more than 25 options, duplicate option names, a required field
/// after an `Option` one, choices on a `bool`, empty, too many, too long,
/// duplicate or ill-typed choices, and bounds on the wrong type, of the
/// wrong type, inverted, too long, or excluding a choice are compile
/// errors on the field or attribute at fault.
///
/// ```
/// use botlane::framework::UserId;
/// use botlane::{
///     validate_declaration, ArgumentRule, CommandArgValue, CommandArgs, CommandOptionType, Command,
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
    /// [`CommandSettings::help_text`](crate::framework::CommandSettings::help_text)
    /// unless the settings given at registration have one. `None` by
    /// default; derived, it is `#[command(help_text = "...")]`, else the
    /// doc comment's paragraphs after the first. The built-in
    /// help's answer, this text at its end, is
    /// [`render_help`](crate::framework::render_help)'s.
    ///
    /// ```
    /// use botlane::framework::render_help;
    /// use botlane::{Command, CommandRegistry};
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

    /// The settings the command declares: derived, those of
    /// `#[command(...)]` that do not depend on the bot's state (`aliases`,
    /// `category`, `hide_in_help`, `owners_only` and a cooldown,
    /// `user_cooldown = 30` and the like, in seconds). Registration puts
    /// its own settings over these. None by default.
    ///
    /// ```
    /// use botlane::framework::CommandSettings;
    /// use botlane::Command;
    ///
    /// /// Roll some dice
    /// #[derive(Command)]
    /// #[command(aliases("r", "dice"), category = "Fun", user_cooldown = 5)]
    /// struct Roll;
    ///
    /// let settings: CommandSettings = Roll::settings();
    /// assert_eq!(settings.aliases, ["r", "dice"]);
    /// assert_eq!(settings.category.as_deref(), Some("Fun"));
    /// assert_eq!(settings.cooldown.map(|c| c.duration().as_secs()), Some(5));
    /// ```
    fn settings<D: Send + Sync + 'static>() -> CommandSettings<D> {
        CommandSettings::new()
    }

    /// Builds the value from an invocation's arguments (as
    /// [`CommandContext::args`](crate::CommandContext::args) gives them).
    ///
    /// Dispatch has already coerced the arguments to the declared types and
    /// checked their choices and bounds on both lanes; this checks that
    /// every argument is declared, every required one is present and every
    /// value converts to its field's type. The error has no usage line (it
    /// depends on the client's prefix); [`CommandContext::args_as`](crate::CommandContext::args_as) adds it.
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

/// Fails on the first argument whose name is not in `declared`; used by
/// derived [`Command::from_args`].
///
/// ```
/// use botlane::__private::check_arg_names;
/// use botlane::{ArgumentRule, CommandArgs};
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
/// use botlane::__private::optional_arg;
/// use botlane::framework::ArgValueKind;
/// use botlane::CommandArgs;
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
/// use botlane::__private::required_arg;
/// use botlane::{ArgumentRule, CommandArgs};
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
/// use botlane::__private::put_arg;
/// use botlane::{CommandArgValue, CommandArgs};
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
