use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// What for
    #[option(choices("fine", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))]
    label: String,
}

fn main() {}
