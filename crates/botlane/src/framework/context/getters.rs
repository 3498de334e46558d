//! Reading a context's arguments by type, leniently: the `get_*` getters.

use super::CommandContext;
use crate::commands::coerce::{parse_boolean, parse_integer, parse_number};
use crate::commands::limits::MAX_SAFE_INTEGER;
use crate::commands::types::{format_number, CommandArgValue};

impl<D> CommandContext<D> {
    /// The raw value of option `name`, `None` when unfilled.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandArgValue, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("label".into(), "fire".into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "roll".into(), args, source: CommandSource::Structured },
    /// #     Message::new("m1", "c1", "u1", "/roll 2 fire"),
    /// # );
    /// assert_eq!(ctx.get("label"), Some(&CommandArgValue::from("fire")));
    /// assert_eq!(ctx.get("sides"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<&CommandArgValue> {
        self.invocation().args.get(name)
    }

    /// Option `name` as text: any present value, stringified (integers in
    /// decimal, numbers in their shortest round-trip form, booleans as
    /// `true`/`false`); `None` when unfilled.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("ratio".into(), 0.5.into());
    /// # args.insert("loud".into(), true.into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "mix".into(), args, source: CommandSource::Text },
    /// #     Message::new("m1", "c1", "u1", "/mix 0.5 true"),
    /// # );
    /// assert_eq!(ctx.get_string("ratio").as_deref(), Some("0.5"));
    /// assert_eq!(ctx.get_string("loud").as_deref(), Some("true"));
    /// assert_eq!(ctx.get_string("missing"), None);
    /// ```
    pub fn get_string(&self, name: &str) -> Option<String> {
        self.get(name).map(ToString::to_string)
    }

    /// Option `name` as an integer.
    ///
    /// An integer passes. A number passes when it is integral and within
    /// ±(2^53 − 1), the range a JavaScript peer holds exactly. A string
    /// passes when it reads as an integer by the text lane's rule
    /// (`^[+-]?[0-9]+$` within the same range). `None` when unfilled, for a
    /// boolean, and for anything else.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("count".into(), 6.0.into());
    /// # args.insert("ratio".into(), 0.5.into());
    /// # args.insert("text".into(), "-12".into());
    /// # args.insert("loud".into(), true.into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "mix".into(), args, source: CommandSource::Structured },
    /// #     Message::new("m1", "c1", "u1", ""),
    /// # );
    /// assert_eq!(ctx.get_integer("count"), Some(6));
    /// assert_eq!(ctx.get_integer("text"), Some(-12));
    /// assert_eq!(ctx.get_integer("ratio"), None);
    /// assert_eq!(ctx.get_integer("loud"), None);
    /// ```
    pub fn get_integer(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            CommandArgValue::Integer(i) => Some(*i),
            CommandArgValue::Number(n) => number_to_integer(*n),
            CommandArgValue::String(s) => parse_integer(s),
            CommandArgValue::Boolean(_) => None,
        }
    }

    /// Option `name` as a finite number.
    ///
    /// An integer passes as the nearest `f64`; a finite number passes; a
    /// string passes when it reads as a finite decimal number by the text
    /// lane's rule. `None` when unfilled, for a boolean, for a non-finite
    /// number, and for anything else.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("count".into(), 2_i64.into());
    /// # args.insert("text".into(), "2.5e1".into());
    /// # args.insert("nan".into(), f64::NAN.into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "mix".into(), args, source: CommandSource::Structured },
    /// #     Message::new("m1", "c1", "u1", ""),
    /// # );
    /// assert_eq!(ctx.get_number("count"), Some(2.0));
    /// assert_eq!(ctx.get_number("text"), Some(25.0));
    /// assert_eq!(ctx.get_number("nan"), None);
    /// ```
    pub fn get_number(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            // Lossy above 2^53, as the number a JavaScript peer would hold.
            #[allow(clippy::cast_precision_loss)]
            CommandArgValue::Integer(i) => Some(*i as f64),
            CommandArgValue::Number(n) => n.is_finite().then_some(*n),
            CommandArgValue::String(s) => parse_number(s),
            CommandArgValue::Boolean(_) => None,
        }
    }

    /// Option `name` as a boolean.
    ///
    /// A boolean passes through. Any other value is read through its text
    /// (as [`get_string`](Self::get_string) gives it): `true`, `yes`, `1`
    /// give true and `false`, `no`, `0` give false, in any ASCII case; so the
    /// integer `1` and the string `"YES"` are true. Anything else, and an
    /// unfilled option, gives `None`.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let mut args = CommandArgs::new();
    /// # args.insert("a".into(), "YES".into());
    /// # args.insert("b".into(), 0_i64.into());
    /// # args.insert("c".into(), "maybe".into());
    /// # let ctx = CommandContext::for_test(
    /// #     CommandInvocation { name: "mix".into(), args, source: CommandSource::Text },
    /// #     Message::new("m1", "c1", "u1", ""),
    /// # );
    /// assert_eq!(ctx.get_boolean("a"), Some(true));
    /// assert_eq!(ctx.get_boolean("b"), Some(false));
    /// assert_eq!(ctx.get_boolean("c"), None);
    /// ```
    pub fn get_boolean(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            CommandArgValue::Boolean(b) => Some(*b),
            CommandArgValue::String(s) => parse_boolean(s),
            CommandArgValue::Integer(i) => match i {
                1 => Some(true),
                0 => Some(false),
                _ => None,
            },
            CommandArgValue::Number(n) => parse_boolean(&format_number(*n)),
        }
    }
}

/// An integral `n` within ±`MAX_SAFE_INTEGER` as an `i64`.
fn number_to_integer(n: f64) -> Option<i64> {
    // The bound is below 2^53, so it and every integral double within it
    // convert exactly; NaN and infinities fail the comparison or `fract`.
    #[allow(clippy::cast_precision_loss)]
    let bound = MAX_SAFE_INTEGER as f64;
    #[allow(clippy::cast_possible_truncation)]
    (n.fract() == 0.0 && n.abs() <= bound).then_some(n as i64)
}
