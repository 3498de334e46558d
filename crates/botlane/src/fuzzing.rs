//! The checks run by the fuzz targets in `fuzz/` and, over their seed
//! corpora, by `tests/pure/fuzz_corpus.rs`. Not part of the public API.
//!
//! Each `check_*` takes the raw fuzz input, runs one entry point on it and
//! panics when an invariant fails. Invalid UTF-8 is read lossily so every
//! input reaches the code under test.

use crate::commands::coerce::{coerce_for_option, fits};
use crate::commands::limits::is_valid_name;
use crate::commands::text::prefixes::Prefixes;
use crate::framework::{canonical_bot_id, usage_line};
use crate::{
    decode_command_data, encode_command_data, format_invocation_text, match_command_name,
    parse_invocation_text, BoxError, CommandArgs, CommandDeclaration, CommandHandler,
    CommandLookup, CommandOption, CommandOptionType, CommandRegistry, CommandSource,
    TextParseResult,
};

/// The prefixes every text check runs with: the default, a one-byte one, and
/// a non-ASCII one that is also a closing quote of the grammar.
const PREFIXES: [Option<&str>; 3] = [None, Some("!"), Some("»")];

/// The fixed declarations the text and registry checks parse against:
/// `roll(count: integer required, sides: integer in {6, 20}, label: string)`,
/// the grammar's running example, and
/// `set(flag: boolean required, max-ratio: number, who: user, mode: string in {fast, slow})`.
pub fn declarations() -> Vec<CommandDeclaration> {
    use CommandOptionType as T;
    vec![
        CommandDeclaration::new("roll", "Roll dice")
            .option(CommandOption::new("count", "How many", T::Integer).required(true))
            .option(CommandOption::new("sides", "Sides per die", T::Integer).choices(["6", "20"]))
            .option(CommandOption::new("label", "What for", T::String)),
        CommandDeclaration::new("set", "Set a flag")
            .option(CommandOption::new("flag", "On or off", T::Boolean).required(true))
            .option(CommandOption::new("max-ratio", "Upper bound", T::Number))
            .option(CommandOption::new("who", "For whom", T::User))
            .option(CommandOption::new("mode", "How", T::String).choices(["fast", "slow"])),
    ]
}

/// A reference [`CommandLookup`] over fixed declarations, built only from
/// the coercion table, so the codec can be fuzzed with a registry
/// independently of [`CommandRegistry`].
#[derive(Debug, Clone)]
pub struct DeclarationLookup(pub Vec<CommandDeclaration>);

impl DeclarationLookup {
    fn find(&self, name: &str) -> Option<&CommandDeclaration> {
        self.0.iter().find(|d| d.name.eq_ignore_ascii_case(name))
    }
}

impl CommandLookup for DeclarationLookup {
    fn accepts(&self, name: &str, args: &CommandArgs) -> bool {
        self.find(name).is_some_and(|decl| {
            args.iter()
                .all(|(key, value)| decl.find_option(key).is_some_and(|o| fits(o, value)))
                && required_present(decl, args)
        })
    }

    fn coerce(&self, name: &str, args: CommandArgs) -> Option<CommandArgs> {
        let decl = self.find(name)?;
        let coerced = args
            .iter()
            .map(|(key, value)| {
                let option = decl.find_option(key)?;
                Some((key.clone(), coerce_for_option(option, value)?))
            })
            .collect::<Option<CommandArgs>>()?;
        required_present(decl, &coerced).then_some(coerced)
    }
}

fn required_present(decl: &CommandDeclaration, args: &CommandArgs) -> bool {
    decl.options
        .iter()
        .all(|o| !o.required || args.contains_key(&o.name))
}

/// Decodes the input with and without a registry and checks that a decoded
/// payload is normalised, that the registry only narrows, and that encoding
/// it decodes back to the same value.
pub fn check_decode_command_data(input: &[u8]) {
    let json = String::from_utf8_lossy(input);
    let lookup = DeclarationLookup(declarations());
    let plain = decode_command_data(&json, None);
    let coerced = decode_command_data(&json, Some(&lookup));
    if let Some(c) = &coerced {
        let p = plain
            .as_ref()
            .expect("a payload the registry accepts is structurally valid");
        assert_eq!((&c.bot_id, &c.name), (&p.bot_id, &p.name));
        assert!(lookup.accepts(&c.name, &c.args), "coerced args fit: {c:?}");
    }
    for (data, registry) in [
        (plain, None),
        (coerced, Some(&lookup as &dyn CommandLookup)),
    ] {
        let Some(data) = data else { continue };
        assert_eq!(data.bot_id, canonical_bot_id(&data.bot_id));
        assert_eq!(data.name, data.name.to_ascii_lowercase());
        let encoded = encode_command_data(&data);
        let again = decode_command_data(&encoded, registry);
        assert_eq!(again.as_ref(), Some(&data), "re-decoding {encoded}");
        assert_eq!(encode_command_data(&data), encoded, "encoding is stable");
    }
}

/// Runs `match_command_name` and `parse_invocation_text` (against each of
/// [`declarations`], under each test prefix) and checks: a matched name
/// passes the name rule; a successful parse belongs to the matched command,
/// yields args that fit the declaration, and survives the format/parse law
/// of text-grammar §7.
pub fn check_parse_invocation_text(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let decls = declarations();
    for prefix in PREFIXES {
        let matched = match_command_name(&text, prefix);
        if let Some(name) = &matched {
            assert!(is_valid_name(name), "matched name {name:?}");
        }
        for decl in &decls {
            let Ok(args) = parse_invocation_text(decl, &text, prefix) else {
                continue;
            };
            assert_eq!(matched.as_deref(), Some(decl.name.as_str()));
            assert_fits(decl, &args);
            round_trip(decl, &args, prefix);
        }
    }
}

/// Runs [`CommandRegistry::parse_from_text`] over a registry of
/// [`declarations`] and checks it agrees with `match_command_name` and
/// `parse_invocation_text`; and that under several prefixes the line reads
/// as under the longest it starts with, with the main prefix's usage line.
pub fn check_parse_from_text(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let decls = declarations();
    let mut registry = CommandRegistry::default();
    let handler = CommandHandler::new(|_ctx| async { Ok::<(), BoxError>(()) });
    for decl in &decls {
        registry
            .register_handler(decl.clone(), handler.clone())
            .expect("the fixed declarations are valid");
    }
    for prefix in PREFIXES {
        let decl = match_command_name(&text, prefix)
            .and_then(|name| decls.iter().find(|d| d.name == name));
        match registry.parse_from_text(&text, prefix) {
            TextParseResult::None => {
                assert!(decl.is_none(), "none for a registered command");
            }
            TextParseResult::Ok(invocation) => {
                let decl = decl.expect("ok only for a registered command");
                assert_eq!(invocation.name, decl.name);
                assert_eq!(invocation.source, CommandSource::Text);
                assert_fits(decl, &invocation.args);
                let direct = parse_invocation_text(decl, &text, prefix).ok();
                assert_eq!(direct.as_ref(), Some(&invocation.args));
            }
            TextParseResult::Error { name, .. } => {
                let decl = decl.expect("an error only for a registered command");
                assert_eq!(name, decl.name);
                assert!(parse_invocation_text(decl, &text, prefix).is_err());
            }
        }
    }
    check_several_prefixes(&registry, &text);
}

/// The client's prefixes: a main one and others, one of which extends it
/// and one of which is also a closing quote of the grammar.
const SEVERAL: (&str, [&str; 3]) = ("!", ["!!", "»", "?x"]);

fn check_several_prefixes(registry: &CommandRegistry, text: &str) {
    let (main, others) = SEVERAL;
    let prefixes = Prefixes::new(main, &others);
    let (among, _) = registry.parse_among(text, prefixes.set(), String::new);
    let trimmed = text.trim_start();
    let used = std::iter::once(main)
        .chain(others)
        .filter(|p| trimmed.starts_with(p))
        .max_by_key(|p| p.len());
    let Some(used) = used else {
        assert_eq!(among, TextParseResult::None, "no prefix, no invocation");
        return;
    };
    match (among, registry.parse_from_text(text, Some(used))) {
        (
            TextParseResult::Error { name, error },
            TextParseResult::Error {
                name: alone,
                error: alone_error,
            },
        ) => {
            assert_eq!(name, alone);
            assert_eq!(
                (error.kind(), error.option(), error.span()),
                (alone_error.kind(), alone_error.option(), alone_error.span())
            );
            let decl = &registry
                .get(&name)
                .expect("an error names a registered command")
                .decl;
            assert_eq!(error.usage(), usage_line(decl, Some(main)));
        }
        (among, alone) => assert_eq!(among, alone, "read under {used:?}"),
    }
}

fn assert_fits(decl: &CommandDeclaration, args: &CommandArgs) {
    assert!(
        DeclarationLookup(vec![decl.clone()]).accepts(&decl.name, args),
        "args of /{} do not fit the declaration: {args:?}",
        decl.name
    );
}

fn round_trip(decl: &CommandDeclaration, args: &CommandArgs, prefix: Option<&str>) {
    let Ok(line) = format_invocation_text(decl, args, prefix) else {
        panic!("format refused parsed args of /{}: {args:?}", decl.name);
    };
    let back = parse_invocation_text(decl, &line, prefix).ok();
    assert_eq!(
        back.as_ref(),
        Some(args),
        "format/parse law broken by {line:?}"
    );
}

/// Reads a realtime frame as the client does: the envelope, then the payload
/// of every opcode this library knows, as each of its shapes. Nothing may
/// panic, an envelope that decodes must re-encode to an envelope with the
/// same opcode, and the connection's one-pass reading of a message push (a
/// view borrowing from the frame) must give exactly the `WireMessage` the
/// two-pass reading gives, or refuse exactly when it refuses; and the
/// serde-free reader of a message push (`botlane_proto::read_message_push`)
/// must read only what the serde reader reads, as it reads it.
pub fn check_decode_frame(input: &[u8]) {
    use crate::wire::{self, OpCode};
    let text = String::from_utf8_lossy(input);
    let Ok(frame) = wire::decode_frame(&text) else {
        assert_eq!(crate::transport::read_message(&text), None);
        assert_eq!(botlane_proto::read_message_push(&text), None, "{text}");
        return;
    };
    let expected = (frame.op == OpCode::MessageCreate.code())
        .then(|| wire::decode_payload::<wire::MessageCreate>(frame.op, frame.d).ok())
        .flatten()
        .map(|push| push.message);
    assert_eq!(crate::transport::read_message(&text), expected, "{text}");
    // The serde-free reader reads a subset (one spelling), never otherwise.
    if let Some(fast) = botlane_proto::read_message_push(&text) {
        let fast = crate::transport::MessageView::from(fast).into_owned();
        assert_eq!(Some(fast), expected, "{text}");
    }
    let (op, d) = (frame.op, frame.d);
    let _ = wire::decode_payload::<wire::LoginReply>(op, d);
    let _ = wire::decode_payload::<wire::Ready>(op, d);
    let _ = wire::decode_payload::<wire::CodeReply>(op, d);
    let _ = wire::decode_payload::<wire::SendReply>(op, d);
    let _ = wire::decode_payload::<wire::MessageCreate>(op, d);
    let _ = wire::decode_payload::<wire::Notification>(op, d);
    let _ = wire::decode_payload::<wire::HistoryReply>(op, d);
    let _ = wire::decode_payload::<wire::ChannelKeyPush>(op, d);
    let _ = wire::decode_payload::<wire::PublicKeyReply>(op, d);
    let _ = wire::decode_payload::<wire::EmojiReply>(op, d);
    let _ = wire::decode_payload::<wire::RestMintReply>(op, d);
    if let Some(known) = OpCode::from(op) {
        let again = wire::encode_frame(known, d);
        let reread = wire::decode_frame(&again).expect("an encoded frame decodes");
        assert_eq!(reread.op, op);
    }
}

/// Opens arbitrary text as a sealed payload and as a wrapped key. Only
/// errors may come out, never a panic; a successful open would mean a forged
/// AES-GCM tag.
pub fn check_open_sealed(input: &[u8]) {
    use crate::crypto::{ChannelKey, IdentityKeyPair, WrappedKey};
    let text = String::from_utf8_lossy(input);
    let key = ChannelKey::from_bytes([7; 32]);
    assert!(
        key.open(&text, b"channel").is_err(),
        "a forged payload opened"
    );
    let identity = IdentityKeyPair::from_secret_bytes([9; 32]);
    if let Ok(wrapped) = serde_json::from_str::<WrappedKey>(&text) {
        assert!(
            identity.unwrap_channel_key(&wrapped, "channel").is_err(),
            "a forged wrapped key unwrapped"
        );
    }
}

/// Parses arbitrary bytes as a keystore document: an error, never a panic.
pub fn check_keystore(input: &[u8]) {
    let _ = crate::keystore::parse(std::path::Path::new("fuzz.keystore"), input);
}

/// Runs `check` on every seed of the committed corpus
/// `fuzz/corpus/<target>/`, in name order, and returns what each run gave:
/// what the corpus tests of the workspace's crates (the devserver's too)
/// do, so the seeds run without a nightly toolchain. Panics naming the seed
/// whose check failed, or the directory when it cannot be read or holds
/// fewer than ten seeds.
pub fn run_corpus<R>(
    target: &str,
    check: impl Fn(&[u8]) -> R + std::panic::RefUnwindSafe,
) -> Vec<R> {
    corpus_seeds(target)
        .into_iter()
        .map(|(file, input)| {
            std::panic::catch_unwind(|| check(&input))
                .unwrap_or_else(|_| panic!("{target} failed on seed {}", file.display()))
        })
        .collect()
}

/// The seeds of `fuzz/corpus/<target>/`, sorted by name, with their paths.
fn corpus_seeds(target: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable corpus entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "corpus {target} has {} seeds",
        files.len()
    );
    files
        .into_iter()
        .map(|file| {
            let input = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            (file, input)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommandArgValue as V;

    fn args(pairs: &[(&str, V)]) -> CommandArgs {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn reference_lookup_accepts_only_exact_fitting_args() {
        let lookup = DeclarationLookup(declarations());
        assert!(lookup.accepts("roll", &args(&[("count", V::Integer(2))])));
        assert!(lookup.accepts("ROLL", &args(&[("count", V::Integer(2))])));
        assert!(!lookup.accepts("roll", &args(&[])), "count is required");
        assert!(!lookup.accepts("roll", &args(&[("count", V::from("2"))])));
        assert!(!lookup.accepts(
            "roll",
            &args(&[("count", V::Integer(2)), ("x", V::Integer(1))])
        ));
        assert!(!lookup.accepts(
            "roll",
            &args(&[("count", V::Integer(2)), ("sides", V::Integer(7))])
        ));
        assert!(!lookup.accepts("nope", &args(&[])));
    }

    #[test]
    fn reference_lookup_coerces_by_the_table() {
        let lookup = DeclarationLookup(declarations());
        assert_eq!(
            lookup.coerce(
                "roll",
                args(&[("count", V::from("2")), ("sides", V::Number(20.0))])
            ),
            Some(args(&[("count", V::Integer(2)), ("sides", V::Integer(20))]))
        );
        assert_eq!(
            lookup.coerce("roll", args(&[("count", V::Number(2.5))])),
            None
        );
        assert_eq!(
            lookup.coerce(
                "set",
                args(&[("flag", V::from("yes")), ("who", V::from(""))])
            ),
            None
        );
        assert_eq!(
            lookup.coerce("set", args(&[("flag", V::from("yes"))])),
            Some(args(&[("flag", V::Boolean(true))]))
        );
    }

    #[test]
    fn decode_check_passes_on_valid_and_invalid_payloads() {
        check_decode_command_data(
            br#"{"v":1,"bot":"AB-CD","name":"Roll","args":{"count":"3","sides":6.0}}"#,
        );
        check_decode_command_data(br#"{"v":1,"bot":"ab","name":"set","args":{"flag":1}}"#);
        check_decode_command_data(b"\xff{\"v\":1}");
    }
}
