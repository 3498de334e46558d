//! [`CommandError`]: one failed invocation, as the client reports it
//! ([`Event::CommandError`](crate::Event::CommandError)) and as an error
//! hook receives it; and the answer the built-in hook sends for it.
//!
//! It lives with the commands rather than with the events because
//! everything it carries (the message, the invocation, the parse and
//! argument errors) is of the command area, and because per-command
//! settings ([`OnError`](crate::framework::OnError)) refer to it.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::context::invoked_name;
use super::cooldown::CooldownError;
use super::handler::BoxError;
use super::owners::NotAnOwner;
use super::user_error::UserError;
use crate::commands::argument_error::ArgumentError;
use crate::commands::text::error::ParseError;
use crate::commands::text::prefixes::{PrefixSet, Prefixes};
use crate::commands::types::{CommandInvocation, CommandSource};
use crate::message::Message;

/// Why a command failed.
///
/// Dispatch runs, for a message addressed to a registered command: the
/// arguments ([`Parse`](Self::Parse), [`Arguments`](Self::Arguments)), the
/// owners-only rule, the client's then the command's checks
/// ([`Check`](Self::Check)), the
/// cooldown ([`Cooldown`](Self::Cooldown)), the handler
/// ([`Handler`](Self::Handler), [`Timeout`](Self::Timeout)); the first that
/// fails is the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CommandErrorReason {
    /// The handler returned `Err` (other than an [`ArgumentError`]) or panicked.
    Handler,
    /// The text line invoked a registered command but did not parse
    /// (`parse_error`, with `argument_error` when it is about one option).
    Parse,
    /// The arguments do not fit, on either lane (`source` says which): a
    /// structured payload that does not fit the declaration, a value
    /// outside an option's bounds, a value that fits the declaration but
    /// not a typed command's Rust type, or an [`ArgumentError`] returned by
    /// the handler. `argument_error` says which option and rule.
    Arguments,
    /// A check refused the invocation; `error` holds its
    /// [`UserError`](crate::framework::UserError), the reason for the user; or the
    /// command is [`owners_only`](crate::framework::CommandSettings::owners_only) and
    /// the author is not an owner: `error` holds a
    /// [`NotAnOwner`](crate::framework::NotAnOwner).
    Check,
    /// The command is cooling down for this invocation; `error` holds the
    /// [`CooldownError`](crate::framework::CooldownError).
    Cooldown,
    /// The checks and the handler ran longer than the command's timeout;
    /// the handler's task was aborted. `error` holds a
    /// [`HandlerTimeout`](crate::framework::HandlerTimeout).
    Timeout,
}

impl CommandErrorReason {
    /// The reason in one lower-case word, as the client logs it.
    ///
    /// ```
    /// assert_eq!(botlane::CommandErrorReason::Cooldown.as_str(), "cooldown");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Handler => "handler",
            Self::Parse => "parse",
            Self::Arguments => "arguments",
            Self::Check => "check",
            Self::Cooldown => "cooldown",
            Self::Timeout => "timeout",
        }
    }
}

/// The handler and checks of a command ran longer than its timeout.
///
/// ```
/// use std::time::Duration;
/// let err = botlane::framework::HandlerTimeout { after: Duration::from_millis(1500) };
/// assert_eq!(err.to_string(), "the command ran for longer than its timeout of 1.5 s and was aborted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the command ran for longer than its timeout of {} s and was aborted", seconds(*.after))]
pub struct HandlerTimeout {
    /// The timeout.
    pub after: std::time::Duration,
}

fn seconds(d: std::time::Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// One failed invocation: the payload of
/// [`Event::CommandError`](crate::Event::CommandError) and what an error
/// hook ([`OnError`](crate::framework::OnError)) receives.
///
/// Its `Display` says what failed and why. It may quote the user's own
/// words through a handler's error, so it is for the bot's author (the
/// event, a test); the client never logs it, only the command name and the
/// reason. [`default_answer`](Self::default_answer) is the text written for
/// the user who invoked.
#[derive(Clone)]
#[non_exhaustive]
pub struct CommandError {
    /// Why.
    pub reason: CommandErrorReason,
    /// The lower-case command name.
    pub command: String,
    /// The lane the invocation arrived on.
    pub source: CommandSource,
    /// The invocation, when its arguments were recognised (every reason but
    /// [`Parse`](CommandErrorReason::Parse) and a structured
    /// [`Arguments`](CommandErrorReason::Arguments) failure).
    pub invocation: Option<CommandInvocation>,
    /// The invoking message.
    pub message: Message,
    /// For [`CommandErrorReason::Parse`]: the parse error, with the usage line.
    pub parse_error: Option<ParseError>,
    /// For [`CommandErrorReason::Arguments`] (and a parse error about one
    /// option): the option, the rule, the type of the value given and the
    /// usage line.
    pub argument_error: Option<ArgumentError>,
    /// For [`Handler`](CommandErrorReason::Handler) (what the handler failed
    /// with; a panic becomes an error saying so), [`Check`](CommandErrorReason::Check),
    /// [`Cooldown`](CommandErrorReason::Cooldown) and
    /// [`Timeout`](CommandErrorReason::Timeout).
    pub error: Option<Arc<BoxError>>,
    /// The text lane's prefixes `message` was read with (shared, as a
    /// context holds them), to read the name typed back from it (see
    /// [`invoked_name`](Self::invoked_name)); `None` is the default `/`.
    prefixes: Option<Arc<Prefixes>>,
}

/// The answer to a failure the bot cannot explain to the user: it never
/// carries the error's text, which may hold internals or someone's words.
pub(crate) fn generic_answer(command: &str) -> String {
    format!("sorry, the {command} command failed")
}

impl CommandError {
    /// A failure with no detail yet; dispatch fills in the rest.
    /// `prefixes` are the text lane's, `None` for the default.
    pub(crate) fn new(
        reason: CommandErrorReason,
        command: String,
        source: CommandSource,
        message: Message,
        prefixes: Option<Arc<Prefixes>>,
    ) -> Self {
        Self {
            reason,
            command,
            source,
            invocation: None,
            message,
            parse_error: None,
            argument_error: None,
            error: None,
            prefixes,
        }
    }

    /// The name the command was invoked by, lower-cased, read back from
    /// [`message`](Self::message) as
    /// [`CommandContext::invoked_name`](crate::CommandContext::invoked_name)
    /// reads it: on the text lane the name the line used (under the longest
    /// of the message's [`prefixes`](Self::prefixes) it starts with), an
    /// [alias](crate::framework::CommandSettings::aliases) or the command's own;
    /// [`command`](Self::command) on the structured lane. Borrowed unless
    /// the line wrote the name with capitals. For an error hook that words
    /// its answer after what the user typed (`/r` rather than `/roll`).
    ///
    /// ```
    /// use botlane::{CommandError, CommandErrorReason, CommandSource, Message};
    /// let mut failure = CommandError::for_test(CommandErrorReason::Check, "roll", CommandSource::Text);
    /// assert_eq!(failure.invoked_name(), "roll");
    /// failure.message = Message::new("m1", "c1", "u1", "/R 2");
    /// assert_eq!(failure.invoked_name(), "r");
    /// failure.source = CommandSource::Structured;
    /// assert_eq!(failure.invoked_name(), "roll");
    /// ```
    pub fn invoked_name(&self) -> Cow<'_, str> {
        invoked_name(&self.message, self.source, &self.command, self.prefix_set())
    }

    /// The text-lane prefixes the invoking message was read with, the main
    /// one first, as [`CommandContext::prefixes`](crate::CommandContext::prefixes)
    /// gives them: the client's, or with the main one a
    /// [dynamic prefix](crate::ClientOptions::dynamic_prefix) chose for the
    /// message's channel. For an error hook that writes a command line of
    /// its own.
    ///
    /// ```
    /// use botlane::{CommandError, CommandErrorReason, CommandSource};
    /// let failure = CommandError::for_test(CommandErrorReason::Check, "roll", CommandSource::Text);
    /// assert_eq!(failure.prefixes().collect::<Vec<_>>(), ["/"]);
    /// let failure = failure.with_prefix("?").with_additional_prefixes(["!!"]);
    /// assert_eq!(failure.prefixes().collect::<Vec<_>>(), ["?", "!!"]);
    /// ```
    pub fn prefixes(&self) -> impl Iterator<Item = &str> + Clone {
        self.prefix_set().all()
    }

    /// All the prefixes, borrowed.
    pub(crate) fn prefix_set(&self) -> PrefixSet<'_> {
        PrefixSet::of(self.prefixes.as_deref())
    }

    /// Whether this is an argument error of the text lane (a line that does
    /// not parse, or whose values break a bound or a typed field): every bot
    /// with a command, or an [alias](crate::framework::CommandSettings::aliases), of
    /// that name sees the same line.
    ///
    /// ```
    /// use botlane::{CommandErrorReason, CommandSource};
    /// # let error = |reason, source| botlane::CommandError::for_test(reason, "roll", source);
    /// assert!(error(CommandErrorReason::Parse, CommandSource::Text).is_text_argument_error());
    /// assert!(error(CommandErrorReason::Arguments, CommandSource::Text).is_text_argument_error());
    /// assert!(!error(CommandErrorReason::Arguments, CommandSource::Structured).is_text_argument_error());
    /// assert!(!error(CommandErrorReason::Check, CommandSource::Text).is_text_argument_error());
    /// ```
    pub fn is_text_argument_error(&self) -> bool {
        self.source == CommandSource::Text
            && matches!(
                self.reason,
                CommandErrorReason::Parse | CommandErrorReason::Arguments
            )
    }

    /// The text the built-in error hook ([`OnError::answer`](crate::framework::OnError::answer))
    /// sends to the user who invoked, before it is made safe to send
    /// (see [`OnError`](crate::framework::OnError)):
    ///
    /// | reason | answer |
    /// |---|---|
    /// | `Parse` | the parse error and the usage line |
    /// | `Arguments` | the [`ArgumentError`]: the option, the rule it broke, the usage line |
    /// | `Check` | the check's reason (a [`NotAnOwner`](crate::framework::NotAnOwner)'s text) |
    /// | `Cooldown` | `this command is cooling down, try again in 12 s` |
    /// | `Handler`, returning a [`UserError`] | its text, as it is |
    /// | any other handler error, a panic, `Timeout` | `sorry, the roll command failed` |
    ///
    /// The generic answer never carries the error's text: it may hold
    /// internals, or someone's plaintext.
    ///
    /// ```
    /// use botlane::{CommandErrorReason, CommandSource};
    /// let error = botlane::CommandError::for_test(CommandErrorReason::Timeout, "roll", CommandSource::Structured);
    /// assert_eq!(error.default_answer(), "sorry, the roll command failed");
    /// ```
    pub fn default_answer(&self) -> String {
        let error = self.error.as_deref().map(|e| &**e);
        match self.reason {
            CommandErrorReason::Parse => match &self.parse_error {
                Some(parse) => parse.with_usage().to_string(),
                None => generic_answer(&self.command),
            },
            CommandErrorReason::Arguments => match &self.argument_error {
                Some(argument) => argument.to_string(),
                None => generic_answer(&self.command),
            },
            CommandErrorReason::Check if self.error_as::<NotAnOwner>().is_some() => {
                NotAnOwner.to_string()
            }
            CommandErrorReason::Check | CommandErrorReason::Handler => {
                match error.and_then(|e| e.downcast_ref::<UserError>()) {
                    Some(user) => user.as_str().to_owned(),
                    None => generic_answer(&self.command),
                }
            }
            CommandErrorReason::Cooldown => {
                match error.and_then(|e| e.downcast_ref::<CooldownError>()) {
                    Some(cooldown) => cooldown.to_string(),
                    None => generic_answer(&self.command),
                }
            }
            CommandErrorReason::Timeout => generic_answer(&self.command),
        }
    }

    /// The error in [`error`](Self::error) as an `E`, if it is one: the
    /// handler's own error type (poise's `FrameworkError::Command { error }`),
    /// a check's [`UserError`], a [`CooldownError`], a
    /// [`HandlerTimeout`]. `None` for another type, or when there is no
    /// error (a parse or argument failure).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use botlane::framework::UserError;
    /// use botlane::{BoxError, CommandErrorReason, CommandSource};
    /// let mut failure =
    ///     botlane::CommandError::for_test(CommandErrorReason::Handler, "warn", CommandSource::Text);
    /// assert!(failure.error_as::<UserError>().is_none());
    /// failure.error = Some(Arc::new(BoxError::from(UserError::from("no such user"))));
    /// assert_eq!(failure.error_as::<UserError>().unwrap().as_str(), "no such user");
    /// assert!(failure.error_as::<std::io::Error>().is_none());
    /// ```
    pub fn error_as<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.error
            .as_deref()
            .and_then(|e| (**e).downcast_ref::<E>())
    }

    /// A failure built by hand, for tests of an error hook: no invocation,
    /// no detail, a message `m1` by `u1` in `c1` (empty: change it to give
    /// [`invoked_name`](Self::invoked_name) a line to read, with the
    /// default prefix `/` unless given others with
    /// [`with_prefix`](Self::with_prefix) and
    /// [`with_additional_prefixes`](Self::with_additional_prefixes)).
    pub fn for_test(reason: CommandErrorReason, command: &str, source: CommandSource) -> Self {
        Self::new(
            reason,
            command.to_owned(),
            source,
            Message::new("m1", "c1", "u1", ""),
            None,
        )
    }

    /// Sets the text-lane prefix the client uses (builder style), as
    /// [`CommandContext::with_prefix`](crate::CommandContext::with_prefix)
    /// does: [`invoked_name`](Self::invoked_name) reads the line under it.
    ///
    /// ```
    /// use botlane::{CommandError, CommandErrorReason, CommandSource, Message};
    /// let mut failure = CommandError::for_test(CommandErrorReason::Check, "roll", CommandSource::Text);
    /// failure.message = Message::new("m1", "c1", "u1", "!r 2");
    /// assert_eq!(failure.invoked_name(), "roll");
    /// assert_eq!(failure.with_prefix("!").invoked_name(), "r");
    /// ```
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<Arc<str>>) -> Self {
        let prefix: Arc<str> = prefix.into();
        let prefixes = PrefixSet::of(self.prefixes.as_deref()).with_main(&prefix);
        self.prefixes = Some(Arc::new(prefixes));
        self
    }

    /// Sets the other text-lane prefixes the client reads (builder style),
    /// as [`CommandContext::with_additional_prefixes`](crate::CommandContext::with_additional_prefixes)
    /// does: [`invoked_name`](Self::invoked_name) reads the line under the
    /// longest it starts with.
    ///
    /// ```
    /// use botlane::{CommandError, CommandErrorReason, CommandSource, Message};
    /// let mut failure = CommandError::for_test(CommandErrorReason::Check, "roll", CommandSource::Text)
    ///     .with_prefix("!")
    ///     .with_additional_prefixes(["!!", "?"]);
    /// failure.message = Message::new("m1", "c1", "u1", "!!r 2");
    /// assert_eq!(failure.invoked_name(), "r");
    /// failure.message = Message::new("m1", "c1", "u1", "?dice 2");
    /// assert_eq!(failure.invoked_name(), "dice");
    /// ```
    #[must_use]
    pub fn with_additional_prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let prefixes = PrefixSet::of(self.prefixes.as_deref()).with_additional(prefixes);
        self.prefixes = Some(Arc::new(prefixes));
        self
    }
}

impl fmt::Debug for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandError")
            .field("reason", &self.reason)
            .field("command", &self.command)
            .field("source", &self.source)
            .field("message_id", &self.message.id)
            .field("parse_error", &self.parse_error)
            .field("argument_error", &self.argument_error)
            .field("error", &self.error.as_ref().map(ToString::to_string))
            .finish()
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let command = &self.command;
        let lane = match self.source {
            CommandSource::Structured => "structured",
            CommandSource::Text => "text",
        };
        match self.reason {
            CommandErrorReason::Handler => write!(f, "handler of command \"{command}\" failed")?,
            CommandErrorReason::Parse => write!(f, "command \"{command}\" did not parse")?,
            CommandErrorReason::Arguments => write!(
                f,
                "{lane} invocation of command \"{command}\" has arguments that do not fit"
            )?,
            CommandErrorReason::Check => write!(f, "a check refused command \"{command}\"")?,
            CommandErrorReason::Cooldown => {
                write!(f, "command \"{command}\" is cooling down")?;
            }
            CommandErrorReason::Timeout => write!(f, "command \"{command}\" timed out")?,
        }
        if let Some(e) = &self.parse_error {
            write!(f, ": {e}")?;
        } else if let Some(e) = &self.argument_error {
            // One line: the usage line is for the user's answer.
            write!(f, ": option \"{}\" {}", e.option(), e.rule())?;
        } else if let Some(e) = &self.error {
            write!(f, ": {e}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::commands::argument_error::ArgumentRule;

    fn failed(reason: CommandErrorReason, error: BoxError) -> CommandError {
        let mut e = CommandError::for_test(reason, "roll", CommandSource::Structured);
        e.error = Some(Arc::new(error));
        e
    }

    #[test]
    fn default_answers_follow_the_reason_and_never_carry_a_private_error() {
        let user = failed(
            CommandErrorReason::Handler,
            UserError::from("no dice left").into(),
        );
        assert_eq!(user.default_answer(), "no dice left");
        let private = failed(
            CommandErrorReason::Handler,
            "database password hunter2 rejected".into(),
        );
        assert_eq!(private.default_answer(), "sorry, the roll command failed");
        let check = failed(
            CommandErrorReason::Check,
            UserError::from("admins only").into(),
        );
        assert_eq!(check.default_answer(), "admins only");
        let cooldown = failed(
            CommandErrorReason::Cooldown,
            CooldownError::Active {
                remaining: Duration::from_millis(11_100),
            }
            .into(),
        );
        assert_eq!(
            cooldown.default_answer(),
            "this command is cooling down, try again in 12 s"
        );
        let timeout = failed(
            CommandErrorReason::Timeout,
            HandlerTimeout {
                after: Duration::from_secs(2),
            }
            .into(),
        );
        assert_eq!(timeout.default_answer(), "sorry, the roll command failed");
        let mut arguments =
            CommandError::for_test(CommandErrorReason::Arguments, "roll", CommandSource::Text);
        arguments.argument_error = Some(
            ArgumentError::new("count", ArgumentRule::AboveMax { max: 10.0 })
                .with_usage("/roll <count (1 to 10)>"),
        );
        assert_eq!(
            arguments.default_answer(),
            "option \"count\" must be at most 10\nusage: /roll <count (1 to 10)>"
        );
    }

    #[test]
    fn display_names_the_lane_the_invocation_came_on() {
        let mut error =
            CommandError::for_test(CommandErrorReason::Arguments, "remind", CommandSource::Text);
        error.argument_error = Some(
            ArgumentError::new("minutes", ArgumentRule::OutOfRange { min: 0, max: 255 })
                .with_usage("/remind <minutes>"),
        );
        assert_eq!(
            error.to_string(),
            "text invocation of command \"remind\" has arguments that do not fit: \
             option \"minutes\" must be a whole number from 0 to 255"
        );
        error.source = CommandSource::Structured;
        assert!(error.to_string().starts_with("structured invocation"));
    }

    #[test]
    fn reasons_have_a_word_for_the_log() {
        let all = [
            CommandErrorReason::Handler,
            CommandErrorReason::Parse,
            CommandErrorReason::Arguments,
            CommandErrorReason::Check,
            CommandErrorReason::Cooldown,
            CommandErrorReason::Timeout,
        ];
        let words: Vec<&str> = all.iter().map(CommandErrorReason::as_str).collect();
        assert_eq!(
            words,
            [
                "handler",
                "parse",
                "arguments",
                "check",
                "cooldown",
                "timeout"
            ]
        );
    }
}
