// Bound attributes that are not literals of the right kind, or given twice.
use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Count
    #[option(min = "1")]
    count: i64,
    /// Sides
    #[option(max_length = -1)]
    label: String,
    /// Scale
    #[option(min = 1, min = 2)]
    factor: f64,
}

fn main() {}
