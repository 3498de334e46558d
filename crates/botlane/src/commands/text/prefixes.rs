//! A client's text-lane prefixes: its main one, which everything it writes
//! (usage lines, the help) uses, and the additional ones it also reads
//! (poise's `additional_prefixes`).
//!
//! A line uses the longest of them it starts with, so that with `!` and
//! `!!`, `!!roll` is `roll` under `!!` rather than `!roll` under `!`. The
//! choice depends on the prefixes only, never on the registry: a line
//! means the same whatever is registered when it arrives.

use std::sync::Arc;

use super::lexer::space_len;
use crate::commands::limits::{DEFAULT_COMMAND_PREFIX, MAX_COMMAND_PREFIX_CHARS};

/// The prefixes a client reads, owned: built once per client and shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prefixes {
    main: Box<str>,
    // Shared: a message's own main prefix (a dynamic prefix) keeps the
    // client's other prefixes without copying them.
    additional: Arc<[Box<str>]>,
}

impl Prefixes {
    pub(crate) fn new<S: AsRef<str>>(main: &str, additional: &[S]) -> Self {
        Self {
            main: main.into(),
            additional: additional.iter().map(|p| p.as_ref().into()).collect(),
        }
    }

    /// These prefixes with `main` for the main one, the others shared;
    /// `main` is left out of the others if it is one of them, so that the
    /// help does not name it twice.
    pub(crate) fn replacing_main(&self, main: String) -> Self {
        let additional = if self.additional.iter().any(|p| **p == *main) {
            self.additional
                .iter()
                .filter(|p| ***p != *main)
                .cloned()
                .collect()
        } else {
            Arc::clone(&self.additional)
        };
        Self {
            main: main.into_boxed_str(),
            additional,
        }
    }

    /// The main prefix.
    pub(crate) fn main(&self) -> &str {
        &self.main
    }

    pub(crate) fn set(&self) -> PrefixSet<'_> {
        PrefixSet {
            main: &self.main,
            additional: &self.additional,
        }
    }
}

/// The prefixes a line is read with, borrowed: what the text lane, the
/// help and answers take, so that a single prefix costs nothing to pass.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PrefixSet<'a> {
    /// The prefix everything written uses.
    pub(crate) main: &'a str,
    /// The other prefixes read, in the order given.
    pub(crate) additional: &'a [Box<str>],
}

impl<'a> PrefixSet<'a> {
    /// Only `main`, or [`DEFAULT_COMMAND_PREFIX`] for `None`.
    pub(crate) fn single(main: Option<&'a str>) -> Self {
        Self {
            main: main.unwrap_or(DEFAULT_COMMAND_PREFIX),
            additional: &[],
        }
    }

    /// `prefixes`, else only [`DEFAULT_COMMAND_PREFIX`]: what a context or
    /// a failure holds, `None` until it is given prefixes.
    pub(crate) fn of(prefixes: Option<&'a Prefixes>) -> Self {
        prefixes.map_or(Self::single(None), Prefixes::set)
    }

    /// These prefixes with `main` for the main one, owned (the `with_prefix`
    /// builders).
    pub(crate) fn with_main(self, main: &str) -> Prefixes {
        Prefixes::new(main, self.additional)
    }

    /// These prefixes with `additional` for the others, owned (the
    /// `with_additional_prefixes` builders).
    pub(crate) fn with_additional<S: AsRef<str>>(
        self,
        additional: impl IntoIterator<Item = S>,
    ) -> Prefixes {
        let additional: Vec<S> = additional.into_iter().collect();
        Prefixes::new(self.main, &additional)
    }

    /// The main prefix, then the additional ones.
    pub(crate) fn all(self) -> impl Iterator<Item = &'a str> + Clone {
        std::iter::once(self.main).chain(self.additional.iter().map(|p| &**p))
    }

    /// The prefix `text` uses: of those it starts with after its leading
    /// whitespace, the longest; `None` when it starts with none. A
    /// prefix's own leading whitespace is ignored and an empty prefix
    /// matches nothing, as in `match_command_name`. Two that both match are
    /// one a prefix of the other, so the longest is unique unless they are
    /// equal.
    pub(crate) fn used_by(self, text: &str) -> Option<&'a str> {
        let line = &text.as_bytes()[space_len(text)..];
        self.all()
            .filter(|prefix| {
                let bytes = &prefix.as_bytes()[space_len(prefix)..];
                !prefix.is_empty() && line.starts_with(bytes)
            })
            .max_by_key(|prefix| prefix.len() - space_len(prefix))
    }
}

/// The rule `prefix` breaks, if any: what every text-lane prefix must be
/// (the client's, its other ones, a dynamic one).
pub(crate) fn prefix_rule(prefix: &str) -> Option<String> {
    if prefix.is_empty() {
        return Some("must not be empty".into());
    }
    let chars = prefix.chars().count();
    if chars > MAX_COMMAND_PREFIX_CHARS {
        return Some(format!(
            "must be at most {MAX_COMMAND_PREFIX_CHARS} characters (it has {chars})"
        ));
    }
    if prefix.chars().any(char::is_whitespace) {
        return Some("must not contain whitespace".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used<'a>(text: &str, set: &'a Prefixes) -> Option<&'a str> {
        set.set().used_by(text)
    }

    #[test]
    fn the_longest_prefix_a_line_starts_with_is_the_one_it_uses() {
        let set = Prefixes::new("!", &["!!", "?", "bot!"]);
        assert_eq!(used("!!roll", &set), Some("!!"));
        assert_eq!(used("  !roll", &set), Some("!"));
        assert_eq!(used("!!!roll", &set), Some("!!"));
        assert_eq!(used("?roll", &set), Some("?"));
        assert_eq!(used("bot!roll", &set), Some("bot!"));
        assert_eq!(used("bot roll", &set), None);
        assert_eq!(used("/roll", &set), None);
        assert_eq!(used("", &set), None);
        // The main one may be the longer.
        let set = Prefixes::new("!!", &["!"]);
        assert_eq!(used("!!roll", &set), Some("!!"));
        assert_eq!(used("!roll", &set), Some("!"));
    }

    #[test]
    fn an_empty_prefix_is_never_used_and_a_prefix_s_leading_space_is_ignored() {
        let set = Prefixes::new("", &[" !"]);
        assert_eq!(used("!roll", &set), Some(" !"));
        assert_eq!(used("roll", &set), None);
        // A whitespace-only prefix matches any line, as it does alone.
        let set = Prefixes::new("\u{3000}", &["!"]);
        assert_eq!(used("!roll", &set), Some("!"));
        assert_eq!(used("roll", &set), Some("\u{3000}"));
    }

    #[test]
    fn a_shorter_prefix_is_no_fallback_for_a_name_the_longest_leaves_invalid() {
        use crate::framework::CommandSettings;
        use crate::{CommandDeclaration, CommandRegistry, TextParseResult};
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let mut registry = CommandRegistry::<()>::new();
        registry
            .register_with(
                CommandDeclaration::new("roll", "Roll"),
                CommandSettings::new().aliases(["r"]),
                ok,
            )
            .unwrap();
        // With `!` and `!r`, `!roll` is `oll` under `!r` and `!r` names
        // nothing, though `!` alone would read `roll` and `r`.
        let set = Prefixes::new("!", &["!r"]);
        for line in ["!roll", "!r", "!r 2"] {
            assert_eq!(
                registry.parse_among(line, set.set(), String::new),
                (TextParseResult::None, None),
                "{line:?}"
            );
        }
        let (TextParseResult::Ok(invocation), Some(index)) =
            registry.parse_among("!rroll", set.set(), String::new)
        else {
            panic!("`roll` under `!r`");
        };
        assert_eq!(invocation.name, "roll");
        assert_eq!(registry.at(index).decl.name, "roll");
    }

    #[test]
    fn a_replaced_main_prefix_shares_the_others_and_is_not_named_twice() {
        let client = Prefixes::new("!", &["!!", "?"]);
        let replaced = client.replacing_main("$".to_owned());
        assert_eq!(replaced.set().all().collect::<Vec<_>>(), ["$", "!!", "?"]);
        assert!(Arc::ptr_eq(&replaced.additional, &client.additional));
        let replaced = client.replacing_main("?".to_owned());
        assert_eq!(replaced.set().all().collect::<Vec<_>>(), ["?", "!!"]);
        assert_eq!(used("!roll", &replaced), None);
        assert_eq!(used("?roll", &replaced), Some("?"));
    }

    #[test]
    fn a_multi_byte_prefix_is_compared_exactly() {
        let set = Prefixes::new("»", &["»»", "é"]);
        assert_eq!(used("»»roll", &set), Some("»»"));
        assert_eq!(used("»roll", &set), Some("»"));
        // `e` then a combining acute is not `é`.
        assert_eq!(used("e\u{301}roll", &set), None);
    }
}
