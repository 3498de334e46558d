//! The structured sidecar codec: `encode_command_data` / `decode_command_data`.
#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use crate::proptest_cases::cases;
use botlane::framework::canonical_bot_id;
use botlane::{
    decode_command_data, encode_command_data, CommandArgValue as V, CommandArgs, CommandData,
    CommandLookup, COMMAND_DATA_VERSION,
};
use proptest::prelude::*;

const BOT: &str = "3f2504e04f8911d39a0c0305e82c3301";

fn args(pairs: &[(&str, V)]) -> CommandArgs {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn data(bot: &str, name: &str, pairs: &[(&str, V)]) -> CommandData {
    CommandData {
        bot_id: bot.into(),
        name: name.into(),
        args: args(pairs),
    }
}

fn decode(json: &str) -> Option<CommandData> {
    decode_command_data(json, None)
}

/// A payload with every field valid except the one spliced in as `fields`.
fn payload(fields: &str) -> String {
    format!("{{{fields}}}")
}

fn assert_refused(json: &str) {
    assert_eq!(decode(json), None, "should be refused: {json}");
}

// ---- what decodes -------------------------------------------------------

#[test]
fn a_typical_payload_decodes() {
    let json = format!(
        r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{"count":2,"ratio":0.5,"label":"fire damage","loud":true}}}}"#
    );
    assert_eq!(
        decode(&json),
        Some(data(
            BOT,
            "roll",
            &[
                ("count", V::Integer(2)),
                ("ratio", V::Number(0.5)),
                ("label", V::from("fire damage")),
                ("loud", V::Boolean(true)),
            ]
        ))
    );
}

#[test]
fn empty_args_and_whitespace_are_fine() {
    let json =
        format!("  {{ \"v\" : 1 ,\n\"bot\":\"{BOT}\", \"name\":\"ping\", \"args\": {{ }} }}\n");
    assert_eq!(decode(&json), Some(data(BOT, "ping", &[])));
}

#[test]
fn field_order_does_not_matter() {
    let json = format!(r#"{{"args":{{"a":"b"}},"name":"x","bot":"{BOT}","v":1}}"#);
    assert_eq!(decode(&json), Some(data(BOT, "x", &[("a", V::from("b"))])));
}

#[test]
fn unknown_top_level_fields_are_ignored() {
    let json = format!(
        r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{}},"future":{{"deep":[1,null,{{"k":"v"}}]}},"z":null}}"#
    );
    assert_eq!(decode(&json), Some(data(BOT, "x", &[])));
}

#[test]
fn numbers_decode_as_integer_or_number() {
    let json = format!(
        r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{"i":-7,"f":2.0,"e":1e3,"big":18446744073709551615}}}}"#
    );
    let d = decode(&json).unwrap();
    assert_eq!(d.args["i"], V::Integer(-7));
    assert_eq!(d.args["f"], V::Number(2.0));
    assert_eq!(d.args["e"], V::Number(1000.0));
    assert_eq!(
        d.args["big"],
        V::Number(18_446_744_073_709_551_615_u64 as f64)
    );
}

#[test]
fn arg_keys_and_string_values_are_kept_exactly() {
    let json = format!(
        r#"{{"v":1,"bot":"{BOT}","name":"x","args":{{"Label":"Fire \"and\" \u00e9\\n","":""}}}}"#
    );
    let d = decode(&json).unwrap();
    assert_eq!(d.args["Label"], V::from("Fire \"and\" é\\n"));
    assert_eq!(d.args[""], V::from(""));
}

// ---- canonical form -----------------------------------------------------

#[test]
fn decode_canonicalises_the_bot_id_and_lowercases_the_name() {
    let json = r#"{"v":1,"bot":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","name":"RoLL","args":{}}"#;
    let d = decode(json).unwrap();
    assert_eq!(d.bot_id, BOT);
    assert_eq!(d.name, "roll");
}

#[test]
fn only_ascii_is_case_mapped_in_the_name() {
    // The Kelvin sign must not become `k`: look-alike names stay unmatched.
    let json = format!(r#"{{"v":1,"bot":"{BOT}","name":"\u212aICK","args":{{}}}}"#);
    assert_eq!(decode(&json).unwrap().name, "\u{212a}ick");
}

#[test]
fn encode_canonicalises_the_bot_id_and_lowercases_the_name() {
    let json = encode_command_data(&data("3F2504E0-4F89-11D3-9A0C-0305E82C3301", "PING", &[]));
    assert_eq!(
        json,
        format!(r#"{{"v":1,"bot":"{BOT}","name":"ping","args":{{}}}}"#)
    );
}

// ---- encoding -----------------------------------------------------------

#[test]
fn encode_stamps_the_version() {
    let json = encode_command_data(&data(BOT, "ping", &[]));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["v"], serde_json::json!(COMMAND_DATA_VERSION));
    assert!(json.starts_with(&format!(r#"{{"v":{COMMAND_DATA_VERSION},"#)));
}

#[test]
fn encode_is_compact_with_sorted_args() {
    let json = encode_command_data(&data(
        BOT,
        "roll",
        &[
            ("sides", V::Integer(6)),
            ("count", V::Integer(2)),
            ("label", V::from("a b")),
        ],
    ));
    assert_eq!(
        json,
        format!(
            r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{"count":2,"label":"a b","sides":6}}}}"#
        )
    );
}

#[test]
fn a_non_finite_number_makes_the_payload_undecodable() {
    for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let json = encode_command_data(&data(
            BOT,
            "x",
            &[("n", V::Number(n)), ("ok", V::Integer(1))],
        ));
        assert!(json.contains(r#""n":null"#), "{json}");
        assert_refused(&json);
    }
}

#[test]
fn round_trip_of_every_value_kind() {
    let original = data(
        BOT,
        "mix",
        &[
            ("s", V::from("line\nbreak \"quoted\" \\ back ünïcödé 🎲")),
            ("empty", V::from("")),
            ("i", V::Integer(i64::MIN)),
            ("j", V::Integer(i64::MAX)),
            ("f", V::Number(-0.1)),
            ("g", V::Number(1e300)),
            ("h", V::Number(5e-324)),
            // Needs serde_json's `float_roundtrip`: its default parser is off by one ulp here.
            ("k", V::Number(5.918_218_077_979_862e-168)),
            ("whole", V::Number(3.0)),
            ("t", V::Boolean(true)),
            ("u", V::Boolean(false)),
        ],
    );
    assert_eq!(decode(&encode_command_data(&original)), Some(original));
}

// ---- each refusal of the spec, one by one -------------------------------

#[test]
fn bad_json_is_refused() {
    for json in [
        "",
        " ",
        "{",
        "{\"v\":1,",
        r#"{"v":1,"bot":"b","name":"x","args":{},}"#,
        r#"{'v':1,'bot':'b','name':'x','args':{}}"#,
        r#"{"v":1,"bot":"b","name":"x","args":{}} trailing"#,
        "\u{feff}{\"v\":1,\"bot\":\"b\",\"name\":\"x\",\"args\":{}}",
        r#"{"v":1,"bot":"\ud800","name":"x","args":{}}"#,
    ] {
        assert_refused(json);
    }
}

#[test]
fn a_top_level_that_is_not_an_object_is_refused() {
    for json in ["null", "1", "true", r#""{}""#, "[]", r#"[{"v":1}]"#] {
        assert_refused(json);
    }
}

#[test]
fn a_missing_version_is_refused() {
    assert_refused(&payload(&format!(
        r#""bot":"{BOT}","name":"x","args":{{}}"#
    )));
}

#[test]
fn another_version_is_refused() {
    for v in ["0", "2", "-1", "4294967297"] {
        assert_refused(&payload(&format!(
            r#""v":{v},"bot":"{BOT}","name":"x","args":{{}}"#
        )));
    }
}

#[test]
fn a_version_that_is_not_the_integer_is_refused() {
    for v in ["1.0", "1e0", r#""1""#, "true", "null", "[1]", "{}"] {
        assert_refused(&payload(&format!(
            r#""v":{v},"bot":"{BOT}","name":"x","args":{{}}"#
        )));
    }
}

#[test]
fn a_missing_bot_is_refused() {
    assert_refused(&payload(r#""v":1,"name":"x","args":{}"#));
}

#[test]
fn a_non_string_bot_is_refused() {
    for bot in ["null", "1", "true", "[]", r#"{"id":"b"}"#] {
        assert_refused(&payload(&format!(
            r#""v":1,"bot":{bot},"name":"x","args":{{}}"#
        )));
    }
}

#[test]
fn a_missing_name_is_refused() {
    assert_refused(&payload(&format!(r#""v":1,"bot":"{BOT}","args":{{}}"#)));
}

#[test]
fn a_non_string_name_is_refused() {
    for name in ["null", "1", "false", r#"["x"]"#, "{}"] {
        assert_refused(&payload(&format!(
            r#""v":1,"bot":"{BOT}","name":{name},"args":{{}}"#
        )));
    }
}

#[test]
fn missing_args_are_refused() {
    assert_refused(&payload(&format!(r#""v":1,"bot":"{BOT}","name":"x""#)));
}

#[test]
fn args_that_are_not_a_plain_object_are_refused() {
    for a in ["null", "[]", r#"[["a",1]]"#, r#""a=1""#, "1", "true"] {
        assert_refused(&payload(&format!(
            r#""v":1,"bot":"{BOT}","name":"x","args":{a}"#
        )));
    }
}

#[test]
fn a_null_arg_is_refused() {
    assert_refused(&payload(&format!(
        r#""v":1,"bot":"{BOT}","name":"x","args":{{"a":null}}"#
    )));
}

#[test]
fn an_array_or_object_arg_is_refused() {
    for a in ["[]", "[1]", "{}", r#"{"k":"v"}"#] {
        assert_refused(&payload(&format!(
            r#""v":1,"bot":"{BOT}","name":"x","args":{{"a":{a}}}"#
        )));
    }
}

#[test]
fn a_number_outside_f64_range_is_refused() {
    for n in ["1e999", "-1e400"] {
        assert_refused(&payload(&format!(
            r#""v":1,"bot":"{BOT}","name":"x","args":{{"a":{n}}}"#
        )));
    }
}

#[test]
fn one_bad_arg_spoils_the_payload() {
    assert_refused(&payload(&format!(
        r#""v":1,"bot":"{BOT}","name":"x","args":{{"a":1,"b":"ok","c":null,"d":true}}"#
    )));
}

#[test]
fn duplicate_top_level_keys_are_refused() {
    let base = [
        r#""v":1"#.to_owned(),
        format!(r#""bot":"{BOT}""#),
        r#""name":"x""#.to_owned(),
        r#""args":{}"#.to_owned(),
    ];
    for (i, field) in base.iter().enumerate() {
        let mut fields = base.to_vec();
        fields.insert(i + 1, field.clone());
        assert_refused(&payload(&fields.join(",")));
    }
    // The second `bot` differs: no decoder may pick either.
    assert_refused(&payload(&format!(
        r#""v":1,"bot":"{BOT}","name":"x","args":{{}},"bot":"ffffffffffffffffffffffffffffffff""#
    )));
    // An escaped spelling is the same key.
    assert_refused(&payload(&format!(
        r#""v":1,"bot":"{BOT}","name":"x","args":{{}},"\u006eame":"y""#
    )));
}

#[test]
fn duplicate_arg_keys_are_refused() {
    assert_refused(&payload(&format!(
        r#""v":1,"bot":"{BOT}","name":"x","args":{{"a":1,"a":1}}"#
    )));
    assert_refused(&payload(&format!(
        r#""v":1,"bot":"{BOT}","name":"x","args":{{"a":1,"b":2,"\u0061":"one"}}"#
    )));
}

// ---- with a registry ----------------------------------------------------

/// A lookup with only `accepts`: `roll` with a required integer `count`.
/// It records the names it was asked about.
#[derive(Default)]
struct AcceptsOnly {
    asked: RefCell<Vec<String>>,
}

impl CommandLookup for AcceptsOnly {
    fn accepts(&self, name: &str, args: &CommandArgs) -> bool {
        self.asked.borrow_mut().push(name.to_owned());
        name == "roll"
            && args.keys().all(|k| k == "count")
            && matches!(args.get("count"), Some(V::Integer(_)))
    }
}

/// A lookup that also coerces: `count` may arrive as a numeric string.
struct Coercing;

impl CommandLookup for Coercing {
    fn accepts(&self, name: &str, args: &CommandArgs) -> bool {
        AcceptsOnly::default().accepts(name, args)
    }

    fn coerce(&self, name: &str, mut args: CommandArgs) -> Option<CommandArgs> {
        if let Some(V::String(s)) = args.get("count") {
            let n = s.parse::<i64>().ok()?;
            args.insert("count".into(), V::Integer(n));
        }
        self.accepts(name, &args).then_some(args)
    }
}

#[test]
fn a_registry_that_accepts_leaves_the_args_unchanged() {
    let lookup = AcceptsOnly::default();
    let json = format!(r#"{{"v":1,"bot":"{BOT}","name":"ROLL","args":{{"count":2}}}}"#);
    assert_eq!(
        decode_command_data(&json, Some(&lookup)),
        Some(data(BOT, "roll", &[("count", V::Integer(2))]))
    );
    assert_eq!(
        *lookup.asked.borrow(),
        ["roll"],
        "asked with the lowercased name"
    );
}

#[test]
fn a_registry_that_refuses_gives_none() {
    let lookup = AcceptsOnly::default();
    for json in [
        format!(r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{"count":"2"}}}}"#),
        format!(r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{}}}}"#),
        format!(r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{"count":2,"extra":1}}}}"#),
        format!(r#"{{"v":1,"bot":"{BOT}","name":"other","args":{{"count":2}}}}"#),
    ] {
        assert!(decode(&json).is_some(), "structurally valid: {json}");
        assert_eq!(decode_command_data(&json, Some(&lookup)), None, "{json}");
    }
}

#[test]
fn a_registry_is_not_asked_about_a_structurally_bad_payload() {
    let lookup = AcceptsOnly::default();
    let json = format!(r#"{{"v":2,"bot":"{BOT}","name":"roll","args":{{"count":2}}}}"#);
    assert_eq!(decode_command_data(&json, Some(&lookup)), None);
    assert!(lookup.asked.borrow().is_empty());
}

#[test]
fn a_registry_that_coerces_returns_the_coerced_args() {
    let json = format!(r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{"count":"12"}}}}"#);
    assert_eq!(
        decode_command_data(&json, Some(&Coercing)),
        Some(data(BOT, "roll", &[("count", V::Integer(12))]))
    );
    let json = format!(r#"{{"v":1,"bot":"{BOT}","name":"roll","args":{{"count":"twelve"}}}}"#);
    assert_eq!(decode_command_data(&json, Some(&Coercing)), None);
}

// ---- properties ---------------------------------------------------------

fn arg_value() -> impl Strategy<Value = V> {
    prop_oneof![
        any::<String>().prop_map(V::String),
        "\\PC{0,20}".prop_map(V::String),
        any::<i64>().prop_map(V::Integer),
        // Every finite value, built as such rather than filtered.
        (prop::num::f64::POSITIVE
            | prop::num::f64::NEGATIVE
            | prop::num::f64::NORMAL
            | prop::num::f64::SUBNORMAL
            | prop::num::f64::ZERO)
            .prop_map(V::Number),
        any::<bool>().prop_map(V::Boolean),
    ]
}

prop_compose! {
    fn canonical_data()(
        bot_id in "[0-9a-f]{32}",
        name in any::<String>().prop_map(|n| n.to_ascii_lowercase()),
        args in prop::collection::btree_map(any::<String>(), arg_value(), 0..8),
    ) -> CommandData {
        CommandData { bot_id, name, args }
    }
}

proptest! {
    #![proptest_config(cases(1000))]

    #[test]
    fn decode_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = decode(&text);
    }

    #[test]
    fn decode_never_panics_on_json_like_text(text in r#"[{}\[\]":,0-9a-z.eE+\- \\]{0,80}"#) {
        let _ = decode(&text);
    }

    #[test]
    fn decode_never_panics_on_a_damaged_payload(
        d in canonical_data(),
        at in any::<prop::sample::Index>(),
        insert in any::<char>(),
        delete in any::<bool>(),
    ) {
        let mut json: Vec<char> = encode_command_data(&d).chars().collect();
        let i = at.index(json.len());
        if delete { json.remove(i); } else { json.insert(i, insert); }
        let damaged: String = json.into_iter().collect();
        if let Some(back) = decode(&damaged) {
            // Whatever survives is normalised and re-encodes stably.
            prop_assert_eq!(&back.bot_id, &canonical_bot_id(&back.bot_id));
            prop_assert_eq!(decode(&encode_command_data(&back)), Some(back));
        }
    }

    #[test]
    fn encode_then_decode_is_the_identity(d in canonical_data()) {
        prop_assert_eq!(decode(&encode_command_data(&d)), Some(d));
    }

    #[test]
    fn any_bot_id_and_name_come_back_canonical(
        bot_id in "[0-9a-fA-F-]{0,40}",
        name in any::<String>(),
    ) {
        let d = CommandData { bot_id: bot_id.clone(), name: name.clone(), args: CommandArgs::new() };
        let back = decode(&encode_command_data(&d)).unwrap();
        prop_assert_eq!(back.bot_id, canonical_bot_id(&bot_id));
        prop_assert_eq!(back.name, name.to_ascii_lowercase());
    }
}

// ---- the structured-lane check with detail -------------------------------

fn everything() -> botlane::CommandDeclaration {
    use botlane::{CommandDeclaration, CommandOption, CommandOptionType as T};
    CommandDeclaration::new("all", "Every type")
        .option(CommandOption::new("count", "n", T::Integer).required(true))
        .option(CommandOption::new("sides", "n", T::Integer).choices(["6", "+20"]))
        .option(CommandOption::new("ratio", "n", T::Number).choices(["0.5", "1e3"]))
        .option(CommandOption::new("loud", "b", T::Boolean))
        .option(CommandOption::new("who", "u", T::User))
        .option(CommandOption::new("color", "s", T::String).choices(["red", "blue"]))
        .option(CommandOption::new("label", "s", T::String))
}

fn structured_value() -> impl Strategy<Value = V> {
    prop_oneof![
        arg_value(),
        prop::sample::select(vec![
            "6", "20", "+20", "0.5", "1000", "yes", "0", "", "red", "x"
        ])
        .prop_map(V::from),
        prop::sample::select(vec![6.0, 20.0, 0.5, 1e3, 1.5]).prop_map(V::Number),
        (-3i64..30).prop_map(V::Integer),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn check_args_accepts_exactly_what_coerce_accepts(
        args in prop::collection::btree_map(
            prop::sample::select(vec!["count", "sides", "ratio", "loud", "who", "color", "label", "extra"])
                .prop_map(str::to_owned),
            structured_value(),
            0..6,
        ),
    ) {
        let mut registry = botlane::CommandRegistry::new();
        registry
            .register(everything(), |_ctx| async { Ok::<(), std::io::Error>(()) })
            .unwrap();
        let checked = everything().check_args(args.clone(), None);
        let coerced = registry.coerce("all", args.clone());
        prop_assert_eq!(checked.as_ref().ok(), coerced.as_ref());
        if let Err(e) = checked {
            let usage = format!("\nusage: {}", botlane::framework::usage_line(&everything(), None));
            prop_assert!(e.to_string().ends_with(&usage));
            prop_assert!(e.option() == "extra" || everything().find_option(e.option()).is_some());
        }
    }
}
