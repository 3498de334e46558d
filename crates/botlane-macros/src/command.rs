//! `#[derive(Command)]`: a struct becomes a declaration and a conversion
//! from its arguments.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Expr, Field, Fields, Ident, LitStr, Type};

use crate::attrs::{command_attrs, declared_settings, option_attrs, CommandAttrs, Form};
use crate::bounds::Bounds;
use crate::doc::{command_doc, doc_text, help_text_problem, HelpText};
use crate::rules::{
    description_problem, is_valid_name, kebab_case, name_rule_message, option_inner, quoted,
    Errors, Kind, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_OPTIONS_PER_COMMAND,
};

/// What the expander gives: the `Command` impl, and for a function the
/// checks its attribute names (they read the bot's state, which only the
/// function's context parameter knows).
pub(crate) struct Expanded {
    pub(crate) tokens: TokenStream,
    pub(crate) checks: Vec<Expr>,
}

/// One field, read and checked.
struct OptionSpec<'a> {
    ident: &'a Ident,
    /// The field type, or the `T` of `Option<T>`.
    value_ty: &'a Type,
    optional: bool,
    name: String,
    name_span: Span,
    description: String,
    kind_attr: Option<Kind>,
    choices: Option<Vec<LitStr>>,
    bounds: Bounds,
}

/// An option's description from the attribute, else from the doc comment
/// (a field's, or the one `function.rs` reads for a parameter); checked.
fn description(
    attrs: &[Attribute],
    explicit: Option<&LitStr>,
    fallback: Span,
    form: Form,
    errors: &mut Errors,
) -> String {
    let (text, span) = match explicit {
        Some(lit) => (lit.value(), lit.span()),
        None => match (doc_text(attrs), form) {
            (Some(found), _) => found,
            (None, Form::Struct) => {
                errors.at(fallback, "add a doc comment: it is the description");
                return String::new();
            }
            (None, Form::Function) => {
                errors.at(
                    fallback,
                    "describe this option in the function's doc comment, under \
                     `# Options`: ``* `name`: description``",
                );
                return String::new();
            }
        },
    };
    checked_description(text, span, errors)
}

fn checked_description(text: String, span: Span, errors: &mut Errors) -> String {
    if let Some(problem) = description_problem(&text) {
        errors.at(span, problem);
    }
    text
}

/// A command's description and help text: each from its attribute, else
/// from the doc comment (its first paragraph, the rest); checked.
fn command_texts(
    attrs: &[Attribute],
    explicit: &CommandAttrs,
    fallback: Span,
    errors: &mut Errors,
) -> (String, Option<String>) {
    let doc = command_doc(attrs);
    let description = match (&explicit.description, &doc) {
        (Some(lit), _) => checked_description(lit.value(), lit.span(), errors),
        (None, Some(doc)) => checked_description(doc.description.clone(), doc.span, errors),
        (None, None) => {
            errors.at(fallback, "add a doc comment: it is the description");
            String::new()
        }
    };
    let help = match (&explicit.help_text, doc.and_then(|d| d.help)) {
        (Some(lit), _) => {
            let text = lit.value();
            if let Some((_, problem)) = help_text_problem(&text) {
                errors.at(lit.span(), problem);
            }
            Some(text)
        }
        (None, Some(HelpText { text, line_spans })) => {
            if let Some((line, problem)) = help_text_problem(&text) {
                // A fault of one line is shown on its `///`; of the whole
                // text, on its first.
                let at = line.map_or(0, |line| line - 1);
                errors.at(line_spans.get(at).copied().unwrap_or(fallback), problem);
            }
            Some(text)
        }
        (None, None) => None,
    };
    (description, help)
}

fn option_spec<'a>(field: &'a Field, form: Form, errors: &mut Errors) -> Option<OptionSpec<'a>> {
    let ident = field.ident.as_ref()?;
    let attrs = option_attrs(&field.attrs, errors);
    let (value_ty, optional) = match option_inner(&field.ty) {
        Some(inner) => (inner, true),
        None => (&field.ty, false),
    };
    let (name, name_span) = match &attrs.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (ident.unraw().to_string(), ident.span()),
    };
    if !is_valid_name(&name) {
        let hint = if attrs.name.is_some() {
            ""
        } else {
            "; set one with #[option(name = \"...\")]"
        };
        errors.at(name_span, name_rule_message("option", &name, hint));
    }
    let description = description(
        &field.attrs,
        attrs.description.as_ref(),
        ident.span(),
        form,
        errors,
    );
    let type_kind = Kind::of_type(value_ty);
    let kind_attr = attrs.kind.as_ref().and_then(|lit| {
        let Some(kind) = Kind::from_attr(&lit.value()) else {
            errors.at(
                lit.span(),
                format!(
                    "unknown kind {}: expected \"user\", \"channel\", \"role\" or \"string\"",
                    quoted(&lit.value())
                ),
            );
            return None;
        };
        if type_kind != Some(Kind::String) {
            errors.at(
                lit.span(),
                "kind applies only to a String field; use the type itself (UserId, ChannelId, RoleId, i64, ...) otherwise",
            );
            return None;
        }
        Some(kind)
    });
    let known_kind = kind_attr.or(type_kind);
    let choices = attrs.choices.map(|(span, lits)| {
        match known_kind {
            Some(kind) => check_choices(kind, span, &lits, errors),
            None => errors.at(
                span,
                "choices need a field whose option type is known here: String, an integer type, \
                 f64, UserId, ChannelId or RoleId (an enum deriving CommandChoice brings its own choices)",
            ),
        }
        lits
    });
    attrs.bounds.check(known_kind, choices.as_deref(), errors);
    Some(OptionSpec {
        ident,
        value_ty,
        optional,
        name,
        name_span,
        description,
        kind_attr,
        choices,
        bounds: attrs.bounds,
    })
}

fn check_choices(kind: Kind, span: Span, lits: &[LitStr], errors: &mut Errors) {
    if kind == Kind::Boolean {
        errors.at(span, "a boolean option cannot have choices");
        return;
    }
    if lits.is_empty() {
        errors.at(
            span,
            "choices must not be empty (omit choices to allow any value)",
        );
    }
    if let Some(extra) = lits.get(MAX_CHOICES_PER_OPTION) {
        errors.at(
            extra.span(),
            format!(
                "{} choices, more than MAX_CHOICES_PER_OPTION ({MAX_CHOICES_PER_OPTION})",
                lits.len()
            ),
        );
    }
    let values: Vec<String> = lits.iter().map(LitStr::value).collect();
    for (j, (lit, choice)) in lits.iter().zip(&values).enumerate() {
        let chars = choice.chars().count();
        if chars > MAX_CHOICE_LEN {
            errors.at(
                lit.span(),
                format!(
                    "choice {} is {chars} characters, more than MAX_CHOICE_LEN ({MAX_CHOICE_LEN})",
                    quoted(choice)
                ),
            );
        }
        if !kind.accepts_choice(choice) {
            errors.at(
                lit.span(),
                format!("choice {} is not {}", quoted(choice), kind.phrase()),
            );
        } else if let Some(first) = values[..j]
            .iter()
            .position(|earlier| kind.same_choice(earlier, choice))
        {
            errors.at(
                lit.span(),
                format!(
                    "duplicate choice {}: choices[{first}] has the same value",
                    quoted(choice)
                ),
            );
        }
    }
}

/// The rules that involve several fields.
fn check_options(specs: &[OptionSpec<'_>], errors: &mut Errors) {
    if let Some(extra) = specs.get(MAX_OPTIONS_PER_COMMAND) {
        errors.at(
            extra.ident.span(),
            format!(
                "{} options, more than MAX_OPTIONS_PER_COMMAND ({MAX_OPTIONS_PER_COMMAND})",
                specs.len()
            ),
        );
    }
    let mut first_optional: Option<&OptionSpec<'_>> = None;
    for (i, spec) in specs.iter().enumerate() {
        if let Some(first) = specs[..i]
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(&spec.name))
        {
            errors.at(
                spec.name_span,
                format!(
                    "duplicate option name {}: field `{}` already has this name",
                    quoted(&spec.name),
                    first.ident.unraw()
                ),
            );
        }
        match (spec.optional, first_optional) {
            (false, Some(optional)) => errors.at(
                spec.ident.span(),
                format!(
                    "required option {} follows optional option {}; every required option must \
                     precede every optional one (move it up or make it an Option)",
                    quoted(&spec.name),
                    quoted(&optional.name)
                ),
            ),
            (true, None) => first_optional = Some(spec),
            _ => {}
        }
    }
}

pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    expand(input, Form::Struct).map(|expanded| expanded.tokens)
}

/// The `Command` impl of `input`: a struct deriving it, or the struct a
/// `#[command]` function's parameters make (`function.rs`).
pub(crate) fn expand(input: &DeriveInput, form: Form) -> syn::Result<Expanded> {
    let fields: Vec<&Field> =
        match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named.named.iter().collect(),
                Fields::Unit => Vec::new(),
                Fields::Unnamed(unnamed) => return Err(syn::Error::new_spanned(
                    unnamed,
                    "derive(Command) needs named fields: each field is an option, named after it",
                )),
            },
            _ => {
                return Err(syn::Error::new_spanned(
                    &input.ident,
                    "derive(Command) needs a struct with named fields; \
                 for an enum of choices use derive(CommandChoice)",
                ))
            }
        };
    let mut errors = Errors::default();
    if !input.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &input.generics,
            "derive(Command) does not support generic structs",
        ));
    }
    let attrs = command_attrs(&input.attrs, form, &mut errors);
    let ident = &input.ident;
    let (name, name_span) = match (&attrs.name, form) {
        (Some(lit), _) => (lit.value(), lit.span()),
        (None, Form::Struct) => (kebab_case(&ident.unraw().to_string()), ident.span()),
        (None, Form::Function) => (ident.unraw().to_string(), ident.span()),
    };
    if !is_valid_name(&name) {
        let hint = if attrs.name.is_some() {
            ""
        } else {
            "; set one with #[command(name = \"...\")]"
        };
        errors.at(name_span, name_rule_message("command", &name, hint));
    }
    let (description, help_text) = command_texts(&input.attrs, &attrs, ident.span(), &mut errors);
    let specs: Vec<OptionSpec<'_>> = fields
        .iter()
        .filter_map(|f| option_spec(f, form, &mut errors))
        .collect();
    check_options(&specs, &mut errors);
    errors.finish()?;

    let options = specs.iter().map(declare_option);
    let names = specs.iter().map(|s| &s.name);
    let reads = specs.iter().map(read_field);
    let writes = specs.iter().map(write_field);
    // Left to the trait's default (`None`) when there is none.
    let help_text = help_text.map(|text| {
        quote! {
            fn help_text() -> ::core::option::Option<::std::string::String> {
                ::core::option::Option::Some(::std::string::String::from(#text))
            }
        }
    });
    let settings = declared_settings(&attrs);
    let tokens = quote! {
        #[automatically_derived]
        impl ::botlane::__private::Command for #ident {
            fn declaration() -> ::botlane::__private::CommandDeclaration {
                let mut declaration = ::botlane::__private::CommandDeclaration::new(#name, #description);
                #( declaration.options.push(#options); )*
                declaration
            }

            #help_text

            #settings

            fn from_args(
                args: &::botlane::__private::CommandArgs,
            ) -> ::core::result::Result<Self, ::botlane::__private::ArgumentError> {
                ::botlane::__private::check_arg_names(args, &[#(#names),*])?;
                ::core::result::Result::Ok(Self { #(#reads),* })
            }

            fn to_args(&self) -> ::botlane::__private::CommandArgs {
                #[allow(unused_mut)]
                let mut args = ::botlane::__private::CommandArgs::new();
                #( #writes; )*
                args
            }
        }
    };
    Ok(Expanded {
        tokens,
        checks: attrs.checks,
    })
}

fn declare_option(spec: &OptionSpec<'_>) -> TokenStream {
    let OptionSpec {
        value_ty,
        name,
        description,
        ..
    } = spec;
    let required = !spec.optional;
    // Spanned on the type so a type without CommandOptionValue is reported there.
    let kind = match spec.kind_attr {
        Some(kind) => kind.tokens(),
        None => {
            quote_spanned!(value_ty.span()=> <#value_ty as ::botlane::__private::CommandOptionValue>::KIND)
        }
    };
    let choices = match &spec.choices {
        Some(lits) => quote! {
            ::core::option::Option::Some(::std::vec![#(::std::string::String::from(#lits)),*])
        },
        None => {
            quote_spanned!(value_ty.span()=> <#value_ty as ::botlane::__private::CommandOptionValue>::choices())
        }
    };
    let bounds = spec.bounds.tokens();
    quote! {{
        let mut option = ::botlane::__private::CommandOption::new(#name, #description, #kind)
            .required(#required);
        option.choices = #choices;
        #bounds
        option
    }}
}

fn write_field(spec: &OptionSpec<'_>) -> TokenStream {
    let OptionSpec {
        ident,
        value_ty,
        name,
        ..
    } = spec;
    let value = if spec.optional {
        quote!(self.#ident.as_ref())
    } else {
        quote!(::core::option::Option::Some(&self.#ident))
    };
    quote_spanned!(value_ty.span()=> ::botlane::__private::put_arg::<#value_ty>(&mut args, #name, #value))
}

fn read_field(spec: &OptionSpec<'_>) -> TokenStream {
    let OptionSpec {
        ident,
        value_ty,
        name,
        ..
    } = spec;
    let read = if spec.optional {
        quote_spanned!(value_ty.span()=> ::botlane::__private::optional_arg::<#value_ty>)
    } else {
        quote_spanned!(value_ty.span()=> ::botlane::__private::required_arg::<#value_ty>)
    };
    quote!(#ident: #read(args, #name)?)
}
