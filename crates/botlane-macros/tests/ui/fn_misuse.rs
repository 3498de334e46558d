// Misuse of #[command] on a function.
use botlane::prelude::*;

/// Roll
#[command]
async fn not_a_context(count: i64) -> Result<(), ClientError> {
    let _ = count;
    Ok(())
}

/// Roll
#[command]
async fn unsupported(
    ctx: CommandContext,
    /// Many
    counts: Vec<i64>,
) -> Result<(), ClientError> {
    let _ = counts;
    ctx.reply("").await
}

/// Roll
#[command]
async fn duplicate(
    ctx: CommandContext,
    /// One
    count: i64,
    /// Two
    #[option(name = "count")] other: i64,
) -> Result<(), ClientError> {
    let _ = (count, other);
    ctx.reply("").await
}

/// Note
#[command]
async fn note(
    ctx: CommandContext,
    /// What
    #[rest] text: String,
) -> Result<(), ClientError> {
    ctx.reply(&text).await
}

/// Roll: poise's spelling of a parameter's description
#[command]
async fn described(ctx: CommandContext, #[description = "How many"] count: i64) -> Result<(), ClientError> {
    let _ = count;
    ctx.reply("").await
}

/// Roll
#[command(title = "roll")]
fn not_async(ctx: CommandContext) -> Result<(), ClientError> {
    let _ = ctx;
    Ok(())
}

/// Roll
#[derive(Command)]
#[command(check = is_admin)]
struct Checked;

pub struct Mods;

/// Roll
#[command]
async fn for_mods(ctx: CommandContext<Mods>) -> Result<(), ClientError> {
    ctx.reply("").await
}

fn main() {
    // A command of one state type, registered with a client of another.
    let mut registry = CommandRegistry::<u8>::empty();
    let _ = registry.add(for_mods());
}
