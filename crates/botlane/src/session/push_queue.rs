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
//! with every handler permit taken, a `ready` that came during its
//! connection's login), and from then on pushes queue behind it until
//! dispatch has caught up, so wire order holds either way.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

use crate::sync::lock;
use crate::transport::{MessageView, Push};

/// The most control pushes that may wait for dispatch.
pub(crate) const CONTROL_CAPACITY: usize = 4096;

/// Dispatch's path that needs no waiting, run on the connection task.
pub(crate) trait DispatchNow: Send + Sync {
    /// Dispatches `push` now, or gives it back when dispatching it would
    /// wait (it is then queued). Never waits.
    fn dispatch_now(&self, push: Push) -> Option<Push>;
    /// The same for a message push borrowed from its frame.
    fn message_now<'a>(&self, message: MessageView<'a>) -> Option<MessageView<'a>>;
}

/// What became of an offered push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    /// Dispatched on the spot.
    Dispatched,
    Queued,
    /// A message, dropped (and counted) because the queue is full, or
    /// anything offered after `close`.
    Dropped,
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
    ready: Notify,
}

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
    messages: Budget,
    control: Budget,
    peak: usize,
    dropped: u64,
    closed: bool,
    /// Dispatch took a push and has not come back for the next one.
    busy: bool,
    /// Set when dispatch starts; weak, as dispatch holds the session.
    now: Option<Weak<dyn DispatchNow>>,
}

impl PushQueue {
    /// A queue of at most `capacity` message pushes holding at most `bytes`,
    /// and of control pushes holding at most `control_bytes`.
    pub(crate) fn new(capacity: usize, bytes: usize, control_bytes: usize) -> Self {
        Self {
            state: Mutex::new(State {
                messages: Budget::new(capacity, bytes),
                control: Budget::new(CONTROL_CAPACITY, control_bytes),
                ..State::default()
            }),
            ready: Notify::new(),
        }
    }

    /// Lets dispatch take pushes on the spot when nothing waits.
    pub(crate) fn dispatch_now_with(&self, now: Weak<dyn DispatchNow>) {
        lock(&self.state).now = Some(now);
    }

    /// Dispatches a push on the spot when nothing waits for dispatch, or
    /// queues it; never waits. Called by one connection task at a time.
    pub(crate) fn offer(&self, push: Push) -> Offer {
        let push = match self.idle_dispatch() {
            Some(now) => match now.dispatch_now(push) {
                Some(push) => push,
                None => return Offer::Dispatched,
            },
            None => push,
        };
        self.enqueue(push)
    }

    /// [`offer`](Self::offer) for a message push borrowed from its frame:
    /// copied only if it has to wait.
    pub(crate) fn offer_message(&self, message: MessageView<'_>) -> Offer {
        let message = match self.idle_dispatch() {
            Some(now) => match now.message_now(message) {
                Some(message) => message,
                None => return Offer::Dispatched,
            },
            None => message,
        };
        self.enqueue(Push::Message(message.into_owned()))
    }

    /// Dispatch, when it may take a push on the spot: set, open, and with
    /// nothing queued or in its hands. Only `offer` adds pushes, so nothing
    /// can be queued ahead of one while it is dispatched without the lock.
    fn idle_dispatch(&self) -> Option<Arc<dyn DispatchNow>> {
        let state = lock(&self.state);
        if state.closed || state.busy || !state.items.is_empty() {
            return None;
        }
        state.now.as_ref().and_then(Weak::upgrade)
    }

    fn enqueue(&self, push: Push) -> Offer {
        let mut state = lock(&self.state);
        if state.closed {
            return Offer::Dropped;
        }
        let weight = weight(&push);
        if matches!(push, Push::Message(_)) {
            if state.messages.take(weight).is_err() {
                state.dropped += 1;
                return Offer::Dropped;
            }
            state.peak = state.peak.max(state.messages.count);
        } else if let Err(limit) = state.control.take(weight) {
            return Offer::ControlOverflow(limit);
        }
        state.items.push_back((push, weight));
        drop(state);
        self.ready.notify_one();
        Offer::Queued
    }

    /// The next push in arrival order; `None` once closed. Calling it
    /// again says the previous one is done with.
    pub(crate) async fn next(&self) -> Option<Push> {
        loop {
            {
                let mut state = lock(&self.state);
                state.busy = false;
                if state.closed {
                    return None;
                }
                if let Some((push, weight)) = state.items.pop_front() {
                    state.busy = true;
                    if matches!(push, Push::Message(_)) {
                        state.messages.give(weight);
                    } else {
                        state.control.give(weight);
                    }
                    return Some(push);
                }
            }
            // A permit stored by an `offer` between the check and here
            // completes this at once: no wake-up is lost.
            self.ready.notified().await;
        }
    }

    /// Ends dispatch: queued messages are discarded.
    pub(crate) fn close(&self) {
        let mut state = lock(&self.state);
        state.closed = true;
        state.items.clear();
        state.messages.clear();
        state.control.clear();
        drop(state);
        self.ready.notify_one();
    }

    /// Messages waiting, the most that ever waited, messages dropped so far.
    pub(crate) fn figures(&self) -> (usize, usize, u64) {
        let state = lock(&self.state);
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
    use crate::wire::{self, WireMessage};

    fn message(id: &str) -> Push {
        Push::Message(WireMessage {
            id: id.into(),
            channel_id: "c".into(),
            author_id: "u".into(),
            content: String::new(),
            command: None,
            reply_to: None,
            created_at: 0,
        })
    }

    fn removed(id: &str) -> Push {
        Push::ChannelRemoved(id.into())
    }

    fn id(push: Option<Push>) -> String {
        match push.unwrap() {
            Push::Message(m) => m.id,
            Push::ChannelRemoved(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_full_queue_drops_messages_and_counts_them_without_waiting() {
        let q = PushQueue::new(3, usize::MAX, usize::MAX);
        for i in 0..10 {
            q.offer(message(&i.to_string()));
        }
        assert_eq!(q.figures(), (3, 3, 7));
        assert_eq!(id(q.next().await), "0");
        assert_eq!(q.offer(message("late")), Offer::Queued);
        let ids = [id(q.next().await), id(q.next().await), id(q.next().await)];
        assert_eq!(ids, ["1", "2", "late"]);
        assert_eq!(q.figures(), (0, 3, 7));
    }

    #[tokio::test]
    async fn control_pushes_are_never_dropped_and_keep_wire_order() {
        let q = PushQueue::new(1, usize::MAX, usize::MAX);
        assert_eq!(q.offer(message("m1")), Offer::Queued);
        assert_eq!(q.offer(message("m2")), Offer::Dropped);
        assert_eq!(q.offer(removed("c1")), Offer::Queued);
        assert_eq!(q.offer(message("m3")), Offer::Dropped);
        assert_eq!(id(q.next().await), "m1");
        assert_eq!(q.offer(message("m4")), Offer::Queued);
        assert_eq!(id(q.next().await), "c1");
        assert_eq!(id(q.next().await), "m4");
        for i in 0..CONTROL_CAPACITY {
            assert_eq!(q.offer(removed(&i.to_string())), Offer::Queued);
        }
        assert_eq!(
            q.offer(removed("one too many")),
            Offer::ControlOverflow(Limit::Count)
        );
        assert_eq!(
            q.offer(message("m5")),
            Offer::Queued,
            "messages have their own budget"
        );
        let ready = wire::Ready {
            user_id: "b".into(),
            name: "b".into(),
            kind: wire::AccountKind::Bot,
            channels: vec![],
        };
        assert_eq!(
            q.offer(Push::Ready(ready, 1)),
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
        assert_eq!(q.offer(sized("m0", 96)), Offer::Queued);
        assert_eq!(q.offer(sized("m1", 96)), Offer::Queued);
        assert_eq!(q.offer(sized("m2", 96)), Offer::Dropped);
        assert_eq!(
            q.offer(sized("m3", 46)),
            Offer::Queued,
            "50 bytes still fit"
        );
        assert_eq!(q.offer(sized("m4", 0)), Offer::Dropped, "250 are held");
        assert_eq!(q.figures(), (3, 3, 2));
        assert_eq!(id(q.next().await), "m0");
        assert_eq!(
            q.offer(sized("m5", 96)),
            Offer::Queued,
            "taking one frees its bytes"
        );
        for _ in 0..3 {
            q.next().await.unwrap();
        }
        // Nothing waits: a message over the whole budget is still taken.
        assert_eq!(q.offer(sized("big", 1_000)), Offer::Queued);
        assert_eq!(q.offer(sized("m6", 0)), Offer::Dropped);
        assert_eq!(id(q.next().await), "big");
        // Control pushes have a budget of their own.
        assert_eq!(q.offer(removed(&"k".repeat(1_000))), Offer::Queued);
        assert_eq!(q.offer(sized("m7", 96)), Offer::Queued);
    }

    #[tokio::test]
    async fn control_pushes_past_their_byte_budget_close_the_connection() {
        let q = PushQueue::new(1, 1, 1000);
        assert_eq!(q.offer(removed(&"a".repeat(500))), Offer::Queued);
        assert_eq!(q.offer(removed(&"b".repeat(500))), Offer::Queued);
        assert_eq!(q.offer(removed("c")), Offer::ControlOverflow(Limit::Bytes));
        assert_eq!(id(q.next().await).len(), 500);
        assert_eq!(q.offer(removed("c")), Offer::Queued);
        // Nothing waits: one push over the whole budget is still taken.
        let q = PushQueue::new(1, 1, 10);
        assert_eq!(q.offer(removed(&"d".repeat(100))), Offer::Queued);
        assert_eq!(q.offer(removed("e")), Offer::ControlOverflow(Limit::Bytes));
    }

    #[test]
    fn a_ready_weighs_its_strings_and_each_listed_channel() {
        let ready = wire::Ready {
            user_id: "b".into(),
            name: "b".into(),
            kind: wire::AccountKind::Bot,
            channels: vec![
                wire::ChannelInfo {
                    id: "c1".into(),
                    server_id: "s".into(),
                    name: "n".into(),
                };
                2
            ],
        };
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
        q.offer(message("a"));
        while q.figures().0 > 0 {
            tokio::task::yield_now().await;
        }
        q.close();
        assert_eq!(consumer.await.unwrap(), ("a".to_owned(), true));
        assert_eq!(q.offer(message("after close")), Offer::Dropped);
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

        fn message_now<'a>(&self, message: MessageView<'a>) -> Option<MessageView<'a>> {
            if !self.open.load(std::sync::atomic::Ordering::SeqCst) {
                return Some(message);
            }
            lock(&self.taken).push(message.id.to_string());
            None
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
        assert_eq!(q.offer(message("early")), Offer::Queued);
        q.dispatch_now_with(weak);
        // Something is queued: later pushes queue behind it, in order.
        assert_eq!(q.offer_message(view("m1")), Offer::Queued);
        assert_eq!(q.offer(removed("c1")), Offer::Queued);
        assert_eq!(id(q.next().await), "early");
        // Dispatch holds a push: still queued.
        assert_eq!(q.offer_message(view("m2")), Offer::Queued);
        assert_eq!(id(q.next().await), "m1");
        assert_eq!(id(q.next().await), "c1");
        assert_eq!(id(q.next().await), "m2");
        assert!(lock(&now.taken).is_empty(), "nothing overtook the queue");
        // Dispatch comes back for more (it is done with m2) and finds none:
        // now pushes are taken on the spot.
        let waiting = tokio::time::timeout(Duration::from_millis(20), q.next()).await;
        assert!(waiting.is_err(), "nothing was queued");
        assert_eq!(q.offer_message(view("m3")), Offer::Dispatched);
        assert_eq!(q.offer(removed("c2")), Offer::Dispatched);
        assert_eq!(*lock(&now.taken), ["m3", "c2"]);
        // What dispatch gives back is queued, and what follows queues too.
        now.open.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(q.offer_message(view("m4")), Offer::Queued);
        now.open.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(q.offer_message(view("m5")), Offer::Queued);
        assert_eq!(q.figures().0, 2);
        assert_eq!(id(q.next().await), "m4");
        assert_eq!(id(q.next().await), "m5");
        assert_eq!(lock(&now.taken).len(), 2);
        // Once dispatch is gone, pushes queue (and close drops them).
        drop(now);
        let waiting = tokio::time::timeout(Duration::from_millis(20), q.next()).await;
        assert!(waiting.is_err());
        assert_eq!(q.offer_message(view("m6")), Offer::Queued);
        q.close();
        assert_eq!(q.offer_message(view("m7")), Offer::Dropped);
    }
}
