use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Sides
    #[option(choices())]
    sides: i64,
}

fn main() {}
