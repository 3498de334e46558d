//! Tokens of the text grammar (§2): quoted, bare and named, read lazily so
//! that the binder can take the rest of the line as a greedy string (§3.4).
//!
//! Every position is a byte offset on a character boundary of the line:
//! offsets only move by whole characters or to the end of a `str` search.

use std::ops::Range;

use super::error::ParseErrorKind;
use crate::commands::types::CommandOption;

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

/// Whether `text` starts with `"`, `“` or `«`.
pub(super) fn starts_with_open_quote(text: &str) -> bool {
    text.chars().next().and_then(closer_of).is_some()
}

/// The byte length of the run of non-whitespace at the start of `text`.
fn run_len(text: &str) -> usize {
    text.find(char::is_whitespace).unwrap_or(text.len())
}

/// When the first token of `text` is a bare `NAME:…` with NAME a declared
/// option name, ASCII case-insensitively (§2.4): the option's index and the
/// byte offset of the colon. The parser and the formatter share this test
/// so that they agree on what reads as a named argument.
pub(super) fn named_option(options: &[CommandOption], text: &str) -> Option<(usize, usize)> {
    if starts_with_open_quote(text) {
        return None;
    }
    let colon = text[..run_len(text)].find(':')?;
    let name = &text[..colon];
    options
        .iter()
        .position(|option| option.name.eq_ignore_ascii_case(name))
        .map(|index| (index, colon))
}

/// One token after the command name.
#[derive(Debug, PartialEq)]
pub(super) enum Token {
    /// A bare or quoted value without a name.
    Positional { value: String, span: Range<usize> },
    /// `NAME:VALUE` for the declared option `index`.
    Named {
        index: usize,
        value: String,
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
pub(super) struct Lexer<'a> {
    line: &'a str,
    pos: usize,
    options: &'a [CommandOption],
}

impl<'a> Lexer<'a> {
    /// A lexer over `line` starting at byte `start`, which must be a
    /// character boundary.
    pub(super) fn new(line: &'a str, start: usize, options: &'a [CommandOption]) -> Self {
        Self {
            line,
            pos: start,
            options,
        }
    }

    fn rest(&self) -> &'a str {
        &self.line[self.pos..]
    }

    /// Skips whitespace; false when nothing is left.
    pub(super) fn skip_whitespace(&mut self) -> bool {
        let rest = self.rest();
        let trimmed = rest.trim_start();
        self.pos += rest.len() - trimmed.len();
        !trimmed.is_empty()
    }

    /// Whether the rest of the line begins with a named argument.
    pub(super) fn at_named(&self) -> bool {
        named_option(self.options, self.rest()).is_some()
    }

    /// Takes the rest of the line as the greedy trailing string (§3.4): the
    /// content of a lone quoted token, otherwise the rest verbatim with
    /// trailing whitespace removed. Call after [`skip_whitespace`](Self::skip_whitespace).
    pub(super) fn take_greedy(&mut self) -> (String, Range<usize>) {
        let start = self.pos;
        self.pos = self.line.len();
        if starts_with_open_quote(&self.line[start..]) {
            if let Ok((content, end)) = self.read_quoted(start) {
                if self.line[end..].trim_start().is_empty() {
                    return (content, start..end);
                }
            }
        }
        let value = self.line[start..].trim_end();
        (value.to_owned(), start..start + value.len())
    }

    /// Reads the next token. Call after [`skip_whitespace`](Self::skip_whitespace) returned true.
    pub(super) fn next_token(&mut self) -> Result<Token, LexError> {
        let start = self.pos;
        let rest = self.rest();
        if starts_with_open_quote(rest) {
            let (value, end) = self.read_quoted(start).map_err(|(kind, span)| LexError {
                kind,
                span,
                option: None,
            })?;
            self.pos = end;
            return Ok(Token::Positional {
                value,
                span: start..end,
            });
        }
        let end = start + run_len(rest);
        let Some((index, colon)) = named_option(self.options, rest) else {
            self.pos = end;
            return Ok(Token::Positional {
                value: rest[..end - start].to_owned(),
                span: start..end,
            });
        };
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
            value: self.line[value_start..end].to_owned(),
            span: start..end,
            value_span: value_start..end,
        })
    }

    /// Reads the quoted token opening at byte `start` (§2.2): its content
    /// and the byte just after its closing quote.
    fn read_quoted(&self, start: usize) -> Result<(String, usize), (ParseErrorKind, Range<usize>)> {
        let unterminated = || (ParseErrorKind::UnterminatedQuote, start..self.line.len());
        let mut chars = self.line[start..].char_indices();
        let close = chars
            .next()
            .and_then(|(_, open)| closer_of(open))
            .ok_or_else(unterminated)?;
        let mut content = String::new();
        while let Some((offset, c)) = chars.next() {
            if c == '\\' {
                let (_, escaped) = chars.next().ok_or_else(unterminated)?;
                content.push(escaped);
            } else if c == close {
                let end = start + offset + c.len_utf8();
                let after = &self.line[end..];
                return match after.chars().next() {
                    Some(next) if !next.is_whitespace() => Err((
                        ParseErrorKind::TextAfterClosingQuote,
                        end..end + run_len(after),
                    )),
                    _ => Ok((content, end)),
                };
            } else {
                content.push(c);
            }
        }
        Err(unterminated())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::commands::types::CommandOptionType;

    fn options() -> Vec<CommandOption> {
        vec![
            CommandOption::new("title", "t", CommandOptionType::String),
            CommandOption::new("n", "n", CommandOptionType::Integer),
        ]
    }

    fn tokens(line: &str) -> Result<Vec<Token>, LexError> {
        let options = options();
        let mut lexer = Lexer::new(line, 0, &options);
        let mut out = Vec::new();
        while lexer.skip_whitespace() {
            out.push(lexer.next_token()?);
        }
        Ok(out)
    }

    fn positional(value: &str, span: Range<usize>) -> Token {
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
}
