//! The attributes of a typed command, as the expander reads them:
//! `#[command(...)]` on the struct or function, `#[option(...)]` on each
//! field or parameter; and the settings `#[command(...)]` declares.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, LitInt, LitStr, Token};

use crate::bounds::{parse_length, parse_number, Bounds};
use crate::rules::Errors;

/// Where the declaration comes from: a struct deriving `Command`, or the
/// parameters of a `#[command]` function, made into a struct.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Struct,
    Function,
}

/// The keys of `#[command(...)]`.
#[derive(Default)]
pub(crate) struct CommandAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) help_text: Option<LitStr>,
    pub(crate) aliases: Option<Vec<LitStr>>,
    pub(crate) category: Option<LitStr>,
    pub(crate) hide_in_help: bool,
    pub(crate) owners_only: bool,
    /// The scope's constructor (`per_user`…) and the seconds.
    pub(crate) cooldown: Option<(Ident, u64)>,
    pub(crate) checks: Vec<Expr>,
}

/// The cooldown keys, as poise spells them, and `Cooldown`'s constructors.
const COOLDOWNS: [(&str, &str); 4] = [
    ("user_cooldown", "per_user"),
    ("channel_cooldown", "per_channel"),
    ("server_cooldown", "per_server"),
    ("global_cooldown", "global"),
];

/// The keys of `#[option(...)]`.
#[derive(Default)]
pub(crate) struct OptionAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) kind: Option<LitStr>,
    pub(crate) choices: Option<(Span, Vec<LitStr>)>,
    pub(crate) bounds: Bounds,
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &syn::meta::ParseNestedMeta<'_>,
) -> syn::Result<()> {
    if slot.is_some() {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(meta.error(format!("`{key}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

/// The parenthesised strings of `key("a", "b")`.
fn string_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let list = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
    Ok(list.into_iter().collect())
}

pub(crate) fn command_attrs(attrs: &[Attribute], form: Form, errors: &mut Errors) -> CommandAttrs {
    let mut out = CommandAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("command")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                set_once(&mut out.name, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("description") {
                set_once(&mut out.description, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("help_text") {
                set_once(&mut out.help_text, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("category") {
                set_once(&mut out.category, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("aliases") {
                set_once(&mut out.aliases, string_list(&meta)?, &meta)
            } else if meta.path.is_ident("hide_in_help") {
                out.hide_in_help = true;
                Ok(())
            } else if meta.path.is_ident("owners_only") {
                out.owners_only = true;
                Ok(())
            } else if let Some((_, scope)) =
                COOLDOWNS.iter().find(|(key, _)| meta.path.is_ident(key))
            {
                if out.cooldown.is_some() {
                    return Err(meta.error("a command has one cooldown: this is its second"));
                }
                // Emitted as parsed: `30u8` would not be a `u64` in the
                // generated `Duration::from_secs`.
                let secs = meta.value()?.parse::<LitInt>()?.base10_parse::<u64>()?;
                out.cooldown = Some((Ident::new(scope, meta.path.span()), secs));
                Ok(())
            } else if meta.path.is_ident("check") {
                if form == Form::Struct {
                    return Err(meta.error(
                        "a check reads the bot's state, which a struct does not know: give it at \
                         registration (CommandSettings::check), or write the command as a \
                         #[command] fn",
                    ));
                }
                out.checks.push(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown command attribute: expected `name`, `description`, `help_text`, \
                     `aliases`, `category`, `hide_in_help`, `owners_only`, `check` or a cooldown \
                     (`user_cooldown`, `channel_cooldown`, `server_cooldown`, `global_cooldown`)",
                ))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    out
}

pub(crate) fn option_attrs(attrs: &[Attribute], errors: &mut Errors) -> OptionAttrs {
    let mut out = OptionAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("option")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                set_once(&mut out.name, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("description") {
                set_once(&mut out.description, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("kind") {
                set_once(&mut out.kind, meta.value()?.parse()?, &meta)
            } else if meta.path.is_ident("choices") {
                let span = meta.path.span();
                set_once(&mut out.choices, (span, string_list(&meta)?), &meta)
            } else if meta.path.is_ident("min") {
                set_once(&mut out.bounds.min, parse_number(meta.value()?)?, &meta)
            } else if meta.path.is_ident("max") {
                set_once(&mut out.bounds.max, parse_number(meta.value()?)?, &meta)
            } else if meta.path.is_ident("min_length") {
                set_once(
                    &mut out.bounds.min_length,
                    parse_length(meta.value()?)?,
                    &meta,
                )
            } else if meta.path.is_ident("max_length") {
                set_once(
                    &mut out.bounds.max_length,
                    parse_length(meta.value()?)?,
                    &meta,
                )
            } else {
                Err(meta.error(
                    "unknown option attribute: expected `name`, `description`, `kind`, `choices`, \
                     `min`, `max`, `min_length` or `max_length`",
                ))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    out
}

/// `Command::settings`, when the attribute sets any of them.
pub(crate) fn declared_settings(attrs: &CommandAttrs) -> Option<TokenStream> {
    let mut sets = Vec::new();
    if let Some(aliases) = &attrs.aliases {
        sets.push(quote!(.aliases([#(#aliases),*])));
    }
    if let Some(category) = &attrs.category {
        sets.push(quote!(.category(#category)));
    }
    if attrs.hide_in_help {
        sets.push(quote!(.hide_in_help()));
    }
    if attrs.owners_only {
        sets.push(quote!(.owners_only()));
    }
    if let Some((scope, secs)) = &attrs.cooldown {
        sets.push(quote! {
            .cooldown(::botlane::__private::Cooldown::#scope(
                ::core::time::Duration::from_secs(#secs),
            ))
        });
    }
    (!sets.is_empty()).then(|| {
        quote! {
            fn settings<D: ::core::marker::Send + ::core::marker::Sync + 'static>()
                -> ::botlane::__private::CommandSettings<D>
            {
                ::botlane::__private::CommandSettings::new() #(#sets)*
            }
        }
    })
}
