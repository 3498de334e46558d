//! Local option bounds (`min_value`, `max_value`, `min_length`,
//! `max_length`): their consistency rules at register time, their
//! enforcement on one value, and their words in usage lines and help.
//!
//! Bounds are botlane's own: the service never sees them, the canonical menu
//! leaves them out, and the spec's helpers (`accepts`, the text grammar, the
//! sidecar codec) ignore them. They are enforced after the lane decision, by
//! [`CommandDeclaration::check_bounds`](crate::CommandDeclaration::check_bounds).

use std::fmt::Write as _;

use super::argument_error::ArgumentRule;
use super::coerce::coerce_text;
use super::limits::{MAX_OPTION_LENGTH, MAX_SAFE_INTEGER};
use super::option::CommandOption;
use super::types::{format_number, CommandArgValue, CommandOptionType};
use super::validate::{DeclarationRule, Violation};

/// The JSON name of each bound, as rules and messages name them.
pub(crate) const MIN_VALUE: &str = "min_value";
pub(crate) const MAX_VALUE: &str = "max_value";
pub(crate) const MIN_LENGTH: &str = "min_length";
pub(crate) const MAX_LENGTH: &str = "max_length";

/// Every violation of the bound rules by option `i` of command `cmd`:
/// bounds only on the types they apply to, numeric bounds of the option's
/// type, lengths within [`MAX_OPTION_LENGTH`], each minimum at most its
/// maximum, and every choice within the bounds.
pub(crate) fn bound_violations(
    cmd: &str,
    i: usize,
    option: &CommandOption,
    out: &mut Vec<Violation>,
) {
    let at = |rule| Violation::at_option(cmd, i, option, rule);
    let numeric = matches!(
        option.kind,
        CommandOptionType::Integer | CommandOptionType::Number
    );
    let textual = option.kind == CommandOptionType::String;
    for (bound, value) in [(MIN_VALUE, option.min_value), (MAX_VALUE, option.max_value)] {
        let Some(value) = value else { continue };
        if !numeric {
            out.push(at(DeclarationRule::BoundNotForType {
                bound,
                kind: option.kind,
            }));
        } else if !bound_fits_kind(option.kind, value) {
            out.push(at(DeclarationRule::BoundNotOfType {
                bound,
                value,
                kind: option.kind,
            }));
        }
    }
    if let (Some(min), Some(max)) = (option.min_value, option.max_value) {
        if numeric && min > max {
            out.push(at(DeclarationRule::MinAboveMax { min, max }));
        }
    }
    for (bound, length) in [
        (MIN_LENGTH, option.min_length),
        (MAX_LENGTH, option.max_length),
    ] {
        let Some(length) = length else { continue };
        if !textual {
            out.push(at(DeclarationRule::BoundNotForType {
                bound,
                kind: option.kind,
            }));
        } else if length > MAX_OPTION_LENGTH {
            out.push(at(DeclarationRule::LengthTooLarge { bound, length }));
        }
    }
    if let (Some(min_length), Some(max_length)) = (option.min_length, option.max_length) {
        if textual && min_length > max_length {
            out.push(at(DeclarationRule::MinLengthAboveMaxLength {
                min_length,
                max_length,
            }));
        }
    }
    // Choices are checked against bounds that apply to the type; a bound on
    // another type is already reported above.
    if !(numeric || textual) {
        return;
    }
    for (j, choice) in option.choices.iter().flatten().enumerate() {
        let Some(value) = coerce_text(option.kind, choice) else {
            continue;
        };
        if let Err(broken) = check_value(option, &value) {
            out.push(Violation::at_choice(
                cmd,
                i,
                option,
                j,
                DeclarationRule::ChoiceOutOfBounds {
                    choice: choice.clone(),
                    broken,
                },
            ));
        }
    }
}

/// Whether `value` is a numeric bound an option of `kind` can have: finite,
/// and for `integer` whole and within ±(2^53 − 1).
fn bound_fits_kind(kind: CommandOptionType, value: f64) -> bool {
    // Exact: the limit is below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let limit = MAX_SAFE_INTEGER as f64;
    match kind {
        CommandOptionType::Integer => value.fract() == 0.0 && value.abs() <= limit,
        _ => value.is_finite(),
    }
}

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
    use CommandArgValue as V;
    use CommandOptionType as T;

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

    #[test]
    fn integer_bounds_must_be_whole_and_safe() {
        assert!(bound_fits_kind(T::Integer, -9_007_199_254_740_991.0));
        assert!(!bound_fits_kind(T::Integer, 9_007_199_254_740_992.0));
        assert!(!bound_fits_kind(T::Integer, 1.5));
        assert!(!bound_fits_kind(T::Integer, f64::NAN));
        assert!(bound_fits_kind(T::Number, 1.5));
        assert!(!bound_fits_kind(T::Number, f64::INFINITY));
        assert!(!bound_fits_kind(T::Number, f64::NAN));
    }
}
