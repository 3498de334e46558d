//! The consistency rules of an option's local bounds, checked at register
//! time: bounds only on the types they apply to, of the option's type,
//! within their caps, each minimum at most its maximum, every choice within
//! them.

use crate::commands::bounds::{check_value, MAX_LENGTH, MAX_VALUE, MIN_LENGTH, MIN_VALUE};
use crate::commands::coerce::coerce_text;
use crate::commands::limits::{MAX_OPTION_LENGTH, MAX_SAFE_INTEGER};
use crate::commands::option::CommandOption;
use crate::commands::option_type::CommandOptionType;

use super::{DeclarationRule, Violation};

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
    if let (Some(min), Some(max)) = (option.min_value, option.max_value)
        && numeric
        && min > max
    {
        out.push(at(DeclarationRule::MinAboveMax { min, max }));
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
    if let (Some(min_length), Some(max_length)) = (option.min_length, option.max_length)
        && textual
        && min_length > max_length
    {
        out.push(at(DeclarationRule::MinLengthAboveMaxLength {
            min_length,
            max_length,
        }));
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

#[cfg(test)]
mod tests {
    use super::*;
    use CommandOptionType as T;

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
