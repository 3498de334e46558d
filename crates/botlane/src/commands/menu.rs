//! The canonical menu published at login, and its SHA-256 skip guard.
//!
//! The canonical menu is made of arrays, not objects, so that its bytes (and
//! thus its hash) cannot depend on key order. Its compact JSON is
//! byte-identical to JavaScript's `JSON.stringify` of the same arrays (this is
//! checked against vectors generated with node, `tests/vectors/`).
//!
//! The hash is computed from a borrowed view of the declarations serialized
//! straight into the hasher: no string is cloned and no JSON text is built.

use std::cmp::Ordering;
use std::io;

use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::types::{CommandDeclaration, CommandOption};

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
        serialize_option(
            s,
            &self.name,
            self.type_code,
            &self.description,
            self.required,
            &self.choices,
        )
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
        serialize_command(s, &self.name, &self.description, &self.options)
    }
}

/// The canonical menu: every command, sorted by name; serializes to an array
/// of [`CanonicalCommand`] arrays.
pub type CanonicalMenu = Vec<CanonicalCommand>;

fn serialize_option<S: Serializer>(
    s: S,
    name: &str,
    type_code: u8,
    description: &str,
    required: bool,
    choices: &[String],
) -> Result<S::Ok, S::Error> {
    let mut t = s.serialize_tuple(5)?;
    t.serialize_element(name)?;
    t.serialize_element(&type_code)?;
    t.serialize_element(description)?;
    t.serialize_element(&required)?;
    t.serialize_element(choices)?;
    t.end()
}

fn serialize_command<S: Serializer, O: Serialize>(
    s: S,
    name: &str,
    description: &str,
    options: O,
) -> Result<S::Ok, S::Error> {
    let mut t = s.serialize_tuple(3)?;
    t.serialize_element(name)?;
    t.serialize_element(description)?;
    t.serialize_element(&options)?;
    t.end()
}

/// A declaration seen as its canonical array, without copying it.
struct CommandView<'a>(&'a CommandDeclaration);

/// An option seen as its canonical array.
struct OptionView<'a>(&'a CommandOption);

/// The options of a declaration as an array of canonical option arrays.
struct OptionsView<'a>(&'a [CommandOption]);

impl Serialize for OptionView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = self.0;
        let choices = o.choices.as_deref().unwrap_or_default();
        serialize_option(
            s,
            &o.name,
            o.kind.code(),
            &o.description,
            o.required,
            choices,
        )
    }
}

impl Serialize for OptionsView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(OptionView))
    }
}

impl Serialize for CommandView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        serialize_command(s, &d.name, &d.description, OptionsView(&d.options))
    }
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

/// Writes the compact JSON of the canonical menu of `decls` into `out`.
fn write_menu<'a, W: io::Write>(
    out: W,
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::new(out);
    ser.collect_seq(sorted(decls).into_iter().map(CommandView))
        .map_err(io::Error::from)
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
    let mut ser = serde_json::Serializer::new(&mut counter);
    ser.collect_seq(decls.into_iter().map(CommandView))
        .expect("serializing strings, small integers and booleans into a counter cannot fail");
    counter.0
}

/// The lower-case hex SHA-256 of the canonical menu of `decls`.
pub(crate) fn menu_hash_iter<'a>(
    decls: impl IntoIterator<Item = &'a CommandDeclaration>,
) -> String {
    let mut writer = HashWriter::default();
    write_menu(&mut writer, decls)
        .expect("serializing strings, small integers and booleans into a hasher cannot fail");
    hex(&writer.finish())
}

/// Counts the bytes written to it.
struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Feeds a SHA-256 through a small buffer: the JSON serializer writes many
/// pieces of a few bytes each, and one hasher update per piece costs more
/// than copying it.
struct HashWriter {
    hasher: Sha256,
    buf: [u8; HASH_BUF],
    len: usize,
}

/// A multiple of SHA-256's 64-byte block, so full flushes never leave a
/// partial block in the hasher.
const HASH_BUF: usize = 512;

impl Default for HashWriter {
    fn default() -> Self {
        Self {
            hasher: Sha256::new(),
            buf: [0; HASH_BUF],
            len: 0,
        }
    }
}

impl HashWriter {
    fn finish(mut self) -> [u8; 32] {
        self.hasher.update(&self.buf[..self.len]);
        self.hasher.finalize().into()
    }
}

impl io::Write for HashWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.len + data.len() <= HASH_BUF {
            self.buf[self.len..self.len + data.len()].copy_from_slice(data);
            self.len += data.len();
        } else {
            self.hasher.update(&self.buf[..self.len]);
            self.len = 0;
            if data.len() >= HASH_BUF {
                self.hasher.update(data);
            } else {
                self.buf[..data.len()].copy_from_slice(data);
                self.len = data.len();
            }
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
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
    let mut out = Vec::with_capacity(canonical_menu_len(decls));
    write_menu(&mut out, decls)
        .expect("serializing strings, small integers and booleans into a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes valid UTF-8")
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
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn hash_writer_matches_one_shot_digest_for_any_split() {
        let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        let expected: [u8; 32] = Sha256::digest(&data).into();
        for piece in [1, 3, 63, 64, 65, 511, 512, 513, 2999] {
            let mut w = HashWriter::default();
            for chunk in data.chunks(piece) {
                w.write_all(chunk).unwrap();
            }
            assert_eq!(w.finish(), expected, "pieces of {piece}");
        }
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
