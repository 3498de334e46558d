// Bounds that no value fits, and lengths over the cap.
use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Count
    #[option(min = 10, max = -1)]
    count: i64,
    /// Label
    #[option(min_length = 4, max_length = 2)]
    label: String,
    /// Note
    #[option(max_length = 6001)]
    note: Option<String>,
}

fn main() {}
