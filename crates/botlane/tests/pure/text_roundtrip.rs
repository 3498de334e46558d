//! The law of text-grammar §7 as a property:
//! `parse_invocation_text(decl, format_invocation_text(decl, args, prefix), prefix) == args`
//! over generated declarations (valid by construction) and argument maps
//! that fit them, with or without local bounds (which the grammar ignores);
//! a line under an alias reads as the same line under the command's name;
//! and the parser and matcher never panic on any input.
#![allow(clippy::unwrap_used)]

use botlane::framework::CommandSettings;

use botlane::{
    format_invocation_text, match_command_name, parse_invocation_text, CommandArgValue as V,
    CommandArgs, CommandDeclaration, CommandOption, CommandOptionType as T, CommandRegistry,
    TextParseResult, MAX_CHOICE_LEN,
};

use crate::fixtures::roll;
use crate::proptest_cases::cases;
use proptest::prelude::*;
use proptest::sample::{select, subsequence, Index};

const MAX_SAFE: i64 = 9_007_199_254_740_991;

/// Option names that satisfy the name rule, including odd ones (`-`, `0`,
/// `true`, `12`, `http`) that collide with values in interesting ways.
const NAMES: &[&str] = &[
    "a",
    "b",
    "x1",
    "-",
    "_",
    "0",
    "12",
    "count",
    "sides",
    "label",
    "title",
    "http",
    "https",
    "true",
    "a-b_c",
    "abcdefghijklmnopqrstuvwxyz012345",
];

/// Every option type, from the table itself: a new type is in the round
/// trips (as a string-valued type unless `slot` gives it values of its own).
fn kinds() -> Vec<T> {
    botlane::COMMAND_OPTION_TYPE_CODES
        .iter()
        .map(|(kind, _)| *kind)
        .collect()
}

/// Pieces strings are built from: quotes of every kind, escapes, colons,
/// whitespace of several kinds, unicode, and things that look like values.
const ATOMS: &[&str] = &[
    "\"",
    "\\",
    ":",
    "\u{201c}",
    "\u{201d}",
    "\u{ab}",
    "\u{bb}",
    "'",
    "\u{2019}",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\u{3000}",
    "\u{a0}",
    "\u{2028}",
    "\u{85}",
    "a",
    "Z",
    "\u{e9}",
    "日本",
    "🎲",
    "12:30",
    "https://x.y",
    "\\\"",
    "\"\"",
    "true",
    "-1",
    "x",
    "\u{212a}",
    "\u{301}",
];

/// A declared `NAME:` in a random ASCII case, as a string may begin with.
fn name_colon(names: Vec<String>) -> BoxedStrategy<String> {
    (select(names), any::<u32>())
        .prop_map(|(name, mask)| {
            let mut out: String = name
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if mask & (1 << (i % 32)) != 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            out.push(':');
            out
        })
        .boxed()
}

/// Strings rich in everything the grammar treats specially. `names` are the
/// declared option names (plus some undeclared ones), so values such as
/// `sides:3` that read like named arguments come up often.
fn rich_string(names: Vec<String>) -> BoxedStrategy<String> {
    let atom = prop_oneof![
        4 => select(ATOMS).prop_map(String::from),
        2 => any::<char>().prop_map(String::from),
        1 => name_colon(names.clone()),
    ];
    let pieces = prop::collection::vec(atom, 0..8).prop_map(|parts| parts.concat());
    prop_oneof![
        1 => Just(String::new()),
        1 => "[ \t\n\u{3000}]{1,3}",
        6 => pieces.clone(),
        2 => (name_colon(names), pieces.clone()).prop_map(|(head, tail)| head + &tail),
        1 => (select(vec!["\"", "\u{201c}", "\u{ab}"]), pieces).prop_map(|(q, tail)| q.to_owned() + &tail),
        1 => "\\PC{0,6}",
    ]
    .boxed()
}

fn integer() -> BoxedStrategy<i64> {
    prop_oneof![
        Just(MAX_SAFE),
        Just(-MAX_SAFE),
        Just(0),
        -100i64..100,
        -MAX_SAFE..=MAX_SAFE,
    ]
    .boxed()
}

fn number() -> BoxedStrategy<f64> {
    use proptest::num::f64 as f;
    prop_oneof![
        4 => f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO,
        1 => select(vec![
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            -0.0,
            0.0,
            0.1,
            1e21,
            123_456.0,
            9_007_199_254_740_993.0,
        ]),
        1 => (-1000i32..1000).prop_map(f64::from),
    ]
    .boxed()
}

/// Texts of an integer that the coercion table reads back to it.
fn integer_text(n: i64, style: u8) -> String {
    match (style, n >= 0) {
        (1, true) => format!("+{n}"),
        (2, true) => format!("00{n}"),
        (2, false) => format!("-00{}", n.unsigned_abs()),
        _ => n.to_string(),
    }
}

/// Texts of a number that the coercion table reads back to it, at most
/// 100 characters (the choice length cap).
fn number_text(n: f64, style: u8) -> String {
    let plain = format!("{n}");
    match style {
        1 => format!("{n:E}"),
        2 if plain.len() <= 100 => plain,
        _ => format!("{n:e}"),
    }
}

fn string_value(kind: T, text: String) -> V {
    if kind == T::String || !text.is_empty() {
        V::String(text)
    } else {
        V::String("id".into())
    }
}

/// `items` without the later ones `same` as an earlier one: a registry
/// refuses two choices of one value.
fn first_of_each<T>(items: &mut Vec<T>, same: impl Fn(&T, &T) -> bool) {
    let mut kept: Vec<T> = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        if !kept.iter().any(|earlier| same(earlier, &item)) {
            kept.push(item);
        }
    }
    *items = kept;
}

/// One option named `name` with a value that fits it.
fn slot(name: String, names: Vec<String>) -> BoxedStrategy<(CommandOption, V)> {
    (select(kinds()), any::<bool>())
        .prop_flat_map(move |(kind, with_choices)| {
            let option = CommandOption::new(name.clone(), "an option", kind);
            match kind {
                T::Integer if with_choices => (
                    prop::collection::vec((integer(), 0u8..3), 1..4),
                    any::<Index>(),
                )
                    .prop_map(move |(mut picks, index)| {
                        first_of_each(&mut picks, |a, b| a.0 == b.0);
                        let texts = picks.iter().map(|(n, style)| integer_text(*n, *style));
                        let value = picks[index.index(picks.len())].0;
                        (option.clone().choices(texts), V::Integer(value))
                    })
                    .boxed(),
                T::Integer => integer()
                    .prop_map(move |n| (option.clone(), V::Integer(n)))
                    .boxed(),
                T::Number if with_choices => (
                    prop::collection::vec((number(), 0u8..3), 1..4),
                    any::<Index>(),
                )
                    .prop_map(move |(mut picks, index)| {
                        // Compared as the registry does: 0 and -0 are one value.
                        first_of_each(&mut picks, |a, b| a.0 == b.0);
                        let texts = picks.iter().map(|(n, style)| number_text(*n, *style));
                        let value = picks[index.index(picks.len())].0;
                        (option.clone().choices(texts), V::Number(value))
                    })
                    .boxed(),
                T::Number => number()
                    .prop_map(move |n| (option.clone(), V::Number(n)))
                    .boxed(),
                T::Boolean => any::<bool>()
                    .prop_map(move |b| (option.clone(), V::Boolean(b)))
                    .boxed(),
                _ if with_choices => (
                    prop::collection::vec(rich_string(names.clone()), 1..4),
                    any::<Index>(),
                )
                    .prop_map(move |(texts, index)| {
                        let mut texts: Vec<String> = texts
                            .into_iter()
                            .filter(|t| kind == T::String || !t.is_empty())
                            .filter(|t| t.chars().count() <= MAX_CHOICE_LEN)
                            .collect();
                        first_of_each(&mut texts, |a, b| a == b);
                        if texts.is_empty() {
                            return (option.clone(), string_value(kind, String::new()));
                        }
                        let value = texts[index.index(texts.len())].clone();
                        (option.clone().choices(texts), V::String(value))
                    })
                    .boxed(),
                _ => rich_string(names.clone())
                    .prop_map(move |text| (option.clone(), string_value(kind, text)))
                    .boxed(),
            }
        })
        .boxed()
}

fn prefix() -> BoxedStrategy<Option<String>> {
    prop_oneof![
        1 => Just(None),
        4 => select(vec![
            "/", "!", "bot.", "!!", "bot ", "hey bot ", "\u{a1}", "→", "🤖", "🤖 ", " !", "\t/", " ",
            "\u{ab}", "\"", "x:", "//",
        ])
        .prop_map(|p| Some(p.to_owned())),
        1 => "\\PC{1,4}".prop_map(Some),
        1 => (any::<char>(), any::<String>()).prop_map(|(first, rest)| Some(format!("{first}{rest}"))),
    ]
    .boxed()
}

/// A command name other than the built-in `help`, which a registry keeps
/// for itself.
fn command_name() -> impl Strategy<Value = String> {
    "[a-z0-9_-]{1,32}".prop_map(|name| {
        if name == "help" {
            "helq".to_owned()
        } else {
            name
        }
    })
}

#[derive(Debug, Clone)]
struct Case {
    decl: CommandDeclaration,
    args: CommandArgs,
    prefix: Option<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        command_name(),
        subsequence(NAMES.to_vec(), 0..=6).prop_shuffle(),
        prefix(),
    )
        .prop_flat_map(|(command, names, prefix)| {
            let n = names.len();
            let mut pool: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
            pool.extend(["sides".to_owned(), "other".to_owned()]);
            let slots: Vec<_> = names
                .iter()
                .map(|name| slot((*name).to_owned(), pool.clone()))
                .collect();
            (
                Just(command),
                Just(prefix),
                slots,
                0..=n,
                prop::collection::vec(any::<bool>(), n),
            )
        })
        .prop_map(|(command, prefix, slots, required, present)| {
            let mut decl = CommandDeclaration::new(command, "a command");
            let mut args = CommandArgs::new();
            for (index, (option, value)) in slots.into_iter().enumerate() {
                let option = option.required(index < required);
                if option.required || present[index] {
                    args.insert(option.name.clone(), value);
                }
                decl = decl.option(option);
            }
            Case { decl, args, prefix }
        })
}

/// Equality that also tells `-0.0` from `0.0`.
fn same(a: &CommandArgs, b: &CommandArgs) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((ka, va), (kb, vb))| {
            ka == kb
                && match (va, vb) {
                    (V::Number(x), V::Number(y)) => x.to_bits() == y.to_bits(),
                    _ => va == vb,
                }
        })
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn parse_reads_back_what_format_writes(case in case()) {
        let prefix = case.prefix.as_deref();
        let line = format_invocation_text(&case.decl, &case.args, prefix).unwrap();
        prop_assert_eq!(match_command_name(&line, prefix), Some(case.decl.name.clone()));
        let parsed = parse_invocation_text(&case.decl, &line, prefix);
        prop_assert_eq!(parsed.as_ref(), Ok(&case.args), "line {:?}", line);
        prop_assert!(same(parsed.as_ref().unwrap(), &case.args), "line {:?}", line);
    }

    #[test]
    fn what_parses_formats_back_to_the_same_args(
        case in case(),
        tail in rich_string(vec!["sides".into(), "label".into()]),
    ) {
        let prefix = case.prefix.as_deref();
        let line = format!("{}{} {tail}", prefix.unwrap_or("/"), case.decl.name);
        if let Ok(args) = parse_invocation_text(&case.decl, &line, prefix) {
            let again = format_invocation_text(&case.decl, &args, prefix).unwrap();
            prop_assert_eq!(parse_invocation_text(&case.decl, &again, prefix), Ok(args));
        }
    }
}

/// A valid command name other than `name` (which is one): cut to 31
/// characters, then one that `name` does not end with.
fn other_name(name: &str) -> String {
    let mut other: String = name.chars().take(31).collect();
    other.push(if name.ends_with('x') { 'y' } else { 'x' });
    other
}

/// What the text lane made of a line, without the error's span (which
/// moves with the length of the name typed).
fn outcome(result: TextParseResult) -> Result<(String, CommandArgs), (String, String)> {
    match result {
        TextParseResult::Ok(invocation) => Ok((invocation.name, invocation.args)),
        TextParseResult::Error { name, error } => Err((name, format!("{:?}", error.kind()))),
        TextParseResult::None => Err((String::new(), "none".to_owned())),
    }
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn a_line_under_an_alias_reads_as_the_same_line_under_the_name(
        case in case(),
        alias in command_name(),
        capitals in prop::collection::vec(any::<bool>(), 32),
        tail in rich_string(vec!["sides".into(), "label".into()]),
    ) {
        // An alias other than the name, changed rather than the case
        // rejected: any case count finishes.
        let alias = if alias == case.decl.name { other_name(&alias) } else { alias };
        let mut registry = CommandRegistry::new();
        let settings = CommandSettings::new().aliases([alias.clone()]);
        let handler = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let registered = registry.register_with(case.decl.clone(), settings, handler);
        prop_assert!(registered.is_ok(), "generated declarations are valid: {:?}", registered.err());
        let typed: String = alias
            .chars()
            .zip(&capitals)
            .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c })
            .collect();
        let prefix = case.prefix.as_deref();
        let start = format!("{}{}", prefix.unwrap_or("/"), case.decl.name);
        let formatted = format_invocation_text(&case.decl, &case.args, prefix).unwrap();
        let written = formatted.strip_prefix(&start).unwrap().to_owned();
        for rest in [written, format!(" {tail}")] {
            let by_name = format!("{start}{rest}");
            let by_alias = format!("{}{typed}{rest}", prefix.unwrap_or("/"));
            let read = outcome(registry.parse_from_text(&by_alias, prefix));
            prop_assert_eq!(&read, &outcome(registry.parse_from_text(&by_name, prefix)), "{:?}", by_alias);
            // And as the declaration alone reads the line under its name.
            let alone = parse_invocation_text(&case.decl, &by_name, prefix);
            prop_assert_eq!(read.ok().map(|(_, args)| args), alone.ok());
        }
    }
}

proptest! {
    #![proptest_config(cases(1024))]

    #[test]
    fn arbitrary_lines_never_panic(line in any::<String>(), prefix in prefix()) {
        let prefix = prefix.as_deref();
        let _ = match_command_name(&line, prefix);
        if let Err(e) = parse_invocation_text(&roll(), &line, prefix) {
            prop_assert!(line.get(e.span()).is_some());
        }
    }

    #[test]
    fn invocation_lines_never_panic_and_spans_are_valid(
        case in case(),
        tail in rich_string(vec!["count".into(), "sides".into(), "label".into()]),
    ) {
        for (decl, name) in [(&case.decl, case.decl.name.clone()), (&roll(), "ROLL".to_owned())] {
            let prefix = case.prefix.as_deref();
            let line = format!("{}{name} {tail}", prefix.unwrap_or("/"));
            match parse_invocation_text(decl, &line, prefix) {
                Ok(args) => {
                    prop_assert!(args.keys().all(|k| decl.find_option(k).is_some()));
                }
                Err(e) => {
                    prop_assert!(line.get(e.span()).is_some(), "{:?} in {:?}", e.span(), line);
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }
    }
}

/// `decl` with random local bounds on every option: any bounds at all,
/// consistent or not, excluding the args or not.
fn with_bounds(mut decl: CommandDeclaration, seeds: &[(i64, i64, u8)]) -> CommandDeclaration {
    for (option, (a, b, which)) in decl.options.iter_mut().zip(seeds.iter().cycle()) {
        #[allow(clippy::cast_precision_loss)]
        let (a, b) = (*a as f64, *b as f64);
        if which & 1 != 0 {
            option.min_value = Some(a);
        }
        if which & 2 != 0 {
            option.max_value = Some(b);
        }
        if which & 4 != 0 {
            option.min_length = Some(a.abs() as usize % 8);
        }
        if which & 8 != 0 {
            option.max_length = Some(b.abs() as usize % 8);
        }
    }
    decl
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn bounds_leave_the_law_and_the_structured_check_alone(
        case in case(),
        seeds in prop::collection::vec((-20i64..20, -20i64..20, 0u8..16), 1..4),
    ) {
        let prefix = case.prefix.as_deref();
        let bounded = with_bounds(case.decl.clone(), &seeds);
        let line = format_invocation_text(&bounded, &case.args, prefix).unwrap();
        prop_assert_eq!(&line, &format_invocation_text(&case.decl, &case.args, prefix).unwrap());
        let parsed = parse_invocation_text(&bounded, &line, prefix);
        prop_assert_eq!(parsed.as_ref(), Ok(&case.args), "line {:?}", line);
        let checked = bounded.check_args(case.args.clone(), prefix);
        prop_assert_eq!(checked.as_ref(), Ok(&case.args));
        // Both lanes meet the same bounds check after parsing.
        let text_lane = bounded.check_bounds(parsed.as_ref().unwrap(), prefix);
        let structured = bounded.check_invocation(case.args.clone(), prefix);
        prop_assert_eq!(text_lane.as_ref().err(), structured.as_ref().err());
        prop_assert_eq!(case.decl.check_bounds(&case.args, prefix), Ok(()));
    }
}
