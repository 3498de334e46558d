//! Typed commands: one Rust type per command, its declaration generated and
//! its arguments converted, so a handler takes a struct instead of reading
//! options by name.

use std::fmt;
use std::future::Future;

use super::coerce::coerce_value;
use super::context::CommandContext;
use super::handler::BoxError;
use super::limits::MAX_SAFE_INTEGER;
use super::registry::CommandRegistry;
use super::types::{CommandArgValue, CommandArgs, CommandDeclaration, CommandOptionType};
use super::validate::{kind_phrase, DeclarationError, Excerpt};

/// A command as a Rust type: its declaration, and its value built from an
/// invocation's arguments.
///
/// Usually derived with `#[derive(Command)]` (feature `macros`, on by
/// default), which also checks at compile time every rule of
/// [`validate_declaration`](crate::validate_declaration) it can know:
///
/// | source | gives |
/// |---|---|
/// | `#[command(name = "...")]`, else the struct name in kebab case (`RollDice` → `roll-dice`) | the command name |
/// | `#[command(description = "...")]`, else the doc comment | the command description |
/// | each named field, in declared order | one option, named after the field (`r#type` → `type`) or `#[option(name = "...")]` |
/// | the field's doc comment, or `#[option(description = "...")]` | the option description |
/// | `Option<T>` / any other `T` | an optional / a required option |
/// | `T`'s [`CommandOptionValue::KIND`]; for a `String` field `#[option(kind = "user" \| "channel" \| "role")]` | the option type |
/// | `#[option(choices("6", "20"))]`, or an enum deriving [`CommandChoice`] | the choices |
///
/// A doc comment becomes a description with each line trimmed and the
/// non-blank lines joined by single spaces. A missing doc comment, a name
/// breaking `^[a-z0-9_-]{1,32}$`, a description outside 1 to 100
/// characters, more than 25 options, duplicate option names, a required
/// field after an `Option` one, choices on a `bool`, and empty, too many,
/// too long, duplicate or ill-typed choices are compile errors on the field
/// or attribute at fault.
///
/// ```
/// use botlane::{
///     validate_declaration, CommandArgValue, CommandArgs, CommandOptionType, Command, UserId,
/// };
///
/// /// Roll some dice
/// #[derive(Command, Debug, PartialEq)]
/// struct Roll {
///     /// How many dice
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
/// assert_eq!(decl.options[1].choices.as_deref(), Some(&["6".into(), "20".into()][..]));
/// assert_eq!(decl.options[2].kind, CommandOptionType::User);
/// assert!(validate_declaration(&decl).is_ok());
///
/// let args = CommandArgs::from([("count".to_string(), CommandArgValue::Integer(2))]);
/// assert_eq!(Roll::from_args(&args)?, Roll { count: 2, sides: None, player: None });
///
/// let too_many = CommandArgs::from([("count".to_string(), CommandArgValue::Integer(300))]);
/// assert_eq!(
///     Roll::from_args(&too_many).unwrap_err().to_string(),
///     "option \"count\": 300 is out of range 0..=255"
/// );
/// # Ok::<(), botlane::ArgsError>(())
/// ```
pub trait Command: Sized {
    /// The declaration registered for this command.
    fn declaration() -> CommandDeclaration;

    /// Builds the value from an invocation's arguments (as
    /// [`CommandContext::args`] gives them).
    ///
    /// The registry has already coerced the arguments to the declared types
    /// and checked their choices on both lanes; this checks that every
    /// argument is declared, every required one is present and every value
    /// converts to its field's type.
    fn from_args(args: &CommandArgs) -> Result<Self, ArgsError>;
}

/// A Rust type that can hold the value of one option.
///
/// Implemented for `String`, `i64` and the other integer types up to 64 bits
/// (with range checks), `f64`, `bool`, [`UserId`], [`ChannelId`],
/// [`RoleId`], and every [`CommandChoice`] enum.
///
/// ```
/// use botlane::{ArgValueError, CommandArgValue, CommandOptionType, CommandOptionValue};
///
/// assert_eq!(<u8 as CommandOptionValue>::KIND, CommandOptionType::Integer);
/// assert_eq!(u8::from_arg(&CommandArgValue::Integer(6)), Ok(6));
/// // Strings are read by the text lane's coercion table.
/// assert_eq!(u8::from_arg(&CommandArgValue::from("6")), Ok(6));
/// assert!(matches!(
///     u8::from_arg(&CommandArgValue::Integer(-1)),
///     Err(ArgValueError::OutOfRange { min: 0, max: 255, .. })
/// ));
/// assert!(matches!(
///     bool::from_arg(&CommandArgValue::Integer(1)),
///     Err(ArgValueError::WrongType { .. })
/// ));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the value of a command option",
    label = "not an option value type",
    note = "an option field is a String, an integer type up to 64 bits, f64, bool, UserId, \
            ChannelId, RoleId or an enum deriving CommandChoice, or an Option of one"
)]
pub trait CommandOptionValue: Sized {
    /// The option type a field of this type declares.
    const KIND: CommandOptionType;

    /// Converts one argument value. Strings are read by the coercion table
    /// of the text lane, so `"6"` serves an integer.
    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError>;

    /// The choices a field of this type declares when its attribute gives
    /// none: the variants of a [`CommandChoice`] enum, `None` for the rest.
    fn choices() -> Option<Vec<String>> {
        None
    }
}

/// A fieldless enum whose variants are the choices of a string option.
///
/// Usually derived with `#[derive(CommandChoice)]`: each variant's choice is
/// its name in kebab case (`BigRed` → `big-red`) or `#[choice(name = "...")]`.
/// An empty enum, more than 25 variants, a choice longer than 100 characters
/// and duplicate choices are compile errors.
///
/// ```
/// use botlane::{Command, CommandArgValue, CommandArgs, CommandChoice};
///
/// #[derive(CommandChoice, Debug, PartialEq)]
/// enum Color {
///     Red,
///     #[choice(name = "sky blue")]
///     SkyBlue,
/// }
///
/// /// Paint the channel
/// #[derive(Command)]
/// struct Paint {
///     /// Which color
///     color: Color,
/// }
///
/// assert_eq!(Color::CHOICES, ["red", "sky blue"]);
/// assert_eq!(Color::SkyBlue.as_choice(), "sky blue");
/// let decl = Paint::declaration();
/// assert_eq!(decl.options[0].choices.as_deref(), Some(&["red".into(), "sky blue".into()][..]));
///
/// let args = CommandArgs::from([("color".to_string(), CommandArgValue::from("green"))]);
/// assert_eq!(
///     Paint::from_args(&args).err().map(|e| e.to_string()).as_deref(),
///     Some("option \"color\": \"green\" is not one of \"red\", \"sky blue\"")
/// );
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the value of a command option",
    label = "not an option value type",
    note = "an option field is a String, an integer type up to 64 bits, f64, bool, UserId, \
            ChannelId, RoleId or an enum deriving CommandChoice, or an Option of one"
)]
pub trait CommandChoice: Sized + 'static {
    /// The choice of every variant, in declared order.
    const CHOICES: &'static [&'static str];

    /// This variant's choice.
    fn as_choice(&self) -> &'static str;

    /// The variant whose choice is `choice` exactly.
    fn from_choice(choice: &str) -> Option<Self>;
}

impl<T: CommandChoice> CommandOptionValue for T {
    const KIND: CommandOptionType = CommandOptionType::String;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
        match value {
            CommandArgValue::String(s) => {
                T::from_choice(s).ok_or_else(|| ArgValueError::UnknownChoice {
                    value: s.clone(),
                    choices: T::CHOICES,
                })
            }
            other => Err(wrong_type(Self::KIND, other)),
        }
    }

    fn choices() -> Option<Vec<String>> {
        Some(T::CHOICES.iter().map(|c| (*c).to_owned()).collect())
    }
}

/// Why one argument value does not convert to its field's type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgValueError {
    /// The value is of another type and does not coerce.
    #[error("expected {}, got {}", kind_phrase(.expected), Described(.got))]
    WrongType {
        /// The option type the field reads.
        expected: CommandOptionType,
        /// The value given.
        got: CommandArgValue,
    },
    /// An integer outside the range of the field's type.
    #[error("{value} is out of range {min}..={max}")]
    OutOfRange {
        /// The value given.
        value: i64,
        /// The smallest value the field holds.
        min: i64,
        /// The largest value the field holds (at most 2^53 − 1, the largest
        /// integer an option carries).
        max: i64,
    },
    /// A string that is none of a [`CommandChoice`] enum's choices.
    #[error("{} is not one of {}", Excerpt(.value), ChoiceList(.choices))]
    UnknownChoice {
        /// The value given.
        value: String,
        /// The enum's choices.
        choices: &'static [&'static str],
    },
}

/// Why an invocation's arguments do not make a [`Command`] value; names the
/// option at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgsError {
    /// A required option is absent.
    #[error("option {} is required but missing", Excerpt(.option))]
    Missing {
        /// The option's name.
        option: String,
    },
    /// An argument names no option of the command.
    #[error("option {} is not declared by this command", Excerpt(.option))]
    Undeclared {
        /// The argument's name.
        option: String,
    },
    /// A value does not convert to its field's type.
    #[error("option {}: {error}", Excerpt(.option))]
    Invalid {
        /// The option's name.
        option: String,
        /// What is wrong with the value.
        error: ArgValueError,
    },
}

impl ArgsError {
    /// The name of the option at fault.
    ///
    /// ```
    /// use botlane::{required_arg, CommandArgs};
    /// let err = required_arg::<i64>(&CommandArgs::new(), "count").unwrap_err();
    /// assert_eq!(err.option(), "count");
    /// ```
    pub fn option(&self) -> &str {
        match self {
            Self::Missing { option }
            | Self::Undeclared { option }
            | Self::Invalid { option, .. } => option,
        }
    }
}

/// An argument value in a message: its type, then the value (quoted and cut
/// like every user-supplied value).
struct Described<'a>(&'a CommandArgValue);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            CommandArgValue::String(s) => write!(f, "the string {}", Excerpt(s)),
            CommandArgValue::Integer(i) => write!(f, "the integer {i}"),
            CommandArgValue::Boolean(b) => write!(f, "the boolean {b}"),
            number @ CommandArgValue::Number(_) => write!(f, "the number {number}"),
        }
    }
}

struct ChoiceList<'a>(&'a [&'a str]);

impl fmt::Display for ChoiceList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, choice) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", Excerpt(choice))?;
        }
        Ok(())
    }
}

fn wrong_type(expected: CommandOptionType, got: &CommandArgValue) -> ArgValueError {
    ArgValueError::WrongType {
        expected,
        got: got.clone(),
    }
}

/// `value` coerced to `kind` by the coercion table.
fn coerced(
    kind: CommandOptionType,
    value: &CommandArgValue,
) -> Result<CommandArgValue, ArgValueError> {
    coerce_value(kind, value).ok_or_else(|| wrong_type(kind, value))
}

/// Fails on the first argument whose name is not in `declared`; used by
/// derived [`Command::from_args`].
///
/// ```
/// use botlane::{check_arg_names, ArgsError, CommandArgs};
///
/// let args = CommandArgs::from([("cuont".to_string(), 2_i64.into())]);
/// assert!(check_arg_names(&args, &["cuont", "sides"]).is_ok());
/// assert_eq!(
///     check_arg_names(&args, &["count", "sides"]),
///     Err(ArgsError::Undeclared { option: "cuont".into() })
/// );
/// ```
pub fn check_arg_names(args: &CommandArgs, declared: &[&str]) -> Result<(), ArgsError> {
    match args.keys().find(|key| !declared.contains(&key.as_str())) {
        Some(key) => Err(ArgsError::Undeclared {
            option: key.clone(),
        }),
        None => Ok(()),
    }
}

/// The value of optional option `option`, `None` when it is unfilled.
///
/// ```
/// use botlane::{optional_arg, CommandArgs};
///
/// let args = CommandArgs::from([("sides".to_string(), 6_i64.into())]);
/// assert_eq!(optional_arg::<u32>(&args, "sides")?, Some(6));
/// assert_eq!(optional_arg::<u32>(&args, "label")?, None);
/// assert!(optional_arg::<bool>(&args, "sides").is_err());
/// # Ok::<(), botlane::ArgsError>(())
/// ```
pub fn optional_arg<T: CommandOptionValue>(
    args: &CommandArgs,
    option: &str,
) -> Result<Option<T>, ArgsError> {
    args.get(option)
        .map(|value| {
            T::from_arg(value).map_err(|error| ArgsError::Invalid {
                option: option.to_owned(),
                error,
            })
        })
        .transpose()
}

/// The value of required option `option`; [`ArgsError::Missing`] when it is
/// unfilled.
///
/// ```
/// use botlane::{required_arg, ArgsError, CommandArgs};
///
/// let args = CommandArgs::from([("label".to_string(), "fire".into())]);
/// assert_eq!(required_arg::<String>(&args, "label")?, "fire");
/// assert_eq!(
///     required_arg::<String>(&args, "count"),
///     Err(ArgsError::Missing { option: "count".into() })
/// );
/// # Ok::<(), botlane::ArgsError>(())
/// ```
pub fn required_arg<T: CommandOptionValue>(
    args: &CommandArgs,
    option: &str,
) -> Result<T, ArgsError> {
    optional_arg(args, option)?.ok_or_else(|| ArgsError::Missing {
        option: option.to_owned(),
    })
}

impl CommandOptionValue for String {
    const KIND: CommandOptionType = CommandOptionType::String;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
        match coerced(Self::KIND, value)? {
            CommandArgValue::String(s) => Ok(s),
            other => Err(wrong_type(Self::KIND, &other)),
        }
    }
}

impl CommandOptionValue for i64 {
    const KIND: CommandOptionType = CommandOptionType::Integer;

    /// Within ±(2^53 − 1), the integers an option carries.
    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
        if let CommandArgValue::Integer(i) = value {
            if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(i) {
                return Err(ArgValueError::OutOfRange {
                    value: *i,
                    min: -MAX_SAFE_INTEGER,
                    max: MAX_SAFE_INTEGER,
                });
            }
        }
        match coerced(Self::KIND, value)? {
            CommandArgValue::Integer(i) => Ok(i),
            other => Err(wrong_type(Self::KIND, &other)),
        }
    }
}

macro_rules! narrow_integer {
    ($($t:ty),*) => {$(
        impl CommandOptionValue for $t {
            const KIND: CommandOptionType = CommandOptionType::Integer;

            fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
                let wide = i64::from_arg(value)?;
                <$t>::try_from(wide).map_err(|_| ArgValueError::OutOfRange {
                    value: wide,
                    // A bound beyond ±(2^53 − 1) is reported as that limit,
                    // the widest an option's integer can be.
                    min: i64::try_from(<$t>::MIN)
                        .map_or(-MAX_SAFE_INTEGER, |m| m.max(-MAX_SAFE_INTEGER)),
                    max: i64::try_from(<$t>::MAX)
                        .map_or(MAX_SAFE_INTEGER, |m| m.min(MAX_SAFE_INTEGER)),
                })
            }
        }
    )*};
}

narrow_integer!(i8, i16, i32, isize, u8, u16, u32, u64, usize);

impl CommandOptionValue for f64 {
    const KIND: CommandOptionType = CommandOptionType::Number;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
        match coerced(Self::KIND, value)? {
            CommandArgValue::Number(n) => Ok(n),
            other => Err(wrong_type(Self::KIND, &other)),
        }
    }
}

impl CommandOptionValue for bool {
    const KIND: CommandOptionType = CommandOptionType::Boolean;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
        match coerced(Self::KIND, value)? {
            CommandArgValue::Boolean(b) => Ok(b),
            other => Err(wrong_type(Self::KIND, &other)),
        }
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:ident, $example:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub String);

        impl $name {
            /// The id as text.
            ///
            /// ```
            #[doc = concat!("let id = botlane::", stringify!($name), "(\"", $example, "\".into());")]
            #[doc = concat!("assert_eq!(id.as_str(), \"", $example, "\");")]
            /// ```
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl CommandOptionValue for $name {
            const KIND: CommandOptionType = CommandOptionType::$kind;

            /// A non-empty string.
            fn from_arg(value: &CommandArgValue) -> Result<Self, ArgValueError> {
                match coerced(Self::KIND, value)? {
                    CommandArgValue::String(s) => Ok(Self(s)),
                    other => Err(wrong_type(Self::KIND, &other)),
                }
            }
        }
    };
}

id_type!(
    /// The value of a `user` option: an opaque, non-empty user id.
    UserId,
    User,
    "u1"
);
id_type!(
    /// The value of a `channel` option: an opaque, non-empty channel id.
    ChannelId,
    Channel,
    "c1"
);
id_type!(
    /// The value of a `role` option: an opaque, non-empty role id.
    RoleId,
    Role,
    "r1"
);

/// A handler of the typed command `C`: an async function or closure taking
/// the [`CommandContext`] and the converted `C`, failing with any error that
/// converts to a [`BoxError`].
///
/// Implemented for every such function; it exists so that
/// [`CommandRegistry::command`] can be called as `command::<Roll>(...)` with
/// the closure's argument types inferred.
pub trait TypedHandler<C>:
    Fn(CommandContext, C) -> <Self as TypedHandler<C>>::Future + Send + Sync + 'static
{
    /// The future the handler returns.
    type Future: Future<Output = Result<(), Self::Error>> + Send + 'static;
    /// The handler's error.
    type Error: Into<BoxError>;
}

impl<C, F, Fut, E> TypedHandler<C> for F
where
    F: Fn(CommandContext, C) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: Into<BoxError>,
{
    type Future = Fut;
    type Error = E;
}

impl CommandRegistry {
    /// Registers the typed command `C` with a handler that takes the
    /// converted arguments; otherwise like [`register`](Self::register).
    ///
    /// When the arguments do not convert (see [`Command::from_args`]) the
    /// handler is not called and the [`ArgsError`] is the handler's error,
    /// reported like any handler failure.
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
        handler: impl TypedHandler<C>,
    ) -> Result<&mut Self, DeclarationError> {
        self.register(C::declaration(), move |ctx: CommandContext| {
            let call = C::from_args(ctx.args()).map(|typed| handler(ctx, typed));
            async move {
                match call {
                    Ok(fut) => fut.await.map_err(Into::into),
                    Err(error) => Err(BoxError::from(error)),
                }
            }
        })
    }
}
