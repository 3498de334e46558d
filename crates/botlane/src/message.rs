//! Messages as the bot sees them.

use crate::commands::CommandInvocation;

/// A chat message, decrypted.
#[derive(Debug, Clone, PartialEq)]
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
    /// The recognised invocation: set only on live messages that the
    /// registry recognises, never on fetched history or the bot's own messages.
    pub command: Option<CommandInvocation>,
}

impl Message {
    /// A message with the given ids and content and no invocation.
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
            command: None,
        }
    }
}
