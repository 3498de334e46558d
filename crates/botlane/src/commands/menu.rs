//! The canonical menu published at login, and its SHA-256 skip guard.
//!
//! The canonical menu is made of arrays, not objects, so that its bytes (and
//! thus its hash) cannot depend on key order. Its compact JSON is
//! byte-identical to JavaScript's `JSON.stringify` of the same arrays (this is
//! checked against vectors generated with node, `docs/vectors/menus.json`).
//!
//! The published bytes and the hash come from a small JSON writer that reads
//! the declarations in place (no string is cloned, no owned menu is built)
//! into one buffer sized in advance, which is then hashed in one go: the hash
//! is meant to cost little more than SHA-256 over the same bytes. The owned
//! [`CanonicalMenu`] types serialize through serde to the same bytes (the
//! vector tests check both).

use std::cmp::Ordering;

use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::option::CommandOption;
use super::types::CommandDeclaration;

/// One option of the canonical menu; serializes to the array
/// `[name, typeCode, description, required, choices]` (a missing `choices` is `[]`).
///
/// ```
/// use botlane::CanonicalOption;
///
/// let option = CanonicalOption {
///     name: "sides".into(),
///     type_code: 2,
///     description: "Sides".into(),
///     required: false,
///     choices: vec!["6".into(), "20".into()],
/// };
/// assert_eq!(serde_json::to_string(&option)?, r#"["sides",2,"Sides",false,["6","20"]]"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "(String, u8, String, bool, Vec<String>)")]
pub struct CanonicalOption {
    /// The option name.
    pub name: String,
    /// The option type's code (see [`COMMAND_OPTION_TYPE_CODES`](crate::COMMAND_OPTION_TYPE_CODES)).
    pub type_code: u8,
    /// The description.
    pub description: String,
    /// Whether the option is required; always a real boolean.
    pub required: bool,
    /// The choices; empty when the declaration has none.
    pub choices: Vec<String>,
}

impl From<(String, u8, String, bool, Vec<String>)> for CanonicalOption {
    fn from(
        (name, type_code, description, required, choices): (String, u8, String, bool, Vec<String>),
    ) -> Self {
        Self {
            name,
            type_code,
            description,
            required,
            choices,
        }
    }
}

impl Serialize for CanonicalOption {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(5)?;
        t.serialize_element(&self.name)?;
        t.serialize_element(&self.type_code)?;
        t.serialize_element(&self.description)?;
        t.serialize_element(&self.required)?;
        t.serialize_element(&self.choices)?;
        t.end()
    }
}

/// One command of the canonical menu; serializes to the array
/// `[name, description, options]`.
///
/// ```
/// use botlane::CanonicalCommand;
///
/// let command = CanonicalCommand { name: "ping".into(), description: "Pong".into(), options: vec![] };
/// assert_eq!(serde_json::to_string(&command)?, r#"["ping","Pong",[]]"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "(String, String, Vec<CanonicalOption>)")]
pub struct CanonicalCommand {
    /// The command name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The options in declared order.
    pub options: Vec<CanonicalOption>,
}

impl From<(String, String, Vec<CanonicalOption>)> for CanonicalCommand {
    fn from((name, description, options): (String, String, Vec<CanonicalOption>)) -> Self {
        Self {
            name,
            description,
            options,
        }
    }
}

impl Serialize for CanonicalCommand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(3)?;
        t.serialize_element(&self.name)?;
        t.serialize_element(&self.description)?;
        t.serialize_element(&self.options)?;
        t.end()
    }
}

/// The canonical menu: every command, sorted by name; serializes to an array
/// of [`CanonicalCommand`] arrays.
pub type CanonicalMenu = Vec<CanonicalCommand>;

/// Where the canonical JSON goes: a buffer or a byte counter.
/// Single bytes have their own method because most pieces of the JSON are
/// one byte long and a push is much cheaper than a slice copy.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
    fn byte(&mut self, b: u8);
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    #[inline]
    fn byte(&mut self, b: u8) {
        self.push(b);
    }
}

/// Counts the bytes it is given.
struct ByteCounter(usize);

impl Sink for ByteCounter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
    #[inline]
    fn byte(&mut self, _: u8) {
        self.0 += 1;
    }
}

/// What JSON.stringify writes for each byte of a string: 0 for the byte
/// itself, `u` for a `\u00XX` escape, otherwise the letter after `\`.
/// Bytes of multi-byte UTF-8 sequences are all >= 0x80, so they pass through.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes `s` as a JSON string exactly as `JSON.stringify` does for a
/// well-formed string (Rust strings are always well-formed). Runs of bytes
/// needing no escape go out in one piece.
fn put_str(out: &mut impl Sink, s: &str) {
    out.byte(b'"');
    let bytes = s.as_bytes();
    if bytes.len() <= SHORT {
        // A byte at a time: cheaper than a copy call for the short strings
        // (names, choices) that make up most of a menu.
        for &b in bytes {
            match ESCAPE[usize::from(b)] {
                0 => out.byte(b),
                escape => put_escape(out, b, escape),
            }
        }
    } else {
        let mut rest = bytes;
        while let Some(i) = first_escape(rest) {
            out.put(&rest[..i]);
            put_escape(out, rest[i], ESCAPE[usize::from(rest[i])]);
            rest = &rest[i + 1..];
        }
        out.put(rest);
    }
    out.byte(b'"');
}

/// Strings up to this many bytes are written a byte at a time.
const SHORT: usize = 16;

fn put_escape(out: &mut impl Sink, b: u8, escape: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.byte(b'\\');
    if escape == b'u' {
        out.put(&[
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0x0f)],
        ]);
    } else {
        out.byte(escape);
    }
}

/// The index of the first byte of `bytes` that needs an escape. Skips eight
/// bytes at a time while none of them is a control character, `"` or `\`,
/// which is the common case for menu text.
fn first_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Exact as a yes/no test (Bit Twiddling Hacks, "haszero"/"hasless"):
    // is some byte of `w` below `n` (n <= 128)?
    let has_below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH != 0;
    let has_byte = |w: u64, b: u8| has_below(w ^ (ONES * u64::from(b)), 1);
    let mut skipped = 0;
    for chunk in bytes.chunks_exact(8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("chunks_exact(8) yields 8 bytes"));
        if has_below(w, 0x20) || has_byte(w, b'"') || has_byte(w, b'\\') {
            break;
        }
        skipped += 8;
    }
    bytes[skipped..]
        .iter()
        .position(|&b| ESCAPE[usize::from(b)] != 0)
        .map(|i| skipped + i)
}

fn put_u8(out: &mut impl Sink, n: u8) {
    if n >= 100 {
        out.byte(b'0' + n / 100);
    }
    if n >= 10 {
        out.byte(b'0' + n / 10 % 10);
    }
    out.byte(b'0' + n % 10);
}

fn put_option(out: &mut impl Sink, o: &CommandOption) {
    out.byte(b'[');
    put_str(out, &o.name);
    out.byte(b',');
    put_u8(out, o.kind.code());
    out.byte(b',');
    put_str(out, &o.description);
    out.put(if o.required { b",true,[" } else { b",false,[" });
    for (i, choice) in o.choices.iter().flatten().enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        put_str(out, choice);
    }
    out.put(b"]]");
}

fn put_command(out: &mut impl Sink, d: &CommandDeclaration) {
    out.byte(b'[');
    put_str(out, &d.name);
    out.byte(b',');
    put_str(out, &d.description);
    out.put(b",[");
    for (i, option) in d.options.iter().enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        put_option(out, option);
    }
    out.put(b"]]");
}

/// Writes the compact JSON of the menu made of `decls` in the given order.
fn put_menu<'a>(out: &mut impl Sink, decls: impl IntoIterator<Item = &'a CommandDeclaration>) {
    out.byte(b'[');
    for (i, decl) in decls.into_iter().enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        put_command(out, decl);
    }
    out.byte(b']');
}

/// The canonical order of command names: UTF-16 code units, as JavaScript's
/// `<` compares strings. For valid names (ASCII) this is plain byte order.
fn by_name(a: &CommandDeclaration, b: &CommandDeclaration) -> Ordering {
    let (a, b) = (a.name.as_str(), b.name.as_str());
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// The declarations in canonical order (a stable sort, so equal names keep
/// their declared order).
fn sorted<'a>(
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> Vec<&'a CommandDeclaration> {
    let mut sorted: Vec<_> = decls.into_iter().collect();
    sorted.sort_by(|a, b| by_name(a, b));
    sorted
}

/// The compact JSON of the canonical menu of `decls`.
fn menu_json_bytes<'a>(decls: impl IntoIterator<Item = &'a CommandDeclaration>) -> Vec<u8> {
    let sorted = sorted(decls);
    let mut out = Vec::with_capacity(estimated_len(&sorted));
    put_menu(&mut out, sorted);
    out
}

/// A capacity for the canonical JSON found without reading a byte of any
/// string: a few bytes over the exact length when no string needs an escape
/// (escapes only make the buffer grow once or twice).
fn estimated_len(decls: &[&CommandDeclaration]) -> usize {
    // `[]`; per command `["","",[]]` and a comma; per option
    // `["",0,"",false,[]]` and a comma; per choice `""` and a comma.
    2 + decls
        .iter()
        .map(|d| {
            11 + d.name.len()
                + d.description.len()
                + d.options
                    .iter()
                    .map(|o| {
                        19 + o.name.len()
                            + o.description.len()
                            + o.choices
                                .iter()
                                .flatten()
                                .map(|c| c.len() + 3)
                                .sum::<usize>()
                    })
                    .sum::<usize>()
        })
        .sum::<usize>()
}

/// The canonical menu of `decls` as owned values.
pub(crate) fn canonicalize_iter<'a>(
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> CanonicalMenu {
    sorted(decls)
        .into_iter()
        .map(|d| CanonicalCommand {
            name: d.name.clone(),
            description: d.description.clone(),
            options: d
                .options
                .iter()
                .map(|o| CanonicalOption {
                    name: o.name.clone(),
                    type_code: o.kind.code(),
                    description: o.description.clone(),
                    required: o.required,
                    choices: o.choices.clone().unwrap_or_default(),
                })
                .collect(),
        })
        .collect()
}

/// Size in bytes of the compact JSON of the canonical menu of `decls`,
/// computed without building it. Order does not change the size, so nothing
/// is sorted.
pub(crate) fn canonical_menu_len<'a>(
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> usize {
    let mut counter = ByteCounter(0);
    put_menu(&mut counter, decls);
    counter.0
}

/// The lower-case hex SHA-256 of the canonical menu of `decls`.
pub(crate) fn menu_hash_iter<'a>(
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> String {
    hex(&Sha256::digest(menu_json_bytes(decls)).into())
}

fn hex(bytes: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 64];
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0x0f)];
    }
    String::from_utf8(out.to_vec()).expect("hex digits are ASCII")
}

/// The canonical menu of `decls`: commands sorted by name (stable, so the
/// result does not depend on declaration order), options in declared order,
/// a missing `choices` as `[]`.
///
/// Names are ordered by UTF-16 code units, as JavaScript compares strings;
/// for valid (ASCII) names that is plain byte order. Nothing is validated.
///
/// ```
/// use botlane::{canonicalize_menu, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let menu = canonicalize_menu(&[
///     CommandDeclaration::new("roll", "Roll dice")
///         .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true)),
///     CommandDeclaration::new("ping", "Pong"),
/// ]);
/// assert_eq!(menu[0].name, "ping");
/// assert_eq!(menu[1].options[0].type_code, 2);
/// assert!(menu[1].options[0].choices.is_empty());
/// ```
pub fn canonicalize_menu(decls: &[CommandDeclaration]) -> CanonicalMenu {
    canonicalize_iter(decls)
}

/// The compact JSON of the canonical menu of `decls`: the exact bytes that
/// are published and hashed. It is byte-identical to JavaScript's
/// `JSON.stringify` of the same arrays (the same escapes: `\"`, `\\`, `\b`,
/// `\f`, `\n`, `\r`, `\t`, `\u00XX` for other control characters; everything
/// else, `/`, U+007F, U+2028 and U+2029 included, is written as is).
/// JavaScript strings may also hold lone surrogates, which `JSON.stringify`
/// writes as `\udXXX`; Rust strings cannot, so that case never arises.
///
/// ```
/// use botlane::{canonical_menu_json, CommandDeclaration, CommandOption, CommandOptionType};
///
/// let decls = [
///     CommandDeclaration::new("roll", "Roll \"dice\"")
///         .option(CommandOption::new("sides", "Sides", CommandOptionType::Integer).choices(["6", "20"])),
///     CommandDeclaration::new("ping", "Pong\n"),
/// ];
/// assert_eq!(
///     canonical_menu_json(&decls),
///     r#"[["ping","Pong\n",[]],["roll","Roll \"dice\"",[["sides",2,"Sides",false,["6","20"]]]]]"#
/// );
/// ```
pub fn canonical_menu_json(decls: &[CommandDeclaration]) -> String {
    canonical_menu_json_iter(decls)
}

/// [`canonical_menu_json`] over any iterator of declarations.
pub(crate) fn canonical_menu_json_iter<'a>(
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> String {
    String::from_utf8(menu_json_bytes(decls))
        .expect("the JSON writer copies whole UTF-8 strings and adds only ASCII")
}

/// The lower-case hex SHA-256 of [`canonical_menu_json`]. It is a
/// session-local skip guard and never goes on the wire (the server hashes the
/// payload it serialized itself).
///
/// ```
/// use botlane::{compute_menu_hash, CommandDeclaration};
/// use sha2::{Digest, Sha256};
///
/// let decls = [CommandDeclaration::new("ping", "Pong")];
/// let expected = Sha256::digest(br#"[["ping","Pong",[]]]"#);
/// let hex: String = expected.iter().map(|b| format!("{b:02x}")).collect();
/// assert_eq!(compute_menu_hash(&decls), hex);
///
/// // Declaration order does not matter; option order does.
/// let a = CommandDeclaration::new("a", "A");
/// let b = CommandDeclaration::new("b", "B");
/// assert_eq!(compute_menu_hash(&[a.clone(), b.clone()]), compute_menu_hash(&[b, a]));
/// ```
pub fn compute_menu_hash(decls: &[CommandDeclaration]) -> String {
    menu_hash_iter(decls)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::CommandOptionType;

    #[test]
    fn strings_escape_like_serde_json() {
        // serde_json and JSON.stringify agree on every escape (checked against
        // node by tests/pure/menu.rs); here every ASCII byte and a few others.
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é\u{2028}\u{2029}😀\u{10ffff}");
        for s in all
            .chars()
            .map(String::from)
            .chain([all.clone(), String::new()])
        {
            let mut out = Vec::new();
            put_str(&mut out, &s);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&s).unwrap()
            );
        }
    }

    #[test]
    fn first_escape_finds_every_escaped_byte_at_every_offset() {
        // Neighbours of the escaped bytes, and UTF-8 continuation bytes, must not trigger.
        let plain = "x !#[]~\u{7f}é😀";
        let filler: String = plain.chars().cycle().take(40).collect();
        assert_eq!(first_escape(filler.as_bytes()), None);
        for special in (0u8..0x20).chain([b'"', b'\\']) {
            for len in 0..40 {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    bytes.insert(at, special);
                    assert_eq!(
                        first_escape(&bytes),
                        Some(at),
                        "{special:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn small_integers() {
        for n in 0..=u8::MAX {
            let mut out = Vec::new();
            put_u8(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    #[test]
    fn estimate_is_a_close_upper_bound_without_escapes() {
        let decl = CommandDeclaration::new("roll", "Roll dice é")
            .option(CommandOption::new("count", "n", CommandOptionType::Integer).required(true))
            .option(
                CommandOption::new("sides", "s", CommandOptionType::Integer).choices(["6", "20"]),
            );
        let decls = [decl.clone(), CommandDeclaration::new("ping", "p")];
        let exact = canonical_menu_json(&decls).len();
        let estimate = estimated_len(&decls.iter().collect::<Vec<_>>());
        assert!(
            (exact..exact + 8).contains(&estimate),
            "{estimate} for {exact}"
        );
    }

    #[test]
    fn length_counter_matches_json() {
        let decls = [
            CommandDeclaration::new("b", "é\u{1}"),
            CommandDeclaration::new("a", "x"),
        ];
        assert_eq!(
            canonical_menu_len(&decls),
            canonical_menu_json(&decls).len()
        );
        assert_eq!(canonical_menu_len(&[]), 2);
    }

    #[test]
    fn names_order_like_javascript() {
        // U+FF5E sorts after U+1F600 in UTF-16 (0xFF5E > 0xD83D) though not by code point.
        let decls = [
            CommandDeclaration::new("\u{ff5e}", "x"),
            CommandDeclaration::new("\u{1f600}", "y"),
        ];
        let menu = canonicalize_menu(&decls);
        assert_eq!(menu[0].name, "\u{1f600}");
    }
}
