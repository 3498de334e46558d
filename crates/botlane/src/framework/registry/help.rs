//! The built-in help in the registry: enabling it, its footer, and its
//! answer (rendered by `framework/help.rs` from what the registry lends it).

use super::CommandRegistry;
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::validate::{DeclarationError, DeclarationRule, Violation};
use crate::framework::help::{help_declaration, help_handler, render, HelpSource, HELP_COMMAND};
use crate::framework::registered::RegisteredCommand;
use crate::framework::settings::CommandSettings;

impl<D: Send + Sync + 'static> CommandRegistry<D> {
    /// Registers the built-in `help` command: `/help` lists the commands and
    /// `/help <command>` explains one (see [`render_help`](crate::framework::render_help)).
    ///
    /// It is a command like any other: it counts toward
    /// [`MAX_COMMANDS_PER_BOT`](crate::MAX_COMMANDS_PER_BOT) and
    /// [`MAX_COMMANDS_PAYLOAD`](crate::MAX_COMMANDS_PAYLOAD) and is in the
    /// published menu. A command of the bot's own named `help`, registered
    /// before or after, is a
    /// [`DeclarationRule::HelpClash`](crate::DeclarationRule::HelpClash);
    /// an [alias](crate::framework::CommandSettings::aliases) `help` is refused as a
    /// name of a registered command once it is enabled, and enabling it
    /// while a command has that alias is refused as well.
    /// Enabling it twice is harmless. Its handler reads the registry from
    /// its context
    /// ([`CommandContext::with_registry`](crate::CommandContext::with_registry)),
    /// which dispatch gives it.
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry, DeclarationRule};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.enable_help()?;
    /// assert_eq!(registry.get("help").map(|c| c.decl.options.len()), Some(1));
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let err = registry.register(CommandDeclaration::new("help", "My own"), ok).unwrap_err();
    /// assert_eq!(err.violations()[0].rule(), &DeclarationRule::HelpClash);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn enable_help(&mut self) -> Result<&mut Self, DeclarationError> {
        if self.help_enabled {
            return Ok(self);
        }
        if self.get(HELP_COMMAND).is_some() {
            let violation = Violation::at_command(HELP_COMMAND, DeclarationRule::HelpClash);
            return Err(DeclarationError::new(vec![violation]));
        }
        self.insert(
            help_declaration(),
            help_handler(),
            CommandSettings::new(),
            None,
        )?;
        self.help_enabled = true;
        Ok(self)
    }

    /// Whether the built-in help command is registered.
    ///
    /// ```
    /// let mut registry = botlane::CommandRegistry::new();
    /// assert!(!registry.help_enabled());
    /// registry.enable_help()?;
    /// assert!(registry.help_enabled());
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn help_enabled(&self) -> bool {
        self.help_enabled
    }

    /// Sets a text shown under the built-in help's list, after a blank
    /// line (poise's `extra_text_at_bottom`), for every later `/help`;
    /// chainable. Not under the explanation of one command. An empty or
    /// blank text removes it. It is sent in the same message as the list
    /// (keep it short), each line made safe as an answer is
    /// ([`neutralise_answer`](crate::framework::neutralise_answer): a line starting
    /// with any of the client's prefixes or ASCII punctuation is marked, so
    /// that no bot reading line by line takes it for an invocation); any
    /// line break a client shows (`\r`, U+2028…) ends a line.
    ///
    /// ```
    /// use botlane::framework::render_help;
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry
    ///     .register(CommandDeclaration::new("ping", "Pong"), |_ctx| async { Ok::<(), std::io::Error>(()) })?
    ///     .help_footer("Questions? Ask in #bot-support.");
    /// assert_eq!(
    ///     render_help(&registry, None, None),
    ///     "Commands:\n/ping - Pong\n\nQuestions? Ask in #bot-support."
    /// );
    /// assert!(!render_help(&registry, Some("ping"), None).contains("Questions"));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn help_footer(&mut self, text: impl Into<String>) -> &mut Self {
        let text = text.into();
        self.help_footer = (!text.trim().is_empty()).then_some(text);
        self
    }
}

/// The help answer of a registry: the list of commands, or how to use
/// one (what the built-in `help` command sends). One command's own longer
/// explanation, the last part of what this answers about that command, is
/// its [`CommandSettings::help_text`](crate::framework::CommandSettings::help_text)
/// (a typed command's [`Command::help_text`](crate::Command::help_text)
/// when its settings have none).
///
/// `prefix` is the text-lane prefix (`None` means
/// [`DEFAULT_COMMAND_PREFIX`](crate::DEFAULT_COMMAND_PREFIX)). The
/// built-in help of a client with
/// [`additional_prefixes`](crate::ClientOptions::additional_prefixes) is
/// this text with the main prefix, and in the list, before the footer and
/// after a blank line, one more line naming the others
/// (`Other prefixes: ? !!`); its free-text lines are made safe against
/// all of them, and `command` may start with any. Without `command`, one line per command,
/// except those set to
/// [`hide_in_help`](crate::framework::CommandSettings::hide_in_help): its usage line,
/// ` - `, its description, and its
/// [`aliases`](crate::framework::CommandSettings::aliases) if it has some
/// (` (aliases: /r, /dice)`); the commands without a
/// [`category`](crate::framework::CommandSettings::category) first, then each
/// category after a blank line and its heading (in the order of its first
/// listed command's registration), by name within each; then
/// the registry's [`help_footer`](CommandRegistry::help_footer), if any,
/// after a blank line, split at any line break a client shows and each
/// line made safe as below. With `command` (its name or one of its
/// aliases, in any case, with or without the prefix (the name as given
/// first, so that `note` under the prefix `no` is `note`); a hidden one too, since it is in
/// the published menu anyway): the command's name and description, its
/// usage line, its aliases if it has some, one line per option with its
/// type, whether it is required, its choices and its bounds, and last,
/// after a blank line, its [`help_text`](crate::framework::CommandSettings::help_text)
/// if it has one, each line made safe as an answer is
/// ([`neutralise_answer`](crate::framework::neutralise_answer)). An unknown command gets a short sentence pointing to the list;
/// the name given is not repeated.
///
/// Its first line (`Commands…`, `Command roll: …` or `No command…`) and
/// the category headings are made safe as an answer is too, so that under
/// a prefix such as `C` no bot reads the help as an invocation; the lines
/// the help writes itself with a fixed shape (`usage: `, `aliases: `, the
/// option lines) read as none under a prefix without whitespace, and a
/// description's lines after its first (it may hold line breaks) are made
/// safe too. Only the usage lines of the list start with the prefix, by
/// design: they show what to type.
///
/// ```
/// use botlane::framework::render_help;
/// use botlane::{CommandDeclaration, CommandOption, CommandOptionType, CommandRegistry};
///
/// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
/// let mut registry = CommandRegistry::new();
/// registry
///     .register(
///         CommandDeclaration::new("roll", "Roll some dice")
///             .option(CommandOption::new("count", "How many dice", CommandOptionType::Integer).required(true).min(1).max(100))
///             .option(CommandOption::new("sides", "Sides per die", CommandOptionType::Integer).choices(["6", "20"])),
///         ok,
///     )?
///     .register(CommandDeclaration::new("ping", "Check the bot"), ok)?
///     .enable_help()?;
///
/// assert_eq!(
///     render_help(&registry, None, None),
///     "Commands (send /help <command> for details):\n\
///      /help [command (up to 32 characters)] - List the commands, or explain one\n\
///      /ping - Check the bot\n\
///      /roll <count (1 to 100)> [sides] - Roll some dice"
/// );
/// assert_eq!(
///     render_help(&registry, Some("ROLL"), Some("!")),
///     "Command roll: Roll some dice\n\
///      usage: !roll <count (1 to 100)> [sides]\n\
///      - count (integer, required, 1 to 100): How many dice\n\
///      - sides (integer, one of 6, 20): Sides per die"
/// );
/// assert_eq!(
///     render_help(&registry, Some("dance"), None),
///     "No command by that name; send /help for the list."
/// );
/// # Ok::<(), botlane::DeclarationError>(())
/// ```
pub fn render_help<D>(
    registry: &CommandRegistry<D>,
    command: Option<&str>,
    prefix: Option<&str>,
) -> String {
    render(registry, command, PrefixSet::single(prefix))
}

impl<D> HelpSource<D> for CommandRegistry<D> {
    fn commands(&self) -> &[RegisteredCommand<D>] {
        &self.commands
    }

    fn find(&self, name: &str) -> Option<&RegisteredCommand<D>> {
        self.find_command(name)
    }

    fn footer(&self) -> Option<&str> {
        self.help_footer.as_deref()
    }
}
