// Numeric bounds that are not values of the option's type.
use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Count
    #[option(min = 1.5, max = 9007199254740992)]
    count: i64,
    /// Scale
    #[option(max = 1e999)]
    factor: f64,
}

fn main() {}
