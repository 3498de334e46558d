//! Per-command settings that are not part of the declaration: checks, a
//! cooldown, a handler timeout, an error hook, whether only the bot's
//! owners may run it, how the built-in help lists and explains it, and the
//! other names the text lane knows it by.

use std::fmt;
use std::time::Duration;

use super::check::Check;
use super::cooldown::Cooldown;
use super::on_error::OnError;

/// How long a command's checks and handler may run by default: generous,
/// so that only a handler that is stuck is cut, but bounded, so that a stuck
/// one cannot hold a handler permit for ever.
pub const DEFAULT_HANDLER_TIMEOUT: Duration = Duration::from_secs(300);

/// How one command runs beyond its declaration: the checks that must pass,
/// its cooldown, its handler timeout and what to do when it fails. Given at
/// registration with
/// [`CommandRegistry::register_with`](crate::CommandRegistry::register_with)
/// or [`CommandRegistry::command_with`](crate::CommandRegistry::command_with);
/// dispatch reads them from [`RegisteredCommand::settings`](crate::RegisteredCommand::settings).
///
/// Whatever is left unset falls back to the client's: its checks always run
/// first, and its [`handler_timeout`](crate::ClientOptions::handler_timeout)
/// and [`on_error`](crate::Client::on_error) apply unless the command sets
/// its own. The settings are immutable once registered; the cooldowns' live
/// state is kept apart, in a [`CooldownTracker`](crate::framework::CooldownTracker).
///
/// ```
/// use std::time::Duration;
/// use botlane::framework::{Check, CommandSettings, Cooldown, OnError};
///
/// let settings: CommandSettings = CommandSettings::new()
///     .check(Check::allowed_channels(["c1"]))
///     .cooldown(Cooldown::per_user(Duration::from_secs(10)))
///     .timeout(Duration::from_secs(5))
///     .on_error(OnError::silent());
/// assert_eq!(settings.checks.len(), 1);
/// assert!(settings.cooldown.is_some());
/// assert_eq!(settings.timeout, Some(Duration::from_secs(5)));
/// ```
#[non_exhaustive]
pub struct CommandSettings<D = ()> {
    /// Checks run, in order, after the client's own (each with [`Check::run`](crate::framework::Check::run)).
    pub checks: Vec<Check<D>>,
    /// How often the command may run.
    pub cooldown: Option<Cooldown>,
    /// How long the command's checks and handler may run together before
    /// the handler is aborted and the failure reported with reason
    /// [`Timeout`](crate::CommandErrorReason::Timeout); `None` uses the
    /// client's [`handler_timeout`](crate::ClientOptions::handler_timeout).
    pub timeout: Option<Duration>,
    /// What to do when the command fails; `None` uses the client's
    /// ([`Client::on_error`](crate::Client::on_error)).
    pub on_error: Option<OnError<D>>,
    /// Left out of the built-in help's list (see
    /// [`hide_in_help`](Self::hide_in_help)).
    pub hide_in_help: bool,
    /// The heading the built-in help lists the command under (see
    /// [`category`](Self::category)); `None` lists it with the
    /// uncategorised commands, first.
    pub category: Option<String>,
    /// Only the client's owners may run it (see
    /// [`owners_only`](Self::owners_only)).
    pub owners_only: bool,
    /// Other names the text lane runs it by (see [`aliases`](Self::aliases)).
    pub aliases: Vec<String>,
    /// The longer explanation `/help <name>` ends with (see
    /// [`help_text`](Self::help_text)); `None` registers a typed command
    /// with its own, [`Command::help_text`](crate::Command::help_text).
    pub help_text: Option<String>,
}

impl<D> CommandSettings<D> {
    /// No checks, no cooldown; the client's timeout and error hook.
    pub fn new() -> Self {
        Self {
            checks: Vec::new(),
            cooldown: None,
            timeout: None,
            on_error: None,
            hide_in_help: false,
            category: None,
            owners_only: false,
            aliases: Vec::new(),
            help_text: None,
        }
    }

    /// Adds a check (builder style).
    #[must_use]
    pub fn check(mut self, check: Check<D>) -> Self {
        self.checks.push(check);
        self
    }

    /// Sets the cooldown (builder style).
    #[must_use]
    pub fn cooldown(mut self, cooldown: Cooldown) -> Self {
        self.cooldown = Some(cooldown);
        self
    }

    /// Sets the timeout of the command's checks and handler (builder
    /// style), instead of the client's.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets what to do when the command fails (builder style), instead of
    /// the client's: [`OnError::silent`] turns its answers off.
    #[must_use]
    pub fn on_error(mut self, on_error: OnError<D>) -> Self {
        self.on_error = Some(on_error);
        self
    }

    /// Leaves the command out of the list of the built-in help
    /// ([`enable_help`](crate::CommandRegistry::enable_help)), as poise's
    /// `hide_in_help` does (builder style). It is still in the published
    /// menu (the menu is the spec's, and a chat app shows it), still runs,
    /// and `/help <name>` still explains it to whoever names it: hiding
    /// keeps the list short, it keeps nothing secret. To keep people from
    /// running it, add a [`check`](Self::check).
    ///
    /// ```
    /// use botlane::framework::{render_help, Check, CommandSettings};
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let mut registry = CommandRegistry::new();
    /// registry
    ///     .register(CommandDeclaration::new("roll", "Roll some dice"), ok)?
    ///     .register_with(
    ///         CommandDeclaration::new("reload", "Reload the word lists"),
    ///         CommandSettings::new()
    ///             .hide_in_help()
    ///             .check(Check::allowed_users(["owner-id"])),
    ///         ok,
    ///     )?
    ///     .enable_help()?;
    ///
    /// let list = render_help(&registry, None, None);
    /// assert!(list.contains("/roll") && !list.contains("reload"), "{list}");
    /// // Named, it is explained; and it stays in the menu.
    /// assert!(render_help(&registry, Some("reload"), None).starts_with("Command reload:"));
    /// assert!(registry.canonical_menu_json().contains("\"reload\""));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    #[must_use]
    pub fn hide_in_help(mut self) -> Self {
        self.hide_in_help = true;
        self
    }

    /// Lists the command under the heading `category` in the built-in
    /// help, as poise's `category` does (builder style). The uncategorised
    /// commands (`help` among them) come first, under the list's first line
    /// as before; then each category, in the order of the first command
    /// registered with it that the list shows (hidden ones aside), after a
    /// blank line and its heading `category:`;
    /// the commands by name within each. Categories are compared exactly
    /// (`Fun` and `fun` are two). Registration refuses a category that is
    /// blank, longer than 100 characters or holds a line break or another
    /// control character ([`DeclarationRule::InvalidCategory`](crate::DeclarationRule::InvalidCategory)).
    /// Help only: the menu and dispatch do not change.
    ///
    /// ```
    /// use botlane::framework::{render_help, CommandSettings};
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let fun = || CommandSettings::new().category("Fun");
    /// let mut registry = CommandRegistry::new();
    /// registry
    ///     .register_with(CommandDeclaration::new("warn", "Warn a user"), CommandSettings::new().category("Moderation"), ok)?
    ///     .register_with(CommandDeclaration::new("roll", "Roll some dice"), fun(), ok)?
    ///     .register_with(CommandDeclaration::new("coin", "Flip a coin"), fun(), ok)?
    ///     .enable_help()?;
    ///
    /// assert_eq!(
    ///     render_help(&registry, None, None),
    ///     "Commands (send /help <command> for details):\n\
    ///      /help [command (up to 32 characters)] - List the commands, or explain one\n\
    ///      \n\
    ///      Moderation:\n\
    ///      /warn - Warn a user\n\
    ///      \n\
    ///      Fun:\n\
    ///      /coin - Flip a coin\n\
    ///      /roll - Roll some dice"
    /// );
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    #[must_use]
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Lets only the client's owners ([`ClientOptions::owners`](crate::ClientOptions::owners))
    /// run the command, as poise's `owners_only` does (builder style).
    /// Anyone else is refused before any check runs, as by a check: reason
    /// [`Check`](crate::CommandErrorReason::Check), the error a
    /// [`NotAnOwner`](crate::framework::NotAnOwner) (its text is the default answer;
    /// an error hook finds it with
    /// [`error_as`](crate::CommandError::error_as) to word its own). A
    /// client with no owners refuses everyone. The command stays in the
    /// menu and in the help; add [`hide_in_help`](Self::hide_in_help) to
    /// keep the list short.
    ///
    /// ```
    /// use botlane::framework::CommandSettings;
    /// let reload: CommandSettings = CommandSettings::new().owners_only().hide_in_help();
    /// assert!(reload.owners_only);
    /// ```
    #[must_use]
    pub fn owners_only(mut self) -> Self {
        self.owners_only = true;
        self
    }

    /// Adds other names the command runs by on the text lane, as poise's
    /// `aliases("r", "dice")` does for a prefix command (builder style;
    /// each call adds to the list). `/r 2` then runs `roll` exactly as
    /// `/roll 2` does: the same arguments, and everything keyed on a
    /// command's name (its cooldown, the checks, the error answers, the
    /// events, [`after_command`](crate::Client::after_command)) sees `roll`;
    /// only [`CommandContext::invoked_name`](crate::CommandContext::invoked_name)
    /// tells which name was typed. [`CommandRegistry::find_command`](crate::CommandRegistry::find_command)
    /// resolves them; the built-in help lists them beside the command and
    /// explains the command when asked about one.
    ///
    /// **Text lane only**: the menu, which the spec fixes, never carries
    /// an alias, so neither its hash nor what a chat app offers changes,
    /// and a sidecar naming an alias is an unknown command (ignored, as
    /// the menu never offered it). [`CommandRegistry::get`](crate::CommandRegistry::get) and
    /// [`parse_invocation_text`](crate::parse_invocation_text), which sees
    /// one declaration and no settings, know names only.
    ///
    /// Registration refuses, naming the alias, one that breaks the rule of
    /// command names (`^[a-z0-9_-]{1,32}$`, so lower case), the command's
    /// own name, one given twice, one that is already a name or an alias of
    /// another command (`help` too when the built-in help is enabled), and
    /// more than [`MAX_ALIASES_PER_COMMAND`](crate::framework::MAX_ALIASES_PER_COMMAND);
    /// a command registered later whose name is an alias is refused as well
    /// ([`DeclarationRule`](crate::DeclarationRule)'s alias rules).
    ///
    /// ```
    /// use botlane::framework::{render_help, CommandSettings};
    /// use botlane::{CommandDeclaration, CommandRegistry, TextParseResult};
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let mut registry = CommandRegistry::new();
    /// registry.register_with(
    ///     CommandDeclaration::new("roll", "Roll some dice"),
    ///     CommandSettings::new().aliases(["r", "dice"]),
    ///     ok,
    /// )?;
    ///
    /// let TextParseResult::Ok(invocation) = registry.parse_from_text("/R", None) else {
    ///     panic!("an alias of a registered command");
    /// };
    /// assert_eq!(invocation.name, "roll");
    /// assert_eq!(render_help(&registry, None, None), "Commands:\n/roll - Roll some dice (aliases: /r, /dice)");
    /// // Not in the menu, and not a name.
    /// assert_eq!(registry.canonical_menu_json(), r#"[["roll","Roll some dice",[]]]"#);
    /// assert!(registry.get("r").is_none());
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    #[must_use]
    pub fn aliases<I>(mut self, aliases: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.aliases.extend(aliases.into_iter().map(Into::into));
        self
    }

    /// Sets the longer explanation the built-in help gives when asked
    /// about this command (`/help roll`, or `/help r` for an alias), as
    /// poise's `help_text` does (builder style). A typed command's own,
    /// [`Command::help_text`](crate::Command::help_text) (a derived
    /// command's doc comment after its first paragraph), is registered
    /// only when this is not set: this one wins. It ends the explanation, after a blank line: the
    /// name, description, usage, aliases and options keep their place and
    /// shape above it. Never in the list, which shows the one-line
    /// description, and never in the menu (the spec's: neither its hash nor
    /// what a chat app offers changes). The built-in help's
    /// whole answer, this text included, is
    /// [`render_help`](crate::framework::render_help)'s.
    ///
    /// Paragraphs are welcome: lines break with `\n`. Each line is shown
    /// as an answer is ([`neutralise_answer`](crate::framework::neutralise_answer)):
    /// one that starts with any of the client's prefixes, or whose first
    /// visible character is ASCII punctuation, gets
    /// [`ANSWER_MARKER`](crate::framework::ANSWER_MARKER) in front,
    /// so that no bot reading line by line runs `/roll 2` from it (write
    /// bullets with `•`, not `-`). Anyone may ask: a command
    /// [hidden](Self::hide_in_help) from the list or
    /// [for owners only](Self::owners_only) is explained, this text
    /// included, like any other, so keep nothing private in it.
    /// Registration refuses, naming the
    /// command, a text that is blank, longer than
    /// [`MAX_HELP_TEXT_CHARS`](crate::framework::MAX_HELP_TEXT_CHARS), or holds a
    /// control character other than `\n` (`\r` and tabs too) or U+2028 /
    /// U+2029, which a client shows as line breaks
    /// ([`DeclarationRule::InvalidHelpText`](crate::DeclarationRule::InvalidHelpText)).
    ///
    /// ```
    /// use botlane::framework::{render_help, CommandSettings};
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let mut registry = CommandRegistry::new();
    /// registry.register_with(
    ///     CommandDeclaration::new("roll", "Roll some dice"),
    ///     CommandSettings::new()
    ///         .aliases(["r"])
    ///         .help_text("Rolls a six-sided die.\n\n/roll 2 would roll it twice."),
    ///     ok,
    /// )?;
    ///
    /// assert_eq!(
    ///     render_help(&registry, Some("r"), None),
    ///     "Command roll: Roll some dice\n\
    ///      usage: /roll\n\
    ///      aliases: /r\n\
    ///      \n\
    ///      Rolls a six-sided die.\n\
    ///      \n\
    ///      ⚠ /roll 2 would roll it twice."
    /// );
    /// // Not in the list, not in the menu.
    /// assert_eq!(render_help(&registry, None, None), "Commands:\n/roll - Roll some dice (aliases: /r)");
    /// assert_eq!(registry.canonical_menu_json(), r#"[["roll","Roll some dice",[]]]"#);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    #[must_use]
    pub fn help_text(mut self, text: impl Into<String>) -> Self {
        self.help_text = Some(text.into());
        self
    }
}

impl<D> CommandSettings<D> {
    /// These settings, given at registration, over those a typed command
    /// declares (`#[command(...)]`): each one set here wins, the declared
    /// one stands where this leaves it unset; the checks are the declared
    /// ones, then these.
    pub(crate) fn over(self, declared: Self) -> Self {
        let mut checks = declared.checks;
        checks.extend(self.checks);
        Self {
            checks,
            cooldown: self.cooldown.or(declared.cooldown),
            timeout: self.timeout.or(declared.timeout),
            on_error: self.on_error.or(declared.on_error),
            hide_in_help: self.hide_in_help || declared.hide_in_help,
            category: self.category.or(declared.category),
            owners_only: self.owners_only || declared.owners_only,
            aliases: if self.aliases.is_empty() {
                declared.aliases
            } else {
                self.aliases
            },
            help_text: self.help_text.or(declared.help_text),
        }
    }
}

impl<D> Default for CommandSettings<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D> Clone for CommandSettings<D> {
    fn clone(&self) -> Self {
        Self {
            checks: self.checks.clone(),
            cooldown: self.cooldown,
            timeout: self.timeout,
            on_error: self.on_error.clone(),
            hide_in_help: self.hide_in_help,
            category: self.category.clone(),
            owners_only: self.owners_only,
            aliases: self.aliases.clone(),
            help_text: self.help_text.clone(),
        }
    }
}

impl<D> fmt::Debug for CommandSettings<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandSettings")
            .field("checks", &self.checks.len())
            .field("cooldown", &self.cooldown)
            .field("timeout", &self.timeout)
            .field("on_error", &self.on_error)
            .field("hide_in_help", &self.hide_in_help)
            .field("category", &self.category)
            .field("owners_only", &self.owners_only)
            .field("aliases", &self.aliases)
            .field("help_text", &self.help_text)
            .finish()
    }
}
