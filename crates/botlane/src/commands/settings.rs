//! Per-command settings that are not part of the declaration: checks and
//! a cooldown.

use super::check::Check;
use super::cooldown::Cooldown;

/// How one command runs beyond its declaration: the checks that must pass
/// and its cooldown. Given at registration with
/// [`CommandRegistry::register_with`](crate::CommandRegistry::register_with)
/// or [`CommandRegistry::command_with`](crate::CommandRegistry::command_with);
/// dispatch reads them from [`RegisteredCommand::settings`](crate::RegisteredCommand::settings).
///
/// The settings are immutable once registered; the cooldowns' live state is
/// kept apart, in a [`CooldownTracker`](crate::CooldownTracker).
///
/// ```
/// use std::time::Duration;
/// use botlane::{Check, CommandSettings, Cooldown};
///
/// let settings = CommandSettings::new()
///     .check(Check::allowed_channels(["c1"]))
///     .cooldown(Cooldown::per_user(Duration::from_secs(10)));
/// assert_eq!(settings.checks.len(), 1);
/// assert!(settings.cooldown.is_some());
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CommandSettings {
    /// Checks run, in order, after the client's own (see [`run_checks`](crate::run_checks)).
    pub checks: Vec<Check>,
    /// How often the command may run.
    pub cooldown: Option<Cooldown>,
}

impl CommandSettings {
    /// No checks, no cooldown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a check (builder style).
    #[must_use]
    pub fn check(mut self, check: Check) -> Self {
        self.checks.push(check);
        self
    }

    /// Sets the cooldown (builder style).
    #[must_use]
    pub fn cooldown(mut self, cooldown: Cooldown) -> Self {
        self.cooldown = Some(cooldown);
        self
    }
}
