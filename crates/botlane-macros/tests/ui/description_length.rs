use botlane::Command;

/// This description is longer than the hundred characters that the service allows for a command or an option.
#[derive(Command)]
struct Roll {
    ///
    count: i64,
    #[option(description = "")]
    sides: Option<i64>,
}

fn main() {}
