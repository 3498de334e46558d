//! Doc comments as the derives read them: an option's whole comment is its
//! description; a command's is split as poise splits it, the first
//! paragraph the description and the rest the help text. And the help
//! text's rule, which botlane's registration checks again at run time.
//! A `#[command]` fn's parameters are described in its own doc comment,
//! under `# Options`, which the command's doc comment leaves out.

use proc_macro2::Span;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

use crate::rules::Errors;

pub(crate) use botlane_proto::limits::MAX_HELP_TEXT_CHARS;

/// One line of a doc comment, trimmed, with the span of the `///` it is on.
struct DocLine {
    text: String,
    span: Span,
}

/// The lines of the doc attributes, each trimmed (as rustdoc and poise
/// do); `None` when there is no doc comment at all.
fn doc_lines(attrs: &[Attribute]) -> Option<Vec<DocLine>> {
    let mut lines = None::<Vec<DocLine>>;
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            let span = attr_span(attr);
            let value = s.value();
            lines
                .get_or_insert_with(Vec::new)
                .extend(attr_lines(&value).into_iter().map(|line| DocLine {
                    text: line.to_owned(),
                    span,
                }));
        }
    }
    lines
}

/// The lines of one doc attribute's text, trimmed. A block comment
/// (`/** */`) written with a column of `*` down its left side loses it, as
/// rustdoc reads it: when its text has several lines and each between its
/// first and last non-blank ones starts with `*`. A `///` line is one line,
/// so a bullet written `/// * /roll 2` keeps its star.
fn attr_lines(value: &str) -> Vec<&str> {
    // A `///` with nothing after it is a doc attribute of "", which has
    // no lines: it is still a blank line.
    let mut lines: Vec<&str> = value
        .lines()
        .chain(value.is_empty().then_some(""))
        .map(str::trim)
        .collect();
    let first = lines.iter().position(|l| !l.is_empty());
    let last = lines.iter().rposition(|l| !l.is_empty());
    if let (true, Some(first), Some(last)) = (lines.len() > 1, first, last) {
        let unstarred: Option<Vec<&str>> = lines[first..=last]
            .iter()
            .map(|l| l.strip_prefix('*').map(str::trim_start))
            .collect();
        if let Some(unstarred) = unstarred {
            lines.splice(first..=last, unstarred);
        }
    }
    lines
}

fn attr_span(attr: &Attribute) -> Span {
    let tokens = quote!(#attr);
    syn::spanned::Spanned::span(&tokens)
}

/// The text of an option's `///` lines: each line trimmed, blank lines
/// dropped, joined with single spaces. `None` when there is no doc comment
/// at all.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<(String, Span)> {
    let lines = doc_lines(attrs)?;
    let span = lines.first().map_or_else(Span::call_site, |l| l.span);
    let texts: Vec<&str> = lines
        .iter()
        .map(|l| l.text.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    Some((texts.join(" "), span))
}

/// One parameter described under `# Options` in a `#[command]` fn's doc
/// comment: an item `` * `name`: description ``.
pub(crate) struct OptionDoc {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) span: Span,
}

/// A `#[command]` fn's doc comment in two parts: its `# Options` section,
/// one description per parameter (rustc refuses a doc comment on a
/// parameter, and rustdoc shows this section with the function), and every
/// other line, the command's own doc comment, each with its span.
#[derive(Default)]
pub(crate) struct FnDoc {
    pub(crate) command: Vec<(String, Span)>,
    pub(crate) options: Vec<OptionDoc>,
}

/// The title of a Markdown heading line (`# Options` is `Options`).
fn heading(line: &str) -> Option<&str> {
    let title = line.trim_start_matches('#');
    (title.len() < line.len() && title.starts_with(' ')).then(|| title.trim())
}

const OPTION_ITEM: &str = "an item under `# Options` reads ``* `name`: description``, \
                           `name` a parameter";

/// Splits a `#[command]` fn's doc comment (see [`FnDoc`]). The section
/// runs from a `# Options` heading to the next heading outside a code
/// block; an item may go on over the lines that follow it up to a blank
/// line.
pub(crate) fn fn_doc(attrs: &[Attribute], errors: &mut Errors) -> FnDoc {
    let mut out = FnDoc::default();
    let (mut fenced, mut in_section, mut item_open) = (false, false, false);
    for line in doc_lines(attrs).unwrap_or_default() {
        if line.text.starts_with("```") {
            fenced = !fenced;
        }
        if let Some(title) = heading(&line.text).filter(|_| !fenced) {
            in_section = title == "Options";
            item_open = false;
            if in_section {
                continue;
            }
        }
        if !in_section {
            out.command.push((line.text, line.span));
            continue;
        }
        let text = line.text.as_str();
        match text.strip_prefix("* ").or_else(|| text.strip_prefix("- ")) {
            Some(item) => match option_item(item) {
                Some((name, _)) if out.options.iter().any(|o| o.name == name) => {
                    errors.at(
                        line.span,
                        format!("`{name}` is described twice under `# Options`"),
                    );
                }
                Some((name, text)) => {
                    out.options.push(OptionDoc {
                        name: name.to_owned(),
                        text: text.to_owned(),
                        span: line.span,
                    });
                    item_open = true;
                }
                None => errors.at(line.span, OPTION_ITEM),
            },
            None if text.is_empty() => item_open = false,
            None => match out.options.last_mut().filter(|_| item_open) {
                Some(item) => {
                    item.text.push(' ');
                    item.text.push_str(text);
                }
                None => errors.at(
                    line.span,
                    "`# Options` holds only items ``* `name`: description``: write other \
                     text before it, or under another heading",
                ),
            },
        }
    }
    out
}

/// `` `name`: description `` as (name, description).
fn option_item(item: &str) -> Option<(&str, &str)> {
    let (name, rest) = item.strip_prefix('`')?.split_once('`')?;
    let text = rest.strip_prefix(':')?.trim();
    (!name.is_empty()).then_some((name, text))
}

/// A command's doc comment, split at its first blank line.
pub(crate) struct CommandDoc {
    /// The first paragraph, its lines joined with single spaces; empty when
    /// the comment is blank.
    pub(crate) description: String,
    /// Where the comment starts.
    pub(crate) span: Span,
    /// The paragraphs after the first, if any.
    pub(crate) help: Option<HelpText>,
}

/// A help text and where each of its lines comes from.
pub(crate) struct HelpText {
    pub(crate) text: String,
    /// The span of each line of `text` (split at `\n`), in order.
    pub(crate) line_spans: Vec<Span>,
}

/// A command's doc comment as poise 0.6 reads it: the lines trimmed, a
/// line ending in `\` continued by the next (poise's escape, so that
/// `wrapped \` + `prose` is `wrapped prose`), then the first paragraph the
/// description, and what follows the first blank line the help text.
///
/// The help text keeps its lines, as poise does: the help shows and marks
/// each line on its own, so a list or an example written one per line
/// stays one per line. Runs of blank lines become one (a paragraph break),
/// as rustdoc reads them. `None` when there is no doc comment at all.
pub(crate) fn command_doc(attrs: &[Attribute]) -> Option<CommandDoc> {
    let raw = doc_lines(attrs)?;
    let span = raw.first().map_or_else(Span::call_site, |l| l.span);
    let mut lines: Vec<DocLine> = Vec::with_capacity(raw.len());
    let mut continued = false;
    for line in raw {
        match lines.last_mut().filter(|_| continued) {
            Some(last) => last.text.push_str(&line.text),
            None => lines.push(line),
        }
        let last = lines
            .last_mut()
            .expect("a line was just pushed or extended");
        continued = last.text.ends_with('\\');
        if continued {
            last.text.pop();
        }
    }
    let mut paragraphs = lines.split(|l| l.text.is_empty()).filter(|p| !p.is_empty());
    let description = paragraphs.next().map_or_else(String::new, |first| {
        let texts: Vec<&str> = first.iter().map(|l| l.text.as_str()).collect();
        texts.join(" ")
    });
    let mut help: Option<HelpText> = None;
    for paragraph in paragraphs {
        let help = help.get_or_insert_with(|| HelpText {
            text: String::new(),
            line_spans: Vec::new(),
        });
        if let Some(&previous) = help.line_spans.last() {
            help.text.push_str("\n\n");
            help.line_spans.push(previous);
        }
        for (i, line) in paragraph.iter().enumerate() {
            if i > 0 {
                help.text.push('\n');
            }
            help.text.push_str(&line.text);
            help.line_spans.push(line.span);
        }
    }
    Some(CommandDoc {
        description,
        span,
        help,
    })
}

/// The first break of the rule of botlane's `CommandSettings::help_text`:
/// not blank, at most `MAX_HELP_TEXT_CHARS` characters, lines broken by
/// `\n` only and no other control character (nor U+2028, U+2029). The
/// line is numbered from 1 (`None` for a fault of the whole text); the
/// message is botlane's `DeclarationRule::InvalidHelpText`'s.
pub(crate) fn help_text_problem(text: &str) -> Option<(Option<usize>, String)> {
    let chars = text.chars().count();
    if text.trim().is_empty() {
        return Some((None, "help text must not be blank".to_owned()));
    }
    if chars > MAX_HELP_TEXT_CHARS {
        return Some((
            None,
            format!(
                "help text is {chars} characters, more than MAX_HELP_TEXT_CHARS ({MAX_HELP_TEXT_CHARS})"
            ),
        ));
    }
    let breaks = |c: char| c != '\n' && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'));
    text.split('\n').enumerate().find_map(|(i, line)| {
        let c = line.chars().find(|&c| breaks(c))?;
        let line = i + 1;
        Some((
            Some(line),
            format!(
                "help text line {line} holds {c:?}: lines break with \\n only, \
                 and no other control character is allowed"
            ),
        ))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn doc(item: &syn::ItemStruct) -> (String, Option<String>) {
        let doc = command_doc(&item.attrs).unwrap();
        (doc.description, doc.help.map(|h| h.text))
    }

    #[test]
    fn option_doc_lines_are_trimmed_and_joined() {
        let item: syn::ItemStruct = syn::parse_quote! {
            ///  Roll some dice
            ///
            /// and add them up.
            struct Roll;
        };
        let (text, _) = doc_text(&item.attrs).unwrap();
        assert_eq!(text, "Roll some dice and add them up.");
        let bare: syn::ItemStruct = syn::parse_quote!(
            struct Bare;
        );
        assert!(doc_text(&bare.attrs).is_none());
        assert!(command_doc(&bare.attrs).is_none());
        let blank: syn::ItemStruct = syn::parse_quote! {
            ///
            struct Blank;
        };
        assert_eq!(doc_text(&blank.attrs).map(|(t, _)| t), Some(String::new()));
        assert_eq!(doc(&blank), (String::new(), None));
    }

    #[test]
    fn a_fn_doc_gives_each_parameter_the_item_of_its_options_section() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// Remind me
            ///
            /// ```text
            /// # Options
            /// ```
            ///
            /// # Options
            ///
            /// * `minutes`: In how
            ///   many minutes
            /// - `text`:  Of what
            ///
            /// # Examples
            /// /remind 5 tea
            struct Remind;
        };
        let mut errors = Errors::default();
        let doc = fn_doc(&item.attrs, &mut errors);
        assert!(errors.finish().is_ok());
        let options: Vec<(&str, &str)> = doc
            .options
            .iter()
            .map(|o| (o.name.as_str(), o.text.as_str()))
            .collect();
        assert_eq!(
            options,
            [("minutes", "In how many minutes"), ("text", "Of what")]
        );
        let command: Vec<&str> = doc.command.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            command,
            [
                "Remind me",
                "",
                "```text",
                "# Options",
                "```",
                "",
                "# Examples",
                "/remind 5 tea"
            ]
        );
    }

    #[test]
    fn a_fn_doc_section_of_another_shape_is_an_error() {
        for lines in [
            &["# Options", "* text: What"][..],
            &["# Options", "What"],
            &["# Options", "* `text`: What", "", "goes on"],
            &["# Options", "* `text`: What", "* `text`: Again"],
            &["## Options", "* ``: What"],
        ] {
            let attrs: Vec<Attribute> = lines
                .iter()
                .map(|l| syn::parse_quote!(#[doc = #l]))
                .collect();
            let mut errors = Errors::default();
            fn_doc(&attrs, &mut errors);
            assert!(errors.finish().is_err(), "{lines:?}");
        }
    }

    #[test]
    fn a_command_doc_splits_at_its_first_blank_line() {
        let item: syn::ItemStruct = syn::parse_quote! {
            ///
            ///  Roll some
            ///  dice
            ///
            /// Rolls six-sided dice,
            ///	one per count.
            ///
            ///
            /// • /roll 2
            /// • /roll 3
            ///
            struct Roll;
        };
        assert_eq!(
            doc(&item),
            (
                "Roll some dice".to_owned(),
                Some("Rolls six-sided dice,\none per count.\n\n• /roll 2\n• /roll 3".to_owned())
            )
        );
        let one: syn::ItemStruct = syn::parse_quote! {
            /// Roll some dice
            /// and add them up.
            struct Roll;
        };
        assert_eq!(
            doc(&one),
            ("Roll some dice and add them up.".to_owned(), None)
        );
    }

    #[test]
    fn a_trailing_backslash_continues_the_line() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// Roll \
            /// some dice
            ///
            /// One long \
            /// line, and\
            ///
            /// more.
            struct Roll;
        };
        assert_eq!(
            doc(&item),
            (
                "Roll some dice".to_owned(),
                Some("One long line, and\nmore.".to_owned())
            )
        );
    }

    #[test]
    fn a_block_comment_is_read_line_by_line() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[doc = " Roll some dice\n\n Rolls them.\n Adds them up."]
            struct Roll;
        };
        let doc = command_doc(&item.attrs).unwrap();
        let help = doc.help.unwrap();
        assert_eq!(doc.description, "Roll some dice");
        assert_eq!(help.text, "Rolls them.\nAdds them up.");
        assert_eq!(help.line_spans.len(), 2);
    }

    #[test]
    fn a_starred_block_comment_is_read_without_its_stars() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /**
             * Roll some dice
             *
             * Rolls them.
             *   • /roll 2
             */
            struct Roll;
        };
        assert_eq!(
            doc(&item),
            (
                "Roll some dice".to_owned(),
                Some("Rolls them.\n• /roll 2".to_owned())
            )
        );
        // Bullets of `///` lines, and a block comment without the column
        // of stars, keep theirs.
        let bullets: syn::ItemStruct = syn::parse_quote! {
            /// Roll some dice
            ///
            /// * /roll 2
            /// * /roll 3
            struct Roll;
        };
        assert_eq!(doc(&bullets).1.as_deref(), Some("* /roll 2\n* /roll 3"));
        let block: syn::ItemStruct = syn::parse_quote! {
            /** Roll some dice

            * /roll 2
            */
            struct Roll;
        };
        assert_eq!(
            doc(&block),
            ("Roll some dice".to_owned(), Some("* /roll 2".to_owned()))
        );
    }

    #[test]
    fn help_text_problems() {
        let problem = help_text_problem;
        assert_eq!(problem("Rolls.\n\n• /roll 2"), None);
        assert_eq!(problem(&"é".repeat(MAX_HELP_TEXT_CHARS)), None);
        assert_eq!(
            problem(" \n"),
            Some((None, "help text must not be blank".to_owned()))
        );
        assert!(problem(&"é".repeat(MAX_HELP_TEXT_CHARS + 1))
            .is_some_and(|(line, m)| line.is_none() && m.contains("2001 characters")));
        assert_eq!(
            problem("a\nb\tc").unwrap(),
            (
                Some(2),
                "help text line 2 holds '\\t': lines break with \\n only, and no other control \
                 character is allowed"
                    .to_owned()
            )
        );
        for c in ['\r', '\u{85}', '\u{2028}', '\u{2029}', '\u{7}'] {
            assert_eq!(problem(&format!("a{c}b")).unwrap().0, Some(1), "{c:?}");
        }
    }

    /// The help text's rule gives the verdict botlane's registration gives,
    /// in the same words.
    #[test]
    fn agrees_with_registration() {
        use botlane::framework::CommandSettings;
        use botlane::{CommandDeclaration, CommandRegistry};

        let long = "h".repeat(MAX_HELP_TEXT_CHARS + 1);
        let fits = "h".repeat(MAX_HELP_TEXT_CHARS);
        let texts = [
            "", " ", "\n", "x", "a\nb", "a\n\nb", "a\r\nb", "a\tb", "\u{85}", "\u{2028}",
            "\u{2029}", "\u{200b}", "\u{7f}", "é", "•", &long, &fits,
        ];
        assert_eq!(MAX_HELP_TEXT_CHARS, botlane::framework::MAX_HELP_TEXT_CHARS);
        for text in texts {
            let mut registry = CommandRegistry::new();
            let registered = registry.register_with(
                CommandDeclaration::new("roll", "Roll some dice"),
                CommandSettings::new().help_text(text),
                |_ctx| async { Ok::<(), std::io::Error>(()) },
            );
            match (help_text_problem(text), registered) {
                (None, Ok(_)) => {}
                (Some((_, message)), Err(error)) => {
                    let error = error.to_string();
                    assert!(error.ends_with(&message), "{text:?}: {error} / {message}");
                }
                (problem, registered) => panic!(
                    "{text:?}: the macro says {problem:?}, registration {:?}",
                    registered.err()
                ),
            }
        }
    }
}
