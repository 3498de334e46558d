// Every declaration rule on the function form, all reported in one build,
// each at the parameter or attribute at fault.
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
    #[description = "Bad"] #[option(name = "Count")] count: i64,
    #[description = "Some"] some: Option<i64>,
    #[description = "After"] after: i64,
    #[description = "Empty"] #[option(choices())] empty: String,
    #[description = "Typed"] #[option(choices("six"))] typed: i64,
    #[description = "Flag"] #[option(choices("yes"))] flag: Option<bool>,
    #[description = "Bounds"] #[option(min_length = 3)] bounded: Option<i64>,
    #[description = "Inverted"] #[option(min = 5, max = 1)] inverted: Option<i64>,
    #[description = ""] blank: Option<String>,
) -> Result<(), ClientError> {
    let _ = (count, some, after, empty, typed, flag, bounded, inverted, blank);
    ctx.reply("").await
}

fn main() {}
