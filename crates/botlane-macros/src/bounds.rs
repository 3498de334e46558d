//! `#[option(min = .., max = .., min_length = .., max_length = ..)]`: the
//! local bounds of an option, read from literals and checked by the rules
//! of botlane's `validate_declaration`.

use proc_macro2::{Literal, Span, TokenStream};
use quote::quote;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitInt, LitStr, UnOp};

use crate::rules::{format_number, quoted, Errors, Kind, MAX_OPTION_LENGTH, MAX_SAFE_INTEGER};

/// A numeric bound as written.
#[derive(Clone)]
pub(crate) struct Number {
    pub(crate) value: f64,
    pub(crate) span: Span,
    /// The literal as written, for messages about a value with no shortest form.
    pub(crate) written: String,
}

/// A numeric bound in a message: as botlane writes numbers, or as written
/// when it is not finite (`1e999`).
fn shown(bound: &Number) -> String {
    if bound.value.is_finite() {
        format_number(bound.value)
    } else {
        bound.written.clone()
    }
}

/// A length bound as written.
#[derive(Clone, Copy)]
pub(crate) struct Length {
    pub(crate) value: usize,
    pub(crate) span: Span,
}

/// The four bounds of one option, each optional.
#[derive(Default)]
pub(crate) struct Bounds {
    pub(crate) min: Option<Number>,
    pub(crate) max: Option<Number>,
    pub(crate) min_length: Option<Length>,
    pub(crate) max_length: Option<Length>,
}

/// Reads a numeric literal, optionally negated: `1`, `-5`, `0.5`, `1e3`.
pub(crate) fn parse_number(input: ParseStream<'_>) -> syn::Result<Number> {
    let expr: Expr = input.parse()?;
    let span = expr.span();
    let (negative, lit) = match &expr {
        Expr::Lit(ExprLit { lit, .. }) => (false, lit),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit, .. }) => (true, lit),
            _ => return Err(syn::Error::new(span, NUMBER_EXPECTED)),
        },
        _ => return Err(syn::Error::new(span, NUMBER_EXPECTED)),
    };
    let magnitude = match lit {
        Lit::Int(int) => int.base10_digits().parse::<f64>(),
        Lit::Float(float) => float.base10_digits().parse::<f64>(),
        _ => return Err(syn::Error::new(span, NUMBER_EXPECTED)),
    }
    .map_err(|_| syn::Error::new(span, NUMBER_EXPECTED))?;
    let written = quote!(#expr).to_string().replace(' ', "");
    Ok(Number {
        value: if negative { -magnitude } else { magnitude },
        span,
        written,
    })
}

const NUMBER_EXPECTED: &str = "expected a number literal such as 1, -5 or 0.5";

/// Reads a length literal: a non-negative integer.
pub(crate) fn parse_length(input: ParseStream<'_>) -> syn::Result<Length> {
    let lit: LitInt = input.parse()?;
    let value = lit.base10_parse::<usize>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            "expected a length: a whole number of characters",
        )
    })?;
    Ok(Length {
        value,
        span: lit.span(),
    })
}

impl Bounds {
    fn is_empty(&self) -> bool {
        self.min.is_none()
            && self.max.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
    }

    /// Reports every broken bound rule for an option of `kind` (`None` when
    /// the macro cannot tell the type) with these `choices`.
    pub(crate) fn check(
        &self,
        kind: Option<Kind>,
        choices: Option<&[LitStr]>,
        errors: &mut Errors,
    ) {
        if self.is_empty() {
            return;
        }
        let Some(kind) = kind else {
            let span = [
                self.min.as_ref().map(|b| b.span),
                self.max.as_ref().map(|b| b.span),
            ]
            .into_iter()
            .chain([
                self.min_length.map(|b| b.span),
                self.max_length.map(|b| b.span),
            ])
            .flatten()
            .next()
            .unwrap_or_else(Span::call_site);
            errors.at(
                span,
                "bounds need a field whose option type is known here: an integer type or f64 \
                 for min and max, String for min_length and max_length",
            );
            return;
        };
        let numeric = matches!(kind, Kind::Integer | Kind::Number);
        let textual = kind == Kind::String;
        for (name, bound) in [("min", &self.min), ("max", &self.max)] {
            let Some(bound) = bound else { continue };
            if !numeric {
                errors.at(
                    bound.span,
                    format!(
                        "{name} applies only to an integer or f64 field, not to {} option",
                        kind.with_article()
                    ),
                );
            } else if !fits(kind, bound.value) {
                errors.at(
                    bound.span,
                    format!("{name} {} is not {}", shown(bound), bound_phrase(kind)),
                );
            }
        }
        if let (Some(min), Some(max)) = (&self.min, &self.max)
            && numeric
            && min.value > max.value
        {
            errors.at(
                min.span,
                format!("min {} is greater than max {}", shown(min), shown(max)),
            );
        }
        for (name, bound) in [
            ("min_length", self.min_length),
            ("max_length", self.max_length),
        ] {
            let Some(bound) = bound else { continue };
            if !textual {
                errors.at(
                    bound.span,
                    format!(
                        "{name} applies only to a string option, not to {} option",
                        kind.with_article()
                    ),
                );
            } else if bound.value > MAX_OPTION_LENGTH {
                errors.at(
                    bound.span,
                    format!(
                        "{name} {} is more than MAX_OPTION_LENGTH ({MAX_OPTION_LENGTH})",
                        bound.value
                    ),
                );
            }
        }
        if let (Some(min), Some(max)) = (self.min_length, self.max_length)
            && textual
            && min.value > max.value
        {
            errors.at(
                min.span,
                format!(
                    "min_length {} is greater than max_length {}",
                    min.value, max.value
                ),
            );
        }
        if !(numeric || textual) {
            return;
        }
        for lit in choices.unwrap_or_default() {
            let choice = lit.value();
            if !kind.accepts_choice(&choice) {
                continue;
            }
            if let Some(broken) = self.broken_by(kind, &choice) {
                errors.at(
                    lit.span(),
                    format!(
                        "choice {} is outside the option's bounds: it {broken}",
                        quoted(&choice)
                    ),
                );
            }
        }
    }

    /// The bound a choice (valid for `kind`) breaks, in the words of
    /// botlane's `ArgumentRule`.
    fn broken_by(&self, kind: Kind, choice: &str) -> Option<String> {
        if kind == Kind::String {
            let chars = choice.chars().count();
            if let Some(min) = self.min_length.filter(|min| chars < min.value) {
                return Some(format!(
                    "must be at least {} {}",
                    min.value,
                    characters(min.value)
                ));
            }
            if let Some(max) = self.max_length.filter(|max| chars > max.value) {
                return Some(format!(
                    "must be at most {} {}",
                    max.value,
                    characters(max.value)
                ));
            }
            return None;
        }
        let value = kind.choice_value(choice)?;
        if let Some(min) = self.min.as_ref().filter(|min| value < min.value) {
            return Some(format!("must be at least {}", shown(min)));
        }
        if let Some(max) = self.max.as_ref().filter(|max| value > max.value) {
            return Some(format!("must be at most {}", shown(max)));
        }
        None
    }

    /// Statements setting the bounds on a `botlane::CommandOption` named `option`.
    pub(crate) fn tokens(&self) -> TokenStream {
        let number = |bound: &Option<Number>| match bound {
            Some(b) => {
                let lit = Literal::f64_suffixed(b.value);
                quote!(::core::option::Option::Some(#lit))
            }
            None => quote!(::core::option::Option::None),
        };
        let length = |bound: Option<Length>| match bound {
            Some(b) => {
                let lit = Literal::usize_suffixed(b.value);
                quote!(::core::option::Option::Some(#lit))
            }
            None => quote!(::core::option::Option::None),
        };
        if self.is_empty() {
            return TokenStream::new();
        }
        let (min, max) = (number(&self.min), number(&self.max));
        let (min_length, max_length) = (length(self.min_length), length(self.max_length));
        quote! {
            option.min_value = #min;
            option.max_value = #max;
            option.min_length = #min_length;
            option.max_length = #max_length;
        }
    }
}

fn characters(n: usize) -> &'static str {
    if n == 1 {
        "character"
    } else {
        "characters"
    }
}

/// Whether `value` is a bound an option of numeric `kind` can have.
fn fits(kind: Kind, value: f64) -> bool {
    // Exact: the limit is below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let limit = MAX_SAFE_INTEGER as f64;
    match kind {
        Kind::Integer => value.fract() == 0.0 && value.abs() <= limit,
        _ => value.is_finite(),
    }
}

fn bound_phrase(kind: Kind) -> &'static str {
    match kind {
        Kind::Integer => "a whole number within ±9007199254740991",
        _ => "a finite number",
    }
}
