use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Several counts
    counts: Vec<i64>,
}

fn main() {}
