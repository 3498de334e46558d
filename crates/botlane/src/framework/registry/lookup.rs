//! The registry as the spec's [`CommandLookup`]: what the structured lane
//! (`decode_command_data`) asks of a registry.

use crate::commands::coerce::{coerce_for_option, fits};
use crate::commands::data::CommandLookup;
use crate::commands::types::CommandArgs;

use super::CommandRegistry;

impl<D> CommandLookup for CommandRegistry<D> {
    /// True when `name` is registered (ASCII case-insensitively), every arg
    /// key is a declared option, every value already is of its option's type
    /// and within its choices, and every required option is present.
    ///
    /// ```
    /// use botlane::{
    ///     CommandArgValue, CommandArgs, CommandDeclaration, CommandLookup, CommandOption,
    ///     CommandOptionType, CommandRegistry,
    /// };
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register(
    ///     CommandDeclaration::new("roll", "Roll dice")
    ///         .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true)),
    ///     |_ctx| async { Ok::<(), std::io::Error>(()) },
    /// )?;
    /// let mut args = CommandArgs::new();
    /// assert!(!registry.accepts("roll", &args));
    /// args.insert("count".into(), CommandArgValue::Integer(2));
    /// assert!(registry.accepts("roll", &args));
    /// args.insert("count".into(), CommandArgValue::from("2"));
    /// assert!(!registry.accepts("roll", &args));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    fn accepts(&self, name: &str, args: &CommandArgs) -> bool {
        let Some(decl) = self.find_decl(name) else {
            return false;
        };
        // Option names are unique, so counting the required options among
        // the (valid) keys tells whether all of them are present.
        let mut required_seen = 0;
        for (key, value) in args {
            match decl.find_option(key) {
                Some(option) if fits(option, value) => {
                    required_seen += usize::from(option.required)
                }
                _ => return false,
            }
        }
        required_seen == decl.options.iter().filter(|o| o.required).count()
    }

    /// Coerces each value to its option's type by the coercion table and
    /// checks its choices; `None` for an unregistered name, an unknown key, a
    /// value that does not coerce, or a missing required option.
    ///
    /// ```
    /// use botlane::{
    ///     CommandArgValue, CommandArgs, CommandDeclaration, CommandLookup, CommandOption,
    ///     CommandOptionType, CommandRegistry,
    /// };
    ///
    /// let mut registry = CommandRegistry::new();
    /// registry.register(
    ///     CommandDeclaration::new("roll", "Roll dice")
    ///         .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true)),
    ///     |_ctx| async { Ok::<(), std::io::Error>(()) },
    /// )?;
    /// let args = CommandArgs::from([("count".to_string(), CommandArgValue::from("3"))]);
    /// let coerced = registry.coerce("roll", args).expect("\"3\" coerces to an integer");
    /// assert_eq!(coerced["count"], CommandArgValue::Integer(3));
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    fn coerce(&self, name: &str, args: CommandArgs) -> Option<CommandArgs> {
        let decl = self.find_decl(name)?;
        let coerced = args
            .into_iter()
            .map(|(key, value)| {
                let value = coerce_for_option(decl.find_option(&key)?, &value)?;
                Some((key, value))
            })
            .collect::<Option<CommandArgs>>()?;
        decl.options
            .iter()
            .all(|o| !o.required || coerced.contains_key(&o.name))
            .then_some(coerced)
    }
}
