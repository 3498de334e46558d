//! The errors of the text lane: [`ParseError`] for a line that does not
//! parse, [`FormatError`] for arguments that cannot be written as a line.

use std::fmt;
use std::ops::Range;

use crate::commands::argument_error::{expectation, ArgValueKind, ArgumentError, ArgumentRule};
use crate::commands::option_type::CommandOptionType;

/// What went wrong while parsing a line (text-grammar §6).
///
/// The kinds follow the grammar's rules: §1 ([`NotThisCommand`](Self::NotThisCommand)),
/// §2 (quotes and named values), §3 (binding) and §4 (coercion).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The line invokes another command, or none at all.
    NotThisCommand,
    /// A quoted value has no closing quote.
    UnterminatedQuote,
    /// A closing quote is followed by something other than whitespace or the end of the line.
    TextAfterClosingQuote,
    /// A named argument with nothing after the colon (`title:`).
    EmptyNamedValue,
    /// A value without a name after a named argument.
    PositionalAfterNamed,
    /// One option given twice, by name or by name after position.
    DuplicateOption,
    /// More values than the command has options.
    ExtraArgument,
    /// A required option was not given.
    MissingRequired,
    /// A value that does not coerce to the option's type.
    InvalidValue {
        /// The type the option is declared with.
        expected: CommandOptionType,
    },
    /// A value that coerces but is not one of the option's choices.
    NotInChoices {
        /// The declared choices, in declared order.
        choices: Vec<String>,
    },
}

/// A line that does not parse as an invocation of a declaration.
///
/// It says what went wrong ([`kind`](Self::kind)), which option it concerns
/// ([`option`](Self::option)), where in the line ([`span`](Self::span), a byte
/// range into the line as given), and carries the command's
/// [`usage`](Self::usage) line, so a bot can answer the user helpfully.
///
/// Its `Display` is one lower-case sentence built only from the declaration
/// (command name, option name, type, choices). It never echoes any part of
/// the input line, which may be private.
///
/// ```
/// use botlane::{parse_invocation_text, CommandDeclaration, CommandOption, CommandOptionType, ParseErrorKind};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
/// let line = "/roll two";
/// let err = parse_invocation_text(&roll, line, None).unwrap_err();
/// assert_eq!(err.kind(), &ParseErrorKind::InvalidValue { expected: CommandOptionType::Integer });
/// assert_eq!(err.option(), Some("count"));
/// assert_eq!(&line[err.span()], "two");
/// assert_eq!(err.usage(), "/roll <count>");
/// assert_eq!(err.to_string(), r#"option "count" expects an integer"#);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ParseError(
    // Boxed so that a `Result` carrying it stays small on the success path.
    Box<Fields>,
);

#[derive(Clone, PartialEq, Eq)]
struct Fields {
    kind: ParseErrorKind,
    command: String,
    option: Option<String>,
    span: Range<usize>,
    usage: String,
}

impl ParseError {
    pub(super) fn new(
        kind: ParseErrorKind,
        command: String,
        option: Option<String>,
        span: Range<usize>,
        usage: String,
    ) -> Self {
        Self(Box::new(Fields {
            kind,
            command,
            option,
            span,
            usage,
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.0.kind
    }

    /// The name of the declared command the line was parsed against.
    pub fn command(&self) -> &str {
        &self.0.command
    }

    /// The declared name of the option at fault, if the error concerns one.
    pub fn option(&self) -> Option<&str> {
        self.0.option.as_deref()
    }

    /// The bytes of the line at fault. Always a valid range of the line on
    /// character boundaries; empty (at the end of the line) for a missing
    /// required option.
    pub fn span(&self) -> Range<usize> {
        self.0.span.clone()
    }

    /// The command's usage line with the prefix used, e.g. `/roll <count> [sides] [label]`.
    pub fn usage(&self) -> &str {
        &self.0.usage
    }

    /// The same detail as an [`ArgumentError`], for the kinds that are
    /// about one option's value: [`MissingRequired`](ParseErrorKind::MissingRequired),
    /// [`InvalidValue`](ParseErrorKind::InvalidValue) and
    /// [`NotInChoices`](ParseErrorKind::NotInChoices). `None` for the kinds
    /// about the shape of the line (quotes, order, extra values, another command).
    ///
    /// The value type is always [`ArgValueKind::String`]: a text-lane value is text.
    ///
    /// ```
    /// use botlane::{parse_invocation_text, ArgumentRule, CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let roll = CommandDeclaration::new("roll", "Roll dice")
    ///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
    /// let err = parse_invocation_text(&roll, "!roll two", Some("!")).unwrap_err();
    /// let detail = err.argument_error().expect("about the value of `count`");
    /// assert_eq!(detail.rule(), &ArgumentRule::WrongType { expected: CommandOptionType::Integer });
    /// assert_eq!(detail.to_string(), "option \"count\" expects an integer, got a string\nusage: !roll <count>");
    ///
    /// let err = parse_invocation_text(&roll, "!roll \"2", Some("!")).unwrap_err();
    /// assert!(err.argument_error().is_none());
    /// ```
    pub fn argument_error(&self) -> Option<ArgumentError> {
        let rule = match &self.0.kind {
            ParseErrorKind::MissingRequired => ArgumentRule::Missing,
            ParseErrorKind::InvalidValue { expected } => ArgumentRule::WrongType {
                expected: *expected,
            },
            ParseErrorKind::NotInChoices { choices } => ArgumentRule::NotInChoices {
                choices: choices.clone(),
            },
            _ => return None,
        };
        let error =
            ArgumentError::new(self.0.option.clone()?, rule).with_usage(self.0.usage.clone());
        Some(match self.0.kind {
            ParseErrorKind::MissingRequired => error,
            _ => error.with_value_kind(ArgValueKind::String),
        })
    }

    /// The error as an answer for the user: the one-sentence `Display`, then
    /// `usage: ` and the usage line on its own line.
    ///
    /// ```
    /// use botlane::{parse_invocation_text, CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let roll = CommandDeclaration::new("roll", "Roll dice")
    ///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
    /// let err = parse_invocation_text(&roll, "/roll", None).unwrap_err();
    /// assert_eq!(err.with_usage().to_string(), "option \"count\" is required\nusage: /roll <count>");
    /// ```
    pub fn with_usage(&self) -> impl fmt::Display + '_ {
        WithUsage(self)
    }
}

struct WithUsage<'a>(&'a ParseError);

impl fmt::Display for WithUsage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\nusage: {}", self.0, self.0.usage())
    }
}

/// The same output as a derived `Debug` of a struct with these fields; the box
/// is an implementation detail.
impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Fields {
            kind,
            command,
            option,
            span,
            usage,
        } = &*self.0;
        f.debug_struct("ParseError")
            .field("kind", kind)
            .field("command", command)
            .field("option", option)
            .field("span", span)
            .field("usage", usage)
            .finish()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let command = &self.0.command;
        match (&self.0.kind, self.0.option.as_deref()) {
            (ParseErrorKind::NotThisCommand, _) => {
                write!(f, "the line does not invoke the command {command:?}")
            }
            (ParseErrorKind::UnterminatedQuote, Some(option)) => {
                write!(f, "the quoted value of option {option:?} has no closing quote")
            }
            (ParseErrorKind::UnterminatedQuote, None) => {
                f.write_str("a quoted value has no closing quote")
            }
            (ParseErrorKind::TextAfterClosingQuote, Some(option)) => write!(
                f,
                "the closing quote of option {option:?} must be followed by a space or the end of the line"
            ),
            (ParseErrorKind::TextAfterClosingQuote, None) => {
                f.write_str("a closing quote must be followed by a space or the end of the line")
            }
            (ParseErrorKind::EmptyNamedValue, option) => write!(
                f,
                "option {:?} is named but has no value after the colon",
                option.unwrap_or_default()
            ),
            (ParseErrorKind::PositionalAfterNamed, _) => f.write_str(
                "a value without a name cannot follow a named argument; write it as name:value",
            ),
            (ParseErrorKind::DuplicateOption, option) => write!(
                f,
                "option {:?} is given more than once",
                option.unwrap_or_default()
            ),
            (ParseErrorKind::ExtraArgument, _) => {
                write!(f, "too many values for the command {command:?}")
            }
            (ParseErrorKind::MissingRequired, option) => {
                write!(f, "option {:?} is required", option.unwrap_or_default())
            }
            (ParseErrorKind::InvalidValue { expected }, option) => write!(
                f,
                "option {:?} expects {}",
                option.unwrap_or_default(),
                expectation(*expected)
            ),
            (ParseErrorKind::NotInChoices { choices }, option) => write!(
                f,
                "option {:?} must be one of {}",
                option.unwrap_or_default(),
                choices.join(", ")
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// Arguments that cannot be written as a line for a declaration
/// (text-grammar §5.1). Every message names the option and the command.
///
/// ```
/// use botlane::{format_invocation_text, CommandArgs, CommandDeclaration, FormatError};
///
/// let ping = CommandDeclaration::new("ping", "Check the bot");
/// let mut args = CommandArgs::new();
/// args.insert("loud".into(), true.into());
/// let err = format_invocation_text(&ping, &args, None).unwrap_err();
/// assert!(matches!(err, FormatError::UnknownOption { .. }));
/// assert_eq!(err.to_string(), r#"command "ping" has no option "loud""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// An argument key that is not a declared option.
    #[error("command {command:?} has no option {option:?}")]
    UnknownOption {
        /// The command name.
        command: String,
        /// The argument key.
        option: String,
    },
    /// A required option without a value.
    #[error("option {option:?} of command {command:?} is required")]
    MissingRequired {
        /// The command name.
        command: String,
        /// The option name.
        option: String,
    },
    /// A value that is not one of the option's choices.
    #[error("option {option:?} of command {command:?} must be one of {}", choices.join(", "))]
    NotInChoices {
        /// The command name.
        command: String,
        /// The option name.
        option: String,
        /// The declared choices.
        choices: Vec<String>,
    },
    /// A value of another variant than the option's type, an empty id, an
    /// integer beyond ±9007199254740991 or a number that is not finite.
    #[error("option {option:?} of command {command:?} expects {}", expectation(*expected))]
    WrongType {
        /// The command name.
        command: String,
        /// The option name.
        option: String,
        /// The declared type.
        expected: CommandOptionType,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_fields_as_a_plain_struct() {
        let error = ParseError::new(
            ParseErrorKind::MissingRequired,
            "roll".into(),
            Some("count".into()),
            5..5,
            "/roll <count>".into(),
        );
        assert_eq!(
            format!("{error:?}"),
            r#"ParseError { kind: MissingRequired, command: "roll", option: Some("count"), span: 5..5, usage: "/roll <count>" }"#
        );
    }
}
