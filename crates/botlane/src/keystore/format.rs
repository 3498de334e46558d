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
use crate::crypto::{ChannelKey, IdentityKeyPair, PublicKey, X25519_KEY_LEN};

/// The keystore format version this build writes. Version 1 files are
/// still read, and rewritten as version 2 by the next save.
pub const KEYSTORE_VERSION: u64 = 2;

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
        serde_json::to_writer(&mut *out, id)
            .expect("writing a json string into a Vec cannot fail");
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
    if version == VERSION_1 && !rest.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid("the document", "is followed by bytes that are not json"));
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
