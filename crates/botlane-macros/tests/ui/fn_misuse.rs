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
async fn unsupported(ctx: CommandContext, #[description = "Many"] counts: Vec<i64>) -> Result<(), ClientError> {
    let _ = counts;
    ctx.reply("").await
}

/// Roll
#[command]
async fn duplicate(
    ctx: CommandContext,
    #[description = "One"] count: i64,
    #[description = "Two"] #[option(name = "count")] other: i64,
) -> Result<(), ClientError> {
    let _ = (count, other);
    ctx.reply("").await
}

/// Note
#[command]
async fn note(ctx: CommandContext, #[description = "What"] #[rest] text: String) -> Result<(), ClientError> {
    ctx.reply(&text).await
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

fn main() {}
