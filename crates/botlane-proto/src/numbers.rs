//! How the text of an `integer` or `number` option reads, and how a number
//! is written (`docs/text-grammar.md`, §4 and §5).
//!
//! Hidden and outside the stability promise, like [`names`](crate::names):
//! the spec names no such function (botlane exposes coercion only through
//! parsing and registration), and this module is public only so that
//! `botlane` (coercion, choices, getters, formatting) and `botlane-macros`
//! (choices and bounds checked at compile time) read and write a number by
//! one definition.

use crate::limits::MAX_SAFE_INTEGER;

/// `^[+-]?[0-9]+$` within ±[`MAX_SAFE_INTEGER`].
// Inline across the crate boundary: the text binder calls it per token.
#[inline]
pub fn parse_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits.bytes() {
        value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
        if value > MAX_SAFE_INTEGER {
            return None;
        }
    }
    Some(if negative { -value } else { value })
}

/// `^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`, finite.
#[inline]
pub fn parse_number(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_digits = digits(&mut i);
    let mut frac_digits = 0;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = digits(&mut i);
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != bytes.len() {
        return None;
    }
    // The syntax check above admits only what Rust's float parser reads the
    // same way, and keeps out its extra spellings (`inf`, `NaN`).
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// The shortest text that [`parse_number`] reads back as `n` (finite):
/// Rust's shortest round-trip digits, written positionally or in exponent
/// form, whichever is shorter.
pub fn format_number(n: f64) -> String {
    let plain = format!("{n}");
    let exp = format!("{n:e}");
    if exp.len() < plain.len() {
        exp
    } else {
        plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_integer("42"), Some(42));
        assert_eq!(parse_integer("+7"), Some(7));
        assert_eq!(parse_integer("-007"), Some(-7));
        assert_eq!(parse_integer("-0"), Some(0));
        assert_eq!(parse_integer("9007199254740991"), Some(MAX_SAFE_INTEGER));
        assert_eq!(parse_integer("-9007199254740991"), Some(-MAX_SAFE_INTEGER));
        assert_eq!(parse_integer("9007199254740992"), None);
        assert_eq!(parse_integer("-9007199254740992"), None);
        assert_eq!(parse_integer("99999999999999999999999"), None);
        for bad in [
            "", "+", "-", "+-1", "1.0", "1.", "1e3", " 1", "1 ", "0x10", "١", "1_000", "two",
        ] {
            assert_eq!(parse_integer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn numbers() {
        for (text, n) in [
            ("1", 1.0),
            ("1.", 1.0),
            (".5", 0.5),
            ("-.5", -0.5),
            ("007.50", 7.5),
            ("-2.5e3", -2500.0),
            ("+1E-2", 0.01),
            ("1e+2", 100.0),
            ("0", 0.0),
            ("9007199254740993", 9_007_199_254_740_992.0),
            ("1e308", 1e308),
        ] {
            assert_eq!(parse_number(text), Some(n), "{text}");
        }
        for bad in [
            "", ".", "+", "-.", "e5", ".e5", "1e", "1e+", "1e-", "1.5e2.0", "inf", "-inf", "NaN",
            "infinity", "1e999", "1,5", "--1", "1.2.3", " 1", "1 ", "0x10", "1_0", "١",
        ] {
            assert_eq!(parse_number(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn numbers_format_shortest() {
        assert_eq!(format_number(2.0), "2");
        assert_eq!(format_number(-0.0), "-0");
        assert_eq!(format_number(0.1), "0.1");
        assert_eq!(format_number(1e300), "1e300");
        assert_eq!(format_number(1.5e-300), "1.5e-300");
        assert_eq!(format_number(123456.0), "123456");
        for n in [
            f64::MAX,
            f64::MIN_POSITIVE,
            -5e-324,
            0.1 + 0.2,
            -0.0,
            9_007_199_254_740_993.0,
        ] {
            let written = format_number(n);
            assert_eq!(parse_number(&written), Some(n), "{written}");
            assert_eq!(
                parse_number(&written).map(f64::is_sign_negative),
                Some(n.is_sign_negative()),
                "{written}"
            );
        }
    }

    /// The grammar's two patterns, checked for every text of up to four
    /// characters over the alphabet they use and the letters of Rust's own
    /// extra float spellings (`inf`, `NaN`): an integer parses exactly when
    /// it matches `^[+-]?[0-9]+$`, a number exactly when it matches the
    /// decimal literal (spelled out here as a second reading, not the
    /// scanner above).
    #[test]
    fn every_short_text_parses_exactly_when_it_matches_the_grammar() {
        const ALPHABET: [char; 12] = ['0', '7', '+', '-', '.', 'e', 'E', 'i', 'n', 'f', 'N', 'a'];
        fn unsigned(s: &str) -> &str {
            s.strip_prefix(['+', '-']).unwrap_or(s)
        }
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let integer = |s: &str| digits(unsigned(s));
        let number = |s: &str| {
            let s = unsigned(s);
            let (mantissa, exponent) = s.split_once(['e', 'E']).unwrap_or((s, "0"));
            let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let mantissa_ok = (digits(whole) || whole.is_empty())
                && (digits(fraction) || fraction.is_empty())
                && !(whole.is_empty() && fraction.is_empty());
            mantissa_ok && digits(unsigned(exponent))
        };
        let mut texts = vec![String::new()];
        let mut longest = texts.clone();
        for _ in 0..4 {
            longest = longest
                .iter()
                .flat_map(|t| ALPHABET.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longest.iter().cloned());
        }
        assert_eq!(texts.len(), 1 + 12 + 144 + 1728 + 20736);
        for text in &texts {
            assert_eq!(parse_integer(text).is_some(), integer(text), "{text:?}");
            assert_eq!(parse_number(text).is_some(), number(text), "{text:?}");
        }
    }
}
