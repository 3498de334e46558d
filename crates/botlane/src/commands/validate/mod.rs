//! Declaration rules: everything the service would reject, and how a
//! declaration that breaks them is told.
//!
//! [`validate_declaration`] checks one declaration on its own (`checks.rs`);
//! the registry adds the rules that need the other commands or the
//! command's settings (duplicates, the command cap, the menu payload cap,
//! categories, aliases, help texts) and reports them through the same
//! [`DeclarationError`], so a caller sees every problem in one go.
//!
//! This file is that report: the error, where a violation is
//! ([`Violation`]) and every rule with the value at fault
//! ([`DeclarationRule`]). It is shared by every checker (`checks.rs`,
//! `bounds.rs`, the registry, `aliases.rs`, `help.rs`), so a new rule is a
//! variant here and a check in one of those; the checks of one declaration
//! are apart in `checks.rs`, which only says which rule broke.

use std::fmt::Write as _;

use super::limits::{
    MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT,
    MAX_COMMAND_DESC, MAX_OPTIONS_PER_COMMAND, MAX_OPTION_LENGTH,
};
use crate::commands::argument_error::ArgumentRule;
use crate::commands::excerpt::{excerpt_raw, Excerpt};
use crate::commands::limits::{MAX_ALIASES_PER_COMMAND, MAX_HELP_TEXT_CHARS};
use crate::commands::option::CommandOption;
use crate::commands::option_type::CommandOptionType;
use crate::commands::types::format_number;

mod bounds;
pub(crate) mod checks;

/// A declaration the service would reject, with every rule it breaks.
///
/// Its `Display` is the single violation when there is one, otherwise a count
/// on the first line followed by one violation per line.
///
/// ```
/// use botlane::{validate_declaration, CommandDeclaration};
///
/// let err = validate_declaration(&CommandDeclaration::new("Roll", "")).unwrap_err();
/// assert_eq!(err.violations().len(), 2);
/// assert_eq!(
///     err.to_string(),
///     "2 declaration rules violated:\n\
///      - command \"Roll\": name must match ^[a-z0-9_-]{1,32}$\n\
///      - command \"Roll\": description must not be empty"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", display_all(.violations))]
pub struct DeclarationError {
    violations: Vec<Violation>,
}

impl DeclarationError {
    /// Wraps a non-empty list of violations.
    pub(crate) fn new(violations: Vec<Violation>) -> Self {
        debug_assert!(!violations.is_empty(), "an error needs a violation");
        Self { violations }
    }

    /// Every rule broken, in declaration order (command, then options, then
    /// registry-level rules).
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
}

fn display_all(violations: &[Violation]) -> String {
    match violations {
        [one] => one.to_string(),
        many => {
            let mut out = format!("{} declaration rules violated:", many.len());
            for v in many {
                // Writing to a String cannot fail.
                let _ = write!(out, "\n- {v}");
            }
            out
        }
    }
}

/// One broken rule and where in the declaration it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {rule}", self.location())]
pub struct Violation {
    command: String,
    option: Option<(usize, String)>,
    choice: Option<usize>,
    rule: DeclarationRule,
}

impl Violation {
    pub(crate) fn at_command(command: &str, rule: DeclarationRule) -> Self {
        Self {
            command: command.to_owned(),
            option: None,
            choice: None,
            rule,
        }
    }

    pub(crate) fn at_option(
        command: &str,
        index: usize,
        option: &CommandOption,
        rule: DeclarationRule,
    ) -> Self {
        Self {
            option: Some((index, option.name.clone())),
            ..Self::at_command(command, rule)
        }
    }

    pub(crate) fn at_choice(
        command: &str,
        index: usize,
        option: &CommandOption,
        choice: usize,
        rule: DeclarationRule,
    ) -> Self {
        Self {
            choice: Some(choice),
            ..Self::at_option(command, index, option, rule)
        }
    }

    /// The name of the command, as declared.
    pub fn command_name(&self) -> &str {
        &self.command
    }

    /// The index and declared name of the option at fault, if the rule is about one.
    pub fn option_ref(&self) -> Option<(usize, &str)> {
        self.option.as_ref().map(|(i, name)| (*i, name.as_str()))
    }

    /// The index of the choice at fault within its option's `choices`, if the
    /// rule is about one.
    pub fn choice_index(&self) -> Option<usize> {
        self.choice
    }

    /// The rule that is broken.
    pub fn rule(&self) -> &DeclarationRule {
        &self.rule
    }

    /// Where the violation is, as `command.options[i].choices[j]` (the command
    /// name truncated like in messages).
    ///
    /// ```
    /// use botlane::{validate_declaration, CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let decl = CommandDeclaration::new("roll", "Roll dice")
    ///     .option(CommandOption::new("sides", "Sides", CommandOptionType::Integer).choices(["6", "x"]));
    /// let err = validate_declaration(&decl).unwrap_err();
    /// assert_eq!(err.violations()[0].path(), "roll.options[0].choices[1]");
    /// assert_eq!(
    ///     err.to_string(),
    ///     "option \"sides\" of command \"roll\": choice \"x\" is not an integer"
    /// );
    /// ```
    pub fn path(&self) -> String {
        let mut path = excerpt_raw(&self.command);
        if let Some((i, _)) = &self.option {
            // Writing to a String cannot fail.
            let _ = write!(path, ".options[{i}]");
        }
        if let Some(j) = self.choice {
            let _ = write!(path, ".choices[{j}]");
        }
        path
    }

    fn location(&self) -> String {
        match &self.option {
            Some((_, option)) => format!(
                "option {} of command {}",
                Excerpt(option),
                Excerpt(&self.command)
            ),
            None => format!("command {}", Excerpt(&self.command)),
        }
    }
}

/// A rule of the declaration format or of the registry, with the value at
/// fault. Values are kept whole here; messages quote at most 40 characters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclarationRule {
    /// A command or option name does not match `^[a-z0-9_-]{1,32}$`.
    #[error("name must match ^[a-z0-9_-]{{1,32}}$")]
    InvalidName,
    /// A command or option description is empty.
    #[error("description must not be empty")]
    EmptyDescription,
    /// A command or option description is longer than [`MAX_COMMAND_DESC`].
    #[error(
        "description is {chars} characters, more than MAX_COMMAND_DESC ({MAX_COMMAND_DESC}): {}",
        Excerpt(.description)
    )]
    DescriptionTooLong {
        /// The description.
        description: String,
        /// Its length in characters.
        chars: usize,
    },
    /// More than [`MAX_OPTIONS_PER_COMMAND`] options.
    #[error("{count} options, more than MAX_OPTIONS_PER_COMMAND ({MAX_OPTIONS_PER_COMMAND})")]
    TooManyOptions {
        /// How many options are declared.
        count: usize,
    },
    /// Two options share a name (compared ASCII case-insensitively, as the
    /// text lane matches `name:value`).
    #[error("duplicate option name: options[{first_index}] already has this name")]
    DuplicateOptionName {
        /// The index of the first option with this name.
        first_index: usize,
    },
    /// A required option is declared after an optional one.
    #[error(
        "required option follows optional option {} (options[{optional_index}]); \
         every required option must precede every optional one",
        Excerpt(.optional_name)
    )]
    RequiredAfterOptional {
        /// The index of the first optional option.
        optional_index: usize,
        /// Its name.
        optional_name: String,
    },
    /// `choices` is present but empty, so no value could ever be accepted.
    #[error("choices must not be empty (omit choices to allow any value)")]
    EmptyChoices,
    /// A `boolean` option declares choices.
    #[error("a boolean option cannot have choices")]
    ChoicesOnBoolean,
    /// More than [`MAX_CHOICES_PER_OPTION`] choices.
    #[error("{count} choices, more than MAX_CHOICES_PER_OPTION ({MAX_CHOICES_PER_OPTION})")]
    TooManyChoices {
        /// How many choices are declared.
        count: usize,
    },
    /// A choice longer than [`MAX_CHOICE_LEN`] characters.
    #[error(
        "choice {} is {chars} characters, more than MAX_CHOICE_LEN ({MAX_CHOICE_LEN})",
        Excerpt(.choice)
    )]
    ChoiceTooLong {
        /// The choice.
        choice: String,
        /// Its length in characters.
        chars: usize,
    },
    /// A choice that does not coerce to the option's type: not an integer for
    /// `integer`, not a number for `number`, empty for `user`/`channel`/`role`.
    #[error("choice {} is not {}", Excerpt(.choice), kind_phrase(.kind))]
    ChoiceNotOfType {
        /// The choice.
        choice: String,
        /// The option's type.
        kind: CommandOptionType,
    },
    /// The same choice twice (for `integer` and `number`: the same value,
    /// so `"6"` and `"06"` are duplicates).
    #[error("duplicate choice {}: choices[{first_index}] has the same value", Excerpt(.choice))]
    DuplicateChoice {
        /// The repeated choice.
        choice: String,
        /// The index of its first occurrence.
        first_index: usize,
    },
    /// A local bound on an option type it does not apply to: `min_value`
    /// and `max_value` apply to `integer` and `number`, `min_length` and
    /// `max_length` to `string`.
    #[error("{bound} does not apply to a {kind} option")]
    BoundNotForType {
        /// The bound's JSON name (`min_value`, `max_value`, `min_length`, `max_length`).
        bound: &'static str,
        /// The option's type.
        kind: CommandOptionType,
    },
    /// A numeric bound that is not a value of the option's type: not a
    /// whole number within ±(2^53 − 1) for `integer`, not finite for `number`.
    #[error("{bound} {} is not {}", format_number(*.value), bound_phrase(*.kind))]
    BoundNotOfType {
        /// The bound's JSON name (`min_value` or `max_value`).
        bound: &'static str,
        /// The bound.
        value: f64,
        /// The option's type.
        kind: CommandOptionType,
    },
    /// `min_value` is greater than `max_value`, so no value fits.
    #[error("min_value {} is greater than max_value {}", format_number(*.min), format_number(*.max))]
    MinAboveMax {
        /// The minimum.
        min: f64,
        /// The maximum.
        max: f64,
    },
    /// A length bound above [`MAX_OPTION_LENGTH`].
    #[error("{bound} {length} is more than MAX_OPTION_LENGTH ({MAX_OPTION_LENGTH})")]
    LengthTooLarge {
        /// The bound's JSON name (`min_length` or `max_length`).
        bound: &'static str,
        /// The bound.
        length: usize,
    },
    /// `min_length` is greater than `max_length`, so no value fits.
    #[error("min_length {min_length} is greater than max_length {max_length}")]
    MinLengthAboveMaxLength {
        /// The minimum length.
        min_length: usize,
        /// The maximum length.
        max_length: usize,
    },
    /// A choice outside the option's own bounds, so it could never be accepted.
    #[error("choice {} is outside the option's bounds: it {broken}", Excerpt(.choice))]
    ChoiceOutOfBounds {
        /// The choice.
        choice: String,
        /// The bound it breaks, as an argument with that value would.
        broken: ArgumentRule,
    },
    /// A command with this name is already registered.
    #[error("a command with this name is already registered")]
    DuplicateCommand,
    /// A command named `help` while the built-in help command is enabled
    /// (in either order).
    #[error(
        "the built-in help command is enabled (CommandRegistry::enable_help), so no other \
         command may be named \"help\"; rename this one or do not enable the built-in help"
    )]
    HelpClash,
    /// A command's [`category`](crate::framework::CommandSettings::category) is blank,
    /// longer than 100 characters, or holds a line break (U+2028 and
    /// U+2029 included) or another control character: it is a heading of
    /// the built-in help.
    #[error(
        "category {} must be 1 to 100 characters, not blank, without line breaks \
         or other control characters",
        Excerpt(.category)
    )]
    InvalidCategory {
        /// The category.
        category: String,
    },
    /// An alias ([`CommandSettings::aliases`](crate::framework::CommandSettings::aliases))
    /// that does not match `^[a-z0-9_-]{1,32}$`, the rule of command names.
    #[error("alias {} must match ^[a-z0-9_-]{{1,32}}$", Excerpt(.alias))]
    InvalidAlias {
        /// The alias.
        alias: String,
    },
    /// An alias equal to its own command's name.
    #[error("alias {} is the command's own name", Excerpt(.alias))]
    AliasIsOwnName {
        /// The alias.
        alias: String,
    },
    /// The same alias twice in one command's list.
    #[error("duplicate alias {}: aliases[{first_index}] is the same", Excerpt(.alias))]
    DuplicateAlias {
        /// The repeated alias.
        alias: String,
        /// The index of its first occurrence.
        first_index: usize,
    },
    /// An alias that is already the name or an alias of another registered
    /// command (`help` when the built-in help is enabled).
    #[error("alias {} is already a name or an alias of command {}", Excerpt(.alias), Excerpt(.command))]
    AliasTaken {
        /// The alias.
        alias: String,
        /// The command that already answers to it.
        command: String,
    },
    /// A command's [`help_text`](crate::framework::CommandSettings::help_text) the
    /// built-in help cannot show as it is.
    #[error("help text {fault}")]
    InvalidHelpText {
        /// What is wrong with it.
        fault: HelpTextFault,
    },
    /// A command's name is already an alias of a registered command.
    #[error("this name is already an alias of command {}", Excerpt(.command))]
    NameIsAlias {
        /// The command that has it as an alias.
        command: String,
    },
    /// More than [`MAX_ALIASES_PER_COMMAND`] aliases.
    #[error("{count} aliases, more than MAX_ALIASES_PER_COMMAND ({MAX_ALIASES_PER_COMMAND})")]
    TooManyAliases {
        /// How many aliases are given.
        count: usize,
    },
    /// The registry already holds [`MAX_COMMANDS_PER_BOT`] commands.
    #[error("the registry already holds MAX_COMMANDS_PER_BOT ({MAX_COMMANDS_PER_BOT}) commands")]
    TooManyCommands,
    /// With this command the canonical menu would exceed [`MAX_COMMANDS_PAYLOAD`] bytes.
    #[error(
        "with this command the canonical menu would be {bytes} bytes, \
         more than MAX_COMMANDS_PAYLOAD ({MAX_COMMANDS_PAYLOAD})"
    )]
    PayloadTooLarge {
        /// The size the canonical menu's compact JSON would have.
        bytes: usize,
    },
}

/// What is wrong with a command's
/// [`help_text`](crate::framework::CommandSettings::help_text), in a
/// [`DeclarationRule::InvalidHelpText`](crate::DeclarationRule::InvalidHelpText).
///
/// ```
/// use botlane::framework::HelpTextFault;
/// let fault = HelpTextFault::Character { line: 2, character: '\u{2028}' };
/// assert_eq!(
///     fault.to_string(),
///     "line 2 holds '\\u{2028}': lines break with \\n only, and no other control character is allowed"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HelpTextFault {
    /// Empty or whitespace only.
    #[error("must not be blank")]
    Blank,
    /// Longer than [`MAX_HELP_TEXT_CHARS`](crate::framework::MAX_HELP_TEXT_CHARS).
    #[error("is {chars} characters, more than MAX_HELP_TEXT_CHARS ({MAX_HELP_TEXT_CHARS})")]
    TooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// A line break other than `\n` (`\r`, U+2028, U+2029, U+0085…) or
    /// another control character (a tab too), on line `line`.
    #[error(
        "line {line} holds {character:?}: lines break with \\n only, \
         and no other control character is allowed"
    )]
    Character {
        /// The line it is on, from 1 (lines split at `\n`).
        line: usize,
        /// The character.
        character: char,
    },
}

fn bound_phrase(kind: CommandOptionType) -> &'static str {
    match kind {
        CommandOptionType::Integer => "a whole number within ±9007199254740991",
        _ => "a finite number",
    }
}

fn kind_phrase(kind: &CommandOptionType) -> &'static str {
    match kind {
        CommandOptionType::Integer => "an integer",
        CommandOptionType::Number => "a number",
        CommandOptionType::User => "a user id (ids are non-empty)",
        CommandOptionType::Channel => "a channel id (ids are non-empty)",
        CommandOptionType::Role => "a role id (ids are non-empty)",
        CommandOptionType::String => "a string",
        CommandOptionType::Boolean => "a boolean",
    }
}
