//! Local option bounds (`min_value`, `max_value`, `min_length`,
//! `max_length`): their enforcement on one value and their words in usage
//! lines and help (their consistency rules at register time are
//! `validate/bounds.rs`).
//!
//! Bounds are botlane's own: the service never sees them, the canonical menu
//! leaves them out, and the spec's helpers (`accepts`, the text grammar, the
//! sidecar codec) ignore them. They are enforced after the lane decision, by
//! [`CommandDeclaration::check_bounds`](crate::CommandDeclaration::check_bounds).

use std::fmt::Write as _;

use super::argument_error::ArgumentRule;
use super::option::CommandOption;
use super::types::{format_number, CommandArgValue};

/// The JSON name of each bound, as rules and messages name them.
pub(crate) const MIN_VALUE: &str = "min_value";
pub(crate) const MAX_VALUE: &str = "max_value";
pub(crate) const MIN_LENGTH: &str = "min_length";
pub(crate) const MAX_LENGTH: &str = "max_length";

/// Checks one coerced value against its option's bounds.
pub(crate) fn check_value(
    option: &CommandOption,
    value: &CommandArgValue,
) -> Result<(), ArgumentRule> {
    let number = match value {
        // Exact within ±2^53, the range an option's integers are in.
        #[allow(clippy::cast_precision_loss)]
        CommandArgValue::Integer(i) => Some(*i as f64),
        CommandArgValue::Number(n) => Some(*n),
        CommandArgValue::String(s) => {
            if option.min_length.is_none() && option.max_length.is_none() {
                return Ok(());
            }
            let chars = s.chars().count();
            if let Some(min_length) = option.min_length.filter(|min| chars < *min) {
                return Err(ArgumentRule::TooShort { min_length });
            }
            if let Some(max_length) = option.max_length.filter(|max| chars > *max) {
                return Err(ArgumentRule::TooLong { max_length });
            }
            None
        }
        CommandArgValue::Boolean(_) => None,
    };
    if let Some(n) = number {
        if let Some(min) = option.min_value.filter(|min| n < *min) {
            return Err(ArgumentRule::BelowMin { min });
        }
        if let Some(max) = option.max_value.filter(|max| n > *max) {
            return Err(ArgumentRule::AboveMax { max });
        }
    }
    Ok(())
}

/// The bounds in words, as usage lines and help show them: `1 to 3600`,
/// `at least 1`, `at most 3600`, `3 to 20 characters`, `up to 200
/// characters`, `at least 3 characters`; `None` without bounds.
pub(crate) fn bounds_phrase(option: &CommandOption) -> Option<String> {
    let mut phrase = String::new();
    // Writing to a String cannot fail.
    match (option.min_value, option.max_value) {
        (Some(min), Some(max)) => {
            let _ = write!(phrase, "{} to {}", format_number(min), format_number(max));
        }
        (Some(min), None) => {
            let _ = write!(phrase, "at least {}", format_number(min));
        }
        (None, Some(max)) => {
            let _ = write!(phrase, "at most {}", format_number(max));
        }
        (None, None) => {}
    }
    let lengths = match (option.min_length, option.max_length) {
        (Some(min), Some(max)) => Some(format!("{min} to {max} characters")),
        (Some(min), None) => Some(format!("at least {min} characters")),
        (None, Some(max)) => Some(format!("up to {max} characters")),
        (None, None) => None,
    };
    if let Some(lengths) = lengths {
        if !phrase.is_empty() {
            phrase.push_str(", ");
        }
        phrase.push_str(&lengths);
    }
    (!phrase.is_empty()).then_some(phrase)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::commands::option_type::CommandOptionType as T;
    use CommandArgValue as V;

    #[test]
    fn numeric_bounds_are_inclusive() {
        let o = CommandOption::new("n", "d", T::Integer).min(1).max(10);
        assert_eq!(check_value(&o, &V::Integer(1)), Ok(()));
        assert_eq!(check_value(&o, &V::Integer(10)), Ok(()));
        assert_eq!(
            check_value(&o, &V::Integer(0)),
            Err(ArgumentRule::BelowMin { min: 1.0 })
        );
        assert_eq!(
            check_value(&o, &V::Integer(11)),
            Err(ArgumentRule::AboveMax { max: 10.0 })
        );
        let o = CommandOption::new("n", "d", T::Number).min(-0.5);
        assert_eq!(check_value(&o, &V::Number(-0.5)), Ok(()));
        assert_eq!(
            check_value(&o, &V::Number(-0.50001)),
            Err(ArgumentRule::BelowMin { min: -0.5 })
        );
        assert_eq!(check_value(&o, &V::Number(1e300)), Ok(()));
    }

    #[test]
    fn lengths_count_characters_not_bytes() {
        let o = CommandOption::new("s", "d", T::String)
            .min_length(2)
            .max_length(3);
        assert_eq!(check_value(&o, &V::from("éé")), Ok(()));
        assert_eq!(check_value(&o, &V::from("ééé")), Ok(()));
        assert_eq!(
            check_value(&o, &V::from("é")),
            Err(ArgumentRule::TooShort { min_length: 2 })
        );
        assert_eq!(
            check_value(&o, &V::from("éééé")),
            Err(ArgumentRule::TooLong { max_length: 3 })
        );
        assert_eq!(
            check_value(&o, &V::from("")),
            Err(ArgumentRule::TooShort { min_length: 2 })
        );
    }

    #[test]
    fn an_option_without_bounds_takes_anything() {
        let o = CommandOption::new("s", "d", T::String);
        assert_eq!(check_value(&o, &V::from("x".repeat(10_000))), Ok(()));
        let o = CommandOption::new("n", "d", T::Integer);
        assert_eq!(check_value(&o, &V::Integer(i64::MIN)), Ok(()));
        assert_eq!(bounds_phrase(&o), None);
    }

    #[test]
    fn phrases() {
        let o = |f: fn(CommandOption) -> CommandOption| {
            bounds_phrase(&f(CommandOption::new("n", "d", T::Number)))
        };
        assert_eq!(o(|o| o.min(1).max(3600)).as_deref(), Some("1 to 3600"));
        assert_eq!(o(|o| o.min(-0.5)).as_deref(), Some("at least -0.5"));
        assert_eq!(o(|o| o.max(1e300)).as_deref(), Some("at most 1e300"));
        assert_eq!(
            o(|o| o.min_length(3).max_length(20)).as_deref(),
            Some("3 to 20 characters")
        );
        assert_eq!(
            o(|o| o.max_length(200)).as_deref(),
            Some("up to 200 characters")
        );
        assert_eq!(
            o(|o| o.min_length(3)).as_deref(),
            Some("at least 3 characters")
        );
        assert_eq!(
            o(|o| o.min(1).max_length(2)).as_deref(),
            Some("at least 1, up to 2 characters")
        );
    }
}
