//! Checking an invocation's arguments against its declaration after the
//! lane decision, with the detail an answer to the user needs.
//!
//! Dispatch runs, for a message addressed to a registered command:
//! - structured lane: [`CommandDeclaration::check_invocation`] on the
//!   decoded args (coercion, choices, required options, then bounds);
//! - text lane: [`CommandRegistry::parse_from_text`](crate::CommandRegistry::parse_from_text),
//!   then [`CommandDeclaration::check_bounds`] on the parsed args.
//!
//! Either way a failure is one [`ArgumentError`] with the usage line.

use super::argument_error::{ArgumentError, ArgumentRule};
use super::bounds::check_value;
use super::coerce::coerce_value;
use super::coerce::in_choices;
use super::text::format::usage_line;
use super::types::{CommandArgs, CommandDeclaration};

impl CommandDeclaration {
    /// Coerces structured-lane `args` to the declared types, as
    /// [`CommandLookup::coerce`](crate::CommandLookup::coerce) does for a
    /// registry, but says what is wrong instead of giving `None`. Bounds are
    /// not checked here (see [`check_bounds`](Self::check_bounds)).
    ///
    /// The first fault is reported, looking first for an argument that names
    /// no option, then through the options in declared order for a value
    /// that does not coerce, a value outside the choices, or a missing
    /// required option. The usage line uses `prefix` (`None` means
    /// [`DEFAULT_COMMAND_PREFIX`](crate::DEFAULT_COMMAND_PREFIX)).
    ///
    /// ```
    /// use botlane::framework::ArgValueKind;
    /// use botlane::{ArgumentRule, CommandArgValue, CommandArgs, CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let roll = CommandDeclaration::new("roll", "Roll dice")
    ///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true))
    ///     .option(CommandOption::new("sides", "Sides", CommandOptionType::Integer).choices(["6", "20"]));
    ///
    /// let args = CommandArgs::from([("count".to_string(), CommandArgValue::from("3"))]);
    /// assert_eq!(roll.check_args(args, None)?["count"], CommandArgValue::Integer(3));
    ///
    /// let args = CommandArgs::from([("count".to_string(), CommandArgValue::Boolean(true))]);
    /// let err = roll.check_args(args, None).unwrap_err();
    /// assert_eq!(err.value_kind(), Some(ArgValueKind::Boolean));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "option \"count\" expects an integer, got a boolean\nusage: /roll <count> [sides]"
    /// );
    ///
    /// let args = CommandArgs::from([("count".to_string(), 1.into()), ("sides".to_string(), 7.into())]);
    /// let err = roll.check_args(args, Some("!")).unwrap_err();
    /// assert_eq!(err.to_string(), "option \"sides\" must be one of 6, 20\nusage: !roll <count> [sides]");
    /// # Ok::<(), botlane::ArgumentError>(())
    /// ```
    pub fn check_args(
        &self,
        args: CommandArgs,
        prefix: Option<&str>,
    ) -> Result<CommandArgs, ArgumentError> {
        let fail = |option: &str, rule| self.argument_error(option, rule, prefix);
        if let Some(unknown) = args.keys().find(|key| self.find_option(key).is_none()) {
            return Err(fail(unknown, ArgumentRule::Unknown));
        }
        let mut coerced = CommandArgs::new();
        for option in &self.options {
            let Some(value) = args.get(&option.name) else {
                if option.required {
                    return Err(fail(&option.name, ArgumentRule::Missing));
                }
                continue;
            };
            let kind = value.value_kind();
            let Some(typed) = coerce_value(option.kind, value) else {
                let rule = ArgumentRule::WrongType {
                    expected: option.kind,
                };
                return Err(fail(&option.name, rule).with_value_kind(kind));
            };
            if let (false, Some(choices)) = (in_choices(option, &typed), &option.choices) {
                let rule = ArgumentRule::NotInChoices {
                    choices: choices.clone(),
                };
                return Err(fail(&option.name, rule).with_value_kind(kind));
            }
            coerced.insert(option.name.clone(), typed);
        }
        Ok(coerced)
    }

    /// Checks already coerced `args` against the options' local bounds
    /// (`min_value`, `max_value`, `min_length`, `max_length`), in declared
    /// order; arguments that name no option are not looked at.
    ///
    /// This is the check both lanes run after the lane decision: the spec's
    /// helpers ([`accepts`](crate::CommandLookup::accepts),
    /// [`parse_invocation_text`](crate::parse_invocation_text),
    /// [`format_invocation_text`](crate::format_invocation_text),
    /// [`decode_command_data`](crate::decode_command_data)) ignore bounds, so
    /// an out-of-bounds structured payload is still well-formed and stays on
    /// the structured lane.
    ///
    /// ```
    /// use botlane::{parse_invocation_text, CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let remind = CommandDeclaration::new("remind", "Remind me")
    ///     .option(CommandOption::new("minutes", "When", CommandOptionType::Integer).required(true).min(1).max(3600))
    ///     .option(CommandOption::new("note", "What", CommandOptionType::String).max_length(20));
    ///
    /// let args = parse_invocation_text(&remind, "/remind 0 tea", None)?;
    /// let err = remind.check_bounds(&args, None).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "option \"minutes\" must be at least 1\n\
    ///      usage: /remind <minutes (1 to 3600)> [note (up to 20 characters)]"
    /// );
    /// let args = parse_invocation_text(&remind, "/remind 5 tea", None)?;
    /// assert!(remind.check_bounds(&args, None).is_ok());
    /// # Ok::<(), botlane::ParseError>(())
    /// ```
    pub fn check_bounds(
        &self,
        args: &CommandArgs,
        prefix: Option<&str>,
    ) -> Result<(), ArgumentError> {
        for option in self.options.iter().filter(|o| o.has_bounds()) {
            let Some(value) = args.get(&option.name) else {
                continue;
            };
            if let Err(rule) = check_value(option, value) {
                return Err(self
                    .argument_error(&option.name, rule, prefix)
                    .with_value_kind(value.value_kind()));
            }
        }
        Ok(())
    }

    /// The whole structured-lane check: [`check_args`](Self::check_args),
    /// then [`check_bounds`](Self::check_bounds) on the result, which is
    /// what the handler gets.
    ///
    /// ```
    /// use botlane::{ArgumentRule, CommandArgValue, CommandArgs, CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let note = CommandDeclaration::new("note", "Take a note")
    ///     .option(CommandOption::new("text", "What", CommandOptionType::String).required(true).min_length(3));
    /// let args = CommandArgs::from([("text".to_string(), CommandArgValue::from("hi"))]);
    /// let err = note.check_invocation(args, None).unwrap_err();
    /// assert_eq!(err.rule(), &ArgumentRule::TooShort { min_length: 3 });
    /// ```
    pub fn check_invocation(
        &self,
        args: CommandArgs,
        prefix: Option<&str>,
    ) -> Result<CommandArgs, ArgumentError> {
        let args = self.check_args(args, prefix)?;
        self.check_bounds(&args, prefix)?;
        Ok(args)
    }

    /// An argument error about `option` with this command's usage line; only
    /// built on failure, off the success path.
    #[cold]
    fn argument_error(
        &self,
        option: &str,
        rule: ArgumentRule,
        prefix: Option<&str>,
    ) -> ArgumentError {
        ArgumentError::new(option, rule).with_usage(usage_line(self, prefix))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::commands::argument_error::ArgValueKind;
    use crate::commands::option::CommandOption;
    use crate::commands::option_type::CommandOptionType as T;
    use crate::commands::types::CommandArgValue as V;

    fn args<const N: usize>(pairs: [(&str, V); N]) -> CommandArgs {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }

    fn decl() -> CommandDeclaration {
        CommandDeclaration::new("set", "Set")
            .option(CommandOption::new("key", "k", T::String).required(true))
            .option(CommandOption::new("level", "l", T::Integer).min(0).max(9))
            .option(CommandOption::new("who", "w", T::User))
    }

    #[test]
    fn an_unknown_option_is_reported_before_a_missing_one() {
        let err = decl()
            .check_args(args([("kye", V::from("x"))]), None)
            .unwrap_err();
        assert_eq!((err.option(), err.rule()), ("kye", &ArgumentRule::Unknown));
        assert_eq!(err.value_kind(), None);
    }

    #[test]
    fn options_are_checked_in_declared_order() {
        let err = decl()
            .check_args(
                args([("who", V::from("")), ("level", V::Boolean(true))]),
                None,
            )
            .unwrap_err();
        assert_eq!(err.option(), "key");
        assert_eq!(err.rule(), &ArgumentRule::Missing);
        let err = decl()
            .check_args(
                args([
                    ("key", V::from("k")),
                    ("who", V::from("")),
                    ("level", V::Number(1.5)),
                ]),
                None,
            )
            .unwrap_err();
        assert_eq!(err.option(), "level");
        assert_eq!(err.value_kind(), Some(ArgValueKind::Number));
        let err = decl()
            .check_args(args([("key", V::from("k")), ("who", V::from(""))]), None)
            .unwrap_err();
        assert_eq!(err.option(), "who");
        assert_eq!(err.rule(), &ArgumentRule::WrongType { expected: T::User });
    }

    #[test]
    fn check_args_leaves_bounds_to_check_bounds() {
        let coerced = decl()
            .check_args(
                args([("key", V::from("k")), ("level", V::from("12"))]),
                None,
            )
            .unwrap();
        assert_eq!(coerced["level"], V::Integer(12));
        let err = decl().check_bounds(&coerced, None).unwrap_err();
        assert_eq!(err.rule(), &ArgumentRule::AboveMax { max: 9.0 });
        assert_eq!(err.value_kind(), Some(ArgValueKind::Integer));
        assert_eq!(
            decl()
                .check_invocation(
                    args([("key", V::from("k")), ("level", V::from("12"))]),
                    None
                )
                .unwrap_err(),
            err
        );
    }

    #[test]
    fn check_bounds_ignores_undeclared_and_unbounded_arguments() {
        let d = decl();
        assert_eq!(
            d.check_bounds(
                &args([("nope", V::Integer(99)), ("key", V::from(""))]),
                None
            ),
            Ok(())
        );
    }
}
