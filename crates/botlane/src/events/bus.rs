//! How events reach subscribers: a queue per subscriber that holds only
//! what it was sent and not yet read.
//!
//! Nothing is allocated up front: an idle client with no subscriber, or
//! with subscribers that keep up, holds no event slots at all (tokio's
//! broadcast channel, used before, allocated 1,024 slots of a large
//! [`Event`] per client at construction). Each event is shared between the
//! subscribers as one `Arc`.
//!
//! **Lag policy**: a subscriber holds at most [`Events::CAPACITY`] unread
//! events, holding at most [`Events::MAX_BYTES`] between them. When one more
//! arrives and either is exceeded, the oldest are dropped and counted; the
//! next [`Events::recv`] then returns [`EventRecvError::Lagged`] with the
//! count, and the one after it the oldest event still held. Sending never
//! waits, so a subscriber that does not read never slows the client.
//!
//! The byte budget is there because a message event carries its plaintext,
//! and a service may send messages of up to a frame (1 MiB) each: 1,024 of
//! them held for a subscriber that stopped reading would be a gigabyte.
//! An event's bytes are those of its strings and its fixed size, as for
//! the push queue; the newest event is always kept, whatever its size.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

use super::Event;
use crate::commands::types::{CommandArgValue, CommandInvocation};
use crate::message::Message;
use crate::sync::lock;

/// Why [`Events::recv`] returned no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EventRecvError {
    /// The subscriber fell more than [`Events::CAPACITY`] events (or
    /// [`Events::MAX_BYTES`]) behind: this many of the oldest were dropped. The next `recv` returns the
    /// oldest event still held.
    #[error("the subscriber fell behind and missed {0} events")]
    Lagged(u64),
    /// The client is gone (or shut down and its tasks have ended), and
    /// every event sent before was read.
    #[error("the client is gone: no more events will arrive")]
    Closed,
}

/// One subscriber's queue.
#[derive(Default)]
struct Queue {
    /// Each event with its weight.
    events: VecDeque<(Arc<Event>, usize)>,
    /// The sum of the weights in `events`.
    bytes: usize,
    /// Events dropped since the subscriber last heard about it.
    missed: u64,
    closed: bool,
}

#[derive(Default)]
struct Subscriber {
    queue: Mutex<Queue>,
    ready: Notify,
    /// Its bus's count of live subscribers, which it is in until dropped
    /// (`None`: it came after the bus closed).
    counted: Option<Arc<AtomicUsize>>,
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        if let Some(live) = &self.counted {
            live.fetch_sub(1, Ordering::Release);
        }
    }
}

/// The subscribers of one client. Holds them weakly: a dropped [`Events`]
/// costs nothing more. Dropping the last [`EventSender`], or
/// [`EventSender::close`], closes them all.
#[derive(Default)]
struct Bus {
    subscribers: Mutex<Vec<Weak<Subscriber>>>,
    /// How many subscribers are alive: read without the lock by a send
    /// that builds its event only for someone (most messages of most bots
    /// have no listener).
    live: Arc<AtomicUsize>,
    /// Set by [`EventSender::close`]: the client is done, though a handle
    /// of it (and so this bus) may live on in the application.
    closed: AtomicBool,
}

impl Bus {
    fn close_all(&self) {
        for subscriber in lock(&self.subscribers).drain(..) {
            if let Some(subscriber) = subscriber.upgrade() {
                lock(&subscriber.queue).closed = true;
                subscriber.ready.notify_one();
            }
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        self.close_all();
    }
}

/// The sending side, held by the parts that report events; cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct EventSender {
    bus: Arc<Bus>,
}

impl EventSender {
    /// A new subscriber; it sees the events sent from now on.
    pub(crate) fn subscribe(&self) -> Events {
        let mut subscribers = lock(&self.bus.subscribers);
        if self.bus.closed.load(Ordering::SeqCst) {
            let subscriber = Arc::new(Subscriber::default());
            lock(&subscriber.queue).closed = true;
            return Events { subscriber };
        }
        self.bus.live.fetch_add(1, Ordering::Release);
        let subscriber = Arc::new(Subscriber {
            queue: Mutex::default(),
            ready: Notify::new(),
            counted: Some(Arc::clone(&self.bus.live)),
        });
        subscribers.retain(|s| s.strong_count() > 0);
        subscribers.push(Arc::downgrade(&subscriber));
        Events { subscriber }
    }

    /// Closes every subscriber, present and future, once it has read what
    /// was sent before; later sends are dropped. For a client that was shut
    /// down while the application still holds it: its event loop ends.
    pub(crate) fn close(&self) {
        self.bus.closed.store(true, Ordering::SeqCst);
        self.bus.close_all();
    }

    /// Like [`send`](Self::send), but builds the event only when someone
    /// listens: dispatch copies a message into its event, and a bot without
    /// subscribers should not pay for the copy on every message.
    pub(crate) fn send_with(&self, event: impl FnOnce() -> Event) {
        if self.bus.live.load(Ordering::Acquire) > 0 {
            self.send(event());
        }
    }

    /// Sends to every live subscriber, without waiting. No subscriber is not
    /// an error: events are for whoever listens.
    pub(crate) fn send(&self, event: Event) {
        if self.bus.closed.load(Ordering::SeqCst) {
            return;
        }
        let subscribers: Vec<Arc<Subscriber>> = {
            let mut subscribers = lock(&self.bus.subscribers);
            subscribers.retain(|s| s.strong_count() > 0);
            subscribers.iter().filter_map(Weak::upgrade).collect()
        };
        if subscribers.is_empty() {
            return;
        }
        let weight = weight(&event);
        let event = Arc::new(event);
        for subscriber in subscribers {
            let mut queue = lock(&subscriber.queue);
            // Closed since the check above (`close` on another thread): a
            // reader may already have been told no more events will come.
            if queue.closed {
                continue;
            }
            queue.bytes += weight;
            queue.events.push_back((event.clone(), weight));
            while queue.events.len() > Events::CAPACITY
                || (queue.bytes > Events::MAX_BYTES && queue.events.len() > 1)
            {
                if let Some((_, dropped)) = queue.events.pop_front() {
                    queue.bytes -= dropped;
                    queue.missed += 1;
                }
            }
            drop(queue);
            subscriber.ready.notify_one();
        }
    }
}

/// A subscription to a client's events ([`Client::events`](crate::Client::events)).
///
/// ```no_run
/// # async fn demo(client: botlane::Client) {
/// use botlane::EventRecvError;
///
/// let mut events = client.events();
/// loop {
///     match events.recv().await {
///         Ok(event) => println!("{event:?}"),
///         Err(EventRecvError::Lagged(missed)) => eprintln!("missed {missed} events"),
///         Err(EventRecvError::Closed) => break,
///     }
/// }
/// # }
/// ```
pub struct Events {
    subscriber: Arc<Subscriber>,
}

/// Counts only: the events themselves hold message plaintext.
impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Events")
            .field("unread", &self.len())
            .finish_non_exhaustive()
    }
}

impl Events {
    /// How many unread events a subscriber holds before it loses the oldest.
    pub const CAPACITY: usize = 1024;

    /// How many bytes of unread events (their strings and fixed size) a
    /// subscriber holds before it loses the oldest: 16 MiB, as the push
    /// queue's default budget.
    pub const MAX_BYTES: usize = 16 * 1024 * 1024;

    /// The next event, waiting for one. See the lag policy on
    /// [`Events::CAPACITY`] and [`EventRecvError`].
    pub async fn recv(&mut self) -> Result<Event, EventRecvError> {
        loop {
            match self.try_recv() {
                Ok(Some(event)) => return Ok(event),
                // A send between the check and this wait leaves a permit in
                // `ready`, so the wait ends at once: no wake-up is lost.
                Ok(None) => self.subscriber.ready.notified().await,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next event if one is waiting (`Ok(None)` if not), without
    /// waiting; fails as [`recv`](Self::recv) does.
    pub fn try_recv(&mut self) -> Result<Option<Event>, EventRecvError> {
        let mut queue = lock(&self.subscriber.queue);
        if queue.missed > 0 {
            return Err(EventRecvError::Lagged(std::mem::take(&mut queue.missed)));
        }
        match queue.events.pop_front() {
            // The last subscriber holding an event takes it without a copy.
            Some((event, weight)) => {
                queue.bytes -= weight;
                Ok(Some(
                    Arc::try_unwrap(event).unwrap_or_else(|shared| (*shared).clone()),
                ))
            }
            None if queue.closed => Err(EventRecvError::Closed),
            None => Ok(None),
        }
    }

    /// How many events wait to be read.
    pub fn len(&self) -> usize {
        lock(&self.subscriber.queue).events.len()
    }

    /// Whether no event waits to be read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes the events waiting to be read hold, as counted
    /// against [`Events::MAX_BYTES`] (their strings and fixed size).
    pub fn unread_bytes(&self) -> usize {
        lock(&self.subscriber.queue).bytes
    }
}

/// What an event holds, as counted against [`Events::MAX_BYTES`]: its fixed
/// size and its strings. The texts of a parse or argument error (names and
/// a usage line, bounded by the declaration) and a handler's error are
/// counted as their fixed size only.
fn weight(event: &Event) -> usize {
    std::mem::size_of::<Event>()
        + match event {
            Event::Ready { bot_id } => bot_id.len(),
            Event::Message(message) => message_weight(message),
            Event::CommandError(error) => {
                error.command.len()
                    + message_weight(&error.message)
                    + error.invocation.as_ref().map_or(0, invocation_weight)
            }
            Event::SendRejected(rejected) => {
                rejected.channel_id.len()
                    + rejected.reply_to.as_ref().map_or(0, String::len)
                    + rejected.reason.as_ref().map_or(0, String::len)
            }
            Event::Disconnected { reason, .. }
            | Event::ReconnectFailed { reason, .. }
            | Event::LoginFailed { reason, .. } => reason.len(),
            Event::Reconnected => 0,
        }
}

fn message_weight(message: &Message) -> usize {
    message.id.len()
        + message.channel_id.len()
        + message.author_id.len()
        + message.content.len()
        + message.reply_to.as_ref().map_or(0, String::len)
        + message.command.as_ref().map_or(0, invocation_weight)
}

fn invocation_weight(invocation: &CommandInvocation) -> usize {
    invocation.name.len()
        + invocation
            .args
            .iter()
            .map(|(name, value)| {
                std::mem::size_of::<CommandArgValue>()
                    + name.len()
                    + match value {
                        CommandArgValue::String(s) => s.len(),
                        _ => 0,
                    }
            })
            .sum::<usize>()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn reconnected() -> Event {
        Event::Reconnected
    }

    fn ready(n: usize) -> Event {
        Event::Ready {
            bot_id: n.to_string(),
        }
    }

    fn id(event: Event) -> String {
        match event {
            Event::Ready { bot_id } => bot_id,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn every_subscriber_gets_every_event_in_order() {
        let sender = EventSender::default();
        let mut a = sender.subscribe();
        let mut b = sender.subscribe();
        for n in 0..3 {
            sender.send(ready(n));
        }
        for events in [&mut a, &mut b] {
            for n in 0..3 {
                assert_eq!(id(events.recv().await.unwrap()), n.to_string());
            }
            assert!(events.is_empty());
        }
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_loses_the_oldest_and_is_told_how_many() {
        let sender = EventSender::default();
        let mut slow = sender.subscribe();
        let mut fast = sender.subscribe();
        for n in 0..Events::CAPACITY + 5 {
            sender.send(ready(n));
            assert_eq!(id(fast.recv().await.unwrap()), n.to_string());
        }
        assert_eq!(slow.len(), Events::CAPACITY, "bounded per subscriber");
        assert_eq!(slow.recv().await.unwrap_err(), EventRecvError::Lagged(5));
        assert_eq!(id(slow.recv().await.unwrap()), "5", "then the oldest kept");
        assert_eq!(slow.len(), Events::CAPACITY - 1);
    }

    fn large(n: usize, bytes: usize) -> Event {
        let mut reason = n.to_string();
        reason.push_str(&" ".repeat(bytes - reason.len()));
        Event::Disconnected {
            reason,
            will_reconnect: true,
        }
    }

    fn reason(event: Event) -> String {
        match event {
            Event::Disconnected { reason, .. } => reason.trim_end().to_owned(),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_subscriber_holds_at_most_event_bytes_and_loses_the_oldest() {
        let sender = EventSender::default();
        let mut slow = sender.subscribe();
        let quarter = Events::MAX_BYTES / 4;
        for n in 0..6 {
            sender.send(large(n, quarter));
        }
        // Four quarters and their fixed size are over the budget: three fit.
        assert_eq!(slow.len(), 3);
        assert_eq!(slow.unread_bytes(), 3 * (quarter + size_of::<Event>()));
        assert_eq!(slow.recv().await.unwrap_err(), EventRecvError::Lagged(3));
        for n in 3..6 {
            assert_eq!(reason(slow.recv().await.unwrap()), n.to_string());
        }
        assert_eq!(slow.unread_bytes(), 0, "reading gives the bytes back");
    }

    #[tokio::test]
    async fn an_event_over_the_byte_budget_alone_is_still_delivered() {
        let sender = EventSender::default();
        let mut slow = sender.subscribe();
        sender.send(ready(1));
        sender.send(large(2, Events::MAX_BYTES + 1));
        assert_eq!(slow.len(), 1, "the newest is kept, the older dropped");
        assert_eq!(slow.recv().await.unwrap_err(), EventRecvError::Lagged(1));
        assert_eq!(reason(slow.recv().await.unwrap()), "2");
    }

    #[tokio::test]
    async fn nothing_is_held_without_subscribers_or_for_dropped_ones() {
        let sender = EventSender::default();
        sender.send(reconnected());
        let mut late = sender.subscribe();
        assert!(late.is_empty(), "a subscriber sees only later events");
        let dropped = sender.subscribe();
        drop(dropped);
        sender.send(reconnected());
        assert_eq!(lock(&sender.bus.subscribers).len(), 1);
        assert!(matches!(late.recv().await.unwrap(), Event::Reconnected));
    }

    #[tokio::test]
    async fn an_event_is_built_only_when_someone_listens() {
        let sender = EventSender::default();
        let built = std::cell::Cell::new(0);
        let make = || {
            built.set(built.get() + 1);
            reconnected()
        };
        sender.send_with(make);
        let dropped = sender.subscribe();
        drop(dropped);
        sender.send_with(make);
        assert_eq!(built.get(), 0, "no live subscriber, nothing built");
        let mut listener = sender.subscribe();
        sender.send_with(make);
        assert_eq!(built.get(), 1);
        assert!(matches!(listener.recv().await.unwrap(), Event::Reconnected));
    }

    #[tokio::test]
    async fn a_waiting_subscriber_is_woken_and_closed_after_the_last_sender() {
        let sender = EventSender::default();
        let mut events = sender.subscribe();
        let waiter = tokio::spawn(async move {
            let first = events.recv().await;
            let then = events.recv().await;
            (first.is_ok(), then.err())
        });
        tokio::task::yield_now().await;
        let clone = sender.clone();
        sender.send(reconnected());
        drop(sender);
        tokio::task::yield_now().await;
        drop(clone);
        assert_eq!(waiter.await.unwrap(), (true, Some(EventRecvError::Closed)));
    }

    #[tokio::test]
    async fn a_closed_bus_closes_its_subscribers_after_what_they_were_sent() {
        let sender = EventSender::default();
        let mut events = sender.subscribe();
        sender.send(ready(1));
        sender.close();
        sender.send(ready(2));
        assert_eq!(id(events.recv().await.unwrap()), "1");
        assert_eq!(events.recv().await.unwrap_err(), EventRecvError::Closed);
        let mut late = sender.subscribe();
        assert_eq!(late.recv().await.unwrap_err(), EventRecvError::Closed);
    }

    /// A send racing `close` on another thread: the send passed the bus's
    /// closed check, then `close` closed every queue and the reader was
    /// told `Closed`, then the send reached the queue. It used to push
    /// there, so an event followed `Closed`. The interleaving is set up by
    /// hand: the queue closed, the bus not yet.
    #[test]
    fn a_send_that_reaches_a_closed_queue_leaves_it_closed() {
        let sender = EventSender::default();
        let mut events = sender.subscribe();
        lock(&events.subscriber.queue).closed = true;
        assert!(matches!(events.try_recv(), Err(EventRecvError::Closed)));
        sender.send(ready(1));
        let after = events.try_recv();
        assert!(
            matches!(after, Err(EventRecvError::Closed)),
            "{after:?} after Closed"
        );
    }

    #[tokio::test]
    async fn events_sent_before_the_close_are_still_read() {
        let sender = EventSender::default();
        let mut events = sender.subscribe();
        sender.send(ready(1));
        drop(sender);
        assert_eq!(id(events.recv().await.unwrap()), "1");
        assert_eq!(events.recv().await.unwrap_err(), EventRecvError::Closed);
    }
}
