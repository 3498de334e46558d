//! The registry as a context reads it. The registry holds handlers, which
//! take contexts, so a context cannot name the registry's type; it holds
//! this narrow view instead, the way a [`Message`](crate::Message) holds
//! an `Outbound` rather than the client. The registry implements it
//! (`registry/view.rs`).

use crate::commands::text::prefixes::PrefixSet;
use crate::commands::types::CommandDeclaration;

/// What a context asks of the registry it was dispatched from.
pub(crate) trait RegistryView: Send + Sync {
    /// The declaration of the command registered under `name`.
    fn declaration(&self, name: &str) -> Option<&CommandDeclaration>;

    /// The built-in help's answer for `command` (the list without one),
    /// written for `prefixes`.
    fn help(&self, command: Option<&str>, prefixes: PrefixSet<'_>) -> String;

    /// How many commands are registered.
    fn len(&self) -> usize;
}
