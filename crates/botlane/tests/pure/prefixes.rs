//! Several text-lane prefixes as properties: an answer made safe against a
//! client's prefixes never reads as an invocation under any of them, and a
//! context reads the invoked name back under the longest prefix its line
//! starts with.
#![allow(clippy::unwrap_used)]

use botlane::{
    match_command_name, neutralise_answer_among, CommandArgs, CommandContext, CommandInvocation,
    CommandSource, Message,
};

use crate::proptest_cases::cases;
use proptest::prelude::*;

/// Prefixes as a client allows them (non-empty, no whitespace), from a small
/// alphabet so that they overlap each other, the answer markers' signs
/// (`⚠`, `»`) and the lines.
fn prefix() -> impl Strategy<Value = String> {
    "[!?/a-c⚠»é-]{1,3}"
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

proptest! {
    #![proptest_config(cases(1024))]

    #[test]
    fn a_neutralised_answer_reads_as_no_invocation_under_any_prefix(
        text in line(),
        prefixes in prefixes(),
    ) {
        let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        let safe = neutralise_answer_among(&text, &refs);
        for prefix in &refs {
            prop_assert_eq!(match_command_name(&safe, Some(prefix)), None, "{:?}", prefix);
        }
        // Only what some prefix or the punctuation rule reads is marked.
        let risky = text.trim_start().starts_with(|c: char| c.is_ascii_punctuation())
            || refs.iter().any(|p| text.trim_start().starts_with(p));
        prop_assert_eq!(safe != text, risky);
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
