// Misused attributes and field types.
use botlane::{Command, CommandChoice};

#[derive(CommandChoice)]
enum Mode {
    Sum,
}

/// Roll some dice
#[derive(Command)]
#[command(title = "roll")]
struct Roll {
    /// How many
    #[option(kind = "user")]
    count: i64,
    /// Who
    #[option(kind = "member")]
    player: String,
    /// How
    #[option(choices("sum"))]
    mode: Mode,
    /// Sides
    #[option(name = "sides", name = "faces")]
    sides: Option<i64>,
}

/// Roll some dice
#[derive(Command)]
struct Tuple(i64);

/// Roll some dice
#[derive(Command)]
enum NotAStruct {}

fn main() {}
