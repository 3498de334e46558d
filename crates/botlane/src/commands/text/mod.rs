//! The text lane: which command a line invokes, parsing its arguments, and
//! formatting an invocation back into a line.
//!
//! The grammar is the one of `docs/text-grammar.md`; the rustdoc of
//! [`match_command_name`], [`parse_invocation_text`] and
//! [`format_invocation_text`] states it rule by rule.

mod error;
mod lexer;

use std::ops::Range;

pub use error::{FormatError, ParseError, ParseErrorKind};

use self::lexer::{named_option, starts_with_open_quote, Lexer, Token};
use super::coerce::{coerce_text, in_choices};
use super::limits::{is_valid_name, DEFAULT_COMMAND_PREFIX, MAX_SAFE_INTEGER};
use super::types::{
    format_number, CommandArgValue, CommandArgs, CommandDeclaration, CommandInvocation,
    CommandOption, CommandOptionType,
};

/// The outcome of running the text grammar over a line against a registry.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TextParseResult {
    /// The line invokes no registered command.
    None,
    /// A registered command, with its arguments.
    Ok(CommandInvocation),
    /// A registered command whose arguments did not parse.
    Error {
        /// The lower-case command name.
        name: String,
        /// What went wrong.
        error: ParseError,
    },
}

/// Where the invocation word of a line is: the bytes of prefix and name
/// together, and the raw name (before lower-casing and the name rule).
struct Invocation<'a> {
    span: Range<usize>,
    raw_name: &'a str,
}

/// Finds the prefix and the name (§1.1–1.3). The prefix's own leading
/// whitespace is ignored like the line's, since the line's is skipped.
fn locate<'a>(text: &'a str, prefix: &str) -> Option<Invocation<'a>> {
    if prefix.is_empty() {
        return None;
    }
    let start = text.len() - text.trim_start().len();
    let after_prefix = text[start..].strip_prefix(prefix.trim_start())?;
    let name_start = text.len() - after_prefix.len();
    let name_len = after_prefix
        .find(char::is_whitespace)
        .unwrap_or(after_prefix.len());
    Some(Invocation {
        span: start..name_start + name_len,
        raw_name: &after_prefix[..name_len],
    })
}

/// The name rule after ASCII lower-casing (§1.4–1.5).
fn command_name(raw_name: &str) -> Option<String> {
    let name = raw_name.to_ascii_lowercase();
    is_valid_name(&name).then_some(name)
}

/// The lower-case name of the command a line invokes, or `None`.
///
/// The rules (text-grammar §1):
/// 1. leading whitespace of the line is skipped;
/// 2. the line must then start with the prefix, compared exactly
///    (`None` means [`DEFAULT_COMMAND_PREFIX`], `/`);
/// 3. the name is everything after the prefix up to the first whitespace or
///    the end of the line, so `/ roll` invokes nothing;
/// 4. ASCII letters are lower-cased and nothing else is case-mapped, so a
///    look-alike such as the Kelvin sign `K` fails the name rule;
/// 5. the name must match `^[a-z0-9_-]{1,32}$`.
///
/// Two prefix edge cases: the empty prefix matches nothing (the grammar
/// requires a non-empty prefix, and an empty one would turn every chat line
/// into an invocation); leading whitespace of the prefix is ignored like the
/// line's, so a prefix such as `" !"` still reads back the lines
/// [`format_invocation_text`] writes with it (a whitespace-only prefix thus
/// matches a bare name at the start of the line).
///
/// ```
/// use botlane::match_command_name;
///
/// assert_eq!(match_command_name("  /ROLL 2 6", None), Some("roll".to_string()));
/// assert_eq!(match_command_name("!ping", Some("!")), Some("ping".to_string()));
/// assert_eq!(match_command_name("/ roll", None), None);
/// assert_eq!(match_command_name("/\u{212a}elvin", None), None);
/// assert_eq!(match_command_name("/roll", Some("")), None);
/// assert_eq!(match_command_name("hello", None), None);
/// ```
pub fn match_command_name(text: &str, prefix: Option<&str>) -> Option<String> {
    let invocation = locate(text, prefix.unwrap_or(DEFAULT_COMMAND_PREFIX))?;
    command_name(invocation.raw_name)
}

/// The usage line of a command with the given prefix (`None` means
/// [`DEFAULT_COMMAND_PREFIX`]): the prefix and name, then each option in
/// declared order, `<name>` when required and `[name]` when optional.
///
/// ```
/// use botlane::{usage_line, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
///     .option(CommandOption::new("sides", "Sides per die", CommandOptionType::Integer))
///     .option(CommandOption::new("label", "What for", CommandOptionType::String));
/// assert_eq!(usage_line(&roll, None), "/roll <count> [sides] [label]");
/// assert_eq!(usage_line(&roll, Some("!")), "!roll <count> [sides] [label]");
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
        usage.push(close);
    }
    usage
}

/// Parses a line as an invocation of `decl`, coercing every value to its
/// declared type. Never panics, whatever the line.
///
/// `prefix` is the text-lane prefix (`None` means [`DEFAULT_COMMAND_PREFIX`]).
/// A line that invokes another command, or none (see [`match_command_name`]),
/// is an error of kind [`ParseErrorKind::NotThisCommand`].
///
/// **Tokens** (text-grammar §2), after the name and the whitespace after it:
/// - tokens are separated by runs of whitespace ([`char::is_whitespace`]);
/// - a *quoted* token opens with `"`, `“` or `«` and runs to the next
///   unescaped `"`, `”` or `»` respectively; inside, `\` takes the next
///   character literally (`\"`, `\\`, `\x` is `x`); the closing quote must be
///   followed by whitespace or the end of the line; `""` is an empty value;
///   a quoted token is always positional;
/// - a *bare* token is a run of non-whitespace not opening with a quote;
///   quotes, apostrophes (`'`, `’`) and backslashes inside it are literal;
/// - a bare token `NAME:VALUE` whose NAME is a declared option name (ASCII
///   case-insensitively) is a *named argument*; VALUE is everything after the
///   first colon, read as a quoted value when it opens with a quote
///   (`title:"two words"`), and may not be empty (`title:` alone is an error).
///   Other tokens with colons are positional (`12:30`, `https://x.y`).
///
/// **Binding** (§3):
/// - positional values fill the options in declared order; named arguments
///   may follow them, but a positional value after a named one is an error;
/// - one option given twice is an error, and so is a value beyond the last option;
/// - *greedy trailing string*: when the next option to fill positionally is
///   the last one, is a `string`, and no named argument came before, the rest
///   of the line is its value: the content of a lone quoted token, or else the
///   rest verbatim without its leading and trailing whitespace (inner
///   whitespace, quotes and newlines kept); but when the rest begins with a
///   named argument, tokenising goes on as usual;
/// - a missing required option is an error; an unfilled optional option is
///   absent from the result.
///
/// **Coercion** (§4): strings take any text; `user`, `channel` and `role` take
/// any non-empty text; integers are `^[+-]?[0-9]+$` within ±9007199254740991;
/// numbers are finite decimal literals; booleans are `true`/`yes`/`1` or
/// `false`/`no`/`0` in any ASCII case. With choices, the value must equal one
/// of them (strings exactly, numbers numerically).
///
/// ```
/// use botlane::{parse_invocation_text, CommandArgValue, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
///     .option(CommandOption::new("sides", "Sides per die", CommandOptionType::Integer))
///     .option(CommandOption::new("label", "What for", CommandOptionType::String));
///
/// let args = parse_invocation_text(&roll, "/ROLL 2 6 fire damage", None)?;
/// assert_eq!(args["count"], CommandArgValue::Integer(2));
/// assert_eq!(args["sides"], CommandArgValue::Integer(6));
/// assert_eq!(args["label"], CommandArgValue::from("fire damage"));
///
/// let args = parse_invocation_text(&roll, r#"!roll 2 label:"fire damage""#, Some("!"))?;
/// assert!(!args.contains_key("sides"));
/// assert_eq!(args["label"], CommandArgValue::from("fire damage"));
///
/// let err = parse_invocation_text(&roll, "/roll sides:6 2", None).unwrap_err();
/// assert_eq!(err.to_string(), "a value without a name cannot follow a named argument; write it as name:value");
/// assert!(parse_invocation_text(&roll, "/rolls 2", None).is_err());
/// # Ok::<(), botlane::ParseError>(())
/// ```
pub fn parse_invocation_text(
    decl: &CommandDeclaration,
    text: &str,
    prefix: Option<&str>,
) -> Result<CommandArgs, ParseError> {
    let prefix = prefix.unwrap_or(DEFAULT_COMMAND_PREFIX);
    let error = |kind, option: Option<&CommandOption>, span| {
        ParseError::new(
            kind,
            decl.name.clone(),
            option.map(|o| o.name.clone()),
            span,
            usage_line(decl, Some(prefix)),
        )
    };
    let invocation = match locate(text, prefix) {
        Some(invocation)
            if command_name(invocation.raw_name).as_deref() == Some(decl.name.as_str()) =>
        {
            invocation
        }
        Some(other) => return Err(error(ParseErrorKind::NotThisCommand, None, other.span)),
        None => {
            let start = text.len() - text.trim_start().len();
            let end = text[start..]
                .find(char::is_whitespace)
                .map_or(text.len(), |len| start + len);
            return Err(error(ParseErrorKind::NotThisCommand, None, start..end));
        }
    };

    let options = &decl.options;
    let coerce = |option: &CommandOption, text: &str, span: Range<usize>| {
        let value = coerce_text(option.kind, text).ok_or_else(|| {
            error(
                ParseErrorKind::InvalidValue {
                    expected: option.kind,
                },
                Some(option),
                span.clone(),
            )
        })?;
        if in_choices(option, &value) {
            Ok(value)
        } else {
            let choices = option.choices.clone().unwrap_or_default();
            Err(error(
                ParseErrorKind::NotInChoices { choices },
                Some(option),
                span,
            ))
        }
    };

    let mut lexer = Lexer::new(text, invocation.span.end, options);
    let mut args = CommandArgs::new();
    let mut next_positional = 0;
    let mut seen_named = false;
    while lexer.skip_whitespace() {
        let greedy = !seen_named
            && next_positional + 1 == options.len()
            && options[next_positional].kind == CommandOptionType::String
            && !lexer.at_named();
        if greedy {
            let option = &options[next_positional];
            let (value, span) = lexer.take_greedy();
            args.insert(option.name.clone(), coerce(option, &value, span)?);
            next_positional += 1;
            continue;
        }
        match lexer.next_token() {
            Err(lex) => {
                // A quote error in a positional value concerns the option it would fill.
                let index =
                    lex.option
                        .or((!seen_named && next_positional < options.len())
                            .then_some(next_positional));
                return Err(error(lex.kind, index.map(|i| &options[i]), lex.span));
            }
            Ok(Token::Positional { value, span }) => {
                if seen_named {
                    return Err(error(ParseErrorKind::PositionalAfterNamed, None, span));
                }
                let Some(option) = options.get(next_positional) else {
                    return Err(error(ParseErrorKind::ExtraArgument, None, span));
                };
                args.insert(option.name.clone(), coerce(option, &value, span)?);
                next_positional += 1;
            }
            Ok(Token::Named {
                index,
                value,
                span,
                value_span,
            }) => {
                seen_named = true;
                let option = &options[index];
                if args.contains_key(&option.name) {
                    return Err(error(ParseErrorKind::DuplicateOption, Some(option), span));
                }
                args.insert(option.name.clone(), coerce(option, &value, value_span)?);
            }
        }
    }
    if let Some(missing) = options
        .iter()
        .find(|option| option.required && !args.contains_key(&option.name))
    {
        return Err(error(
            ParseErrorKind::MissingRequired,
            Some(missing),
            text.len()..text.len(),
        ));
    }
    Ok(args)
}

/// Writes the readable line of an invocation of `decl` with `args`, which
/// [`parse_invocation_text`] reads back to the same `args` with the same
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
    if let Some(key) = args.keys().find(|key| decl.find_option(key).is_none()) {
        return Err(FormatError::UnknownOption {
            command: decl.name.clone(),
            option: key.clone(),
        });
    }
    let options = &decl.options;
    let mut line = format!("{}{}", prefix.unwrap_or(DEFAULT_COMMAND_PREFIX), decl.name);
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
fn value_text(kind: CommandOptionType, value: &CommandArgValue) -> Option<String> {
    match (kind, value) {
        (CommandOptionType::String, CommandArgValue::String(s)) => Some(s.clone()),
        (
            CommandOptionType::User | CommandOptionType::Channel | CommandOptionType::Role,
            CommandArgValue::String(s),
        ) if !s.is_empty() => Some(s.clone()),
        (CommandOptionType::Integer, CommandArgValue::Integer(i))
            if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(i) =>
        {
            Some(i.to_string())
        }
        (CommandOptionType::Number, CommandArgValue::Number(n)) if n.is_finite() => {
            Some(format_number(*n))
        }
        (CommandOptionType::Boolean, CommandArgValue::Boolean(b)) => Some(b.to_string()),
        _ => None,
    }
}

/// Whether `text` reads back as one bare token (§5.4, apart from the
/// `NAME:` test which only positional values need).
fn is_plain(text: &str) -> bool {
    !text.is_empty() && !text.contains(char::is_whitespace) && !starts_with_open_quote(text)
}

fn push_quoted(line: &mut String, text: &str) {
    line.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            line.push('\\');
        }
        line.push(c);
    }
    line.push('"');
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn locate_reports_prefix_and_name_bytes() {
        let found = locate("  !Roll 2", "!").unwrap();
        assert_eq!((found.span, found.raw_name), (2..7, "Roll"));
        let found = locate("bot  x", "bot ").unwrap();
        assert_eq!(found.raw_name, "");
        assert!(locate("/roll", "").is_none());
        assert_eq!(locate(" /roll", "\t/").unwrap().raw_name, "roll");
    }

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
