//! The keystore's bytes: version 2 written, versions 1 and 2 read
//! (`docs/crypto.md` §4 specifies both byte for byte).
//!
//! Version 2 is the version 1 JSON document (with `"version": 2`) followed
//! by one line, `hmac-sha256 <base64 tag>`, whose tag covers every byte
//! before it. A writer emits exactly one encoding for given contents and a
//! reader accepts only that one, so no byte of a version 2 file can change
//! without the file being refused.

use std::collections::BTreeMap;
use std::path::Path;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{Map, Value};
use zeroize::{Zeroize, Zeroizing};

use super::error::KeystoreError;
use super::integrity::{self, TAG_LEN};
use super::KEYSTORE_VERSION;
use crate::crypto::{ChannelKey, IdentityKeyPair, PublicKey, X25519_KEY_LEN};

/// The format version without an integrity tag.
const VERSION_1: u64 = 1;

/// What the tag line starts with; the base64 tag and a newline follow.
const TAG_PREFIX: &[u8] = b"hmac-sha256 ";

/// Length of base64 text of a 32-byte value (with padding).
const B64_32_LEN: usize = 44;

/// Everything after the document's closing brace in a version 2 file: the
/// body's final newline, then the tag line.
const TRAILER_LEN: usize = 1 + TAG_PREFIX.len() + B64_32_LEN + 1;

/// What a keystore file holds.
pub(crate) struct Contents {
    pub(crate) identity: IdentityKeyPair,
    pub(crate) channels: BTreeMap<String, ChannelKey>,
}

/// The version 2 encoding of a keystore: the exact file bytes.
pub(crate) fn encode(
    identity: &IdentityKeyPair,
    channels: &BTreeMap<String, ChannelKey>,
) -> Zeroizing<Vec<u8>> {
    // Sized up front (escaping at most sextuples an id) so that growing the
    // buffer never leaves stray copies of key text behind.
    let capacity = 256
        + channels
            .keys()
            .map(|id| 16 + 6 * id.len() + B64_32_LEN)
            .sum::<usize>();
    let mut out = Zeroizing::new(Vec::with_capacity(capacity));
    let secret = Zeroizing::new(BASE64.encode(identity.expose_secret_bytes()));
    out.extend_from_slice(b"{\n  \"version\": 2,\n  \"identity\": {\n    \"secret\": \"");
    out.extend_from_slice(secret.as_bytes());
    out.extend_from_slice(b"\",\n    \"public\": \"");
    out.extend_from_slice(identity.public_key().to_base64().as_bytes());
    out.extend_from_slice(b"\"\n  },\n  \"channels\": {");
    for (i, (id, key)) in channels.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        serde_json::to_writer(&mut *out, id).expect("writing a json string into a Vec cannot fail");
        out.extend_from_slice(b": \"");
        out.extend_from_slice(Zeroizing::new(BASE64.encode(key.expose_bytes())).as_bytes());
        out.push(b'"');
    }
    if !channels.is_empty() {
        out.extend_from_slice(b"\n  ");
    }
    out.extend_from_slice(b"}\n}\n");
    let tag = integrity::tag(identity.expose_secret_bytes(), &out);
    out.extend_from_slice(TAG_PREFIX);
    out.extend_from_slice(BASE64.encode(tag).as_bytes());
    out.push(b'\n');
    out
}

/// A `serde_json::Value` whose strings are wiped when it is dropped, since
/// they hold base64 key material.
struct ScrubbedValue(Value);

impl Drop for ScrubbedValue {
    fn drop(&mut self) {
        fn scrub(value: &mut Value) {
            match value {
                Value::String(s) => s.zeroize(),
                Value::Array(items) => items.iter_mut().for_each(scrub),
                Value::Object(map) => map.values_mut().for_each(scrub),
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        scrub(&mut self.0);
    }
}

/// Decodes a keystore file of either version. Never panics; the errors name
/// the file and a field, never the field's contents.
pub(crate) fn decode(path: &Path, bytes: &[u8]) -> Result<Contents, KeystoreError> {
    let (doc, end) = first_json_value(path, bytes)?;
    let invalid = |field: &str, problem| KeystoreError::Invalid {
        path: path.to_path_buf(),
        field: field.to_owned(),
        problem,
    };
    let top = doc
        .0
        .as_object()
        .ok_or_else(|| invalid("the document", "must be a json object"))?;
    // The version is checked first so that a newer format is reported as
    // such rather than as a pile of unexpected fields.
    let version = match top.get("version") {
        None => return Err(invalid("version", "is missing")),
        Some(v) => match v.as_u64() {
            Some(found @ (VERSION_1 | KEYSTORE_VERSION)) => found,
            Some(found) => {
                return Err(KeystoreError::UnsupportedVersion {
                    path: path.to_path_buf(),
                    found,
                })
            }
            None => return Err(invalid("version", "must be a non-negative integer")),
        },
    };
    let rest = &bytes[end..];
    // JSON's whitespace (RFC 8259), which `u8::is_ascii_whitespace` is not:
    // it also takes the form feed.
    let json_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    if version == VERSION_1 && !rest.iter().all(json_space) {
        return Err(invalid(
            "the document",
            "is followed by bytes that are not json",
        ));
    }

    let identity = object_field(top, "identity", &invalid)?;
    let secret = key_field(identity.get("secret"), "identity.secret", &invalid)?;
    if version == KEYSTORE_VERSION {
        check_tag(path, &secret, bytes, end)?;
    }
    reject_unknown(top, &["version", "identity", "channels"], "", &invalid)?;
    reject_unknown(identity, &["secret", "public"], "identity.", &invalid)?;
    let public = key_field(identity.get("public"), "identity.public", &invalid)?;
    let pair = IdentityKeyPair::from_secret_bytes(*secret);
    if pair.public_key() != PublicKey::from_bytes(*public) {
        return Err(KeystoreError::IdentityMismatch {
            path: path.to_path_buf(),
        });
    }

    let mut channels = BTreeMap::new();
    for (id, value) in object_field(top, "channels", &invalid)? {
        let field = format!("channels[{id:?}]");
        let key = key_field(Some(value), &field, &invalid)?;
        channels.insert(id.clone(), ChannelKey::from_bytes(*key));
    }
    if version == KEYSTORE_VERSION && encode(&pair, &channels).as_slice() != bytes {
        return Err(KeystoreError::NotCanonical {
            path: path.to_path_buf(),
        });
    }
    Ok(Contents {
        identity: pair,
        channels,
    })
}

/// The first JSON value in `bytes` and the offset just past it.
fn first_json_value(path: &Path, bytes: &[u8]) -> Result<(ScrubbedValue, usize), KeystoreError> {
    let syntax = |e: serde_json::Error| {
        let (path, line, column) = (path.to_path_buf(), e.line(), e.column());
        if e.is_eof() {
            KeystoreError::Truncated { path, line, column }
        } else {
            KeystoreError::NotJson { path, line, column }
        }
    };
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => Ok((ScrubbedValue(value), stream.byte_offset())),
        Some(Err(e)) => Err(syntax(e)),
        // Empty or whitespace only: the whole-document parser reports where
        // the input ended.
        None => Err(serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
            .err()
            .map_or_else(
                || KeystoreError::Truncated {
                    path: path.to_path_buf(),
                    line: 1,
                    column: 0,
                },
                syntax,
            )),
    }
}

/// Checks the tag line of a version 2 file whose document ends at byte
/// `end` (just past its closing brace).
fn check_tag(
    path: &Path,
    secret: &[u8; X25519_KEY_LEN],
    bytes: &[u8],
    end: usize,
) -> Result<(), KeystoreError> {
    let rest = &bytes[end..];
    let integrity = |problem| KeystoreError::Integrity {
        path: path.to_path_buf(),
        problem,
    };
    let shape_ok = rest.len() == TRAILER_LEN
        && rest[0] == b'\n'
        && rest[1..].starts_with(TAG_PREFIX)
        && rest[TRAILER_LEN - 1] == b'\n';
    if !shape_ok {
        return Err(integrity(
            "the document must be followed by a newline and exactly one line `hmac-sha256 <base64 tag>`",
        ));
    }
    let tag_text = &rest[1 + TAG_PREFIX.len()..TRAILER_LEN - 1];
    let tag = match BASE64.decode(tag_text) {
        Ok(tag) if tag.len() == TAG_LEN => tag,
        _ => return Err(integrity("the tag is not the standard base64 of 32 bytes")),
    };
    // The body is the document and its newline: everything before the tag line.
    if !integrity::verify(secret, &bytes[..=end], &tag) {
        return Err(integrity(
            "the tag does not match the content: the file was changed or damaged after it was written",
        ));
    }
    Ok(())
}

type Invalid<'a> = dyn Fn(&str, &'static str) -> KeystoreError + 'a;

fn reject_unknown(
    map: &Map<String, Value>,
    known: &[&str],
    prefix: &str,
    invalid: &Invalid<'_>,
) -> Result<(), KeystoreError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(invalid(
            &format!("{prefix}{unknown:?}"),
            "is not a known field",
        )),
        None => Ok(()),
    }
}

fn object_field<'v>(
    map: &'v Map<String, Value>,
    name: &str,
    invalid: &Invalid<'_>,
) -> Result<&'v Map<String, Value>, KeystoreError> {
    map.get(name)
        .ok_or_else(|| invalid(name, "is missing"))?
        .as_object()
        .ok_or_else(|| invalid(name, "must be a json object"))
}

fn key_field(
    value: Option<&Value>,
    field: &str,
    invalid: &Invalid<'_>,
) -> Result<Zeroizing<[u8; X25519_KEY_LEN]>, KeystoreError> {
    let text = value
        .ok_or_else(|| invalid(field, "is missing"))?
        .as_str()
        .ok_or_else(|| invalid(field, "must be a string"))?;
    let bytes = Zeroizing::new(
        BASE64
            .decode(text)
            .map_err(|_| invalid(field, "is not valid standard base64"))?,
    );
    let mut key = Zeroizing::new([0u8; X25519_KEY_LEN]);
    if bytes.len() != key.len() {
        return Err(invalid(field, "must decode to exactly 32 bytes"));
    }
    key.copy_from_slice(&bytes);
    Ok(key)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The documentation, so that its vector cannot drift from the code.
    const DOC: &str = include_str!("../../../../docs/crypto.md");

    fn decode_str(text: &str) -> Result<Contents, KeystoreError> {
        decode(Path::new("/k/store.json"), text.as_bytes())
    }

    fn counting(start: u8) -> [u8; 32] {
        std::array::from_fn(|i| start + u8::try_from(i).unwrap())
    }

    fn hex32(text: &str) -> [u8; 32] {
        std::array::from_fn(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
    }

    /// The inputs of test vector 3.
    fn vector_contents() -> (IdentityKeyPair, BTreeMap<String, ChannelKey>) {
        let identity = IdentityKeyPair::from_secret_bytes(hex32(
            "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
        ));
        let mut channels = BTreeMap::new();
        channels.insert(
            "channel-42".to_owned(),
            ChannelKey::from_bytes(counting(0x20)),
        );
        channels.insert(
            "room \"é\"\\\t\u{1}".to_owned(),
            ChannelKey::from_bytes(counting(0x40)),
        );
        (identity, channels)
    }

    /// The file of test vector 3, cut out of `docs/crypto.md`.
    fn vector_file() -> String {
        let section = &DOC[DOC.find("### Test vector 3").unwrap()..];
        let start = section.find("```text\n").unwrap() + "```text\n".len();
        let len = section[start..].find("```").unwrap();
        section[start..start + len].to_owned()
    }

    fn v1_doc() -> Value {
        let pair = IdentityKeyPair::from_secret_bytes([7; 32]);
        serde_json::json!({
            "version": 1,
            "identity": {
                "secret": BASE64.encode([7u8; 32]),
                "public": pair.public_key().to_base64(),
            },
            "channels": { "c1": BASE64.encode([1u8; 32]) },
        })
    }

    fn problem(doc: &Value) -> String {
        decode_str(&doc.to_string()).err().unwrap().to_string()
    }

    #[test]
    fn the_writer_produces_the_documented_vector() {
        let (identity, channels) = vector_contents();
        let encoded = encode(&identity, &channels);
        assert_eq!(std::str::from_utf8(&encoded).unwrap(), vector_file());
        assert_eq!(encoded.len(), 383);
    }

    #[test]
    fn the_documented_vector_decodes_to_its_inputs() {
        let contents = decode_str(&vector_file()).unwrap();
        let (identity, channels) = vector_contents();
        assert_eq!(contents.identity.public_key(), identity.public_key());
        assert_eq!(
            contents.identity.public_key().as_bytes(),
            &hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        );
        assert_eq!(contents.channels.len(), channels.len());
        for (id, key) in &channels {
            assert_eq!(
                contents.channels[id].expose_bytes(),
                key.expose_bytes(),
                "{id:?}"
            );
        }
        assert!(DOC.contains(std::str::from_utf8(integrity::TAG_INFO).unwrap()));
    }

    #[test]
    fn an_empty_keystore_has_the_documented_shape() {
        let identity = IdentityKeyPair::from_secret_bytes([3; 32]);
        let encoded = encode(&identity, &BTreeMap::new());
        let text = std::str::from_utf8(&encoded).unwrap();
        let (body, tag_line) = text.split_at(text.len() - TRAILER_LEN + 1);
        assert!(body.ends_with("  },\n  \"channels\": {}\n}\n"), "{body}");
        assert!(tag_line.starts_with("hmac-sha256 ") && tag_line.ends_with('\n'));
        assert!(DOC.contains("`  \"channels\": {}`"));
        assert!(decode(Path::new("k"), &encoded)
            .unwrap()
            .channels
            .is_empty());
    }

    #[test]
    fn the_body_is_json_stringify_with_two_spaces() {
        // serde_json's pretty printer is JSON.stringify(doc, null, 2) for
        // string values: an independent spelling of §4.1.
        let (identity, channels) = vector_contents();
        let encoded = encode(&identity, &channels);
        let body = &encoded[..encoded.len() - TRAILER_LEN + 1];
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            version: u64,
            identity: Identity<'a>,
            channels: BTreeMap<&'a str, String>,
        }
        #[derive(serde::Serialize)]
        struct Identity<'a> {
            secret: &'a str,
            public: &'a str,
        }
        let secret = BASE64.encode(identity.expose_secret_bytes());
        let public = identity.public_key().to_base64();
        let doc = Doc {
            version: 2,
            identity: Identity {
                secret: &secret,
                public: &public,
            },
            channels: channels
                .iter()
                .map(|(id, key)| (id.as_str(), BASE64.encode(key.expose_bytes())))
                .collect(),
        };
        let mut pretty = serde_json::to_vec_pretty(&doc).unwrap();
        pretty.push(b'\n');
        assert_eq!(body, pretty.as_slice());
    }

    #[test]
    fn version_1_documents_still_decode() {
        let contents = decode_str(&v1_doc().to_string()).unwrap();
        assert_eq!(contents.identity.expose_secret_bytes(), &[7; 32]);
        assert_eq!(contents.channels["c1"].expose_bytes(), &[1; 32]);
        // Any whitespace and order, as version 1 allowed.
        let pretty = format!("\n{}\n\n", serde_json::to_string_pretty(&v1_doc()).unwrap());
        assert!(decode_str(&pretty).is_ok());
    }

    #[test]
    fn each_v1_defect_is_named() {
        type Edit = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|d| d["version"] = 3.into()), "has version 3"),
            (
                Box::new(|d| d["version"] = "1".into()),
                "version must be a non-negative integer",
            ),
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("version");
                }),
                "version is missing",
            ),
            (
                Box::new(|d| d["extra"] = true.into()),
                "\"extra\" is not a known field",
            ),
            (
                Box::new(|d| d["identity"] = "x".into()),
                "identity must be a json object",
            ),
            (
                Box::new(|d| {
                    d["identity"].as_object_mut().unwrap().remove("secret");
                }),
                "identity.secret is missing",
            ),
            (
                Box::new(|d| d["identity"]["secret"] = 5.into()),
                "identity.secret must be a string",
            ),
            (
                Box::new(|d| d["identity"]["secret"] = "%%%%".into()),
                "identity.secret is not valid standard base64",
            ),
            (
                Box::new(|d| d["identity"]["public"] = "AAAA".into()),
                "identity.public must decode to exactly 32 bytes",
            ),
            (
                Box::new(|d| d["identity"]["public"] = BASE64.encode([1u8; 32]).into()),
                "identity.public does not match identity.secret",
            ),
            (
                Box::new(|d| d["identity"]["x"] = 1.into()),
                "identity.\"x\" is not a known field",
            ),
            (
                Box::new(|d| {
                    d.as_object_mut().unwrap().remove("channels");
                }),
                "channels is missing",
            ),
            (
                Box::new(|d| d["channels"]["c2"] = BASE64.encode([1u8; 16]).into()),
                "channels[\"c2\"] must decode to exactly 32 bytes",
            ),
        ];
        for (edit, expected) in cases {
            let mut doc = v1_doc();
            edit(&mut doc);
            let message = problem(&doc);
            assert!(message.starts_with("keystore /k/store.json"), "{message}");
            assert!(message.contains(expected), "{message} lacks {expected}");
        }
        assert!(problem(&serde_json::json!([1])).contains("the document must be a json object"));
        for after in [" x", "\u{c}"] {
            let trailing = format!("{}{after}", v1_doc());
            let message = decode_str(&trailing).err().unwrap().to_string();
            assert!(
                message.contains("followed by bytes that are not json"),
                "{after:?}: {message}"
            );
        }
    }

    #[test]
    fn each_v2_defect_is_named() {
        let file = vector_file();
        let (body, tag_line) = file.split_at(file.len() - TRAILER_LEN + 1);
        let cases: Vec<(String, &str)> = vec![
            (
                body.to_owned(),
                "exactly one line `hmac-sha256 <base64 tag>`",
            ),
            (format!("{file}\n"), "exactly one line"),
            (
                format!("{}\r\n{tag_line}", body.trim_end()),
                "exactly one line",
            ),
            (
                body.replace("}\n}\n", "}\n}\n\n") + tag_line,
                "exactly one line",
            ),
            (
                format!("{body}{}", tag_line.replace("hmac-sha256 ", "hmac-sha512 ")),
                "exactly one line",
            ),
            (
                format!("{body}hmac-sha256 {}\n", "%".repeat(44)),
                "the tag is not the standard base64 of 32 bytes",
            ),
            (
                format!("{body}hmac-sha256 {}\n", BASE64.encode([0u8; 32])),
                "the tag does not match the content",
            ),
            (
                file.replace("\"version\": 2,", "\"version\":  2,"),
                "the tag does not match the content",
            ),
            (
                file.replace("\"channel-42\"", "\"channel-43\""),
                "the tag does not match the content",
            ),
        ];
        for (text, expected) in cases {
            let err = decode_str(&text).err().unwrap();
            assert!(matches!(err, KeystoreError::Integrity { .. }), "{err:?}");
            let message = err.to_string();
            assert!(message.starts_with("keystore /k/store.json failed its integrity check"));
            assert!(message.contains(expected), "{message} lacks {expected}");
        }
    }

    /// A version 2 file with a valid tag over a body that is not the
    /// canonical encoding: only a writer that knows the secret makes one.
    fn retagged(body: &str, secret: &[u8; 32]) -> String {
        let tag = integrity::tag(secret, body.as_bytes());
        format!("{body}hmac-sha256 {}\n", BASE64.encode(tag))
    }

    #[test]
    fn a_valid_tag_over_a_non_canonical_body_is_refused() {
        let secret = hex32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
        let file = vector_file();
        let body = &file[..file.len() - TRAILER_LEN + 1];
        // The canonical body retagged is the vector itself.
        assert_eq!(retagged(body, &secret), file);
        let lines: Vec<&str> = body.lines().collect();
        let (first, second) = (lines[7], lines[8]);
        assert!(first.starts_with("    \"channel-42\"") && first.ends_with(','));
        let rebuilt = |middle: &[String]| {
            let mut all: Vec<String> = lines[..7].iter().map(|l| (*l).to_owned()).collect();
            all.extend_from_slice(middle);
            all.extend(lines[9..].iter().map(|l| (*l).to_owned()));
            all.join("\n") + "\n"
        };
        let swapped = rebuilt(&[format!("{second},"), first.trim_end_matches(',').to_owned()]);
        let duplicated = rebuilt(&[first.to_owned(), first.to_owned(), second.to_owned()]);
        for variant in [
            body.replace("  \"version\"", "   \"version\""),
            body.replace("\\t", "\\u0009"),
            body.replace("é", "\\u00e9"),
            swapped,
            duplicated,
        ] {
            assert_ne!(variant, body);
            let err = decode_str(&retagged(&variant, &secret)).err().unwrap();
            assert!(
                matches!(err, KeystoreError::NotCanonical { .. }),
                "{err:?} for {variant}"
            );
        }
    }

    #[test]
    fn errors_never_contain_key_material() {
        let secret_b64 = BASE64.encode([7u8; 32]);
        let mut doc = v1_doc();
        // Key text in places where a naive decoder would echo it back.
        doc["identity"] = secret_b64.clone().into();
        doc["channels"]["c2"] = serde_json::json!([secret_b64.clone()]);
        let message = problem(&doc);
        assert!(!message.contains(&secret_b64), "{message}");
        let mut doc = v1_doc();
        doc["identity"]["public"] = format!("{secret_b64}!").into();
        assert!(!problem(&doc).contains(&secret_b64));
    }

    #[test]
    fn truncation_is_told_apart_from_garbage() {
        for text in [v1_doc().to_string(), vector_file()] {
            let json_end = text.rfind('}').unwrap();
            for cut in [0, 1, text.len() / 2, json_end] {
                assert!(
                    matches!(
                        decode_str(&text[..cut]),
                        Err(KeystoreError::Truncated { .. })
                    ),
                    "cut at {cut}"
                );
            }
        }
        assert!(matches!(
            decode_str("  \n "),
            Err(KeystoreError::Truncated { .. })
        ));
        assert!(matches!(
            decode_str("hello"),
            Err(KeystoreError::NotJson { .. })
        ));
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let names = prop::sample::select(vec![
            "version", "identity", "channels", "secret", "public", "c1", "x",
        ]);
        let b64_key = any::<[u8; 32]>().prop_map(|b| Value::from(BASE64.encode(b)));
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0u64..4).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::from),
            b64_key,
        ];
        leaf.prop_recursive(4, 32, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(names.clone(), inner, 0..5).prop_map(
                    |m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                ),
            ]
        })
    }

    proptest! {
        #[test]
        fn decode_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            prop_assert!(decode(Path::new("k"), &bytes).is_err());
        }

        #[test]
        fn decode_never_panics_on_json_shapes(doc in json_value()) {
            // Random shapes essentially never form a matching identity pair.
            prop_assert!(decode_str(&doc.to_string()).is_err());
        }

        #[test]
        fn encode_then_decode_round_trips(
            secret in any::<[u8; 32]>(),
            keys in prop::collection::btree_map(any::<String>(), any::<[u8; 32]>(), 0..6),
        ) {
            let identity = IdentityKeyPair::from_secret_bytes(secret);
            let channels: BTreeMap<String, ChannelKey> = keys
                .iter()
                .map(|(id, key)| (id.clone(), ChannelKey::from_bytes(*key)))
                .collect();
            let encoded = encode(&identity, &channels);
            let back = decode(Path::new("k"), &encoded).unwrap();
            prop_assert_eq!(back.identity.public_key(), identity.public_key());
            prop_assert_eq!(back.channels.len(), keys.len());
            for (id, key) in &keys {
                prop_assert_eq!(back.channels[id].expose_bytes(), key);
            }
        }
    }
}
