//! Declarations shared by the pure tests.

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
