//! The text lane: which command a line invokes, parsing its arguments, and
//! formatting an invocation back into a line.
//!
//! The grammar is the one of `docs/text-grammar.md`; the rustdoc of
//! [`match_command_name`], [`parse_invocation_text`] and
//! [`format_invocation_text`] states it rule by rule.

pub(crate) mod error;
pub(crate) mod format;
mod lexer;
pub(crate) mod prefixes;

use std::ops::Range;

pub(crate) use error::{ParseError, ParseErrorKind};
pub(crate) use format::usage_line;
pub(crate) use prefixes::PrefixSet;

use self::lexer::{run_len, space_len};
use self::lexer::{Lexer, Token};
use super::limits::is_valid_name;
use crate::commands::coerce::{coerce_text, in_parsed_choices, ParsedChoices};
use crate::commands::limits::DEFAULT_COMMAND_PREFIX;
use crate::commands::option::CommandOption;
use crate::commands::option_type::CommandOptionType;
use crate::commands::types::{
    CommandArgValue, CommandArgs, CommandDeclaration, CommandInvocation, CommandSource,
};

/// The outcome of running the text grammar over a line against a registry.
#[derive(Debug, Clone, PartialEq)]
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

/// [`locate`] under the prefix the line uses ([`PrefixSet::used_by`]);
/// under a single prefix, `locate` itself. Always inlined, as `locate` is
/// and for its reason: its result is read back at once.
#[inline(always)]
fn locate_among<'a>(text: &'a str, prefixes: PrefixSet<'_>) -> Option<Invocation<'a>> {
    if prefixes.additional.is_empty() {
        return locate(text, prefixes.main);
    }
    locate(text, prefixes.used_by(text)?)
}

/// The raw name a line invokes (§1.1–1.3) under the prefix it uses,
/// borrowed and not yet lower-cased nor checked against the name rule:
/// what [`CommandContext::invoked_name`](crate::CommandContext::invoked_name)
/// reads back from the message, without allocating.
pub(crate) fn invoked_raw_name<'a>(text: &'a str, prefixes: PrefixSet<'_>) -> Option<&'a str> {
    locate_among(text, prefixes).map(|invocation| invocation.raw_name)
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
/// [`format_invocation_text`](crate::format_invocation_text) writes with it (a whitespace-only prefix thus
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

/// Parses a line as an invocation of `decl`, coercing every value to its
/// declared type. Never panics, whatever the line.
///
/// `prefix` is the text-lane prefix (`None` means [`DEFAULT_COMMAND_PREFIX`]).
/// A line that invokes another command, or none (see [`match_command_name`]),
/// is an error of kind [`ParseErrorKind::NotThisCommand`]. So is a line
/// naming one of the command's aliases
/// ([`CommandSettings::aliases`](crate::framework::CommandSettings::aliases)): they are
/// settings of a registry's command, not part of the declaration, and only
/// the registry's [`parse_from_text`](crate::CommandRegistry::parse_from_text)
/// resolves them (to the same arguments this gives for the line under the
/// command's name).
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
            parse_args(&mut args, decl, &[], text, prefix, invocation.span.end).map(|()| args)
        }
        Some(other) => Err(not_this(other.span)),
        None => {
            let start = space_len(text);
            Err(not_this(start..start + run_len(&text[start..])))
        }
    }
}

/// What [`CommandRegistry::parse_from_text`](crate::CommandRegistry::parse_from_text)
/// does, with `find` returning the registered declaration whose name, or
/// one of whose aliases, equals its argument ASCII case-insensitively, with
/// its options' parsed choices. The line is located once,
/// and on success only the result's name, keys and values are allocated;
/// the name is written into the empty string `name` gives (dispatch's
/// holds the capacity of an earlier invocation's name).
/// The line is read under the prefix it uses; a parse error's usage line
/// is written with the main one, as everything the client writes is.
pub(crate) fn parse_text_with<'d>(
    text: &str,
    prefixes: PrefixSet<'_>,
    find: impl FnOnce(&str) -> Option<(&'d CommandDeclaration, &'d [Option<ParsedChoices>])>,
    name: impl FnOnce() -> String,
) -> TextParseResult {
    let prefix = prefixes.main;
    let Some(invocation) = locate_among(text, prefixes) else {
        return TextParseResult::None;
    };
    // Looking the raw name up case-insensitively finds the declaration that
    // its lower-cased form would.
    let Some((decl, choices)) = find(invocation.raw_name) else {
        return TextParseResult::None;
    };
    // `find` compared the name or an alias ignoring ASCII case, and a
    // registry holds only names and aliases that passed the name rule: the
    // raw name passes it once lowered, as `match_command_name` requires.
    debug_assert!(
        is_valid_name(&decl.name),
        "a registry holds only declarations that passed the name rule"
    );
    let name = {
        let mut name = name();
        name.push_str(&decl.name);
        name
    };
    let mut args = CommandArgs::new();
    match parse_args(&mut args, decl, choices, text, prefix, invocation.span.end) {
        Ok(()) => TextParseResult::Ok(CommandInvocation {
            name,
            args,
            source: CommandSource::Text,
        }),
        Err(error) => TextParseResult::Error { name, error },
    }
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
/// (text-grammar §2–4). `choices` holds the options' parsed choices, as a
/// registry keeps them, or is empty. The map is filled in place rather than returned,
/// because moving it out through memory right after the last insert stalls
/// the CPU on store forwarding.
fn parse_args(
    args: &mut CommandArgs,
    decl: &CommandDeclaration,
    choices: &[Option<ParsedChoices>],
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
        let (index, value, span) = if greedy {
            let (value, span) = lexer.take_greedy();
            next_positional += 1;
            (next_positional - 1, value, span)
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
                    if next_positional == options.len() {
                        return Err(error(ParseErrorKind::ExtraArgument, None, span));
                    }
                    next_positional += 1;
                    (next_positional - 1, value, span)
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
                    (index, value, value_span)
                }
            }
        };
        let option = &options[index];
        let value = coerce(option, choices.get(index).and_then(Option::as_ref), &value)
            .map_err(|kind| error(kind, Some(option), span))?;
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

/// Coerces the text of a value for `option` (§4) and checks its choices,
/// `parsed` when the registry parsed them.
#[inline]
fn coerce(
    option: &CommandOption,
    parsed: Option<&ParsedChoices>,
    text: &str,
) -> Result<CommandArgValue, ParseErrorKind> {
    let value = coerce_text(option.kind, text).ok_or(ParseErrorKind::InvalidValue {
        expected: option.kind,
    })?;
    match &option.choices {
        Some(choices) if !in_parsed_choices(option, parsed, &value) => {
            Err(ParseErrorKind::NotInChoices {
                choices: choices.clone(),
            })
        }
        _ => Ok(value),
    }
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
}
