//! Cooldowns: how often a command may run per user, channel, server or
//! globally, tracked in a bounded table with an injected clock.
//!
//! The bound's eviction rule: an entry leaves the table only when its
//! cooldown is over, never to make room. When the table of a command is
//! full of live cooldowns, a newcomer is refused as busy until the earliest
//! one ends. So a flood of distinct users can delay newcomers, but it can
//! never end someone else's cooldown early (which evicting live entries to
//! make room would).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::context::CommandContext;
use crate::commands::limits::MAX_COMMANDS_PER_BOT;
use crate::commands::types::canonical_bot_id;
use crate::deadline;

/// The default number of live cooldowns tracked per command.
pub const DEFAULT_COOLDOWN_CAPACITY: usize = 10_000;

/// Whom a cooldown counts invocations for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CooldownScope {
    /// Each user on their own, wherever they invoke.
    User,
    /// Each channel, whoever invokes.
    Channel,
    /// Each server, whoever invokes in any of its channels. When the
    /// channel's server is not known, the channel stands for its server.
    Server,
    /// Everyone together.
    Global,
}

/// How often a command may run: at most once per `duration` for each
/// user, channel, server, or for everyone.
///
/// ```
/// use std::time::Duration;
/// use botlane::framework::{Cooldown, CooldownScope};
///
/// let cooldown = Cooldown::per_user(Duration::from_secs(10));
/// assert_eq!(cooldown.scope(), CooldownScope::User);
/// assert_eq!(cooldown.duration(), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cooldown {
    scope: CooldownScope,
    duration: Duration,
}

impl Cooldown {
    /// A cooldown of `duration` per `scope`.
    pub const fn new(scope: CooldownScope, duration: Duration) -> Self {
        Self { scope, duration }
    }

    /// Once per `duration` for each user.
    pub const fn per_user(duration: Duration) -> Self {
        Self::new(CooldownScope::User, duration)
    }

    /// Once per `duration` in each channel.
    pub const fn per_channel(duration: Duration) -> Self {
        Self::new(CooldownScope::Channel, duration)
    }

    /// Once per `duration` in each server.
    pub const fn per_server(duration: Duration) -> Self {
        Self::new(CooldownScope::Server, duration)
    }

    /// Once per `duration` for everyone together.
    pub const fn global(duration: Duration) -> Self {
        Self::new(CooldownScope::Global, duration)
    }

    /// Whom it counts for.
    pub const fn scope(&self) -> CooldownScope {
        self.scope
    }

    /// How long after one run the next may start.
    pub const fn duration(&self) -> Duration {
        self.duration
    }

    /// The subject of an invocation under this cooldown: its author, its
    /// channel, its server (the channel when the server is not known), or
    /// everyone. Ids are canonical (dashes removed, ASCII lower-case).
    ///
    /// ```
    /// use std::time::Duration;
    /// use botlane::framework::{Cooldown, CooldownSubject};
    /// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    ///
    /// let ctx = CommandContext::for_test(
    ///     CommandInvocation { name: "roll".into(), args: CommandArgs::new(), source: CommandSource::Text },
    ///     Message::new("m1", "C1", "U1", "/roll"),
    /// );
    /// let d = Duration::from_secs(1);
    /// assert_eq!(Cooldown::per_user(d).subject(&ctx), CooldownSubject::User("u1".into()));
    /// assert_eq!(Cooldown::per_server(d).subject(&ctx), CooldownSubject::Channel("c1".into()));
    /// assert_eq!(Cooldown::global(d).subject(&ctx), CooldownSubject::Everyone);
    /// assert_eq!(Cooldown::per_server(d).subject(&ctx.with_server_id("S1")), CooldownSubject::Server("s1".into()));
    /// ```
    pub fn subject<D>(&self, ctx: &CommandContext<D>) -> CooldownSubject {
        let channel = || CooldownSubject::Channel(canonical_bot_id(&ctx.message().channel_id));
        match self.scope {
            CooldownScope::User => {
                CooldownSubject::User(canonical_bot_id(&ctx.message().author_id))
            }
            CooldownScope::Channel => channel(),
            CooldownScope::Server => match ctx.server_id() {
                Some(server) => CooldownSubject::Server(canonical_bot_id(server)),
                None => channel(),
            },
            CooldownScope::Global => CooldownSubject::Everyone,
        }
    }
}

/// Who is cooling down: one entry of a [`CooldownTracker`] per command and subject.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CooldownSubject {
    /// A user, by canonical id.
    User(String),
    /// A channel, by canonical id.
    Channel(String),
    /// A server, by canonical id.
    Server(String),
    /// Everyone together.
    Everyone,
}

/// Why an invocation may not start now. Its `Display` is meant for the user.
///
/// Waits are shown in whole seconds, rounded up, at least 1.
///
/// ```
/// use std::time::Duration;
/// use botlane::framework::CooldownError;
///
/// let err = CooldownError::Active { remaining: Duration::from_millis(11_200) };
/// assert_eq!(err.to_string(), "this command is cooling down, try again in 12 s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CooldownError {
    /// The subject ran the command less than the cooldown ago.
    #[error("this command is cooling down, try again in {} s", whole_seconds(*.remaining))]
    Active {
        /// How long until it may run again.
        remaining: Duration,
    },
    /// The table of the command is full of live cooldowns of others, so a
    /// newcomer cannot be tracked and is refused until one ends.
    #[error("this command is busy, try again in {} s", whole_seconds(*.retry_after))]
    Busy {
        /// How long until the earliest live cooldown of the command ends.
        retry_after: Duration,
    },
}

impl CooldownError {
    /// How long to wait before trying again.
    pub fn wait(&self) -> Duration {
        match self {
            Self::Active { remaining } => *remaining,
            Self::Busy { retry_after } => *retry_after,
        }
    }
}

fn whole_seconds(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// Where a [`CooldownTracker`] reads the time.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The tokio clock: `tokio::time::Instant::now()`, which a paused test
/// runtime (`#[tokio::test(start_paused = true)]`) controls. Anywhere else
/// it is the system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// A clock that moves only when told: for a test that lets a cooldown (or
/// the error answers' rate limit) run out without waiting, through a
/// running client ([`ClientOptions::clock`](crate::ClientOptions::clock)).
/// Clones share the time.
///
/// ```
/// use std::time::Duration;
/// use botlane::framework::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let start = clock.now();
/// clock.clone().advance(Duration::from_secs(30));
/// assert_eq!(clock.now() - start, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<Instant>>);

impl ManualClock {
    /// A clock standing at the current instant.
    pub fn new() -> Self {
        Self(Arc::new(Mutex::new(Instant::now())))
    }

    /// Moves the clock (and every clone) forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *now += by;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The clock a client's cooldowns and error answers read, shared. Unwind
/// safe, as the options that hold it are.
#[derive(Clone, Default)]
pub(crate) enum SharedClock {
    /// The [`TokioClock`], which dispatch reads anyway when it starts an
    /// invocation: that one reading serves the invocation's cooldown too.
    #[default]
    Runtime,
    /// The application's ([`ClientOptions::clock`](crate::ClientOptions::clock)).
    Injected(Arc<dyn Clock + RefUnwindSafe + UnwindSafe>),
}

impl SharedClock {
    /// The time of an invocation that dispatch started at `began` on the
    /// runtime's clock: `began` itself, unless a clock was injected.
    pub(crate) fn at(&self, began: Instant) -> Instant {
        match self {
            Self::Runtime => began,
            Self::Injected(clock) => clock.now(),
        }
    }

    pub(crate) fn into_arc(self) -> Arc<dyn Clock> {
        match self {
            Self::Runtime => Arc::new(TokioClock),
            Self::Injected(clock) => clock,
        }
    }
}

impl std::fmt::Debug for SharedClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock(..)")
    }
}

/// The live cooldowns of every command, in memory and bounded.
///
/// At most `capacity` live cooldowns per command and at most
/// [`MAX_COMMANDS_PER_BOT`] commands are tracked. An entry leaves when its
/// cooldown is over (expired entries are dropped on every call) and never
/// earlier: when a command's table is full of live cooldowns, a newcomer is
/// refused with [`CooldownError::Busy`] rather than evicting someone else's
/// cooldown. Safe to share between tasks (`&self` methods, one short lock).
///
/// ```
/// use std::time::{Duration, Instant};
/// use botlane::framework::{Cooldown, CooldownError, CooldownSubject, CooldownTracker};
///
/// let tracker = CooldownTracker::new(2);
/// let cooldown = Cooldown::per_user(Duration::from_secs(10));
/// let user = |id: &str| CooldownSubject::User(id.into());
/// let t0 = Instant::now();
///
/// assert!(tracker.try_start_at("roll", &cooldown, user("a"), t0).is_ok());
/// assert_eq!(
///     tracker.try_start_at("roll", &cooldown, user("a"), t0 + Duration::from_secs(4)),
///     Err(CooldownError::Active { remaining: Duration::from_secs(6) })
/// );
/// assert!(tracker.try_start_at("roll", &cooldown, user("b"), t0).is_ok());
/// // Full of live cooldowns: a newcomer waits, nobody is evicted.
/// assert!(matches!(
///     tracker.try_start_at("roll", &cooldown, user("c"), t0),
///     Err(CooldownError::Busy { .. })
/// ));
/// // Once they are over, everyone may run again.
/// assert!(tracker.try_start_at("roll", &cooldown, user("c"), t0 + Duration::from_secs(10)).is_ok());
/// ```
pub struct CooldownTracker {
    capacity: usize,
    clock: Arc<dyn Clock>,
    commands: Mutex<HashMap<String, Table>>,
}

impl std::fmt::Debug for CooldownTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CooldownTracker")
            .field("capacity", &self.capacity)
            .field("live", &self.len())
            .finish_non_exhaustive()
    }
}

impl Default for CooldownTracker {
    fn default() -> Self {
        Self::new(DEFAULT_COOLDOWN_CAPACITY)
    }
}

impl CooldownTracker {
    /// A tracker of at most `capacity` live cooldowns per command, on the
    /// [`TokioClock`].
    pub fn new(capacity: usize) -> Self {
        Self::with_clock(capacity, TokioClock)
    }

    /// A tracker reading the time from `clock`.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use botlane::framework::{Clock, Cooldown, CooldownSubject, CooldownTracker};
    ///
    /// /// A clock that stands still, for a test.
    /// struct Frozen(Instant);
    /// impl Clock for Frozen {
    ///     fn now(&self) -> Instant {
    ///         self.0
    ///     }
    /// }
    ///
    /// let tracker = CooldownTracker::with_clock(10, Frozen(Instant::now()));
    /// # let _ = tracker;
    /// ```
    pub fn with_clock(capacity: usize, clock: impl Clock) -> Self {
        Self::with_arc(capacity, Arc::new(clock))
    }

    pub(crate) fn with_shared_clock(capacity: usize, clock: SharedClock) -> Self {
        Self::with_arc(capacity, clock.into_arc())
    }

    fn with_arc(capacity: usize, clock: Arc<dyn Clock>) -> Self {
        Self {
            capacity,
            clock,
            commands: Mutex::new(HashMap::new()),
        }
    }

    /// Starts `cooldown` for the invocation in `ctx` (its command, and the
    /// subject [`Cooldown::subject`] gives) unless it is already running;
    /// the time is the tracker's clock.
    ///
    /// Call it when the invocation is about to run (after its checks): a
    /// refused invocation does not start a cooldown, an accepted one does.
    ///
    /// ```
    /// use std::time::Duration;
    /// use botlane::framework::{Cooldown, CooldownTracker};
    /// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let ctx = CommandContext::for_test(
    ///     CommandInvocation { name: "roll".into(), args: CommandArgs::new(), source: CommandSource::Text },
    ///     Message::new("m1", "c1", "u1", "/roll"),
    /// );
    /// let tracker = CooldownTracker::new(100);
    /// let cooldown = Cooldown::per_user(Duration::from_secs(10));
    /// assert!(tracker.try_start(&cooldown, &ctx).is_ok());
    /// tokio::time::advance(Duration::from_millis(1_500)).await;
    /// let wait = tracker.try_start(&cooldown, &ctx).unwrap_err();
    /// assert_eq!(wait.to_string(), "this command is cooling down, try again in 9 s");
    /// tokio::time::advance(Duration::from_secs(9)).await;
    /// assert!(tracker.try_start(&cooldown, &ctx).is_ok());
    /// # }
    /// ```
    pub fn try_start<D>(
        &self,
        cooldown: &Cooldown,
        ctx: &CommandContext<D>,
    ) -> Result<(), CooldownError> {
        self.try_start_at(
            ctx.name(),
            cooldown,
            cooldown.subject(ctx),
            self.clock.now(),
        )
    }

    /// Starts `cooldown` for `subject` on `command` at `now` unless it is
    /// already running: `Ok(())` and the cooldown runs from `now`, or the
    /// wait. A zero `duration` always passes and takes no room.
    pub fn try_start_at(
        &self,
        command: &str,
        cooldown: &Cooldown,
        subject: CooldownSubject,
        now: Instant,
    ) -> Result<(), CooldownError> {
        let mut commands = self.commands.lock().unwrap_or_else(PoisonError::into_inner);
        for table in commands.values_mut() {
            table.drop_expired(now);
        }
        commands.retain(|_, table| !table.is_empty());
        if cooldown.duration.is_zero() {
            return Ok(());
        }
        if !commands.contains_key(command) && commands.len() >= MAX_COMMANDS_PER_BOT {
            let retry_after = commands
                .values()
                .filter_map(|table| table.earliest())
                .min()
                .map_or(Duration::ZERO, |end| end.saturating_duration_since(now));
            return Err(CooldownError::Busy { retry_after });
        }
        let table = commands.entry(command.to_owned()).or_default();
        table.try_start(subject, now, cooldown.duration, self.capacity)
    }

    /// The number of live cooldowns, as of the last call.
    ///
    /// ```
    /// assert_eq!(botlane::framework::CooldownTracker::new(10).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        let commands = self.commands.lock().unwrap_or_else(PoisonError::into_inner);
        commands.values().map(|table| table.ends.len()).sum()
    }

    /// Whether no cooldown is live, as of the last call.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The live cooldowns of one command: when each subject's ends, and the same
/// ends in time order to find the expired ones without a scan.
#[derive(Default)]
struct Table {
    ends: HashMap<CooldownSubject, Instant>,
    by_end: BinaryHeap<Reverse<(Instant, CooldownSubject)>>,
}

impl Table {
    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn earliest(&self) -> Option<Instant> {
        self.by_end.peek().map(|Reverse((end, _))| *end)
    }

    /// Drops every cooldown over by `now`. A heap record whose subject has
    /// since started a later cooldown is stale and only leaves the heap.
    fn drop_expired(&mut self, now: Instant) {
        while let Some(Reverse((end, _))) = self.by_end.peek() {
            if *end > now {
                break;
            }
            if let Some(Reverse((end, subject))) = self.by_end.pop()
                && self.ends.get(&subject) == Some(&end)
            {
                self.ends.remove(&subject);
            }
        }
    }

    fn try_start(
        &mut self,
        subject: CooldownSubject,
        now: Instant,
        duration: Duration,
        capacity: usize,
    ) -> Result<(), CooldownError> {
        // Expired entries are gone, so an entry here is live.
        if let Some(end) = self.ends.get(&subject) {
            return Err(CooldownError::Active {
                remaining: end.saturating_duration_since(now),
            });
        }
        if self.ends.len() >= capacity {
            let retry_after = self
                .earliest()
                .map_or(Duration::ZERO, |end| end.saturating_duration_since(now));
            return Err(CooldownError::Busy { retry_after });
        }
        // A duration past what the clock can name (`Duration::MAX`) is a
        // cooldown that does not end.
        let end = deadline::after(now, duration);
        self.ends.insert(subject.clone(), end);
        self.by_end.push(Reverse((end, subject)));
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::commands::types::{CommandArgs, CommandInvocation, CommandSource};
    use crate::message::Message;

    const TEN: Duration = Duration::from_secs(10);

    fn user(id: &str) -> CooldownSubject {
        CooldownSubject::User(id.into())
    }

    fn ctx(author: &str) -> CommandContext {
        CommandContext::for_test(
            CommandInvocation {
                name: "roll".into(),
                args: CommandArgs::new(),
                source: CommandSource::Text,
            },
            Message::new("m1", "c1", author, "/roll"),
        )
    }

    #[test]
    fn a_cooldown_past_what_the_clock_can_name_does_not_end() {
        let tracker = CooldownTracker::new(100);
        let cooldown = Cooldown::per_user(Duration::MAX);
        let t0 = Instant::now();
        tracker
            .try_start_at("roll", &cooldown, user("u1"), t0)
            .unwrap();
        let later = t0 + Duration::from_secs(86_400 * 365);
        assert!(matches!(
            tracker.try_start_at("roll", &cooldown, user("u1"), later),
            Err(CooldownError::Active { .. })
        ));
    }

    #[test]
    fn a_flood_of_new_users_cannot_end_a_targeted_cooldown_early() {
        let tracker = CooldownTracker::new(100);
        let cooldown = Cooldown::per_user(TEN);
        let t0 = Instant::now();
        tracker
            .try_start_at("roll", &cooldown, user("target"), t0)
            .unwrap();
        let mut busy = 0;
        for i in 0..1_000 {
            let at = t0 + Duration::from_millis(i);
            match tracker.try_start_at("roll", &cooldown, user(&format!("flood{i}")), at) {
                Ok(()) => {}
                Err(CooldownError::Busy { retry_after }) => {
                    busy += 1;
                    assert!(retry_after <= TEN, "{retry_after:?}");
                }
                Err(other) => panic!("a newcomer is never active: {other:?}"),
            }
        }
        assert_eq!(busy, 1_000 - 99, "99 flooders fit beside the target");
        assert_eq!(tracker.len(), 100, "the table stays within its capacity");
        let at = t0 + Duration::from_secs(9);
        assert_eq!(
            tracker.try_start_at("roll", &cooldown, user("target"), at),
            Err(CooldownError::Active {
                remaining: Duration::from_secs(1)
            }),
            "the target is still cooling down"
        );
        let after = t0 + TEN + Duration::from_secs(1);
        tracker
            .try_start_at("roll", &cooldown, user("target"), after)
            .unwrap();
        assert_eq!(tracker.len(), 1, "every expired entry left the table");
    }

    #[test]
    fn busy_waits_for_the_earliest_end() {
        let tracker = CooldownTracker::new(2);
        let cooldown = Cooldown::per_user(TEN);
        let t0 = Instant::now();
        tracker
            .try_start_at("roll", &cooldown, user("a"), t0)
            .unwrap();
        tracker
            .try_start_at("roll", &cooldown, user("b"), t0 + Duration::from_secs(3))
            .unwrap();
        assert_eq!(
            tracker.try_start_at("roll", &cooldown, user("c"), t0 + Duration::from_secs(4)),
            Err(CooldownError::Busy {
                retry_after: Duration::from_secs(6)
            })
        );
        tracker
            .try_start_at("roll", &cooldown, user("c"), t0 + TEN)
            .unwrap();
    }

    #[test]
    fn commands_have_their_own_tables() {
        let tracker = CooldownTracker::new(1);
        let cooldown = Cooldown::global(TEN);
        let t0 = Instant::now();
        tracker
            .try_start_at("roll", &cooldown, CooldownSubject::Everyone, t0)
            .unwrap();
        tracker
            .try_start_at("flip", &cooldown, CooldownSubject::Everyone, t0)
            .unwrap();
        assert!(tracker
            .try_start_at("roll", &cooldown, CooldownSubject::Everyone, t0)
            .is_err());
        for i in 0..MAX_COMMANDS_PER_BOT - 2 {
            tracker
                .try_start_at(&format!("c{i}"), &cooldown, CooldownSubject::Everyone, t0)
                .unwrap();
        }
        assert!(
            matches!(
                tracker.try_start_at("one-too-many", &cooldown, CooldownSubject::Everyone, t0),
                Err(CooldownError::Busy { .. })
            ),
            "the number of tables is bounded too"
        );
    }

    #[test]
    fn a_renewed_cooldown_is_not_dropped_by_its_stale_end() {
        let tracker = CooldownTracker::new(10);
        let cooldown = Cooldown::per_user(TEN);
        let t0 = Instant::now();
        tracker
            .try_start_at("roll", &cooldown, user("a"), t0)
            .unwrap();
        tracker
            .try_start_at("roll", &cooldown, user("a"), t0 + TEN)
            .unwrap();
        assert_eq!(
            tracker.try_start_at(
                "roll",
                &cooldown,
                user("a"),
                t0 + TEN + Duration::from_secs(1)
            ),
            Err(CooldownError::Active {
                remaining: Duration::from_secs(9)
            })
        );
    }

    #[test]
    fn a_zero_cooldown_always_passes_and_takes_no_room() {
        let tracker = CooldownTracker::new(1);
        let cooldown = Cooldown::per_user(Duration::ZERO);
        let t0 = Instant::now();
        for _ in 0..3 {
            tracker
                .try_start_at("roll", &cooldown, user("a"), t0)
                .unwrap();
        }
        assert!(tracker.is_empty());
    }

    #[test]
    fn waits_are_whole_seconds_rounded_up() {
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::ZERO), 1);
        assert_eq!(whole_seconds(Duration::from_secs(12)), 12);
        assert_eq!(whole_seconds(Duration::from_millis(12_001)), 13);
        let busy = CooldownError::Busy {
            retry_after: Duration::from_millis(500),
        };
        assert_eq!(busy.to_string(), "this command is busy, try again in 1 s");
        assert_eq!(busy.wait(), Duration::from_millis(500));
    }

    #[tokio::test(start_paused = true)]
    async fn the_tokio_clock_follows_paused_time() {
        let tracker = CooldownTracker::new(10);
        let cooldown = Cooldown::per_user(TEN);
        tracker.try_start(&cooldown, &ctx("u1")).unwrap();
        tracker.try_start(&cooldown, &ctx("u2")).unwrap();
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(
            tracker.try_start(&cooldown, &ctx("U1")),
            Err(CooldownError::Active {
                remaining: Duration::from_secs(6)
            }),
            "ids compare canonically"
        );
        tokio::time::advance(Duration::from_secs(6)).await;
        tracker.try_start(&cooldown, &ctx("u1")).unwrap();
        assert_eq!(tracker.len(), 1, "u2's cooldown ended and left");
    }

    #[test]
    fn an_injected_clock_is_read() {
        struct Fixed(Instant);
        impl Clock for Fixed {
            fn now(&self) -> Instant {
                self.0
            }
        }
        let tracker = CooldownTracker::with_clock(10, Fixed(Instant::now()));
        let cooldown = Cooldown::per_channel(TEN);
        tracker.try_start(&cooldown, &ctx("u1")).unwrap();
        assert_eq!(
            tracker.try_start(&cooldown, &ctx("u2")),
            Err(CooldownError::Active { remaining: TEN }),
            "the same channel, and the clock stands still"
        );
    }
}
