use botlane::framework::UserId;
use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Sides
    #[option(choices("6", "six", "9007199254740992"))]
    sides: i64,
    /// Scale
    #[option(choices("1,5", "inf"))]
    factor: f64,
    /// Who
    #[option(choices(""))]
    player: UserId,
}

fn main() {}
