//! `docs/guide.md` is compiled and run as doctests (`GuideDoctests` in
//! `lib.rs`). Each doctest is its own crate, so the snippets that use the
//! guide's `dicebot` library carry a hidden copy of it (`# mod dicebot {`).
//! This test keeps those copies equal to the `src/lib.rs` snippets the
//! reader sees, and keeps every Rust snippet compiled.

use std::path::Path;

/// The marker, in an HTML comment before a fenced block, of a part of the
/// guide's `src/lib.rs`.
const LIB_PART: &str = "<!-- dicebot src/lib.rs -->";
const HIDDEN_OPEN: &str = "mod dicebot {";
const HIDDEN_CLOSE: &str = "} // mod dicebot";

struct Block {
    info: String,
    lines: Vec<String>,
    /// Whether the line before the opening fence is [`LIB_PART`].
    lib_part: bool,
    /// The 1-based line of the opening fence.
    at: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut previous = "";
    for (index, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    lines: Vec::new(),
                    lib_part: previous.trim() == LIB_PART,
                    at: index + 1,
                });
            }
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some(block), None) => block.lines.push(line.to_owned()),
            (None, None) => {}
        }
        previous = line;
    }
    assert!(open.is_none(), "an unclosed fence in the guide");
    blocks
}

fn is_rust(info: &str) -> bool {
    info.is_empty() || info.split(',').any(|attr| attr.trim() == "rust")
}

/// What rustdoc does with a hidden line (`# code` or a lone `#`): `None`
/// for a line the reader sees.
fn unhide(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if trimmed == "#" {
        Some("")
    } else {
        trimmed.strip_prefix("# ")
    }
}

/// The hidden `mod dicebot { ... }` of a block, unhidden, if it has one.
fn hidden_library(block: &Block) -> Option<Vec<String>> {
    let start = block
        .lines
        .iter()
        .position(|l| unhide(l) == Some(HIDDEN_OPEN))?;
    let end = block
        .lines
        .iter()
        .position(|l| unhide(l) == Some(HIDDEN_CLOSE))
        .unwrap_or_else(|| panic!("block at line {}: unclosed hidden module", block.at));
    let body = &block.lines[start + 1..end];
    Some(
        body.iter()
            .map(|l| {
                unhide(l)
                    .unwrap_or_else(|| {
                        panic!(
                            "block at line {}: a visible line in the hidden module",
                            block.at
                        )
                    })
                    .to_owned()
            })
            .collect(),
    )
}

fn visible(block: &Block) -> Vec<String> {
    block
        .lines
        .iter()
        .filter(|l| unhide(l).is_none())
        .cloned()
        .collect()
}

#[test]
fn hidden_copies_of_the_library_match_what_the_reader_sees() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide.md");
    let text = std::fs::read_to_string(&path).expect("docs/guide.md is readable");
    let mut library: Vec<String> = Vec::new();
    let mut lib_parts = 0;
    let mut copies = 0;
    for block in blocks(&text) {
        if !is_rust(&block.info) {
            continue;
        }
        assert!(
            !block.info.contains("ignore"),
            "block at line {}: every Rust snippet of the guide must compile",
            block.at
        );
        if let Some(copy) = hidden_library(&block) {
            copies += 1;
            assert_eq!(
                copy, library,
                "block at line {}: its hidden `mod dicebot` must be the src/lib.rs \
                 snippets above it, joined by an empty line",
                block.at
            );
        }
        if block.lib_part {
            lib_parts += 1;
            if !library.is_empty() {
                library.push(String::new());
            }
            library.extend(visible(&block));
        }
    }
    assert!(
        lib_parts >= 2 && copies >= 4,
        "{lib_parts} library parts, {copies} hidden copies"
    );
}
