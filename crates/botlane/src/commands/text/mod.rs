//! The text lane: which command a line invokes, parsing its arguments, and
//! formatting an invocation back into a line.
//!
//! The grammar is the one of `docs/text-grammar.md`; the rustdoc of
//! [`match_command_name`], [`parse_invocation_text`] and
//! [`format_invocation_text`] states it rule by rule.

mod error;
mod lexer;

use std::borrow::Cow;
use std::ops::Range;

pub use error::{FormatError, ParseError, ParseErrorKind};

use self::lexer::{has_whitespace, named_option, run_len, space_len, starts_with_open_quote};
use self::lexer::{Lexer, Token};
use super::coerce::{coerce_text, in_choices};
use super::limits::{is_valid_name, DEFAULT_COMMAND_PREFIX, MAX_SAFE_INTEGER};
use super::types::{
    format_number, CommandArgValue, CommandArgs, CommandDeclaration, CommandInvocation,
    CommandOption, CommandOptionType, CommandSource,
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
///
/// Always inlined: returned through memory, the result is read back right
/// after being written, which stalls the CPU on store forwarding (about a
/// fifth of the time of `/ping` through the registry).
#[inline(always)]
fn locate<'a>(text: &'a str, prefix: &str) -> Option<Invocation<'a>> {
    if prefix.is_empty() {
        return None;
    }
    let start = space_len(text);
    let prefix = &prefix.as_bytes()[space_len(prefix)..];
    // A byte loop rather than `strip_prefix`, whose `memcmp` call costs more
    // than the comparison for a prefix of a few bytes.
    let line = &text.as_bytes()[start..];
    if line.len() < prefix.len() || line.iter().zip(prefix).any(|(a, b)| a != b) {
        return None;
    }
    let name_start = start + prefix.len();
    // The bytes of a `str` end on a character boundary, so `name_start` is one.
    let after_prefix = text.get(name_start..)?;
    let name_len = run_len(after_prefix);
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

/// Whether `raw_name` names the command `name`, i.e. `command_name(raw_name)`
/// is `Some(name)`, without allocating: a valid name is all lower-case, so
/// it is the lower-cased raw name exactly when the two are equal ignoring
/// ASCII case.
fn names(raw_name: &str, name: &str) -> bool {
    is_valid_name(name) && name.eq_ignore_ascii_case(raw_name)
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
    let not_this = |span| parse_error(decl, prefix, ParseErrorKind::NotThisCommand, None, span);
    match locate(text, prefix) {
        Some(invocation) if names(invocation.raw_name, &decl.name) => {
            let mut args = CommandArgs::new();
            parse_args(&mut args, decl, text, prefix, invocation.span.end).map(|()| args)
        }
        Some(other) => Err(not_this(other.span)),
        None => {
            let start = space_len(text);
            Err(not_this(start..start + run_len(&text[start..])))
        }
    }
}

/// What [`CommandRegistry::parse_from_text`](crate::CommandRegistry::parse_from_text)
/// does, with `find` returning the first registered declaration whose name
/// equals its argument ASCII case-insensitively. The line is located once,
/// and on success only the result's name, keys and values are allocated.
pub(crate) fn parse_text_with<'d>(
    text: &str,
    prefix: Option<&str>,
    find: impl FnOnce(&str) -> Option<&'d CommandDeclaration>,
) -> TextParseResult {
    let prefix = prefix.unwrap_or(DEFAULT_COMMAND_PREFIX);
    let Some(invocation) = locate(text, prefix) else {
        return TextParseResult::None;
    };
    // Looking the raw name up case-insensitively finds the declaration that
    // its lower-cased form would.
    let Some(decl) = find(invocation.raw_name) else {
        return TextParseResult::None;
    };
    // `find` compared the names ignoring ASCII case, so this is `names`.
    if !is_valid_name(&decl.name) {
        return misnamed(decl, prefix, invocation);
    }
    let name = decl.name.clone();
    let mut args = CommandArgs::new();
    match parse_args(&mut args, decl, text, prefix, invocation.span.end) {
        Ok(()) => TextParseResult::Ok(CommandInvocation {
            name,
            args,
            source: CommandSource::Text,
        }),
        Err(error) => TextParseResult::Error { name, error },
    }
}

/// [`parse_text_with`] for a declaration whose own name breaks the name
/// rule, which a registry never holds: the answer of `parse_invocation_text`.
#[cold]
#[inline(never)]
fn misnamed(
    decl: &CommandDeclaration,
    prefix: &str,
    invocation: Invocation<'_>,
) -> TextParseResult {
    let Some(name) = command_name(invocation.raw_name) else {
        return TextParseResult::None;
    };
    let error = parse_error(
        decl,
        prefix,
        ParseErrorKind::NotThisCommand,
        None,
        invocation.span,
    );
    TextParseResult::Error { name, error }
}

/// A parse error against `decl`; the usage line is only built here, off the
/// success path.
#[cold]
#[inline(never)]
fn parse_error(
    decl: &CommandDeclaration,
    prefix: &str,
    kind: ParseErrorKind,
    option: Option<&CommandOption>,
    span: Range<usize>,
) -> ParseError {
    ParseError::new(
        kind,
        decl.name.clone(),
        option.map(|o| o.name.clone()),
        span,
        usage_line(decl, Some(prefix)),
    )
}

/// Parses into the empty `args` the arguments of a line whose invocation
/// word, already matched against `decl`, ends at byte `args_start`
/// (text-grammar §2–4). The map is filled in place rather than returned,
/// because moving it out through memory right after the last insert stalls
/// the CPU on store forwarding.
fn parse_args(
    args: &mut CommandArgs,
    decl: &CommandDeclaration,
    text: &str,
    prefix: &str,
    args_start: usize,
) -> Result<(), ParseError> {
    let error =
        |kind, option: Option<&CommandOption>, span| parse_error(decl, prefix, kind, option, span);
    let options = &decl.options;
    let mut lexer = Lexer::new(text, args_start, options);
    let mut next_positional = 0;
    let mut seen_named = false;
    while lexer.skip_whitespace() {
        let greedy = !seen_named
            && next_positional + 1 == options.len()
            && options[next_positional].kind == CommandOptionType::String
            && !lexer.at_named();
        // Each branch picks the option and its raw value; one place below
        // coerces and stores it.
        let (option, value, span) = if greedy {
            let (value, span) = lexer.take_greedy();
            next_positional += 1;
            (&options[next_positional - 1], value, span)
        } else {
            match lexer.next_token() {
                Err(lex) => {
                    // A quote error in a positional value concerns the option it would fill.
                    let index = lex
                        .option
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
                    next_positional += 1;
                    (option, value, span)
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
                    (option, value, value_span)
                }
            }
        };
        let value = coerce(option, &value).map_err(|kind| error(kind, Some(option), span))?;
        args.insert(option.name.clone(), value);
    }
    // The options filled positionally are in `args`; only the others need a look-up.
    if let Some(missing) = options[next_positional..]
        .iter()
        .find(|option| option.required && !args.contains_key(&option.name))
    {
        return Err(error(
            ParseErrorKind::MissingRequired,
            Some(missing),
            text.len()..text.len(),
        ));
    }
    Ok(())
}

/// Coerces the text of a value for `option` (§4) and checks its choices.
#[inline]
fn coerce(option: &CommandOption, text: &str) -> Result<CommandArgValue, ParseErrorKind> {
    let value = coerce_text(option.kind, text).ok_or(ParseErrorKind::InvalidValue {
        expected: option.kind,
    })?;
    match &option.choices {
        Some(choices) if !in_choices(option, &value) => Err(ParseErrorKind::NotInChoices {
            choices: choices.clone(),
        }),
        _ => Ok(value),
    }
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
    match (kind, value) {
        (CommandOptionType::String, CommandArgValue::String(s)) => Some(Cow::Borrowed(s)),
        (
            CommandOptionType::User | CommandOptionType::Channel | CommandOptionType::Role,
            CommandArgValue::String(s),
        ) if !s.is_empty() => Some(Cow::Borrowed(s)),
        (CommandOptionType::Integer, CommandArgValue::Integer(i))
            if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(i) =>
        {
            Some(Cow::Owned(i.to_string()))
        }
        (CommandOptionType::Number, CommandArgValue::Number(n)) if n.is_finite() => {
            Some(Cow::Owned(format_number(*n)))
        }
        (CommandOptionType::Boolean, CommandArgValue::Boolean(b)) => {
            Some(Cow::Borrowed(if *b { "true" } else { "false" }))
        }
        _ => None,
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
    fn locate_reports_prefix_and_name_bytes() {
        let found = locate("  !Roll 2", "!").unwrap();
        assert_eq!((found.span, found.raw_name), (2..7, "Roll"));
        let found = locate("bot  x", "bot ").unwrap();
        assert_eq!(found.raw_name, "");
        assert!(locate("/roll", "").is_none());
        assert_eq!(locate(" /roll", "\t/").unwrap().raw_name, "roll");
    }

    #[test]
    fn names_is_command_name_without_allocating() {
        for raw in [
            "roll",
            "ROLL",
            "Roll",
            "rolls",
            "rol",
            "",
            "r\u{f6}ll",
            "\u{212a}",
            "a-b_9",
        ] {
            for name in ["roll", "Roll", "a-b_9", "A-B_9", "k", ""] {
                assert_eq!(
                    names(raw, name),
                    command_name(raw).as_deref() == Some(name),
                    "{raw:?} {name:?}"
                );
            }
        }
    }

    #[test]
    fn locate_compares_a_multi_byte_prefix_exactly() {
        assert_eq!(
            locate("\u{bb}\u{bb}go x", "\u{bb}\u{bb}").unwrap().raw_name,
            "go"
        );
        assert!(locate("\u{bb}go", "\u{bb}\u{bb}").is_none());
        assert!(locate("\u{ab}go", "\u{bb}").is_none());
        assert!(locate("/", "//").is_none());
        assert_eq!(locate("//", "/").unwrap().raw_name, "/");
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
