//! modbot, its commands written as functions: the same bot as
//! `structs.rs`, line for line in behaviour (`mod.rs` runs the same tests
//! on both).

use std::sync::atomic::Ordering::Relaxed;

use botlane::framework::UserId;
use botlane::prelude::*;
use botlane::rest::Method;
use botlane::{BoxError, DeclarationError};
use serde_json::Value;

use super::{is_admin, Ctx, Mod, Vote, REST_LANE_OFF};

/// What a command returns.
type Done = Result<(), ClientError>;

/// Ban a user
///
/// # Options
/// * `user`: Who
/// * `reason`: Why
#[command(check = is_admin)]
async fn ban(ctx: Ctx, user: UserId, #[option(max_length = 200)] reason: String) -> Done {
    ctx.data().bans.fetch_add(1, Relaxed);
    ctx.reply(&format!("banned {user}: {reason}")).await
}

/// Remind me of something
///
/// # Options
/// * `minutes`: In how many minutes
/// * `text`: Of what
#[command(user_cooldown = 30)]
async fn remind(ctx: Ctx, #[option(min = 1, max = 1440)] minutes: u16, text: String) -> Done {
    ctx.data().reminders.fetch_add(1, Relaxed);
    ctx.reply(&format!("in {minutes} min: {text}")).await
}

/// Vote in the poll
///
/// # Options
/// * `vote`: Your vote
#[command]
async fn poll(ctx: Ctx, vote: Vote) -> Done {
    ctx.data().votes.fetch_add(1, Relaxed);
    ctx.reply(&format!("voted {}", vote.as_choice())).await
}

/// What the bot has done
#[command]
async fn stats(ctx: Ctx) -> Done {
    ctx.reply(&ctx.data().stats()).await
}

/// Count the shared files
#[command]
async fn files(ctx: Ctx) -> Result<(), BoxError> {
    let rest = ctx.rest()?;
    let list = rest.json::<Value>(Method::GET, "/api/files/list", None);
    let answer = match list.await {
        Ok(list) => format!("{} files", list["files"].as_array().map_or(0, Vec::len)),
        Err(error) if error.is_lane_off() => REST_LANE_OFF.to_owned(),
        Err(error) => return Err(error.into()),
    };
    Ok(ctx.reply(&answer).await?)
}

/// Registers the five commands and the built-in `/help`.
pub fn commands(registry: &mut CommandRegistry<Mod>) -> Result<(), DeclarationError> {
    registry.add(ban())?.add(remind())?.add(poll())?;
    registry.add(stats())?.add(files())?.enable_help()?;
    Ok(())
}
