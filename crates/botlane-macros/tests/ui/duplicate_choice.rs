use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Sides
    #[option(choices("6", "20", "+06"))]
    sides: i64,
    /// What for
    #[option(choices("fire", "fire"))]
    label: String,
}

fn main() {}
