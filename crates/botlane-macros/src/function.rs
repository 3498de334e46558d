//! `#[command]` on an `async fn`: its parameters after the context become
//! the fields of a struct, which the `Command` derive's expander declares
//! and converts; the function becomes one that returns the command with
//! its handler, which calls the original body with the fields.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, DeriveInput, FnArg, ItemFn, Pat, ReturnType};

use crate::attrs::Form;
use crate::command::expand;
use crate::doc::fn_doc;
use crate::rules::Errors;

/// The parameter attributes the function form reads: `#[option(...)]`,
/// the derive's own. A parameter's description is written in the
/// function's doc comment (`doc.rs`, `fn_doc`).
fn field_attrs<'a>(attrs: &'a [Attribute], errors: &mut Errors) -> Vec<&'a Attribute> {
    let mut out = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("option") {
            out.push(attr);
        } else if path.is_ident("doc") {
            errors.at(
                attr.span(),
                "rustc refuses a doc comment on a parameter: describe the option in the \
                 function's doc comment, under `# Options`: ``* `name`: description``",
            );
        } else if path.is_ident("description") {
            errors.at(
                attr.span(),
                "describe the option in the function's doc comment, under `# Options`: \
                 ``* `name`: description``, or with #[option(description = \"...\")]; \
                 remove this attribute",
            );
        } else if path.is_ident("rest") {
            errors.at(
                attr.span(),
                "#[rest] is not needed: the last String option takes the rest of the line \
                 (text grammar, \"the last string option\"); remove the attribute",
            );
        } else {
            errors.at(
                attr.span(),
                "unknown parameter attribute: expected #[option(...)]",
            );
        }
    }
    out
}

pub(crate) fn command(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let func: ItemFn = syn::parse2(item)?;
    let mut errors = Errors::default();
    let sig = &func.sig;
    if sig.asyncness.is_none() {
        errors.at(sig.fn_token.span(), "#[command] needs an `async fn`");
    }
    if !sig.generics.params.is_empty() {
        errors.at(
            sig.generics.span(),
            "#[command] does not support generic functions",
        );
    }
    let mut inputs = sig.inputs.iter();
    let Some(FnArg::Typed(first)) = inputs.next() else {
        return Err(syn::Error::new(
            sig.paren_token.span.join(),
            "a #[command] fn takes the context first: `ctx: CommandContext<D>`",
        ));
    };
    let ctx_ty = &first.ty;
    let doc = fn_doc(&func.attrs, &mut errors);
    let mut fields = Vec::new();
    let mut idents = Vec::new();
    let mut tys = Vec::new();
    let mut params = Vec::new();
    for input in inputs {
        let FnArg::Typed(param) = input else {
            errors.at(input.span(), "a #[command] fn takes no `self`");
            continue;
        };
        let Pat::Ident(pat) = &*param.pat else {
            errors.at(
                param.pat.span(),
                "an option parameter is a plain name: its name is the option's",
            );
            continue;
        };
        let ident = &pat.ident;
        let ty = &param.ty;
        let attrs = field_attrs(&param.attrs, &mut errors);
        let name = ident.unraw().to_string();
        let described = doc.options.iter().find(|o| o.name == name);
        let described = described.map(|o| {
            let text = &o.text;
            quote_spanned!(o.span=> #[doc = #text])
        });
        fields.push(quote!(#described #(#attrs)* #ident: #ty));
        idents.push(ident.clone());
        tys.push(ty.clone());
        let mutability = &pat.mutability;
        params.push(quote!(#mutability #ident: #ty));
    }
    let name = &sig.ident;
    for option in &doc.options {
        if !idents.iter().any(|i| i.unraw() == option.name) {
            errors.at(
                option.span,
                format!(
                    "`# Options` describes `{}`, which is not a parameter of `{name}`",
                    option.name
                ),
            );
        }
    }
    let vis = &func.vis;
    let docs: Vec<&Attribute> = func
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    // The function's other attributes (`#[allow]`, `#[cfg]`…) go on both
    // the function left behind and the body's own.
    let others: Vec<&Attribute> = func
        .attrs
        .iter()
        .filter(|a| !a.path().is_ident("doc"))
        .collect();
    let command_doc = doc
        .command
        .iter()
        .map(|(text, span)| quote_spanned!(*span=> #[doc = #text]));
    // The derive's input: the parameters as fields, spanned as written, so
    // every declaration error points at the parameter at fault.
    let args: DeriveInput = syn::parse2(quote! {
        #(#command_doc)*
        #[command(#attr)]
        struct #name { #(#fields),* }
    })?;
    // The function's own errors and the declaration's, in one build.
    let expanded = match (errors.finish(), expand(&args, Form::Function)) {
        (Ok(()), Ok(expanded)) => expanded,
        (Err(mut mine), Err(declaration)) => {
            mine.combine(declaration);
            return Err(mine);
        }
        (Err(error), Ok(_)) | (Ok(()), Err(error)) => return Err(error),
    };
    let impl_command = expanded.tokens;
    let checks = expanded.checks;
    let output = match &sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => quote!(#ty),
    };
    let body = &func.block;
    let first_pat = &first.pat;
    let data =
        quote_spanned!(ctx_ty.span()=> <#ctx_ty as ::botlane::__private::ContextParam>::Data);
    let run = format_ident!("__{}_run", name);
    Ok(quote! {
        #(#docs)*
        #(#others)*
        #vis fn #name() -> ::botlane::framework::FnCommand<#data> {
            #[allow(non_camel_case_types)]
            struct #name { #(#idents: #tys),* }
            #impl_command
            #(#others)*
            async fn #run(#first_pat: #ctx_ty, #(#params),*) -> #output #body
            ::botlane::__private::fn_command::<#name, #data>(
                ::std::vec![#(::botlane::__private::IntoCheck::into_check(#checks)),*],
                |ctx, args: #name| #run(ctx, #(args.#idents),*),
            )
        }
    })
}
