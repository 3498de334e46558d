//! Several text-lane prefixes as properties: no line of an answer made safe
//! against a client's prefixes reads as an invocation under any of them, and a
//! context reads the invoked name back under the longest prefix its line
//! starts with.
#![allow(clippy::unwrap_used)]

use std::borrow::Cow;

use botlane::framework::neutralise_answer_among;

use botlane::{
    match_command_name, CommandArgs, CommandContext, CommandInvocation, CommandSource, Message,
};

use crate::proptest_cases::cases;
use proptest::prelude::*;

/// Prefixes as a client allows them (non-empty, no whitespace), from a small
/// alphabet so that they overlap each other, the answer markers' signs
/// (`⚠`, `»`), the lines and a break between lines (U+0007, a control
/// character but no whitespace).
fn prefix() -> impl Strategy<Value = String> {
    "[!?/a-c⚠»é\u{7}-]{1,3}"
}

/// Up to nine distinct prefixes, the first the main one.
fn prefixes() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set(prefix(), 1..=9)
        .prop_map(|set| set.into_iter().collect::<Vec<_>>())
        .prop_shuffle()
}

/// Lines that often start with a prefix and a name, and sometimes with
/// whitespace, a marker or anything else.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ \t\n]{0,2}[!?/a-c⚠»é-]{0,4}[a-cR_-]{0,4}( [a-z0-9 ]{0,6})?",
        any::<String>(),
    ]
}

/// Texts of several such lines, joined by whatever a client may show as a
/// break (and by a zero-width space, which is none).
fn text() -> impl Strategy<Value = String> {
    let line_break = prop_oneof![
        Just("\n"),
        Just("\r\n"),
        Just("\r"),
        Just("\u{2028}"),
        Just("\u{2029}"),
        Just("\u{85}"),
        Just("\u{b}"),
        Just("\t"),
        Just("\u{7}"),
        Just("\u{200b}"),
    ];
    (
        line(),
        proptest::collection::vec((line_break, line()), 0..4),
    )
        .prop_map(|(first, rest)| {
            rest.into_iter()
                .fold(first, |text, (line_break, line)| text + line_break + &line)
        })
}

/// The lines a client may show for `text`: split at every control
/// character, U+2028 and U+2029.
fn shown_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
}

/// Whether a line of `text` would be marked: its first visible character
/// is ASCII punctuation, or the text from there starts with one of
/// `prefixes` (which may hold a control character: it ends a line, not
/// the text the grammar reads).
fn risky(text: &str, prefixes: &[&str]) -> bool {
    let mut start = 0;
    shown_lines(text).any(|line| {
        let visible = line.trim_start();
        let rest = &text[start + line.len() - visible.len()..];
        let line_break = text[start + line.len()..].chars().next();
        start += line.len() + line_break.map_or(0, char::len_utf8);
        visible.starts_with(|c: char| c.is_ascii_punctuation())
            || prefixes.iter().any(|p| rest.starts_with(p))
    })
}

proptest! {
    #![proptest_config(cases(1024))]

    #[test]
    fn no_line_of_a_neutralised_answer_reads_as_an_invocation_under_any_prefix(
        text in text(),
        prefixes in prefixes(),
    ) {
        let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        let safe = neutralise_answer_among(&text, &refs);
        // Read from its start (as the grammar reads a message) or line by
        // line, under any of the prefixes or any punctuation one.
        for prefix in refs.iter().copied().chain(["/", "!", "?", "-"]) {
            prop_assert_eq!(match_command_name(&safe, Some(prefix)), None, "{:?}", prefix);
            for line in shown_lines(&safe) {
                let name = match_command_name(line, Some(prefix));
                prop_assert_eq!(name, None, "{:?} reads {:?}", prefix, line);
            }
        }
        // Only what some prefix or the punctuation rule reads is marked:
        // borrowed, unchanged, when nothing is.
        let marked = risky(&text, &refs);
        prop_assert_eq!(safe != text, marked);
        prop_assert_eq!(matches!(safe, Cow::Borrowed(_)), !marked);
        // The text is kept but for the markers and the whitespace they
        // replace.
        let strip = |t: &str| t.replace(['⚠', '»'], "").split_whitespace().collect::<String>();
        prop_assert_eq!(strip(&safe), strip(&text));
    }

    #[test]
    fn the_invoked_name_is_read_under_the_longest_prefix_the_line_starts_with(
        line in line(),
        prefixes in prefixes(),
    ) {
        let invocation = CommandInvocation {
            name: "fallback".into(),
            args: CommandArgs::new(),
            source: CommandSource::Text,
        };
        let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", &line))
            .with_prefix(prefixes[0].as_str())
            .with_additional_prefixes(&prefixes[1..]);
        let trimmed = line.trim_start();
        let longest = prefixes
            .iter()
            .filter(|p| trimmed.starts_with(p.as_str()))
            .max_by_key(|p| p.len());
        let want = longest
            .and_then(|p| match_command_name(&line, Some(p)))
            .unwrap_or_else(|| "fallback".into());
        prop_assert_eq!(ctx.invoked_name(), want);
    }
}
