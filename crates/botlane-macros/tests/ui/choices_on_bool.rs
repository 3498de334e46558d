use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// Show each die
    #[option(choices("true"))]
    verbose: Option<bool>,
}

fn main() {}
