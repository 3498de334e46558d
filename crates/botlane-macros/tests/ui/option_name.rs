use botlane::Command;

/// Roll some dice
#[derive(Command)]
struct Roll {
    /// How many
    #[option(name = "Count")]
    count: i64,
    /// A field whose name is longer than the name rule allows
    a_field_name_longer_than_32_characters: Option<i64>,
}

fn main() {}
