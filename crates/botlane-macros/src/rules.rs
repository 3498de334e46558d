//! The declaration rules that are knowable at compile time, and the naming
//! conventions of the derives.
//!
//! The limits, the name rule and the integer/number syntax are botlane's
//! own, from `botlane-proto` (a proc-macro crate cannot depend on the crate
//! it serves, but both depend on the wire crate). The rules built on them
//! repeat botlane's: the test `agrees_with_validate_declaration` below holds
//! them, and the bound rules of `bounds.rs`, to botlane's
//! `validate_declaration`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{GenericArgument, PathArguments, Type};

pub(crate) use botlane_proto::limits::{
    MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_COMMAND_DESC, MAX_OPTIONS_PER_COMMAND,
    MAX_OPTION_LENGTH, MAX_SAFE_INTEGER,
};
pub(crate) use botlane_proto::names::is_valid_name;
pub(crate) use botlane_proto::numbers::{format_number, parse_integer, parse_number};

/// Collects every error of one derive so the user sees them all at once.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

pub(crate) fn name_rule_message(what: &str, name: &str, hint: &str) -> String {
    format!(
        "{what} name {} must match ^[a-z0-9_-]{{1,32}}${hint}",
        quoted(name)
    )
}

/// A value in a message as botlane quotes it: escaped like `{:?}`, at most
/// 40 characters, `…` when cut.
pub(crate) fn quoted(value: &str) -> String {
    const EXCERPT_CHARS: usize = 40;
    match value.char_indices().nth(EXCERPT_CHARS) {
        None => format!("{value:?}"),
        Some((cut, _)) => {
            let quoted = format!("{:?}", &value[..cut]);
            let body = quoted.strip_suffix('"').unwrap_or(&quoted);
            format!("{body}…\"")
        }
    }
}

/// `RollDice` → `roll-dice`, `HTTPStatus` → `http-status`, `Roll2d` → `roll2d`.
pub(crate) fn kebab_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_is_lower)
            {
                out.push('-');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The error for a description that breaks the 1..=100 character rule.
pub(crate) fn description_problem(description: &str) -> Option<String> {
    let chars = description.chars().count();
    if chars == 0 {
        Some("description must not be empty".to_owned())
    } else if chars > MAX_COMMAND_DESC {
        Some(format!(
            "description is {chars} characters, more than MAX_COMMAND_DESC ({MAX_COMMAND_DESC})"
        ))
    } else {
        None
    }
}

/// The option types, as far as the macro can tell them from the field type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    String,
    Integer,
    Boolean,
    User,
    Channel,
    Role,
    Number,
}

impl Kind {
    /// The kind of an option type's name (`CommandOptionType::as_str`);
    /// the test `knows_every_option_type` checks it against botlane's table.
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "string" => Self::String,
            "integer" => Self::Integer,
            "boolean" => Self::Boolean,
            "user" => Self::User,
            "channel" => Self::Channel,
            "role" => Self::Role,
            "number" => Self::Number,
            _ => return None,
        })
    }

    /// The kinds `#[option(kind = "...")]` may give a `String` field: the
    /// ones whose values are text.
    pub(crate) fn from_attr(name: &str) -> Option<Self> {
        Self::from_name(name).filter(|kind| match kind {
            Self::String | Self::User | Self::Channel | Self::Role => true,
            Self::Integer | Self::Boolean | Self::Number => false,
        })
    }

    /// The kind of the value types botlane implements, by the last path
    /// segment; `None` for any other type (an enum, a user's own type), whose
    /// kind only the trait knows.
    pub(crate) fn of_type(ty: &Type) -> Option<Self> {
        let Type::Path(path) = ty else { return None };
        let last = path.path.segments.last()?;
        if !last.arguments.is_none() {
            return None;
        }
        Some(match last.ident.to_string().as_str() {
            "String" => Self::String,
            "bool" => Self::Boolean,
            "i8" | "i16" | "i32" | "i64" | "isize" | "u8" | "u16" | "u32" | "u64" | "usize" => {
                Self::Integer
            }
            "f64" => Self::Number,
            "UserId" => Self::User,
            "ChannelId" => Self::Channel,
            "RoleId" => Self::Role,
            _ => return None,
        })
    }

    pub(crate) fn tokens(self) -> TokenStream {
        match self {
            Self::String => quote!(::botlane::__private::CommandOptionType::String),
            Self::Integer => quote!(::botlane::__private::CommandOptionType::Integer),
            Self::Boolean => quote!(::botlane::__private::CommandOptionType::Boolean),
            Self::User => quote!(::botlane::__private::CommandOptionType::User),
            Self::Channel => quote!(::botlane::__private::CommandOptionType::Channel),
            Self::Role => quote!(::botlane::__private::CommandOptionType::Role),
            Self::Number => quote!(::botlane::__private::CommandOptionType::Number),
        }
    }

    /// Whether `choice` coerces to this kind, as botlane's text lane reads it.
    pub(crate) fn accepts_choice(self, choice: &str) -> bool {
        match self {
            Self::String => true,
            Self::User | Self::Channel | Self::Role => !choice.is_empty(),
            Self::Integer => parse_integer(choice).is_some(),
            Self::Number => parse_number(choice).is_some(),
            Self::Boolean => false,
        }
    }

    /// The option type's name after an article: `an integer`, `a string`.
    pub(crate) fn with_article(self) -> &'static str {
        match self {
            Self::String => "a string",
            Self::Integer => "an integer",
            Self::Boolean => "a boolean",
            Self::User => "a user",
            Self::Channel => "a channel",
            Self::Role => "a role",
            Self::Number => "a number",
        }
    }

    /// The numeric value of a choice of an `integer` or `number` option.
    pub(crate) fn choice_value(self, choice: &str) -> Option<f64> {
        match self {
            // Exact: choices are within ±(2^53 − 1).
            #[allow(clippy::cast_precision_loss)]
            Self::Integer => parse_integer(choice).map(|i| i as f64),
            Self::Number => parse_number(choice),
            _ => None,
        }
    }

    pub(crate) fn phrase(self) -> &'static str {
        match self {
            Self::Integer => "an integer",
            Self::Number => "a number",
            Self::User => "a user id (ids are non-empty)",
            Self::Channel => "a channel id (ids are non-empty)",
            Self::Role => "a role id (ids are non-empty)",
            Self::String => "a string",
            Self::Boolean => "a boolean",
        }
    }

    /// Whether two choices denote the same value: numerically for integers
    /// and numbers (`"6"` and `"06"`), exactly otherwise.
    pub(crate) fn same_choice(self, a: &str, b: &str) -> bool {
        match self {
            Self::Integer => parse_integer(a).is_some() && parse_integer(a) == parse_integer(b),
            Self::Number => parse_number(a).is_some() && parse_number(a) == parse_number(b),
            _ => a == b,
        }
    }
}

/// The `T` of `Option<T>` (by the last path segment, so `std::option::Option` too).
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kebab_case_of_type_names() {
        assert_eq!(kebab_case("Roll"), "roll");
        assert_eq!(kebab_case("RollDice"), "roll-dice");
        assert_eq!(kebab_case("HTTPStatus"), "http-status");
        assert_eq!(kebab_case("Roll2d"), "roll2d");
        assert_eq!(kebab_case("Roll2Dice"), "roll2-dice");
        assert_eq!(kebab_case("ABC"), "abc");
        assert_eq!(kebab_case("already_snake"), "already_snake");
    }

    #[test]
    fn quoting_cuts_long_values() {
        assert_eq!(quoted("a\nb"), "\"a\\nb\"");
        assert_eq!(quoted(&"x".repeat(40)), format!("\"{}\"", "x".repeat(40)));
        assert_eq!(quoted(&"x".repeat(41)), format!("\"{}…\"", "x".repeat(40)));
    }

    #[test]
    fn descriptions() {
        assert!(description_problem("Roll").is_none());
        assert!(description_problem(&"é".repeat(100)).is_none());
        assert_eq!(
            description_problem("").as_deref(),
            Some("description must not be empty")
        );
        assert!(description_problem(&"é".repeat(101)).is_some_and(|m| m.contains("101 characters")));
    }

    #[test]
    fn choices_by_kind() {
        assert!(Kind::Integer.accepts_choice("+06"));
        assert!(!Kind::Integer.accepts_choice("1.5"));
        assert!(!Kind::Integer.accepts_choice("9007199254740992"));
        assert!(Kind::Number.accepts_choice(".5"));
        assert!(Kind::Number.accepts_choice("1e3"));
        assert!(!Kind::Number.accepts_choice("inf"));
        assert!(!Kind::Number.accepts_choice("1e999"));
        assert!(!Kind::User.accepts_choice(""));
        assert!(Kind::String.accepts_choice(""));
        assert!(Kind::Integer.same_choice("6", "+06"));
        assert!(Kind::Number.same_choice("0.5", ".50"));
        assert!(!Kind::String.same_choice("a", "A"));
    }

    #[test]
    fn kinds_of_types() {
        let kind = |ty: Type| Kind::of_type(&ty);
        assert_eq!(kind(syn::parse_quote!(u8)), Some(Kind::Integer));
        assert_eq!(kind(syn::parse_quote!(f64)), Some(Kind::Number));
        assert_eq!(
            kind(syn::parse_quote!(botlane::framework::UserId)),
            Some(Kind::User)
        );
        assert_eq!(kind(syn::parse_quote!(Color)), None);
        assert_eq!(kind(syn::parse_quote!(Vec<String>)), None);
        let opt: Type = syn::parse_quote!(std::option::Option<i64>);
        assert_eq!(
            option_inner(&opt).and_then(Kind::of_type),
            Some(Kind::Integer)
        );
        assert!(option_inner(&syn::parse_quote!(i64)).is_none());
    }

    /// The macro knows every option type of botlane's table, each as the
    /// variant of the same name: a type added to botlane fails here until
    /// `Kind` has it (then the compiler names every rule to give it).
    #[test]
    fn knows_every_option_type() {
        for (option_type, _) in botlane::COMMAND_OPTION_TYPE_CODES {
            let kind = Kind::from_name(option_type.as_str())
                .unwrap_or_else(|| panic!("Kind has no variant for {option_type}"));
            assert_eq!(
                kind.tokens().to_string(),
                format!(":: botlane :: __private :: CommandOptionType :: {option_type:?}")
            );
        }
    }

    /// Every replicated rule gives the verdict botlane's validator gives.
    #[test]
    fn agrees_with_validate_declaration() {
        use botlane::{validate_declaration, CommandDeclaration, CommandOption, CommandOptionType};

        let texts = [
            "",
            "0",
            "6",
            "+06",
            "-7",
            "-",
            "+",
            "1.",
            ".5",
            ".",
            "1e3",
            "1E-2",
            "-2.5e+3",
            "1e",
            "e5",
            "1.2.3",
            "1,5",
            "inf",
            "NaN",
            "infinity",
            "1e999",
            " 1",
            "0x10",
            "١",
            "9007199254740991",
            "-9007199254740991",
            "9007199254740992",
            "99999999999999999999",
            "abc",
            "Roll",
            "roll-dice_2",
            "café",
        ];
        for (option_type, _) in botlane::COMMAND_OPTION_TYPE_CODES {
            let kind = Kind::from_name(option_type.as_str()).unwrap();
            for text in texts {
                let decl = CommandDeclaration::new("c", "d")
                    .option(CommandOption::new("o", "d", option_type).choices([text]));
                assert_eq!(
                    kind.accepts_choice(text),
                    validate_declaration(&decl).is_ok(),
                    "{kind:?} choice {text:?}"
                );
                for other in texts {
                    let decl = CommandDeclaration::new("c", "d")
                        .option(CommandOption::new("o", "d", option_type).choices([text, other]));
                    if kind.accepts_choice(text) && kind.accepts_choice(other) {
                        assert_eq!(
                            kind.same_choice(text, other),
                            validate_declaration(&decl).is_err(),
                            "{kind:?} choices {text:?} and {other:?}"
                        );
                    }
                }
            }
        }
        for text in texts
            .iter()
            .copied()
            .chain([&*"x".repeat(32), &*"x".repeat(33)])
        {
            let decl = CommandDeclaration::new(text, "d");
            assert_eq!(
                is_valid_name(text),
                validate_declaration(&decl).is_ok(),
                "{text:?}"
            );
        }
        for description in ["", "x", &"é".repeat(100), &"é".repeat(101)] {
            let decl = CommandDeclaration::new("c", description);
            assert_eq!(
                description_problem(description).is_none(),
                validate_declaration(&decl).is_ok(),
                "{description:?}"
            );
        }
        bounds_agree_with_validate_declaration();
        let bool_choices = CommandDeclaration::new("c", "d")
            .option(CommandOption::new("o", "d", CommandOptionType::Boolean).choices(["true"]));
        assert_eq!(
            Kind::Boolean.accepts_choice("true"),
            validate_declaration(&bool_choices).is_ok()
        );
    }

    /// The bound rules give the verdict botlane's validator gives, over a
    /// grid of types, bounds and choices.
    fn bounds_agree_with_validate_declaration() {
        use crate::bounds::{Bounds, Length, Number};
        use botlane::{validate_declaration, CommandDeclaration, CommandOption, CommandOptionType};
        use syn::LitStr;

        let kinds = [
            (Kind::Integer, CommandOptionType::Integer, vec!["5", "+03"]),
            (Kind::Number, CommandOptionType::Number, vec!["0.5", "7"]),
            (
                Kind::String,
                CommandOptionType::String,
                vec!["ab", "abcdef"],
            ),
            (Kind::User, CommandOptionType::User, vec!["u1"]),
            (Kind::Boolean, CommandOptionType::Boolean, vec![]),
        ];
        let numbers = [
            None,
            Some(1.0),
            Some(1.5),
            Some(-3.0),
            Some(6.0),
            Some(9_007_199_254_740_992.0),
        ];
        let lengths = [None, Some(0), Some(3), Some(6001)];
        let number = |value: Option<f64>| {
            value.map(|value| Number {
                value,
                span: Span::call_site(),
                written: value.to_string(),
            })
        };
        let length = |value: Option<usize>| {
            value.map(|value| Length {
                value,
                span: Span::call_site(),
            })
        };
        for (kind, option_type, choices) in &kinds {
            for choice_set in [None, Some(choices.clone())]
                .into_iter()
                .filter(|c| c.as_ref().is_none_or(|c| !c.is_empty()))
            {
                for min in numbers {
                    for max in numbers {
                        for min_length in lengths {
                            for max_length in lengths {
                                let bounds = Bounds {
                                    min: number(min),
                                    max: number(max),
                                    min_length: length(min_length),
                                    max_length: length(max_length),
                                };
                                let lits: Option<Vec<LitStr>> = choice_set.as_ref().map(|c| {
                                    c.iter()
                                        .map(|t| LitStr::new(t, Span::call_site()))
                                        .collect()
                                });
                                let mut errors = Errors::default();
                                bounds.check(Some(*kind), lits.as_deref(), &mut errors);
                                let mut option = CommandOption::new("o", "d", *option_type);
                                option.choices = choice_set
                                    .clone()
                                    .map(|c| c.into_iter().map(str::to_owned).collect());
                                option.min_value = min;
                                option.max_value = max;
                                option.min_length = min_length;
                                option.max_length = max_length;
                                let decl = CommandDeclaration::new("c", "d").option(option);
                                assert_eq!(
                                    errors.finish().is_ok(),
                                    validate_declaration(&decl).is_ok(),
                                    "{kind:?} {choice_set:?} {min:?} {max:?} {min_length:?} {max_length:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
