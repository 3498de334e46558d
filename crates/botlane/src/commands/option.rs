//! One option of a command declaration: the spec's fields, plus local bounds
//! that the service never sees.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use super::option_type::CommandOptionType;

/// One typed option of a [`CommandDeclaration`](crate::CommandDeclaration).
///
/// The first five fields are the spec's. The four bounds are local to
/// botlane: they are checked at register time (see
/// [`validate_declaration`](crate::validate_declaration)), enforced on every
/// invocation after the lane decision (see
/// [`CommandDeclaration::check_bounds`](crate::CommandDeclaration::check_bounds)),
/// shown in usage lines and help, and never published: the canonical menu and
/// its hash are the same with and without them.
///
/// Build one with [`new`](Self::new) and the builder methods; it also
/// (de)serializes from the spec's JSON shape, where the bounds are the
/// optional fields `min_value`, `max_value`, `min_length` and `max_length`:
///
/// ```
/// use botlane::{CommandOption, CommandOptionType};
///
/// let minutes = CommandOption::new("minutes", "When", CommandOptionType::Integer)
///     .required(true)
///     .min(1)
///     .max(3600);
/// let json = serde_json::to_string(&minutes)?;
/// assert_eq!(
///     json,
///     r#"{"name":"minutes","description":"When","type":"integer","required":true,"min_value":1.0,"max_value":3600.0}"#
/// );
/// assert_eq!(serde_json::from_str::<CommandOption>(&json)?, minutes);
///
/// // The spec's shape, without bounds, still parses.
/// let plain: CommandOption =
///     serde_json::from_str(r#"{"name":"note","description":"What","type":"string"}"#)?;
/// assert_eq!(plain.max_length, None);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Equality
///
/// `Eq` holds although the numeric bounds are `f64`: they compare by bit
/// pattern (as [`f64::total_cmp`] orders them), so equality is reflexive.
/// `-0.0` and `0.0` are thus different bounds; a NaN bound equals itself
/// (and is refused by [`validate_declaration`](crate::validate_declaration)).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandOption {
    /// Same rule as a command name; unique within the command.
    pub name: String,
    /// 1 to [`MAX_COMMAND_DESC`](crate::MAX_COMMAND_DESC) characters; plaintext.
    pub description: String,
    /// The value type (JSON field `type`).
    #[serde(rename = "type")]
    pub kind: CommandOptionType,
    /// Whether the option must be filled. In JSON it must be a real boolean when present.
    #[serde(default, deserialize_with = "strict_bool")]
    pub required: bool,
    /// The allowed values; each string is both label and value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    /// Local: the smallest value an `integer` or `number` option takes
    /// (inclusive). For an `integer` option it must be a whole number
    /// within ±(2^53 − 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_value: Option<f64>,
    /// Local: the largest value an `integer` or `number` option takes
    /// (inclusive); same rules as [`min_value`](Self::min_value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_value: Option<f64>,
    /// Local: the fewest characters (Unicode scalar values) a `string`
    /// option's value has, at most [`MAX_OPTION_LENGTH`](crate::MAX_OPTION_LENGTH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<usize>,
    /// Local: the most characters a `string` option's value has, at most
    /// [`MAX_OPTION_LENGTH`](crate::MAX_OPTION_LENGTH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<usize>,
}

impl CommandOption {
    /// An optional option with no choices and no bounds.
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("label", "What to call it", CommandOptionType::String);
    /// assert!(!o.required && o.choices.is_none() && o.min_length.is_none());
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        kind: CommandOptionType,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            kind,
            required: false,
            choices: None,
            min_value: None,
            max_value: None,
            min_length: None,
            max_length: None,
        }
    }

    /// Sets `required` (builder style).
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// assert!(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true).required);
    /// ```
    #[must_use]
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Sets the choice list (builder style).
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("sides", "Sides", CommandOptionType::Integer).choices(["6", "20"]);
    /// assert_eq!(o.choices.as_deref(), Some(&["6".to_string(), "20".to_string()][..]));
    /// ```
    #[must_use]
    pub fn choices<I, S>(mut self, choices: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.choices = Some(choices.into_iter().map(Into::into).collect());
        self
    }

    /// Sets [`min_value`](Self::min_value), the smallest value of an
    /// `integer` or `number` option (builder style). Integer literals work
    /// as they are (`.min(1)`); convert an `i64` variable with `as f64`.
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("ratio", "How much", CommandOptionType::Number).min(0).max(0.5);
    /// assert_eq!((o.min_value, o.max_value), (Some(0.0), Some(0.5)));
    /// ```
    #[must_use]
    pub fn min(mut self, min: impl Into<f64>) -> Self {
        self.min_value = Some(min.into());
        self
    }

    /// Sets [`max_value`](Self::max_value), the largest value of an
    /// `integer` or `number` option (builder style); see [`min`](Self::min).
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("minutes", "When", CommandOptionType::Integer).max(3600);
    /// assert_eq!(o.max_value, Some(3600.0));
    /// ```
    #[must_use]
    pub fn max(mut self, max: impl Into<f64>) -> Self {
        self.max_value = Some(max.into());
        self
    }

    /// Sets [`min_length`](Self::min_length), the fewest characters of a
    /// `string` option's value (builder style).
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("note", "What", CommandOptionType::String).min_length(3);
    /// assert_eq!(o.min_length, Some(3));
    /// ```
    #[must_use]
    pub fn min_length(mut self, min_length: usize) -> Self {
        self.min_length = Some(min_length);
        self
    }

    /// Sets [`max_length`](Self::max_length), the most characters of a
    /// `string` option's value (builder style).
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("note", "What", CommandOptionType::String).max_length(200);
    /// assert_eq!(o.max_length, Some(200));
    /// ```
    #[must_use]
    pub fn max_length(mut self, max_length: usize) -> Self {
        self.max_length = Some(max_length);
        self
    }

    /// Whether the option has any of the four local bounds.
    ///
    /// ```
    /// use botlane::{CommandOption, CommandOptionType};
    /// let o = CommandOption::new("note", "What", CommandOptionType::String);
    /// assert!(!o.has_bounds());
    /// assert!(o.max_length(9).has_bounds());
    /// ```
    pub fn has_bounds(&self) -> bool {
        self.min_value.is_some()
            || self.max_value.is_some()
            || self.min_length.is_some()
            || self.max_length.is_some()
    }
}

/// Field by field; the `f64` bounds by bit pattern, so that `Eq` is lawful.
impl PartialEq for CommandOption {
    fn eq(&self, other: &Self) -> bool {
        // Destructured so that a new field cannot be forgotten here.
        let Self {
            name,
            description,
            kind,
            required,
            choices,
            min_value,
            max_value,
            min_length,
            max_length,
        } = self;
        let same_bits =
            |a: &Option<f64>, b: &Option<f64>| a.map(f64::to_bits) == b.map(f64::to_bits);
        *name == other.name
            && *description == other.description
            && *kind == other.kind
            && *required == other.required
            && *choices == other.choices
            && same_bits(min_value, &other.min_value)
            && same_bits(max_value, &other.max_value)
            && *min_length == other.min_length
            && *max_length == other.max_length
    }
}

impl Eq for CommandOption {}

fn strict_bool<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    struct StrictBool;
    impl Visitor<'_> for StrictBool {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a real boolean (true or false) for `required`")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
            Ok(v)
        }
    }
    d.deserialize_any(StrictBool)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn attachment_is_rejected_by_name() {
        let err = serde_json::from_str::<CommandOption>(
            r#"{"name":"f","description":"d","type":"attachment"}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("\"attachment\" is unsupported"),
            "{err}"
        );
        let err = serde_json::from_str::<CommandOption>(
            r#"{"name":"f","description":"d","type":"file"}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("unknown option type \"file\""),
            "{err}"
        );
    }

    #[test]
    fn required_must_be_a_real_boolean() {
        for bad in [r#""yes""#, "1", "null", "[]"] {
            let json =
                format!(r#"{{"name":"f","description":"d","type":"string","required":{bad}}}"#);
            let err = serde_json::from_str::<CommandOption>(&json).unwrap_err();
            assert!(err.to_string().contains("a real boolean"), "{bad}: {err}");
        }
        let o: CommandOption = serde_json::from_str(
            r#"{"name":"f","description":"d","type":"string","required":true}"#,
        )
        .unwrap();
        assert!(o.required);
        let o: CommandOption =
            serde_json::from_str(r#"{"name":"f","description":"d","type":"string"}"#).unwrap();
        assert!(!o.required);
    }

    #[test]
    fn bounds_parse_from_their_json_fields() {
        let o: CommandOption = serde_json::from_str(
            r#"{"name":"n","description":"d","type":"integer","min_value":1,"max_value":3600}"#,
        )
        .unwrap();
        assert_eq!((o.min_value, o.max_value), (Some(1.0), Some(3600.0)));
        let o: CommandOption = serde_json::from_str(
            r#"{"name":"s","description":"d","type":"string","min_length":2,"max_length":9}"#,
        )
        .unwrap();
        assert_eq!((o.min_length, o.max_length), (Some(2), Some(9)));
        for bad in [
            r#""min_value":"1""#,
            r#""min_length":-1"#,
            r#""max_length":1.5"#,
            r#""minimum":1"#,
        ] {
            let json = format!(r#"{{"name":"n","description":"d","type":"integer",{bad}}}"#);
            assert!(
                serde_json::from_str::<CommandOption>(&json).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn equality_compares_bounds_by_bit_pattern() {
        let base = CommandOption::new("n", "d", CommandOptionType::Number);
        assert_eq!(base.clone().min(0.5), base.clone().min(0.5));
        assert_ne!(base.clone().min(0.0), base.clone().min(-0.0));
        assert_ne!(base.clone().min(1), base.clone());
        assert_ne!(base.clone().max(1), base.clone().min(1));
        let nan = base.clone().max(f64::NAN);
        assert_eq!(nan, nan.clone(), "reflexive even for NaN");
        assert_ne!(base.clone().min_length(1), base.clone().max_length(1));
    }
}
