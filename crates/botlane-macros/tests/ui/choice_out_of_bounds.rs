// Choices the option's own bounds would refuse.
use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Sides
    #[option(choices("6", "+020", "100"), min = 4, max = 20)]
    sides: i64,
    /// Scale
    #[option(choices("0.5", "-1"), min = 0)]
    factor: f64,
    /// Color
    #[option(choices("red", "a", "turquoise"), min_length = 2, max_length = 5)]
    color: String,
}

fn main() {}
