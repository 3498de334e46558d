//! User-supplied values quoted in messages: escaped so that a line break
//! cannot forge a second line, and cut so that a long one stays readable.

use std::fmt;

/// Longest excerpt of a user-supplied value quoted in a message, in characters.
const EXCERPT_CHARS: usize = 40;

/// A user-supplied value in a message: quoted and escaped like Rust's `{:?}`
/// (so a newline cannot forge a second line), at most [`EXCERPT_CHARS`]
/// characters, with `…` when cut.
pub(crate) struct Excerpt<'a>(pub(crate) &'a str);

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(EXCERPT_CHARS) {
            None => write!(f, "{:?}", self.0),
            Some((cut, _)) => {
                let quoted = format!("{:?}", &self.0[..cut]);
                // `{:?}` of a str always ends with the closing quote.
                let body = quoted.strip_suffix('"').unwrap_or(&quoted);
                write!(f, "{body}…\"")
            }
        }
    }
}

/// The start of `s` for a path: at most [`EXCERPT_CHARS`] characters, `…` when cut.
pub(crate) fn excerpt_raw(s: &str) -> String {
    match s.char_indices().nth(EXCERPT_CHARS) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_cuts_at_forty_characters() {
        assert_eq!(Excerpt("abc").to_string(), "\"abc\"");
        assert_eq!(
            Excerpt(&"é".repeat(40)).to_string(),
            format!("\"{}\"", "é".repeat(40))
        );
        assert_eq!(
            Excerpt(&"é".repeat(41)).to_string(),
            format!("\"{}…\"", "é".repeat(40))
        );
        assert_eq!(Excerpt("a\nb\"").to_string(), "\"a\\nb\\\"\"");
        assert_eq!(excerpt_raw(&"x".repeat(50)), format!("{}…", "x".repeat(40)));
    }
}
