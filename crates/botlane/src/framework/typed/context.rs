//! The context's arguments as Rust types, failing with a message for the
//! user (and the usage line, when the registry is known) where the `get_*`
//! getters (`context/getters.rs`) give `None`. Here, with the types, so
//! that the context does not depend on typed commands.

use super::{optional_arg, Command, CommandOptionValue};
use crate::commands::argument_error::{ArgumentError, ArgumentRule};
use crate::commands::text::format::usage_line;
use crate::commands::types::CommandDeclaration;
use crate::framework::context::CommandContext;

impl<D> CommandContext<D> {
    /// The declaration of the invoked command, when the registry is known.
    pub fn declaration(&self) -> Option<&CommandDeclaration> {
        self.view()?.declaration(self.name())
    }

    /// The usage line of the invoked command with [`prefix`](Self::prefix),
    /// when the registry is known.
    pub fn usage(&self) -> Option<String> {
        self.declaration()
            .map(|decl| usage_line(decl, Some(self.prefix())))
    }

    /// Option `name` converted to `T`; an [`ArgumentError`] naming the
    /// option when it is unfilled or does not convert (with the usage line
    /// when the registry is known). The `get_*` getters stay forgiving: they
    /// give `None` instead.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("count".into(), 300_i64.into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "roll".into(), args, source: CommandSource::Text },
    /// #     Message::new("m1", "c1", "u1", "/roll 300"),
    /// # );
    /// assert_eq!(ctx.require::<i64>("count")?, 300);
    /// assert_eq!(
    ///     ctx.require::<u8>("count").unwrap_err().to_string(),
    ///     "option \"count\" must be a whole number from 0 to 255"
    /// );
    /// assert_eq!(ctx.require::<String>("label").unwrap_err().to_string(), "option \"label\" is required");
    /// # Ok::<(), botlane::ArgumentError>(())
    /// ```
    pub fn require<T: CommandOptionValue>(&self, name: &str) -> Result<T, ArgumentError> {
        self.optional(name)?.ok_or_else(|| {
            let rule = match self.declaration() {
                Some(decl) if decl.find_option(name).is_none() => ArgumentRule::Unknown,
                _ => ArgumentRule::Missing,
            };
            self.with_usage(ArgumentError::new(name, rule))
        })
    }

    /// Option `name` converted to `T`, `None` when unfilled; an
    /// [`ArgumentError`] naming the option when it does not convert.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("sides".into(), 6_i64.into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "roll".into(), args, source: CommandSource::Text },
    /// #     Message::new("m1", "c1", "u1", "/roll 2 6"),
    /// # );
    /// assert_eq!(ctx.optional::<u32>("sides")?, Some(6));
    /// assert_eq!(ctx.optional::<u32>("label")?, None);
    /// assert!(ctx.optional::<bool>("sides").is_err());
    /// # Ok::<(), botlane::ArgumentError>(())
    /// ```
    pub fn optional<T: CommandOptionValue>(&self, name: &str) -> Result<Option<T>, ArgumentError> {
        optional_arg(self.args(), name).map_err(|e| self.with_usage(e))
    }

    /// The arguments as the typed command `C`, with `C`'s usage line in the
    /// error when they do not convert.
    ///
    /// This is what a typed handler registered with
    /// [`CommandRegistry::command`](crate::CommandRegistry::command) receives: that registration converts
    /// before calling the handler, and this lets a plain
    /// [`register`](crate::CommandRegistry::register) handler do the same when it
    /// suits it, e.g. to answer first or to pick between two shapes.
    ///
    /// ```
    /// use botlane::{Command, CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    ///
    /// /// Roll some dice
    /// #[derive(Command, Debug, PartialEq)]
    /// struct Roll {
    ///     /// How many dice
    ///     #[option(min = 1, max = 10)]
    ///     count: u8,
    /// }
    ///
    /// let ctx = |count: i64| CommandContext::for_test(
    ///     CommandInvocation {
    ///         name: "roll".into(),
    ///         args: CommandArgs::from([("count".into(), count.into())]),
    ///         source: CommandSource::Structured,
    ///     },
    ///     Message::new("m1", "c1", "u1", "/roll"),
    /// );
    /// assert_eq!(ctx(3).args_as::<Roll>()?, Roll { count: 3 });
    /// assert_eq!(
    ///     ctx(300).args_as::<Roll>().unwrap_err().to_string(),
    ///     "option \"count\" must be a whole number from 0 to 255\nusage: /roll <count (1 to 10)>"
    /// );
    /// # Ok::<(), botlane::ArgumentError>(())
    /// ```
    pub fn args_as<C: Command>(&self) -> Result<C, ArgumentError> {
        C::from_args(self.args())
            .map_err(|e| e.with_usage(usage_line(&C::declaration(), Some(self.prefix()))))
    }

    fn with_usage(&self, error: ArgumentError) -> ArgumentError {
        match self.usage() {
            Some(usage) => error.with_usage(usage),
            None => error,
        }
    }
}
