//! Checks: async predicates that decide whether an invocation may run, with
//! a reason for the user when it may not.
//!
//! Checks run after the lane decision and the argument checks (so a check
//! sees the coerced arguments, as poise's do), before the cooldown and the
//! handler: the client's checks first, then the command's, in the order
//! given; the first refusal stops the rest. A refused invocation does not
//! start a cooldown.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::context::CommandContext;
use super::user_error::UserError;
use crate::commands::types::canonical_bot_id;

/// The future a [`Check`] returns: `Ok(())` to let the invocation run, or
/// the reason, for the user, why it may not.
pub type CheckFuture = Pin<Box<dyn Future<Output = Result<(), UserError>> + Send + 'static>>;

/// One check, cheap to clone: an async predicate over the
/// [`CommandContext`] that refuses with a reason for the user.
///
/// The built-ins compare ids in canonical form (dashes removed, ASCII
/// lower-case), as bot ids are compared, so an allow-list written either way
/// matches. A refusal's reason is sent to the user who invoked the command;
/// a predicate that fails for its own reasons (a database down) should say
/// so in general words rather than pass its error text on.
///
/// ```
/// use botlane::framework::{Check, UserError};
/// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let ctx = CommandContext::for_test(
///     CommandInvocation { name: "ban".into(), args: CommandArgs::new(), source: CommandSource::Text },
///     Message::new("m1", "c1", "u1", "/ban"),
/// );
/// let admins = Check::allowed_users(["U1", "u2"]);
/// assert!(admins.run(&ctx).await.is_ok());
///
/// let not_here = Check::allowed_channels(["c2"]).reason("use #moderation for this");
/// assert_eq!(not_here.run(&ctx).await.unwrap_err().as_str(), "use #moderation for this");
///
/// let custom = Check::new(|ctx| {
///     let text = ctx.message().content.clone();
///     async move {
///         if text.len() < 100 { Ok(()) } else { Err(UserError::from("that is too long for me")) }
///     }
/// });
/// assert!(custom.run(&ctx).await.is_ok());
/// # }
/// ```
pub struct Check<D = ()>(Arc<Predicate<D>>);

/// A check's predicate, type-erased.
type Predicate<D> = dyn Fn(&CommandContext<D>) -> CheckFuture + Send + Sync;

impl<D> Clone for Check<D> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<D: 'static> Check<D> {
    /// A check from an async predicate. The predicate gets the context by
    /// reference and returns a `'static` future, so it copies out what the
    /// future needs (an id, an argument) before `async move`.
    pub fn new<F, Fut>(predicate: F) -> Self
    where
        F: Fn(&CommandContext<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), UserError>> + Send + 'static,
    {
        Self(Arc::new(move |ctx| Box::pin(predicate(ctx))))
    }

    /// A check from a synchronous predicate.
    ///
    /// ```
    /// use botlane::framework::{Check, UserError};
    /// let quiet: Check = Check::sync(|ctx| {
    ///     if ctx.message().content.len() <= 200 { Ok(()) } else { Err(UserError::from("keep it short")) }
    /// });
    /// # let _ = quiet;
    /// ```
    pub fn sync<F>(predicate: F) -> Self
    where
        F: Fn(&CommandContext<D>) -> Result<(), UserError> + Send + Sync + 'static,
    {
        Self::new(move |ctx| std::future::ready(predicate(ctx)))
    }

    /// Lets only these users invoke (compared with the message's author).
    /// The reason is `you are not allowed to use this command`.
    pub fn allowed_users<I, S>(user_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let allowed = canonical_set(user_ids);
        Self::sync(move |ctx| {
            refuse_unless(
                allowed.contains(&canonical_bot_id(&ctx.message().author_id)),
                "you are not allowed to use this command",
            )
        })
    }

    /// Lets the command run only in these channels. The reason is
    /// `this command cannot be used in this channel`.
    pub fn allowed_channels<I, S>(channel_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let allowed = canonical_set(channel_ids);
        Self::sync(move |ctx| {
            refuse_unless(
                allowed.contains(&canonical_bot_id(&ctx.message().channel_id)),
                "this command cannot be used in this channel",
            )
        })
    }

    /// Lets the command run only in channels of these servers, which needs
    /// the context's [`server_id`](CommandContext::server_id): a channel
    /// whose server is not known is refused. The reason is `this command
    /// cannot be used on this server`.
    pub fn allowed_servers<I, S>(server_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let allowed = canonical_set(server_ids);
        Self::sync(move |ctx| {
            let known = ctx
                .server_id()
                .is_some_and(|id| allowed.contains(&canonical_bot_id(id)));
            refuse_unless(known, "this command cannot be used on this server")
        })
    }

    /// The same check with another reason for the user when it refuses.
    ///
    /// ```
    /// use botlane::framework::Check;
    /// let admins: Check = Check::allowed_users(["u1"]).reason("only the admins may ban");
    /// # let _ = admins;
    /// ```
    #[must_use]
    pub fn reason(self, reason: impl Into<String>) -> Self {
        let reason = UserError::new(reason);
        let inner = self.0;
        Self::new(move |ctx| {
            let check = inner(ctx);
            let reason = reason.clone();
            async move { check.await.map_err(|_| reason) }
        })
    }

    /// Runs the check on one invocation.
    pub fn run(&self, ctx: &CommandContext<D>) -> CheckFuture {
        (self.0)(ctx)
    }
}

impl<D> fmt::Debug for Check<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Check(..)")
    }
}

/// Runs `checks` in order on one invocation; the first refusal stops the
/// rest and is returned. Dispatch calls it with the client's checks, then
/// with the command's.
pub(crate) async fn run_checks<D: 'static>(
    checks: &[Check<D>],
    ctx: &CommandContext<D>,
) -> Result<(), UserError> {
    for check in checks {
        check.run(ctx).await?;
    }
    Ok(())
}

fn canonical_set<I, S>(ids: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    ids.into_iter()
        .map(|id| canonical_bot_id(id.as_ref()))
        .collect()
}

fn refuse_unless(allowed: bool, reason: &str) -> Result<(), UserError> {
    if allowed {
        Ok(())
    } else {
        Err(UserError::from(reason))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::commands::types::{CommandArgs, CommandInvocation, CommandSource};
    use crate::message::Message;

    fn ban(author: &str, channel: &str, days: i64) -> CommandContext {
        CommandContext::for_test(
            CommandInvocation {
                name: "ban".into(),
                args: CommandArgs::from([("days".to_owned(), days.into())]),
                source: CommandSource::Structured,
            },
            Message::new("m1", channel, author, "/ban"),
        )
    }

    fn ctx(author: &str, channel: &str) -> CommandContext {
        ban(author, channel, 3)
    }

    const ALICE: &str = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

    #[tokio::test]
    async fn allowed_users_compare_ids_canonically() {
        let check = Check::allowed_users(["3F2504E04F8911D39A0C0305E82C3301"]);
        assert_eq!(check.run(&ctx(ALICE, "c1")).await, Ok(()));
        assert_eq!(
            check.run(&ctx("someone-else", "c1")).await,
            Err(UserError::from("you are not allowed to use this command"))
        );
        let nobody = Check::allowed_users(Vec::<String>::new());
        assert!(nobody.run(&ctx(ALICE, "c1")).await.is_err());
    }

    #[tokio::test]
    async fn allowed_channels_look_at_the_invoking_channel() {
        let check = Check::allowed_channels(["c1", "c2"]);
        assert_eq!(check.run(&ctx(ALICE, "C2")).await, Ok(()));
        assert_eq!(
            check.run(&ctx(ALICE, "c3")).await,
            Err(UserError::from(
                "this command cannot be used in this channel"
            ))
        );
    }

    #[tokio::test]
    async fn allowed_servers_refuse_an_unknown_server() {
        let check = Check::allowed_servers(["s1"]);
        assert_eq!(
            check.run(&ctx(ALICE, "c1").with_server_id("S1")).await,
            Ok(())
        );
        let refusal = Err(UserError::from(
            "this command cannot be used on this server",
        ));
        assert_eq!(
            check.run(&ctx(ALICE, "c1").with_server_id("s2")).await,
            refusal
        );
        assert_eq!(
            check.run(&ctx(ALICE, "c1")).await,
            refusal,
            "no server known"
        );
    }

    #[tokio::test]
    async fn a_reason_replaces_the_refusal_only() {
        let check = Check::allowed_users(["u1"]).reason("admins only");
        assert_eq!(check.run(&ctx("u1", "c1")).await, Ok(()));
        assert_eq!(
            check.run(&ctx("u2", "c1")).await,
            Err(UserError::from("admins only"))
        );
    }

    #[tokio::test]
    async fn a_custom_async_check_sees_the_arguments() {
        let check = Check::new(|ctx| {
            let days = ctx.get_integer("days");
            async move {
                tokio::task::yield_now().await;
                match days {
                    Some(d) if d <= 7 => Ok(()),
                    _ => Err(UserError::from("at most a week")),
                }
            }
        });
        assert_eq!(check.run(&ban("u1", "c1", 7)).await, Ok(()));
        assert_eq!(
            check.run(&ban("u1", "c1", 30)).await,
            Err(UserError::from("at most a week"))
        );
    }

    #[tokio::test]
    async fn run_checks_stops_at_the_first_refusal() {
        let ran = Arc::new(AtomicUsize::new(0));
        let counting = |refuse: bool| {
            let ran = Arc::clone(&ran);
            Check::sync(move |_ctx| {
                ran.fetch_add(1, Ordering::SeqCst);
                refuse_unless(!refuse, "refused")
            })
        };
        let checks = [counting(false), counting(true), counting(false)];
        assert_eq!(
            run_checks(&checks, &ctx("u1", "c1")).await,
            Err(UserError::from("refused"))
        );
        assert_eq!(ran.load(Ordering::SeqCst), 2, "the third check did not run");
        assert_eq!(run_checks(&[], &ctx("u1", "c1")).await, Ok(()));
        assert_eq!(format!("{:?}", checks[0]), "Check(..)");
    }
}
