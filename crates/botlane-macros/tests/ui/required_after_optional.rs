use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Sides
    sides: Option<i64>,
    /// How many
    count: i64,
}

fn main() {}
