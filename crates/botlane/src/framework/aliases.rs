//! Aliases: the other names a command runs by on the text lane
//! ([`CommandSettings::aliases`](crate::framework::CommandSettings::aliases)),
//! the registry's index of them and the rules they must follow;
//! [`CommandRegistry::find_command`](crate::CommandRegistry::find_command)
//! is the look-up that resolves them.
//!
//! The menu, the structured lane and
//! [`CommandRegistry::get`](crate::CommandRegistry::get) never see an
//! alias: they are the spec's, and know names only.

use crate::commands::limits::is_valid_name;
use crate::commands::limits::MAX_ALIASES_PER_COMMAND;
use crate::commands::validate::{DeclarationRule, Violation};

/// Every alias of a registry's commands with the index of its command,
/// sorted by alias so that the text lane finds one without allocating.
/// Commands are only ever added to a registry, so an index stays valid;
/// each change of a client's registry copies the registry, this with it.
#[derive(Debug, Clone, Default)]
pub(crate) struct AliasIndex {
    sorted: Vec<(String, usize)>,
}

impl AliasIndex {
    /// The index of the command with the alias `name`, compared ASCII
    /// case-insensitively.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        // An alias passed the name rule, so it is lower case: it equals
        // `name` ignoring ASCII case exactly when it equals `name` lowered
        // byte by byte, which orders the same way as the sort.
        let lowered = || name.bytes().map(|b| b.to_ascii_lowercase());
        let at = self
            .sorted
            .binary_search_by(|(alias, _)| alias.bytes().cmp(lowered()))
            .ok()?;
        Some(self.sorted[at].1)
    }

    /// Adds the aliases of the command at `command`; they passed
    /// [`violations`](Self::violations), so none is there already.
    pub(crate) fn add(&mut self, aliases: &[String], command: usize) {
        for alias in aliases {
            let at = self.sorted.partition_point(|(a, _)| a < alias);
            self.sorted.insert(at, (alias.clone(), command));
        }
    }

    /// The violations of registering a command `name` with `aliases` next
    /// to the commands indexed here: its name already an alias, too many
    /// aliases, and each alias that breaks the name rule, is the command's
    /// own name, is repeated, or is already a name (where `position` finds
    /// a registered command) or an alias of a registered command (named by
    /// `name_at`).
    pub(crate) fn violations<'a>(
        &self,
        name: &str,
        aliases: &[String],
        position: impl Fn(&str) -> Option<usize>,
        name_at: impl Fn(usize) -> &'a str,
    ) -> Vec<Violation> {
        let at = |rule| Violation::at_command(name, rule);
        let owner = |index: usize| name_at(index).to_owned();
        let mut out = Vec::new();
        if let Some(index) = self.find(name) {
            out.push(at(DeclarationRule::NameIsAlias {
                command: owner(index),
            }));
        }
        if aliases.len() > MAX_ALIASES_PER_COMMAND {
            out.push(at(DeclarationRule::TooManyAliases {
                count: aliases.len(),
            }));
        }
        for (i, alias) in aliases.iter().enumerate() {
            let named = alias.clone();
            let rule = if !is_valid_name(alias) {
                DeclarationRule::InvalidAlias { alias: named }
            } else if alias == name {
                DeclarationRule::AliasIsOwnName { alias: named }
            } else if let Some(first_index) = aliases[..i].iter().position(|a| a == alias) {
                DeclarationRule::DuplicateAlias {
                    alias: named,
                    first_index,
                }
            } else if let Some(index) = position(alias).or_else(|| self.find(alias)) {
                DeclarationRule::AliasTaken {
                    alias: named,
                    command: owner(index),
                }
            } else {
                continue;
            };
            out.push(at(rule));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::commands::text::TextParseResult;
    use crate::commands::types::CommandDeclaration;
    use crate::commands::validate::DeclarationError;
    use crate::framework::handler::CommandHandler;
    use crate::framework::live::Commands;
    use crate::framework::settings::CommandSettings;
    use crate::CommandRegistry;

    fn ok() -> CommandHandler {
        CommandHandler::new(|_ctx| async { Ok::<(), std::io::Error>(()) })
    }

    fn with_aliases(aliases: &[&str]) -> CommandSettings {
        CommandSettings::new().aliases(aliases.iter().copied())
    }

    fn add(
        registry: &mut CommandRegistry,
        name: &str,
        aliases: &[&str],
    ) -> Result<(), DeclarationError> {
        let decl = CommandDeclaration::new(name, format!("The {name} command"));
        registry
            .insert(decl, ok(), with_aliases(aliases), None)
            .map(drop)
    }

    /// `roll` with the aliases `r` and `dice`, and `ping`.
    fn registry() -> CommandRegistry {
        let mut registry = CommandRegistry::new();
        add(&mut registry, "roll", &["r", "dice"]).unwrap();
        add(&mut registry, "ping", &[]).unwrap();
        registry
    }

    /// The rules and the messages of registering `name` with `aliases`
    /// into [`registry`], which is left unchanged.
    fn refused(name: &str, aliases: &[&str]) -> Vec<(DeclarationRule, String)> {
        let mut registry = registry();
        let err = add(&mut registry, name, aliases).unwrap_err();
        assert_eq!(registry.len(), 2, "{name} {aliases:?}: nothing registered");
        assert_eq!(registry.aliases.sorted.len(), 2, "no alias added");
        err.violations()
            .iter()
            .map(|v| (v.rule().clone(), v.to_string()))
            .collect()
    }

    fn one(name: &str, aliases: &[&str]) -> (DeclarationRule, String) {
        let mut all = refused(name, aliases);
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    #[test]
    fn each_rule_is_refused_with_a_message_naming_the_alias() {
        let alias = |a: &str| a.to_owned();
        assert_eq!(
            one("coin", &["c", "Flip"]),
            (
                DeclarationRule::InvalidAlias {
                    alias: alias("Flip")
                },
                r#"command "coin": alias "Flip" must match ^[a-z0-9_-]{1,32}$"#.to_owned()
            )
        );
        for bad in ["", "a b", "x".repeat(33).as_str(), "é", "/c"] {
            assert_eq!(
                one("coin", &[bad]).0,
                DeclarationRule::InvalidAlias { alias: alias(bad) }
            );
        }
        assert_eq!(
            one("coin", &["coin"]),
            (
                DeclarationRule::AliasIsOwnName {
                    alias: alias("coin")
                },
                r#"command "coin": alias "coin" is the command's own name"#.to_owned()
            )
        );
        assert_eq!(
            one("coin", &["c", "flip", "c"]),
            (
                DeclarationRule::DuplicateAlias {
                    alias: alias("c"),
                    first_index: 0
                },
                r#"command "coin": duplicate alias "c": aliases[0] is the same"#.to_owned()
            )
        );
        // Another command's name, and another command's alias.
        assert_eq!(
            one("coin", &["ping"]),
            (
                DeclarationRule::AliasTaken {
                    alias: alias("ping"),
                    command: "ping".to_owned()
                },
                r#"command "coin": alias "ping" is already a name or an alias of command "ping""#
                    .to_owned()
            )
        );
        assert_eq!(
            one("coin", &["dice"]).0,
            DeclarationRule::AliasTaken {
                alias: alias("dice"),
                command: "roll".to_owned()
            }
        );
        // A command named after an existing alias, whatever the case.
        assert_eq!(
            one("dice", &[]),
            (
                DeclarationRule::NameIsAlias {
                    command: "roll".to_owned()
                },
                r#"command "dice": this name is already an alias of command "roll""#.to_owned()
            )
        );
        assert_eq!(
            refused("R", &[])
                .into_iter()
                .map(|(rule, _)| rule)
                .collect::<Vec<_>>(),
            [
                DeclarationRule::InvalidName,
                DeclarationRule::NameIsAlias {
                    command: "roll".to_owned()
                }
            ]
        );
    }

    #[test]
    fn at_most_ten_aliases() {
        let names: Vec<String> = (0..=MAX_ALIASES_PER_COMMAND)
            .map(|i| format!("c{i}"))
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            one("coin", &names),
            (
                DeclarationRule::TooManyAliases { count: 11 },
                r#"command "coin": 11 aliases, more than MAX_ALIASES_PER_COMMAND (10)"#.to_owned()
            )
        );
        let mut registry = registry();
        add(&mut registry, "coin", &names[..MAX_ALIASES_PER_COMMAND]).unwrap();
        assert_eq!(registry.find_command("c9").unwrap().decl.name, "coin");
    }

    #[test]
    fn every_alias_at_fault_is_reported_at_once() {
        let rules: Vec<DeclarationRule> = refused("coin", &["coin", "R", "r", "x", "x"])
            .into_iter()
            .map(|(rule, _)| rule)
            .collect();
        assert_eq!(
            rules,
            [
                DeclarationRule::AliasIsOwnName {
                    alias: "coin".into()
                },
                DeclarationRule::InvalidAlias { alias: "R".into() },
                DeclarationRule::AliasTaken {
                    alias: "r".into(),
                    command: "roll".into()
                },
                DeclarationRule::DuplicateAlias {
                    alias: "x".into(),
                    first_index: 3
                },
            ]
        );
    }

    #[test]
    fn help_is_taken_once_the_built_in_help_is_enabled_in_either_order() {
        let mut helped = registry();
        helped.enable_help().unwrap();
        let err = add(&mut helped, "coin", &["help"]).unwrap_err();
        assert_eq!(
            err.violations()[0].rule(),
            &DeclarationRule::AliasTaken {
                alias: "help".into(),
                command: "help".into()
            }
        );
        // Without the built-in help, `help` is an alias like any other, and
        // enabling the help afterwards is refused.
        let mut registry = registry();
        add(&mut registry, "coin", &["help"]).unwrap();
        let err = registry.enable_help().unwrap_err();
        assert_eq!(
            err.violations()[0].rule(),
            &DeclarationRule::NameIsAlias {
                command: "coin".into()
            }
        );
        assert!(!registry.help_enabled());
        assert_eq!(registry.find_command("HELP").unwrap().decl.name, "coin");
    }

    #[test]
    fn find_command_resolves_names_then_aliases_in_any_ascii_case() {
        let registry = registry();
        for (typed, command) in [
            ("roll", "roll"),
            ("R", "roll"),
            ("dIcE", "roll"),
            ("PING", "ping"),
        ] {
            assert_eq!(
                registry.find_command(typed).unwrap().decl.name,
                command,
                "{typed}"
            );
        }
        for typed in ["", "d", "dices", "rr", "\u{212a}", "r\u{0}"] {
            assert!(registry.find_command(typed).is_none(), "{typed:?}");
        }
        assert!(registry.get("r").is_none(), "get knows names only");
        // The text lane names the command, whatever was typed.
        assert_eq!(
            registry.parse_from_text("/DICE", None),
            registry.parse_from_text("/roll", None)
        );
        let TextParseResult::Ok(invocation) = registry.parse_from_text("  !r", Some("!")) else {
            panic!("an alias on the text lane");
        };
        assert_eq!(invocation.name, "roll");
    }

    #[test]
    fn the_menu_never_carries_an_alias() {
        let mut plain = CommandRegistry::new();
        add(&mut plain, "roll", &[]).unwrap();
        add(&mut plain, "ping", &[]).unwrap();
        let aliased = registry();
        assert_eq!(aliased.canonical_menu_json(), plain.canonical_menu_json());
        assert_eq!(aliased.hash(), plain.hash());
    }

    #[test]
    fn a_live_registry_keeps_its_aliases_through_changes_and_failed_batches() {
        let commands = Commands::new();
        commands
            .update(|registry| {
                registry
                    .register_with(
                        CommandDeclaration::new("roll", "Roll"),
                        with_aliases(&["r"]),
                        |_ctx| async { Ok::<(), std::io::Error>(()) },
                    )
                    .map(drop)
            })
            .unwrap();
        let before = commands.snapshot();
        // A batch whose second registration fails keeps none of its aliases.
        let failed = commands.update(|registry| {
            add(registry, "coin", &["c"])?;
            add(registry, "flip", &["r"])
        });
        assert!(failed.is_err());
        assert!(Arc::ptr_eq(&before, &commands.snapshot()));
        assert!(commands.snapshot().find_command("c").is_none());
        // The next change sees the aliases of the earlier ones, and keeps them.
        commands
            .update(|registry| add(registry, "coin", &["c"]))
            .unwrap();
        let err = commands
            .update(|registry| add(registry, "r", &[]))
            .unwrap_err();
        assert_eq!(
            err.violations()[0].rule(),
            &DeclarationRule::NameIsAlias {
                command: "roll".into()
            }
        );
        let now = commands.snapshot();
        assert_eq!(now.find_command("r").unwrap().decl.name, "roll");
        assert_eq!(now.find_command("c").unwrap().decl.name, "coin");
        assert!(
            before.find_command("c").is_none(),
            "a snapshot never changes"
        );
    }
}
