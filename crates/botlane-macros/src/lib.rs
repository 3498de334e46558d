//! Derive macros for botlane's typed commands; use them through `botlane`
//! (its default feature `macros` re-exports them), not directly.
//!
//! Every declaration rule that can be known at compile time is checked here
//! and reported as a compile error on the field or attribute at fault, all
//! of them at once.

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

mod attrs;
mod bounds;
mod choice;
mod command;
mod doc;
mod function;
mod rules;

/// Derives `botlane::Command` for a struct with named fields: its
/// declaration and the conversion from the invocation's arguments.
///
/// - The command name is `#[command(name = "...")]`, else the struct name in
///   kebab case (`RollDice` becomes `roll-dice`).
/// - The description is `#[command(description = "...")]`, else the doc
///   comment's first paragraph (its lines trimmed and joined with spaces).
/// - The help text (`Command::help_text`, the end of `/help <name>`) is
///   `#[command(help_text = "...")]`, else the doc comment's paragraphs
///   after its first blank line, as poise reads a doc comment: each line
///   trimmed and kept, one blank line between paragraphs, a line ending in
///   `\` continued by the next. An attribute replaces only its own part.
///   A `/** */` comment's column of `*` is dropped, as rustdoc drops it.
/// - Each field is an option, in declared order, named after the field
///   (`r#type` becomes `type`) or `#[option(name = "...")]`, described by
///   its doc comment or `#[option(description = "...")]`.
/// - `Option<T>` is an optional option; any other type a required one. The
///   option type is `T`'s `CommandOptionValue::KIND`, or for a `String`
///   field `#[option(kind = "user" | "channel" | "role" | "string")]`.
/// - `#[option(choices("4", "6"))]` sets the choices; an enum deriving
///   `CommandChoice` brings its variants as choices.
/// - `#[option(min = 1, max = 3600)]` bounds an integer or `f64` field,
///   `#[option(min_length = 3, max_length = 200)]` a string field.
///
/// The name rule, description lengths, the help text's rule (not blank, at
/// most 2000 characters, no control character but `\n`, no U+2028 or
/// U+2029: a tab in the doc comment is an error on its line), choice counts, lengths, types and
/// duplicates, choices on a boolean, required-before-optional, the option
/// count, duplicate option names, and bounds on the wrong type, of the
/// wrong type, inverted, over the length cap or excluding a choice are
/// compile errors.
///
/// ```text
/// /// Roll some dice
/// ///
/// /// Rolls six-sided dice and adds them up.
/// #[derive(Command)]
/// struct Roll {
///     /// How many dice
///     count: i64,
///     /// Sides per die
///     #[option(choices("6", "20"))]
///     sides: Option<i64>,
/// }
/// ```
#[proc_macro_derive(Command, attributes(command, option))]
pub fn derive_command(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    command::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `botlane::CommandChoice` for an enum whose variants carry no
/// data: a field of this type is a string option whose choices are the
/// variant names in kebab case (`BigRed` becomes `big-red`), or
/// `#[choice(name = "...")]`.
///
/// An empty enum, more than 25 variants, a choice longer than 100
/// characters and duplicate choices are compile errors.
///
/// ```text
/// #[derive(CommandChoice)]
/// enum Color {
///     Red,
///     #[choice(name = "sky blue")]
///     Blue,
/// }
/// ```
#[proc_macro_derive(CommandChoice, attributes(choice))]
pub fn derive_command_choice(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    choice::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Makes an `async fn` a command: `#[command] async fn roll(ctx:
/// CommandContext<D>, count: u8) -> Result<(), E>` becomes `fn roll() ->
/// FnCommand<D>`, registered with `CommandRegistry::add(roll())`.
///
/// The first parameter is the context; its type (or an alias of it) gives
/// the bot's state type. The others are the options, in declared order,
/// read exactly as `derive(Command)` reads a struct's fields (the function's
/// parameters become one, handed to the same expander): `Option<T>` is
/// optional; an item of the `# Options` section of the function's doc
/// comment describes it (`` * `reason`: Why ``: rustc refuses a doc comment
/// on a parameter, and rustdoc shows this section with the function), or
/// `#[option(description = "...")]`; `#[option(...)]` also gives it a
/// name, a kind, choices or bounds; an enum deriving `CommandChoice`
/// brings its choices; the last `String` takes the rest of the text line,
/// as the grammar says (so there is no `#[rest]`, nor poise's
/// `#[description]`). The rest of the doc comment and `#[command(...)]`
/// give the command's name, description and help text as on the derive,
/// and its settings: `aliases("r")`, `category = "..."`,
/// `hide_in_help`, `owners_only`, a cooldown (`user_cooldown = 30`,
/// `channel_cooldown`, `server_cooldown`, `global_cooldown`, in seconds),
/// and `check = ...` (repeatable: a `Check<D>` or a
/// `fn(&CommandContext<D>) -> Result<(), UserError>`).
///
/// ```text
/// /// Ban a user
/// ///
/// /// # Options
/// /// * `user`: Who
/// /// * `reason`: Why
/// #[command(check = is_admin)]
/// async fn ban(ctx: Ctx, user: UserId, #[option(max_length = 200)] reason: String) -> Done { ... }
/// ```
#[proc_macro_attribute]
pub fn command(attr: TokenStream, item: TokenStream) -> TokenStream {
    function::command(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
