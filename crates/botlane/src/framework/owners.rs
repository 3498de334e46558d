//! The bot's owners (poise's `FrameworkOptions::owners`): who may run a
//! command set to [`owners_only`](crate::framework::CommandSettings::owners_only),
//! and who skips the checks and cooldowns when the client says so
//! ([`skip_checks_for_owners`](crate::ClientOptions::skip_checks_for_owners)).
//! A bot-side comfort only: nothing on the wire knows of owners.

use crate::commands::types::{canonical_bot_id, same_bot_id};

/// Why an [`owners_only`](crate::framework::CommandSettings::owners_only) command
/// refused someone who is not one of the client's
/// [`owners`](crate::ClientOptions::owners) (poise's
/// `FrameworkError::NotAnOwner`). The failure's reason is
/// [`Check`](crate::CommandErrorReason::Check), as for a check's refusal,
/// and this is its [`error`](crate::CommandError::error): the default
/// answer is its text; an error hook that words its own finds it with
/// [`error_as`](crate::CommandError::error_as).
///
/// ```
/// use std::sync::Arc;
/// use botlane::framework::NotAnOwner;
/// use botlane::{BoxError, CommandError, CommandErrorReason, CommandSource};
///
/// let mut failure = CommandError::for_test(CommandErrorReason::Check, "reload", CommandSource::Text);
/// failure.error = Some(Arc::new(BoxError::from(NotAnOwner)));
/// assert!(failure.error_as::<NotAnOwner>().is_some());
/// assert_eq!(failure.default_answer(), "only the bot's owners may use this command");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, thiserror::Error)]
#[error("only the bot's owners may use this command")]
pub struct NotAnOwner;

/// The client's owners, in canonical form, and whether they skip the
/// checks and cooldowns. A client without owners has none of this
/// (`Option<Owners>`), so an invocation pays one check for it.
#[derive(Debug)]
pub(crate) struct Owners {
    ids: Box<[String]>,
    skip_checks: bool,
}

impl Owners {
    /// The owners `ids` (already checked by the client's options); `None`
    /// when there are none.
    pub(crate) fn new(ids: &[String], skip_checks: bool) -> Option<Self> {
        (!ids.is_empty()).then(|| Self {
            ids: ids.iter().map(|id| canonical_bot_id(id)).collect(),
            skip_checks,
        })
    }

    /// Whether `user` is an owner; ids compared in canonical form, without
    /// building either.
    pub(crate) fn contains(&self, user: &str) -> bool {
        self.ids.iter().any(|id| same_bot_id(id, user))
    }
}

/// What the owners mean for one invocation of a command (`owners_only` or
/// not) by `author`: refused, or let through, skipping its checks and
/// cooldown (`Ok(true)`) or not. Without owners, or when neither the
/// command nor the client asks about them, the author is not looked up.
pub(crate) fn owner_gate(
    owners: Option<&Owners>,
    owners_only: bool,
    author: &str,
) -> Result<bool, NotAnOwner> {
    let Some(owners) = owners else {
        return if owners_only {
            Err(NotAnOwner)
        } else {
            Ok(false)
        };
    };
    if !owners_only && !owners.skip_checks {
        return Ok(false);
    }
    let owner = owners.contains(author);
    if owners_only && !owner {
        return Err(NotAnOwner);
    }
    Ok(owner && owners.skip_checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: &str = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

    fn owners(skip_checks: bool) -> Option<Owners> {
        Owners::new(
            &["3F2504E04F8911D39A0C0305E82C3301".to_owned()],
            skip_checks,
        )
    }

    #[test]
    fn no_owners_refuse_every_owners_only_command_and_skip_nothing() {
        assert!(Owners::new(&[], true).is_none());
        assert_eq!(owner_gate(None, true, ALICE), Err(NotAnOwner));
        assert_eq!(owner_gate(None, false, ALICE), Ok(false));
    }

    #[test]
    fn owners_are_compared_canonically() {
        let owners = owners(false);
        assert_eq!(owner_gate(owners.as_ref(), true, ALICE), Ok(false));
        assert_eq!(owner_gate(owners.as_ref(), true, "bob"), Err(NotAnOwner));
        assert_eq!(owner_gate(owners.as_ref(), false, "bob"), Ok(false));
    }

    #[test]
    fn only_owners_skip_the_checks_and_only_when_asked() {
        let skipping = owners(true);
        assert_eq!(owner_gate(skipping.as_ref(), false, ALICE), Ok(true));
        assert_eq!(owner_gate(skipping.as_ref(), true, ALICE), Ok(true));
        assert_eq!(owner_gate(skipping.as_ref(), false, "bob"), Ok(false));
        assert_eq!(owner_gate(skipping.as_ref(), true, "bob"), Err(NotAnOwner));
        assert_eq!(owner_gate(owners(false).as_ref(), false, ALICE), Ok(false));
    }
}
