//! A connection's outgoing queue, bounded in bytes: frames wait here for the
//! connection's writer task.
//!
//! Two kinds of frames fill it. Replies and pushes caused by the
//! connection's own requests are always queued, and the connection's reader
//! stops reading requests while the queue is over its cap (backpressure: a
//! client that pipelines faster than it reads is slowed, never closed).
//! Frames caused by others (messages, notifications, keys, membership
//! pushes) cannot wait for this client: one that does not fit means the
//! client is not reading, and the connection is closed.

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

/// What a connection's writer task is told to do.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// Write this text frame (UTF-8; its bytes may be shared with other
    /// connections' queues).
    Frame(Bytes),
    /// Write a close frame and stop.
    Close { code: u16, reason: String },
}

/// The sending side, kept in the state.
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<Outbound>,
    queued: Arc<watch::Sender<usize>>,
    cap: usize,
}

/// The receiving side, owned by the writer task.
pub(crate) struct OutboxReader {
    rx: mpsc::UnboundedReceiver<Outbound>,
    queued: Arc<watch::Sender<usize>>,
}

/// What the connection's reader loop watches: the bytes queued.
pub(crate) struct Backlog {
    queued: watch::Receiver<usize>,
    cap: usize,
}

/// A queue holding at most `cap` bytes of frames caused by others (and
/// always one frame).
pub(crate) fn outbox(cap: usize) -> (Outbox, OutboxReader, Backlog) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (queued, watched) = watch::channel(0);
    let queued = Arc::new(queued);
    let reader = OutboxReader {
        rx,
        queued: Arc::clone(&queued),
    };
    let backlog = Backlog {
        queued: watched,
        cap,
    };
    (Outbox { tx, queued, cap }, reader, backlog)
}

impl Outbox {
    /// Queues a frame. One caused by the connection's own request is always
    /// queued; one caused by others is refused (`false`, nothing queued)
    /// when it does not fit under the cap.
    pub(crate) fn push_frame(&self, text: Bytes, own: bool) -> bool {
        let len = text.len();
        let queued = *self.queued.borrow();
        if !own && queued > 0 && queued.saturating_add(len) > self.cap {
            return false;
        }
        self.queued.send_modify(|q| *q += len);
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

    /// The next queued item, if one is waiting now.
    pub(crate) fn try_recv(&mut self) -> Option<Outbound> {
        self.rx.try_recv().ok()
    }

    /// Releases the room a written (or abandoned) frame took.
    pub(crate) fn release(&self, len: usize) {
        self.queued.send_modify(|q| *q = q.saturating_sub(len));
    }
}

impl Backlog {
    /// Whether the queue is at or over its cap: read no more requests.
    pub(crate) fn full(&self) -> bool {
        *self.queued.borrow() >= self.cap
    }

    /// Resolves once the queue is under its cap again.
    pub(crate) async fn drained(&mut self) {
        let cap = self.cap;
        // An error means the writer and the state are gone: the connection
        // is ending by another path; never resolve here.
        if self.queued.wait_for(|q| *q < cap).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_cap_counts_bytes_for_others_and_backpressures_own_frames() {
        let (outbox, mut reader, mut backlog) = outbox(10);
        assert!(
            outbox.push_frame("x".repeat(25).into(), false),
            "an empty queue takes any frame"
        );
        assert!(
            !outbox.push_frame(Bytes::from_static(b"y"), false),
            "a full queue takes no one else's"
        );
        assert!(backlog.full());
        assert!(
            outbox.push_frame(Bytes::from_static(b"own"), true),
            "own frames always queue"
        );
        let Some(Outbound::Frame(text)) = reader.recv().await else {
            panic!("the frame was queued");
        };
        reader.release(text.len());
        assert!(!backlog.full());
        backlog.drained().await;
        assert!(outbox.push_frame("a".repeat(3).into(), false));
        assert!(outbox.push_frame("b".repeat(4).into(), false));
        assert!(!outbox.push_frame(Bytes::from_static(b"c"), false));
        outbox.push_close(1008, "bye".into());
    }
}
