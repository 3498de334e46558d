//! The bounded queue of pushes between the connection task and dispatch,
//! in wire order.
//!
//! The connection task never waits on it, so the socket keeps being read and
//! replies keep flowing however far dispatch falls behind. Two budgets:
//!
//! - message pushes (op 32): at most `push_queue_capacity` wait; when full,
//!   the incoming message is dropped and counted;
//! - control pushes (`ready`, channel keys, ops 34/35) are never dropped
//!   (the service delivers each key once); at most [`CONTROL_CAPACITY`]
//!   wait, more than a well-behaved service ever sends at once, and beyond
//!   that the connection is closed with a stated reason instead.
//!
//! One queue for both keeps wire order: a key is applied before a later
//! message of its channel is opened, and a message that arrived before its
//! channel's key (or after its channel was left) is not opened with it.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::sync::lock;
use crate::transport::Push;

/// The most control pushes that may wait for dispatch.
pub(crate) const CONTROL_CAPACITY: usize = 4096;

/// What became of an offered push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    Queued,
    /// A message, dropped (and counted) because the queue is full, or
    /// anything offered after `close`.
    Dropped,
    /// A control push with [`CONTROL_CAPACITY`] already waiting.
    ControlOverflow,
}

#[derive(Debug)]
pub(crate) struct PushQueue {
    capacity: usize,
    state: Mutex<State>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct State {
    items: VecDeque<Push>,
    messages: usize,
    control: usize,
    peak: usize,
    dropped: u64,
    closed: bool,
}

impl PushQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            state: Mutex::new(State::default()),
            ready: Notify::new(),
        }
    }

    /// Queues a push without waiting.
    pub(crate) fn offer(&self, push: Push) -> Offer {
        let mut state = lock(&self.state);
        if state.closed {
            return Offer::Dropped;
        }
        if matches!(push, Push::Message(_)) {
            if state.messages >= self.capacity {
                state.dropped += 1;
                return Offer::Dropped;
            }
            state.messages += 1;
            state.peak = state.peak.max(state.messages);
        } else {
            if state.control >= CONTROL_CAPACITY {
                return Offer::ControlOverflow;
            }
            state.control += 1;
        }
        state.items.push_back(push);
        drop(state);
        self.ready.notify_one();
        Offer::Queued
    }

    /// The next push in arrival order; `None` once closed.
    pub(crate) async fn next(&self) -> Option<Push> {
        loop {
            {
                let mut state = lock(&self.state);
                if state.closed {
                    return None;
                }
                if let Some(push) = state.items.pop_front() {
                    if matches!(push, Push::Message(_)) {
                        state.messages -= 1;
                    } else {
                        state.control -= 1;
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
        state.messages = 0;
        state.control = 0;
        drop(state);
        self.ready.notify_one();
    }

    /// Messages waiting, the most that ever waited, messages dropped so far.
    pub(crate) fn figures(&self) -> (usize, usize, u64) {
        let state = lock(&self.state);
        (state.messages, state.peak, state.dropped)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
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
        let q = PushQueue::new(3);
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
        let q = PushQueue::new(1);
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
        assert_eq!(q.offer(removed("one too many")), Offer::ControlOverflow);
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
        assert_eq!(q.offer(Push::Ready(ready)), Offer::ControlOverflow);
    }

    #[tokio::test]
    async fn a_waiting_consumer_is_woken_and_close_ends_it() {
        let q = std::sync::Arc::new(PushQueue::new(4));
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
}
