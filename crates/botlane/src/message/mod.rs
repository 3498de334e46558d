//! Messages as the bot sees them: decrypted, with a way to answer through
//! the [`Outbound`] handle the client attached.

use std::fmt;
use std::sync::Arc;

pub(crate) mod outbound;

pub(crate) use outbound::{Outbound, OutboundHandle};

use crate::commands::types::CommandInvocation;
use crate::error::ClientError;
use crate::rest::RestLane;

/// A chat message, decrypted.
#[derive(Clone)]
#[non_exhaustive]
pub struct Message {
    /// The message id.
    pub id: String,
    /// The channel it was posted in.
    pub channel_id: String,
    /// The author's user or bot id.
    pub author_id: String,
    /// The plaintext content.
    pub content: String,
    /// The message this one replies to.
    pub reply_to: Option<String>,
    /// The recognised invocation: set only on live messages that the
    /// registry recognises, never on fetched history or the bot's own messages.
    pub command: Option<CommandInvocation>,
    outbound: OutboundHandle,
}

impl Message {
    /// A message with the given ids and content, no invocation, and no
    /// client to answer through (as in unit tests of handlers).
    ///
    /// ```
    /// let m = botlane::Message::new("m1", "c1", "u1", "/ping");
    /// assert!(m.command.is_none());
    /// ```
    pub fn new(
        id: impl Into<String>,
        channel_id: impl Into<String>,
        author_id: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            channel_id: channel_id.into(),
            author_id: author_id.into(),
            content: content.into(),
            reply_to: None,
            command: None,
            outbound: None,
        }
    }

    /// Gives the message the handle it answers through.
    pub(crate) fn attach(&mut self, outbound: Arc<dyn Outbound>) {
        self.outbound = Some(outbound);
    }

    /// Lets go of the handle it answers through.
    pub(crate) fn detach(&mut self) {
        self.outbound = None;
    }

    fn outbound(&self) -> Result<&dyn Outbound, ClientError> {
        outbound(&self.outbound)
    }

    /// A true reply into the message's channel: the service notifies the
    /// author (piercing mutes). Fire-and-forget: a denial arrives as
    /// [`Event::SendRejected`](crate::Event::SendRejected) and does not fail
    /// the future. Fails only when there is no session.
    pub async fn reply(&self, text: &str) -> Result<(), ClientError> {
        self.outbound()?
            .send(&self.channel_id, text, Some(&self.id))
            .await
    }

    /// The REST lane of the client that received this message. Fails when
    /// the client is gone (or the message was built by [`Message::new`]).
    pub fn rest(&self) -> Result<RestLane, ClientError> {
        self.outbound()?.rest()
    }

    /// The channel the message was posted in, to post plain messages there.
    pub fn channel(&self) -> Channel {
        Channel {
            id: self.channel_id.clone(),
            outbound: self.outbound.clone(),
        }
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.channel_id == other.channel_id
            && self.author_id == other.author_id
            && self.content == other.content
            && self.reply_to == other.reply_to
            && self.command == other.command
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("id", &self.id)
            .field("channel_id", &self.channel_id)
            .field("author_id", &self.author_id)
            .field("content", &self.content)
            .field("reply_to", &self.reply_to)
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

/// A channel, for posting plain (non-reply) messages.
#[derive(Clone)]
pub struct Channel {
    /// The channel id.
    pub id: String,
    outbound: OutboundHandle,
}

impl Channel {
    /// Posts a plain message. Fire-and-forget like [`Message::reply`].
    pub async fn send(&self, text: &str) -> Result<(), ClientError> {
        outbound(&self.outbound)?.send(&self.id, text, None).await
    }
}

/// The handle, or [`ClientError::NotConnected`] for a message built by hand.
fn outbound(handle: &OutboundHandle) -> Result<&dyn Outbound, ClientError> {
    handle.as_deref().ok_or(ClientError::NotConnected)
}

impl fmt::Debug for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Channel")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}
