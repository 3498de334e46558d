use botlane::Command;

/// Roll some dice
#[derive(Command)]
#[command(name = "Roll Dice")]
struct Roll {}

/// A name longer than 32 characters
#[derive(Command)]
struct ThisCommandNameIsMuchTooLongToBeValid {}

fn main() {}
