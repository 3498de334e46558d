//! A connection's outgoing queue, bounded in bytes: frames wait here for the
//! connection's writer task.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

/// What a connection's writer task is told to do.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// Write this text frame.
    Frame(String),
    /// Write a close frame and stop.
    Close { code: u16, reason: String },
}

/// The sending side, kept in the state.
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<Outbound>,
    queued: Arc<AtomicUsize>,
    cap: usize,
}

/// The receiving side, owned by the writer task.
pub(crate) struct OutboxReader {
    rx: mpsc::UnboundedReceiver<Outbound>,
    queued: Arc<AtomicUsize>,
}

/// A queue holding at most `cap` bytes of frames (and always one frame).
pub(crate) fn outbox(cap: usize) -> (Outbox, OutboxReader) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let reader = OutboxReader {
        rx,
        queued: Arc::clone(&queued),
    };
    (Outbox { tx, queued, cap }, reader)
}

impl Outbox {
    /// Queues a frame; `false`, queueing nothing, when it does not fit.
    pub(crate) fn push_frame(&self, text: String) -> bool {
        let len = text.len();
        let queued = self.queued.load(Ordering::Acquire);
        if queued > 0 && queued.saturating_add(len) > self.cap {
            return false;
        }
        self.queued.fetch_add(len, Ordering::AcqRel);
        // A closed channel means the writer is gone: the connection is
        // ending and will be removed by its reader loop.
        let _ = self.tx.send(Outbound::Frame(text));
        true
    }

    /// Queues a close frame after the frames already queued (outside the cap:
    /// there is one per connection).
    pub(crate) fn push_close(&self, code: u16, reason: String) {
        let _ = self.tx.send(Outbound::Close { code, reason });
    }
}

impl OutboxReader {
    pub(crate) async fn recv(&mut self) -> Option<Outbound> {
        self.rx.recv().await
    }

    /// Releases the room a written (or abandoned) frame took.
    pub(crate) fn release(&self, len: usize) {
        self.queued.fetch_sub(len, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_cap_counts_bytes_and_always_admits_one_frame() {
        let (outbox, mut reader) = outbox(10);
        assert!(
            outbox.push_frame("x".repeat(25)),
            "an empty queue takes any frame"
        );
        assert!(!outbox.push_frame("y".into()), "a full queue takes nothing");
        let Some(Outbound::Frame(text)) = reader.recv().await else {
            panic!("the frame was queued");
        };
        reader.release(text.len());
        assert!(outbox.push_frame("a".repeat(6)));
        assert!(outbox.push_frame("b".repeat(4)));
        assert!(!outbox.push_frame("c".into()));
        outbox.push_close(1008, "bye".into());
    }
}
