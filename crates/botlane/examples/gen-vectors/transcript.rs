//! Turning recorded events into a transcript file: random values replaced
//! by marked placeholders, sealed payloads annotated with their plaintext,
//! and the comparison that check mode uses (modulo the legal reorderings).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::relay::{Event, Payload};

/// What every transcript says about order.
pub(crate) const REORDERINGS: &str = "Frames on one connection in one direction keep the order shown, and so do the replies of one opcode (positional correlation). Everything else may interleave differently: the two directions of a connection, different connections, replies of different opcodes relative to each other, and pushes relative to replies, subject only to causality (a reply follows its request; a push caused by a request follows that request). HTTP requests are independent of the WebSocket frames, except that an exchange follows the 638 reply that carried its secret. gen-vectors --check compares transcripts exactly this way: per connection, direction and opcode.";

/// Values known before the run, with the placeholder that replaces them.
#[derive(Default)]
pub(crate) struct Known {
    values: Vec<(String, String, String)>,
    /// Fixed values written as themselves where a random one would be
    /// numbered (such as a content that cannot be a sealed payload).
    literals: Vec<String>,
}

impl Known {
    /// Replaces `real` by `<placeholder>` everywhere, with its description.
    pub(crate) fn add(&mut self, real: &str, placeholder: &str, description: &str) {
        self.values.push((
            real.to_owned(),
            format!("<{placeholder}>"),
            description.to_owned(),
        ));
    }

    /// Keeps `literal` as itself wherever it appears.
    pub(crate) fn keep(&mut self, literal: &str) {
        self.literals.push(literal.to_owned());
    }
}

/// Kinds of values that are numbered as they first appear.
const NUMBERED: [(&str, &str); 8] = [
    ("sealed", "a sealed payload (docs/crypto.md section 1): standard base64 of nonce(12) || ciphertext || tag(16), the channel id as associated data; its plaintext is under 'sealed'"),
    ("message-id", "a message id assigned by the service (a UUID v4)"),
    ("ephemeral-key", "the ephemeral X25519 public key of a wrapped channel key (standard base64, 32 bytes)"),
    ("wrapped-key", "a wrapped channel key (docs/crypto.md section 2): standard base64 of nonce(12) || encrypted key(32) || tag(16)"),
    ("secret", "a one-time REST secret from op 638: 32 random bytes, base64url without padding (43 characters)"),
    ("row-id", "the id of a REST credential row (a UUID v4)"),
    ("verification", "a REST credential, the value of the verification header: 32 random bytes, base64url without padding"),
    ("file-id", "a file id (a UUID v4)"),
];

const CREATED_AT: &str = "<created-at>";
const CREATED_AT_ABOUT: &str = "in place of an integer: milliseconds since the Unix epoch, assigned by the service, never decreasing within a channel";

/// The numbered kind of a string found under `key` (in an array under `parent`).
fn kind_of(key: &str, parent: &str) -> Option<&'static str> {
    Some(match (key, parent) {
        ("content" | "command", _) => "sealed",
        ("id", "files") => "file-id",
        ("id" | "message_id" | "reply_to", _) => "message-id",
        ("ephemeral", _) => "ephemeral-key",
        ("ciphertext", _) => "wrapped-key",
        ("secret", _) => "secret",
        ("row_id", _) => "row-id",
        ("verification", _) => "verification",
        _ => return None,
    })
}

/// Whether a string left in a transcript looks like a random value that
/// should have been replaced (a UUID, a key, a token, base64 of random bytes).
fn looks_random(s: &str) -> bool {
    let uuid = s.len() == 36 && s.bytes().filter(|b| *b == b'-').count() == 4;
    let opaque = s.len() >= 20
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=_-".contains(&b))
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_alphabetic());
    uuid || opaque
}

/// The substitution of one transcript.
struct Placeholders<'a> {
    known: &'a Known,
    plaintexts: &'a HashMap<String, String>,
    assigned: Vec<(String, String)>,
    counters: HashMap<&'static str, usize>,
    used: BTreeMap<String, String>,
    sealed: Vec<(String, String)>,
    created_at: bool,
}

impl Placeholders<'_> {
    fn placeholder(&self, real: &str) -> Option<&str> {
        self.known
            .values
            .iter()
            .map(|(r, p, _)| (r, p))
            .chain(self.assigned.iter().map(|(r, p)| (r, p)))
            .find(|(r, _)| *r == real)
            .map(|(_, p)| p.as_str())
    }

    fn note_use(&mut self, placeholder: &str, about: &str) {
        self.used
            .entry(placeholder.to_owned())
            .or_insert_with(|| about.to_owned());
    }

    /// Registers every replaceable string of `value` (found under `key`).
    fn scan(&mut self, value: &Value, key: &str, parent: &str) -> Result<(), String> {
        match value {
            Value::String(s) => self.scan_string(s, key, parent),
            Value::Array(items) => items.iter().try_for_each(|v| self.scan(v, key, key)),
            Value::Object(map) => {
                if map.contains_key("created_at") {
                    self.created_at = true;
                }
                map.iter().try_for_each(|(k, v)| self.scan(v, k, key))
            }
            _ => Ok(()),
        }
    }

    fn scan_string(&mut self, s: &str, key: &str, parent: &str) -> Result<(), String> {
        if self.known.literals.iter().any(|l| l == s) {
            return Ok(());
        }
        if let Some((_, placeholder, about)) = self.known.values.iter().find(|(r, _, _)| r == s) {
            let (placeholder, about) = (placeholder.clone(), about.clone());
            self.note_use(&placeholder, &about);
            return Ok(());
        }
        if let Some(placeholder) = self.placeholder(s).map(str::to_owned) {
            let about = self.used.get(&placeholder).cloned();
            self.note_use(&placeholder, &about.unwrap_or_default());
            return Ok(());
        }
        let Some(kind) = kind_of(key, parent) else {
            if looks_random(s) {
                return Err(format!(
                    "the value under {key:?} looks random and has no placeholder"
                ));
            }
            return Ok(());
        };
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        let placeholder = format!("<{kind}-{n}>");
        let about = NUMBERED
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or("", |(_, about)| *about);
        self.assigned.push((s.to_owned(), placeholder.clone()));
        self.note_use(&placeholder, about);
        if kind == "sealed" {
            let plaintext = self
                .plaintexts
                .get(s)
                .ok_or_else(|| format!("no plaintext is known for {placeholder}"))?;
            self.sealed.push((placeholder, plaintext.clone()));
        }
        Ok(())
    }

    /// `text` with every registered value replaced (JSON text: whole string
    /// values only; `created_at` numbers too).
    fn apply_json(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (real, placeholder) in self.pairs() {
            out = out.replace(&format!("\"{real}\""), &format!("\"{placeholder}\""));
        }
        // A random value inside a longer string (an id in an error message)
        // too; padding such as "AAAA…" is never random-looking, so it is
        // replaced only whole, above.
        for (real, placeholder) in self.pairs() {
            if looks_random(real) {
                out = out.replace(real, placeholder);
            }
        }
        replace_created_at(&out)
    }

    /// `text` with every registered value replaced as a substring (a URL path).
    fn apply_raw(&self, text: &str) -> String {
        self.pairs()
            .fold(text.to_owned(), |out, (real, placeholder)| {
                out.replace(real, placeholder)
            })
    }

    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.known
            .values
            .iter()
            .map(|(r, p, _)| (r.as_str(), p.as_str()))
            .chain(self.assigned.iter().map(|(r, p)| (r.as_str(), p.as_str())))
    }
}

/// `"created_at":<digits>` → `"created_at":"<created-at>"`.
fn replace_created_at(text: &str) -> String {
    const KEY: &str = "\"created_at\":";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let after = &rest[at + KEY.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..at + KEY.len()]);
        if digits > 0 {
            out.push_str(&format!("\"{CREATED_AT}\""));
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[derive(Serialize)]
struct Http {
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<Box<RawValue>>,
}

#[derive(Serialize)]
struct Close {
    code: u16,
    reason: String,
}

#[derive(Serialize)]
struct OutEvent {
    conn: String,
    dir: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    binary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    close: Option<Close>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http: Option<Http>,
}

/// What each event holds, written into every transcript.
const EVENTS: [(&str, &str); 7] = [
    ("conn", "the connection, named in 'connections'"),
    ("dir", "'to_service' (sent by the client) or 'to_client' (sent by the service)"),
    ("frame", "a WebSocket text frame: a JSON object with no key twice, its 'op' an integer in 0..=65535, exactly as sent (placeholders aside)"),
    ("text", "a WebSocket text frame that is not such an object, as a JSON string: not JSON, not an object, a key twice (at any depth), 'op' missing or out of range"),
    ("binary", "a WebSocket binary frame: its bytes in lower-case hex"),
    ("close", "the close frame that began the closing handshake: code and reason (the other end's echo is not recorded; a connection dropped without one has none)"),
    ("http", "an HTTP request (method, target, headers, body) or response (status, headers, body); only the headers content-type, verification, cache-control and authorization are kept"),
];

#[derive(Serialize)]
struct File<'a> {
    about: &'a str,
    scenario: &'a [&'a str],
    connections: BTreeMap<&'a str, &'a str>,
    events_hold: BTreeMap<&'a str, &'a str>,
    reorderings: &'a str,
    placeholders: BTreeMap<String, String>,
    sealed: BTreeMap<String, String>,
    generator: &'a str,
    events: Vec<OutEvent>,
}

/// What a transcript file says besides its events.
pub(crate) struct Header<'a> {
    pub(crate) about: &'a str,
    pub(crate) scenario: &'a [&'a str],
    pub(crate) connections: &'a [(&'a str, &'a str)],
}

fn raw(text: String) -> Result<Box<RawValue>, String> {
    RawValue::from_string(text).map_err(|e| format!("not JSON after substitution: {e}"))
}

/// A body as JSON: itself when it is JSON, else a JSON string.
fn body_json(body: &str) -> String {
    if serde_json::from_str::<Value>(body).is_ok() {
        body.to_owned()
    } else {
        Value::String(body.to_owned()).to_string()
    }
}

/// The transcript file of `events`.
pub(crate) fn render(
    header: &Header<'_>,
    events: &[Event],
    known: &Known,
    plaintexts: &HashMap<String, String>,
) -> Result<String, String> {
    let mut p = Placeholders {
        known,
        plaintexts,
        assigned: Vec::new(),
        counters: HashMap::new(),
        used: BTreeMap::new(),
        sealed: Vec::new(),
        created_at: false,
    };
    for event in events {
        let parsed = match &event.payload {
            Payload::Frame(text) if crate::strict::parse(text).is_none() => None,
            Payload::Frame(text) => Some(text.clone()),
            Payload::Request { body, target, .. } => {
                for (real, _, _) in &known.values {
                    if target.contains(real.as_str()) {
                        p.scan_string(real, "", "")?;
                    }
                }
                Some(body_json(body))
            }
            Payload::Response { body, .. } => Some(body_json(body)),
            Payload::Binary(_) | Payload::Close { .. } => None,
        };
        if let Some(text) = parsed {
            let value: Value =
                serde_json::from_str(&text).map_err(|e| format!("recorded frame: {e}"))?;
            p.scan(&value, "", "")?;
        }
        if let Payload::Request { headers, .. } | Payload::Response { headers, .. } = &event.payload
        {
            for (name, value) in headers {
                p.scan_string(value, name, "")?;
            }
        }
    }
    let mut out = Vec::with_capacity(events.len());
    for event in events {
        let mut item = OutEvent {
            conn: event.conn.clone(),
            dir: event.dir.as_str(),
            frame: None,
            text: None,
            binary: None,
            close: None,
            http: None,
        };
        match &event.payload {
            Payload::Frame(text) if crate::strict::is_sound_frame(text) => {
                item.frame = Some(raw(p.apply_json(text))?);
            }
            Payload::Frame(text) => {
                let shown = p.apply_raw(text);
                if shown
                    .split(|c: char| !c.is_ascii_alphanumeric() && !"+/=_-".contains(c))
                    .any(looks_random)
                {
                    return Err(format!("a random value is left in the text frame {shown}"));
                }
                item.text = Some(shown);
            }
            Payload::Binary(bytes) => {
                item.binary = Some(bytes.iter().map(|b| format!("{b:02x}")).collect());
            }
            Payload::Close { code, reason } => {
                item.close = Some(Close {
                    code: *code,
                    reason: reason.clone(),
                });
            }
            Payload::Request {
                method,
                target,
                headers,
                body,
            } => {
                let target = p.apply_raw(target);
                if target.split(['/', '?', '=', '&', ',']).any(looks_random) {
                    return Err(format!(
                        "a random value is left in the request target {target}"
                    ));
                }
                item.http = Some(Http {
                    method: Some(method.clone()),
                    target: Some(target),
                    status: None,
                    headers: headers
                        .iter()
                        .map(|(k, v)| (k.clone(), p.apply_raw(v)))
                        .collect(),
                    body: (!body.is_empty())
                        .then(|| raw(p.apply_json(&body_json(body))))
                        .transpose()?,
                });
            }
            Payload::Response {
                status,
                headers,
                body,
            } => {
                item.http = Some(Http {
                    method: None,
                    target: None,
                    status: Some(*status),
                    headers: headers
                        .iter()
                        .map(|(k, v)| (k.clone(), p.apply_raw(v)))
                        .collect(),
                    body: (!body.is_empty())
                        .then(|| raw(p.apply_json(&body_json(body))))
                        .transpose()?,
                });
            }
        }
        out.push(item);
    }
    let mut sealed = BTreeMap::new();
    for (placeholder, plaintext) in p.sealed.clone() {
        let shown = p.apply_raw(&plaintext);
        if shown
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .any(looks_random)
        {
            return Err(format!(
                "a random value is left in the plaintext of {placeholder}"
            ));
        }
        for (_, inner, about) in &known.values {
            if shown.contains(inner.as_str()) {
                p.note_use(inner, about);
            }
        }
        sealed.insert(placeholder, shown);
    }
    // A known value may show inside a longer string, such as a header's
    // `Bearer <admin-token>`: every placeholder that shows is explained.
    let shown = serde_json::to_string(&out).map_err(|e| format!("events: {e}"))?;
    for (_, placeholder, about) in &known.values {
        if shown.contains(placeholder.as_str()) {
            p.note_use(placeholder, about);
        }
    }
    let mut placeholders: BTreeMap<String, String> = p.used.into_iter().collect();
    if p.created_at {
        placeholders.insert(CREATED_AT.to_owned(), CREATED_AT_ABOUT.to_owned());
    }
    let file = File {
        about: header.about,
        scenario: header.scenario,
        connections: header.connections.iter().copied().collect(),
        events_hold: EVENTS.into_iter().collect(),
        reorderings: REORDERINGS,
        placeholders,
        sealed,
        generator: crate::GENERATOR,
        events: out,
    };
    crate::pretty(&file)
}

/// The events of a transcript grouped the way order is guaranteed: per
/// connection, direction and opcode (or HTTP, or close).
fn projection(text: &str) -> Result<(Value, BTreeMap<String, Vec<Value>>), String> {
    let mut file: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let events = file
        .as_object_mut()
        .and_then(|o| o.remove("events"))
        .ok_or("no events")?;
    let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for event in events.as_array().ok_or("events is not an array")? {
        let what = if let Some(op) = event["frame"]["op"].as_u64() {
            format!("op {op}")
        } else if event.get("http").is_some() {
            "http".to_owned()
        } else if event.get("close").is_some() {
            "close".to_owned()
        } else {
            // Text and binary frames of no opcode keep their order among themselves.
            "other".to_owned()
        };
        let key = format!("{} {} {what}", event["conn"], event["dir"]);
        groups.entry(key).or_default().push(event.clone());
    }
    Ok((file, groups))
}

/// Whether two transcripts are the same modulo the legal reorderings; the
/// first difference otherwise.
pub(crate) fn same_modulo_reordering(old: &str, new: &str) -> Result<(), String> {
    let (old_header, old_groups) = projection(old)?;
    let (new_header, new_groups) = projection(new)?;
    for (key, value) in new_header.as_object().into_iter().flatten() {
        if old_header.get(key) != Some(value) {
            return Err(format!("field {key:?} differs"));
        }
    }
    if old_header.as_object().map(|o| o.len()) != new_header.as_object().map(|o| o.len()) {
        return Err("the file has other top-level fields".into());
    }
    for key in old_groups.keys().chain(new_groups.keys()) {
        let (a, b) = (old_groups.get(key), new_groups.get(key));
        if a != b {
            let (a, b) = (
                a.map_or(&[][..], Vec::as_slice),
                b.map_or(&[][..], Vec::as_slice),
            );
            let at = a
                .iter()
                .zip(b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            return Err(format!(
                "events {key} differ at #{at}: file has {}, generator computes {}",
                a.get(at).map_or("nothing".into(), ToString::to_string),
                b.get(at).map_or("nothing".into(), ToString::to_string)
            ));
        }
    }
    Ok(())
}
