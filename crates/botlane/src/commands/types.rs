//! The data types of the command area: declarations, option types, argument
//! values, invocations and the structured sidecar payload.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::option::CommandOption;

/// A slash command as a bot declares it.
///
/// It (de)serializes from the spec's JSON shape:
///
/// ```
/// use botlane::{CommandDeclaration, CommandOptionType};
///
/// let decl: CommandDeclaration = serde_json::from_str(r#"{
///     "name": "roll",
///     "description": "Roll some dice",
///     "options": [
///         {"name": "count", "description": "How many", "type": "integer", "required": true},
///         {"name": "sides", "description": "Sides per die", "type": "integer", "choices": ["6", "20"]}
///     ]
/// }"#)?;
/// assert_eq!(decl.options[0].kind, CommandOptionType::Integer);
/// assert!(!decl.options[1].required);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandDeclaration {
    /// The command name; matches `^[a-z0-9_-]{1,32}$`.
    pub name: String,
    /// 1 to [`MAX_COMMAND_DESC`](crate::MAX_COMMAND_DESC) characters, shown in plaintext to every member.
    pub description: String,
    /// The options in declared order, which is the positional text grammar.
    #[serde(default)]
    pub options: Vec<CommandOption>,
}

impl CommandDeclaration {
    /// A declaration with no options.
    ///
    /// ```
    /// let ping = botlane::CommandDeclaration::new("ping", "Check that the bot is alive");
    /// assert!(ping.options.is_empty());
    /// ```
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            options: Vec::new(),
        }
    }

    /// Appends an option (builder style).
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandOption, CommandOptionType};
    ///
    /// let roll = CommandDeclaration::new("roll", "Roll dice")
    ///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
    /// assert_eq!(roll.options.len(), 1);
    /// ```
    #[must_use]
    pub fn option(mut self, option: CommandOption) -> Self {
        self.options.push(option);
        self
    }

    /// The option declared under `name` (exact match).
    pub fn find_option(&self, name: &str) -> Option<&CommandOption> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// One argument value: a string (also for user, channel and role ids), an
/// integer, a number or a boolean.
///
/// In JSON it is the bare value. A JSON number without fraction or exponent
/// that fits an `i64` is an [`Integer`](Self::Integer); any other JSON number
/// is a [`Number`](Self::Number).
///
/// ```
/// use botlane::CommandArgValue;
/// let v: CommandArgValue = serde_json::from_str("2")?;
/// assert_eq!(v, CommandArgValue::Integer(2));
/// assert_eq!(serde_json::to_string(&CommandArgValue::from("hi"))?, r#""hi""#);
/// assert_eq!(CommandArgValue::Number(0.5).to_string(), "0.5");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum CommandArgValue {
    /// Text, or an opaque id for `user`, `channel` and `role` options.
    String(String),
    /// A whole number.
    Integer(i64),
    /// A finite floating-point number.
    Number(f64),
    /// A boolean.
    Boolean(bool),
}

impl fmt::Display for CommandArgValue {
    /// Strings as they are, integers in decimal, numbers in the shortest text
    /// that parses back to the same float, booleans as `true`/`false`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => f.write_str(s),
            Self::Integer(i) => write!(f, "{i}"),
            Self::Number(n) => f.write_str(&format_number(*n)),
            Self::Boolean(b) => write!(f, "{b}"),
        }
    }
}

// One writing of a number for botlane and botlane-macros (text-grammar §5).
pub(crate) use botlane_proto::numbers::format_number;

impl From<&str> for CommandArgValue {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}
impl From<String> for CommandArgValue {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}
impl From<i64> for CommandArgValue {
    fn from(i: i64) -> Self {
        Self::Integer(i)
    }
}
impl From<f64> for CommandArgValue {
    fn from(n: f64) -> Self {
        Self::Number(n)
    }
}
impl From<bool> for CommandArgValue {
    fn from(b: bool) -> Self {
        Self::Boolean(b)
    }
}

impl Serialize for CommandArgValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(v) => s.serialize_str(v),
            Self::Integer(v) => s.serialize_i64(*v),
            Self::Number(v) => s.serialize_f64(*v),
            Self::Boolean(v) => s.serialize_bool(*v),
        }
    }
}

impl<'de> Deserialize<'de> for CommandArgValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ArgVisitor;
        impl Visitor<'_> for ArgVisitor {
            type Value = CommandArgValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, a finite number or a boolean")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(CommandArgValue::Boolean(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(CommandArgValue::Integer(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(match i64::try_from(v) {
                    Ok(i) => CommandArgValue::Integer(i),
                    // Lossy on purpose: a JavaScript peer holds this value as a double too.
                    #[allow(clippy::cast_precision_loss)]
                    Err(_) => CommandArgValue::Number(v as f64),
                })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v.is_finite() {
                    Ok(CommandArgValue::Number(v))
                } else {
                    Err(E::custom("number is not finite"))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CommandArgValue::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(CommandArgValue::String(v))
            }
        }
        d.deserialize_any(ArgVisitor)
    }
}

/// The arguments of one invocation, by option name. An unfilled optional
/// option is absent, never null.
pub type CommandArgs = BTreeMap<String, CommandArgValue>;

/// The lane an invocation arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CommandSource {
    /// The encrypted sidecar addressed to one bot.
    Structured,
    /// A readable text line such as `/roll 2 sides:6`.
    Text,
}

/// A recognised invocation of a registered command.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandInvocation {
    /// The lower-case command name.
    pub name: String,
    /// The arguments, coerced to the declared types.
    pub args: CommandArgs,
    /// The lane it arrived on.
    pub source: CommandSource,
}

/// The structured sidecar payload: which bot, which command, which arguments.
///
/// Its JSON form (see [`encode_command_data`](crate::encode_command_data)) has
/// the fields `v`, `bot`, `name` and `args`.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandData {
    /// The id of the target bot. Compared in canonical form (undashed
    /// lower-case hex), never by raw string equality.
    pub bot_id: String,
    /// The lower-case command name.
    pub name: String,
    /// The arguments; unfilled optional options are absent.
    pub args: CommandArgs,
}

/// The canonical form of a bot id: dashes removed, ASCII lower-cased.
///
/// ```
/// assert_eq!(
///     botlane::framework::canonical_bot_id("3F2504E0-4F89-11D3-9A0C-0305E82C3301"),
///     "3f2504e04f8911d39a0c0305e82c3301"
/// );
/// ```
pub fn canonical_bot_id(id: &str) -> String {
    // Dispatch calls this twice per message: one allocation of the final
    // size and slice copies between the dashes, instead of growing a string
    // char by char (15% of the bot's dispatch instructions before).
    let mut canonical = String::with_capacity(id.len());
    for part in id.split('-') {
        canonical.push_str(part);
    }
    canonical.make_ascii_lowercase();
    canonical
}

/// Whether two ids name the same bot: equal once both are canonical
/// ([`canonical_bot_id`]), compared byte by byte without building either.
/// Equivalent because a dash byte never occurs inside a multi-byte UTF-8
/// sequence and ASCII case folding leaves every other byte alone. Dispatch
/// asks this for every message.
pub(crate) fn same_bot_id(a: &str, b: &str) -> bool {
    fn canonical(id: &str) -> impl Iterator<Item = u8> + '_ {
        id.bytes()
            .filter(|&byte| byte != b'-')
            .map(|byte| byte.to_ascii_lowercase())
    }
    canonical(a).eq(canonical(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::option_type::CommandOptionType;

    #[test]
    fn canonical_bot_ids_lose_dashes_and_ascii_case_only() {
        for (id, canonical) in [
            (
                "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
                "3f2504e04f8911d39a0c0305e82c3301",
            ),
            ("--A--b-", "ab"),
            ("", ""),
            ("-", ""),
            // Only ASCII letters change case.
            ("ÉCOLE-Bot-Ǆ", "ÉcolebotǄ"),
        ] {
            assert_eq!(canonical_bot_id(id), canonical, "{id}");
        }
    }

    #[test]
    fn same_bot_id_agrees_with_comparing_canonical_ids() {
        let ids = [
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
            "3f2504e04f8911d39a0c0305e82c3301",
            "3f2504e0-4f89-11d3-9a0c-0305e82c3302",
            "--A--b-",
            "ab",
            "AB-",
            "a",
            "",
            "-",
            "ÉCOLE-Bot-Ǆ",
            "École-bot-Ǆ",
            "ÉcolebotǄ",
            "écolebotǆ",
        ];
        for a in ids {
            for b in ids {
                assert_eq!(
                    same_bot_id(a, b),
                    canonical_bot_id(a) == canonical_bot_id(b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    /// `code` and the table are one macro row, so they agree by
    /// construction; what a row can get wrong is a code or a name another
    /// row already has (the compiler accepts both; a menu would then
    /// publish one type as the other).
    #[test]
    fn declaration_round_trips_through_json() {
        let decl = CommandDeclaration::new("roll", "Roll")
            .option(CommandOption::new("count", "n", CommandOptionType::Integer).required(true))
            .option(CommandOption::new("sides", "s", CommandOptionType::Integer).choices(["6"]));
        let json = serde_json::to_string(&decl).unwrap();
        assert_eq!(
            json,
            r#"{"name":"roll","description":"Roll","options":[{"name":"count","description":"n","type":"integer","required":true},{"name":"sides","description":"s","type":"integer","required":false,"choices":["6"]}]}"#
        );
        assert_eq!(
            serde_json::from_str::<CommandDeclaration>(&json).unwrap(),
            decl
        );
    }

    #[test]
    fn unknown_declaration_fields_are_rejected() {
        let err = serde_json::from_str::<CommandDeclaration>(
            r#"{"name":"a","description":"b","optoins":[]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("optoins"), "{err}");
    }

    #[test]
    fn arg_values_from_json() {
        let v: CommandArgValue = serde_json::from_str("2.0").unwrap();
        assert_eq!(v, CommandArgValue::Number(2.0));
        let v: CommandArgValue = serde_json::from_str("-7").unwrap();
        assert_eq!(v, CommandArgValue::Integer(-7));
        let v: CommandArgValue = serde_json::from_str("18446744073709551615").unwrap();
        assert!(matches!(v, CommandArgValue::Number(_)));
        assert!(serde_json::from_str::<CommandArgValue>("null").is_err());
        assert!(serde_json::from_str::<CommandArgValue>("{}").is_err());
    }
}
