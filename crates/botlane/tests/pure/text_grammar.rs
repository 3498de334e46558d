//! The text grammar of `/work/shared/text-grammar.md`, rule by rule: every
//! example row, both format examples, and each bullet of §1–§6.
#![allow(clippy::unwrap_used)]

use botlane::framework::usage_line;

use botlane::{
    format_invocation_text, match_command_name, parse_invocation_text, CommandArgValue,
    CommandArgs, CommandDeclaration, CommandOption, CommandOptionType as T, FormatError,
    ParseError, ParseErrorKind as K,
};

use crate::fixtures::roll;

fn opt(name: &str, kind: T) -> CommandOption {
    CommandOption::new(name, "an option", kind)
}

/// Two strings and a trailing integer: no greedy string, so string tokens
/// are read one by one.
fn note() -> CommandDeclaration {
    CommandDeclaration::new("note", "Take a note")
        .option(opt("title", T::String))
        .option(opt("at", T::String))
        .option(opt("n", T::Integer))
}

fn echo() -> CommandDeclaration {
    CommandDeclaration::new("echo", "Say it back").option(opt("text", T::String))
}

fn ping() -> CommandDeclaration {
    CommandDeclaration::new("ping", "Check the bot")
}

fn choose() -> CommandDeclaration {
    CommandDeclaration::new("choose", "Pick")
        .option(opt("color", T::String).choices(["Red", "Blue"]))
        .option(opt("size", T::Integer).choices(["06", "20"]))
        .option(opt("ratio", T::Number).choices(["1.50", "1e3"]))
        .option(opt("flag", T::Boolean))
}

fn ban() -> CommandDeclaration {
    CommandDeclaration::new("ban", "Ban someone")
        .option(opt("who", T::User).required(true))
        .option(opt("where", T::Channel))
        .option(opt("as", T::Role))
}

fn args(pairs: &[(&str, CommandArgValue)]) -> CommandArgs {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn s(text: &str) -> CommandArgValue {
    CommandArgValue::from(text)
}

fn i(n: i64) -> CommandArgValue {
    CommandArgValue::Integer(n)
}

fn ok(decl: &CommandDeclaration, line: &str) -> CommandArgs {
    parse_invocation_text(decl, line, None)
        .unwrap_or_else(|e| panic!("{line:?} should parse, got {e} ({:?})", e.kind()))
}

fn err(decl: &CommandDeclaration, line: &str) -> ParseError {
    match parse_invocation_text(decl, line, None) {
        Ok(args) => panic!("{line:?} should fail, got {args:?}"),
        Err(e) => e,
    }
}

/// The bytes of `line` an error points at.
fn at<'a>(line: &'a str, e: &ParseError) -> &'a str {
    line.get(e.span())
        .expect("span is a valid range of the line")
}

// ---------------------------------------------------------------- examples

#[test]
fn example_rows() {
    let roll = roll();
    assert_eq!(ok(&roll, "/roll 2"), args(&[("count", i(2))]));
    assert_eq!(
        ok(&roll, "/ROLL 2 6 fire damage"),
        args(&[
            ("count", i(2)),
            ("sides", i(6)),
            ("label", s("fire damage"))
        ])
    );
    assert_eq!(
        ok(&roll, r#"/roll 2 label:"fire damage""#),
        args(&[("count", i(2)), ("label", s("fire damage"))])
    );
    assert_eq!(
        ok(&roll, "/roll 2 sides:20 label:x"),
        args(&[("count", i(2)), ("sides", i(20)), ("label", s("x"))])
    );
    assert_eq!(
        ok(&roll, r#"/roll 2 "6""#),
        args(&[("count", i(2)), ("sides", i(6))])
    );
    assert_eq!(
        err(&roll, "/roll sides:6 2").kind(),
        &K::PositionalAfterNamed
    );
    let e = err(&roll, "/roll two");
    assert_eq!(
        e.kind(),
        &K::InvalidValue {
            expected: T::Integer
        }
    );
    assert_eq!(e.option(), Some("count"));
    let e = err(&roll, "/roll");
    assert_eq!((e.kind(), e.option()), (&K::MissingRequired, Some("count")));
    assert_eq!(
        ok(&roll, r#"/roll 2 6 "x" y"#),
        args(&[("count", i(2)), ("sides", i(6)), ("label", s(r#""x" y"#))])
    );
    assert_eq!(
        ok(&roll, "/roll 2 6 label:x"),
        args(&[("count", i(2)), ("sides", i(6)), ("label", s("x"))])
    );
    assert_eq!(err(&roll, "/rolls 2").kind(), &K::NotThisCommand);
    assert_eq!(
        match_command_name("/rolls 2", None).as_deref(),
        Some("rolls")
    );
}

#[test]
fn format_examples() {
    let roll = roll();
    let mut a = args(&[("count", i(2)), ("label", s("fire damage"))]);
    assert_eq!(
        format_invocation_text(&roll, &a, None).unwrap(),
        r#"/roll 2 label:"fire damage""#
    );
    a.insert("sides".into(), i(6));
    assert_eq!(
        format_invocation_text(&roll, &a, None).unwrap(),
        "/roll 2 6 fire damage"
    );
}

// ------------------------------------------------------- §1 command name

#[test]
fn s1_leading_whitespace_is_skipped() {
    assert_eq!(
        match_command_name(" \t\n\u{3000}/roll", None).as_deref(),
        Some("roll")
    );
    assert_eq!(ok(&roll(), "   /roll 2"), args(&[("count", i(2))]));
}

#[test]
fn s1_prefix_is_compared_exactly() {
    assert_eq!(match_command_name("!roll", None), None);
    assert_eq!(
        match_command_name("!roll", Some("!")).as_deref(),
        Some("roll")
    );
    assert_eq!(match_command_name("BOT.roll", Some("bot.")), None);
    assert_eq!(
        match_command_name("bot.roll", Some("bot.")).as_deref(),
        Some("roll")
    );
    assert_eq!(
        match_command_name("🤖roll 1", Some("🤖")).as_deref(),
        Some("roll")
    );
    assert_eq!(match_command_name("x/roll", None), None);
    assert_eq!(match_command_name("", None), None);
    assert_eq!(match_command_name("/roll", Some("//")), None);
}

#[test]
fn s1_empty_prefix_matches_nothing() {
    assert_eq!(match_command_name("roll", Some("")), None);
    assert_eq!(match_command_name("/roll", Some("")), None);
    assert_eq!(
        parse_invocation_text(&roll(), "roll 2", Some(""))
            .unwrap_err()
            .kind(),
        &K::NotThisCommand
    );
}

#[test]
fn s1_prefix_leading_whitespace_is_ignored_like_the_lines() {
    assert_eq!(
        match_command_name(" !roll", Some(" !")).as_deref(),
        Some("roll")
    );
    assert_eq!(
        match_command_name("!roll", Some("\t!")).as_deref(),
        Some("roll")
    );
    assert_eq!(
        match_command_name("roll 2", Some(" ")).as_deref(),
        Some("roll")
    );
}

#[test]
fn s1_name_runs_to_the_first_whitespace_with_nothing_between_prefix_and_name() {
    assert_eq!(match_command_name("/ roll", None), None);
    assert_eq!(match_command_name("/", None), None);
    assert_eq!(
        match_command_name("/roll\n2", None).as_deref(),
        Some("roll")
    );
    assert_eq!(
        match_command_name("/roll\u{a0}2", None).as_deref(),
        Some("roll")
    );
    assert_eq!(match_command_name("/roll,2", None), None);
    assert_eq!(match_command_name("/roll:2", None), None);
    assert_eq!(err(&roll(), "/ roll 2").kind(), &K::NotThisCommand);
    assert_eq!(
        match_command_name("hey bot roll", Some("hey bot ")).as_deref(),
        Some("roll")
    );
}

#[test]
fn s1_only_ascii_letters_are_lowercased() {
    assert_eq!(match_command_name("/RoLL", None).as_deref(), Some("roll"));
    // Kelvin sign and Cyrillic а: look-alikes fail the name rule.
    assert_eq!(match_command_name("/\u{212a}ick", None), None);
    assert_eq!(match_command_name("/b\u{430}n", None), None);
    assert_eq!(match_command_name("/ROLLÉ", None), None);
    assert_eq!(err(&ban(), "/b\u{430}n u1").kind(), &K::NotThisCommand);
}

#[test]
fn s1_name_rule() {
    assert_eq!(match_command_name("/a_b-9", None).as_deref(), Some("a_b-9"));
    let long = "x".repeat(32);
    assert_eq!(
        match_command_name(&format!("/{long}"), None),
        Some(long.clone())
    );
    assert_eq!(match_command_name(&format!("/{long}x"), None), None);
    assert_eq!(match_command_name("/ro.ll", None), None);
}

// ---------------------------------------------------------------- §2 tokens

#[test]
fn s2_1_runs_of_whitespace_separate_tokens() {
    assert_eq!(
        ok(&note(), "/note a \t\n b\u{3000}\u{2028}7"),
        args(&[("title", s("a")), ("at", s("b")), ("n", i(7))])
    );
    assert_eq!(
        ok(&note(), "/note\ta  b   7   "),
        args(&[("title", s("a")), ("at", s("b")), ("n", i(7))])
    );
}

/// Whitespace is the Unicode `White_Space` property (`docs/text-grammar.md`,
/// its opening): NEL (U+0085) separates tokens; U+FEFF and U+200B, which are not
/// in it (though some regex engines' `\s` takes U+FEFF), stay in the token.
#[test]
fn s2_1_whitespace_is_the_unicode_white_space_property() {
    assert_eq!(
        ok(&note(), "/note a\u{85}b\u{85}7"),
        args(&[("title", s("a")), ("at", s("b")), ("n", i(7))])
    );
    assert_eq!(
        ok(&note(), "/note a\u{feff} b\u{200b} 7"),
        args(&[
            ("title", s("a\u{feff}")),
            ("at", s("b\u{200b}")),
            ("n", i(7))
        ])
    );
}

#[test]
fn s2_2_quoted_tokens_and_escapes() {
    let note = note();
    assert_eq!(
        ok(&note, r#"/note "two words" "a \"q\" \\ \x" 1"#),
        args(&[
            ("title", s("two words")),
            ("at", s(r#"a "q" \ x"#)),
            ("n", i(1))
        ])
    );
    assert_eq!(
        ok(&note, "/note \"line\none\" \"\" 1"),
        args(&[("title", s("line\none")), ("at", s("")), ("n", i(1))])
    );
}

#[test]
fn s2_2_typographic_quotes() {
    let note = note();
    assert_eq!(
        ok(&note, "/note “two words” «and more» 1"),
        args(&[
            ("title", s("two words")),
            ("at", s("and more")),
            ("n", i(1))
        ])
    );
    // Only the matching closer closes; other quotes inside are literal.
    assert_eq!(
        ok(&note, "/note “say \"hi\" »x»” «a”b» 1"),
        args(&[
            ("title", s("say \"hi\" »x»")),
            ("at", s("a”b")),
            ("n", i(1))
        ])
    );
    assert_eq!(
        ok(&note, "/note “a\\”b” x 1"),
        args(&[("title", s("a”b")), ("at", s("x")), ("n", i(1))])
    );
    assert_eq!(err(&note, "/note “a b\" 1").kind(), &K::UnterminatedQuote);
    assert_eq!(err(&note, "/note «a b” 1").kind(), &K::UnterminatedQuote);
}

#[test]
fn s2_2_apostrophes_are_never_quotes() {
    assert_eq!(
        ok(&note(), "/note 'two words' 1"),
        args(&[("title", s("'two")), ("at", s("words'")), ("n", i(1))])
    );
    assert_eq!(
        ok(&note(), "/note ’a b’ 1"),
        args(&[("title", s("’a")), ("at", s("b’")), ("n", i(1))])
    );
}

#[test]
fn s2_2_unterminated_quote_is_an_error() {
    let line = r#"/note "abc def"#;
    let e = err(&note(), line);
    assert_eq!(e.kind(), &K::UnterminatedQuote);
    assert_eq!(e.option(), Some("title"));
    assert_eq!(at(line, &e), r#""abc def"#);
    // A trailing backslash escapes nothing and leaves the quote open.
    assert_eq!(err(&note(), r#"/note "abc\"#).kind(), &K::UnterminatedQuote);
    assert_eq!(
        err(&note(), r#"/note "abc\" 1"#).kind(),
        &K::UnterminatedQuote
    );
}

#[test]
fn s2_2_text_after_closing_quote_is_an_error() {
    let line = r#"/note "ab"cd 1"#;
    let e = err(&note(), line);
    assert_eq!(e.kind(), &K::TextAfterClosingQuote);
    assert_eq!(at(line, &e), "cd");
    assert_eq!(
        err(&note(), "/note “ab”” 1").kind(),
        &K::TextAfterClosingQuote
    );
    assert_eq!(
        err(&note(), r#"/note title:"ab"x"#).kind(),
        &K::TextAfterClosingQuote
    );
}

#[test]
fn s2_2_a_quoted_token_is_never_named() {
    assert_eq!(
        ok(&note(), r#"/note "at:x" "n:1" 2"#),
        args(&[("title", s("at:x")), ("at", s("n:1")), ("n", i(2))])
    );
    let e = err(&roll(), r#"/roll 1 "sides:6""#);
    assert_eq!(
        e.kind(),
        &K::InvalidValue {
            expected: T::Integer
        }
    );
    assert_eq!(e.option(), Some("sides"));
}

#[test]
fn s2_3_quotes_and_backslashes_inside_bare_tokens_are_literal() {
    assert_eq!(
        ok(&note(), r#"/note it's 5" 1"#),
        args(&[("title", s("it's")), ("at", s("5\"")), ("n", i(1))])
    );
    assert_eq!(
        ok(&note(), r"/note C:\x a\ 1"),
        args(&[("title", s(r"C:\x")), ("at", s(r"a\")), ("n", i(1))])
    );
    assert_eq!(
        ok(&note(), "/note a“b c« 1"),
        args(&[("title", s("a“b")), ("at", s("c«")), ("n", i(1))])
    );
}

#[test]
fn s2_4_named_arguments() {
    let note = note();
    assert_eq!(
        ok(&note, "/note n:3 title:x"),
        args(&[("title", s("x")), ("n", i(3))])
    );
    // The value is everything after the first colon.
    assert_eq!(
        ok(&note, "/note title:a:b:c").get("title"),
        Some(&s("a:b:c"))
    );
    assert_eq!(
        ok(&note, "/note title:https://x.y").get("title"),
        Some(&s("https://x.y"))
    );
    // Quoted values may hold whitespace, with any opening quote.
    assert_eq!(
        ok(&note, r#"/note title:"two words" at:“x y” n:«1»"#),
        args(&[("title", s("two words")), ("at", s("x y")), ("n", i(1))])
    );
    assert_eq!(ok(&note, r#"/note title:"""#).get("title"), Some(&s("")));
    // A quote inside a bare value is literal.
    assert_eq!(
        ok(&note, r#"/note title:a"b"#).get("title"),
        Some(&s("a\"b"))
    );
}

#[test]
fn s2_4_named_keys_are_ascii_case_insensitive() {
    assert_eq!(
        ok(&roll(), "/roll 2 SIDES:6"),
        args(&[("count", i(2)), ("sides", i(6))])
    );
    assert_eq!(ok(&roll(), "/roll CoUnT:3"), args(&[("count", i(3))]));
    // Only ASCII folds: the long s `ſ` does not make `ſides` name `sides`.
    let e = err(&roll(), "/roll 2 \u{17f}ides:6");
    assert_eq!(
        e.kind(),
        &K::InvalidValue {
            expected: T::Integer
        }
    );
    assert_eq!(e.option(), Some("sides"));
    assert_eq!(
        ok(&roll(), "/roll 2 3 \u{17f}ides:6").get("label"),
        Some(&s("\u{17f}ides:6"))
    );
}

#[test]
fn s2_4_empty_named_value_is_an_error() {
    let line = "/note title: x";
    let e = err(&note(), line);
    assert_eq!(e.kind(), &K::EmptyNamedValue);
    assert_eq!(e.option(), Some("title"));
    assert_eq!(at(line, &e), "title:");
    assert_eq!(err(&roll(), "/roll 2 label:").kind(), &K::EmptyNamedValue);
}

#[test]
fn s2_4_other_tokens_with_a_colon_are_positional() {
    assert_eq!(
        ok(&note(), "/note 12:30 https://x.y 1"),
        args(&[("title", s("12:30")), ("at", s("https://x.y")), ("n", i(1))])
    );
    assert_eq!(
        ok(&note(), "/note other:x :y 1"),
        args(&[("title", s("other:x")), ("at", s(":y")), ("n", i(1))])
    );
}

// --------------------------------------------------------------- §3 binding

#[test]
fn s3_1_positional_values_fill_in_declared_order() {
    assert_eq!(
        ok(&note(), "/note a b 3"),
        args(&[("title", s("a")), ("at", s("b")), ("n", i(3))])
    );
    assert_eq!(ok(&note(), "/note a"), args(&[("title", s("a"))]));
}

#[test]
fn s3_2_named_may_follow_positional_but_not_precede_it() {
    assert_eq!(
        ok(&note(), "/note a n:3"),
        args(&[("title", s("a")), ("n", i(3))])
    );
    let line = "/note n:3 a";
    let e = err(&note(), line);
    assert_eq!(e.kind(), &K::PositionalAfterNamed);
    assert_eq!(at(line, &e), "a");
    assert_eq!(
        err(&note(), r#"/note at:x "a""#).kind(),
        &K::PositionalAfterNamed
    );
}

#[test]
fn s3_3_an_option_given_twice_is_an_error() {
    let line = "/note title:a title:b";
    let e = err(&note(), line);
    assert_eq!((e.kind(), e.option()), (&K::DuplicateOption, Some("title")));
    assert_eq!(e.span(), 14..21);
    let line = "/note a TITLE:b";
    let e = err(&note(), line);
    assert_eq!((e.kind(), e.option()), (&K::DuplicateOption, Some("title")));
    assert_eq!(at(line, &e), "TITLE:b");
    assert_eq!(
        err(&roll(), "/roll 2 6 sides:3").kind(),
        &K::DuplicateOption
    );
}

#[test]
fn s3_4_greedy_takes_the_rest_verbatim() {
    let roll = roll();
    assert_eq!(
        ok(&roll, "/roll 2 6   fire  \"hot\"\n damage \t ").get("label"),
        Some(&s("fire  \"hot\"\n damage"))
    );
    assert_eq!(
        ok(&roll, r"/roll 2 6 a\b \x").get("label"),
        Some(&s(r"a\b \x"))
    );
    assert_eq!(
        ok(&roll, r#"/roll 2 6 "x"y"#).get("label"),
        Some(&s(r#""x"y"#))
    );
    assert_eq!(
        ok(&roll, r#"/roll 2 6 "open"#).get("label"),
        Some(&s(r#""open"#))
    );
    assert_eq!(
        ok(&roll, "/roll 2 6 12:30 x").get("label"),
        Some(&s("12:30 x"))
    );
    assert_eq!(
        ok(&roll, "/roll 2 6 other:1 x").get("label"),
        Some(&s("other:1 x"))
    );
    assert_eq!(
        ok(&echo(), "/echo  hello   world ").get("text"),
        Some(&s("hello   world"))
    );
}

#[test]
fn s3_4_greedy_lone_quoted_token_gives_its_content() {
    let roll = roll();
    assert_eq!(
        ok(&roll, r#"/roll 2 6 "  padded \"x\" "  "#).get("label"),
        Some(&s(r#"  padded "x" "#))
    );
    assert_eq!(
        ok(&roll, "/roll 2 6 «sides:3»").get("label"),
        Some(&s("sides:3"))
    );
    assert_eq!(ok(&roll, r#"/roll 2 6 """#).get("label"), Some(&s("")));
}

#[test]
fn s3_4_greedy_yields_to_a_leading_named_argument() {
    let roll = roll();
    assert_eq!(ok(&roll, "/roll 2 6 LABEL:x").get("label"), Some(&s("x")));
    assert_eq!(
        err(&roll, "/roll 2 6 label:x y").kind(),
        &K::PositionalAfterNamed
    );
    assert_eq!(err(&roll, "/roll 2 6 label:").kind(), &K::EmptyNamedValue);
    assert_eq!(err(&roll, "/roll 2 6 count:1").kind(), &K::DuplicateOption);
}

#[test]
fn s3_4_greedy_only_for_the_last_string_option_and_before_any_named() {
    // After a named argument the rest is tokenised: `damage` is positional.
    assert_eq!(
        err(&roll(), "/roll 2 sides:6 fire damage").kind(),
        &K::PositionalAfterNamed
    );
    // Not the last option: one token each.
    assert_eq!(
        err(&note(), "/note a b c").kind(),
        &K::InvalidValue {
            expected: T::Integer
        }
    );
    // The last option is not a string: no greedy.
    let pick = CommandDeclaration::new("pick", "p")
        .option(opt("a", T::String))
        .option(opt("b", T::Boolean));
    assert_eq!(err(&pick, "/pick x yes no").kind(), &K::ExtraArgument);
}

#[test]
fn s3_4_an_empty_rest_leaves_the_greedy_option_unfilled() {
    assert_eq!(
        ok(&roll(), "/roll 2 6 \t\n "),
        args(&[("count", i(2)), ("sides", i(6))])
    );
    assert_eq!(ok(&echo(), "/echo"), CommandArgs::new());
}

#[test]
fn s3_5_extra_argument() {
    let line = "/ping now";
    let e = err(&ping(), line);
    assert_eq!((e.kind(), e.option()), (&K::ExtraArgument, None));
    assert_eq!(at(line, &e), "now");
    assert_eq!(err(&note(), "/note a b 1 2").kind(), &K::ExtraArgument);
    assert_eq!(ok(&ping(), "/ping  "), CommandArgs::new());
}

#[test]
fn s3_6_missing_required() {
    let line = "/roll sides:6";
    let e = err(&roll(), line);
    assert_eq!((e.kind(), e.option()), (&K::MissingRequired, Some("count")));
    assert_eq!(e.span(), line.len()..line.len());
    assert_eq!(err(&ban(), "/ban where:c1").option(), Some("who"));
}

#[test]
fn s3_7_unfilled_optional_options_are_absent() {
    let got = ok(&roll(), "/roll 2 label:x");
    assert!(!got.contains_key("sides"));
    assert_eq!(got.len(), 2);
}

// -------------------------------------------------------------- §4 coercion

#[test]
fn s4_integers() {
    let roll = roll();
    assert_eq!(ok(&roll, "/roll +7").get("count"), Some(&i(7)));
    assert_eq!(ok(&roll, "/roll -007").get("count"), Some(&i(-7)));
    assert_eq!(
        ok(&roll, "/roll 9007199254740991").get("count"),
        Some(&i(9_007_199_254_740_991))
    );
    assert_eq!(
        ok(&roll, "/roll -9007199254740991").get("count"),
        Some(&i(-9_007_199_254_740_991))
    );
    for bad in ["9007199254740992", "1.0", "1e3", "0x10", "", "٣"] {
        let line = format!(r#"/roll "{bad}""#);
        let e = err(&roll, &line);
        assert_eq!(
            e.kind(),
            &K::InvalidValue {
                expected: T::Integer
            },
            "{bad}"
        );
        assert_eq!(e.to_string(), r#"option "count" expects an integer"#);
    }
}

#[test]
fn s4_numbers_and_booleans() {
    let d = CommandDeclaration::new("m", "m")
        .option(opt("x", T::Number))
        .option(opt("b", T::Boolean));
    let x = |line: &str| ok(&d, line).get("x").cloned();
    assert_eq!(x("/m .5"), Some(CommandArgValue::Number(0.5)));
    assert_eq!(x("/m -2.5E3"), Some(CommandArgValue::Number(-2500.0)));
    assert_eq!(x("/m 1."), Some(CommandArgValue::Number(1.0)));
    for bad in ["inf", "NaN", "1e999", "1,5", "."] {
        let e = err(&d, &format!("/m {bad}"));
        assert_eq!(
            e.kind(),
            &K::InvalidValue {
                expected: T::Number
            },
            "{bad}"
        );
    }
    for (text, value) in [
        ("YES", true),
        ("1", true),
        ("True", true),
        ("no", false),
        ("0", false),
        ("FALSE", false),
    ] {
        assert_eq!(
            ok(&d, &format!("/m 1 {text}")).get("b"),
            Some(&CommandArgValue::Boolean(value))
        );
    }
    let e = err(&d, "/m 1 on");
    assert_eq!(
        e.kind(),
        &K::InvalidValue {
            expected: T::Boolean
        }
    );
    assert_eq!(e.option(), Some("b"));
}

#[test]
fn s4_ids_are_opaque_and_non_empty() {
    let ban = ban();
    assert_eq!(
        ok(&ban, "/ban @Alice#1 c:1 r"),
        args(&[("who", s("@Alice#1")), ("where", s("c:1")), ("as", s("r"))])
    );
    let e = err(&ban, r#"/ban """#);
    assert_eq!(e.kind(), &K::InvalidValue { expected: T::User });
    assert_eq!(e.to_string(), r#"option "who" expects a non-empty user id"#);
    assert_eq!(
        err(&ban, r#"/ban u where:"""#).kind(),
        &K::InvalidValue {
            expected: T::Channel
        }
    );
}

#[test]
fn s4_choices() {
    let choose = choose();
    assert_eq!(
        ok(&choose, "/choose Red 6 1.5 yes"),
        args(&[
            ("color", s("Red")),
            ("size", i(6)),
            ("ratio", CommandArgValue::Number(1.5)),
            ("flag", CommandArgValue::Boolean(true)),
        ])
    );
    assert_eq!(
        ok(&choose, "/choose size:+020 ratio:1000").get("ratio"),
        Some(&CommandArgValue::Number(1000.0))
    );
    let line = "/choose red";
    let e = err(&choose, line);
    assert_eq!(
        e.kind(),
        &K::NotInChoices {
            choices: vec!["Red".into(), "Blue".into()]
        }
    );
    assert_eq!(e.to_string(), r#"option "color" must be one of Red, Blue"#);
    assert_eq!(at(line, &e), "red");
    let e = err(&choose, "/choose Blue size:7");
    assert_eq!(e.to_string(), r#"option "size" must be one of 06, 20"#);
    assert_eq!(e.option(), Some("size"));
    // A value of the wrong type is a type error, not a choice error.
    assert_eq!(
        err(&choose, "/choose Blue x").kind(),
        &K::InvalidValue {
            expected: T::Integer
        }
    );
    // The greedy trailing string is checked against choices too.
    let tone = CommandDeclaration::new("tone", "t").option(opt("name", T::String).choices(["a b"]));
    assert_eq!(ok(&tone, "/tone a b").get("name"), Some(&s("a b")));
    assert!(matches!(
        err(&tone, "/tone a  b").kind(),
        K::NotInChoices { .. }
    ));
}

// ------------------------------------------------------------ §5 formatting

fn fmt(decl: &CommandDeclaration, pairs: &[(&str, CommandArgValue)]) -> String {
    format_invocation_text(decl, &args(pairs), None).unwrap()
}

fn fmt_err(decl: &CommandDeclaration, pairs: &[(&str, CommandArgValue)]) -> FormatError {
    format_invocation_text(decl, &args(pairs), None).unwrap_err()
}

#[test]
fn s5_1_errors_name_option_and_command() {
    let e = fmt_err(&roll(), &[("count", i(1)), ("colour", s("x"))]);
    assert!(matches!(e, FormatError::UnknownOption { .. }));
    assert_eq!(e.to_string(), r#"command "roll" has no option "colour""#);
    // Keys are exact: the text lane's case folding does not apply.
    assert!(matches!(
        fmt_err(&roll(), &[("COUNT", i(1))]),
        FormatError::UnknownOption { .. }
    ));
    let e = fmt_err(&roll(), &[("sides", i(6))]);
    assert_eq!(
        e.to_string(),
        r#"option "count" of command "roll" is required"#
    );
    let e = fmt_err(&choose(), &[("size", i(7))]);
    assert_eq!(
        e.to_string(),
        r#"option "size" of command "choose" must be one of 06, 20"#
    );
    assert!(matches!(
        fmt_err(&choose(), &[("color", s("red"))]),
        FormatError::NotInChoices { .. }
    ));
    let e = fmt_err(&roll(), &[("count", s("2"))]);
    assert_eq!(
        e.to_string(),
        r#"option "count" of command "roll" expects an integer"#
    );
    for bad in [
        CommandArgValue::Number(2.0),
        i(9_007_199_254_740_992),
        i(i64::MIN),
        CommandArgValue::Boolean(true),
    ] {
        assert!(matches!(
            fmt_err(&roll(), &[("count", bad)]),
            FormatError::WrongType { .. }
        ));
    }
    let n = CommandDeclaration::new("n", "n").option(opt("x", T::Number));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            fmt_err(&n, &[("x", CommandArgValue::Number(bad))]),
            FormatError::WrongType { .. }
        ));
    }
    assert!(matches!(
        fmt_err(&n, &[("x", i(1))]),
        FormatError::WrongType { .. }
    ));
    assert!(matches!(
        fmt_err(&ban(), &[("who", s(""))]),
        FormatError::WrongType { .. }
    ));
}

#[test]
fn s5_2_positional_while_filled_then_named() {
    assert_eq!(fmt(&note(), &[]), "/note");
    assert_eq!(
        fmt(&note(), &[("title", s("a")), ("at", s("b"))]),
        "/note a b"
    );
    assert_eq!(
        fmt(&note(), &[("title", s("a")), ("n", i(1))]),
        "/note a n:1"
    );
    assert_eq!(
        fmt(&note(), &[("at", s("b")), ("n", i(1))]),
        "/note at:b n:1"
    );
    assert_eq!(
        fmt(&roll(), &[("count", i(2)), ("label", s("x"))]),
        "/roll 2 label:x"
    );
    assert_eq!(
        format_invocation_text(&roll(), &args(&[("count", i(2))]), Some("bot. ")).unwrap(),
        "bot. roll 2"
    );
}

#[test]
fn s5_3_numbers_integers_booleans() {
    let d = CommandDeclaration::new("m", "m")
        .option(opt("i", T::Integer))
        .option(opt("x", T::Number))
        .option(opt("b", T::Boolean));
    let x = |n: f64| CommandArgValue::Number(n);
    let b = CommandArgValue::Boolean;
    assert_eq!(
        fmt(&d, &[("i", i(-42)), ("x", x(0.1)), ("b", b(true))]),
        "/m -42 0.1 true"
    );
    assert_eq!(
        fmt(&d, &[("i", i(0)), ("x", x(1e300)), ("b", b(false))]),
        "/m 0 1e300 false"
    );
    assert_eq!(fmt(&d, &[("x", x(2.0))]), "/m x:2");
    assert_eq!(fmt(&d, &[("x", x(-0.0))]), "/m x:-0");
    assert_eq!(fmt(&d, &[("x", x(5e-324))]), "/m x:5e-324");
}

#[test]
fn s5_4_string_quoting() {
    let note = note();
    assert_eq!(
        fmt(&note, &[("title", s("")), ("at", s("it's"))]),
        r#"/note "" it's"#
    );
    assert_eq!(
        fmt(&note, &[("title", s("a b")), ("at", s("a\nb"))]),
        "/note \"a b\" \"a\nb\""
    );
    assert_eq!(
        fmt(&note, &[("title", s("“x")), ("at", s("«y"))]),
        "/note \"“x\" \"«y\""
    );
    assert_eq!(
        fmt(&note, &[("title", s("x“")), ("at", s("5\""))]),
        "/note x“ 5\""
    );
    assert_eq!(
        fmt(&note, &[("title", s("\"q")), ("at", s("a\\ b"))]),
        r#"/note "\"q" "a\\ b""#
    );
    // A positional value that reads as a named argument is quoted (any case);
    // undeclared names are not.
    assert_eq!(
        fmt(&note, &[("title", s("AT:x")), ("at", s("other:y"))]),
        r#"/note "AT:x" other:y"#
    );
    // Named values: the same rules without the NAME: test.
    assert_eq!(fmt(&note, &[("at", s("n:1"))]), "/note at:n:1");
    assert_eq!(fmt(&note, &[("at", s(""))]), r#"/note at:"""#);
    assert_eq!(
        fmt(&note, &[("at", s("two words"))]),
        r#"/note at:"two words""#
    );
    assert_eq!(fmt(&note, &[("at", s("\"x\\"))]), r#"/note at:"\"x\\""#);
    assert_eq!(fmt(&note, &[("at", s("«x"))]), "/note at:\"«x\"");
}

#[test]
fn s5_5_greedy_trailing_string() {
    let roll = roll();
    let g = |label: &str| {
        fmt(
            &roll,
            &[("count", i(1)), ("sides", i(6)), ("label", s(label))],
        )
    };
    assert_eq!(g("fire \"hot\" damage"), "/roll 1 6 fire \"hot\" damage");
    assert_eq!(g(r"a\b"), r"/roll 1 6 a\b");
    assert_eq!(g(" padded"), r#"/roll 1 6 " padded""#);
    assert_eq!(g("padded\n"), "/roll 1 6 \"padded\n\"");
    assert_eq!(g(""), r#"/roll 1 6 """#);
    assert_eq!(g("   "), r#"/roll 1 6 "   ""#);
    assert_eq!(g("\"x\" y"), r#"/roll 1 6 "\"x\" y""#);
    assert_eq!(g("“x” y"), "/roll 1 6 \"“x” y\"");
    assert_eq!(g("Sides:3 more"), r#"/roll 1 6 "Sides:3 more""#);
    assert_eq!(g("https://x.y now"), "/roll 1 6 https://x.y now");
    // With an earlier option unfilled the last string is named, not greedy.
    assert_eq!(
        fmt(&roll, &[("count", i(1)), ("label", s("a b"))]),
        r#"/roll 1 label:"a b""#
    );
    assert_eq!(
        fmt(&roll, &[("count", i(1)), ("label", s("ab"))]),
        "/roll 1 label:ab"
    );
}

#[test]
fn s5_formatted_lines_parse_back() {
    let roll = roll();
    for label in [
        "", " ", "x", "a b", "\"x\" y", "\"x\"", "“x”", "sides:3", "label:x", "a\\", "\n", "«»",
    ] {
        for a in [
            args(&[("count", i(1)), ("sides", i(6)), ("label", s(label))]),
            args(&[("count", i(1)), ("label", s(label))]),
        ] {
            for prefix in [None, Some("!"), Some("bot."), Some(" "), Some("🤖 ")] {
                let line = format_invocation_text(&roll, &a, prefix).unwrap();
                assert_eq!(
                    parse_invocation_text(&roll, &line, prefix).unwrap(),
                    a,
                    "{line:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------- §6 errors

#[test]
fn s6_errors_carry_usage_with_the_prefix_used() {
    let e = parse_invocation_text(&roll(), "!roll", Some("!")).unwrap_err();
    assert_eq!(e.usage(), "!roll <count> [sides] [label]");
    assert_eq!(
        err(&roll(), "/roll x").usage(),
        "/roll <count> [sides] [label]"
    );
    assert_eq!(err(&ping(), "/ping x").usage(), "/ping");
    assert_eq!(e.command(), "roll");
    assert_eq!(
        usage_line(&ban(), Some("bot.")),
        "bot.ban <who> [where] [as]"
    );
}

#[test]
fn s6_spans_point_at_the_offending_bytes() {
    let line = "  /roll 2 sides:x";
    let e = err(&roll(), line);
    assert_eq!(at(line, &e), "x");
    assert_eq!(e.span(), 16..17);
    let line = "/roll 2 sides:«é»";
    let e = err(&roll(), line);
    assert_eq!(at(line, &e), "«é»");
    let line = "/roll é";
    assert_eq!(at(line, &err(&roll(), line)), "é");
    let line = "  /rolls 2";
    assert_eq!(at(line, &err(&roll(), line)), "/rolls");
    let line = " hello there";
    assert_eq!(at(line, &err(&roll(), line)), "hello");
    let line = "/note “ab”é 1";
    assert_eq!(at(line, &err(&note(), line)), "é");
}

#[test]
fn s6_display_is_one_sentence_without_the_line() {
    let secret = "hunter2secret";
    let cases: Vec<(CommandDeclaration, String)> = vec![
        (roll(), format!("/roll {secret}")),
        (roll(), format!("/rolls {secret}")),
        (roll(), secret.to_string()),
        (roll(), format!("/roll 2 sides:{secret}")),
        (roll(), format!("/roll sides:6 {secret}")),
        (roll(), format!("/roll 2 \"{secret}")),
        (roll(), format!("/roll 2 \"6\"{secret}")),
        (roll(), format!("/roll label:{secret} sides:{secret}")),
        (roll(), format!("/roll 2 6 sides:{secret}")),
        (roll(), format!("/roll label:{secret}")),
        (ping(), format!("/ping {secret}")),
        (choose(), format!("/choose {secret}")),
        (note(), format!("/note title: {secret}")),
    ];
    let mut kinds = Vec::new();
    for (decl, line) in cases {
        let e = err(&decl, &line);
        let message = e.to_string();
        assert!(!message.contains(secret), "{message}");
        assert!(!message.contains(&line), "{message}");
        assert!(
            !message.contains('\n') && !message.ends_with('.'),
            "{message}"
        );
        assert!(message.chars().next().unwrap().is_lowercase(), "{message}");
        kinds.push(e.kind().clone());
    }
    // The cases cover every kind.
    for kind in [
        K::NotThisCommand,
        K::UnterminatedQuote,
        K::TextAfterClosingQuote,
        K::EmptyNamedValue,
        K::PositionalAfterNamed,
        K::DuplicateOption,
        K::ExtraArgument,
        K::MissingRequired,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} not covered");
    }
    assert!(kinds.iter().any(|k| matches!(k, K::InvalidValue { .. })));
    assert!(kinds.iter().any(|k| matches!(k, K::NotInChoices { .. })));
}

#[test]
fn s6_messages_name_option_and_expectation() {
    assert_eq!(
        err(&roll(), "/roll 2 x").to_string(),
        r#"option "sides" expects an integer"#
    );
    assert_eq!(
        err(&roll(), "/roll").to_string(),
        r#"option "count" is required"#
    );
    assert_eq!(
        err(&roll(), "/roll 1 sides:2 sides:3").to_string(),
        r#"option "sides" is given more than once"#
    );
    assert_eq!(
        err(&roll(), "/roll 1 label:").to_string(),
        r#"option "label" is named but has no value after the colon"#
    );
    assert_eq!(
        err(&roll(), "/roll1").to_string(),
        r#"the line does not invoke the command "roll""#
    );
    assert_eq!(
        err(&ping(), "/ping 1").to_string(),
        r#"too many values for the command "ping""#
    );
    let boxed: Box<dyn std::error::Error> = Box::new(err(&roll(), "/roll"));
    assert!(boxed.to_string().contains("count"));
}

// ------------------------------------------------------------------- never panics

#[test]
fn odd_inputs_do_not_panic() {
    for line in [
        "",
        "/",
        "\"",
        "/roll \"",
        "/roll 2 6 \"",
        "/roll 2 6 «",
        "/roll «",
        "/roll 2 sides:“",
        "/roll 2 sides:\\",
        "/roll \\",
        "/roll 2 6 \"\\",
        "/roll 2 6 label:“é",
        "/roll \u{0}",
        "/roll é:é",
        "/roll 2 6 é",
        "\u{feff}/roll",
        "/roll 2 sides:«é\\»",
    ] {
        let _ = parse_invocation_text(&roll(), line, None);
        let _ = parse_invocation_text(&note(), line, Some("é"));
        let _ = match_command_name(line, Some("«"));
    }
}

// ------------------------------------------- after parsing: bounds, detail

#[test]
fn bounds_do_not_change_what_parses_and_are_checked_after() {
    let remind = CommandDeclaration::new("remind", "Remind me")
        .option(opt("minutes", T::Integer).required(true).min(1).max(60))
        .option(opt("note", T::String).min_length(2));
    // The grammar is the spec's: an out-of-bounds value parses.
    let args = parse_invocation_text(&remind, "/remind 61 a", None).unwrap();
    assert_eq!(args["minutes"], CommandArgValue::Integer(61));
    assert_eq!(
        format_invocation_text(&remind, &args, None).unwrap(),
        "/remind 61 a"
    );
    let e = remind.check_bounds(&args, Some("!")).unwrap_err();
    assert_eq!(e.option(), "minutes");
    assert_eq!(
        e.to_string(),
        "option \"minutes\" must be at most 60\nusage: !remind <minutes (1 to 60)> [note (at least 2 characters)]"
    );
    let args = parse_invocation_text(&remind, "/remind 60 a", None).unwrap();
    assert_eq!(
        remind.check_bounds(&args, None).unwrap_err().option(),
        "note",
        "the greedy string is one value, counted in characters"
    );
    let args = parse_invocation_text(&remind, "/remind 60 éé", None).unwrap();
    assert!(remind.check_bounds(&args, None).is_ok());
}

#[test]
fn a_parse_error_about_one_value_has_argument_detail() {
    use botlane::framework::ArgValueKind;
    use botlane::ArgumentRule;
    let e = err(&roll(), "/roll");
    let detail = e.argument_error().unwrap();
    assert_eq!(
        (detail.option(), detail.rule(), detail.value_kind()),
        ("count", &ArgumentRule::Missing, None)
    );
    let e = err(&roll(), "/roll 2 sides:x");
    let detail = e.argument_error().unwrap();
    assert_eq!(
        (detail.option(), detail.rule(), detail.value_kind()),
        (
            "sides",
            &ArgumentRule::WrongType {
                expected: T::Integer
            },
            Some(ArgValueKind::String)
        )
    );
    assert_eq!(detail.usage(), Some(e.usage()));
    let choose = CommandDeclaration::new("choose", "Pick").option(
        opt("color", T::String)
            .required(true)
            .choices(["red", "blue"]),
    );
    let e = err(&choose, "/choose green");
    assert_eq!(
        e.argument_error().unwrap().to_string(),
        "option \"color\" must be one of red, blue\nusage: /choose <color>"
    );
    for line in [
        "/roll 2 \"6",
        "/roll sides:6 2",
        "/rolls 2",
        "/roll 1 count:2",
    ] {
        assert!(err(&roll(), line).argument_error().is_none(), "{line}");
    }
    assert!(err(&ping(), "/ping x").argument_error().is_none());
}

#[test]
fn a_parse_error_as_an_answer_ends_with_its_usage_line() {
    let e = err(&roll(), "/roll two");
    assert_eq!(
        e.with_usage().to_string(),
        "option \"count\" expects an integer\nusage: /roll <count> [sides] [label]"
    );
    let e = err(&ping(), "/ping x");
    assert_eq!(
        e.with_usage().to_string(),
        "too many values for the command \"ping\"\nusage: /ping"
    );
}
