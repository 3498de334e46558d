//! The Rust types that hold one option's value, converted both ways.

use std::fmt;

use crate::commands::argument_error::ArgumentRule;
use crate::commands::coerce::coerce_value;
use crate::commands::limits::MAX_SAFE_INTEGER;
use crate::commands::option_type::CommandOptionType;
use crate::commands::types::CommandArgValue;

/// A Rust type that can hold the value of one option.
///
/// Implemented for `String`, `i64` and the other integer types up to 64 bits
/// (with range checks), `f64`, `bool`, [`UserId`], [`ChannelId`],
/// [`RoleId`], and every [`CommandChoice`] enum. A conversion failure is the
/// [`ArgumentRule`] the value breaks; the caller adds the option name.
///
/// For a value that must stay within bounds, prefer the option's bounds
/// (`#[option(min = 1, max = 3600)]`) to a newtype: they are checked at
/// register time, enforced on both lanes, and shown in usage lines and help.
///
/// ```
/// use botlane::framework::CommandOptionValue;
/// use botlane::{ArgumentRule, CommandArgValue, CommandOptionType};
///
/// assert_eq!(<u8 as CommandOptionValue>::KIND, CommandOptionType::Integer);
/// assert_eq!(u8::from_arg(&CommandArgValue::Integer(6)), Ok(6));
/// // Strings are read by the text lane's coercion table.
/// assert_eq!(u8::from_arg(&CommandArgValue::from("6")), Ok(6));
/// assert_eq!(
///     u8::from_arg(&CommandArgValue::Integer(-1)),
///     Err(ArgumentRule::OutOfRange { min: 0, max: 255 })
/// );
/// assert_eq!(
///     bool::from_arg(&CommandArgValue::Integer(1)),
///     Err(ArgumentRule::WrongType { expected: CommandOptionType::Boolean })
/// );
/// assert_eq!(6_u8.to_arg(), CommandArgValue::Integer(6));
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
    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule>;

    /// The argument value of this value, which [`from_arg`](Self::from_arg)
    /// reads back. A value no option can carry (an integer beyond
    /// ±(2^53 − 1), a non-finite `f64`) is still written, and refused later
    /// by [`format_invocation_text`](crate::format_invocation_text).
    fn to_arg(&self) -> CommandArgValue;

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
///     Some("option \"color\" must be one of red, sky blue")
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

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
        match value {
            CommandArgValue::String(s) => {
                T::from_choice(s).ok_or_else(|| ArgumentRule::NotInChoices {
                    choices: T::CHOICES.iter().map(|c| (*c).to_owned()).collect(),
                })
            }
            _ => Err(wrong_type(Self::KIND)),
        }
    }

    fn to_arg(&self) -> CommandArgValue {
        CommandArgValue::String(self.as_choice().to_owned())
    }

    fn choices() -> Option<Vec<String>> {
        Some(T::CHOICES.iter().map(|c| (*c).to_owned()).collect())
    }
}

fn wrong_type(expected: CommandOptionType) -> ArgumentRule {
    ArgumentRule::WrongType { expected }
}

/// `value` coerced to `kind` by the coercion table.
fn coerced(
    kind: CommandOptionType,
    value: &CommandArgValue,
) -> Result<CommandArgValue, ArgumentRule> {
    coerce_value(kind, value).ok_or_else(|| wrong_type(kind))
}

impl CommandOptionValue for String {
    const KIND: CommandOptionType = CommandOptionType::String;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
        match coerced(Self::KIND, value)? {
            CommandArgValue::String(s) => Ok(s),
            _ => Err(wrong_type(Self::KIND)),
        }
    }

    fn to_arg(&self) -> CommandArgValue {
        CommandArgValue::String(self.clone())
    }
}

impl CommandOptionValue for i64 {
    const KIND: CommandOptionType = CommandOptionType::Integer;

    /// Within ±(2^53 − 1), the integers an option carries.
    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
        if let CommandArgValue::Integer(i) = value
            && !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(i)
        {
            return Err(ArgumentRule::OutOfRange {
                min: -MAX_SAFE_INTEGER,
                max: MAX_SAFE_INTEGER,
            });
        }
        match coerced(Self::KIND, value)? {
            CommandArgValue::Integer(i) => Ok(i),
            _ => Err(wrong_type(Self::KIND)),
        }
    }

    fn to_arg(&self) -> CommandArgValue {
        CommandArgValue::Integer(*self)
    }
}

macro_rules! narrow_integer {
    ($($t:ty),*) => {$(
        impl CommandOptionValue for $t {
            const KIND: CommandOptionType = CommandOptionType::Integer;

            fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
                let wide = i64::from_arg(value)?;
                <$t>::try_from(wide).map_err(|_| ArgumentRule::OutOfRange {
                    // A bound beyond ±(2^53 − 1) is reported as that limit,
                    // the widest an option's integer can be.
                    min: i64::try_from(<$t>::MIN)
                        .map_or(-MAX_SAFE_INTEGER, |m| m.max(-MAX_SAFE_INTEGER)),
                    max: i64::try_from(<$t>::MAX)
                        .map_or(MAX_SAFE_INTEGER, |m| m.min(MAX_SAFE_INTEGER)),
                })
            }

            /// Saturating at `i64::MAX`, which formatting then refuses as
            /// beyond the largest integer an option carries.
            fn to_arg(&self) -> CommandArgValue {
                CommandArgValue::Integer(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
    )*};
}

narrow_integer!(i8, i16, i32, isize, u8, u16, u32, u64, usize);

impl CommandOptionValue for f64 {
    const KIND: CommandOptionType = CommandOptionType::Number;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
        match coerced(Self::KIND, value)? {
            CommandArgValue::Number(n) => Ok(n),
            _ => Err(wrong_type(Self::KIND)),
        }
    }

    fn to_arg(&self) -> CommandArgValue {
        CommandArgValue::Number(*self)
    }
}

impl CommandOptionValue for bool {
    const KIND: CommandOptionType = CommandOptionType::Boolean;

    fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
        match coerced(Self::KIND, value)? {
            CommandArgValue::Boolean(b) => Ok(b),
            _ => Err(wrong_type(Self::KIND)),
        }
    }

    fn to_arg(&self) -> CommandArgValue {
        CommandArgValue::Boolean(*self)
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
            #[doc = concat!("let id = botlane::framework::", stringify!($name), "(\"", $example, "\".into());")]
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
            fn from_arg(value: &CommandArgValue) -> Result<Self, ArgumentRule> {
                match coerced(Self::KIND, value)? {
                    CommandArgValue::String(s) => Ok(Self(s)),
                    _ => Err(wrong_type(Self::KIND)),
                }
            }

            fn to_arg(&self) -> CommandArgValue {
                CommandArgValue::String(self.0.clone())
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

#[cfg(test)]
mod tests {
    use super::*;
    use CommandArgValue as V;

    #[test]
    fn every_value_type_reads_back_what_it_writes() {
        fn round<T: CommandOptionValue + PartialEq + fmt::Debug>(value: T) {
            assert_eq!(T::from_arg(&value.to_arg()), Ok(value));
        }
        round(String::from("two words"));
        round(-7_i8);
        round(65_535_u16);
        round(MAX_SAFE_INTEGER);
        round(u64::try_from(MAX_SAFE_INTEGER).unwrap_or_default());
        round(0.25_f64);
        round(true);
        round(UserId("u1".into()));
        round(ChannelId("c1".into()));
        round(RoleId("r1".into()));
    }

    #[test]
    fn values_no_option_carries_are_written_and_refused_on_read() {
        assert_eq!(u64::MAX.to_arg(), V::Integer(i64::MAX));
        assert!(u64::from_arg(&u64::MAX.to_arg()).is_err());
        assert!(f64::from_arg(&f64::NAN.to_arg()).is_err());
    }
}
