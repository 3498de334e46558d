//! Events delivered to subscribers of [`Client::events`](crate::Client::events),
//! and how they are delivered (`bus.rs`).

mod bus;

pub(crate) use bus::EventSender;
pub use bus::{EventRecvError, Events, EVENT_BYTES, EVENT_CAPACITY};

use std::time::Duration;

use crate::commands::{CommandError, Message};

/// Everything the client reports. Subscribe with
/// [`Client::events`](crate::Client::events).
// Events are matched far more often than they are moved; boxing the large
// variants would only add a deref to every match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// The first login succeeded.
    Ready {
        /// The bot's own id.
        bot_id: String,
    },
    /// A live message arrived in one of the bot's channels (including the
    /// bot's own, which never carry a command).
    Message(Message),
    /// A command failed: its text line did not parse, its arguments did
    /// not fit, a check refused it, it was cooling down, or its handler
    /// returned an error, panicked or timed out. Emitted whatever the
    /// error hook ([`OnError`](crate::OnError)) does.
    CommandError(CommandError),
    /// The service denied a message sent with `reply`, `send` or `send_command`.
    SendRejected(SendRejected),
    /// The realtime connection was lost.
    Disconnected {
        /// Why, in one sentence.
        reason: String,
        /// Whether the client will try again (false after a refused login).
        will_reconnect: bool,
    },
    /// An attempt to log in again after a disconnect failed (the service
    /// could not be reached, closed the connection, answered the login
    /// with an error or not in time); the client tries again after
    /// `retry_in`. Between a [`Disconnected`](Self::Disconnected) with
    /// `will_reconnect: true` and the [`Reconnected`](Self::Reconnected)
    /// (or the `Disconnected` with `will_reconnect: false` of a refused
    /// token) that ends the outage: what a dashboard shows while a bot is
    /// away.
    ReconnectFailed {
        /// Which attempt since the disconnect, from 1.
        attempt: u32,
        /// Why, in one sentence.
        reason: String,
        /// How long the client waits before the next attempt (the backoff,
        /// jittered).
        retry_in: Duration,
    },
    /// The client logged in again after a disconnect and republished its menu.
    Reconnected,
}

/// The payload of [`Event::SendRejected`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SendRejected {
    /// The channel the message was meant for.
    pub channel_id: String,
    /// The message it replied to, for a reply.
    pub reply_to: Option<String>,
    /// The service's reply code (`-3` no permission, `-4` unknown channel, `-9` rate limited…).
    pub code: i32,
    /// The service's reason, when it gave one.
    pub reason: Option<String>,
}
