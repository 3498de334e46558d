//! The canonical menu and its hash.
//!
//! The vector test compares botlane against JavaScript byte for byte. The
//! vectors in `docs/vectors/menus.json` were made by node (v20) with
//!
//!     node docs/vectors/gen-menus.mjs
//!
//! which builds menus full of awkward characters (every control character,
//! U+007F, quotes, backslashes, `/`, non-ASCII, emoji, U+2028/U+2029, long
//! strings), and records `JSON.stringify` of each canonical menu and its
//! SHA-256 from `node:crypto`. Lone surrogates are not covered: Rust strings
//! cannot hold them, so no declaration botlane handles contains one.
#![allow(clippy::unwrap_used)]

use botlane::{
    canonical_menu_json, canonicalize_menu, compute_menu_hash, CanonicalMenu, CanonicalOption,
    CommandDeclaration, CommandOption, CommandOptionType,
};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::fixtures::roll_with_choices as roll;

#[derive(Deserialize)]
struct VectorFile {
    cases: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    name: String,
    declarations: Vec<CommandDeclaration>,
    json: String,
    sha256: String,
}

fn vectors() -> Vec<Vector> {
    let file: VectorFile =
        serde_json::from_str(include_str!("../../../../docs/vectors/menus.json")).unwrap();
    file.cases
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn json_and_hash_match_node_vectors() {
    let vectors = vectors();
    assert!(vectors.len() >= 10, "the vector file lost its cases");
    for v in &vectors {
        assert_eq!(
            canonical_menu_json(&v.declarations),
            v.json,
            "json of {:?}",
            v.name
        );
        assert_eq!(
            compute_menu_hash(&v.declarations),
            v.sha256,
            "hash of {:?}",
            v.name
        );
    }
}

#[test]
fn canonical_menu_matches_node_structure() {
    for v in vectors() {
        let node: CanonicalMenu = serde_json::from_str(&v.json).unwrap();
        assert_eq!(canonicalize_menu(&v.declarations), node, "{:?}", v.name);
        // The owned types serialize to the same bytes as the borrowed view.
        assert_eq!(
            serde_json::to_string(&node).unwrap(),
            v.json,
            "{:?}",
            v.name
        );
    }
}

#[test]
fn vectors_cover_the_awkward_characters() {
    let all: String = vectors().iter().map(|v| v.json.as_str()).collect();
    for c in (0u32..0x20).chain([0x7f, 0x2028, 0x2029, 0x1f600]) {
        let c = char::from_u32(c).unwrap();
        let escaped = serde_json::to_string(&c.to_string()).unwrap();
        assert!(
            all.contains(&escaped[1..escaped.len() - 1]),
            "{c:?} not covered"
        );
    }
    for needle in [r#"\""#, r"\\", "/", "é"] {
        assert!(all.contains(needle), "{needle} not covered");
    }
}

#[test]
fn hash_is_sha256_of_the_json() {
    for v in vectors() {
        assert_eq!(
            sha256_hex(canonical_menu_json(&v.declarations).as_bytes()),
            compute_menu_hash(&v.declarations)
        );
    }
}

/// A service expects help's entry from the page (outsider-service.mjs
/// builds dicebot's menu from it), so the page follows the declaration.
#[test]
fn commands_md_gives_helps_menu_entry() {
    let menu = canonical_menu_json(&[botlane::framework::help_declaration()]);
    let entry = &menu[1..menu.len() - 1];
    let page = include_str!("../../../../docs/commands.md");
    assert!(
        page.contains(&format!("`{entry}`")),
        "docs/commands.md (\"Help\") must give help's menu entry as `{entry}`"
    );
}

#[test]
fn option_array_layout() {
    let menu = canonicalize_menu(&[roll()]);
    assert_eq!(
        menu[0].options,
        [
            CanonicalOption {
                name: "count".into(),
                type_code: 2,
                description: "How many".into(),
                required: true,
                choices: vec![],
            },
            CanonicalOption {
                name: "sides".into(),
                type_code: 2,
                description: "Sides".into(),
                required: false,
                choices: vec!["6".into(), "20".into()],
            },
            CanonicalOption {
                name: "label".into(),
                type_code: 1,
                description: "Label".into(),
                required: false,
                choices: vec![],
            },
        ]
    );
    assert_eq!(
        canonical_menu_json(&[roll()]),
        r#"[["roll","Roll dice",[["count",2,"How many",true,[]],["sides",2,"Sides",false,["6","20"]],["label",1,"Label",false,[]]]]]"#
    );
}

#[test]
fn every_type_code_lands_at_index_one() {
    for (kind, code) in botlane::COMMAND_OPTION_TYPE_CODES {
        let decl = CommandDeclaration::new("t", "t").option(CommandOption::new("o", "d", kind));
        assert_eq!(
            canonical_menu_json(&[decl]),
            format!(r#"[["t","t",[["o",{code},"d",false,[]]]]]"#)
        );
    }
}

#[test]
fn hash_does_not_depend_on_declaration_order() {
    let decls = [
        roll(),
        CommandDeclaration::new("ping", "Pong"),
        CommandDeclaration::new("help", "Help"),
    ];
    let expected = compute_menu_hash(&decls);
    let mut reordered = decls.clone();
    reordered.reverse();
    assert_eq!(compute_menu_hash(&reordered), expected);
    reordered.swap(0, 1);
    assert_eq!(compute_menu_hash(&reordered), expected);
    assert_eq!(canonical_menu_json(&reordered), canonical_menu_json(&decls));
}

#[test]
fn hash_depends_on_option_order_and_content() {
    let base = compute_menu_hash(&[roll()]);
    let mut swapped = roll();
    swapped.options.swap(0, 1);
    assert_ne!(compute_menu_hash(&[swapped]), base);
    let mut changed = roll();
    changed.options[1].choices = Some(vec!["6".into()]);
    assert_ne!(compute_menu_hash(&[changed]), base);
    let mut required = roll();
    required.options[1].required = true;
    assert_ne!(compute_menu_hash(&[required]), base);
}

#[test]
fn missing_and_empty_choices_canonicalize_alike() {
    let none = CommandDeclaration::new("a", "b").option(CommandOption::new(
        "o",
        "d",
        CommandOptionType::String,
    ));
    let mut empty = none.clone();
    empty.options[0].choices = Some(vec![]);
    let (none, empty) = ([none], [empty]);
    assert_eq!(canonical_menu_json(&none), canonical_menu_json(&empty));
    assert_eq!(compute_menu_hash(&none), compute_menu_hash(&empty));
}

#[test]
fn hash_is_lower_case_hex_of_32_bytes() {
    let hash = compute_menu_hash(&[roll()]);
    assert_eq!(hash.len(), 64);
    assert!(
        hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
        "{hash}"
    );
    assert_eq!(compute_menu_hash(&[]), sha256_hex(b"[]"));
}

#[test]
fn canonical_types_reject_other_shapes() {
    assert!(serde_json::from_str::<CanonicalOption>(r#"["a",1,"d","true",[]]"#).is_err());
    assert!(serde_json::from_str::<CanonicalOption>(r#"{"name":"a"}"#).is_err());
    assert!(serde_json::from_str::<CanonicalOption>(r#"["a",1,"d",true]"#).is_err());
}
