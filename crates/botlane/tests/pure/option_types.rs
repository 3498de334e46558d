//! The option types are one table (`COMMAND_OPTION_TYPE_CODES`, made by
//! `option_types!` in `commands/types.rs`); the places outside Rust that
//! spell it again must agree with it, so a new type cannot be added to the
//! library and forgotten there (docs/architecture.md, "Adding an option
//! type"). The devserver's own reading of menus and the playground are
//! checked by the devserver's tests.

use std::collections::BTreeSet;

use botlane::COMMAND_OPTION_TYPE_CODES;
use serde_json::Value;

fn doc(path: &str) -> String {
    let path = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The table as the vectors' JavaScript writes it: `{ string: 1, … }`.
fn js_type_codes() -> String {
    let pairs: Vec<String> = COMMAND_OPTION_TYPE_CODES
        .iter()
        .map(|(kind, code)| format!("{kind}: {code}"))
        .collect();
    format!("const TYPE_CODES = {{ {} }};", pairs.join(", "))
}

#[test]
fn the_vectors_reference_code_has_the_table() {
    for file in [
        "docs/vectors/lib.mjs",
        "docs/vectors/outsider-bot.mjs",
        "docs/vectors/outsider-service.mjs",
    ] {
        assert!(
            doc(file).contains(&js_type_codes()),
            "{file} must spell the option types as {}",
            js_type_codes()
        );
    }
}

#[test]
fn protocol_md_lists_every_type_code() {
    let pairs: Vec<String> = COMMAND_OPTION_TYPE_CODES
        .iter()
        .map(|(kind, code)| format!("{kind} {code}"))
        .collect();
    let list = format!("({})", pairs.join(", "));
    let protocol = doc("docs/protocol.md").replace("\n   ", " ");
    assert!(
        protocol.contains(&list),
        "protocol.md (\"The canonical menu\") must list the type codes as {list}"
    );
}

#[test]
fn text_grammar_md_says_how_every_type_is_read() {
    let grammar = doc("docs/text-grammar.md");
    let section = grammar
        .split("## Turning text into typed values")
        .nth(1)
        .expect("text-grammar.md has its coercion table");
    let named: BTreeSet<&str> = section
        .lines()
        .skip_while(|line| !line.starts_with("| type |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .flat_map(|line| line.split('|').nth(1).unwrap_or_default().split(','))
        .map(str::trim)
        .collect();
    let table: BTreeSet<&str> = COMMAND_OPTION_TYPE_CODES
        .iter()
        .map(|(kind, _)| kind.as_str())
        .collect();
    assert_eq!(named, table, "text-grammar.md's coercion table, by type");
}

/// The menu vector "every option type" has an option of each, so the hash
/// of a new type's code is checked against node too.
#[test]
fn the_menu_vectors_cover_every_type() {
    let menus: Value = serde_json::from_str(&doc("docs/vectors/menus.json")).unwrap();
    let case = menus["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|case| {
            case["name"]
                .as_str()
                .unwrap()
                .starts_with("every option type")
        })
        .expect("menus.json has the case \"every option type\"");
    let json: Value = serde_json::from_str(case["json"].as_str().unwrap()).unwrap();
    let covered: BTreeSet<u64> = json[0][2]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option[1].as_u64().unwrap())
        .collect();
    let table: BTreeSet<u64> = COMMAND_OPTION_TYPE_CODES
        .iter()
        .map(|(_, code)| u64::from(*code))
        .collect();
    assert_eq!(
        covered, table,
        "docs/vectors/gen-menus.mjs's \"every option type\" must declare one option of each type"
    );
}
