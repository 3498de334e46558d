// Everything the derives accept at the limits: 25 options, 25 choices of 100
// characters, every value type, every attribute, bounds at their limits.
use botlane::framework::{ChannelId, RoleId, UserId};
use botlane::{Command, CommandChoice};

#[derive(CommandChoice)]
enum Mode {
    Sum,
    #[choice(name = "drop lowest")]
    DropLowest,
}

/// xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
#[derive(Command)]
#[command(name = "a_32_character_name_is_the_limit")]
struct Limits {
    /// An integer
    #[option(choices("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25"))]
    o1: i64,
    /// A string
    #[option(choices("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))]
    o2: String,
    /// A number
    #[option(choices("0.5", "1e3"), min = -0.5, max = 1e3)]
    o3: f64,
    /// A boolean
    o4: bool,
    /// A user
    o5: UserId,
    /// A channel
    o6: ChannelId,
    /// A role
    o7: RoleId,
    /// A user id in a String
    #[option(kind = "user", choices("u1"))]
    o8: String,
    /// An enum
    o9: Mode,
    /// Small integers
    #[option(min = -9007199254740991, max = 9007199254740991)]
    o10: Option<u8>,
    /// d
    o11: Option<i8>,
    /// d
    o12: Option<i16>,
    /// d
    o13: Option<i32>,
    /// d
    o14: Option<u16>,
    /// d
    o15: Option<u32>,
    /// d
    o16: Option<u64>,
    /// d
    o17: Option<usize>,
    /// d
    o18: Option<isize>,
    /// d
    #[option(min_length = 0, max_length = 6000)]
    o19: Option<String>,
    /// d
    o20: Option<bool>,
    /// d
    o21: Option<f64>,
    /// d
    o22: Option<Mode>,
    /// d
    #[option(kind = "string", min_length = 3, max_length = 3)]
    o23: Option<String>,
    /// d
    o24: Option<ChannelId>,
    #[option(name = "last", description = "The 25th option")]
    o25: std::option::Option<RoleId>,
}

fn main() {
    let decl = <Limits as Command>::declaration();
    assert_eq!(decl.options.len(), 25);
    botlane::validate_declaration(&decl).unwrap();
    assert_eq!(decl.options[2].min_value, Some(-0.5));
    assert_eq!(decl.options[9].max_value, Some(9007199254740991.0));
    assert_eq!(decl.options[18].max_length, Some(6000));
    assert_eq!(decl.options[22].min_length, Some(3));
}
