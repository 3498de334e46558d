//! The dynamic prefix option, apart: its rules take a page of their own.

use super::ClientOptions;
use crate::framework::dynamic_prefix::{DynamicPrefix, PrefixRequest};

impl ClientOptions {
    /// Lets the application choose, per message, the main text-lane prefix
    /// (poise's `dynamic_prefix`): for a channel or a server that picked
    /// its own, say `?` because another bot there answers `/`.
    ///
    /// `f` is told where the message was posted and by whom
    /// ([`PrefixRequest`]; never its content). `Some(p)` **replaces**
    /// [`command_prefix`](Self::command_prefix) for that message: a channel
    /// that chose `?` no longer answers `/`. The
    /// [`additional_prefixes`](Self::additional_prefixes) still apply (the
    /// longest of them and `p` that a line starts with is the one it
    /// uses). `None` keeps `command_prefix`. Everything written for that
    /// message follows it: [`CommandContext::prefix`](crate::CommandContext::prefix)
    /// and [`prefixes`](crate::CommandContext::prefixes), the usage lines
    /// of argument errors, the help, the invoked names of the context, of
    /// [`CommandError`](crate::CommandError) and of
    /// [`CommandRan`](crate::framework::CommandRan); error answers are made safe
    /// against its prefixes and the client's.
    ///
    /// `f` runs on the dispatch path, once for every message from someone
    /// else (never for the bot's own), on both lanes: a structured
    /// invocation's usage lines and help name the channel's prefix too. It
    /// is synchronous and must be quick: read an in-memory map that the
    /// application also holds and updates, never the network or a disk.
    /// Returning `None` costs no allocation.
    ///
    /// A `p` that [`command_prefix`](Self::command_prefix)'s rules refuse
    /// (empty, with whitespace, over
    /// [`MAX_COMMAND_PREFIX_CHARS`](crate::framework::MAX_COMMAND_PREFIX_CHARS)
    /// characters), and a panic in `f`, leave `command_prefix` for that
    /// message: each is counted in
    /// [`ClientStats::dynamic_prefixes_refused`](crate::ClientStats::dynamic_prefixes_refused)
    /// and logged at most once per 10 s (the value and the panic's text
    /// never are; the process's panic hook still reports the panic, as it
    /// does any). Setting it again replaces the closure.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::sync::{Arc, RwLock};
    /// use botlane::framework::PrefixRequest;
    /// use botlane::ClientOptions;
    ///
    /// // Channel id → prefix, held by the application too (which updates
    /// // it from a `setprefix` command, say).
    /// let chosen: Arc<RwLock<HashMap<String, String>>> = Arc::default();
    /// let read = Arc::clone(&chosen);
    /// let options = ClientOptions::new("bot-token", "bot.keystore", "ws://127.0.0.1:9000/ws")
    ///     .command_prefix("!")
    ///     .dynamic_prefix(move |request: &PrefixRequest<'_>| {
    ///         read.read().ok()?.get(request.channel_id()).cloned()
    ///     });
    /// chosen.write().unwrap().insert("c1".to_owned(), "?".to_owned());
    /// // Debug shows that one is set, not the closure.
    /// assert!(format!("{options:?}").contains("dynamic_prefix: Some(DynamicPrefix(..))"));
    /// ```
    #[must_use]
    pub fn dynamic_prefix<F>(mut self, f: F) -> Self
    where
        F: Fn(&PrefixRequest<'_>) -> Option<String> + Send + Sync + 'static,
    {
        self.dynamic_prefix = Some(DynamicPrefix::new(f));
        self
    }
}
