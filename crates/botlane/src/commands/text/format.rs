//! Writing the text lane: the readable line of an invocation
//! ([`format_invocation_text`]) and a command's usage line ([`usage_line`]).

use std::borrow::Cow;

use super::error::FormatError;
use super::lexer::{has_whitespace, named_option, starts_with_open_quote};
use crate::commands::bounds::bounds_phrase;
use crate::commands::coerce::in_choices;
use crate::commands::limits::DEFAULT_COMMAND_PREFIX;
use crate::commands::limits::MAX_SAFE_INTEGER;
use crate::commands::option_type::CommandOptionType;
use crate::commands::types::{format_number, CommandArgValue, CommandArgs, CommandDeclaration};

/// The usage line of a command with the given prefix (`None` means
/// [`DEFAULT_COMMAND_PREFIX`]): the prefix and name, then each option in
/// declared order, `<name>` when required and `[name]` when optional. An
/// option with local bounds shows them in words after its name:
/// `<minutes (1 to 3600)>`, `[note (up to 200 characters)]`.
///
/// ```
/// use botlane::framework::usage_line;
/// use botlane::{CommandDeclaration, CommandOption, CommandOptionType};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
///     .option(CommandOption::new("sides", "Sides per die", CommandOptionType::Integer))
///     .option(CommandOption::new("label", "What for", CommandOptionType::String));
/// assert_eq!(usage_line(&roll, None), "/roll <count> [sides] [label]");
/// assert_eq!(usage_line(&roll, Some("!")), "!roll <count> [sides] [label]");
///
/// let remind = CommandDeclaration::new("remind", "Remind me")
///     .option(CommandOption::new("minutes", "When", CommandOptionType::Integer).required(true).min(1).max(3600))
///     .option(CommandOption::new("note", "What", CommandOptionType::String).max_length(200));
/// assert_eq!(
///     usage_line(&remind, None),
///     "/remind <minutes (1 to 3600)> [note (up to 200 characters)]"
/// );
/// ```
pub fn usage_line(decl: &CommandDeclaration, prefix: Option<&str>) -> String {
    let mut usage = format!("{}{}", prefix.unwrap_or(DEFAULT_COMMAND_PREFIX), decl.name);
    for option in &decl.options {
        let (open, close) = if option.required {
            ('<', '>')
        } else {
            ('[', ']')
        };
        usage.push(' ');
        usage.push(open);
        usage.push_str(&option.name);
        if let Some(bounds) = bounds_phrase(option) {
            usage.push_str(" (");
            usage.push_str(&bounds);
            usage.push(')');
        }
        usage.push(close);
    }
    usage
}

/// Writes the readable line of an invocation of `decl` with `args`, which
/// [`parse_invocation_text`](crate::parse_invocation_text) reads back to the same `args` with the same
/// prefix (`None` means [`DEFAULT_COMMAND_PREFIX`]).
///
/// The rules (text-grammar §5):
/// 1. errors: an argument that is not a declared option, a missing required
///    option, a value outside the option's choices, a value of another
///    variant than the declared type (also an empty id, an integer beyond
///    ±9007199254740991, a number that is not finite);
/// 2. output: the prefix and the name, then the options in declared order,
///    each positionally while every option so far is filled, and as
///    `name:value` from the first unfilled option on; one space between;
/// 3. integers in decimal, numbers in the shortest text that reads back to
///    the same float, booleans as `true`/`false`;
/// 4. a string or id is bare when it is non-empty, holds no whitespace, does
///    not open with a quote (`"`, `“`, `«`) and, when positional, does not
///    begin with a declared `NAME:` in any ASCII case; otherwise it is written
///    as `"…"` with `\` as `\\` and `"` as `\"`;
/// 5. the last option, when it is a string written positionally, is the
///    greedy trailing string: bare when it equals itself trimmed, is non-empty,
///    does not open with a quote and does not begin with a declared `NAME:`;
///    quoted otherwise. Only ASCII `"` quotes are ever written.
///
/// With an empty prefix the line is still written, but no prefix reads it back.
///
/// ```
/// use botlane::{format_invocation_text, CommandArgs, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
///     .option(CommandOption::new("sides", "Sides per die", CommandOptionType::Integer))
///     .option(CommandOption::new("label", "What for", CommandOptionType::String));
///
/// let mut args = CommandArgs::new();
/// args.insert("count".into(), 2.into());
/// args.insert("label".into(), "fire damage".into());
/// assert_eq!(format_invocation_text(&roll, &args, None)?, r#"/roll 2 label:"fire damage""#);
/// args.insert("sides".into(), 6.into());
/// assert_eq!(format_invocation_text(&roll, &args, None)?, "/roll 2 6 fire damage");
/// args.insert("label".into(), "sides:3".into());
/// assert_eq!(format_invocation_text(&roll, &args, Some("!"))?, r#"!roll 2 6 "sides:3""#);
/// # Ok::<(), botlane::FormatError>(())
/// ```
pub fn format_invocation_text(
    decl: &CommandDeclaration,
    args: &CommandArgs,
    prefix: Option<&str>,
) -> Result<String, FormatError> {
    let prefix = prefix.unwrap_or(DEFAULT_COMMAND_PREFIX);
    // Room for every value written bare or quoted without escapes, as
    // `name:value` at worst, so the line is usually allocated once.
    let mut capacity = prefix.len() + decl.name.len();
    for (key, value) in args {
        if decl.find_option(key).is_none() {
            return Err(FormatError::UnknownOption {
                command: decl.name.clone(),
                option: key.clone(),
            });
        }
        capacity += key.len() + 4;
        capacity += match value {
            CommandArgValue::String(s) => s.len(),
            _ => 24,
        };
    }
    let options = &decl.options;
    let mut line = String::with_capacity(capacity);
    line.push_str(prefix);
    line.push_str(&decl.name);
    let mut positional = true;
    for (index, option) in options.iter().enumerate() {
        let Some(value) = args.get(&option.name) else {
            if option.required {
                return Err(FormatError::MissingRequired {
                    command: decl.name.clone(),
                    option: option.name.clone(),
                });
            }
            positional = false;
            continue;
        };
        let text = value_text(option.kind, value).ok_or_else(|| FormatError::WrongType {
            command: decl.name.clone(),
            option: option.name.clone(),
            expected: option.kind,
        })?;
        if !in_choices(option, value) {
            return Err(FormatError::NotInChoices {
                command: decl.name.clone(),
                option: option.name.clone(),
                choices: option.choices.clone().unwrap_or_default(),
            });
        }
        line.push(' ');
        let bare = if positional {
            let greedy = index + 1 == options.len() && option.kind == CommandOptionType::String;
            let plain = if greedy {
                !text.is_empty() && text.trim() == text && !starts_with_open_quote(&text)
            } else {
                is_plain(&text)
            };
            plain && named_option(options, &text).is_none()
        } else {
            line.push_str(&option.name);
            line.push(':');
            is_plain(&text)
        };
        if bare {
            line.push_str(&text);
        } else {
            push_quoted(&mut line, &text);
        }
    }
    Ok(line)
}

/// The text of `value` for an option of `kind`, or `None` when the value is
/// not exactly of that type.
fn value_text(kind: CommandOptionType, value: &CommandArgValue) -> Option<Cow<'_, str>> {
    // By type first, every type named: a new type must say how it is written.
    match kind {
        CommandOptionType::String => match value {
            CommandArgValue::String(s) => Some(Cow::Borrowed(s)),
            _ => None,
        },
        CommandOptionType::User | CommandOptionType::Channel | CommandOptionType::Role => {
            match value {
                CommandArgValue::String(s) if !s.is_empty() => Some(Cow::Borrowed(s)),
                _ => None,
            }
        }
        CommandOptionType::Integer => match value {
            CommandArgValue::Integer(i) if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(i) => {
                Some(Cow::Owned(i.to_string()))
            }
            _ => None,
        },
        CommandOptionType::Number => match value {
            CommandArgValue::Number(n) if n.is_finite() => Some(Cow::Owned(format_number(*n))),
            _ => None,
        },
        CommandOptionType::Boolean => match value {
            CommandArgValue::Boolean(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
            _ => None,
        },
    }
}

/// Whether `text` reads back as one bare token (§5.4, apart from the
/// `NAME:` test which only positional values need).
fn is_plain(text: &str) -> bool {
    !text.is_empty() && !has_whitespace(text) && !starts_with_open_quote(text)
}

fn push_quoted(line: &mut String, text: &str) {
    line.reserve(text.len() + 2);
    line.push('"');
    let mut rest = text;
    // ASCII `"` and `\` never occur inside a multi-byte character, so the
    // byte offset is a character boundary.
    while let Some(at) = rest.bytes().position(|b| matches!(b, b'"' | b'\\')) {
        line.push_str(&rest[..at]);
        line.push('\\');
        line.push_str(&rest[at..=at]);
        rest = &rest[at + 1..];
    }
    line.push_str(rest);
    line.push('"');
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_only_quote_and_backslash() {
        let mut line = String::new();
        push_quoted(&mut line, "a\"b\\c“d\n");
        assert_eq!(line, "\"a\\\"b\\\\c“d\n\"");
    }

    #[test]
    fn value_text_is_strict_about_variants() {
        assert_eq!(value_text(CommandOptionType::Number, &1.into()), None);
        assert_eq!(value_text(CommandOptionType::User, &"".into()), None);
        assert_eq!(
            value_text(CommandOptionType::Integer, &(MAX_SAFE_INTEGER + 1).into()),
            None
        );
        assert_eq!(
            value_text(CommandOptionType::Integer, &i64::MIN.into()),
            None
        );
        assert_eq!(
            value_text(CommandOptionType::Number, &f64::INFINITY.into()),
            None
        );
        assert_eq!(
            value_text(CommandOptionType::Number, &0.5.into()).unwrap(),
            "0.5"
        );
    }
}
