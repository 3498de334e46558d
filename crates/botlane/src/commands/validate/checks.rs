//! The checks of one declaration on its own: the command's name and
//! description, its options and their choices (the local bounds are in
//! `bounds.rs`). Each broken rule is a [`Violation`] of the report in
//! `validate/mod.rs`; the rules that need the other commands or the
//! settings are the registry's.

use super::bounds::bound_violations;
use crate::commands::coerce::{coerce_text, parse_integer, parse_number};
use crate::commands::limits::{
    is_valid_name, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_COMMAND_DESC,
    MAX_OPTIONS_PER_COMMAND,
};
use crate::commands::option::CommandOption;
use crate::commands::option_type::CommandOptionType;
use crate::commands::types::CommandDeclaration;

use super::{DeclarationError, DeclarationRule, Violation};

/// Checks one declaration against every rule the service enforces, reporting
/// all violations at once.
///
/// Rules: the name rule `^[a-z0-9_-]{1,32}$` for the command and each option;
/// descriptions of 1 to [`MAX_COMMAND_DESC`] characters; at most
/// [`MAX_OPTIONS_PER_COMMAND`] options with unique names; every required
/// option before every optional one; and for `choices`: not on a `boolean`
/// option, not empty, at most [`MAX_CHOICES_PER_OPTION`] entries of at most
/// [`MAX_CHOICE_LEN`] characters each, no duplicates, and each one coercing to
/// the option's type (an integer for `integer`, a number for `number`,
/// non-empty for `user`/`channel`/`role`). Characters are Unicode scalar values.
///
/// It also checks the local bounds, which the service never sees but which
/// must make sense: `min_value`/`max_value` only on `integer` and `number`
/// options (whole numbers within ±(2^53 − 1) for `integer`, finite for
/// `number`), `min_length`/`max_length` only on `string` options and at most
/// [`MAX_OPTION_LENGTH`](crate::MAX_OPTION_LENGTH), each minimum at most its
/// maximum, and every choice within the bounds.
///
/// ```
/// use botlane::{validate_declaration, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
///     .option(CommandOption::new("sides", "Sides", CommandOptionType::Integer).choices(["6", "20"]));
/// assert!(validate_declaration(&roll).is_ok());
///
/// let bad = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("sides", "Sides", CommandOptionType::Integer))
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
/// let err = validate_declaration(&bad).unwrap_err();
/// assert!(err.to_string().contains("every required option must precede every optional one"));
/// ```
pub fn validate_declaration(decl: &CommandDeclaration) -> Result<(), DeclarationError> {
    let violations = violations_of(decl);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(DeclarationError::new(violations))
    }
}

/// Every violation of the per-declaration rules, in declaration order.
pub(crate) fn violations_of(decl: &CommandDeclaration) -> Vec<Violation> {
    let cmd = decl.name.as_str();
    let mut out = Vec::new();
    if !is_valid_name(cmd) {
        out.push(Violation::at_command(cmd, DeclarationRule::InvalidName));
    }
    if let Some(rule) = description_rule(&decl.description) {
        out.push(Violation::at_command(cmd, rule));
    }
    if decl.options.len() > MAX_OPTIONS_PER_COMMAND {
        out.push(Violation::at_command(
            cmd,
            DeclarationRule::TooManyOptions {
                count: decl.options.len(),
            },
        ));
    }
    let mut first_optional: Option<usize> = None;
    for (i, option) in decl.options.iter().enumerate() {
        let at = |rule| Violation::at_option(cmd, i, option, rule);
        if !is_valid_name(&option.name) {
            out.push(at(DeclarationRule::InvalidName));
        }
        if let Some(first_index) = decl.options[..i]
            .iter()
            .position(|o| o.name.eq_ignore_ascii_case(&option.name))
        {
            out.push(at(DeclarationRule::DuplicateOptionName { first_index }));
        }
        if let Some(rule) = description_rule(&option.description) {
            out.push(at(rule));
        }
        match (option.required, first_optional) {
            (true, Some(optional_index)) => out.push(at(DeclarationRule::RequiredAfterOptional {
                optional_index,
                optional_name: decl.options[optional_index].name.clone(),
            })),
            (false, None) => first_optional = Some(i),
            _ => {}
        }
        if let Some(choices) = &option.choices {
            choice_violations(cmd, i, option, choices, &mut out);
        }
        bound_violations(cmd, i, option, &mut out);
    }
    out
}

fn description_rule(description: &str) -> Option<DeclarationRule> {
    let chars = description.chars().count();
    if chars == 0 {
        Some(DeclarationRule::EmptyDescription)
    } else if chars > MAX_COMMAND_DESC {
        Some(DeclarationRule::DescriptionTooLong {
            description: description.to_owned(),
            chars,
        })
    } else {
        None
    }
}

fn choice_violations(
    cmd: &str,
    i: usize,
    option: &CommandOption,
    choices: &[String],
    out: &mut Vec<Violation>,
) {
    let at = |rule| Violation::at_option(cmd, i, option, rule);
    // Any choice list on a boolean is the fault; its entries are not examined.
    if option.kind == CommandOptionType::Boolean {
        out.push(at(DeclarationRule::ChoicesOnBoolean));
        return;
    }
    if choices.is_empty() {
        out.push(at(DeclarationRule::EmptyChoices));
    }
    if choices.len() > MAX_CHOICES_PER_OPTION {
        out.push(at(DeclarationRule::TooManyChoices {
            count: choices.len(),
        }));
    }
    for (j, choice) in choices.iter().enumerate() {
        let at = |rule| Violation::at_choice(cmd, i, option, j, rule);
        let chars = choice.chars().count();
        if chars > MAX_CHOICE_LEN {
            out.push(at(DeclarationRule::ChoiceTooLong {
                choice: choice.clone(),
                chars,
            }));
        }
        if coerce_text(option.kind, choice).is_none() {
            out.push(at(DeclarationRule::ChoiceNotOfType {
                choice: choice.clone(),
                kind: option.kind,
            }));
        } else if let Some(first_index) = choices[..j]
            .iter()
            .position(|earlier| same_choice(option.kind, earlier, choice))
        {
            out.push(at(DeclarationRule::DuplicateChoice {
                choice: choice.clone(),
                first_index,
            }));
        }
    }
}

/// Whether two choices denote the same value: numerically for `integer` and
/// `number` (as the text lane compares them), exactly for the rest.
fn same_choice(kind: CommandOptionType, a: &str, b: &str) -> bool {
    match kind {
        CommandOptionType::Integer => {
            parse_integer(a).is_some() && parse_integer(a) == parse_integer(b)
        }
        CommandOptionType::Number => {
            parse_number(a).is_some() && parse_number(a) == parse_number(b)
        }
        _ => a == b,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numeric_duplicates() {
        assert!(same_choice(CommandOptionType::Integer, "6", "+06"));
        assert!(!same_choice(CommandOptionType::Integer, "6", "7"));
        assert!(same_choice(CommandOptionType::Number, "0.5", ".50"));
        assert!(!same_choice(CommandOptionType::String, "a", "A"));
    }
}
