//! The built-in `help` command: its declaration, its handler, the text it
//! answers with, generated from what a registry lends it ([`HelpSource`]:
//! grouped by the commands' categories, with a command's own help text
//! when it explains one), and the rules of the settings it shows (a
//! category, a help text).

use std::fmt::Write as _;

use super::answer::{may_break_a_line, neutralise, neutralise_later_lines};
use super::context::CommandContext;
use super::handler::{BoxError, CommandHandler};
use super::registered::RegisteredCommand;
use super::settings::CommandSettings;
use crate::commands::bounds::bounds_phrase;
use crate::commands::limits::MAX_HELP_TEXT_CHARS;
use crate::commands::limits::MAX_NAME_LEN;
use crate::commands::option::CommandOption;
use crate::commands::option_type::CommandOptionType;
use crate::commands::text::format::usage_line;
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::types::CommandDeclaration;
use crate::commands::validate::{DeclarationRule, HelpTextFault, Violation};

/// The longest category, in characters: a heading, not a paragraph.
const MAX_CATEGORY_CHARS: usize = 100;

/// The name of the built-in help command.
pub(crate) const HELP_COMMAND: &str = "help";

/// The declaration [`CommandRegistry::enable_help`](crate::CommandRegistry::enable_help)
/// registers: `help [command]`.
///
/// ```
/// let help = botlane::framework::help_declaration();
/// assert_eq!(help.name, "help");
/// assert_eq!(botlane::framework::usage_line(&help, None), "/help [command (up to 32 characters)]");
/// assert!(botlane::validate_declaration(&help).is_ok());
/// ```
pub fn help_declaration() -> CommandDeclaration {
    CommandDeclaration::new(HELP_COMMAND, "List the commands, or explain one").option(
        CommandOption::new(
            "command",
            "The command to explain",
            CommandOptionType::String,
        )
        .max_length(MAX_NAME_LEN),
    )
}

/// The violation of a command's category, if it breaks the rule of
/// [`CommandSettings::category`].
pub(crate) fn category_violation<D>(
    command: &str,
    settings: &CommandSettings<D>,
) -> Option<Violation> {
    let category = settings.category.as_deref()?;
    let fits = !category.trim().is_empty()
        && category.chars().count() <= MAX_CATEGORY_CHARS
        && !category.chars().any(may_break_a_line);
    let rule = DeclarationRule::InvalidCategory {
        category: category.to_owned(),
    };
    (!fits).then(|| Violation::at_command(command, rule))
}

/// The violation of a command's help text, if it breaks the rule of
/// [`CommandSettings::help_text`]: lines split at `\n` only, so that the
/// help can make each one safe on its own (see [`command_detail`]).
pub(crate) fn help_text_violation<D>(
    command: &str,
    settings: &CommandSettings<D>,
) -> Option<Violation> {
    let text = settings.help_text.as_deref()?;
    let chars = text.chars().count();
    let breaks = |c: char| c != '\n' && may_break_a_line(c);
    let fault = if text.trim().is_empty() {
        HelpTextFault::Blank
    } else if chars > MAX_HELP_TEXT_CHARS {
        HelpTextFault::TooLong { chars }
    } else {
        let (line, character) = text
            .split('\n')
            .enumerate()
            .find_map(|(i, line)| line.chars().find(|&c| breaks(c)).map(|c| (i + 1, c)))?;
        HelpTextFault::Character { line, character }
    };
    let rule = DeclarationRule::InvalidHelpText { fault };
    Some(Violation::at_command(command, rule))
}

/// The built-in help command failed because dispatch gave it no registry.
///
/// ```
/// assert!(botlane::framework::HelpUnavailable.to_string().contains("CommandContext::with_registry"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the help command needs the registry in its context (CommandContext::with_registry)")]
pub struct HelpUnavailable;

/// Answers with the help of the context's registry, as a reply.
pub(crate) fn help_handler<D: Send + Sync + 'static>() -> CommandHandler<D> {
    CommandHandler::new(|ctx: CommandContext<D>| async move {
        let text = help_for(&ctx).ok_or(HelpUnavailable)?;
        ctx.reply(&text).await?;
        Ok::<(), BoxError>(())
    })
}

/// The help answer for one invocation of `help`: the help of the
/// context's registry for its `command` argument, with its prefixes;
/// `None` without a registry.
pub(crate) fn help_for<D>(ctx: &CommandContext<D>) -> Option<String> {
    let command = ctx.get_string("command");
    Some(ctx.view()?.help(command.as_deref(), ctx.prefix_set()))
}

/// What the help reads of a registry: its commands in registration order,
/// the text lane's look-up (names, then aliases), and the footer.
/// Implemented by the registry (`registry/help.rs`), which this file
/// cannot name: the registry registers the help.
pub(crate) trait HelpSource<D> {
    /// The registered commands, in registration order.
    fn commands(&self) -> &[RegisteredCommand<D>];
    /// The command a line naming `name` runs.
    fn find(&self, name: &str) -> Option<&RegisteredCommand<D>>;
    /// The text under the list.
    fn footer(&self) -> Option<&str>;
}

/// The help answer of a registry for a client reading `prefixes`
/// ([`render_help`](crate::framework::render_help) states it): written
/// with the main one, the list names the others once (before the footer),
/// every free-text line is made safe against all of them, and `command`
/// may start with any of them.
pub(crate) fn render<D>(
    registry: &impl HelpSource<D>,
    command: Option<&str>,
    prefixes: PrefixSet<'_>,
) -> String {
    let help = format!("{}{HELP_COMMAND}", prefixes.main);
    let Some(name) = command.map(str::trim).filter(|n| !n.is_empty()) else {
        return command_list(registry, prefixes, &help);
    };
    // The name as given first: a command may start with a prefix (`note`
    // under `no`), and stripping it would name another.
    let found = registry.find(name).or_else(|| {
        let prefix = prefixes.used_by(name)?;
        registry.find(name.strip_prefix(prefix.trim_start())?)
    });
    match found {
        Some(found) => command_detail(found, prefixes),
        None => {
            let unknown = format!("No command by that name; send {help} for the list.");
            neutralise(&unknown, prefixes.all()).into_owned()
        }
    }
}

fn command_list<D>(registry: &impl HelpSource<D>, prefixes: PrefixSet<'_>, help: &str) -> String {
    let commands = registry.commands();
    let mut listed: Vec<&RegisteredCommand<D>> = commands
        .iter()
        .filter(|command| !command.settings.hide_in_help)
        .collect();
    // In registration order still: each category where its first command is.
    let mut categories: Vec<&str> = Vec::new();
    for category in listed.iter().filter_map(|c| c.settings.category.as_deref()) {
        if !categories.contains(&category) {
            categories.push(category);
        }
    }
    listed.sort_by(|a, b| a.decl.name.cmp(&b.decl.name));
    let has_help = commands
        .iter()
        .any(|c| c.decl.name.eq_ignore_ascii_case(HELP_COMMAND));
    let heading = if has_help {
        format!("Commands (send {help} <command> for details):")
    } else {
        "Commands:".to_owned()
    };
    // The headings are lines a bot reads too: under `C`, `Commands:` would
    // be the command `ommands`. The usage lines are not marked: they show
    // what to type.
    let mut text = neutralise(&heading, prefixes.all()).into_owned();
    list_lines(&mut text, &listed, None, prefixes);
    for category in categories {
        text.push_str("\n\n");
        text.push_str(&neutralise(&format!("{category}:"), prefixes.all()));
        list_lines(&mut text, &listed, Some(category), prefixes);
    }
    if !prefixes.additional.is_empty() {
        // Written once rather than beside every command: the usage lines
        // teach one prefix. Space-separated: a client's prefixes have no
        // whitespace, but may have commas.
        let line = format!("Other prefixes: {}", prefixes.additional.join(" "));
        text.push_str("\n\n");
        text.push_str(&neutralise(&line, prefixes.all()));
    }
    if let Some(footer) = registry.footer() {
        let footer = footer_lines(footer).collect::<Vec<_>>().join("\n");
        text.push_str("\n\n");
        text.push_str(&neutralise(&footer, prefixes.all()));
    }
    text
}

/// The footer's lines, split at every line break a chat client may show
/// (the footer is the bot's free text, not checked when set, unlike a
/// help text), to be written with `\n`.
fn footer_lines(footer: &str) -> impl Iterator<Item = &str> {
    footer.trim().split("\r\n").flat_map(|line| {
        line.split([
            '\n', '\r', '\u{0b}', '\u{0c}', '\u{85}', '\u{2028}', '\u{2029}',
        ])
    })
}

/// One line per command of `listed` in `category`: its usage line, ` - `,
/// its description, and its aliases if it has some. A description may hold
/// line breaks (the spec bounds only its length): the lines after its
/// first are marked as an answer's are.
fn list_lines<D>(
    text: &mut String,
    listed: &[&RegisteredCommand<D>],
    category: Option<&str>,
    prefixes: PrefixSet<'_>,
) {
    let prefix = prefixes.main;
    for command in listed {
        if command.settings.category.as_deref() != category {
            continue;
        }
        let decl = &command.decl;
        let mut line = format!("{} - {}", usage_line(decl, Some(prefix)), decl.description);
        if let Some(aliases) = alias_list(command, prefix) {
            // Writing to a String cannot fail.
            let _ = write!(line, " (aliases: {aliases})");
        }
        text.push('\n');
        text.push_str(&neutralise_later_lines(&line, prefixes.all()));
    }
}

/// The command's aliases with the prefix, comma-separated; `None` without.
fn alias_list<D>(command: &RegisteredCommand<D>, prefix: &str) -> Option<String> {
    let aliases = &command.settings.aliases;
    (!aliases.is_empty()).then(|| {
        let with_prefix: Vec<String> = aliases.iter().map(|a| format!("{prefix}{a}")).collect();
        with_prefix.join(", ")
    })
}

fn command_detail<D>(command: &RegisteredCommand<D>, prefixes: PrefixSet<'_>) -> String {
    let prefix = prefixes.main;
    let decl = &command.decl;
    // Under `C`, `Command roll:` would be the command `ommand`.
    let heading = format!("Command {}: {}", decl.name, decl.description);
    let mut text = neutralise(&heading, prefixes.all()).into_owned();
    // Writing to a String cannot fail.
    let _ = write!(text, "\nusage: {}", usage_line(decl, Some(prefix)));
    if let Some(aliases) = alias_list(command, prefix) {
        let _ = write!(text, "\naliases: {aliases}");
    }
    for option in &decl.options {
        let mut facts = vec![option.kind.as_str().to_owned()];
        if option.required {
            facts.push("required".to_owned());
        }
        if let Some(choices) = &option.choices {
            facts.push(format!("one of {}", choices.join(", ")));
        }
        facts.extend(bounds_phrase(option));
        // `- name` reads as no invocation under a prefix without
        // whitespace; the description's later lines may.
        let line = format!(
            "- {} ({}): {}",
            option.name,
            facts.join(", "),
            option.description
        );
        text.push('\n');
        text.push_str(&neutralise_later_lines(&line, prefixes.all()));
    }
    if let Some(extra) = &command.settings.help_text {
        // After a blank line, as free text after the fixed lines, made
        // safe as an answer is, line by line: a bot reading line by line
        // must not take `/roll 2` in a paragraph for an invocation.
        text.push_str("\n\n");
        text.push_str(&neutralise(extra.trim(), prefixes.all()));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::commands::limits::{MAX_ALIASES_PER_COMMAND, MAX_COMMAND_DESC};
    use crate::commands::types::{CommandArgs, CommandInvocation, CommandSource};
    use crate::framework::answer::ANSWER_MARKER;
    use crate::framework::render_help;
    use crate::message::Message;
    use crate::CommandRegistry;

    fn registry() -> CommandRegistry {
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let mut registry = CommandRegistry::new();
        registry
            .register(
                CommandDeclaration::new("note", "Take a note").option(
                    CommandOption::new("text", "What", CommandOptionType::String)
                        .required(true)
                        .min_length(3)
                        .max_length(200),
                ),
                ok,
            )
            .unwrap()
            .enable_help()
            .unwrap();
        registry
    }

    fn help_ctx(command: Option<&str>) -> CommandContext {
        let args: CommandArgs = command
            .map(|c| ("command".to_owned(), c.into()))
            .into_iter()
            .collect();
        CommandContext::for_test(
            CommandInvocation {
                name: "help".into(),
                args,
                source: CommandSource::Text,
            },
            Message::new("m1", "c1", "u1", "!help"),
        )
        .with_prefix("!")
    }

    #[test]
    fn detail_shows_lengths_and_accepts_the_prefix() {
        let text = render_help(&registry(), Some(" /note "), None);
        assert_eq!(
            text,
            "Command note: Take a note\n\
             usage: /note <text (3 to 200 characters)>\n\
             - text (string, required, 3 to 200 characters): What"
        );
    }

    #[test]
    fn a_hidden_command_is_left_out_of_the_list_and_explained_when_named() {
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let mut registry = registry();
        registry
            .register_with(
                CommandDeclaration::new("audit", "Dump the audit log"),
                CommandSettings::new().hide_in_help(),
                ok,
            )
            .unwrap();
        assert_eq!(
            render_help(&registry, None, Some("!")),
            "Commands (send !help <command> for details):\n\
             !help [command (up to 32 characters)] - List the commands, or explain one\n\
             !note <text (3 to 200 characters)> - Take a note"
        );
        assert_eq!(
            render_help(&registry, Some("!AUDIT"), Some("!")),
            "Command audit: Dump the audit log\nusage: !audit"
        );
        // Hidden from help only: still in the registry and in the menu.
        assert_eq!(registry.len(), 3);
        assert!(registry.canonical_menu().iter().any(|c| c.name == "audit"));
    }

    /// `name` with `settings`, a handler that does nothing.
    fn add(registry: &mut CommandRegistry, name: &str, settings: CommandSettings) {
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let decl = CommandDeclaration::new(name, format!("The {name} command"));
        registry.register_with(decl, settings, ok).unwrap();
    }

    #[test]
    fn categories_follow_the_uncategorised_in_the_order_first_registered() {
        let mut registry = registry();
        let category = |name: &str| CommandSettings::new().category(name);
        add(&mut registry, "warn", category("Moderation"));
        add(&mut registry, "roll", category("Fun"));
        add(&mut registry, "ban", category("Moderation"));
        add(&mut registry, "ping", CommandSettings::new());
        add(&mut registry, "coin", category("Fun"));
        // A category whose every command is hidden has no heading.
        add(&mut registry, "reload", category("Owner").hide_in_help());
        add(
            &mut registry,
            "audit",
            category("Moderation").hide_in_help(),
        );
        // Compared exactly: another category.
        add(&mut registry, "dance", category("fun"));
        assert_eq!(
            render_help(&registry, None, Some("!")),
            "Commands (send !help <command> for details):\n\
             !help [command (up to 32 characters)] - List the commands, or explain one\n\
             !note <text (3 to 200 characters)> - Take a note\n\
             !ping - The ping command\n\
             \n\
             Moderation:\n\
             !ban - The ban command\n\
             !warn - The warn command\n\
             \n\
             Fun:\n\
             !coin - The coin command\n\
             !roll - The roll command\n\
             \n\
             fun:\n\
             !dance - The dance command"
        );
        // One command's explanation does not change.
        assert_eq!(
            render_help(&registry, Some("warn"), None),
            "Command warn: The warn command\nusage: /warn"
        );
    }

    #[test]
    fn aliases_are_listed_beside_their_command_and_name_it_when_asked() {
        let mut registry = registry();
        let aliases = CommandSettings::new().aliases(["r", "dice"]);
        add(&mut registry, "roll", aliases.category("Fun"));
        add(
            &mut registry,
            "reload",
            CommandSettings::new().aliases(["rl"]).hide_in_help(),
        );
        assert_eq!(
            render_help(&registry, None, Some("!")),
            "Commands (send !help <command> for details):\n\
             !help [command (up to 32 characters)] - List the commands, or explain one\n\
             !note <text (3 to 200 characters)> - Take a note\n\
             \n\
             Fun:\n\
             !roll - The roll command (aliases: !r, !dice)"
        );
        let roll = "Command roll: The roll command\nusage: !roll\naliases: !r, !dice";
        for asked in ["r", "!DICE", " roll "] {
            assert_eq!(
                render_help(&registry, Some(asked), Some("!")),
                roll,
                "{asked}"
            );
        }
        // Hidden from the list, explained when named, by an alias too.
        assert_eq!(
            render_help(&registry, Some("rl"), None),
            "Command reload: The reload command\nusage: /reload\naliases: /rl"
        );
        // A command without aliases is explained as before.
        assert!(!render_help(&registry, Some("note"), None).contains("aliases"));
    }

    #[test]
    fn the_footer_closes_the_list_with_or_without_categories() {
        let mut registry = CommandRegistry::new();
        add(
            &mut registry,
            "roll",
            CommandSettings::new().category("Fun"),
        );
        registry.help_footer("Questions? #bot-support");
        assert_eq!(
            render_help(&registry, None, None),
            "Commands:\n\nFun:\n/roll - The roll command\n\nQuestions? #bot-support"
        );
        assert_eq!(
            render_help(&registry, Some("roll"), None),
            "Command roll: The roll command\nusage: /roll"
        );
        // The bot's own text, but a line of it must not read as a command
        // to a bot reading line by line, whichever break a client shows.
        registry.help_footer("Try:\r\n/roll 2\u{2028}  !ping\rplain");
        assert_eq!(
            render_help(&registry, None, None),
            "Commands:\n\nFun:\n/roll - The roll command\n\nTry:\n⚠ /roll 2\n⚠ !ping\nplain"
        );
        registry.help_footer(" ");
        assert_eq!(
            render_help(&registry, None, None),
            "Commands:\n\nFun:\n/roll - The roll command"
        );
    }

    #[test]
    fn every_break_a_client_shows_ends_a_footer_line_and_each_is_marked() {
        let mut registry = CommandRegistry::new();
        add(&mut registry, "roll", CommandSettings::new());
        let breaks = [
            "\n", "\r\n", "\r", "\u{0b}", "\u{0c}", "\u{85}", "\u{2028}", "\u{2029}",
        ];
        for line_break in breaks {
            registry.help_footer(format!("Try:{line_break}!roll 2"));
            assert_eq!(
                render_help(&registry, None, Some("!")),
                "Commands:\n!roll - The roll command\n\nTry:\n⚠ !roll 2",
                "break {line_break:?}"
            );
            // Only breaks: no footer at all, not a blank one.
            registry.help_footer(line_break.repeat(3));
            assert_eq!(
                render_help(&registry, None, Some("!")),
                "Commands:\n!roll - The roll command",
                "break {line_break:?}"
            );
        }
        // An empty line in the middle stays, a paragraph break.
        registry.help_footer("One.\r\n\r\nTwo.");
        assert!(render_help(&registry, None, None).ends_with("\n\nOne.\n\nTwo."));
    }

    #[test]
    fn a_category_that_is_no_heading_is_refused_naming_it() {
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let long = "c".repeat(MAX_CATEGORY_CHARS + 1);
        // U+2028 and U+2029 are line breaks too, though not control
        // characters: a client shows a second line, a forged heading.
        for bad in [
            "",
            "  ",
            "Fun\nCommands:",
            "Fun\u{7}",
            "Fun\u{2028}Owner:",
            "Fun\u{2029}Owner:",
            long.as_str(),
        ] {
            let mut registry = registry();
            let settings = CommandSettings::new().category(bad);
            let err = registry
                .register_with(CommandDeclaration::new("roll", "Roll"), settings, ok)
                .unwrap_err();
            let rule = DeclarationRule::InvalidCategory {
                category: bad.to_owned(),
            };
            assert_eq!(err.violations()[0].rule(), &rule, "{bad:?}");
            assert_eq!(registry.len(), 2, "{bad:?}: nothing registered");
        }
        let err = registry()
            .register_with(
                CommandDeclaration::new("roll", "Roll"),
                CommandSettings::new().category("Fun\nCommands:"),
                ok,
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(r#"category "Fun\nCommands:" must be 1 to 100"#),
            "{err}"
        );
        let fits = "c".repeat(MAX_CATEGORY_CHARS);
        let mut registry = registry();
        let settings = CommandSettings::new().category(fits.as_str());
        assert!(registry
            .register_with(CommandDeclaration::new("roll", "Roll"), settings, ok)
            .is_ok());
    }

    #[test]
    fn the_help_text_ends_the_explanation_by_name_or_alias_and_nothing_else() {
        let text = "Rolls dice.\n\nSee also /ping.";
        let mut registry = registry();
        let settings = CommandSettings::new().aliases(["r"]).help_text(text);
        add(&mut registry, "roll", settings.category("Fun"));
        let roll = "Command roll: The roll command\n\
                    usage: !roll\n\
                    aliases: !r\n\
                    \n\
                    Rolls dice.\n\
                    \n\
                    See also /ping.";
        for asked in ["roll", "!R"] {
            assert_eq!(
                render_help(&registry, Some(asked), Some("!")),
                roll,
                "{asked}"
            );
        }
        // After the options too.
        let note = CommandSettings::new().help_text("Kept for a day.");
        let mut registry = CommandRegistry::new();
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let decl = CommandDeclaration::new("note", "Take a note")
            .option(CommandOption::new("text", "What", CommandOptionType::String).required(true));
        registry.register_with(decl, note, ok).unwrap();
        assert_eq!(
            render_help(&registry, Some("note"), None),
            "Command note: Take a note\nusage: /note <text>\n- text (string, required): What\n\nKept for a day."
        );
        // Neither the list nor the menu changes.
        let mut with = self::registry();
        add(&mut with, "roll", CommandSettings::new().help_text(text));
        let mut without = self::registry();
        add(&mut without, "roll", CommandSettings::new());
        assert_eq!(
            render_help(&with, None, None),
            render_help(&without, None, None)
        );
        assert_eq!(with.canonical_menu_json(), without.canonical_menu_json());
        assert_eq!(with.hash(), without.hash());
    }

    #[test]
    fn each_line_of_a_help_text_is_neutralised_against_any_prefix() {
        let text =
            "  Rolls dice.\n/roll 2 rolls two\n\n  !ban someone\nbot roll\n• a bullet\n- a dash\n";
        let mut registry = CommandRegistry::new();
        add(
            &mut registry,
            "roll",
            CommandSettings::new().help_text(text),
        );
        for prefix in ["/", "!", "bot ", "⚠"] {
            let detail = render_help(&registry, Some("roll"), Some(prefix));
            let (_, extra) = detail.split_once("\n\n").unwrap();
            let marker = if prefix == "⚠" {
                "» "
            } else {
                ANSWER_MARKER
            };
            let bot = if prefix == "bot " {
                format!("{marker}bot roll")
            } else {
                "bot roll".to_owned()
            };
            let expected = [
                "Rolls dice.".to_owned(),
                format!("{marker}/roll 2 rolls two"),
                String::new(),
                format!("{marker}!ban someone"),
                bot,
                "• a bullet".to_owned(),
                format!("{marker}- a dash"),
            ];
            assert_eq!(
                extra.split('\n').collect::<Vec<_>>(),
                expected,
                "{prefix:?}"
            );
            // Read by this bot's prefix, or by any punctuation one; a word
            // prefix of another bot's is no more guarded than in answers.
            for line in detail.lines() {
                for reader in ["/", "!", "-", prefix] {
                    let name = crate::match_command_name(line, Some(reader));
                    assert_eq!(name, None, "{prefix:?} read by {reader:?}: {line}");
                }
            }
        }
    }

    #[test]
    fn a_help_text_line_is_marked_whenever_the_grammar_would_read_it() {
        // The grammar skips what `char::is_whitespace` calls whitespace
        // (NBSP, U+3000 and the other Unicode spaces too), so such a line
        // must be marked; a zero-width space, a BOM or a bidi override is
        // no whitespace to it, so a line opening with one reads as nothing
        // and is left alone. A line that is only the prefix is marked too.
        let lines = [
            "      /roll 2",
            "\u{a0}/roll",
            "\u{3000}!roll",
            "\u{2003}botroll",
            "\u{a0}\u{205f}\u{1680}!roll",
            "/",
            "bot",
            "\u{200b}/roll",
            "\u{feff}!roll",
            "\u{202e}/roll",
        ];
        let read = |line: &str| crate::match_command_name(line, None);
        assert_eq!(read("\u{a0}\u{3000}/roll").as_deref(), Some("roll"));
        for invisible in ["\u{200b}", "\u{feff}", "\u{202e}"] {
            assert_eq!(read(&format!("{invisible}/roll")), None, "{invisible:?}");
        }
        let text = format!("Examples:\n{}", lines.join("\n"));
        let mut registry = CommandRegistry::new();
        add(
            &mut registry,
            "roll",
            CommandSettings::new().help_text(text),
        );
        for prefix in ["/", "!", "bot", "⚠"] {
            let detail = render_help(&registry, Some("roll"), Some(prefix));
            let readers = [prefix, "/", "!"];
            for reader in readers {
                assert_eq!(crate::match_command_name(&detail, Some(reader)), None);
                assert!(!detail.trim_start().starts_with(reader), "{detail}");
            }
            let shown: Vec<&str> = detail.split('\n').skip_while(|l| !l.is_empty()).collect();
            assert_eq!(shown.len(), lines.len() + 2, "{detail}");
            for (line, shown) in lines.iter().zip(&shown[2..]) {
                let invokes = readers
                    .iter()
                    .any(|reader| crate::match_command_name(line, Some(reader)).is_some());
                let visible = line.trim_start();
                let marked = visible.starts_with(prefix)
                    || visible.starts_with(|c: char| c.is_ascii_punctuation());
                assert!(!invokes || marked, "{line:?}: the grammar reads it");
                if marked {
                    let marker = if prefix == "⚠" {
                        "» "
                    } else {
                        ANSWER_MARKER
                    };
                    assert_eq!(*shown, format!("{marker}{visible}"), "{prefix:?}");
                } else {
                    assert_eq!(shown, line, "{prefix:?}");
                }
                for reader in readers {
                    let name = crate::match_command_name(shown, Some(reader));
                    assert_eq!(name, None, "{prefix:?} read by {reader:?}: {shown:?}");
                }
            }
        }
    }

    #[test]
    fn the_help_s_own_lines_are_marked_when_the_prefix_would_read_them() {
        let mut registry = registry();
        add(
            &mut registry,
            "roll",
            CommandSettings::new()
                .category("Dice rolls")
                .aliases(["r"])
                .help_text("Rolls.\nCome and /roll"),
        );
        registry.help_footer("Come back");
        // Under `C`, the list's first line was the command `ommands`.
        let list = render_help(&registry, None, Some("C"));
        assert!(
            list.starts_with("⚠ Commands (send Chelp <command> for details):\nChelp "),
            "{list}"
        );
        assert!(list.ends_with("\n\n⚠ Come back"), "{list}");
        let detail = render_help(&registry, Some("roll"), Some("Com"));
        assert!(
            detail.starts_with("⚠ Command roll: The roll command\nusage: Comroll\n"),
            "{detail}"
        );
        assert!(detail.ends_with("\n\nRolls.\n⚠ Come and /roll"), "{detail}");
        let unknown = render_help(&registry, Some("dance"), Some("N"));
        assert_eq!(
            unknown,
            "⚠ No command by that name; send Nhelp for the list."
        );
        let list = render_help(&registry, None, Some("D"));
        assert!(list.contains("\n\n⚠ Dice rolls:\nDroll "), "{list}");
        // Whatever the prefix, only the usage lines of the list (which
        // show what to type) read as an invocation.
        for prefix in [
            "/", "!", "C", "Co", "Com", "Commands", "D", "N", "No", "u", "usage:", "a", "-", "R",
        ] {
            for command in [None, Some("roll"), Some("dance")] {
                let text = render_help(&registry, command, Some(prefix));
                let usage = |line: &str| {
                    command.is_none() && line.starts_with(prefix) && line.contains(" - ")
                };
                for line in text.split('\n').filter(|line| !usage(line)) {
                    let name = crate::match_command_name(line, Some(prefix));
                    assert_eq!(name, None, "{prefix:?} {command:?}: {line:?}");
                }
            }
        }
        // Ordinary prefixes leave the help as it was.
        assert!(render_help(&registry, None, Some("!")).starts_with("Commands (send !help"));
    }

    #[test]
    fn the_later_lines_of_a_description_are_marked_where_they_would_read() {
        // The spec bounds a description's length only: it may hold line
        // breaks, and a bot reading the help line by line would run what
        // follows one.
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let mut registry = CommandRegistry::new();
        registry
            .register_with(
                CommandDeclaration::new("roll", "Roll dice\n!ban everyone").option(
                    CommandOption::new(
                        "count",
                        "How many\r\n  ?kick all",
                        CommandOptionType::Integer,
                    )
                    .choices(["1", "2"]),
                ),
                CommandSettings::new().aliases(["r"]),
                ok,
            )
            .unwrap()
            .enable_help()
            .unwrap();
        let list = render_help(&registry, None, Some("!"));
        assert_eq!(
            list,
            "Commands (send !help <command> for details):\n\
             !help [command (up to 32 characters)] - List the commands, or explain one\n\
             !roll [count] - Roll dice\n\
             ⚠ !ban everyone (aliases: !r)"
        );
        let detail = render_help(&registry, Some("roll"), Some("!"));
        assert_eq!(
            detail,
            "Command roll: Roll dice\n\
             ⚠ !ban everyone\n\
             usage: !roll [count]\n\
             aliases: !r\n\
             - count (integer, one of 1, 2): How many\r\n\
             ⚠ ?kick all"
        );
        // Only the usage lines of the list read as an invocation.
        for text in [list, detail] {
            for line in text.split(may_break_a_line) {
                if line.starts_with("!roll [count]") || line.starts_with("!help [command") {
                    continue;
                }
                for prefix in ["!", "?"] {
                    let name = crate::match_command_name(line, Some(prefix));
                    assert_eq!(name, None, "{line:?} under {prefix:?}");
                }
            }
        }
    }

    #[test]
    fn a_hidden_or_owners_only_command_is_explained_with_its_help_text() {
        let mut registry = registry();
        let settings = CommandSettings::new()
            .hide_in_help()
            .owners_only()
            .help_text("Bans someone.");
        add(&mut registry, "ban", settings);
        assert!(!render_help(&registry, None, None).contains("ban"));
        assert_eq!(
            render_help(&registry, Some("ban"), None),
            "Command ban: The ban command\nusage: /ban\n\nBans someone."
        );
    }

    #[test]
    fn a_help_text_that_cannot_be_shown_safely_is_refused_naming_the_command() {
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let long = "h".repeat(MAX_HELP_TEXT_CHARS + 1);
        let character = |line, character| HelpTextFault::Character { line, character };
        let cases = [
            ("", HelpTextFault::Blank),
            (" \n \n", HelpTextFault::Blank),
            (
                long.as_str(),
                HelpTextFault::TooLong {
                    chars: MAX_HELP_TEXT_CHARS + 1,
                },
            ),
            ("one\r\ntwo", character(1, '\r')),
            ("one\ntwo\tthree", character(2, '\t')),
            ("one\n\nok\u{2028}/roll", character(3, '\u{2028}')),
            ("one\u{2029}/roll", character(1, '\u{2029}')),
            ("one\u{85}/roll", character(1, '\u{85}')),
            ("bell\u{7}", character(1, '\u{7}')),
        ];
        for (bad, fault) in cases {
            let mut registry = registry();
            let settings = CommandSettings::new().help_text(bad);
            let err = registry
                .register_with(CommandDeclaration::new("roll", "Roll"), settings, ok)
                .unwrap_err();
            assert_eq!(
                err.violations()[0].rule(),
                &DeclarationRule::InvalidHelpText { fault },
                "{bad:?}"
            );
            assert!(
                err.to_string().starts_with("command \"roll\": help text "),
                "{err}"
            );
            assert_eq!(registry.len(), 2, "{bad:?}: nothing registered");
        }
        let err = registry()
            .register_with(
                CommandDeclaration::new("roll", "Roll"),
                CommandSettings::new().help_text("Rolls.\r\n"),
                ok,
            )
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "command \"roll\": help text line 1 holds '\\r': lines break with \\n only, \
             and no other control character is allowed"
        );
        let err = registry()
            .register_with(
                CommandDeclaration::new("roll", "Roll"),
                CommandSettings::new().help_text(long.as_str()),
                ok,
            )
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "command \"roll\": help text is 2001 characters, more than MAX_HELP_TEXT_CHARS (2000)"
        );
        let fits = format!("{}\n{}", "h".repeat(MAX_HELP_TEXT_CHARS - 2), "h");
        let settings = CommandSettings::new().help_text(fits.as_str());
        assert!(registry()
            .register_with(CommandDeclaration::new("roll", "Roll"), settings, ok)
            .is_ok());
    }

    /// The longest text the service takes: 65 536 bytes of content, which
    /// is `base64(nonce(12) || text || tag(16))`.
    const MAX_MESSAGE_TEXT_BYTES: usize = 65_536 / 4 * 3 - 28;

    #[test]
    fn the_largest_explanation_with_the_largest_help_text_fits_in_one_message() {
        // As much as the menu's payload lets one command carry: the widest
        // characters, every option with bounds, every alias.
        let wide = |n: usize| "\u{1d54f}".repeat(n);
        let mut decl = CommandDeclaration::new("x".repeat(32), wide(MAX_COMMAND_DESC));
        for i in 0..crate::MAX_OPTIONS_PER_COMMAND {
            let name = format!("{i:0>32}");
            let option =
                CommandOption::new(name, wide(MAX_COMMAND_DESC), CommandOptionType::Integer)
                    .min(-9_007_199_254_740_991.0)
                    .max(9_007_199_254_740_991.0);
            decl = decl.option(option);
        }
        // Choices fill what the menu has left.
        let mut choices = Vec::new();
        loop {
            let mut tried = decl.clone();
            choices.push(wide(crate::MAX_CHOICE_LEN));
            tried.options[0] = CommandOption::new(
                format!("{:0>32}", 0),
                wide(MAX_COMMAND_DESC),
                CommandOptionType::String,
            )
            .required(true)
            .choices(choices.clone());
            let mut registry: CommandRegistry = CommandRegistry::new();
            if choices.len() > crate::MAX_CHOICES_PER_OPTION
                || registry
                    .register(tried.clone(), |_ctx| async { Ok::<(), std::io::Error>(()) })
                    .is_err()
            {
                break;
            }
            decl = tried;
        }
        assert!(decl.options[0].choices.is_some(), "some choices fit");
        let aliases: Vec<String> = (0..MAX_ALIASES_PER_COMMAND)
            .map(|i| format!("{i:a>32}"))
            .collect();
        for help in [
            wide(MAX_HELP_TEXT_CHARS),
            "/\n".repeat(MAX_HELP_TEXT_CHARS / 2),
        ] {
            let mut registry: CommandRegistry = CommandRegistry::new();
            let settings = CommandSettings::new()
                .aliases(aliases.clone())
                .help_text(help);
            registry
                .register_with(decl.clone(), settings, |_ctx| async {
                    Ok::<(), std::io::Error>(())
                })
                .unwrap();
            let detail = render_help(&registry, Some(&"x".repeat(32)), Some("!!!!"));
            assert!(
                detail.len() < MAX_MESSAGE_TEXT_BYTES / 2,
                "{} bytes",
                detail.len()
            );
        }
    }

    #[test]
    fn the_list_without_the_help_command_does_not_point_to_it() {
        let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
        let mut registry = CommandRegistry::new();
        registry
            .register(CommandDeclaration::new("ping", "Pong"), ok)
            .unwrap();
        assert_eq!(
            render_help(&registry, None, None),
            "Commands:\n/ping - Pong"
        );
        assert_eq!(
            render_help(&registry, Some(""), None),
            "Commands:\n/ping - Pong"
        );
    }

    #[test]
    fn the_handler_answers_from_the_context_registry() {
        let ctx = help_ctx(Some("note")).with_registry(Arc::new(registry()));
        let text = help_for(&ctx).unwrap();
        assert!(
            text.starts_with("Command note: Take a note\nusage: !note <text"),
            "{text}"
        );
        let list = help_for(&help_ctx(None).with_registry(Arc::new(registry()))).unwrap();
        assert!(
            list.starts_with("Commands (send !help <command> for details):"),
            "{list}"
        );
        assert!(help_for(&help_ctx(None)).is_none());
    }

    #[tokio::test]
    async fn without_a_registry_the_handler_fails_saying_why() {
        let err = help_handler().call(help_ctx(None)).await.unwrap_err();
        assert!(err.is::<HelpUnavailable>(), "{err}");
    }

    #[test]
    fn no_answer_starts_with_the_prefix() {
        let registry = registry();
        for prefix in ["/", "!", "bot ", "?"] {
            for command in [None, Some("note"), Some("help"), Some("nope")] {
                let text = render_help(&registry, command, Some(prefix));
                assert!(!text.starts_with(prefix), "{prefix:?} {command:?}: {text}");
            }
        }
    }

    #[test]
    fn the_help_of_several_prefixes_writes_the_main_one_and_names_the_others_once() {
        let mut registry = registry();
        registry.help_footer("bot support: #help");
        let ctx = |command: Option<&str>| {
            help_ctx(command)
                .with_additional_prefixes(["?", "bot"])
                .with_registry(Arc::new(registry.clone()))
        };
        assert_eq!(
            help_for(&ctx(None)).unwrap(),
            "Commands (send !help <command> for details):\n\
             !help [command (up to 32 characters)] - List the commands, or explain one\n\
             !note <text (3 to 200 characters)> - Take a note\n\
             \n\
             Other prefixes: ? bot\n\
             \n\
             \u{26a0} bot support: #help"
        );
        // The argument may carry any of the prefixes, the longest taken.
        for command in ["note", "!note", "?note", "botnote", " ?NOTE "] {
            let text = help_for(&ctx(Some(command))).unwrap();
            assert!(
                text.starts_with("Command note: Take a note\nusage: !note "),
                "{command:?}: {text}"
            );
        }
        // Without additional prefixes, no line about them.
        let single = help_for(&help_ctx(None).with_registry(Arc::new(registry.clone()))).unwrap();
        assert!(!single.contains("Other prefixes"), "{single}");
        assert!(single.ends_with("\n\nbot support: #help"), "{single}");
    }

    #[test]
    fn a_command_whose_name_starts_with_a_prefix_is_explained_by_its_name() {
        // `no` is a prefix and `note` starts with it: the name as given is a
        // command, so it is not read as `te` under `no`.
        let ctx = |command| {
            help_ctx(Some(command))
                .with_additional_prefixes(["no"])
                .with_registry(Arc::new(registry()))
        };
        for command in ["note", "nonote", "!note"] {
            let text = help_for(&ctx(command)).unwrap();
            assert!(
                text.starts_with("Command note: Take a note\n"),
                "{command:?}: {text}"
            );
        }
        // A single word prefix, as `render_help` takes it, alike.
        let text = render_help(&registry(), Some("note"), Some("no"));
        assert!(text.starts_with("Command note"), "{text}");
    }

    #[test]
    fn the_line_naming_the_other_prefixes_is_marked_when_one_of_them_reads_it() {
        let ctx = help_ctx(None)
            .with_additional_prefixes(["Other"])
            .with_registry(Arc::new(registry()));
        let text = help_for(&ctx).unwrap();
        assert!(
            text.ends_with("\n\n\u{26a0} Other prefixes: Other"),
            "{text}"
        );
    }
}
