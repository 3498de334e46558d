//! Coercion of argument values to declared option types (text-grammar §4).
//!
//! One table serves both lanes: the text lane coerces the text of a token,
//! the structured lane coerces decoded JSON values, and `accepts` asks
//! whether a value already *is* its coerced form.

// One reading of a number for botlane and botlane-macros (text-grammar §4).
pub(crate) use botlane_proto::numbers::{parse_integer, parse_number};

use super::limits::MAX_SAFE_INTEGER;
use super::option::CommandOption;
use super::option_type::CommandOptionType;
use super::types::CommandArgValue;

/// Coerces the text of one token to `kind`, or `None` when the text is not
/// acceptable for that type.
// Always inlined: returned through memory, the value stalled the text
// binder on store forwarding (docs/benchmarks.md, stage 5).
#[inline(always)]
pub(crate) fn coerce_text(kind: CommandOptionType, text: &str) -> Option<CommandArgValue> {
    match kind {
        CommandOptionType::String => Some(CommandArgValue::String(text.to_owned())),
        CommandOptionType::User | CommandOptionType::Channel | CommandOptionType::Role => {
            (!text.is_empty()).then(|| CommandArgValue::String(text.to_owned()))
        }
        CommandOptionType::Integer => parse_integer(text).map(CommandArgValue::Integer),
        CommandOptionType::Number => parse_number(text).map(CommandArgValue::Number),
        CommandOptionType::Boolean => parse_boolean(text).map(CommandArgValue::Boolean),
    }
}

/// `true`/`yes`/`1` and `false`/`no`/`0`, ASCII case-insensitive.
pub(crate) fn parse_boolean(text: &str) -> Option<bool> {
    const TRUE: [&str; 3] = ["true", "yes", "1"];
    const FALSE: [&str; 3] = ["false", "no", "0"];
    if TRUE.iter().any(|t| t.eq_ignore_ascii_case(text)) {
        Some(true)
    } else if FALSE.iter().any(|f| f.eq_ignore_ascii_case(text)) {
        Some(false)
    } else {
        None
    }
}

/// Coerces a decoded structured-lane value to `kind` by the same table:
/// strings are read as text; integral numbers serve integer options; any
/// number serves number options. `None` when it does not fit.
pub(crate) fn coerce_value(
    kind: CommandOptionType,
    value: &CommandArgValue,
) -> Option<CommandArgValue> {
    if let CommandArgValue::String(s) = value {
        return coerce_text(kind, s);
    }
    // Every type named: a new type must say which other values serve it.
    match kind {
        CommandOptionType::String
        | CommandOptionType::User
        | CommandOptionType::Channel
        | CommandOptionType::Role => None,
        CommandOptionType::Integer => match value {
            CommandArgValue::Integer(i) => (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER)
                .contains(i)
                .then_some(CommandArgValue::Integer(*i)),
            CommandArgValue::Number(n) => {
                // Exact: the bound is below 2^53, so every integral double in range converts.
                #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
                let fits = n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER as f64;
                #[allow(clippy::cast_possible_truncation)]
                fits.then_some(CommandArgValue::Integer(*n as i64))
            }
            CommandArgValue::String(_) | CommandArgValue::Boolean(_) => None,
        },
        CommandOptionType::Number => match value {
            CommandArgValue::Number(n) => n.is_finite().then_some(CommandArgValue::Number(*n)),
            // Lossy above 2^53 exactly as for a JavaScript peer.
            #[allow(clippy::cast_precision_loss)]
            CommandArgValue::Integer(i) => Some(CommandArgValue::Number(*i as f64)),
            CommandArgValue::String(_) | CommandArgValue::Boolean(_) => None,
        },
        CommandOptionType::Boolean => match value {
            CommandArgValue::Boolean(b) => Some(CommandArgValue::Boolean(*b)),
            _ => None,
        },
    }
}

/// Whether a coerced `value` is one of the option's choices (always true
/// without choices). Strings compare exactly; integers and numbers compare
/// numerically with each choice coerced by the same table.
#[inline]
pub(crate) fn in_choices(option: &CommandOption, value: &CommandArgValue) -> bool {
    let Some(choices) = &option.choices else {
        return true;
    };
    choices.iter().any(|choice| match value {
        CommandArgValue::String(s) => s == choice,
        CommandArgValue::Integer(i) => parse_integer(choice) == Some(*i),
        CommandArgValue::Number(n) => parse_number(choice) == Some(*n),
        CommandArgValue::Boolean(_) => false,
    })
}

/// The integer or number choices of one option, parsed once when its
/// command is registered: [`in_choices`] would parse every choice again on
/// each check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ParsedChoices {
    /// An integer option's choices.
    Integers(Box<[i64]>),
    /// A number option's choices.
    Numbers(Box<[f64]>),
}

impl ParsedChoices {
    /// The parsed choices of each of `options` in order, or an empty list
    /// when none of them has integer or number choices (so that a registry
    /// of such commands allocates nothing for them). `None` stands for an
    /// option whose choices [`in_choices`] compares as declared.
    pub(crate) fn of_options(options: &[CommandOption]) -> Box<[Option<Self>]> {
        let parsed: Vec<Option<Self>> = options.iter().map(Self::of).collect();
        if parsed.iter().all(Option::is_none) {
            return Box::default();
        }
        parsed.into_boxed_slice()
    }

    /// The parsed choices of an integer or number option with choices.
    /// A choice that does not parse equals no value, as in [`in_choices`],
    /// so it is left out.
    fn of(option: &CommandOption) -> Option<Self> {
        let choices = option.choices.as_ref()?;
        match option.kind {
            CommandOptionType::Integer => Some(Self::Integers(
                choices.iter().filter_map(|c| parse_integer(c)).collect(),
            )),
            CommandOptionType::Number => Some(Self::Numbers(
                choices.iter().filter_map(|c| parse_number(c)).collect(),
            )),
            _ => None,
        }
    }
}

/// [`in_choices`] with the option's choices already parsed when `parsed`
/// holds them; the same answer for every value.
#[inline]
pub(crate) fn in_parsed_choices(
    option: &CommandOption,
    parsed: Option<&ParsedChoices>,
    value: &CommandArgValue,
) -> bool {
    match (parsed, value) {
        (Some(ParsedChoices::Integers(choices)), CommandArgValue::Integer(i)) => {
            choices.contains(i)
        }
        (Some(ParsedChoices::Numbers(choices)), CommandArgValue::Number(n)) => choices.contains(n),
        _ => in_choices(option, value),
    }
}

/// Coerces a structured-lane value for `option` and checks its choices.
pub(crate) fn coerce_for_option(
    option: &CommandOption,
    value: &CommandArgValue,
) -> Option<CommandArgValue> {
    coerce_value(option.kind, value).filter(|v| in_choices(option, v))
}

/// Whether `value` is already exactly what coercion for `option` would give,
/// including the choice check. This is the per-value rule of `accepts`:
/// a value that passes it survives a format/parse round trip unchanged.
pub(crate) fn fits(option: &CommandOption, value: &CommandArgValue) -> bool {
    // By type first, every type named: a new type must say what fits it.
    let typed = match option.kind {
        CommandOptionType::String => matches!(value, CommandArgValue::String(_)),
        CommandOptionType::User | CommandOptionType::Channel | CommandOptionType::Role => {
            matches!(value, CommandArgValue::String(s) if !s.is_empty())
        }
        CommandOptionType::Integer => matches!(
            value,
            CommandArgValue::Integer(i) if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(i)
        ),
        CommandOptionType::Number => {
            matches!(value, CommandArgValue::Number(n) if n.is_finite())
        }
        CommandOptionType::Boolean => matches!(value, CommandArgValue::Boolean(_)),
    };
    typed && in_choices(option, value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::option_type::COMMAND_OPTION_TYPE_CODES;
    use CommandArgValue as V;
    use CommandOptionType as T;

    /// `fits` is "coercion gives the value back unchanged", for every type
    /// of the table: the two matches by type cannot drift apart.
    #[test]
    fn fits_is_coercion_giving_the_value_back() {
        let values = [
            V::from(""),
            V::from("x"),
            V::from("2"),
            V::from("true"),
            V::Integer(2),
            V::Integer(i64::MAX),
            V::Number(2.0),
            V::Number(0.5),
            V::Number(f64::NAN),
            V::Boolean(true),
        ];
        for (kind, _) in COMMAND_OPTION_TYPE_CODES {
            let option = CommandOption::new("o", "d", kind);
            for value in &values {
                assert_eq!(
                    fits(&option, value),
                    coerce_value(kind, value).as_ref() == Some(value),
                    "{kind} {value:?}"
                );
            }
        }
    }

    /// The choices a registry parses once answer every value as `in_choices`
    /// does, whatever the option's type, spelling of a choice or value.
    #[test]
    fn parsed_choices_answer_as_in_choices() {
        let choices = ["6", "+20", "-0", "1.5", "2e1", "x", "007"];
        let values = [
            V::Integer(6),
            V::Integer(20),
            V::Integer(0),
            V::Integer(7),
            V::Integer(1),
            V::Number(1.5),
            V::Number(20.0),
            V::Number(-0.0),
            V::Number(0.0),
            V::Number(6.0),
            V::Number(7.0),
            V::from("6"),
            V::from("x"),
            V::Boolean(true),
        ];
        for (kind, _) in COMMAND_OPTION_TYPE_CODES {
            for option in [
                CommandOption::new("o", "d", kind),
                CommandOption::new("o", "d", kind).choices(choices),
                CommandOption::new("o", "d", kind).choices(["x"]),
            ] {
                let all = ParsedChoices::of_options(std::slice::from_ref(&option));
                let parsed = all.first().and_then(Option::as_ref);
                let numeric = matches!(kind, T::Integer | T::Number) && option.choices.is_some();
                assert_eq!(parsed.is_some(), numeric, "{kind} {:?}", option.choices);
                for value in &values {
                    assert_eq!(
                        in_parsed_choices(&option, parsed, value),
                        in_choices(&option, value),
                        "{kind} {:?} {value:?}",
                        option.choices
                    );
                }
            }
        }
    }

    #[test]
    fn booleans() {
        for t in ["true", "TRUE", "Yes", "1"] {
            assert_eq!(parse_boolean(t), Some(true));
        }
        for f in ["false", "No", "0"] {
            assert_eq!(parse_boolean(f), Some(false));
        }
        for bad in ["", "y", "on", "2", "truee"] {
            assert_eq!(parse_boolean(bad), None);
        }
    }

    #[test]
    fn ids_must_be_non_empty() {
        assert_eq!(coerce_text(T::User, ""), None);
        assert_eq!(coerce_text(T::Role, "r1"), Some(V::from("r1")));
        assert_eq!(coerce_text(T::String, ""), Some(V::from("")));
    }

    #[test]
    fn structured_values() {
        assert_eq!(
            coerce_value(T::Integer, &V::Number(6.0)),
            Some(V::Integer(6))
        );
        assert_eq!(coerce_value(T::Integer, &V::Number(6.5)), None);
        assert_eq!(coerce_value(T::Integer, &V::from("6")), Some(V::Integer(6)));
        assert_eq!(
            coerce_value(T::Number, &V::Integer(2)),
            Some(V::Number(2.0))
        );
        assert_eq!(
            coerce_value(T::Boolean, &V::from("no")),
            Some(V::Boolean(false))
        );
        assert_eq!(coerce_value(T::Boolean, &V::Integer(1)), None);
        assert_eq!(coerce_value(T::String, &V::Integer(1)), None);
        assert_eq!(
            coerce_value(T::Integer, &V::Integer(MAX_SAFE_INTEGER + 1)),
            None
        );
        assert_eq!(coerce_value(T::Integer, &V::Integer(i64::MIN)), None);
    }

    #[test]
    fn choices_compare_by_type() {
        let o = CommandOption::new("n", "d", T::Integer).choices(["06", "20"]);
        assert!(in_choices(&o, &V::Integer(6)));
        assert!(!in_choices(&o, &V::Integer(7)));
        let o = CommandOption::new("n", "d", T::Number).choices(["1.50"]);
        assert!(in_choices(&o, &V::Number(1.5)));
        let o = CommandOption::new("n", "d", T::String).choices(["Red"]);
        assert!(!in_choices(&o, &V::from("red")));
        assert!(fits(&o, &V::from("Red")));
    }

    #[test]
    fn fits_is_strict_about_variants() {
        let o = CommandOption::new("n", "d", T::Integer);
        assert!(fits(&o, &V::Integer(3)));
        assert!(!fits(&o, &V::Number(3.0)));
        assert!(!fits(&o, &V::from("3")));
        assert!(!fits(&o, &V::Integer(i64::MIN)));
        let o = CommandOption::new("n", "d", T::Number);
        assert!(!fits(&o, &V::Number(f64::NAN)));
        assert!(!fits(&o, &V::Integer(1)));
    }
}
