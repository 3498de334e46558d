//! The hook after each command (poise's `post_command`): what it is given
//! ([`CommandRan`]) and how it is kept. The client adds hooks
//! (`Client::after_command`, `client/hooks.rs`); dispatch runs them at the
//! end of an invocation's own future (`dispatch/handlers/run.rs`, `dispatch/handlers/after.rs`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use super::command_error::CommandErrorReason;
use super::context::invoked_name;
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::types::{CommandInvocation, CommandSource};
use crate::message::Message;

/// One hook added with [`Client::after_command`](crate::Client::after_command),
/// its future boxed.
pub(crate) type AfterCommand<D> =
    Arc<dyn Fn(CommandRan<D>) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Boxes `hook`'s future, so that hooks of different types share a list.
pub(crate) fn after_command<D, F, Fut>(hook: F) -> AfterCommand<D>
where
    F: Fn(CommandRan<D>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    Arc::new(move |ran| Box::pin(hook(ran)))
}

/// One finished invocation, as a hook added with
/// [`Client::after_command`](crate::Client::after_command) receives it:
/// which command, where and by whom, how long it ran and whether it
/// succeeded, with the client's shared state.
///
/// An invocation is here once its arguments were accepted, whatever
/// happened next: success, a refusal by a check, a cooldown, a handler
/// error or panic, a timeout. A failure of the argument step (a line that
/// does not parse, arguments out of bounds, a typed conversion that fails)
/// never started, and is only an [`Event::CommandError`](crate::Event::CommandError)
/// and an error hook.
///
/// Owned and small: the ids are copies, the message's content is not here
/// (it is the user's plaintext; the handler had it).
#[non_exhaustive]
pub struct CommandRan<D = ()> {
    /// The lower-case command name.
    pub command: String,
    /// The lane the invocation arrived on.
    pub source: CommandSource,
    /// The invoking message's id.
    pub message_id: String,
    /// The channel it was posted in.
    pub channel_id: String,
    /// Who invoked.
    pub author_id: String,
    /// How long the client's checks, the command's checks, the cooldown and
    /// the handler took together (a timed-out one: about its timeout); not
    /// the error hook nor the hooks after the command.
    pub elapsed: Duration,
    /// `None` when the handler returned `Ok`; else why the invocation
    /// failed, as in its [`Event::CommandError`](crate::Event::CommandError)
    /// (an argument error from the handler's own
    /// [`require`](crate::CommandContext::require) is
    /// [`Arguments`](CommandErrorReason::Arguments)).
    pub failure: Option<CommandErrorReason>,
    /// The name typed when it is not `command` (an alias, or capitals):
    /// read from the line once, when this is built, so that the common
    /// case copies nothing more. See [`invoked_name`](Self::invoked_name).
    invoked: Option<String>,
    data: Arc<D>,
}

impl<D> CommandRan<D> {
    /// The summary of the invocation `invocation` carried by `message`,
    /// which read with the text lane's `prefixes` names the name typed.
    pub(crate) fn new(
        invocation: &CommandInvocation,
        message: &Message,
        prefixes: PrefixSet<'_>,
        elapsed: Duration,
        failure: Option<CommandErrorReason>,
        data: Arc<D>,
    ) -> Self {
        let invoked = invoked_name(message, invocation.source, &invocation.name, prefixes);
        Self {
            invoked: (invoked != invocation.name.as_str()).then(|| invoked.into_owned()),
            command: invocation.name.clone(),
            source: invocation.source,
            message_id: message.id.clone(),
            channel_id: message.channel_id.clone(),
            author_id: message.author_id.clone(),
            elapsed,
            failure,
            data,
        }
    }

    /// A summary built by hand, for tests of a hook: message `m1` by `u1`
    /// in `c1`, no time elapsed (the fields are public, to change).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use botlane::framework::CommandRan;
    /// use botlane::{CommandErrorReason, CommandSource};
    ///
    /// // The hook under test: counts failures in the shared state.
    /// async fn count_failures(ran: CommandRan<AtomicU64>) {
    ///     if !ran.succeeded() {
    ///         ran.data().fetch_add(1, Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let ran = CommandRan::for_test(
    ///     "roll",
    ///     CommandSource::Text,
    ///     Some(CommandErrorReason::Check),
    ///     AtomicU64::new(0),
    /// );
    /// count_failures(ran.clone()).await;
    /// assert_eq!(ran.data().load(Ordering::Relaxed), 1);
    /// # }
    /// ```
    pub fn for_test(
        command: &str,
        source: CommandSource,
        failure: Option<CommandErrorReason>,
        data: D,
    ) -> Self {
        Self {
            command: command.to_owned(),
            source,
            message_id: "m1".to_owned(),
            channel_id: "c1".to_owned(),
            author_id: "u1".to_owned(),
            elapsed: Duration::ZERO,
            failure,
            invoked: None,
            data: Arc::new(data),
        }
    }

    /// Sets the name the command was invoked by (builder style), for a test
    /// of a hook that reads [`invoked_name`](Self::invoked_name): an alias
    /// as dispatch gives it, lower-case (kept as given).
    ///
    /// ```
    /// use botlane::framework::CommandRan;
    /// use botlane::CommandSource;
    /// let ran = CommandRan::for_test("roll", CommandSource::Text, None, ());
    /// assert_eq!(ran.with_invoked_name("r").invoked_name(), "r");
    /// ```
    #[must_use]
    pub fn with_invoked_name(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        // The command's own name is kept as dispatch keeps it: not at all.
        self.invoked = (name != self.command).then_some(name);
        self
    }

    /// The name the command was invoked by, lower-cased, as
    /// [`CommandContext::invoked_name`](crate::CommandContext::invoked_name)
    /// gave it to the handler: an [alias](crate::framework::CommandSettings::aliases)
    /// when the text line used one, else [`command`](Self::command) (always
    /// on the structured lane, and in [`for_test`](Self::for_test)'s unless
    /// given with [`with_invoked_name`](Self::with_invoked_name)).
    ///
    /// ```
    /// use botlane::framework::CommandRan;
    /// use botlane::CommandSource;
    /// let ran = CommandRan::for_test("roll", CommandSource::Text, None, ());
    /// assert_eq!(ran.invoked_name(), "roll");
    /// ```
    pub fn invoked_name(&self) -> &str {
        self.invoked.as_deref().unwrap_or(&self.command)
    }

    /// Whether the handler ran and returned `Ok` (poise's `post_command`
    /// runs only then).
    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }

    /// The client's shared state, as given to
    /// [`Client::with_data`](crate::Client::with_data).
    pub fn data(&self) -> &D {
        &self.data
    }
}

impl<D> Clone for CommandRan<D> {
    fn clone(&self) -> Self {
        Self {
            command: self.command.clone(),
            source: self.source,
            message_id: self.message_id.clone(),
            channel_id: self.channel_id.clone(),
            author_id: self.author_id.clone(),
            elapsed: self.elapsed,
            failure: self.failure,
            invoked: self.invoked.clone(),
            data: Arc::clone(&self.data),
        }
    }
}

impl<D> fmt::Debug for CommandRan<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandRan")
            .field("command", &self.command)
            .field("source", &self.source)
            .field("message_id", &self.message_id)
            .field("channel_id", &self.channel_id)
            .field("author_id", &self.author_id)
            .field("elapsed", &self.elapsed)
            .field("failure", &self.failure)
            .field("invoked_name", &self.invoked_name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::commands::text::prefixes::Prefixes;
    use crate::commands::types::CommandArgs;

    #[tokio::test]
    async fn a_hook_is_given_the_summary_with_the_shared_state() {
        let invocation = CommandInvocation {
            name: "roll".into(),
            args: CommandArgs::new(),
            source: CommandSource::Structured,
        };
        let message = Message::new("m1", "c1", "u1", "/roll 2");
        let ran = CommandRan::new(
            &invocation,
            &message,
            PrefixSet::single(None),
            Duration::from_millis(5),
            Some(CommandErrorReason::Check),
            Arc::new(7_u32),
        );
        assert!(!ran.succeeded());
        let debug = format!("{ran:?}");
        assert!(
            debug.contains("\"roll\"") && !debug.contains("/roll 2"),
            "no content in the summary: {debug}"
        );
        let (tx, rx) = std::sync::mpsc::channel();
        let hook = after_command(move |ran: CommandRan<u32>| {
            let tx = tx.clone();
            async move {
                tx.send((ran.command.clone(), *ran.data(), ran.failure))
                    .unwrap();
            }
        });
        hook(ran.clone()).await;
        assert_eq!(
            rx.recv().unwrap(),
            ("roll".to_owned(), 7, Some(CommandErrorReason::Check))
        );
        assert_eq!(
            (ran.message_id, ran.channel_id, ran.author_id),
            ("m1".to_owned(), "c1".to_owned(), "u1".to_owned())
        );
    }

    #[test]
    fn the_invoked_name_is_read_from_a_text_line_only() {
        let ran_among = |line: &str, prefixes: PrefixSet<'_>, source| {
            let invocation = CommandInvocation {
                name: "roll".into(),
                args: CommandArgs::new(),
                source,
            };
            let message = Message::new("m1", "c1", "u1", line);
            CommandRan::new(
                &invocation,
                &message,
                prefixes,
                Duration::ZERO,
                None,
                Arc::new(()),
            )
        };
        let ran = |line: &str, prefix: &str, source| {
            ran_among(line, PrefixSet::single(Some(prefix)), source)
        };
        let text = CommandSource::Text;
        assert_eq!(ran("  /R 2", "/", text).invoked_name(), "r");
        assert_eq!(ran("!dice", "!", text).invoked_name(), "dice");
        let by_name = ran("/Roll 2", "/", text);
        assert_eq!(
            (by_name.invoked_name(), by_name.invoked.as_deref()),
            ("roll", None)
        );
        // Under the longest prefix the line starts with, as dispatch reads it.
        let several = Prefixes::new("!", &["!!", "?"]);
        assert_eq!(ran_among("!!r 2", several.set(), text).invoked_name(), "r");
        assert_eq!(
            ran_among("?Dice", several.set(), text).invoked_name(),
            "dice"
        );
        let structured = ran("/r 2", "/", CommandSource::Structured);
        assert_eq!(structured.invoked_name(), "roll");
        assert!(format!("{:?}", ran("/r", "/", text)).contains("invoked_name: \"r\""));
        // By hand, as dispatch keeps it: the command's own name not at all.
        let given = CommandRan::for_test("roll", text, None, ()).with_invoked_name("dice");
        assert_eq!(given.invoked_name(), "dice");
        assert_eq!(given.with_invoked_name("roll").invoked, None);
    }
}
