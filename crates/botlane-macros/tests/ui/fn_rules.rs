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
///
/// # Options
/// * `count`: Bad
/// * `some`: Some
/// * `after`: After
/// * `empty`: Empty
/// * `typed`: Typed
/// * `flag`: Flag
/// * `bounded`: Bounds
/// * `inverted`: Inverted
/// * `blank`:
#[command]
async fn options(
    ctx: CommandContext,
    #[option(name = "Count")] count: i64,
    some: Option<i64>,
    after: i64,
    #[option(choices())] empty: String,
    #[option(choices("six"))] typed: i64,
    #[option(choices("yes"))] flag: Option<bool>,
    #[option(min_length = 3)] bounded: Option<i64>,
    #[option(min = 5, max = 1)] inverted: Option<i64>,
    blank: Option<String>,
) -> Result<(), ClientError> {
    let _ = (count, some, after, empty, typed, flag, bounded, inverted, blank);
    ctx.reply("").await
}

/// Choices
///
/// Columns:	count	sides
///
/// # Options
/// * `twice`: Twice
/// * `out`: Out
/// * `half`: Half
/// * `long`: Long
/// * `crowd`: Crowd
#[command]
async fn choices(
    ctx: CommandContext,
    #[option(choices("a", "a"))] twice: String,
    #[option(choices("9"), max = 5)] out: i64,
    #[option(min = 1.5)] half: i64,
    #[option(choices("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))] long: String,
    #[option(choices("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26"))] crowd: Option<i64>,
) -> Result<(), ClientError> {
    let _ = (twice, out, half, long, crowd);
    ctx.reply("").await
}

/// Many
///
/// # Options
/// * `o1`: d
/// * `o2`: d
/// * `o3`: d
/// * `o4`: d
/// * `o5`: d
/// * `o6`: d
/// * `o7`: d
/// * `o8`: d
/// * `o9`: d
/// * `o10`: d
/// * `o11`: d
/// * `o12`: d
/// * `o13`: d
/// * `o14`: d
/// * `o15`: d
/// * `o16`: d
/// * `o17`: d
/// * `o18`: d
/// * `o19`: d
/// * `o20`: d
/// * `o21`: d
/// * `o22`: d
/// * `o23`: d
/// * `o24`: d
/// * `o25`: d
/// * `o26`: d
#[command]
#[allow(clippy::too_many_arguments)]
async fn many(
    ctx: CommandContext,
    o1: Option<i64>,
    o2: Option<i64>,
    o3: Option<i64>,
    o4: Option<i64>,
    o5: Option<i64>,
    o6: Option<i64>,
    o7: Option<i64>,
    o8: Option<i64>,
    o9: Option<i64>,
    o10: Option<i64>,
    o11: Option<i64>,
    o12: Option<i64>,
    o13: Option<i64>,
    o14: Option<i64>,
    o15: Option<i64>,
    o16: Option<i64>,
    o17: Option<i64>,
    o18: Option<i64>,
    o19: Option<i64>,
    o20: Option<i64>,
    o21: Option<i64>,
    o22: Option<i64>,
    o23: Option<i64>,
    o24: Option<i64>,
    o25: Option<i64>,
    o26: Option<i64>,
) -> Result<(), ClientError> {
    ctx.reply("").await
}

fn main() {}
