//! Where a connection hands its pushes: into the push queue, in wire order,
//! without waiting (op 33 notifications are only logged).

use std::sync::{Arc, Weak};

use tokio::sync::watch;

use super::push_queue::{DispatchCache, DispatchNow, Limit, Offer, CONTROL_CAPACITY};
use super::{Counters, Session};
use crate::transport::{Inbound, MessageView, Push, Warnings};

/// The session's side of a connection. Holds the session weakly: the
/// connection task must not keep a dropped client's session alive.
pub(super) struct SessionInbound {
    pub(super) session: Weak<Session>,
    pub(super) counters: Arc<Counters>,
    pub(super) warnings: Arc<Warnings>,
    /// Set once this connection's `ready` has been handed to dispatch
    /// (applied, or queued): whether the supervisor waits for dispatch to
    /// apply it, before `Disconnected` or `Reconnected`.
    pub(super) ready: watch::Sender<bool>,
    /// This connection's number, which its `ready` carries to dispatch
    /// (`phase.rs`).
    pub(super) connection: u64,
    /// The connection task holds its inbound side until it has ended
    /// (closing handshake included), so this counts the task as live.
    pub(super) _live: Live,
}

/// One running connection task in the session's count, from creation to
/// drop.
pub(super) struct Live(Arc<watch::Sender<usize>>);

impl Live {
    pub(super) fn new(count: &Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(Arc::clone(count))
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// What the connection task keeps from one frame to the next.
#[derive(Default)]
pub(super) struct Held {
    /// The session and dispatch, kept while pushes come back to back: one
    /// look-up of each per burst instead of one per push (each look-up is
    /// a count taken and let go; the two were 3 % of a message's time
    /// under `perf`, `docs/benchmarks.md`). Let go when reading pauses.
    session: Option<Arc<Session>>,
    dispatch: Option<Arc<dyn DispatchNow>>,
    /// What dispatch keeps from one message to the next: its caches of the
    /// bot's id and of the registry, which hold no session.
    cache: DispatchCache,
    /// Frames read and not yet added to the session's count: added when
    /// reading pauses and when the connection ends, one atomic add per
    /// burst instead of one per frame.
    frames: u64,
    counters: Option<Arc<Counters>>,
}

impl Held {
    fn add_frames(&mut self) {
        if let Some(counters) = &self.counters
            && self.frames > 0
        {
            Counters::add(&counters.frames_received, std::mem::take(&mut self.frames));
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.add_frames();
    }
}

/// The session held, looked up first if none is; `None` once the client
/// has gone.
fn session<'a>(held: &'a mut Option<Arc<Session>>, weak: &Weak<Session>) -> Option<&'a Session> {
    if held.is_none() {
        *held = weak.upgrade();
    }
    held.as_deref()
}

impl Inbound for SessionInbound {
    type Held = Held;

    fn push(&self, held: &mut Held, mut push: Push) -> Result<(), String> {
        let Some(session) = session(&mut held.session, &self.session) else {
            return Ok(());
        };
        if matches!(push, Push::Notification) {
            tracing::debug!("notification");
            return Ok(());
        }
        let ready = match &mut push {
            Push::Ready(_, connection) => {
                *connection = self.connection;
                true
            }
            _ => false,
        };
        let offer = session.queue.offer(push, self.connection);
        // Not a `ready` the control queue refused: it is never applied.
        if ready && matches!(offer, Offer::Dispatched | Offer::Queued) {
            self.ready.send_replace(true);
        }
        offered(session, offer)
    }

    fn message(&self, held: &mut Held, mut message: MessageView<'_>) -> Result<(), String> {
        let Held {
            session: slot,
            dispatch,
            cache,
            ..
        } = held;
        let Some(session) = session(slot, &self.session) else {
            return Ok(());
        };
        let offer = session
            .queue
            .offer_message(&mut message, self.connection, dispatch, cache);
        offered(session, offer)
    }

    fn frame_received(&self, held: &mut Held) {
        if held.counters.is_none() {
            held.counters = Some(Arc::clone(&self.counters));
        }
        held.frames += 1;
    }

    fn idle(&self, held: &mut Held) {
        held.add_frames();
        held.session = None;
        held.dispatch = None;
    }

    fn warnings(&self) -> &Warnings {
        &self.warnings
    }
}

/// What the connection is told of an offered push.
fn offered(session: &Session, offer: Offer) -> Result<(), String> {
    match offer {
        // Discarded: a failed login's `ready` or membership push, which the
        // next session's `ready` stands for, or a push of a connection
        // that a later one replaced.
        Offer::Dispatched | Offer::Queued | Offer::Discarded => {}
        Offer::Dropped => {
            if let Some(swallowed) = session.pushes_dropped.allow() {
                let (_, _, dropped) = session.queue.figures();
                tracing::warn!(
                    capacity = session.config.push_queue_capacity,
                    bytes = session.config.push_queue_bytes,
                    dropped_total = dropped,
                    swallowed,
                    "dropping a message push: dispatch is behind and the push queue is full"
                );
            }
        }
        Offer::ControlOverflow(limit) => {
            let limit = match limit {
                Limit::Count => format!("{CONTROL_CAPACITY} pushes"),
                Limit::Bytes => format!(
                    "control_queue_bytes = {} bytes",
                    session.config.control_queue_bytes
                ),
            };
            return Err(format!(
                "the service sent more channel-key, ready and membership pushes than may wait \
                 for dispatch ({limit}; closed with 1008)"
            ));
        }
    }
    Ok(())
}
