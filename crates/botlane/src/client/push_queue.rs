//! The bounded queue of message pushes between the connection task and
//! dispatch.
//!
//! The connection task never waits on it: when it is full the incoming
//! message is dropped and counted, so the socket keeps being read and
//! replies keep flowing however far dispatch falls behind. Only op 32
//! (`message_create`) goes through here; channel keys, `ready` and
//! membership pushes are applied by the connection task itself and can
//! never be dropped.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::wire::WireMessage;

#[derive(Debug)]
pub(crate) struct PushQueue {
    capacity: usize,
    state: Mutex<State>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct State {
    items: VecDeque<WireMessage>,
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

    /// Queues a message, or drops it when the queue is full (`false`).
    pub(crate) fn offer(&self, message: WireMessage) -> bool {
        let mut state = super::lock(&self.state);
        if state.closed {
            return false;
        }
        if state.items.len() >= self.capacity {
            state.dropped += 1;
            return false;
        }
        state.items.push_back(message);
        state.peak = state.peak.max(state.items.len());
        drop(state);
        self.ready.notify_one();
        true
    }

    /// The next message in arrival order; `None` once closed.
    pub(crate) async fn next(&self) -> Option<WireMessage> {
        loop {
            {
                let mut state = super::lock(&self.state);
                if state.closed {
                    return None;
                }
                if let Some(message) = state.items.pop_front() {
                    return Some(message);
                }
            }
            // A permit stored by an `offer` between the check and here
            // completes this at once: no wake-up is lost.
            self.ready.notified().await;
        }
    }

    /// Ends dispatch: queued messages are discarded.
    pub(crate) fn close(&self) {
        let mut state = super::lock(&self.state);
        state.closed = true;
        state.items.clear();
        drop(state);
        self.ready.notify_one();
    }

    /// (length, peak length, dropped so far).
    pub(crate) fn figures(&self) -> (usize, usize, u64) {
        let state = super::lock(&self.state);
        (state.items.len(), state.peak, state.dropped)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn message(id: &str) -> WireMessage {
        WireMessage {
            id: id.into(),
            channel_id: "c".into(),
            author_id: "u".into(),
            content: String::new(),
            command: None,
            reply_to: None,
            created_at: 0,
        }
    }

    #[tokio::test]
    async fn a_full_queue_drops_and_counts_without_waiting() {
        let q = PushQueue::new(3);
        for i in 0..10 {
            q.offer(message(&i.to_string()));
        }
        assert_eq!(q.figures(), (3, 3, 7));
        assert_eq!(q.next().await.unwrap().id, "0");
        assert!(q.offer(message("late")));
        let ids: Vec<String> = [q.next().await, q.next().await, q.next().await]
            .into_iter()
            .map(|m| m.unwrap().id)
            .collect();
        assert_eq!(ids, ["1", "2", "late"]);
        assert_eq!(q.figures(), (0, 3, 7));
    }

    #[tokio::test]
    async fn a_waiting_consumer_is_woken_and_close_ends_it() {
        let q = std::sync::Arc::new(PushQueue::new(4));
        let consumer = {
            let q = q.clone();
            tokio::spawn(async move {
                let first = q.next().await.map(|m| m.id);
                (first, q.next().await.is_none())
            })
        };
        tokio::task::yield_now().await;
        q.offer(message("a"));
        while q.figures().0 > 0 {
            tokio::task::yield_now().await;
        }
        q.close();
        assert_eq!(consumer.await.unwrap(), (Some("a".into()), true));
        assert!(!q.offer(message("after close")));
    }
}
