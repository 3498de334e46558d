//! Events delivered to subscribers of [`Client::events`](crate::Client::events),
//! and how they are delivered (`bus.rs`).

mod bus;

use std::fmt;
use std::sync::Arc;

pub(crate) use bus::EventSender;
pub use bus::{EventRecvError, Events, EVENT_CAPACITY};

use crate::commands::{BoxError, CommandInvocation, Message, ParseError};

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
    /// A command failed: its handler returned an error or panicked, or its
    /// text line did not parse, or its structured arguments did not fit.
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
    /// The client logged in again after a disconnect and republished its menu.
    Reconnected,
}

/// Why a command failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandErrorReason {
    /// The handler returned `Err` or panicked.
    Handler,
    /// The text line invoked a registered command but did not parse.
    Parse,
    /// A structured invocation addressed to this bot named a registered
    /// command but its arguments did not fit the declaration, or a typed
    /// command's arguments did not fit its Rust type
    /// ([`ArgsError`](crate::ArgsError), in `error`).
    Arguments,
}

/// The payload of [`Event::CommandError`].
#[derive(Clone)]
#[non_exhaustive]
pub struct CommandError {
    /// Why.
    pub reason: CommandErrorReason,
    /// The lower-case command name.
    pub command: String,
    /// The invocation, when it was recognised (handler failures).
    pub invocation: Option<CommandInvocation>,
    /// The invoking message.
    pub message: Message,
    /// For [`CommandErrorReason::Parse`]: the parse error, with the usage line.
    pub parse_error: Option<ParseError>,
    /// For [`CommandErrorReason::Handler`]: what the handler failed with
    /// (a panic becomes an error saying so).
    pub error: Option<Arc<BoxError>>,
}

impl fmt::Debug for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandError")
            .field("reason", &self.reason)
            .field("command", &self.command)
            .field("message_id", &self.message.id)
            .field("parse_error", &self.parse_error)
            .field("error", &self.error.as_ref().map(ToString::to_string))
            .finish()
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            CommandErrorReason::Handler => write!(f, "handler of command \"{}\" failed", self.command)?,
            CommandErrorReason::Parse => write!(f, "command \"{}\" did not parse", self.command)?,
            CommandErrorReason::Arguments => write!(
                f,
                "structured invocation of command \"{}\" has arguments that do not fit its declaration",
                self.command
            )?,
        }
        if let Some(e) = &self.parse_error {
            write!(f, ": {e}")?;
        }
        if let Some(e) = &self.error {
            write!(f, ": {e}")?;
        }
        Ok(())
    }
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
