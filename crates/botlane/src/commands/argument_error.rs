//! [`ArgumentError`]: arguments that do not fit a command, on either lane,
//! told in words meant for the user who sent them.

use std::fmt;

use super::excerpt::Excerpt;
use super::option_type::CommandOptionType;
use super::types::{format_number, CommandArgValue};

/// The type of an argument value as it was given. An argument error names
/// this, never the value itself, which may be private.
///
/// ```
/// use botlane::framework::ArgValueKind;
/// use botlane::CommandArgValue;
/// assert_eq!(CommandArgValue::from("two").value_kind(), ArgValueKind::String);
/// assert_eq!(ArgValueKind::Integer.to_string(), "an integer");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgValueKind {
    /// Text (also an id).
    String,
    /// A whole number.
    Integer,
    /// A floating-point number.
    Number,
    /// A boolean.
    Boolean,
}

impl fmt::Display for ArgValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::String => "a string",
            Self::Integer => "an integer",
            Self::Number => "a number",
            Self::Boolean => "a boolean",
        })
    }
}

impl CommandArgValue {
    /// The type of this value.
    ///
    /// ```
    /// use botlane::framework::ArgValueKind;
    /// use botlane::CommandArgValue;
    /// assert_eq!(CommandArgValue::Number(0.5).value_kind(), ArgValueKind::Number);
    /// ```
    pub fn value_kind(&self) -> ArgValueKind {
        match self {
            Self::String(_) => ArgValueKind::String,
            Self::Integer(_) => ArgValueKind::Integer,
            Self::Number(_) => ArgValueKind::Number,
            Self::Boolean(_) => ArgValueKind::Boolean,
        }
    }
}

/// The rule an argument breaks. Its `Display` is the predicate of a
/// sentence whose subject is the option (`must be at most 3600`).
///
/// ```
/// use botlane::ArgumentRule;
/// assert_eq!(ArgumentRule::AboveMax { max: 3600.0 }.to_string(), "must be at most 3600");
/// assert_eq!(
///     ArgumentRule::OutOfRange { min: 0, max: 255 }.to_string(),
///     "must be a whole number from 0 to 255"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentRule {
    /// A required option is not given.
    #[error("is required")]
    Missing,
    /// An argument names no option of the command.
    #[error("is not an option of this command")]
    Unknown,
    /// A value that is not of (and does not coerce to) the option's type.
    #[error("expects {}", expectation(*.expected))]
    WrongType {
        /// The option's declared type.
        expected: CommandOptionType,
    },
    /// A value that is none of the option's choices.
    #[error("must be one of {}", .choices.join(", "))]
    NotInChoices {
        /// The allowed values, in declared order.
        choices: Vec<String>,
    },
    /// A number below the option's [`min_value`](crate::CommandOption::min_value).
    #[error("must be at least {}", format_number(*.min))]
    BelowMin {
        /// The smallest value allowed.
        min: f64,
    },
    /// A number above the option's [`max_value`](crate::CommandOption::max_value).
    #[error("must be at most {}", format_number(*.max))]
    AboveMax {
        /// The largest value allowed.
        max: f64,
    },
    /// A string shorter than the option's [`min_length`](crate::CommandOption::min_length).
    #[error("must be at least {min_length} {}", characters(*.min_length))]
    TooShort {
        /// The fewest characters allowed.
        min_length: usize,
    },
    /// A string longer than the option's [`max_length`](crate::CommandOption::max_length).
    #[error("must be at most {max_length} {}", characters(*.max_length))]
    TooLong {
        /// The most characters allowed.
        max_length: usize,
    },
    /// An integer that fits the declaration but not the Rust type of a typed
    /// command's field (300 for a `u8`).
    #[error("must be a whole number from {min} to {max}")]
    OutOfRange {
        /// The smallest value the field holds.
        min: i64,
        /// The largest value the field holds (at most 2^53 − 1, the largest
        /// integer an option carries).
        max: i64,
    },
}

fn characters(n: usize) -> &'static str {
    if n == 1 {
        "character"
    } else {
        "characters"
    }
}

/// What a value of `kind` must look like, in words for users.
pub(crate) fn expectation(kind: CommandOptionType) -> &'static str {
    match kind {
        CommandOptionType::String => "a string",
        CommandOptionType::Integer => "an integer",
        CommandOptionType::Number => "a number",
        CommandOptionType::Boolean => "true or false (or yes/no, 1/0)",
        CommandOptionType::User => "a non-empty user id",
        CommandOptionType::Channel => "a non-empty channel id",
        CommandOptionType::Role => "a non-empty role id",
    }
}

/// Arguments that do not fit a command: which option, which rule, the type
/// of the value given (never the value), and the command's usage line.
///
/// One type for both lanes and for typed access: a structured invocation
/// checked by [`CommandDeclaration::check_invocation`](crate::CommandDeclaration::check_invocation),
/// a text invocation whose arguments parse but break a bound
/// ([`CommandDeclaration::check_bounds`](crate::CommandDeclaration::check_bounds)),
/// a text parse error that concerns one option
/// ([`ParseError::argument_error`](crate::ParseError::argument_error)), and a
/// typed conversion ([`Command::from_args`](crate::Command::from_args),
/// [`CommandContext::require`](crate::CommandContext::require)).
///
/// Its `Display` is written for the user who sent the invocation, so it can
/// be sent as an answer: one short sentence naming the option and the rule,
/// then, when the usage line is known, `usage: ` and the line on its own
/// line. It quotes only declared names and choices and the option name
/// given (escaped, at most 40 characters), never a value.
///
/// ```
/// use botlane::{ArgumentRule, CommandArgValue, CommandArgs, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let remind = CommandDeclaration::new("remind", "Remind me")
///     .option(CommandOption::new("minutes", "When", CommandOptionType::Integer).required(true).min(1).max(3600));
/// let args = CommandArgs::from([("minutes".to_string(), CommandArgValue::Integer(5000))]);
/// let err = remind.check_invocation(args, None).unwrap_err();
/// assert_eq!(err.option(), "minutes");
/// assert_eq!(err.rule(), &ArgumentRule::AboveMax { max: 3600.0 });
/// assert_eq!(
///     err.to_string(),
///     "option \"minutes\" must be at most 3600\nusage: /remind <minutes (1 to 3600)>"
/// );
/// ```
#[derive(Clone, PartialEq)]
pub struct ArgumentError(
    // Boxed so that a `Result` carrying it stays small on the success path.
    Box<Fields>,
);

#[derive(Debug, Clone, PartialEq)]
struct Fields {
    option: String,
    rule: ArgumentRule,
    value_kind: Option<ArgValueKind>,
    usage: Option<String>,
}

impl ArgumentError {
    /// An error about option `option` breaking `rule`, with no value type and
    /// no usage line yet.
    ///
    /// ```
    /// use botlane::{ArgumentError, ArgumentRule};
    /// let err = ArgumentError::new("count", ArgumentRule::Missing);
    /// assert_eq!(err.to_string(), "option \"count\" is required");
    /// ```
    pub fn new(option: impl Into<String>, rule: ArgumentRule) -> Self {
        Self(Box::new(Fields {
            option: option.into(),
            rule,
            value_kind: None,
            usage: None,
        }))
    }

    /// Records the type of the value given (builder style).
    ///
    /// ```
    /// use botlane::framework::ArgValueKind;
    /// use botlane::{ArgumentError, ArgumentRule, CommandOptionType};
    /// let err = ArgumentError::new("count", ArgumentRule::WrongType { expected: CommandOptionType::Integer })
    ///     .with_value_kind(ArgValueKind::Boolean);
    /// assert_eq!(err.to_string(), "option \"count\" expects an integer, got a boolean");
    /// ```
    #[must_use]
    pub fn with_value_kind(mut self, kind: ArgValueKind) -> Self {
        self.0.value_kind = Some(kind);
        self
    }

    /// Sets the usage line (builder style), replacing any earlier one.
    ///
    /// ```
    /// use botlane::{ArgumentError, ArgumentRule};
    /// let err = ArgumentError::new("count", ArgumentRule::Missing).with_usage("/roll <count>");
    /// assert_eq!(err.to_string(), "option \"count\" is required\nusage: /roll <count>");
    /// ```
    #[must_use]
    pub fn with_usage(mut self, usage: impl Into<String>) -> Self {
        self.0.usage = Some(usage.into());
        self
    }

    /// The option at fault: its declared name, or for
    /// [`ArgumentRule::Unknown`] the name given.
    pub fn option(&self) -> &str {
        &self.0.option
    }

    /// The rule broken.
    pub fn rule(&self) -> &ArgumentRule {
        &self.0.rule
    }

    /// The type of the value given; `None` when no value was given
    /// ([`ArgumentRule::Missing`]) or the type was not recorded.
    pub fn value_kind(&self) -> Option<ArgValueKind> {
        self.0.value_kind
    }

    /// The command's usage line, e.g. `/roll <count> [sides]`, when known.
    pub fn usage(&self) -> Option<&str> {
        self.0.usage.as_deref()
    }
}

/// The same output as a derived `Debug` of a struct with these fields; the
/// box is an implementation detail.
impl fmt::Debug for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Fields {
            option,
            rule,
            value_kind,
            usage,
        } = &*self.0;
        f.debug_struct("ArgumentError")
            .field("option", option)
            .field("rule", rule)
            .field("value_kind", value_kind)
            .field("usage", usage)
            .finish()
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let option = Excerpt(&self.0.option);
        match &self.0.rule {
            ArgumentRule::Unknown => write!(f, "this command has no option {option}")?,
            rule => write!(f, "option {option} {rule}")?,
        }
        if let (ArgumentRule::WrongType { .. }, Some(kind)) = (&self.0.rule, self.0.value_kind) {
            write!(f, ", got {kind}")?;
        }
        if let Some(usage) = &self.0.usage {
            write!(f, "\nusage: {usage}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgumentError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_reads_as_a_sentence_about_the_option() {
        let cases = [
            (ArgumentRule::Missing, "option \"o\" is required"),
            (ArgumentRule::Unknown, "this command has no option \"o\""),
            (
                ArgumentRule::WrongType {
                    expected: CommandOptionType::Boolean,
                },
                "option \"o\" expects true or false (or yes/no, 1/0)",
            ),
            (
                ArgumentRule::NotInChoices {
                    choices: vec!["6".into(), "20".into()],
                },
                "option \"o\" must be one of 6, 20",
            ),
            (
                ArgumentRule::BelowMin { min: -0.5 },
                "option \"o\" must be at least -0.5",
            ),
            (
                ArgumentRule::AboveMax { max: 1e300 },
                "option \"o\" must be at most 1e300",
            ),
            (
                ArgumentRule::TooShort { min_length: 1 },
                "option \"o\" must be at least 1 character",
            ),
            (
                ArgumentRule::TooLong { max_length: 20 },
                "option \"o\" must be at most 20 characters",
            ),
            (
                ArgumentRule::OutOfRange {
                    min: -128,
                    max: 127,
                },
                "option \"o\" must be a whole number from -128 to 127",
            ),
        ];
        for (rule, text) in cases {
            assert_eq!(ArgumentError::new("o", rule).to_string(), text);
        }
    }

    #[test]
    fn the_value_type_is_shown_only_for_a_wrong_type() {
        let err = ArgumentError::new("o", ArgumentRule::AboveMax { max: 3.0 })
            .with_value_kind(ArgValueKind::Integer);
        assert_eq!(err.to_string(), "option \"o\" must be at most 3");
        assert_eq!(err.value_kind(), Some(ArgValueKind::Integer));
    }

    #[test]
    fn a_hostile_option_name_is_escaped_and_cut() {
        let name = format!("a\nusage: /admin{}", "x".repeat(60));
        let text = ArgumentError::new(name, ArgumentRule::Unknown).to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.ends_with("…\""), "{text}");
    }

    #[test]
    fn debug_shows_the_fields_as_a_plain_struct() {
        let err = ArgumentError::new("count", ArgumentRule::Missing).with_usage("/roll <count>");
        assert_eq!(
            format!("{err:?}"),
            r#"ArgumentError { option: "count", rule: Missing, value_kind: None, usage: Some("/roll <count>") }"#
        );
    }
}
