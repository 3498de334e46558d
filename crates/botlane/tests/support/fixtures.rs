//! The declarations the suites share: `tests/support` holds them for the
//! socket suites, and `tests/pure` includes this file alone (it opens no
//! socket, so it leaves the devserver out).

// Each binary uses some of them.
#![allow(dead_code)]

use botlane::{CommandDeclaration, CommandOption, CommandOptionType as T};

/// `/roll count:integer (required) sides:integer label:string`: the
/// grammar's running example.
pub(crate) fn roll() -> CommandDeclaration {
    CommandDeclaration::new("roll", "Roll dice")
        .option(CommandOption::new("count", "How many", T::Integer).required(true))
        .option(CommandOption::new("sides", "Sides", T::Integer))
        .option(CommandOption::new("label", "Label", T::String))
}

/// [`roll`] whose `sides` offers only the choices 6 and 20.
pub(crate) fn roll_with_choices() -> CommandDeclaration {
    let mut roll = roll();
    roll.options[1] = CommandOption::new("sides", "Sides", T::Integer).choices(["6", "20"]);
    roll
}

/// `/roll count:integer (required, 1 to 20)`, "Roll some dice": the dice
/// bot whose help, prefixes and aliases the suites read back.
pub(crate) fn bounded_roll() -> CommandDeclaration {
    CommandDeclaration::new("roll", "Roll some dice").option(
        CommandOption::new("count", "How many dice", T::Integer)
            .required(true)
            .min(1)
            .max(20),
    )
}
