//! botlane against the language-neutral vectors of `docs/vectors/`.
//!
//! Each file records inputs and the results every implementation must
//! reproduce; here botlane's public API is run on the inputs and its results
//! are compared, as values, with the recorded ones. The files are written by
//! `cargo run -p botlane --example gen-vectors` (text grammar, sidecars,
//! transcripts) and by node (`docs/vectors/gen-menus.mjs`,
//! `gen-crypto.mjs`); the menu vectors are checked by `menu.rs`.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use botlane::crypto::{ChannelKey, CryptoError, IdentityKeyPair, WrappedKey};
use botlane::framework::usage_line;
use botlane::{
    decode_command_data, encode_command_data, format_invocation_text, match_command_name,
    parse_invocation_text, CommandArgValue, CommandArgs, CommandData, CommandDeclaration,
    CommandRegistry, FormatError, ParseError, ParseErrorKind,
};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = format!("{}/../../docs/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cases<'a>(file: &'a Value, section: &str, at_least: usize) -> &'a [Value] {
    let cases = file[section]
        .as_array()
        .unwrap_or_else(|| panic!("no section {section}"));
    assert!(
        cases.len() >= at_least,
        "section {section} lost cases: {} left",
        cases.len()
    );
    cases
}

fn text<'a>(case: &'a Value, field: &str) -> &'a str {
    case[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} is not a string in {case}"))
}

/// `{"count": {"integer": 2}}` → the argument map it spells.
fn typed_args(value: &Value) -> CommandArgs {
    value
        .as_object()
        .unwrap_or_else(|| panic!("args must be an object: {value}"))
        .iter()
        .map(|(key, typed)| {
            let (kind, v) = typed.as_object().unwrap().iter().next().unwrap();
            let value = match kind.as_str() {
                "integer" => CommandArgValue::Integer(v.as_i64().unwrap()),
                "number" => CommandArgValue::Number(v.as_f64().unwrap()),
                "boolean" => CommandArgValue::Boolean(v.as_bool().unwrap()),
                "string" => CommandArgValue::String(v.as_str().unwrap().to_owned()),
                other => panic!("unknown typed value {other}"),
            };
            (key.clone(), value)
        })
        .collect()
}

/// Argument maps equal value for value; numbers by bits, so `-0` and `0` differ.
fn assert_same_args(actual: &CommandArgs, expected: &CommandArgs, what: &str) {
    let bits = |args: &CommandArgs| -> BTreeMap<String, String> {
        args.iter()
            .map(|(k, v)| {
                let shown = match v {
                    CommandArgValue::Number(n) => format!("number {:#x}", n.to_bits()),
                    other => format!("{other:?}"),
                };
                (k.clone(), shown)
            })
            .collect()
    };
    assert_eq!(bits(actual), bits(expected), "{what}");
}

fn declarations(file: &Value) -> BTreeMap<String, CommandDeclaration> {
    file["declarations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, d)| (name.clone(), serde_json::from_value(d.clone()).unwrap()))
        .collect()
}

fn parse_kind_name(kind: &ParseErrorKind) -> &'static str {
    match kind {
        ParseErrorKind::NotThisCommand => "NotThisCommand",
        ParseErrorKind::UnterminatedQuote => "UnterminatedQuote",
        ParseErrorKind::TextAfterClosingQuote => "TextAfterClosingQuote",
        ParseErrorKind::EmptyNamedValue => "EmptyNamedValue",
        ParseErrorKind::PositionalAfterNamed => "PositionalAfterNamed",
        ParseErrorKind::DuplicateOption => "DuplicateOption",
        ParseErrorKind::ExtraArgument => "ExtraArgument",
        ParseErrorKind::MissingRequired => "MissingRequired",
        ParseErrorKind::InvalidValue { .. } => "InvalidValue",
        ParseErrorKind::NotInChoices { .. } => "NotInChoices",
        _ => "a kind the vectors do not know",
    }
}

fn check_parse_error(error: &ParseError, expected: &Value, what: &str) {
    assert_eq!(
        parse_kind_name(error.kind()),
        text(expected, "kind"),
        "{what}"
    );
    assert_eq!(error.option(), expected["option"].as_str(), "{what}");
    let span = expected["span"].as_array().unwrap();
    let span = span[0].as_u64().unwrap()..span[1].as_u64().unwrap();
    assert_eq!(
        (error.span().start as u64)..(error.span().end as u64),
        span,
        "{what}"
    );
    assert_eq!(error.usage(), text(expected, "usage"), "{what}");
    match error.kind() {
        ParseErrorKind::InvalidValue { expected: kind } => {
            assert_eq!(kind.as_str(), text(expected, "expected"), "{what}");
        }
        ParseErrorKind::NotInChoices { choices } => {
            let listed: Vec<String> = serde_json::from_value(expected["choices"].clone()).unwrap();
            assert_eq!(choices, &listed, "{what}");
        }
        _ => assert!(expected.get("expected").is_none() && expected.get("choices").is_none()),
    }
}

fn check_format_error(error: &FormatError, expected: &Value, what: &str) {
    let (kind, option) = match error {
        FormatError::UnknownOption { option, .. } => ("UnknownOption", option),
        FormatError::MissingRequired { option, .. } => ("MissingRequired", option),
        FormatError::NotInChoices {
            option, choices, ..
        } => {
            let listed: Vec<String> = serde_json::from_value(expected["choices"].clone()).unwrap();
            assert_eq!(choices, &listed, "{what}");
            ("NotInChoices", option)
        }
        FormatError::WrongType {
            option,
            expected: e,
            ..
        } => {
            assert_eq!(e.as_str(), text(expected, "expected"), "{what}");
            ("WrongType", option)
        }
        other => panic!("{what}: a format error the vectors do not know: {other}"),
    };
    assert_eq!(kind, text(expected, "kind"), "{what}");
    assert_eq!(option, text(expected, "option"), "{what}");
}

#[test]
fn text_grammar_matches_names_and_usage_lines() {
    let file = load("text-grammar.json");
    let decls = declarations(&file);
    for case in cases(&file, "match", 15) {
        let got = match_command_name(text(case, "line"), Some(text(case, "prefix")));
        assert_eq!(got.as_deref(), case["expect"].as_str(), "match {case}");
    }
    for case in cases(&file, "usage", 3) {
        let decl = &decls[text(case, "decl")];
        assert_eq!(
            usage_line(decl, Some(text(case, "prefix"))),
            text(case, "expect"),
            "usage {case}"
        );
    }
}

#[test]
fn text_grammar_parses_every_line_as_recorded() {
    let file = load("text-grammar.json");
    let decls = declarations(&file);
    for case in cases(&file, "parse", 60) {
        let what = format!("parse {case}");
        let result = parse_invocation_text(
            &decls[text(case, "decl")],
            text(case, "line"),
            Some(text(case, "prefix")),
        );
        match (result, case["expect"].get("args")) {
            (Ok(args), Some(expected)) => assert_same_args(&args, &typed_args(expected), &what),
            (Err(error), None) => check_parse_error(&error, &case["expect"]["error"], &what),
            (other, _) => panic!("{what}: got {other:?}"),
        }
    }
}

#[test]
fn text_grammar_formats_every_argument_map_as_recorded() {
    let file = load("text-grammar.json");
    let decls = declarations(&file);
    for case in cases(&file, "format", 30) {
        let what = format!("format {case}");
        let decl = &decls[text(case, "decl")];
        let args = typed_args(&case["args"]);
        let prefix = text(case, "prefix");
        match (
            format_invocation_text(decl, &args, Some(prefix)),
            case["expect"].get("line"),
        ) {
            (Ok(line), Some(expected)) => {
                assert_eq!(line, expected.as_str().unwrap(), "{what}");
                // The law of the grammar, on every recorded line.
                let back = parse_invocation_text(decl, &line, Some(prefix)).unwrap();
                assert_same_args(&back, &args, &what);
            }
            (Err(error), None) => check_format_error(&error, &case["expect"]["error"], &what),
            (other, _) => panic!("{what}: got {other:?}"),
        }
    }
}

/// Every example line of docs/text-grammar.md is a recorded parse case, and
/// both lines written back there are recorded format results.
#[test]
fn text_grammar_vectors_cover_every_example_of_the_docs() {
    let doc = include_str!("../../../../docs/text-grammar.md");
    let examples = doc
        .split("## Examples")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let lines: Vec<&str> = examples
        .lines()
        .filter_map(|row| row.strip_prefix("| `"))
        .filter_map(|row| row.split("` |").next())
        .collect();
    assert!(lines.len() >= 11, "the examples table moved: {lines:?}");
    let file = load("text-grammar.json");
    let recorded: Vec<&str> = cases(&file, "parse", 1)
        .iter()
        .filter(|c| text(c, "decl") == "roll" && text(c, "prefix") == "/")
        .map(|c| text(c, "line"))
        .collect();
    for line in lines {
        assert!(
            recorded.contains(&line),
            "docs example {line:?} is not in text-grammar.json"
        );
    }
    let written: Vec<&str> = cases(&file, "format", 1)
        .iter()
        .filter_map(|c| c["expect"]["line"].as_str())
        .collect();
    for line in ["/roll 2 label:\"fire damage\"", "/roll 2 6 fire damage"] {
        assert!(doc.contains(&format!("`{line}`")), "docs lost {line}");
        assert!(
            written.contains(&line),
            "{line:?} is not in text-grammar.json"
        );
    }
}

fn registry_of(file: &Value) -> CommandRegistry {
    let mut registry = CommandRegistry::new();
    for decl in cases(file, "registry", 1) {
        let decl: CommandDeclaration = serde_json::from_value(decl.clone()).unwrap();
        registry
            .register(decl, |_ctx| async { Ok::<(), std::io::Error>(()) })
            .unwrap();
    }
    registry
}

fn check_decoded(actual: Option<CommandData>, expected: &Value, what: &str) {
    match actual {
        None => assert!(expected.is_null(), "{what}: refused, recorded {expected}"),
        Some(data) => {
            assert!(
                !expected.is_null(),
                "{what}: decoded {data:?}, recorded null"
            );
            assert_eq!(data.bot_id, text(expected, "bot"), "{what}");
            assert_eq!(data.name, text(expected, "name"), "{what}");
            assert_same_args(&data.args, &typed_args(&expected["args"]), what);
        }
    }
}

#[test]
fn sidecars_decode_as_recorded() {
    let file = load("sidecars.json");
    let registry = registry_of(&file);
    let decode = cases(&file, "decode", 40);
    for case in decode {
        let what = format!("sidecar {:?}", text(case, "name"));
        let json = text(case, "json");
        check_decoded(decode_command_data(json, None), &case["decoded"], &what);
        check_decoded(
            decode_command_data(json, Some(&registry)),
            &case["with_registry"],
            &what,
        );
        let refused = case["decoded"].is_null() || case["with_registry"].is_null();
        assert_eq!(
            refused,
            case.get("why").is_some(),
            "{what}: a refusal states why"
        );
    }
    // Both outcomes are represented in each column.
    for column in ["decoded", "with_registry"] {
        assert!(decode.iter().any(|c| c[column].is_null()));
        assert!(decode.iter().any(|c| !c[column].is_null()));
    }
}

#[test]
fn sidecars_encode_as_recorded() {
    let file = load("sidecars.json");
    for case in cases(&file, "encode", 3) {
        let data = CommandData {
            bot_id: text(&case["data"], "bot_id").to_owned(),
            name: text(&case["data"], "name").to_owned(),
            args: typed_args(&case["data"]["args"]),
        };
        let encoded = encode_command_data(&data);
        assert_eq!(encoded, text(case, "expect"), "encode {case}");
        let back = decode_command_data(&encoded, None).unwrap();
        assert_same_args(&back.args, &data.args, "encode round trip");
    }
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn key32(case: &Value, field: &str) -> [u8; 32] {
    unhex(text(case, field)).try_into().unwrap()
}

fn crypto_kind(error: &CryptoError) -> &'static str {
    match error {
        CryptoError::Base64 { .. } => "base64",
        CryptoError::Length { .. } => "length",
        CryptoError::Decrypt => "decrypt",
        CryptoError::LowOrderKey { .. } => "low_order",
        _ => "a kind the vectors do not know",
    }
}

#[test]
fn crypto_vectors_open_and_refuse_as_recorded() {
    let file = load("crypto.json");
    for case in cases(&file, "seal", 5) {
        let key = ChannelKey::from_bytes(key32(case, "key"));
        let opened = key
            .open(text(case, "wire"), text(case, "aad").as_bytes())
            .unwrap();
        assert_eq!(opened, unhex(text(case, "plaintext")), "seal {case}");
        // nonce || ciphertext || tag: the recorded nonce comes first.
        let raw = BASE64.decode(text(case, "wire")).unwrap();
        assert_eq!(raw[..12], unhex(text(case, "nonce")), "seal {case}");
        assert_eq!(raw.len(), 12 + opened.len() + 16, "seal {case}");
    }
    for case in cases(&file, "open_failures", 15) {
        let key = ChannelKey::from_bytes(key32(case, "key"));
        let error = key
            .open(text(case, "wire"), text(case, "aad").as_bytes())
            .unwrap_err();
        assert_eq!(crypto_kind(&error), text(case, "error"), "open {case}");
    }
}

#[test]
fn crypto_vectors_unwrap_and_refuse_as_recorded() {
    let file = load("crypto.json");
    for case in cases(&file, "wrap", 2) {
        let bot = IdentityKeyPair::from_secret_bytes(key32(case, "recipient_secret"));
        assert_eq!(
            bot.public_key().as_bytes(),
            &key32(case, "recipient_public")
        );
        let wrapped: WrappedKey = serde_json::from_value(case["wrapped"].clone()).unwrap();
        assert_eq!(
            BASE64.decode(&wrapped.ephemeral).unwrap(),
            unhex(text(case, "ephemeral_public"))
        );
        let channel_id = text(case, "channel_id");
        let key = bot.unwrap_channel_key(&wrapped, channel_id).unwrap();
        // The unwrapped key is the recorded one: it opens what that key seals.
        let sealed = ChannelKey::from_bytes(key32(case, "channel_key"))
            .seal(b"probe", channel_id.as_bytes())
            .unwrap();
        assert_eq!(
            key.open(&sealed, channel_id.as_bytes()).unwrap(),
            b"probe",
            "wrap {case}"
        );
    }
    for case in cases(&file, "unwrap_failures", 10) {
        let bot = IdentityKeyPair::from_secret_bytes(key32(case, "recipient_secret"));
        let wrapped: WrappedKey = serde_json::from_value(case["wrapped"].clone()).unwrap();
        let error = bot
            .unwrap_channel_key(&wrapped, text(case, "channel_id"))
            .unwrap_err();
        assert_eq!(crypto_kind(&error), text(case, "error"), "unwrap {case}");
    }
}

/// Every event of every transcript, by file name.
fn transcript_events() -> Vec<(String, Value)> {
    let dir = format!(
        "{}/../../docs/vectors/transcripts",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "transcripts missing: {names:?}");
    let mut events = Vec::new();
    for name in names {
        let file = load(&format!("transcripts/{name}"));
        for event in file["events"].as_array().unwrap() {
            events.push((name.clone(), event.clone()));
        }
    }
    events
}

/// Every recorded frame of every transcript, with its connection and direction.
fn transcript_frames() -> Vec<(String, String, String, Value)> {
    transcript_events()
        .into_iter()
        .filter_map(|(name, event)| {
            let frame = event.get("frame")?.clone();
            Some((
                name,
                text(&event, "conn").to_owned(),
                text(&event, "dir").to_owned(),
                frame,
            ))
        })
        .collect()
}

/// The frame re-encoded by botlane after decoding its payload as `T`.
fn reencoded<T: serde::Serialize + serde::de::DeserializeOwned>(op: u16, text: &str) -> String {
    let frame = botlane_proto::decode_frame(text).unwrap();
    let payload: T = botlane_proto::decode_payload(op, frame.d)
        .unwrap_or_else(|e| panic!("op {op} does not decode: {e}: {text}"));
    botlane_proto::encode_frame(botlane_proto::OpCode::from(op).unwrap(), &payload)
}

/// Decodes a recorded frame with the `botlane_proto` payload type of its opcode and
/// direction and writes it back; the text must not change.
fn wire_round_trip(dir: &str, text: &str) -> String {
    use botlane_proto::payload::*;
    use botlane_proto::{decode_frame, decode_payload, OpCode};
    let value: Value = serde_json::from_str(text).unwrap();
    let op = u16::try_from(value["op"].as_u64().unwrap()).unwrap();
    let refused = value["d"]["code"].as_i64().is_some_and(|c| c != 0);
    if OpCode::from(op).is_none() {
        // The service's answer on an opcode botlane does not know.
        assert!(refused, "only a refusal comes on an unknown opcode: {text}");
        let frame = decode_frame(text).unwrap();
        let reply: CodeReply = decode_payload(op, frame.d).unwrap();
        return format!(
            r#"{{"op":{op},"d":{}}}"#,
            serde_json::to_string(&reply).unwrap()
        );
    }
    match (dir, op) {
        ("to_client", _) if refused => reencoded::<CodeReply>(op, text),
        ("to_service", 10) => reencoded::<LoginRequest>(op, text),
        ("to_service", 12 | 240 | 638) => reencoded::<Empty>(op, text),
        ("to_service", 20) => reencoded::<MenuPublish>(op, text),
        ("to_service", 30) => reencoded::<SendRequest>(op, text),
        ("to_service", 40) => reencoded::<HistoryRequest>(op, text),
        ("to_service", 51) => reencoded::<KeyShare>(op, text),
        ("to_service", 52) => reencoded::<PublicKeyRequest>(op, text),
        ("to_service", 60) => reencoded::<JoinRequest>(op, text),
        ("to_service", 61) => reencoded::<MembersRequest>(op, text),
        ("to_client", 10) => reencoded::<LoginReply>(op, text),
        ("to_client", 11) => reencoded::<Ready>(op, text),
        ("to_client", 12 | 20 | 51 | 60) => reencoded::<CodeReply>(op, text),
        ("to_client", 30) => reencoded::<SendReply>(op, text),
        ("to_client", 32) => reencoded::<MessageCreate>(op, text),
        ("to_client", 33) => reencoded::<Notification>(op, text),
        ("to_client", 34) => reencoded::<ChannelAdded>(op, text),
        ("to_client", 35) => reencoded::<ChannelRemoved>(op, text),
        ("to_client", 40) => reencoded::<HistoryReply>(op, text),
        ("to_client", 50) => reencoded::<ChannelKeyPush>(op, text),
        ("to_client", 52) => reencoded::<PublicKeyReply>(op, text),
        ("to_client", 61) => reencoded::<MembersReply>(op, text),
        ("to_client", 240) => reencoded::<EmojiReply>(op, text),
        ("to_client", 638) => reencoded::<RestMintReply>(op, text),
        other => panic!("no wire type for {other:?}"),
    }
}

/// The connections whose frames botlane's own code wrote: the bot (the
/// Client), alice (TestUser, on the wire types) and everything the service sent.
fn written_by_the_codec(conn: &str, dir: &str) -> bool {
    dir == "to_client" || conn == "bot" || conn == "alice"
}

#[test]
fn transcript_frames_are_exactly_what_the_codec_writes() {
    let frames = transcript_frames();
    let mut checked = 0;
    for (file, conn, dir, frame) in &frames {
        // The placeholder of an integer becomes an integer again.
        let text = frame
            .to_string()
            .replace("\"<created-at>\"", "1795330000000");
        if !written_by_the_codec(conn, dir) {
            // Hand-written by a raw client: the envelope at least is sound
            // (`d` may be missing: the service answers that with -5).
            let op = frame["op"].as_u64();
            assert!(op.is_some_and(|op| op <= 65535), "{file}: {text}");
            continue;
        }
        let sorted = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert_eq!(
            sorted(&wire_round_trip(dir, &text)),
            sorted(&text),
            "{file} {conn} {dir}: the wire types lose or add something"
        );
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} frames checked");
}

/// Fenced blocks of a markdown text whose info string is exactly `info`.
fn fenced<'a>(doc: &'a str, info: &str) -> Vec<Vec<&'a str>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in doc.lines() {
        match current.as_mut() {
            None if line.trim_end() == format!("```{info}") => current = Some(Vec::new()),
            Some(_) if line.starts_with("```") => blocks.extend(current.take()),
            Some(block) => block.push(line),
            None => {}
        }
    }
    blocks
}

/// What a line of an example block stands for in a transcript: a frame
/// (`{"op", "d"}`), or an event's `close`, `text` or `binary` wrapped in an
/// object of that one key, or an HTTP request or response (`http`).
fn recorded_form(event: &Value) -> Option<Value> {
    if let Some(frame) = event.get("frame") {
        return Some(frame.clone());
    }
    ["close", "text", "binary"]
        .into_iter()
        .find_map(|key| event.get(key).map(|v| serde_json::json!({ key: v })))
        .or_else(|| event.get("http").cloned())
}

/// The examples of docs/protocol.md cannot drift: every line of a `json`
/// block is a frame, a close, an unreadable text frame, a binary frame or
/// an HTTP message recorded in a transcript (placeholders included).
#[test]
fn protocol_examples_are_recorded_frames() {
    let doc = include_str!("../../../../docs/protocol.md");
    let recorded: Vec<Value> = transcript_events()
        .iter()
        .filter_map(|(_, event)| recorded_form(event))
        .collect();
    let mut ops = std::collections::BTreeSet::new();
    let mut closes = std::collections::BTreeSet::new();
    let mut lines = 0;
    for block in fenced(doc, "json") {
        for line in block.iter().filter(|l| !l.trim().is_empty()) {
            let example: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("protocol.md example is not JSON ({e}): {line}"));
            assert!(
                recorded.contains(&example),
                "protocol.md example is in no transcript: {line}"
            );
            ops.extend(example["op"].as_u64());
            closes.extend(example["close"]["code"].as_u64());
            lines += 1;
        }
    }
    assert!(lines >= 80, "protocol.md lost its examples: {lines} left");
    assert!(
        fenced(doc, "json pending").is_empty(),
        "protocol.md has a pending example: every example is recorded now"
    );
    // Every opcode of botlane-proto's table: a new one needs its example.
    let every: std::collections::BTreeSet<u64> = (0..=u16::MAX)
        .filter_map(botlane::wire::OpCode::from)
        .map(|op| u64::from(op.code()))
        .collect();
    assert!(
        every.is_subset(&ops),
        "protocol.md has no example of ops {:?}",
        every.difference(&ops).collect::<Vec<_>>()
    );
    let every_close: std::collections::BTreeSet<u64> = [1001, 1003, 1007, 1008, 1009].into();
    assert!(
        every_close.is_subset(&closes),
        "protocol.md has no example of close codes {:?}",
        every_close.difference(&closes).collect::<Vec<_>>()
    );
}

/// The transcripts keep their promise about `text` events: a text frame is
/// kept as a string only when it is not a sound frame object.
#[test]
fn transcript_text_events_are_frames_that_cannot_be_objects() {
    let mut texts = 0;
    for (file, event) in transcript_events() {
        let Some(kept) = event.get("text") else {
            continue;
        };
        let kept = kept.as_str().unwrap();
        texts += 1;
        if let Ok(value) = serde_json::from_str::<Value>(kept) {
            // JSON: then a key appears twice (serde_json keeps the last),
            // or the envelope is not an object with an op in range.
            let sound = value["op"].as_u64().is_some_and(|op| op <= 65535);
            let shorter = value.to_string().len() < kept.len();
            assert!(!sound || shorter, "{file}: {kept} could be a frame object");
        }
    }
    assert!(texts >= 2, "the tour lost its unreadable frames");
}

/// The worked example of the canonical menu is the first menu vector.
#[test]
fn protocol_worked_menu_example_is_a_vector() {
    let doc = include_str!("../../../../docs/protocol.md");
    let menus = load("menus.json");
    let case = &cases(&menus, "cases", 1)[0];
    assert_eq!(text(case, "name"), "worked example (docs/protocol.md)");
    let json = text(case, "json");
    assert!(doc.contains(json), "protocol.md lacks the bytes {json}");
    assert!(doc.contains(text(case, "sha256")));
    assert!(doc.contains(&format!("({} bytes;", json.len())));
    let decls: Vec<CommandDeclaration> =
        serde_json::from_value(case["declarations"].clone()).unwrap();
    assert_eq!(botlane::canonical_menu_json(&decls), json);
    assert_eq!(botlane::compute_menu_hash(&decls), text(case, "sha256"));
}

/// A canonical menu (arrays) back to the declarations it was made from.
fn declarations_of_menu(menu: &Value) -> Vec<CommandDeclaration> {
    menu.as_array()
        .unwrap()
        .iter()
        .map(|command| {
            let options = command[2].as_array().unwrap().iter().map(|o| {
                let code = u8::try_from(o[1].as_u64().unwrap()).unwrap();
                let (kind, _) = botlane::COMMAND_OPTION_TYPE_CODES
                    .into_iter()
                    .find(|(_, c)| *c == code)
                    .unwrap();
                let option = botlane::CommandOption::new(
                    o[0].as_str().unwrap(),
                    o[2].as_str().unwrap(),
                    kind,
                )
                .required(o[3] == true);
                let choices: Vec<String> = serde_json::from_value(o[4].clone()).unwrap();
                if choices.is_empty() {
                    option
                } else {
                    option.choices(choices)
                }
            });
            options.fold(
                CommandDeclaration::new(command[0].as_str().unwrap(), command[1].as_str().unwrap()),
                CommandDeclaration::option,
            )
        })
        .collect()
}

/// botlane's Client against a scripted service that plays the service's
/// side of `transcripts/login.json`: the client must send exactly the
/// recorded frames (its token and its own public key in place of the
/// placeholders) and accept the recorded replies.
#[tokio::test]
async fn the_client_follows_the_login_transcript() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    // Read with the frames as raw text: in wire order, as recorded.
    #[derive(serde::Deserialize)]
    struct RawEvent {
        dir: String,
        frame: Box<serde_json::value::RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct RawTranscript {
        events: Vec<RawEvent>,
    }
    let path = format!(
        "{}/../../docs/vectors/transcripts/login.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let file: RawTranscript =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events: Vec<(String, String)> = file
        .events
        .into_iter()
        .map(|e| (e.dir, e.frame.get().to_owned()))
        .collect();
    let menu = events
        .iter()
        .find_map(|(dir, frame)| {
            let frame: Value = serde_json::from_str(frame).unwrap();
            (dir == "to_service" && frame["op"] == 20).then(|| frame["d"]["menu"].clone())
        })
        .expect("the transcript publishes a menu");
    let concrete = [
        ("<bot-token>", "transcript-bot-token"),
        ("<bot-id>", "6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55"),
        ("<channel-id>", "0b3f7f4e-8c51-4d57-9b1a-6e0c1d2a3b4c"),
        ("<server-id>", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"),
    ];
    let fill = move |text: &str| {
        concrete
            .iter()
            .fold(text.to_owned(), |t, (p, v)| t.replace(p, v))
    };

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let service = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let mut public_key = None;
        for (dir, expected) in events {
            let expected = fill(&expected);
            if dir == "to_client" {
                ws.send(Message::text(expected)).await.unwrap();
                continue;
            }
            let got = loop {
                match ws.next().await.unwrap().unwrap() {
                    Message::Text(t) => break t.to_string(),
                    _ => continue,
                }
            };
            // The client's own identity key stands where the placeholder was.
            let sent: Value = serde_json::from_str(&got).unwrap();
            let got = match sent["d"]["public_key"].as_str() {
                Some(key) if sent["op"] == 10 => {
                    assert_eq!(BASE64.decode(key).unwrap().len(), 32);
                    public_key = Some(key.to_owned());
                    got.replace(key, "<bot-public-key>")
                }
                _ => got,
            };
            // Byte for byte: field order and absent optional fields included.
            assert_eq!(
                got, expected,
                "the client's frame differs from the transcript"
            );
        }
        public_key.expect("the client logged in")
    });

    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(
        botlane::ClientOptions::new("transcript-bot-token", dir.path().join("keystore"), url)
            .heartbeat_interval(std::time::Duration::from_secs(300))
            .idle_timeout(std::time::Duration::from_secs(600)),
    )
    .unwrap();
    for decl in declarations_of_menu(&menu) {
        client
            .commands()
            .register(decl, |_ctx| async { Ok::<(), std::io::Error>(()) })
            .unwrap();
    }
    tokio::time::timeout(std::time::Duration::from_secs(20), client.login())
        .await
        .expect("login within 20 s")
        .unwrap();
    let key = tokio::time::timeout(std::time::Duration::from_secs(20), service)
        .await
        .expect("the scripted service finishes")
        .unwrap();
    assert_eq!(client.bot_id().as_deref(), Some(concrete[1].1));
    assert_eq!(key.len(), 44);
    client.close().await.unwrap();
}
