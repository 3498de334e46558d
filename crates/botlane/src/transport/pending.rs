//! The requests a connection has written and not yet seen answered: one
//! FIFO of reply slots per opcode, in wire order. Replies carry no request
//! id, so each goes to the oldest slot of its opcode, and a slot whose
//! caller gave up keeps its place until its reply comes (or the replies
//! after it would reach the wrong callers). The connection task queues a
//! slot in the same step that writes its request, and fails every slot
//! when the connection ends.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::error::ClientError;
use crate::sync::lock;

/// Where a request's reply (or its failure) goes.
pub(super) type Slot = oneshot::Sender<Result<String, ClientError>>;

/// The most requests of one opcode left unanswered before the connection
/// is ended: a backstop to [`Pending::oldest_past`], which ends it sooner
/// unless the requests are very many and very recent.
pub(super) const MAX_UNANSWERED: usize = 65_536;

/// The slots of one connection, each with when its request was written.
#[derive(Default)]
pub(super) struct Pending(Mutex<HashMap<u16, VecDeque<(Instant, Slot)>>>);

impl Pending {
    /// Queues the slot of a request of opcode `op` written now; gives it
    /// back when [`MAX_UNANSWERED`] of that opcode already wait.
    pub(super) fn push(&self, op: u16, slot: Slot) -> Result<(), Slot> {
        let mut pending = lock(&self.0);
        let slots = pending.entry(op).or_default();
        if slots.len() >= MAX_UNANSWERED {
            return Err(slot);
        }
        slots.push_back((Instant::now(), slot));
        Ok(())
    }

    /// The oldest slot of opcode `op`, which a reply of that opcode answers.
    pub(super) fn pop(&self, op: u16) -> Option<Slot> {
        lock(&self.0)
            .get_mut(&op)
            .and_then(VecDeque::pop_front)
            .map(|(_, slot)| slot)
    }

    /// An opcode whose oldest unanswered request has waited longer than
    /// `limit`, and how long.
    pub(super) fn oldest_past(&self, limit: Duration) -> Option<(u16, Duration)> {
        lock(&self.0).iter().find_map(|(op, slots)| {
            let waited = slots.front()?.0.elapsed();
            (waited > limit).then_some((*op, waited))
        })
    }

    /// Fails every waiting slot: the connection has ended.
    pub(super) fn fail_all(&self) {
        let slots = std::mem::take(&mut *lock(&self.0));
        for (opcode, slots) in slots {
            for (_, slot) in slots {
                let _ = slot.send(Err(ClientError::ConnectionClosed { opcode }));
            }
        }
    }

    /// How many slots of opcode `op` wait.
    #[cfg(test)]
    pub(super) fn waiting(&self, op: u16) -> usize {
        lock(&self.0).get(&op).map_or(0, VecDeque::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> Slot {
        oneshot::channel().0
    }

    fn push(pending: &Pending, op: u16) {
        assert!(pending.push(op, slot()).is_ok(), "under the cap");
    }

    #[test]
    fn an_opcode_takes_at_most_max_unanswered_slots() {
        let pending = Pending::default();
        for _ in 0..MAX_UNANSWERED {
            push(&pending, 30);
        }
        assert!(pending.push(30, slot()).is_err(), "one past the cap");
        push(&pending, 12);
        assert!(pending.pop(30).is_some());
        push(&pending, 30);
        assert_eq!(pending.waiting(30), MAX_UNANSWERED, "a reply made room");
    }

    #[tokio::test(start_paused = true)]
    async fn the_oldest_unanswered_request_is_the_one_that_counts() {
        let limit = Duration::from_secs(60);
        let pending = Pending::default();
        push(&pending, 30);
        tokio::time::advance(Duration::from_secs(40)).await;
        push(&pending, 12);
        push(&pending, 30);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(
            pending.oldest_past(limit),
            Some((30, Duration::from_secs(70))),
            "op 30's first request waited 70 s"
        );
        // Its reply comes: what is left has waited 30 s.
        assert!(pending.pop(30).is_some());
        assert_eq!(pending.oldest_past(limit), None);
        tokio::time::advance(Duration::from_secs(31)).await;
        assert!(pending
            .oldest_past(limit)
            .is_some_and(|(_, waited)| waited > limit));
    }

    #[tokio::test]
    async fn fail_all_fails_every_slot_with_its_opcode() {
        let pending = Pending::default();
        let (tx, rx) = oneshot::channel();
        assert!(pending.push(240, tx).is_ok(), "under the cap");
        pending.fail_all();
        assert!(matches!(
            rx.await,
            Ok(Err(ClientError::ConnectionClosed { opcode: 240 }))
        ));
        assert_eq!(pending.waiting(240), 0);
    }
}
