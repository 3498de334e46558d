//! Events delivered to subscribers of [`Client::events`](crate::Client::events),
//! and how they are delivered (`bus.rs`).

mod bus;

pub(crate) use bus::EventSender;
pub use bus::{EventRecvError, Events};

use std::time::Duration;

use crate::framework::command_error::CommandError;
use crate::message::Message;

/// Everything the client reports. Subscribe with
/// [`Client::events`](crate::Client::events).
// Events are matched far more often than they are moved; boxing the large
// variants would only add a deref to every match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// An attempt of the first [`login`](crate::Client::login) failed for
    /// a reason that may pass (the service could not be reached, answered
    /// the upgrade with a 5xx or 429, closed the connection or did not
    /// answer in time), and `login` tries again after `retry_in`, within
    /// its [`login_deadline`](crate::ClientOptions::login_deadline): what a
    /// dashboard shows while a bot waits for a busy or restarting service.
    /// The failure of the attempt that is not retried is `login`'s error.
    LoginFailed {
        /// Which attempt of this login, from 1.
        attempt: u32,
        /// Why, in one sentence.
        reason: String,
        /// How long the client waits before the next attempt (the backoff,
        /// jittered, or the service's `Retry-After` when later).
        retry_in: Duration,
    },
    /// The first login succeeded: the session's first event, sent once.
    /// `Client::channels` lists the session's channels by then (its
    /// `ready` applied), unless no `ready` came within the request timeout
    /// or the first connection ended before it did; then `Ready` still
    /// comes first, before that connection's
    /// [`Disconnected`](Self::Disconnected).
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
    /// error hook ([`OnError`](crate::framework::OnError)) does.
    CommandError(CommandError),
    /// The service denied a message sent with `reply`, `send` or `send_command`.
    SendRejected(SendRejected),
    /// The realtime connection was lost; sent as soon as it ended (its
    /// closing handshake may still be under way), never before
    /// [`Ready`](Self::Ready). From then until the session is back,
    /// requests fail at once with
    /// [`ClientError::NotConnected`](crate::ClientError::NotConnected)
    /// and a REST mint waits for the next session (up to the request
    /// timeout).
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
    /// The client logged in again after a disconnect, republished its
    /// menu, and dispatch has applied the new session's `ready`:
    /// `Client::channels` lists the new session's channels when this is
    /// read (unless the service sent no `ready` within the request
    /// timeout). Dispatch sends it in the step that applies that `ready`,
    /// so every event of the new session (a `Message`, `CommandError` or
    /// `SendRejected` of what the service sent after it) comes after this
    /// one. Dispatch applies `ready` in wire order, after the pushes of
    /// the old session it still holds, so a handler holding every permit
    /// delays this event, for at most another request timeout: then it is
    /// sent anyway, with a warning, before `Client::channels` lists the
    /// new channels (and still before the new session's events). A
    /// connection that ends before then is reported as a
    /// [`ReconnectFailed`](Self::ReconnectFailed) attempt.
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
