// Every declaration rule on the function form, all reported in one build,
// each at the parameter or attribute at fault: the derive's rules, through
// the derive's expander.
use botlane::prelude::*;

/// Roll
#[command(name = "Roll Dice")]
async fn bad_name(ctx: CommandContext) -> Result<(), ClientError> {
    ctx.reply("").await
}

/// xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
#[command]
async fn long_description(ctx: CommandContext) -> Result<(), ClientError> {
    ctx.reply("").await
}

#[command]
async fn undocumented(ctx: CommandContext, count: i64) -> Result<(), ClientError> {
    let _ = count;
    ctx.reply("").await
}

/// Roll
#[command]
async fn options(
    ctx: CommandContext,
    /// Bad
    #[option(name = "Count")] count: i64,
    /// Some
    some: Option<i64>,
    /// After
    after: i64,
    /// Empty
    #[option(choices())] empty: String,
    /// Typed
    #[option(choices("six"))] typed: i64,
    /// Flag
    #[option(choices("yes"))] flag: Option<bool>,
    /// Bounds
    #[option(min_length = 3)] bounded: Option<i64>,
    /// Inverted
    #[option(min = 5, max = 1)] inverted: Option<i64>,
    ///
    blank: Option<String>,
) -> Result<(), ClientError> {
    let _ = (count, some, after, empty, typed, flag, bounded, inverted, blank);
    ctx.reply("").await
}

/// Choices
///
/// Columns:	count	sides
#[command]
async fn choices(
    ctx: CommandContext,
    /// Twice
    #[option(choices("a", "a"))] twice: String,
    /// Out
    #[option(choices("9"), max = 5)] out: i64,
    /// Half
    #[option(min = 1.5)] half: i64,
    /// Long
    #[option(choices("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))] long: String,
    /// Crowd
    #[option(choices("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26"))] crowd: Option<i64>,
) -> Result<(), ClientError> {
    let _ = (twice, out, half, long, crowd);
    ctx.reply("").await
}

/// Many
#[command]
#[allow(clippy::too_many_arguments)]
async fn many(
    ctx: CommandContext,
    /// d
    o1: Option<i64>,
    /// d
    o2: Option<i64>,
    /// d
    o3: Option<i64>,
    /// d
    o4: Option<i64>,
    /// d
    o5: Option<i64>,
    /// d
    o6: Option<i64>,
    /// d
    o7: Option<i64>,
    /// d
    o8: Option<i64>,
    /// d
    o9: Option<i64>,
    /// d
    o10: Option<i64>,
    /// d
    o11: Option<i64>,
    /// d
    o12: Option<i64>,
    /// d
    o13: Option<i64>,
    /// d
    o14: Option<i64>,
    /// d
    o15: Option<i64>,
    /// d
    o16: Option<i64>,
    /// d
    o17: Option<i64>,
    /// d
    o18: Option<i64>,
    /// d
    o19: Option<i64>,
    /// d
    o20: Option<i64>,
    /// d
    o21: Option<i64>,
    /// d
    o22: Option<i64>,
    /// d
    o23: Option<i64>,
    /// d
    o24: Option<i64>,
    /// d
    o25: Option<i64>,
    /// d
    o26: Option<i64>,
) -> Result<(), ClientError> {
    ctx.reply("").await
}

fn main() {}
