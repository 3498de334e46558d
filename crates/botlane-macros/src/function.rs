//! `#[command]` on an `async fn`: its parameters after the context become
//! the fields of a struct, which the `Command` derive's expander declares
//! and converts; the function becomes one that returns the command with
//! its handler, which calls the original body with the fields.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, DeriveInput, FnArg, ItemFn, Pat, ReturnType};

use crate::attrs::Form;
use crate::command::expand;
use crate::rules::Errors;

/// The parameter attributes the function form reads: the doc comment (the
/// option's description, as on a field) and `#[option(...)]`, the derive's
/// own. The function left behind takes the parameters without them, so a
/// doc comment on a parameter never reaches rustc, which refuses one there.
fn field_attrs<'a>(attrs: &'a [Attribute], errors: &mut Errors) -> Vec<&'a Attribute> {
    let mut out = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") || path.is_ident("option") {
            out.push(attr);
        } else if path.is_ident("description") {
            errors.at(
                attr.span(),
                "write the description as a doc comment on the parameter (`/// ...`), \
                 as on a struct field; remove the attribute",
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
                "unknown parameter attribute: expected a doc comment (the description) or \
                 #[option(...)]",
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
        fields.push(quote!(#(#attrs)* #ident: #ty));
        idents.push(ident.clone());
        tys.push(ty.clone());
        let mutability = &pat.mutability;
        params.push(quote!(#mutability #ident: #ty));
    }
    let name = &sig.ident;
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
    // The derive's input: the parameters as fields, spanned as written, so
    // every declaration error points at the parameter at fault.
    let args: DeriveInput = syn::parse2(quote! {
        #(#docs)*
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
