//! The command registry: declarations with their handlers and settings.
//! Every inherent method of [`CommandRegistry`] is here: the spec's
//! operations (register, look-ups, the text lane, the menu and its hash)
//! over the pure command area (`commands/`), and the framework's
//! registrations (typed commands, the built-in help). What the registry
//! is to others is in its children: the spec's [`CommandLookup`](crate::CommandLookup)
//! (`lookup.rs`) and the view a handler's context reads (`view.rs`).

mod help;
mod lookup;
mod typed;
mod view;

pub use help::render_help;

use std::fmt;
use std::future::Future;

use crate::commands::coerce::ParsedChoices;
use crate::commands::limits::{MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT};
use crate::commands::menu::{
    canonical_menu_json_iter, canonical_menu_len, canonicalize_iter, menu_hash_iter, CanonicalMenu,
};
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::text::{parse_text_with, TextParseResult};
use crate::commands::types::CommandDeclaration;
use crate::commands::validate::checks::violations_of;
use crate::commands::validate::{DeclarationError, DeclarationRule, Violation};
use crate::framework::aliases::AliasIndex;
use crate::framework::context::CommandContext;
use crate::framework::handler::{BoxError, CommandHandler};
use crate::framework::help::{category_violation, help_text_violation, HELP_COMMAND};
use crate::framework::pace::Pace;
use crate::framework::registered::{ConvertCheck, RegisteredCommand};
use crate::framework::settings::CommandSettings;
use crate::telemetry::CommandSlot;

/// The slash commands of one bot: declarations in registration order, each
/// with its handler.
///
/// Every registered declaration is valid, names are unique, there are at most
/// [`MAX_COMMANDS_PER_BOT`] commands, and the canonical menu stays within
/// [`MAX_COMMANDS_PAYLOAD`] bytes.
///
/// ```
/// use botlane::{CommandDeclaration, CommandRegistry};
///
/// let mut registry = CommandRegistry::new();
/// registry
///     .register(CommandDeclaration::new("ping", "Check the bot"), |_ctx| async {
///         Ok::<(), std::io::Error>(())
///     })?
///     .register(CommandDeclaration::new("help", "List commands"), |_ctx| async {
///         Ok::<(), std::io::Error>(())
///     })?;
/// assert_eq!(registry.len(), 2);
/// # Ok::<(), botlane::DeclarationError>(())
/// ```
///
/// `D` is the shared state its handlers read ([`CommandContext::data`]),
/// `()` by default.
pub struct CommandRegistry<D = ()> {
    commands: Vec<RegisteredCommand<D>>,
    /// Whether the built-in help is registered.
    help_enabled: bool,
    /// The text under the built-in help's list.
    help_footer: Option<String>,
    /// The commands' aliases, for the text lane (`aliases.rs`).
    pub(super) aliases: AliasIndex,
}

impl<D> Clone for CommandRegistry<D> {
    fn clone(&self) -> Self {
        Self {
            commands: self.commands.clone(),
            help_enabled: self.help_enabled,
            help_footer: self.help_footer.clone(),
            aliases: self.aliases.clone(),
        }
    }
}

impl<D> fmt::Debug for CommandRegistry<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandRegistry")
            .field("commands", &self.commands)
            .field("help_enabled", &self.help_enabled)
            .field("help_footer", &self.help_footer)
            .field("aliases", &self.aliases)
            .finish()
    }
}

/// An empty registry, for any state type: `CommandRegistry::<Scores>::default()`.
impl<D> Default for CommandRegistry<D> {
    fn default() -> Self {
        Self::empty()
    }
}

impl CommandRegistry {
    /// An empty registry whose handlers take no shared state; see
    /// [`empty`](Self::empty) for one whose handlers do.
    ///
    /// ```
    /// assert!(botlane::CommandRegistry::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::empty()
    }
}

impl<D> CommandRegistry<D> {
    /// An empty registry whose handlers read shared state of type `D`.
    ///
    /// ```
    /// use botlane::{CommandContext, CommandDeclaration, CommandRegistry};
    ///
    /// struct Scores;
    /// let mut registry = CommandRegistry::<Scores>::empty();
    /// registry.register(CommandDeclaration::new("top", "Best scores"), |ctx: CommandContext<Scores>| async move {
    ///     let _scores: &Scores = ctx.data();
    ///     Ok::<(), std::io::Error>(())
    /// })?;
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn empty() -> Self {
        Self {
            commands: Vec::new(),
            help_enabled: false,
            help_footer: None,
            aliases: AliasIndex::default(),
        }
    }

    /// Registers a command with an async handler; chainable.
    ///
    /// Fails, leaving the registry unchanged, with every violation at once:
    /// those of [`validate_declaration`](crate::validate_declaration), a name
    /// already registered (or already an alias), a registry already holding [`MAX_COMMANDS_PER_BOT`]
    /// commands, and a canonical menu that would exceed [`MAX_COMMANDS_PAYLOAD`] bytes;
    /// with settings, those of their category and aliases.
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry, DeclarationRule};
    ///
    /// let mut registry = CommandRegistry::new();
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// registry.register(CommandDeclaration::new("ping", "Pong"), ok)?;
    ///
    /// let err = registry.register(CommandDeclaration::new("ping", "Again"), ok).unwrap_err();
    /// assert_eq!(err.violations()[0].rule(), &DeclarationRule::DuplicateCommand);
    /// assert_eq!(registry.len(), 1);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn register<F, Fut, E>(
        &mut self,
        decl: CommandDeclaration,
        handler: F,
    ) -> Result<&mut Self, DeclarationError>
    where
        F: Fn(CommandContext<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.register_handler(decl, CommandHandler::new(handler))
    }

    /// Registers a command with an already wrapped handler; otherwise like
    /// [`register`](Self::register).
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandHandler, CommandRegistry};
    ///
    /// let handler = CommandHandler::new(|_ctx| async { Ok::<(), std::io::Error>(()) });
    /// let mut registry = CommandRegistry::new();
    /// registry
    ///     .register_handler(CommandDeclaration::new("a", "A"), handler.clone())?
    ///     .register_handler(CommandDeclaration::new("b", "B"), handler)?;
    /// assert_eq!(registry.len(), 2);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn register_handler(
        &mut self,
        decl: CommandDeclaration,
        handler: CommandHandler<D>,
    ) -> Result<&mut Self, DeclarationError> {
        self.insert(decl, handler, CommandSettings::new(), None)
    }

    /// Registers a command with its checks and cooldown; otherwise like
    /// [`register`](Self::register).
    ///
    /// ```
    /// use std::time::Duration;
    /// use botlane::framework::{Check, CommandSettings, Cooldown};
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register_with(
    ///     CommandDeclaration::new("ban", "Ban someone"),
    ///     CommandSettings::new()
    ///         .check(Check::allowed_users(["u1"]))
    ///         .cooldown(Cooldown::global(Duration::from_secs(5))),
    ///     |_ctx| async { Ok::<(), std::io::Error>(()) },
    /// )?;
    /// assert_eq!(registry.get("ban").map(|c| c.settings.checks.len()), Some(1));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn register_with<F, Fut, E>(
        &mut self,
        decl: CommandDeclaration,
        settings: CommandSettings<D>,
        handler: F,
    ) -> Result<&mut Self, DeclarationError>
    where
        F: Fn(CommandContext<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.insert(decl, CommandHandler::new(handler), settings, None)
    }

    pub(crate) fn insert(
        &mut self,
        decl: CommandDeclaration,
        handler: CommandHandler<D>,
        settings: CommandSettings<D>,
        convert: Option<ConvertCheck>,
    ) -> Result<&mut Self, DeclarationError> {
        let mut violations = violations_of(&decl);
        let at = |rule| Violation::at_command(&decl.name, rule);
        if self.get(&decl.name).is_some() {
            let clash = self.help_enabled && decl.name.eq_ignore_ascii_case(HELP_COMMAND);
            violations.push(at(if clash {
                DeclarationRule::HelpClash
            } else {
                DeclarationRule::DuplicateCommand
            }));
        }
        violations.extend(category_violation(&decl.name, &settings));
        violations.extend(help_text_violation(&decl.name, &settings));
        violations.extend(self.aliases.violations(
            &decl.name,
            &settings.aliases,
            |name| self.position(name),
            |index| self.at(index).decl.name.as_str(),
        ));
        if self.commands.len() >= MAX_COMMANDS_PER_BOT {
            violations.push(at(DeclarationRule::TooManyCommands));
        }
        let bytes = canonical_menu_len(self.list().chain([&decl]));
        if bytes > MAX_COMMANDS_PAYLOAD {
            violations.push(at(DeclarationRule::PayloadTooLarge { bytes }));
        }
        if !violations.is_empty() {
            return Err(DeclarationError::new(violations));
        }
        self.aliases.add(&settings.aliases, self.commands.len());
        self.commands.push(RegisteredCommand {
            choices: ParsedChoices::of_options(&decl.options),
            decl,
            handler,
            settings,
            convert,
            pace: Pace::default(),
            series: CommandSlot::new(),
        });
        Ok(self)
    }

    /// The command registered under `name`, compared ASCII case-insensitively.
    /// Names only, as the spec's look-up (and the structured lane's);
    /// [`find_command`](Self::find_command) also resolves the text lane's
    /// [aliases](crate::framework::CommandSettings::aliases).
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register(CommandDeclaration::new("roll", "Roll"), |_ctx| async {
    ///     Ok::<(), std::io::Error>(())
    /// })?;
    /// assert_eq!(registry.get("ROLL").map(|c| c.decl.name.as_str()), Some("roll"));
    /// assert!(registry.get("rol").is_none());
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn get(&self, name: &str) -> Option<&RegisteredCommand<D>> {
        self.position(name).map(|index| self.at(index))
    }

    /// The command a text-lane line naming `name` runs, as poise's
    /// `find_command` finds a prefix command: the one registered under
    /// `name`, else the one with the alias `name`
    /// ([`CommandSettings::aliases`]), compared ASCII case-insensitively.
    /// [`parse_from_text`](Self::parse_from_text) and the built-in help
    /// look commands up with it; [`get`](Self::get), the spec's look-up
    /// (the structured lane's too), knows names only.
    ///
    /// ```
    /// use botlane::framework::CommandSettings;
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register_with(
    ///     CommandDeclaration::new("roll", "Roll some dice"),
    ///     CommandSettings::new().aliases(["r", "dice"]),
    ///     |_ctx| async { Ok::<(), std::io::Error>(()) },
    /// )?;
    /// let name = |found: Option<&botlane::RegisteredCommand>| found.map(|c| c.decl.name.clone());
    /// assert_eq!(name(registry.find_command("DICE")), Some("roll".to_owned()));
    /// assert_eq!(name(registry.find_command("roll")), Some("roll".to_owned()));
    /// assert!(registry.find_command("d").is_none());
    /// assert!(registry.get("dice").is_none());
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn find_command(&self, name: &str) -> Option<&RegisteredCommand<D>> {
        self.find_position(name).map(|index| self.at(index))
    }

    /// The declarations in registration order.
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let mut registry = CommandRegistry::new();
    /// registry
    ///     .register(CommandDeclaration::new("zeta", "Z"), ok)?
    ///     .register(CommandDeclaration::new("alpha", "A"), ok)?;
    /// let names: Vec<&str> = registry.list().map(|d| d.name.as_str()).collect();
    /// assert_eq!(names, ["zeta", "alpha"]);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn list(&self) -> impl ExactSizeIterator<Item = &CommandDeclaration> + Clone + '_ {
        self.commands.iter().map(|c| &c.decl)
    }

    /// The number of registered commands (the spec's `size`).
    ///
    /// ```
    /// assert_eq!(botlane::CommandRegistry::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether no command is registered.
    ///
    /// ```
    /// assert!(botlane::CommandRegistry::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Runs the text grammar over `text` (`prefix` defaults to
    /// [`DEFAULT_COMMAND_PREFIX`](crate::DEFAULT_COMMAND_PREFIX)).
    ///
    /// [`TextParseResult::None`] when the line invokes no registered command;
    /// [`TextParseResult::Ok`] with a text-lane invocation when its arguments
    /// parse; [`TextParseResult::Error`] naming the command otherwise. The
    /// command is looked up with [`find_command`](Self::find_command): a
    /// line may name it by one of its aliases
    /// ([`CommandSettings::aliases`]), and the invocation (or the error)
    /// then names the command by its own name.
    ///
    /// ```
    /// use botlane::{
    ///     CommandArgValue, CommandDeclaration, CommandOption, CommandOptionType, CommandRegistry,
    ///     CommandSource, TextParseResult,
    /// };
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register(
    ///     CommandDeclaration::new("roll", "Roll dice")
    ///         .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true)),
    ///     |_ctx| async { Ok::<(), std::io::Error>(()) },
    /// )?;
    ///
    /// let TextParseResult::Ok(invocation) = registry.parse_from_text("/ROLL 2", None) else {
    ///     panic!("a registered command with a valid argument");
    /// };
    /// assert_eq!(invocation.name, "roll");
    /// assert_eq!(invocation.args["count"], CommandArgValue::Integer(2));
    /// assert_eq!(invocation.source, CommandSource::Text);
    ///
    /// assert!(matches!(registry.parse_from_text("/roll two", None), TextParseResult::Error { .. }));
    /// assert_eq!(registry.parse_from_text("!roll 2", None), TextParseResult::None);
    /// assert_eq!(registry.parse_from_text("/dance", None), TextParseResult::None);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn parse_from_text(&self, text: &str, prefix: Option<&str>) -> TextParseResult {
        self.parse_among(text, PrefixSet::single(prefix), String::new)
            .0
    }

    /// [`parse_from_text`](Self::parse_from_text) under the prefix the
    /// line uses of a client's prefixes, with the [`position`](Self::position)
    /// of the command the line names, if it names one: dispatch holds on
    /// to it rather than look the command up again.
    pub(crate) fn parse_among(
        &self,
        text: &str,
        prefixes: PrefixSet<'_>,
        name: impl FnOnce() -> String,
    ) -> (TextParseResult, Option<usize>) {
        let mut found = None;
        let find = |raw_name: &str| {
            let index = self.find_position(raw_name)?;
            found = Some(index);
            let command = self.at(index);
            Some((&command.decl, &*command.choices))
        };
        let parsed = parse_text_with(text, prefixes, find, name);
        (parsed, found)
    }

    /// The canonical menu of the registered commands; equals
    /// [`canonicalize_menu`](crate::canonicalize_menu) of [`list`](Self::list).
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    /// let mut registry = CommandRegistry::new();
    /// registry
    ///     .register(CommandDeclaration::new("zeta", "Z"), ok)?
    ///     .register(CommandDeclaration::new("alpha", "A"), ok)?;
    /// assert_eq!(registry.canonical_menu()[0].name, "alpha");
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn canonical_menu(&self) -> CanonicalMenu {
        canonicalize_iter(self.list())
    }

    /// The menu hash; equals [`compute_menu_hash`](crate::compute_menu_hash)
    /// of [`list`](Self::list). A session-local skip guard, never sent.
    ///
    /// ```
    /// use botlane::{compute_menu_hash, CommandDeclaration, CommandRegistry};
    ///
    /// let ping = CommandDeclaration::new("ping", "Pong");
    /// let mut registry = CommandRegistry::new();
    /// registry.register(ping.clone(), |_ctx| async { Ok::<(), std::io::Error>(()) })?;
    /// assert_eq!(registry.hash(), compute_menu_hash(&[ping]));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn hash(&self) -> String {
        menu_hash_iter(self.list())
    }

    /// The compact JSON of [`canonical_menu`](Self::canonical_menu): the
    /// exact bytes that are published at login and hashed by [`hash`](Self::hash).
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry};
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register(CommandDeclaration::new("ping", "Pong"), |_ctx| async { Ok::<(), std::io::Error>(()) })?;
    /// assert_eq!(registry.canonical_menu_json(), r#"[["ping","Pong",[]]]"#);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn canonical_menu_json(&self) -> String {
        canonical_menu_json_iter(self.list())
    }

    /// Where [`get`](Self::get) finds `name`: for a holder of the registry's
    /// `Arc` that must name a command without borrowing the registry.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.commands
            .iter()
            .position(|c| c.decl.name.eq_ignore_ascii_case(name))
    }

    /// Where [`find_command`](Self::find_command) finds `name`.
    fn find_position(&self, name: &str) -> Option<usize> {
        self.position(name).or_else(|| self.aliases.find(name))
    }

    /// The registered commands, in registration order.
    pub(crate) fn registered(&self) -> impl Iterator<Item = &RegisteredCommand<D>> {
        self.commands.iter()
    }

    /// The command at `index`, a [`position`](Self::position) in this
    /// registry (a snapshot never changes, so the index stays valid).
    pub(crate) fn at(&self, index: usize) -> &RegisteredCommand<D> {
        &self.commands[index]
    }

    fn find_decl(&self, name: &str) -> Option<&CommandDeclaration> {
        self.get(name).map(|c| &c.decl)
    }
}
