//! [`UserError`]: a failure whose text is written for the user.

use std::fmt;

use crate::commands::argument_error::ArgumentError;

/// A handler failure whose `Display` is meant for the user who invoked the
/// command: a handler returns it to have its text sent as the answer, as it
/// is.
///
/// Any other error a handler fails with is the bot's own business (it may
/// hold internals or someone's plaintext), so it is answered with a short
/// generic message instead; see the client's error answers. Write the text
/// as you would write a reply; do not put secrets or other users' data in it.
///
/// ```
/// use botlane::framework::UserError;
/// use botlane::{CommandContext, CommandHandler};
///
/// let handler = CommandHandler::new(|ctx: CommandContext| async move {
///     let Some(count) = ctx.get_integer("count") else {
///         return Err(UserError::from("give me a number of dice"));
///     };
///     if count > 100 {
///         return Err(format!("{count} dice will not fit on the table").into());
///     }
///     Ok(())
/// });
/// # let _ = handler;
///
/// let err = UserError::new("the table is full");
/// assert_eq!(err.to_string(), "the table is full");
/// assert_eq!(err.as_str(), "the table is full");
///
/// // Boxed like every handler error, it is found again by downcasting.
/// let boxed: botlane::BoxError = UserError::from("no").into();
/// assert_eq!(boxed.downcast_ref::<UserError>().map(UserError::as_str), Some("no"));
/// ```
#[derive(Debug, Clone)]
pub struct UserError {
    text: String,
    /// The argument error it was made from, if any: a handler that fails
    /// with it failed on the user's arguments, and is reported so
    /// ([`CommandErrorReason::Arguments`](crate::CommandErrorReason::Arguments)).
    argument: Option<ArgumentError>,
}

impl UserError {
    /// A user error with this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            argument: None,
        }
    }

    /// The text, as it will be sent.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The argument error this was made from (`From<ArgumentError>`), if
    /// any.
    pub(crate) fn argument(&self) -> Option<&ArgumentError> {
        self.argument.as_ref()
    }
}

/// Equal when the texts are: the text is what the user is sent.
impl PartialEq for UserError {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for UserError {}

impl std::hash::Hash for UserError {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for UserError {}

impl From<String> for UserError {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for UserError {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

/// An [`ArgumentError`]'s text is written for the user (it names the option
/// and the rule, never the value), so a check that reads an argument can
/// refuse with it through `?`. A handler whose error type is `UserError`
/// may use `?` on [`require`](crate::CommandContext::require) too: its
/// failure is still reported as an argument error
/// ([`CommandErrorReason::Arguments`](crate::CommandErrorReason::Arguments),
/// with [`argument_error`](crate::CommandError::argument_error) set), as
/// with any other error type. So is a check's refusal that a handler runs
/// itself ([`Check::run`](crate::framework::Check::run)) and passes on with `?`, when
/// the check refused with an argument error: through the handler it is one.
///
/// ```
/// use botlane::framework::{Check, UserError};
/// let small: Check = Check::sync(|ctx| {
///     let count: u8 = ctx.require("count")?;
///     if count <= 10 { Ok(()) } else { Err(UserError::from("at most 10 dice")) }
/// });
/// # let _ = small;
/// let missing = botlane::ArgumentError::new("count", botlane::ArgumentRule::Missing);
/// assert_eq!(UserError::from(missing.clone()).as_str(), missing.to_string());
/// ```
impl From<ArgumentError> for UserError {
    fn from(error: ArgumentError) -> Self {
        Self {
            text: error.to_string(),
            argument: Some(error),
        }
    }
}
