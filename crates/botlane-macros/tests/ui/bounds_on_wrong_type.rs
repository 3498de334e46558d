// Bounds on an option type they do not apply to, or on a field whose type
// the macro cannot tell.
use botlane::framework::UserId;
use botlane::{Command, CommandChoice};

#[derive(CommandChoice)]
enum Mode {
    Sum,
}

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Label
    #[option(min = 1)]
    label: String,
    /// Count
    #[option(max_length = 3)]
    count: i64,
    /// Loud
    #[option(max = 1)]
    loud: bool,
    /// Who
    #[option(min_length = 1)]
    player: Option<UserId>,
    /// Who, as text
    #[option(kind = "user", max_length = 9)]
    who: Option<String>,
    /// Mode
    #[option(max_length = 3)]
    mode: Option<Mode>,
}

fn main() {}
