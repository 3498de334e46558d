// Misuse of #[command] on a function.
use botlane::prelude::*;

/// Roll
#[command]
async fn not_a_context(count: i64) -> Result<(), ClientError> {
    let _ = count;
    Ok(())
}

/// Roll
///
/// # Options
/// * `counts`: Many
#[command]
async fn unsupported(ctx: CommandContext, counts: Vec<i64>) -> Result<(), ClientError> {
    let _ = counts;
    ctx.reply("").await
}

/// Roll
///
/// # Options
/// * `count`: One
/// * `other`: Two
#[command]
async fn duplicate(
    ctx: CommandContext,
    count: i64,
    #[option(name = "count")] other: i64,
) -> Result<(), ClientError> {
    let _ = (count, other);
    ctx.reply("").await
}

/// Note
///
/// # Options
/// * `text`: What
#[command]
async fn note(ctx: CommandContext, #[rest] text: String) -> Result<(), ClientError> {
    ctx.reply(&text).await
}

/// Note: a doc comment on the parameter, as on a struct's field
#[command]
async fn documented(
    ctx: CommandContext,
    /// What
    text: String,
) -> Result<(), ClientError> {
    ctx.reply(&text).await
}

// The section names a parameter that is not there, twice one that is,
// holds an item of another shape and text that is no item.
/// Note
///
/// # Options
/// * `txt`: What
/// * `text`: What
/// * `text`: Again
/// * text: unquoted
///
/// The help text goes on.
#[command]
async fn misdescribed(ctx: CommandContext, text: String) -> Result<(), ClientError> {
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
