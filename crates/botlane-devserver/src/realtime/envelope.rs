//! Reading a frame strictly: the envelope `{"op": u16, "d": …}` (a frame
//! whose envelope cannot be read closes the connection, D2), and a check
//! that a payload repeats no key at any depth (two parsers must never
//! disagree about which value counts).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A readable envelope; `d` is `None` when the frame has no `d`.
#[derive(Debug)]
pub(crate) struct Envelope<'a> {
    pub(crate) op: u16,
    pub(crate) d: Option<&'a RawValue>,
}

/// Why an envelope could not be read, as the close reason says it after
/// `malformed frame envelope: `. Never quotes the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvelopeError {
    NotJson,
    NotObject,
    DuplicateKey,
    OpMissing,
    OpNotU16,
}

impl EnvelopeError {
    pub(crate) const fn what(self) -> &'static str {
        match self {
            Self::NotJson => "not valid JSON",
            Self::NotObject => "not a JSON object",
            Self::DuplicateKey => "a top-level key appears twice",
            Self::OpMissing => "op is missing",
            Self::OpNotU16 => "op is not an integer in 0..=65535",
        }
    }
}

/// Reads the envelope of `text`.
pub(crate) fn read_envelope(text: &str) -> Result<Envelope<'_>, EnvelopeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let found = de
        .deserialize_any(EnvelopeVisitor)
        .map_err(|e| classify(&e))??;
    de.end().map_err(|_| EnvelopeError::NotJson)?;
    let op = found.op.ok_or(EnvelopeError::OpMissing)?;
    // `op` must be a JSON integer: `12.0`, `"12"` and `-1` are not.
    let op = serde_json::from_str::<u64>(op.get())
        .ok()
        .and_then(|op| u16::try_from(op).ok())
        .ok_or(EnvelopeError::OpNotU16)?;
    Ok(Envelope { op, d: found.d })
}

/// The envelope error a deserializer error stands for: our own markers, or
/// a syntax error.
fn classify(e: &serde_json::Error) -> EnvelopeError {
    if e.to_string().starts_with(DUPLICATE) {
        EnvelopeError::DuplicateKey
    } else {
        EnvelopeError::NotJson
    }
}

const DUPLICATE: &str = "duplicate key";

struct Found<'a> {
    op: Option<&'a RawValue>,
    d: Option<&'a RawValue>,
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Result<Found<'de>, EnvelopeError>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a frame envelope")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = Seen::default();
        let mut found = Found { op: None, d: None };
        while let Some(Key(key)) = map.next_key()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(DUPLICATE));
            }
            match key.as_ref() {
                "op" => found.op = Some(map.next_value()?),
                "d" => found.d = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Ok(found))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Err(EnvelopeError::NotObject))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Err(EnvelopeError::NotObject))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Err(EnvelopeError::NotObject))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Err(EnvelopeError::NotObject))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Err(EnvelopeError::NotObject))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Err(EnvelopeError::NotObject))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Err(EnvelopeError::NotObject))
    }
}

/// An object key, borrowed from the text unless it holds an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Objects with more keys than this keep them in a hash set.
const FEW_KEYS: usize = 8;

/// The keys of one object so far. The first few are compared in place,
/// which allocates nothing (a request has a handful); the rest go to a hash
/// set, so that an object of many keys still costs linear time.
#[derive(Default)]
struct Seen<'de> {
    few: [Option<Cow<'de, str>>; FEW_KEYS],
    many: HashSet<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    /// Records `key`; `false` when it was there already.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if self.few.iter().flatten().any(|k| *k == key)
            || (!self.many.is_empty() && self.many.contains(&key))
        {
            return false;
        }
        match self.few.iter_mut().find(|k| k.is_none()) {
            Some(slot) => *slot = Some(key),
            None => {
                self.many.insert(key);
            }
        }
        true
    }
}

/// Where an object is, for the error about its repeated key: `d`, then
/// each key on the way that is short printable ASCII (a client's odd key is
/// not echoed back). Written out only for the error.
#[derive(Clone, Copy)]
struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    key: &'p str,
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            write!(f, "{parent}.")?;
        }
        f.write_str(self.key)
    }
}

fn shown(key: &str) -> bool {
    key.len() <= 32 && key.bytes().all(|b| b.is_ascii_graphic())
}

/// Checks that no object in `json`, at any depth, repeats a key; the error
/// names the first repeated key's path (such as `d.args`), never a value.
pub(crate) fn check_unique_keys(json: &str) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(json);
    let root = Path {
        parent: None,
        key: "d",
    };
    match (UniqueKeys { path: root }).deserialize(&mut de) {
        Ok(()) => Ok(()),
        Err(e) => {
            let shown = e.to_string();
            // serde_json appends " at line L column C"; keep our text only.
            let cut = shown.find(" at line ").unwrap_or(shown.len());
            Err(shown[..cut].to_owned())
        }
    }
}

/// A walker that fails on the first object with a repeated key.
#[derive(Clone, Copy)]
struct UniqueKeys<'p> {
    path: Path<'p>,
}

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = Seen::default();
        while let Some(Key(key)) = map.next_key()? {
            if !seen.insert(key.clone()) {
                let shown = if shown(&key) {
                    format!("{}.{key}", self.path)
                } else {
                    format!("an object in {}", self.path)
                };
                return Err(de::Error::custom(format!("duplicate key {shown}")));
            }
            if shown(&key) {
                let path = Path {
                    parent: Some(&self.path),
                    key: &key,
                };
                map.next_value_seed(UniqueKeys { path })?;
            } else {
                map.next_value_seed(self)?;
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn readable_envelopes() {
        let e = read_envelope(r#"{"op":12,"d":{}}"#).unwrap();
        assert_eq!((e.op, e.d.map(RawValue::get)), (12, Some("{}")));
        let e = read_envelope(r#" {"d":[1],"extra":true,"op":65535} "#).unwrap();
        assert_eq!((e.op, e.d.map(RawValue::get)), (65535, Some("[1]")));
        let e = read_envelope(r#"{"op":0}"#).unwrap();
        assert_eq!((e.op, e.d.is_none()), (0, true));
    }

    #[test]
    fn unreadable_envelopes_say_why() {
        use EnvelopeError::*;
        for (text, why) in [
            ("", NotJson),
            ("not json", NotJson),
            (r#"{"op":12,"d":{}"#, NotJson),
            (r#"{"op":12,"d":{}} trailing"#, NotJson),
            ("[]", NotObject),
            ("12", NotObject),
            (r#""frame""#, NotObject),
            ("null", NotObject),
            (r#"{"op":12,"op":13,"d":{}}"#, DuplicateKey),
            (r#"{"op":12,"d":{},"d":{}}"#, DuplicateKey),
            (r#"{"op":12,"x":1,"x":2}"#, DuplicateKey),
            (r#"{"d":{}}"#, OpMissing),
            (r#"{"op":"12","d":{}}"#, OpNotU16),
            (r#"{"op":12.0,"d":{}}"#, OpNotU16),
            (r#"{"op":-1,"d":{}}"#, OpNotU16),
            (r#"{"op":65536,"d":{}}"#, OpNotU16),
            (r#"{"op":null,"d":{}}"#, OpNotU16),
        ] {
            assert_eq!(read_envelope(text).unwrap_err(), why, "{text}");
        }
    }

    #[test]
    fn repeated_keys_are_found_at_any_depth() {
        assert!(check_unique_keys(r#"{"a":{"b":[{"c":1},{"c":2}]},"b":1}"#).is_ok());
        assert_eq!(
            check_unique_keys(r#"{"channel_id":"a","channel_id":"b"}"#).unwrap_err(),
            "duplicate key d.channel_id"
        );
        assert_eq!(
            check_unique_keys(r#"{"wrapped":{"x":[{"k":1,"k":2}]}}"#).unwrap_err(),
            "duplicate key d.wrapped.x.k"
        );
        let odd = check_unique_keys(r#"{"a b":1,"a b":2}"#).unwrap_err();
        assert_eq!(odd, "duplicate key an object in d");
        // Past the keys compared in place, and a key spelled with an escape.
        let many = (0..20)
            .map(|i| format!(r#""k{i}":{i}"#))
            .collect::<Vec<_>>()
            .join(",");
        assert!(check_unique_keys(&format!("{{{many}}}")).is_ok());
        assert_eq!(
            check_unique_keys(&format!(r#"{{{many},"k\u0031":{{"x":1,"x":2}}}}"#)).unwrap_err(),
            "duplicate key d.k1"
        );
        assert_eq!(
            check_unique_keys(r#"{"o":{"i":{"a":1,"\u0061":2}}}"#).unwrap_err(),
            "duplicate key d.o.i.a"
        );
    }
}
