use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// How many
    count: i64,
    /// Also how many
    #[option(name = "count")]
    number: i64,
}

fn main() {}
