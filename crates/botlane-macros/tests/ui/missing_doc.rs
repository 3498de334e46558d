use botlane::Command;

#[derive(Command)]
struct Roll {
    count: i64,
}

fn main() {}
