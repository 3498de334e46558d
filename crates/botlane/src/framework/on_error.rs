//! Error hooks: what a client or a command does when an invocation fails,
//! beside emitting [`Event::CommandError`](crate::Event::CommandError).
//!
//! The default ([`OnError::answer`]) answers the user who invoked with
//! [`CommandError::default_answer`], through the client's answer gate
//! (`answer.rs`: neutralised, rate-limited, a plain message).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::answer::{AnswerGate, Answered};
use super::command_error::CommandError;
use crate::error::ClientError;

/// The future an [`OnError`] hook returns.
pub type ErrorHookFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What to do when a command fails, beside emitting
/// [`Event::CommandError`](crate::Event::CommandError) (which is emitted
/// either way). Set per client with [`Client::on_error`](crate::Client::on_error)
/// and per command with [`CommandSettings::on_error`](crate::framework::CommandSettings::on_error);
/// a command's own hook replaces the client's for that command.
///
/// - [`OnError::answer`] (the default) answers the user who invoked with
///   [`CommandError::default_answer`]: the argument error with its usage
///   line, the check's reason, the cooldown's wait, a [`UserError`](crate::framework::UserError)
///   as it is, and a short generic message for anything else.
/// - [`OnError::silent`] answers nothing: answers off, in one line.
/// - [`OnError::new`] runs your own async hook with a [`CommandFailure`].
///
/// Every answer, the default's and those a hook sends with
/// [`CommandFailure::answer`], is a plain message into the invoking channel
/// (not a reply, so it does not notify through a mute), never starts with a
/// prefix of the client's, additional ones and the message's
/// [dynamic](crate::ClientOptions::dynamic_prefix) one included (see
/// [`neutralise_answer_among`](crate::framework::neutralise_answer_among)), and is
/// rate-limited per user and channel
/// ([`ClientOptions::error_answer_limit`](crate::ClientOptions::error_answer_limit)).
/// An answer the service rejects becomes
/// [`Event::SendRejected`](crate::Event::SendRejected) and nothing more.
///
/// Hooks run under the handler permits and the command's timeout, like
/// handlers.
///
/// ```
/// use botlane::framework::OnError;
/// use botlane::CommandErrorReason;
///
/// // The default, except for argument errors of the text lane: several bots
/// // with the same command would each answer the same line.
/// let quieter: OnError = OnError::answer().text_argument_errors(false);
///
/// // Your own: count failures in the shared state, answer only timeouts.
/// struct Stats {
///     failures: std::sync::atomic::AtomicU64,
/// }
/// let custom = OnError::new(|failure: botlane::framework::CommandFailure<Stats>| async move {
///     failure.data().failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///     if failure.error().reason == CommandErrorReason::Timeout {
///         let _ = failure.answer("that took too long, try a smaller number").await;
///     }
/// });
/// # let _ = (quieter, custom);
/// ```
pub struct OnError<D = ()>(Kind<D>);

enum Kind<D> {
    Answer { text_argument_errors: bool },
    Silent,
    Custom(Arc<dyn Fn(CommandFailure<D>) -> ErrorHookFuture + Send + Sync>),
}

impl<D: Send + Sync + 'static> OnError<D> {
    /// Answers every failure with [`CommandError::default_answer`]: the
    /// default of every client.
    pub fn answer() -> Self {
        Self(Kind::Answer {
            text_argument_errors: true,
        })
    }

    /// Answers nothing (the event is still emitted).
    pub fn silent() -> Self {
        Self(Kind::Silent)
    }

    /// Runs `hook` on every failure. The hook may answer with
    /// [`CommandFailure::answer`] (safe and rate-limited), read the shared
    /// state, or do nothing.
    pub fn new<F, Fut>(hook: F) -> Self
    where
        F: Fn(CommandFailure<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Self(Kind::Custom(Arc::new(move |failure| {
            Box::pin(hook(failure))
        })))
    }

    /// For [`OnError::answer`]: whether argument errors of the text lane
    /// ([`CommandError::is_text_argument_error`]) are answered (the
    /// default) or not. Every bot with a command (or an alias) of that
    /// name reads the same line, so each would answer it; the structured
    /// lane, addressed to one bot, does not have that problem. No effect on
    /// the other hooks.
    #[must_use]
    pub fn text_argument_errors(self, answer: bool) -> Self {
        match self.0 {
            Kind::Answer { .. } => Self(Kind::Answer {
                text_argument_errors: answer,
            }),
            other => Self(other),
        }
    }

    /// Whether running the hook on `error` can do anything.
    pub(crate) fn acts_on(&self, error: &CommandError) -> bool {
        match &self.0 {
            Kind::Answer {
                text_argument_errors,
            } => *text_argument_errors || !error.is_text_argument_error(),
            Kind::Silent => false,
            Kind::Custom(_) => true,
        }
    }

    /// Runs the hook on one failure.
    pub(crate) fn run(&self, failure: CommandFailure<D>) -> ErrorHookFuture {
        if !self.acts_on(&failure.error) {
            return Box::pin(std::future::ready(()));
        }
        match &self.0 {
            Kind::Custom(hook) => hook(failure),
            Kind::Answer { .. } | Kind::Silent => Box::pin(async move {
                match failure.answer_default().await {
                    // Said, because a user's fourth mistake in a row gets
                    // no answer and its author would otherwise be left to
                    // wonder why.
                    Ok(Answered::RateLimited) => tracing::debug!(
                        command = %failure.error.command,
                        "not answering a failed command: its author had their share of answers (error_answer_limit)"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::debug!(
                        command = %failure.error.command,
                        error = %e,
                        "could not post the answer to a failed command"
                    ),
                }
            }),
        }
    }
}

impl<D: Send + Sync + 'static> Default for OnError<D> {
    fn default() -> Self {
        Self::answer()
    }
}

impl<D> Clone for OnError<D> {
    fn clone(&self) -> Self {
        Self(match &self.0 {
            Kind::Answer {
                text_argument_errors,
            } => Kind::Answer {
                text_argument_errors: *text_argument_errors,
            },
            Kind::Silent => Kind::Silent,
            Kind::Custom(hook) => Kind::Custom(Arc::clone(hook)),
        })
    }
}

impl<D> fmt::Debug for OnError<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Answer {
                text_argument_errors,
            } => f
                .debug_struct("OnError::answer")
                .field("text_argument_errors", text_argument_errors)
                .finish(),
            Kind::Silent => f.write_str("OnError::silent"),
            Kind::Custom(_) => f.write_str("OnError::new(..)"),
        }
    }
}

/// One failed invocation, as an [`OnError`] hook receives it: the error,
/// the client's shared state, and a safe way to answer.
pub struct CommandFailure<D = ()> {
    error: CommandError,
    data: Arc<D>,
    gate: Arc<AnswerGate>,
}

impl<D> CommandFailure<D> {
    pub(crate) fn new(error: CommandError, data: Arc<D>, gate: Arc<AnswerGate>) -> Self {
        Self { error, data, gate }
    }

    /// What failed and why (the same value as the event's).
    pub fn error(&self) -> &CommandError {
        &self.error
    }

    /// The client's shared state.
    pub fn data(&self) -> &D {
        &self.data
    }

    /// Posts `text` into the invoking channel as a plain message, made safe
    /// against every prefix of the client's and the message's (a
    /// [dynamic prefix](crate::ClientOptions::dynamic_prefix))
    /// ([`neutralise_answer_among`](crate::framework::neutralise_answer_among)) and rate-limited
    /// per user and channel like every error answer. Fails only when there
    /// is no session; a denial by the service is an event, not an error.
    pub async fn answer(&self, text: &str) -> Result<Answered, ClientError> {
        let error = &self.error;
        self.gate
            .answer(&error.message, error.prefix_set(), text)
            .await
    }

    /// Posts [`CommandError::default_answer`], as [`OnError::answer`] does.
    pub async fn answer_default(&self) -> Result<Answered, ClientError> {
        self.answer(&self.error.default_answer()).await
    }
}

impl<D> fmt::Debug for CommandFailure<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandFailure")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}
