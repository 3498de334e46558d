//! Tokens of the text grammar (§2): quoted, bare and named, read lazily so
//! that the binder can take the rest of the line as a greedy string (§3.4).
//!
//! Every position is a byte offset on a character boundary of the line:
//! offsets only move by whole characters or to the end of a `str` search.
//! Values borrow from the line; only a quoted value with an escape is copied.

use std::borrow::Cow;
use std::ops::Range;

use super::error::ParseErrorKind;
use crate::commands::option::CommandOption;

/// The closing quote for an opening quote, or `None` when `open` opens nothing.
/// Apostrophes (`'`, `’`) are never quotes.
const fn closer_of(open: char) -> Option<char> {
    match open {
        '"' => Some('"'),
        '\u{201c}' => Some('\u{201d}'),
        '\u{ab}' => Some('\u{bb}'),
        _ => None,
    }
}

/// The opening quote `text` starts with and its closer, if any.
#[inline]
fn open_quote(text: &str) -> Option<(char, char)> {
    // Every opening quote starts with one of these bytes, so other first
    // bytes skip the UTF-8 decoding.
    if !matches!(text.as_bytes().first(), Some(b'"' | 0xc2 | 0xe2)) {
        return None;
    }
    let open = text.chars().next()?;
    closer_of(open).map(|close| (open, close))
}

/// Whether `text` starts with `"`, `“` or `«`.
#[inline]
pub(super) fn starts_with_open_quote(text: &str) -> bool {
    open_quote(text).is_some()
}

/// [`char::is_whitespace`] for an ASCII byte.
#[inline]
const fn is_ascii_whitespace(b: u8) -> bool {
    // Unlike `u8::is_ascii_whitespace`, this includes the vertical tab (0x0b).
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// The byte length of the leading run of characters of `text` for which
/// `char::is_whitespace` equals `WHITESPACE`. ASCII bytes are tested
/// directly; from the first non-ASCII byte on, characters are decoded.
#[inline]
fn scan<const WHITESPACE: bool>(text: &str) -> usize {
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if !b.is_ascii() {
            // A non-ASCII byte seen first in a left-to-right scan of a `str`
            // starts a character.
            return i + scan_chars::<WHITESPACE>(&text[i..]);
        }
        if is_ascii_whitespace(b) == WHITESPACE {
            continue;
        }
        return i;
    }
    text.len()
}

/// [`scan`] for text that holds non-ASCII characters.
#[cold]
#[inline(never)]
fn scan_chars<const WHITESPACE: bool>(text: &str) -> usize {
    text.char_indices()
        .find(|(_, c)| c.is_whitespace() != WHITESPACE)
        .map_or(text.len(), |(i, _)| i)
}

/// `text` without its trailing whitespace, like `str::trim_end`, testing
/// ASCII bytes directly.
#[inline]
fn trim_end(text: &str) -> &str {
    let mut end = text.len();
    while let Some(&b) = text.as_bytes()[..end].last() {
        if !b.is_ascii() {
            // Trailing whitespace from here on may be non-ASCII.
            return text[..end].trim_end();
        }
        if !is_ascii_whitespace(b) {
            break;
        }
        end -= 1;
    }
    &text[..end]
}

/// The byte length of the run of non-whitespace at the start of `text`.
#[inline]
pub(super) fn run_len(text: &str) -> usize {
    scan::<false>(text)
}

/// The byte length of the run of whitespace at the start of `text`.
#[inline]
pub(super) fn space_len(text: &str) -> usize {
    scan::<true>(text)
}

/// Whether `text` holds any whitespace.
pub(super) fn has_whitespace(text: &str) -> bool {
    run_len(text) < text.len()
}

/// When `token`, a run of non-whitespace that does not open with a quote,
/// is `NAME:…` with NAME a declared option name, ASCII case-insensitively
/// (§2.4): the option's index and the byte offset of the colon.
#[inline]
fn named_in_bare(options: &[CommandOption], token: &str) -> Option<(usize, usize)> {
    // ASCII `:` never occurs inside a multi-byte character.
    let colon = token.bytes().position(|b| b == b':')?;
    option_index(options, &token[..colon]).map(|index| (index, colon))
}

/// The index of the option named `name`, ASCII case-insensitively. Kept out
/// of line: the common token has no colon and never gets here.
#[inline(never)]
fn option_index(options: &[CommandOption], name: &str) -> Option<usize> {
    options
        .iter()
        .position(|option| option.name.eq_ignore_ascii_case(name))
}

/// When the first token of `text` is a bare `NAME:…` with NAME a declared
/// option name, ASCII case-insensitively (§2.4): the option's index and the
/// byte offset of the colon. The parser and the formatter share this test
/// so that they agree on what reads as a named argument.
#[inline]
pub(super) fn named_option(options: &[CommandOption], text: &str) -> Option<(usize, usize)> {
    if starts_with_open_quote(text) {
        return None;
    }
    named_in_bare(options, &text[..run_len(text)])
}

/// One token after the command name.
#[derive(Debug, PartialEq)]
pub(super) enum Token<'a> {
    /// A bare or quoted value without a name.
    Positional {
        value: Cow<'a, str>,
        span: Range<usize>,
    },
    /// `NAME:VALUE` for the declared option `index`.
    Named {
        index: usize,
        value: Cow<'a, str>,
        span: Range<usize>,
        value_span: Range<usize>,
    },
}

/// A tokenising error: the kind, the bytes at fault, and the option whose
/// named value it was in, if any.
#[derive(Debug, PartialEq)]
pub(super) struct LexError {
    pub(super) kind: ParseErrorKind,
    pub(super) span: Range<usize>,
    pub(super) option: Option<usize>,
}

/// A cursor over the argument part of a line.
pub(super) struct Lexer<'a, 'o> {
    line: &'a str,
    pos: usize,
    options: &'o [CommandOption],
}

impl<'a, 'o> Lexer<'a, 'o> {
    /// A lexer over `line` starting at byte `start`, which must be a
    /// character boundary.
    pub(super) fn new(line: &'a str, start: usize, options: &'o [CommandOption]) -> Self {
        Self {
            line,
            pos: start,
            options,
        }
    }

    #[inline]
    fn rest(&self) -> &'a str {
        &self.line[self.pos..]
    }

    /// Skips whitespace; false when nothing is left.
    #[inline]
    pub(super) fn skip_whitespace(&mut self) -> bool {
        self.pos += space_len(self.rest());
        self.pos < self.line.len()
    }

    /// Whether the rest of the line begins with a named argument.
    #[inline]
    pub(super) fn at_named(&self) -> bool {
        named_option(self.options, self.rest()).is_some()
    }

    /// Takes the rest of the line as the greedy trailing string (§3.4): the
    /// content of a lone quoted token, otherwise the rest verbatim with
    /// trailing whitespace removed. Call after [`skip_whitespace`](Self::skip_whitespace).
    #[inline]
    pub(super) fn take_greedy(&mut self) -> (Cow<'a, str>, Range<usize>) {
        let start = self.pos;
        self.pos = self.line.len();
        if starts_with_open_quote(&self.line[start..])
            && let Some(quoted) = self.lone_quoted(start)
        {
            return quoted;
        }
        let value = trim_end(&self.line[start..]);
        (Cow::Borrowed(value), start..start + value.len())
    }

    /// The content of the quoted token opening at `start` when only
    /// whitespace follows it.
    #[inline(never)]
    fn lone_quoted(&self, start: usize) -> Option<(Cow<'a, str>, Range<usize>)> {
        let (content, end) = self.read_quoted(start).ok()?;
        let after = &self.line[end..];
        (space_len(after) == after.len()).then_some((content, start..end))
    }

    /// Reads the next token. Call after [`skip_whitespace`](Self::skip_whitespace) returned true.
    #[inline]
    pub(super) fn next_token(&mut self) -> Result<Token<'a>, LexError> {
        let start = self.pos;
        let rest = self.rest();
        if starts_with_open_quote(rest) {
            return self.quoted_token(start);
        }
        let token = &rest[..run_len(rest)];
        let end = start + token.len();
        if let Some((index, colon)) = named_in_bare(self.options, token) {
            return self.named_token(start, end, index, colon);
        }
        self.pos = end;
        Ok(Token::Positional {
            value: Cow::Borrowed(token),
            span: start..end,
        })
    }

    /// [`next_token`](Self::next_token) for a quoted token opening at `start`.
    #[inline(never)]
    fn quoted_token(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        let (value, end) = self.read_quoted(start).map_err(|(kind, span)| LexError {
            kind,
            span,
            option: None,
        })?;
        self.pos = end;
        Ok(Token::Positional {
            value,
            span: start..end,
        })
    }

    /// [`next_token`](Self::next_token) for the bare token `start..end`
    /// naming option `index` with its colon at `start + colon`.
    #[inline(never)]
    fn named_token(
        &mut self,
        start: usize,
        end: usize,
        index: usize,
        colon: usize,
    ) -> Result<Token<'a>, LexError> {
        let value_start = start + colon + 1;
        if starts_with_open_quote(&self.line[value_start..]) {
            let (value, end) = self
                .read_quoted(value_start)
                .map_err(|(kind, span)| LexError {
                    kind,
                    span,
                    option: Some(index),
                })?;
            self.pos = end;
            return Ok(Token::Named {
                index,
                value,
                span: start..end,
                value_span: value_start..end,
            });
        }
        if value_start == end {
            return Err(LexError {
                kind: ParseErrorKind::EmptyNamedValue,
                span: start..end,
                option: Some(index),
            });
        }
        self.pos = end;
        Ok(Token::Named {
            index,
            value: Cow::Borrowed(&self.line[value_start..end]),
            span: start..end,
            value_span: value_start..end,
        })
    }

    /// Reads the quoted token opening at byte `start` (§2.2): its content
    /// and the byte just after its closing quote. The content is borrowed
    /// up to the first escape.
    fn read_quoted(
        &self,
        start: usize,
    ) -> Result<(Cow<'a, str>, usize), (ParseErrorKind, Range<usize>)> {
        let unterminated = || (ParseErrorKind::UnterminatedQuote, start..self.line.len());
        let (open, close) = open_quote(&self.line[start..]).ok_or_else(unterminated)?;
        let body_start = start + open.len_utf8();
        let body = &self.line[body_start..];
        let stop = body.find(['\\', close]).ok_or_else(unterminated)?;
        let (content, end) = if body[stop..].starts_with(close) {
            (
                Cow::Borrowed(&body[..stop]),
                body_start + stop + close.len_utf8(),
            )
        } else {
            let mut content = String::from(&body[..stop]);
            let mut chars = body[stop..].char_indices();
            loop {
                match chars.next() {
                    Some((_, '\\')) => {
                        let (_, escaped) = chars.next().ok_or_else(unterminated)?;
                        content.push(escaped);
                    }
                    Some((offset, c)) if c == close => {
                        break (
                            Cow::Owned(content),
                            body_start + stop + offset + c.len_utf8(),
                        );
                    }
                    Some((_, c)) => content.push(c),
                    None => return Err(unterminated()),
                }
            }
        };
        let after = &self.line[end..];
        match run_len(after) {
            0 => Ok((content, end)),
            len => Err((ParseErrorKind::TextAfterClosingQuote, end..end + len)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::commands::option_type::CommandOptionType;

    fn options() -> Vec<CommandOption> {
        vec![
            CommandOption::new("title", "t", CommandOptionType::String),
            CommandOption::new("n", "n", CommandOptionType::Integer),
        ]
    }

    fn tokens(line: &str) -> Result<Vec<Token<'_>>, LexError> {
        let options = options();
        let mut lexer = Lexer::new(line, 0, &options);
        let mut out = Vec::new();
        while lexer.skip_whitespace() {
            out.push(lexer.next_token()?);
        }
        Ok(out)
    }

    fn positional(value: &str, span: Range<usize>) -> Token<'_> {
        Token::Positional {
            value: value.into(),
            span,
        }
    }

    #[test]
    fn bare_and_quoted_tokens() {
        assert_eq!(
            tokens(r#" a  "b c" it's "#).unwrap(),
            vec![
                positional("a", 1..2),
                positional("b c", 4..9),
                positional("it's", 10..14)
            ]
        );
        assert_eq!(
            tokens(r#""\"\\\x""#).unwrap(),
            vec![positional(r#""\x"#, 0..8)]
        );
        assert_eq!(tokens("“a\"b” «c»").unwrap()[0], positional("a\"b", 0..9));
        assert_eq!(tokens("“a\"b” «c»").unwrap()[1], positional("c", 10..15));
    }

    #[test]
    fn named_tokens_span_their_quoted_value() {
        assert_eq!(
            tokens(r#"TITLE:"x y" n:5"#).unwrap(),
            vec![
                Token::Named {
                    index: 0,
                    value: "x y".into(),
                    span: 0..11,
                    value_span: 6..11
                },
                Token::Named {
                    index: 1,
                    value: "5".into(),
                    span: 12..15,
                    value_span: 14..15
                },
            ]
        );
        assert_eq!(
            tokens("other:x").unwrap(),
            vec![positional("other:x", 0..7)]
        );
    }

    #[test]
    fn quote_errors() {
        let err = tokens(r#"a "bc"#).unwrap_err();
        assert_eq!(
            (err.kind, err.span),
            (ParseErrorKind::UnterminatedQuote, 2..5)
        );
        let err = tokens(r#""ab\"#).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::UnterminatedQuote);
        let err = tokens(r#""ab"cd e"#).unwrap_err();
        assert_eq!(
            (err.kind, err.span),
            (ParseErrorKind::TextAfterClosingQuote, 4..6)
        );
        let err = tokens(r#"title:"x"#).unwrap_err();
        assert_eq!(
            (err.kind, err.option),
            (ParseErrorKind::UnterminatedQuote, Some(0))
        );
        let err = tokens("n:").unwrap_err();
        assert_eq!(
            (err.kind, err.span),
            (ParseErrorKind::EmptyNamedValue, 0..2)
        );
    }

    #[test]
    fn greedy_takes_a_lone_quoted_token_or_the_verbatim_rest() {
        let options = options();
        for (line, value) in [
            (r#" "a \" b"  "#, r#"a " b"#),
            (r#" "a" b "#, r#""a" b"#),
            (r#" "a"b"#, r#""a"b"#),
            (" x\n y \t", "x\n y"),
        ] {
            let mut lexer = Lexer::new(line, 0, &options);
            assert!(lexer.skip_whitespace());
            let (got, span) = lexer.take_greedy();
            assert_eq!(got, value, "{line:?}");
            assert!(line.get(span).is_some());
            assert!(!lexer.skip_whitespace());
        }
    }

    #[test]
    fn byte_scans_agree_with_char_is_whitespace() {
        // Every whitespace character, ASCII or not, and some non-whitespace
        // neighbours that share lead bytes with them.
        let specials: Vec<char> = (0..=0x3001u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .chain([
                'a', ':', '"', '\u{ab}', '\u{84}', '\u{1fff}', '\u{200b}', '\u{2060}', '\u{fffd}',
                '😀',
            ])
            .collect();
        assert!(specials.contains(&'\u{0b}') && specials.contains(&'\u{3000}'));
        for &a in &specials {
            for &b in &specials {
                for text in [format!("{a}{b}x"), format!("x{a}{b}"), format!("{a}x{b}")] {
                    let reference_space = text.len() - text.trim_start().len();
                    assert_eq!(space_len(&text), reference_space, "{text:?}");
                    let reference_run = text.find(char::is_whitespace).unwrap_or(text.len());
                    assert_eq!(run_len(&text), reference_run, "{text:?}");
                    assert_eq!(trim_end(&text), text.trim_end(), "{text:?}");
                    assert_eq!(has_whitespace(&text), text.contains(char::is_whitespace));
                }
            }
        }
    }

    #[test]
    fn quoted_values_are_borrowed_unless_escaped() {
        let tokens = tokens(r#""a b" "c\"d" e title:"f g""#).unwrap();
        let borrowed: Vec<bool> = tokens
            .iter()
            .map(|token| match token {
                Token::Positional { value, .. } | Token::Named { value, .. } => {
                    matches!(value, Cow::Borrowed(_))
                }
            })
            .collect();
        assert_eq!(borrowed, [true, false, true, true]);
        assert_eq!(tokens[1], positional("c\"d", 6..12));
    }
}
