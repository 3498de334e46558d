//! The structured sidecar codec: [`CommandData`] to and from its JSON
//! payload, and the [`OutgoingInvocation`] that carries it with its line.
//!
//! The payload is compact JSON with exactly four fields:
//!
//! ```text
//! {"v":1,"bot":"3f2504e04f8911d39a0c0305e82c3301","name":"roll","args":{"count":2}}
//! ```
//!
//! The decoding rules are in the docs of [`decode_command_data`].
//!
//! The decoded bot id is in canonical form ([`canonical_bot_id`]) and the
//! name is ASCII-lowercased, so callers compare both without normalising.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Serialize;

use super::limits::COMMAND_DATA_VERSION;
use super::text::error::FormatError;
use super::text::format::format_invocation_text;
use super::types::CommandDeclaration;
use super::types::{canonical_bot_id, CommandArgValue, CommandArgs, CommandData};

/// Something that can tell whether an invocation fits a set of declarations.
pub trait CommandLookup {
    /// True when `name` is registered, every arg key is a declared option,
    /// every value fits its type and choices, and every required option is present.
    fn accepts(&self, name: &str, args: &CommandArgs) -> bool;

    /// Coerces structured-lane `args` to the declared types; `None` when they
    /// do not fit. The default accepts the args unchanged when [`accepts`](Self::accepts) does.
    fn coerce(&self, name: &str, args: CommandArgs) -> Option<CommandArgs> {
        self.accepts(name, &args).then_some(args)
    }
}

/// The wire shape written by [`encode_command_data`]; field order is the
/// order on the wire.
#[derive(Serialize)]
struct WireOut<'a> {
    v: u32,
    bot: String,
    name: String,
    args: &'a CommandArgs,
}

/// The JSON payload of the structured sidecar for `data`.
///
/// The output is compact JSON `{"v":…,"bot":…,"name":…,"args":{…}}` with
/// `v` set to [`COMMAND_DATA_VERSION`](crate::COMMAND_DATA_VERSION), the bot
/// id in canonical form (dashes removed, ASCII lower-case), the name
/// ASCII-lowercased and the args in key order.
///
/// A [`CommandArgValue::Number`] must be finite. A non-finite one has no
/// JSON form; it is written as `null`, which [`decode_command_data`] refuses,
/// so such a payload is rejected as a whole by every receiver instead of
/// running the command with an argument silently dropped or changed. Check
/// `is_finite()` before building a `CommandData` from untrusted floats.
///
/// ```
/// use botlane::{encode_command_data, CommandArgs, CommandData};
///
/// let mut args = CommandArgs::new();
/// args.insert("count".into(), 2_i64.into());
/// args.insert("label".into(), "fire".into());
/// let data = CommandData {
///     bot_id: "3F2504E0-4F89-11D3-9A0C-0305E82C3301".into(),
///     name: "Roll".into(),
///     args,
/// };
/// assert_eq!(
///     encode_command_data(&data),
///     r#"{"v":1,"bot":"3f2504e04f8911d39a0c0305e82c3301","name":"roll","args":{"count":2,"label":"fire"}}"#
/// );
/// ```
pub fn encode_command_data(data: &CommandData) -> String {
    let wire = WireOut {
        v: COMMAND_DATA_VERSION,
        bot: canonical_bot_id(&data.bot_id),
        name: data.name.to_ascii_lowercase(),
        args: &data.args,
    };
    // Infallible: every key is a string and every value a string, integer,
    // float or boolean, which serde_json writes without error (a non-finite
    // float becomes `null`).
    serde_json::to_string(&wire).expect("string-keyed map of scalars always serializes")
}

/// The two plaintexts of an outgoing structured invocation, before the
/// channel's key seals them into a message (op 30): the readable `line`, the
/// message's content, and the `sidecar`, the JSON of its `command`.
///
/// The one way both ends of botlane invoke a command
/// ([`Client::send_command`](crate::Client::send_command) and the
/// devserver's `TestUser`), and the way for another client to do the same.
///
/// ```
/// use botlane::{CommandArgs, CommandDeclaration, CommandOption, CommandOptionType, OutgoingInvocation};
///
/// let roll = CommandDeclaration::new("roll", "Roll dice")
///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
/// let args = CommandArgs::from([("count".to_owned(), 2_i64.into())]);
/// let invocation = OutgoingInvocation::new("3F2504E0-4F89-11D3-9A0C-0305E82C3301", &roll, &args, Some("!"))?;
/// assert_eq!(invocation.line, "!roll 2");
/// assert_eq!(
///     invocation.sidecar,
///     r#"{"v":1,"bot":"3f2504e04f8911d39a0c0305e82c3301","name":"roll","args":{"count":2}}"#
/// );
/// # Ok::<(), botlane::FormatError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutgoingInvocation {
    /// The readable line ([`format_invocation_text`]): what a chat app
    /// shows, and what a bot without the sidecar reads on the text lane.
    pub line: String,
    /// The sidecar's JSON ([`encode_command_data`] of a [`CommandData`]
    /// addressed to the bot), to be sealed into the message's `command`.
    pub sidecar: String,
}

impl OutgoingInvocation {
    /// The invocation of `decl` with `args`, addressed to `bot_id`, its line
    /// written with `prefix` (`None` means
    /// [`DEFAULT_COMMAND_PREFIX`](crate::DEFAULT_COMMAND_PREFIX)).
    ///
    /// # Errors
    ///
    /// The [`FormatError`] of [`format_invocation_text`] when `args` do not
    /// fit `decl`.
    pub fn new(
        bot_id: &str,
        decl: &CommandDeclaration,
        args: &CommandArgs,
        prefix: Option<&str>,
    ) -> Result<Self, FormatError> {
        let line = format_invocation_text(decl, args, prefix)?;
        let sidecar = encode_command_data(&CommandData {
            bot_id: bot_id.to_owned(),
            name: decl.name.clone(),
            args: args.clone(),
        });
        Ok(Self { line, sidecar })
    }
}

/// Decodes a structured sidecar payload; `None` when it is not a valid one.
///
/// Never panics. Decoding is strict about everything that decides *what runs*, and lenient
/// only where leniency cannot change the meaning:
///
/// | input | decode |
/// |---|---|
/// | not JSON, or trailing text after the object | `None` |
/// | top level not an object | `None` |
/// | `v` missing, or anything but the JSON integer `1` (`1.0`, `1e0`, `"1"` included) | `None` |
/// | `bot` or `name` missing or not a string | `None` |
/// | `args` missing, `null`, or not an object | `None` |
/// | an arg value that is `null`, an array, an object, or out of `f64` range | `None` |
/// | a key given twice, at the top level or inside `args` | `None` |
/// | other top-level fields | ignored |
/// | a registry given, and it refuses the args | `None` |
///
/// These rules match the spec's list: bad JSON, a version other than
/// [`COMMAND_DATA_VERSION`](crate::COMMAND_DATA_VERSION), a missing or
/// non-string `bot` or `name`, an `args` that is not a plain object, or an
/// argument value that is not a string, finite number or boolean all give
/// `None`. Beyond the spec, duplicate keys give `None` too: a JSON parser
/// elsewhere may keep the *first* `bot` where this one would keep the last,
/// and the two must never disagree about which bot a payload addresses.
///
/// The returned bot id is canonical (undashed lower-case) and the name is
/// ASCII-lowercased. Neither is checked further here: the bot id is not
/// checked to be hex, nor the name against the name rule, because dispatch
/// compares the id with the bot's own canonical id and looks the name up in
/// the registry, which refuses anything else. Arg keys are kept exactly.
///
/// When `registry` is given, the decoded args are then passed through
/// [`CommandLookup::coerce`]; the result carries the coerced args, or is
/// `None` when the registry refuses them.
///
/// ```
/// use botlane::{decode_command_data, CommandArgValue};
///
/// let data = decode_command_data(
///     r#"{"v":1,"bot":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","name":"ROLL","args":{"count":2}}"#,
///     None,
/// )
/// .unwrap();
/// assert_eq!(data.bot_id, "3f2504e04f8911d39a0c0305e82c3301");
/// assert_eq!(data.name, "roll");
/// assert_eq!(data.args["count"], CommandArgValue::Integer(2));
///
/// // Another version, a null argument, a repeated `bot`: all refused.
/// assert!(decode_command_data(r#"{"v":2,"bot":"b","name":"x","args":{}}"#, None).is_none());
/// assert!(decode_command_data(r#"{"v":1,"bot":"b","name":"x","args":{"a":null}}"#, None).is_none());
/// assert!(decode_command_data(r#"{"v":1,"bot":"b","bot":"c","name":"x","args":{}}"#, None).is_none());
/// ```
pub fn decode_command_data(
    json: &str,
    registry: Option<&dyn CommandLookup>,
) -> Option<CommandData> {
    let mut data = serde_json::from_str::<Payload>(json).ok()?.0;
    if let Some(registry) = registry {
        data.args = registry.coerce(&data.name, data.args)?;
    }
    Some(data)
}

/// A structurally valid payload. Deserialized straight from the JSON text,
/// without an intermediate `serde_json::Value`, because decoding sits on the
/// path of every inbound message.
struct Payload(CommandData);

impl<'de> de::Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PayloadVisitor)
    }
}

struct PayloadVisitor;

impl<'de> Visitor<'de> for PayloadVisitor {
    type Value = Payload;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a command data object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Payload, A::Error> {
        let mut version = false;
        let mut bot: Option<String> = None;
        let mut name: Option<String> = None;
        let mut args: Option<CommandArgs> = None;
        // Unknown keys are remembered only to catch their repetition; a
        // payload from this encoder has none. A set, not a list, so that a
        // payload of many distinct keys costs no quadratic time.
        let mut others: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(field) = map.next_key::<Field<'de>>()? {
            match field {
                Field::V => {
                    if version {
                        return Err(de::Error::duplicate_field("v"));
                    }
                    map.next_value::<Version>()?;
                    version = true;
                }
                Field::Bot => {
                    if bot.is_some() {
                        return Err(de::Error::duplicate_field("bot"));
                    }
                    bot = Some(map.next_value::<BotId>()?.0);
                }
                Field::Name => {
                    if name.is_some() {
                        return Err(de::Error::duplicate_field("name"));
                    }
                    name = Some(map.next_value::<LowerName>()?.0);
                }
                Field::Args => {
                    if args.is_some() {
                        return Err(de::Error::duplicate_field("args"));
                    }
                    args = Some(map.next_value::<Args>()?.0);
                }
                Field::Other(key) => {
                    if !others.insert(key) {
                        return Err(de::Error::custom("duplicate field"));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !version {
            return Err(de::Error::missing_field("v"));
        }
        Ok(Payload(CommandData {
            bot_id: bot.ok_or_else(|| de::Error::missing_field("bot"))?,
            name: name.ok_or_else(|| de::Error::missing_field("name"))?,
            args: args.ok_or_else(|| de::Error::missing_field("args"))?,
        }))
    }
}

/// A top-level key. Matched after unescaping, so `"\u0062ot"` is `bot`, as
/// any JSON parser reads it.
enum Field<'de> {
    V,
    Bot,
    Name,
    Args,
    Other(Cow<'de, str>),
}

impl<'de> de::Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl<'de> Visitor<'de> for FieldVisitor {
            type Value = Field<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Field<'de>, E> {
                Ok(Field::known(v).unwrap_or(Field::Other(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field<'de>, E> {
                Ok(Field::known(v).unwrap_or_else(|| Field::Other(Cow::Owned(v.to_owned()))))
            }
        }
        d.deserialize_identifier(FieldVisitor)
    }
}

impl Field<'_> {
    fn known(key: &str) -> Option<Self> {
        match key {
            "v" => Some(Self::V),
            "bot" => Some(Self::Bot),
            "name" => Some(Self::Name),
            "args" => Some(Self::Args),
            _ => None,
        }
    }
}

/// `v`, accepted only as the JSON integer equal to the current version.
/// `1.0` is refused: this encoder and a JavaScript one both write `1`, so a
/// float there means a writer that is not following the format.
struct Version;

impl<'de> de::Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct VersionVisitor;
        impl Visitor<'_> for VersionVisitor {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "the integer {COMMAND_DATA_VERSION}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Version, E> {
                if v == u64::from(COMMAND_DATA_VERSION) {
                    Ok(Version)
                } else {
                    Err(E::custom(format_args!(
                        "unsupported command data version {v}, expected {COMMAND_DATA_VERSION}"
                    )))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Version, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::custom(format_args!(
                        "unsupported command data version {v}, expected {COMMAND_DATA_VERSION}"
                    ))),
                }
            }
        }
        d.deserialize_any(VersionVisitor)
    }
}

/// `bot`, read as a string and canonicalised on the way in.
struct BotId(String);

impl<'de> de::Deserialize<'de> for BotId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BotVisitor;
        impl Visitor<'_> for BotVisitor {
            type Value = BotId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a bot id string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<BotId, E> {
                // Senders already write the canonical form; copy it as is.
                let canonical = !v.bytes().any(|b| b == b'-' || b.is_ascii_uppercase());
                Ok(BotId(if canonical {
                    v.to_owned()
                } else {
                    canonical_bot_id(v)
                }))
            }
        }
        d.deserialize_str(BotVisitor)
    }
}

/// `name`, read as a string and ASCII-lowercased on the way in.
struct LowerName(String);

impl<'de> de::Deserialize<'de> for LowerName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl Visitor<'_> for NameVisitor {
            type Value = LowerName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a command name string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LowerName, E> {
                Ok(LowerName(v.to_ascii_lowercase()))
            }
        }
        d.deserialize_str(NameVisitor)
    }
}

/// `args`: a plain object of scalar values with no repeated key.
struct Args(CommandArgs);

impl<'de> de::Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ArgsVisitor;
        impl<'de> Visitor<'de> for ArgsVisitor {
            type Value = Args;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of string, finite number or boolean values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args, A::Error> {
                let mut args = CommandArgs::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<CommandArgValue>()?;
                    if args.insert(key, value).is_some() {
                        return Err(de::Error::custom("duplicate argument key"));
                    }
                }
                Ok(Args(args))
            }
        }
        d.deserialize_map(ArgsVisitor)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const BOT: &str = "3f2504e04f8911d39a0c0305e82c3301";

    fn decode(json: &str) -> Option<CommandData> {
        decode_command_data(json, None)
    }

    #[test]
    fn escaped_known_keys_are_the_known_keys() {
        let json = format!(r#"{{"v":1,"\u0062ot":"{BOT}","name":"x","args":{{}}}}"#);
        assert_eq!(decode(&json).unwrap().bot_id, BOT);
        let json = format!(r#"{{"v":1,"bot":"{BOT}","\u0062ot":"ff","name":"x","args":{{}}}}"#);
        assert_eq!(decode(&json), None);
    }

    #[test]
    fn repeated_unknown_keys_are_refused_but_single_ones_ignored() {
        let ok = format!(r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{}},"t":[1,{{"a":null}}]}}"#);
        assert!(decode(&ok).is_some());
        let twice = format!(r#"{{"t":0,"v":1,"bot":"{BOT}","name":"x","args":{{}},"t":0}}"#);
        assert_eq!(decode(&twice), None);
        let escaped = format!(r#"{{"t":0,"v":1,"bot":"{BOT}","name":"x","args":{{}},"\u0074":0}}"#);
        assert_eq!(decode(&escaped), None);
    }

    #[test]
    fn many_distinct_unknown_keys_take_linear_time() {
        // Quadratic duplicate detection would take minutes here.
        let keys: String = (0..200_000).map(|i| format!(r#""k{i}":0,"#)).collect();
        let json = format!(r#"{{{keys}"v":1,"bot":"{BOT}","name":"x","args":{{}}}}"#);
        assert!(decode(&json).is_some());
    }

    #[test]
    fn version_must_be_the_integer_one() {
        for v in ["1", "1 "] {
            let json = format!(r#"{{"v":{v},"bot":"{BOT}","name":"x","args":{{}}}}"#);
            assert!(decode(&json).is_some(), "{v}");
        }
        for v in [
            "0",
            "2",
            "-1",
            "1.0",
            "1e0",
            "10e-1",
            "\"1\"",
            "true",
            "null",
            "[1]",
            "18446744073709551617",
        ] {
            let json = format!(r#"{{"v":{v},"bot":"{BOT}","name":"x","args":{{}}}}"#);
            assert_eq!(decode(&json), None, "{v}");
        }
    }

    #[test]
    fn deep_nesting_neither_overflows_nor_changes_the_outcome() {
        // serde_json skips an ignored value without recursing, so a deep
        // unknown field is just ignored; a deep arg value is refused at its
        // first bracket.
        let deep = |inner: &str| format!("{}{inner}{}", "[".repeat(100_000), "]".repeat(100_000));
        let unknown = format!(
            r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{}},"t":{}}}"#,
            deep("0")
        );
        assert!(decode(&unknown).is_some());
        let in_args = format!(
            r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{"a":{}}}}}"#,
            deep("0")
        );
        assert_eq!(decode(&in_args), None);
        let unclosed = format!(
            r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{}},"t":{}"#,
            "[".repeat(100_000)
        );
        assert_eq!(decode(&unclosed), None);
    }

    #[test]
    fn trailing_text_is_refused() {
        let json = format!(r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{}}}}"#);
        assert!(decode(&format!("{json}\n")).is_some());
        assert_eq!(decode(&format!("{json}x")), None);
        assert_eq!(decode(&format!("{json}{json}")), None);
    }
}
