//! The bounded queue of pushes between the connection task and dispatch,
//! in wire order.
//!
//! The connection task never waits on it, so the socket keeps being read and
//! replies keep flowing however far dispatch falls behind. Two budgets:
//!
//! - message pushes (op 32): at most `push_queue_capacity` wait, holding at
//!   most `push_queue_bytes`; when either is full, the incoming message is
//!   dropped and counted;
//! - control pushes (`ready`, channel keys, ops 34/35) are never dropped
//!   (the service delivers each key once); at most [`CONTROL_CAPACITY`]
//!   wait, holding at most `control_queue_bytes` (64 MiB by default), more
//!   than a well-behaved service ever sends at once, and beyond that the
//!   connection is closed with a stated reason instead.
//!
//! A push's bytes are those of its strings, and for a `ready` also the
//! fixed size of each channel it lists (a 1 MiB `ready` of empty channels
//! holds about 2 MiB). Each byte budget takes any one push while nothing
//! of its kind waits, so a budget smaller than one push never refuses
//! everything.
//!
//! One queue for both keeps wire order: a key is applied before a later
//! message of its channel is opened, and a message that arrived before its
//! channel's key (or after its channel was left) is not opened with it.
//!
//! When nothing waits (the queue is empty and dispatch is not working on a
//! push it took), a push is dispatched at once on the connection task
//! instead ([`DispatchNow`]), if that needs no waiting: no queue, no
//! wake-up of the dispatch task, and a plain message's memory allocated
//! and freed on one thread. Dispatch gives back what would wait (an invocation
//! with every handler permit taken), and from then on pushes queue behind
//! it until dispatch has caught up, so wire order holds either way.
//!
//! The queue also knows the newest connection's login (`newest.rs`): its
//! pushes wait while it runs, those before its `ready` are dispatched after
//! that `ready`, and of a login that failed (or a connection that ended
//! before its `ready`, or a reconnect that ended before `Reconnected`)
//! only the messages and keys are dispatched, behind the next session's
//! `ready`.

mod newest;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use metrics::{Counter, Gauge};
use tokio::sync::Notify;

use crate::sync::{lock_then, Locked};
use crate::transport::{MessageView, Push};
use newest::{Newest, Stage};

/// The most control pushes that may wait for dispatch.
pub(crate) const CONTROL_CAPACITY: usize = 4096;

/// Dispatch's path that needs no waiting, run on the connection task.
pub(crate) trait DispatchNow: Send + Sync {
    /// Dispatches `push` now, or gives it back when dispatching it would
    /// wait (it is then queued). Never waits.
    fn dispatch_now(&self, push: Push) -> Option<Push>;
    /// The same for a message push borrowed from its frame, with what
    /// dispatch keeps on this connection task from one message to the next:
    /// `true` when it was dispatched (its strings may have been moved out),
    /// `false`, untouched, when it is to be queued. By reference, so that
    /// the view is not copied from one layer to the next.
    fn message_now(&self, message: &mut MessageView<'_>, cache: &mut DispatchCache) -> bool;
}

/// What dispatch keeps on a connection task from one message to the next
/// (what it last read of the bot's id and of the registry), of a type only
/// dispatch knows: kept for the connection's life.
pub(crate) type DispatchCache = Option<Box<dyn std::any::Any + Send>>;

/// What became of an offered push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    /// Dispatched on the spot.
    Dispatched,
    /// Queued, or held for a `ready`: its connection's, or (its login
    /// failed) the next session's.
    Queued,
    /// A message, dropped (and counted) because the queue is full.
    Dropped,
    /// A `ready` or membership push of a connection whose login failed
    /// (or that ended before its `ready` or its `Reconnected`), or any
    /// push of a connection a later one replaced or the client gave up on,
    /// or anything offered after `close`: never dispatched, not counted.
    Discarded,
    /// A control push with [`CONTROL_CAPACITY`] already waiting
    /// ([`Limit::Count`]), or that would take those waiting past their byte
    /// budget ([`Limit::Bytes`]).
    ControlOverflow(Limit),
}

/// Which of a budget's two limits a refused push would have passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    Count,
    Bytes,
}

pub(crate) struct PushQueue {
    state: Mutex<State>,
    /// The connection whose messages may be dispatched on the spot, or
    /// [`NO_SPOT`]: what the state says of it ([`State::spot`]), stored
    /// under the lock at each change ([`PushQueue::state`]) and read without it, so
    /// that a message dispatched on the spot takes no lock here.
    spot: AtomicU64,
    /// Set when dispatch starts; weak, as dispatch holds the session.
    now: OnceLock<Weak<dyn DispatchNow>>,
    ready: Notify,
}

/// [`PushQueue::spot`] when no connection's messages may be dispatched on
/// the spot (connections are numbered up from 0).
const NO_SPOT: u64 = u64::MAX;

impl std::fmt::Debug for PushQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The state is behind the queue's lock, which `Debug` never takes.
        f.debug_struct("PushQueue").finish_non_exhaustive()
    }
}

/// What one kind of push may hold while it waits, and what it holds.
#[derive(Debug, Default)]
struct Budget {
    max_count: usize,
    max_bytes: usize,
    count: usize,
    bytes: usize,
}

impl Budget {
    const fn new(max_count: usize, max_bytes: usize) -> Self {
        Self {
            max_count,
            max_bytes,
            count: 0,
            bytes: 0,
        }
    }

    /// Takes a push of `weight` bytes if it fits: under the count, and
    /// under the bytes or the only one waiting (a budget smaller than one
    /// push never refuses everything); else names the limit it would pass.
    fn take(&mut self, weight: usize) -> Result<(), Limit> {
        if self.count >= self.max_count {
            return Err(Limit::Count);
        }
        if self.count > 0 && self.bytes.saturating_add(weight) > self.max_bytes {
            return Err(Limit::Bytes);
        }
        self.count += 1;
        self.bytes += weight;
        Ok(())
    }

    /// Gives back what a push of `weight` bytes took.
    fn give(&mut self, weight: usize) {
        self.count -= 1;
        self.bytes -= weight;
    }

    fn clear(&mut self) {
        self.count = 0;
        self.bytes = 0;
    }
}

#[derive(Default)]
struct State {
    /// Each push with its bytes ([`weight`]).
    items: VecDeque<(Push, usize)>,
    /// Pushes of the newest connection that came before its `ready`, and
    /// the messages and keys of failed logins, in wire order: they go
    /// behind the newest connection's `ready` once it comes, or to `items`
    /// when no `ready` will (`newest.rs`). In the budgets too.
    parked: VecDeque<(Push, usize)>,
    newest: Newest,
    messages: Budget,
    control: Budget,
    peak: usize,
    dropped: u64,
    closed: bool,
    /// Dispatch took a push and has not come back for the next one. While
    /// it is set nothing is dispatched on the spot: `Dispatcher::message_now`
    /// relies on it (a handler permit free before its decision is still
    /// free after it, as dispatch, the only other taker, is idle).
    busy: bool,
    watch: Watch,
}

/// The queue's series, once the client has logged in, and what they were
/// last told: they move by deltas (a series may be shared by every client
/// of the process).
#[derive(Default)]
struct Watch {
    series: Option<(Gauge, Counter)>,
    length: usize,
    dropped: u64,
}

impl State {
    /// The connection whose messages may be dispatched on the spot as far
    /// as the queue goes: nothing waits for dispatch or is in its hands,
    /// and the newest connection's login lets its messages through.
    fn spot(&self) -> u64 {
        let idle = !self.closed && !self.busy && self.items.is_empty() && self.parked.is_empty();
        match self.newest.spot() {
            Some(connection) if idle => connection,
            _ => NO_SPOT,
        }
    }

    /// Gives back what a push of `weight` bytes took of its budget.
    fn give(&mut self, push: &Push, weight: usize) {
        if matches!(push, Push::Message(_)) {
            self.messages.give(weight);
            self.report();
        } else {
            self.control.give(weight);
        }
    }

    /// Tells the series what changed since they were last told: messages
    /// waiting, messages dropped.
    fn report(&mut self) {
        let Some((length, dropped)) = &self.watch.series else {
            return;
        };
        let waiting = self.messages.count;
        if waiting != self.watch.length {
            // Counts far below 2^52: exact as `f64`.
            #[allow(clippy::cast_precision_loss)]
            length.increment(waiting as f64 - self.watch.length as f64);
            self.watch.length = waiting;
        }
        if self.dropped != self.watch.dropped {
            dropped.increment(self.dropped - self.watch.dropped);
            self.watch.dropped = self.dropped;
        }
    }

    /// Moves what is parked behind what is queued, as the newest
    /// connection's.
    fn release_parked(&mut self) {
        self.newest.queued += self.parked.len();
        let parked = std::mem::take(&mut self.parked);
        self.items.extend(parked);
    }
}

impl PushQueue {
    /// A queue of at most `capacity` message pushes holding at most `bytes`,
    /// and of control pushes holding at most `control_bytes`.
    pub(crate) fn new(capacity: usize, bytes: usize, control_bytes: usize) -> Self {
        let state = State {
            messages: Budget::new(capacity, bytes),
            control: Budget::new(CONTROL_CAPACITY, control_bytes),
            ..State::default()
        };
        Self {
            spot: AtomicU64::new(state.spot()),
            state: Mutex::new(state),
            now: OnceLock::new(),
            ready: Notify::new(),
        }
    }

    /// The state, locked until the guard is let go, which then stores
    /// what it says of dispatch on the spot ([`PushQueue::spot`]).
    fn state(&self) -> Locked<'_, State, impl FnMut(&State) + '_> {
        lock_then(&self.state, |state: &State| {
            self.spot.store(state.spot(), Ordering::Release);
        })
    }

    /// Reports to `length` and `dropped` from now on (at login; only the
    /// first call counts).
    pub(crate) fn watch_with(&self, length: Gauge, dropped: Counter) {
        let mut state = self.state();
        if state.watch.series.is_none() {
            state.watch.series = Some((length, dropped));
            state.report();
        }
    }

    /// Lets dispatch take pushes on the spot when nothing waits (a
    /// client's dispatch starts once: a later call changes nothing).
    pub(crate) fn dispatch_now_with(&self, now: Weak<dyn DispatchNow>) {
        let _ = self.now.set(now);
    }

    /// Dispatches a push of `connection` on the spot when nothing waits
    /// for dispatch, or queues it; never waits. Called by one connection
    /// task at a time.
    pub(crate) fn offer(&self, push: Push, connection: u64) -> Offer {
        let ready = matches!(push, Push::Ready(..));
        let push = match self.idle_dispatch(connection, ready) {
            Some(now) => match now.dispatch_now(push) {
                Some(push) => push,
                None => return Offer::Dispatched,
            },
            None => push,
        };
        self.enqueue(push, connection)
    }

    /// [`offer`](Self::offer) for a message push borrowed from its frame:
    /// copied only if it has to wait. `dispatch` keeps dispatch's handle
    /// from one message to the next while they come back to back (the
    /// connection's `Inbound::Held`).
    pub(crate) fn offer_message(
        &self,
        message: &mut MessageView<'_>,
        connection: u64,
        dispatch: &mut Option<Arc<dyn DispatchNow>>,
        cache: &mut DispatchCache,
    ) -> Offer {
        // The state as it was last let go, without the lock: what the
        // locked check of a `ready` would find, as only this connection
        // task adds pushes.
        let spot = self.spot.load(Ordering::Acquire) == connection;
        if spot && dispatch.is_none() {
            *dispatch = self.dispatcher();
        }
        if let Some(now) = dispatch.as_deref().filter(|_| spot)
            && now.message_now(message, cache)
        {
            return Offer::Dispatched;
        }
        self.enqueue(Push::Message(message.take_owned()), connection)
    }

    /// Dispatch, when it may take a push of `connection` on the spot
    /// (`ready`: the push is a `ready`): set, open, with nothing queued,
    /// held or in its hands, and the connection's pushes not waiting for
    /// its login or its `ready`. Only `offer` adds pushes, so nothing can
    /// be queued ahead of one while it is dispatched without the lock.
    fn idle_dispatch(&self, connection: u64, ready: bool) -> Option<Arc<dyn DispatchNow>> {
        let mut state = self.state();
        if state.closed || state.busy || !state.items.is_empty() || !state.parked.is_empty() {
            return None;
        }
        if !state.newest.flows(connection, ready) {
            return None;
        }
        if ready {
            // Nothing is parked: the `ready` has only itself to let through.
            state.newest.awaiting_ready = false;
        }
        drop(state);
        self.dispatcher()
    }

    /// Dispatch, once it has started and while it runs.
    fn dispatcher(&self) -> Option<Arc<dyn DispatchNow>> {
        self.now.get().and_then(Weak::upgrade)
    }

    fn enqueue(&self, push: Push, connection: u64) -> Offer {
        let mut state = self.state();
        // After a shutdown nothing is dispatched or counted: a push still on
        // the wire is no sign that dispatch is behind (it used to be
        // reported as a full queue, a WARN line at every racy shutdown).
        if state.closed {
            return Offer::Discarded;
        }
        if !state.newest.admits(connection, &push) {
            return Offer::Discarded;
        }
        let weight = weight(&push);
        let ready = matches!(push, Push::Ready(..));
        if matches!(push, Push::Message(_)) {
            if state.messages.take(weight).is_err() {
                state.dropped += 1;
                state.report();
                return Offer::Dropped;
            }
            state.peak = state.peak.max(state.messages.count);
            state.report();
        } else if let Err(limit) = state.control.take(weight) {
            return Offer::ControlOverflow(limit);
        }
        if state.newest.parks() && !ready {
            state.parked.push_back((push, weight));
            return Offer::Queued;
        }
        state.items.push_back((push, weight));
        state.newest.queued += 1;
        if ready && state.newest.awaiting_ready {
            state.newest.awaiting_ready = false;
            state.release_parked();
        }
        drop(state);
        self.ready.notify_one();
        Offer::Queued
    }

    /// The next push in arrival order; `None` once closed. Calling it
    /// again says the previous one is done with. A push of a connection
    /// whose login is under way is not handed out before the login is
    /// over (nor anything behind it).
    pub(crate) async fn next(&self) -> Option<Push> {
        loop {
            {
                let mut state = self.state();
                state.busy = false;
                if state.closed {
                    return None;
                }
                let held = state.newest.stage == Stage::LoggingIn
                    && state.items.len() <= state.newest.queued;
                let next = if held { None } else { state.items.pop_front() };
                if let Some((push, weight)) = next {
                    state.busy = true;
                    state.newest.queued = state.newest.queued.min(state.items.len());
                    state.give(&push, weight);
                    return Some(push);
                }
            }
            // A permit stored by an `offer` (or a login's end) between the
            // check and here completes this at once: no wake-up is lost.
            self.ready.notified().await;
        }
    }

    /// Ends dispatch: queued messages are discarded.
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        state.items.clear();
        state.parked.clear();
        state.newest.queued = 0;
        state.messages.clear();
        state.control.clear();
        state.report();
        drop(state);
        self.ready.notify_one();
    }

    /// Messages waiting, the most that ever waited, messages dropped so far.
    pub(crate) fn figures(&self) -> (usize, usize, u64) {
        let state = self.state();
        (state.messages.count, state.peak, state.dropped)
    }
}

/// The bytes a push holds in its strings (and a `ready`'s list).
fn weight(push: &Push) -> usize {
    fn channel(c: &crate::wire::ChannelInfo) -> usize {
        std::mem::size_of_val(c) + c.id.len() + c.server_id.len() + c.name.len()
    }
    match push {
        Push::Message(m) => {
            m.id.len()
                + m.channel_id.len()
                + m.author_id.len()
                + m.content.len()
                + m.command.as_ref().map_or(0, String::len)
                + m.reply_to.as_ref().map_or(0, String::len)
        }
        Push::Ready(r, _) => {
            r.user_id.len() + r.name.len() + r.channels.iter().map(channel).sum::<usize>()
        }
        Push::ChannelKey(k) => k.channel_id.len() + k.from.len() + k.wrapped.get().len(),
        Push::ChannelAdded(c) => channel(c),
        Push::ChannelRemoved(id) => id.len(),
        Push::Notification => 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::sync::lock;
    use crate::wire::{self, WireMessage};

    fn message(id: &str) -> Push {
        Push::Message(WireMessage::new(id, "c", "u", "", 0))
    }

    fn removed(id: &str) -> Push {
        Push::ChannelRemoved(id.into())
    }

    fn id(push: Option<Push>) -> String {
        match push.unwrap() {
            Push::Message(m) => m.id,
            Push::ChannelRemoved(c) => c,
            Push::Ready(..) => "ready".to_owned(),
            Push::ChannelKey(k) => format!("key {}", k.channel_id),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_full_queue_drops_messages_and_counts_them_without_waiting() {
        let q = PushQueue::new(3, usize::MAX, usize::MAX);
        for i in 0..10 {
            q.offer(message(&i.to_string()), 0);
        }
        assert_eq!(q.figures(), (3, 3, 7));
        assert_eq!(id(q.next().await), "0");
        assert_eq!(q.offer(message("late"), 0), Offer::Queued);
        let ids = [id(q.next().await), id(q.next().await), id(q.next().await)];
        assert_eq!(ids, ["1", "2", "late"]);
        assert_eq!(q.figures(), (0, 3, 7));
    }

    #[tokio::test]
    async fn its_series_follow_the_messages_waiting_and_dropped_by_deltas() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let q = PushQueue::new(3, usize::MAX, usize::MAX);
        q.offer(message("before"), 0);
        // A series another client also moves: this queue adds its own.
        let (length, dropped) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        length.store(10f64.to_bits(), Ordering::Relaxed);
        q.watch_with(
            Gauge::from_arc(length.clone()),
            Counter::from_arc(dropped.clone()),
        );
        let waiting = || f64::from_bits(length.load(Ordering::Relaxed));
        assert_eq!(waiting(), 11.0, "what waited before the series came counts");
        for i in 0..5 {
            q.offer(message(&i.to_string()), 0);
        }
        assert_eq!((waiting(), dropped.load(Ordering::Relaxed)), (13.0, 3));
        q.next().await;
        assert_eq!(waiting(), 12.0);
        q.close();
        assert_eq!((waiting(), dropped.load(Ordering::Relaxed)), (10.0, 3));
    }

    #[tokio::test]
    async fn control_pushes_are_never_dropped_and_keep_wire_order() {
        let q = PushQueue::new(1, usize::MAX, usize::MAX);
        assert_eq!(q.offer(message("m1"), 0), Offer::Queued);
        assert_eq!(q.offer(message("m2"), 0), Offer::Dropped);
        assert_eq!(q.offer(removed("c1"), 0), Offer::Queued);
        assert_eq!(q.offer(message("m3"), 0), Offer::Dropped);
        assert_eq!(id(q.next().await), "m1");
        assert_eq!(q.offer(message("m4"), 0), Offer::Queued);
        assert_eq!(id(q.next().await), "c1");
        assert_eq!(id(q.next().await), "m4");
        for i in 0..CONTROL_CAPACITY {
            assert_eq!(q.offer(removed(&i.to_string()), 0), Offer::Queued);
        }
        assert_eq!(
            q.offer(removed("one too many"), 0),
            Offer::ControlOverflow(Limit::Count)
        );
        assert_eq!(
            q.offer(message("m5"), 0),
            Offer::Queued,
            "messages have their own budget"
        );
        let ready = wire::Ready::new("b", "b", wire::AccountKind::Bot, vec![]);
        assert_eq!(
            q.offer(Push::Ready(ready, 1), 0),
            Offer::ControlOverflow(Limit::Count)
        );
    }

    fn sized(id: &str, content: usize) -> Push {
        match message(id) {
            Push::Message(mut m) => {
                m.content = "x".repeat(content);
                Push::Message(m)
            }
            _ => unreachable!("message() builds a message push"),
        }
    }

    #[tokio::test]
    async fn messages_are_dropped_past_the_byte_budget_and_one_always_fits() {
        // "m0" + "c" + "u" + 96 bytes of content: 100 bytes each.
        let q = PushQueue::new(100, 250, usize::MAX);
        assert_eq!(q.offer(sized("m0", 96), 0), Offer::Queued);
        assert_eq!(q.offer(sized("m1", 96), 0), Offer::Queued);
        assert_eq!(q.offer(sized("m2", 96), 0), Offer::Dropped);
        assert_eq!(
            q.offer(sized("m3", 46), 0),
            Offer::Queued,
            "50 bytes still fit"
        );
        assert_eq!(q.offer(sized("m4", 0), 0), Offer::Dropped, "250 are held");
        assert_eq!(q.figures(), (3, 3, 2));
        assert_eq!(id(q.next().await), "m0");
        assert_eq!(
            q.offer(sized("m5", 96), 0),
            Offer::Queued,
            "taking one frees its bytes"
        );
        for _ in 0..3 {
            q.next().await.unwrap();
        }
        // Nothing waits: a message over the whole budget is still taken.
        assert_eq!(q.offer(sized("big", 1_000), 0), Offer::Queued);
        assert_eq!(q.offer(sized("m6", 0), 0), Offer::Dropped);
        assert_eq!(id(q.next().await), "big");
        // Control pushes have a budget of their own.
        assert_eq!(q.offer(removed(&"k".repeat(1_000)), 0), Offer::Queued);
        assert_eq!(q.offer(sized("m7", 96), 0), Offer::Queued);
    }

    #[tokio::test]
    async fn control_pushes_past_their_byte_budget_close_the_connection() {
        let q = PushQueue::new(1, 1, 1000);
        assert_eq!(q.offer(removed(&"a".repeat(500)), 0), Offer::Queued);
        assert_eq!(q.offer(removed(&"b".repeat(500)), 0), Offer::Queued);
        assert_eq!(
            q.offer(removed("c"), 0),
            Offer::ControlOverflow(Limit::Bytes)
        );
        assert_eq!(id(q.next().await).len(), 500);
        assert_eq!(q.offer(removed("c"), 0), Offer::Queued);
        // Nothing waits: one push over the whole budget is still taken.
        let q = PushQueue::new(1, 1, 10);
        assert_eq!(q.offer(removed(&"d".repeat(100)), 0), Offer::Queued);
        assert_eq!(
            q.offer(removed("e"), 0),
            Offer::ControlOverflow(Limit::Bytes)
        );
    }

    #[test]
    fn a_ready_weighs_its_strings_and_each_listed_channel() {
        let ready = wire::Ready::new(
            "b",
            "b",
            wire::AccountKind::Bot,
            vec![wire::ChannelInfo::new("c1", "s", "n"); 2],
        );
        let each = std::mem::size_of::<wire::ChannelInfo>() + 4;
        assert_eq!(weight(&Push::Ready(ready, 1)), 2 + 2 * each);
    }

    #[tokio::test]
    async fn a_waiting_consumer_is_woken_and_close_ends_it() {
        let q = std::sync::Arc::new(PushQueue::new(4, usize::MAX, usize::MAX));
        let consumer = {
            let q = q.clone();
            tokio::spawn(async move {
                let first = id(q.next().await);
                (first, q.next().await.is_none())
            })
        };
        tokio::task::yield_now().await;
        q.offer(message("a"), 0);
        while q.figures().0 > 0 {
            tokio::task::yield_now().await;
        }
        q.close();
        assert_eq!(consumer.await.unwrap(), ("a".to_owned(), true));
        assert_eq!(q.offer(message("after close"), 0), Offer::Discarded);
        assert_eq!(
            q.figures().2,
            0,
            "a push after close is not counted as dropped"
        );
    }

    /// Dispatch that takes messages on the spot while `open`, gives them
    /// back otherwise, and records what it took.
    #[derive(Default)]
    struct Recording {
        open: std::sync::atomic::AtomicBool,
        taken: Mutex<Vec<String>>,
    }

    impl DispatchNow for Recording {
        fn dispatch_now(&self, push: Push) -> Option<Push> {
            if !self.open.load(std::sync::atomic::Ordering::SeqCst) {
                return Some(push);
            }
            lock(&self.taken).push(id(Some(push)));
            None
        }

        fn message_now(&self, message: &mut MessageView<'_>, _: &mut DispatchCache) -> bool {
            if !self.open.load(std::sync::atomic::Ordering::SeqCst) {
                return false;
            }
            lock(&self.taken).push(message.id.to_string());
            true
        }
    }

    fn view(id: &str) -> MessageView<'static> {
        match message(id) {
            Push::Message(m) => MessageView::from(m),
            _ => unreachable!("message() builds a message push"),
        }
    }

    #[tokio::test]
    async fn pushes_are_dispatched_on_the_spot_only_while_nothing_waits() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        let now = Arc::new(Recording::default());
        now.open.store(true, std::sync::atomic::Ordering::SeqCst);
        let weak: Weak<dyn DispatchNow> = Arc::downgrade(&(now.clone() as Arc<dyn DispatchNow>));
        // Before dispatch starts, everything queues.
        assert_eq!(q.offer(message("early"), 0), Offer::Queued);
        q.dispatch_now_with(weak);
        // Something is queued: later pushes queue behind it, in order.
        assert_eq!(
            q.offer_message(&mut view("m1"), 0, &mut None, &mut None),
            Offer::Queued
        );
        assert_eq!(q.offer(removed("c1"), 0), Offer::Queued);
        assert_eq!(id(q.next().await), "early");
        // Dispatch holds a push: still queued.
        assert_eq!(
            q.offer_message(&mut view("m2"), 0, &mut None, &mut None),
            Offer::Queued
        );
        assert_eq!(id(q.next().await), "m1");
        assert_eq!(id(q.next().await), "c1");
        assert_eq!(id(q.next().await), "m2");
        assert!(lock(&now.taken).is_empty(), "nothing overtook the queue");
        // Dispatch comes back for more (it is done with m2) and finds none:
        // now pushes are taken on the spot.
        let waiting = tokio::time::timeout(Duration::from_millis(20), q.next()).await;
        assert!(waiting.is_err(), "nothing was queued");
        assert_eq!(
            q.offer_message(&mut view("m3"), 0, &mut None, &mut None),
            Offer::Dispatched
        );
        assert_eq!(q.offer(removed("c2"), 0), Offer::Dispatched);
        assert_eq!(*lock(&now.taken), ["m3", "c2"]);
        // What dispatch gives back is queued, and what follows queues too.
        now.open.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            q.offer_message(&mut view("m4"), 0, &mut None, &mut None),
            Offer::Queued
        );
        now.open.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            q.offer_message(&mut view("m5"), 0, &mut None, &mut None),
            Offer::Queued
        );
        assert_eq!(q.figures().0, 2);
        assert_eq!(id(q.next().await), "m4");
        assert_eq!(id(q.next().await), "m5");
        assert_eq!(lock(&now.taken).len(), 2);
        // Once dispatch is gone, pushes queue (and close discards them).
        drop(now);
        let waiting = tokio::time::timeout(Duration::from_millis(20), q.next()).await;
        assert!(waiting.is_err());
        assert_eq!(
            q.offer_message(&mut view("m6"), 0, &mut None, &mut None),
            Offer::Queued
        );
        q.close();
        assert_eq!(
            q.offer_message(&mut view("m7"), 0, &mut None, &mut None),
            Offer::Discarded
        );
    }

    fn ready(connection: u64) -> Push {
        let ready = wire::Ready::new("b", "b", wire::AccountKind::Bot, vec![]);
        Push::Ready(ready, connection)
    }

    fn key(channel: &str) -> Push {
        Push::ChannelKey(wire::ChannelKeyPush::new(
            channel,
            "u",
            serde_json::value::RawValue::from_string("{}".into()).unwrap(),
        ))
    }

    /// Whether `q` hands out nothing now (dispatch would wait).
    async fn holds(q: &PushQueue) -> bool {
        tokio::time::timeout(Duration::from_millis(20), q.next())
            .await
            .is_err()
    }

    #[tokio::test]
    async fn a_login_holds_its_pushes_and_what_came_before_its_ready_goes_behind_it() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        assert_eq!(q.offer(message("old"), 0), Offer::Queued);
        q.connecting(1);
        assert_eq!(q.offer(message("early"), 1), Offer::Queued);
        assert_eq!(q.offer(key("c1"), 1), Offer::Queued);
        assert_eq!(q.offer(ready(1), 1), Offer::Queued);
        assert_eq!(
            q.offer_message(&mut view("late"), 1, &mut None, &mut None),
            Offer::Queued
        );
        assert_eq!(
            q.offer(message("stale"), 0),
            Offer::Discarded,
            "a replaced connection's"
        );
        assert_eq!(q.figures().0, 3, "held pushes are in the budget");
        assert_eq!(id(q.next().await), "old", "not the login's: handed out");
        assert!(holds(&q).await, "the login's pushes wait for its end");
        q.logged_in(1);
        let order = [
            id(q.next().await),
            id(q.next().await),
            id(q.next().await),
            id(q.next().await),
        ];
        assert_eq!(order, ["ready", "early", "key c1", "late"]);
    }

    #[tokio::test]
    async fn a_failed_login_s_messages_and_keys_wait_for_the_next_ready_and_nothing_else() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(key("c0"), 1), Offer::Queued);
        assert_eq!(q.offer(ready(1), 1), Offer::Queued);
        assert_eq!(q.offer(key("c1"), 1), Offer::Queued);
        assert_eq!(q.offer(message("m1"), 1), Offer::Queued);
        assert_eq!(q.offer(removed("c2"), 1), Offer::Queued);
        assert_eq!(q.login_failed(1), (2, 3), "the ready and the removal");
        assert_eq!(q.login_failed(1), (0, 0), "once");
        assert_eq!(q.figures().0, 1, "the kept message in the budget");
        assert_eq!(q.offer(message("after"), 1), Offer::Queued, "kept too");
        assert_eq!(q.offer(removed("c3"), 1), Offer::Discarded);
        assert_eq!(q.offer(ready(1), 1), Offer::Discarded);
        q.unpark(Some(1));
        q.unpark(None);
        assert!(holds(&q).await, "no session: they wait for the next ready");
        q.connecting(2);
        assert_eq!(q.offer(message("late"), 1), Offer::Discarded, "replaced");
        assert_eq!(q.offer(message("m2"), 2), Offer::Queued);
        assert_eq!(q.offer(ready(2), 2), Offer::Queued);
        q.logged_in(2);
        let mut ids = Vec::new();
        for _ in 0..6 {
            ids.push(id(q.next().await));
        }
        assert_eq!(ids, ["ready", "key c0", "key c1", "m1", "after", "m2"]);
        assert!(holds(&q).await);
    }

    #[tokio::test]
    async fn a_second_failed_login_carries_the_first_s_messages_on_within_the_budget() {
        let q = PushQueue::new(2, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(message("m1"), 1), Offer::Queued);
        assert_eq!(q.login_failed(1), (0, 1));
        q.connecting(2);
        assert_eq!(q.offer(ready(2), 2), Offer::Queued);
        assert_eq!(q.offer(message("m2"), 2), Offer::Queued);
        assert_eq!(
            q.offer(message("m3"), 2),
            Offer::Dropped,
            "kept messages take the budget"
        );
        assert_eq!(q.login_failed(2), (1, 2));
        q.connecting(3);
        assert_eq!(q.offer(ready(3), 3), Offer::Queued);
        q.logged_in(3);
        let ids = [id(q.next().await), id(q.next().await), id(q.next().await)];
        assert_eq!(ids, ["ready", "m1", "m2"]);
        assert_eq!(q.figures(), (0, 2, 1));
    }

    #[tokio::test]
    async fn a_connection_that_ends_before_its_ready_is_a_failed_login() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(ready(1), 1), Offer::Queued);
        q.logged_in(1);
        assert_eq!(id(q.next().await), "ready");
        q.connecting(2);
        assert_eq!(q.offer(key("c1"), 2), Offer::Queued);
        assert_eq!(q.offer(message("m1"), 2), Offer::Queued);
        assert_eq!(q.offer(removed("c2"), 2), Offer::Queued);
        q.logged_in(2);
        assert!(holds(&q).await, "parked for its ready");
        assert_eq!(q.ended(1), (0, 0), "not the newest");
        assert_eq!(q.ended(2), (1, 2), "the removal discarded");
        assert_eq!(q.ended(2), (0, 0), "once");
        assert_eq!(q.offer(message("after"), 2), Offer::Queued, "kept too");
        assert_eq!(q.offer(ready(2), 2), Offer::Discarded);
        q.unpark(Some(2));
        q.unpark(None);
        assert!(holds(&q).await, "no session: they wait for the next ready");
        q.connecting(3);
        assert_eq!(q.offer(message("m3"), 3), Offer::Queued);
        assert_eq!(q.offer(ready(3), 3), Offer::Queued);
        q.logged_in(3);
        assert_eq!(q.ended(3), (0, 0), "its ready came: a session");
        let mut ids = Vec::new();
        for _ in 0..5 {
            ids.push(id(q.next().await));
        }
        assert_eq!(ids, ["ready", "key c1", "m1", "after", "m3"]);
        assert!(holds(&q).await);
        assert_eq!(q.figures(), (0, 3, 0));
    }

    #[tokio::test]
    async fn a_reconnect_given_up_on_is_a_failed_login_whether_or_not_its_ready_came() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(message("m1"), 1), Offer::Queued);
        assert_eq!(q.login_failed(1), (0, 1));
        q.connecting(2);
        assert_eq!(q.offer(ready(2), 2), Offer::Queued);
        assert_eq!(q.offer(key("c2"), 2), Offer::Queued);
        assert_eq!(q.offer(removed("c3"), 2), Offer::Queued);
        assert_eq!(q.offer(message("m2"), 2), Offer::Queued);
        q.logged_in(2);
        assert_eq!(q.given_up(1), (0, 0), "not the newest");
        assert_eq!(
            q.given_up(2),
            (2, 3),
            "its ready and removal discarded; m1, carried behind its ready, carried on"
        );
        assert_eq!(q.given_up(2), (0, 0), "once");
        assert!(holds(&q).await, "no session: they wait for the next ready");
        q.connecting(3);
        assert_eq!(q.offer(ready(3), 3), Offer::Queued);
        assert_eq!(q.offer(message("m3"), 3), Offer::Queued);
        q.logged_in(3);
        assert_eq!(id(q.next().await), "ready", "dispatch holds it");
        assert_eq!(
            q.given_up(3),
            (0, 4),
            "what dispatch took stays taken; what is queued is carried"
        );
        assert!(holds(&q).await);
        q.connecting(4);
        assert_eq!(q.offer(ready(4), 4), Offer::Queued);
        q.logged_in(4);
        let mut ids = Vec::new();
        for _ in 0..5 {
            ids.push(id(q.next().await));
        }
        assert_eq!(ids, ["ready", "m1", "key c2", "m2", "m3"]);
        assert_eq!(q.figures(), (0, 3, 0));
    }

    #[tokio::test]
    async fn a_refused_first_login_drops_held_messages_and_keeps_keys_for_a_later_login() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(key("c1"), 1), Offer::Queued);
        assert_eq!(q.offer(message("m1"), 1), Offer::Queued);
        assert_eq!(q.login_failed(1), (0, 2));
        q.connecting(2);
        assert_eq!(q.login_failed(2), (0, 2), "refused: carried on");
        assert_eq!(q.refused_before_a_session(), 1);
        assert_eq!(q.figures(), (0, 1, 1), "released, and counted as dropped");
        assert_eq!(q.offer(message("late"), 2), Offer::Discarded);
        assert!(holds(&q).await, "the key waits for a later login's ready");
        assert_eq!(q.refused_before_a_session(), 0, "once");
        q.connecting(3);
        assert_eq!(q.offer(ready(3), 3), Offer::Queued);
        q.logged_in(3);
        assert_eq!(id(q.next().await), "ready");
        assert_eq!(id(q.next().await), "key c1");
        assert!(holds(&q).await);
    }

    #[tokio::test]
    async fn with_no_next_session_held_messages_are_dropped_and_counted_and_keys_dispatched() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(key("c1"), 1), Offer::Queued);
        assert_eq!(q.offer(message("m1"), 1), Offer::Queued);
        assert_eq!(q.offer(message("m2"), 1), Offer::Queued);
        assert_eq!(q.login_failed(1), (0, 3));
        assert_eq!(q.figures(), (2, 2, 0));
        assert_eq!(q.no_next_session(), 2);
        assert_eq!(q.figures(), (0, 2, 2), "released, and counted as dropped");
        assert_eq!(id(q.next().await), "key c1");
        assert_eq!(q.offer(message("late"), 1), Offer::Discarded);
        assert_eq!(q.offer(key("c2"), 1), Offer::Discarded);
        assert!(holds(&q).await, "nothing else");
        assert_eq!(q.no_next_session(), 0, "once");
    }

    #[tokio::test]
    async fn pushes_parked_for_a_ready_that_never_comes_are_released_when_waiting_ends() {
        let q = PushQueue::new(8, usize::MAX, usize::MAX);
        q.connecting(1);
        assert_eq!(q.offer(message("m1"), 1), Offer::Queued);
        q.logged_in(1);
        assert_eq!(q.offer(message("m2"), 1), Offer::Queued);
        assert!(holds(&q).await, "parked until the ready");
        q.unpark(Some(2));
        assert!(holds(&q).await, "not for another connection");
        q.unpark(Some(1));
        assert_eq!(q.offer(message("m3"), 1), Offer::Queued);
        let order = [id(q.next().await), id(q.next().await), id(q.next().await)];
        assert_eq!(order, ["m1", "m2", "m3"]);
        q.connecting(2);
        q.logged_in(2);
        assert_eq!(q.offer(message("m4"), 2), Offer::Queued);
        q.unpark(None);
        assert_eq!(id(q.next().await), "m4");
    }
}
