//! modbot: a six-command moderation bot (`/ban`, `/remind`, `/poll`,
//! `/stats`, `/files` and the built-in `/help`) written twice, its
//! commands as functions (`functions.rs`) and as structs (`structs.rs`).
//! What does not depend on the form (the state, the admin check, the
//! poll's choices) is here, once; the same tests run on both forms, on
//! both lanes; `scripts/count-lines` compares the forms' size.

pub mod functions;
pub mod structs;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use botlane::framework::UserError;
use botlane::{CommandChoice, CommandContext};

/// The moderators, and what the bot has done.
#[derive(Default)]
pub struct Mod {
    pub admins: Vec<String>,
    pub bans: AtomicU64,
    pub reminders: AtomicU64,
    pub votes: AtomicU64,
}

impl Mod {
    /// What `/stats` answers.
    fn stats(&self) -> String {
        let n = |count: &AtomicU64| count.load(Relaxed);
        let (bans, reminders, votes) = (n(&self.bans), n(&self.reminders), n(&self.votes));
        format!("bans {bans}, reminders {reminders}, votes {votes}")
    }
}

type Ctx = CommandContext<Mod>;

/// What `/files` answers while the service keeps the REST lane off.
pub const REST_LANE_OFF: &str = "the REST lane is off here";

/// Only the moderators may ban.
fn is_admin(ctx: &Ctx) -> Result<(), UserError> {
    match ctx.data().admins.contains(&ctx.message().author_id) {
        true => Ok(()),
        false => Err(UserError::from("only moderators may ban")),
    }
}

/// A vote in the poll.
#[derive(CommandChoice)]
pub enum Vote {
    Yes,
    No,
    Maybe,
}

/// The tests of one form of the bot, the module `$form`.
macro_rules! modbot_tests {
    ($tests:ident, $form:ident) => {
        #[cfg(test)]
        mod $tests {
            use std::time::Duration;

            use botlane::framework::{ManualClock, UserId};
            use botlane::{Client, CommandContext, CommandDeclaration};
            use botlane_devserver::Scene;

            use super::structs::{Ban, Remind};
            use super::$form::commands;
            use super::{Mod, REST_LANE_OFF};

            /// The bot, alice a moderator when `admin`, its clock `clock`,
            /// and a `/boom` that panics beside its commands.
            async fn scene(admin: bool, clock: &ManualClock) -> Scene<Mod> {
                Scene::builder()
                    .clock(clock.clone())
                    // More mistakes than the default burst of answers.
                    .client_options(|o| o.error_answer_limit(100, Duration::from_secs(1)))
                    .start_bot(|setup| {
                        let admins = admin.then(|| setup.user_account.id.clone());
                        let data = Mod {
                            admins: admins.into_iter().collect(),
                            ..Mod::default()
                        };
                        let client = Client::with_data(setup.options, data)?;
                        client.commands().update(|registry| {
                            commands(registry)?;
                            let boom = CommandDeclaration::new("boom", "Panic");
                            registry
                                .register(boom, |ctx: CommandContext<Mod>| async move {
                                    assert_ne!(ctx.name(), "boom", "the handler panics");
                                    Ok::<(), botlane::BoxError>(())
                                })
                                .map(drop)
                        })?;
                        Ok::<_, botlane::BoxError>(client)
                    })
                    .await
                    .unwrap()
            }

            async fn answer(scene: &Scene<Mod>) -> String {
                scene.answer().await.unwrap().content
            }

            #[tokio::test]
            async fn only_a_moderator_bans_on_both_lanes() {
                let clock = ManualClock::new();
                let guest = scene(false, &clock).await;
                guest.say("/ban u9 spam").await.unwrap();
                assert_eq!(answer(&guest).await, "only moderators may ban");

                let admin = scene(true, &clock).await;
                admin.say("/ban u9 spam and more spam").await.unwrap();
                assert_eq!(answer(&admin).await, "banned u9: spam and more spam");
                let ban = Ban {
                    user: UserId("u8".into()),
                    reason: "flood".into(),
                };
                admin.invoke(&ban).await.unwrap();
                assert_eq!(answer(&admin).await, "banned u8: flood");
                admin.say("/stats").await.unwrap();
                assert_eq!(answer(&admin).await, "bans 2, reminders 0, votes 0");
            }

            #[tokio::test]
            async fn bounds_are_answered_on_both_lanes() {
                let scene = scene(true, &ManualClock::new()).await;
                scene.say("/remind 0 tea").await.unwrap();
                assert!(answer(&scene)
                    .await
                    .starts_with("option \"minutes\" must be at least 1"));
                let late = Remind {
                    minutes: 1441,
                    text: "tea".into(),
                };
                scene.invoke(&late).await.unwrap();
                assert!(answer(&scene)
                    .await
                    .starts_with("option \"minutes\" must be at most 1440"));
                scene
                    .say(&format!("/ban u9 {}", "x".repeat(201)))
                    .await
                    .unwrap();
                assert!(answer(&scene).await.contains("at most 200 characters"));
                // None of them ran.
                assert_eq!(
                    scene
                        .bot
                        .data()
                        .reminders
                        .load(std::sync::atomic::Ordering::Relaxed),
                    0
                );
            }

            #[tokio::test]
            async fn a_cooldown_runs_out_with_the_injected_clock() {
                let clock = ManualClock::new();
                let scene = scene(true, &clock).await;
                scene.say("/remind 5 tea with milk").await.unwrap();
                assert_eq!(answer(&scene).await, "in 5 min: tea with milk");
                let again = Remind {
                    minutes: 5,
                    text: "tea".into(),
                };
                scene.invoke(&again).await.unwrap();
                assert_eq!(
                    answer(&scene).await,
                    "this command is cooling down, try again in 30 s"
                );
                clock.advance(Duration::from_secs(29));
                scene.say("/remind 5 tea").await.unwrap();
                assert_eq!(
                    answer(&scene).await,
                    "this command is cooling down, try again in 1 s"
                );
                clock.advance(Duration::from_secs(1));
                scene.invoke(&again).await.unwrap();
                assert_eq!(answer(&scene).await, "in 5 min: tea");
            }

            #[tokio::test]
            async fn polls_stats_help_and_a_panic() {
                let scene = scene(true, &ManualClock::new()).await;
                scene.say("/poll maybe").await.unwrap();
                assert_eq!(answer(&scene).await, "voted maybe");
                scene.say("/poll perhaps").await.unwrap();
                assert_eq!(
                    answer(&scene).await,
                    "option \"vote\" must be one of yes, no, maybe\nusage: /poll <vote>"
                );
                scene.say("/boom").await.unwrap();
                assert_eq!(answer(&scene).await, "sorry, the boom command failed");
                scene.say("/stats").await.unwrap();
                assert_eq!(answer(&scene).await, "bans 0, reminders 0, votes 1");
                scene.say("/help").await.unwrap();
                let help = answer(&scene).await;
                for line in [
                    "/ban <user> <reason",
                    "/remind <minutes",
                    "/poll <vote",
                    "/files",
                ] {
                    assert!(help.contains(line), "{help}");
                }
            }

            #[tokio::test]
            async fn files_says_when_the_rest_lane_is_off() {
                let scene = scene(true, &ManualClock::new()).await;
                scene.say("/files").await.unwrap();
                assert_eq!(answer(&scene).await, REST_LANE_OFF);
            }
        }
    };
}

modbot_tests!(function_form, functions);
modbot_tests!(struct_form, structs);
