//! modbot, its commands written as structs deriving `Command`: the same
//! bot as `functions.rs` (`mod.rs` runs the same tests on both).

use std::sync::atomic::Ordering::Relaxed;

use botlane::framework::UserId;
use botlane::prelude::*;
use botlane::rest::Method;
use botlane::{BoxError, DeclarationError};
use serde_json::Value;

use super::{is_admin, Mod, Vote, REST_LANE_OFF};

/// Ban a user
#[derive(Command)]
pub struct Ban {
    /// Who
    pub user: UserId,
    /// Why
    #[option(max_length = 200)]
    pub reason: String,
}

/// Remind me of something
#[derive(Command)]
#[command(user_cooldown = 30)]
pub struct Remind {
    /// In how many minutes
    #[option(min = 1, max = 1440)]
    pub minutes: u16,
    /// Of what
    pub text: String,
}

/// Vote in the poll
#[derive(Command)]
pub struct Poll {
    /// Your vote
    pub vote: Vote,
}

/// What the bot has done
#[derive(Command)]
pub struct Stats;

/// Count the shared files
#[derive(Command)]
pub struct Files;

/// Registers the five commands and the built-in `/help`.
pub fn commands(registry: &mut CommandRegistry<Mod>) -> Result<(), DeclarationError> {
    let admins = CommandSettings::new().check(Check::sync(is_admin));
    registry
        .command_with::<Ban>(admins, |ctx, ban| async move {
            ctx.data().bans.fetch_add(1, Relaxed);
            ctx.reply(&format!("banned {}: {}", ban.user, ban.reason))
                .await
        })?
        .command::<Remind>(|ctx, remind| async move {
            ctx.data().reminders.fetch_add(1, Relaxed);
            ctx.reply(&format!("in {} min: {}", remind.minutes, remind.text))
                .await
        })?
        .command::<Poll>(|ctx, poll| async move {
            ctx.data().votes.fetch_add(1, Relaxed);
            ctx.reply(&format!("voted {}", poll.vote.as_choice())).await
        })?
        .command::<Stats>(|ctx, _stats| async move { ctx.reply(&ctx.data().stats()).await })?
        .command::<Files>(|ctx, _files| async move {
            let rest = ctx.rest()?;
            let list = rest.json::<Value>(Method::GET, "/api/files/list", None);
            let answer = match list.await {
                Ok(list) => format!("{} files", list["files"].as_array().map_or(0, Vec::len)),
                Err(error) if error.is_lane_off() => REST_LANE_OFF.to_owned(),
                Err(error) => return Err(BoxError::from(error)),
            };
            Ok(ctx.reply(&answer).await?)
        })?
        .enable_help()
        .map(drop)
}
