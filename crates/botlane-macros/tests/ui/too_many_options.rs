use botlane::Command;

/// Too many options
#[derive(Command)]
struct Big {
    /// d
    o1: i64,
    /// d
    o2: i64,
    /// d
    o3: i64,
    /// d
    o4: i64,
    /// d
    o5: i64,
    /// d
    o6: i64,
    /// d
    o7: i64,
    /// d
    o8: i64,
    /// d
    o9: i64,
    /// d
    o10: i64,
    /// d
    o11: i64,
    /// d
    o12: i64,
    /// d
    o13: i64,
    /// d
    o14: i64,
    /// d
    o15: i64,
    /// d
    o16: i64,
    /// d
    o17: i64,
    /// d
    o18: i64,
    /// d
    o19: i64,
    /// d
    o20: i64,
    /// d
    o21: i64,
    /// d
    o22: i64,
    /// d
    o23: i64,
    /// d
    o24: i64,
    /// d
    o25: i64,
    /// d
    o26: i64,
}

fn main() {}
