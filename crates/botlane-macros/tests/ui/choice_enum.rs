use botlane::CommandChoice;

#[derive(CommandChoice)]
enum Empty {}

#[derive(CommandChoice)]
enum Mode {
    Sum,
    #[choice(name = "sum")]
    Total,
    #[choice(name = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")]
    Long,
    Keep(u8),
}

#[derive(CommandChoice)]
enum Many {
    A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13,
    A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26,
}

fn main() {}
