//! `#[derive(CommandChoice)]`: a fieldless enum becomes the choices of a
//! string option.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, LitStr};

use crate::rules::{kebab_case, quoted, Errors, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN};

/// The choice name of one variant: `#[choice(name = "...")]` or the kebab-case variant name.
fn choice_name(variant: &syn::Variant, errors: &mut Errors) -> (String, Span) {
    let mut explicit: Option<LitStr> = None;
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident("choice")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("name") {
                return Err(meta.error("unknown choice attribute: expected `name`"));
            }
            if explicit.is_some() {
                return Err(meta.error("`name` is given twice"));
            }
            explicit = Some(meta.value()?.parse()?);
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    match explicit {
        Some(lit) => (lit.value(), lit.span()),
        None => (
            kebab_case(&variant.ident.unraw().to_string()),
            variant.ident.span(),
        ),
    }
}

pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "derive(CommandChoice) needs an enum whose variants carry no data",
        ));
    };
    let mut errors = Errors::default();
    if !input.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &input.generics,
            "derive(CommandChoice) does not support generic enums",
        ));
    }
    let ident = &input.ident;
    if data.variants.is_empty() {
        errors.at(
            ident.span(),
            "choices must not be empty: add a variant (each variant is one choice)",
        );
    }
    if let Some(extra) = data.variants.iter().nth(MAX_CHOICES_PER_OPTION) {
        errors.at(
            extra.ident.span(),
            format!(
                "{} choices, more than MAX_CHOICES_PER_OPTION ({MAX_CHOICES_PER_OPTION})",
                data.variants.len()
            ),
        );
    }
    let mut names: Vec<String> = Vec::with_capacity(data.variants.len());
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            errors.push(syn::Error::new_spanned(
                &variant.fields,
                "a choice variant cannot carry data",
            ));
        }
        let (name, span) = choice_name(variant, &mut errors);
        let chars = name.chars().count();
        if chars > MAX_CHOICE_LEN {
            errors.at(
                span,
                format!(
                    "choice {} is {chars} characters, more than MAX_CHOICE_LEN ({MAX_CHOICE_LEN})",
                    quoted(&name)
                ),
            );
        }
        if let Some(first) = names.iter().position(|earlier| *earlier == name) {
            errors.at(
                span,
                format!(
                    "duplicate choice {}: choices[{first}] has the same value",
                    quoted(&name)
                ),
            );
        }
        names.push(name);
    }
    errors.finish()?;

    let variants: Vec<_> = data.variants.iter().map(|v| &v.ident).collect();
    Ok(quote! {
        #[automatically_derived]
        impl ::botlane::__private::CommandChoice for #ident {
            const CHOICES: &'static [&'static str] = &[#(#names),*];

            fn as_choice(&self) -> &'static str {
                match self {
                    #( Self::#variants => #names, )*
                }
            }

            fn from_choice(choice: &str) -> ::core::option::Option<Self> {
                match choice {
                    #( #names => ::core::option::Option::Some(Self::#variants), )*
                    _ => ::core::option::Option::None,
                }
            }
        }
    })
}
