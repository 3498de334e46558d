//! The docs name only paths that exist (issue 31, item 6): every path in
//! `docs/*.md` and the READMEs, written relative to the workspace, a crate
//! or a folder the text is about, matches the end of a path in the tree.
//! `CHANGELOG.md` is history and may name what is gone.

use std::collections::BTreeSet;

use super::{tree, workspace};

/// Folders that hold no source or doc of ours.
const SKIPPED: [&str; 5] = [".git", "target", "node_modules", "work", "artifacts"];

/// What the tools write when they run: named by the docs, absent from a
/// fresh clone.
const GENERATED: [&str; 3] = ["target/", "work/", "artifacts/"];

/// The extensions that make a word with a `/` a path.
const EXTENSIONS: [&str; 9] = [
    ".rs", ".md", ".toml", ".json", ".mjs", ".txt", ".html", ".js", ".lock",
];

/// The workspace's top folders: a word that starts with one is a path.
const TOPS: [&str; 7] = [
    "crates/",
    "examples/",
    "docs/",
    "scripts/",
    "fuzz/",
    "checks/",
    "tools/",
];

/// The words of `text` that name a path: a `/` inside and a known
/// extension or one of the workspace's top folders first; or a trailing `/`.
fn paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)));
        for word in words {
            let word = word.trim_start_matches("./").trim_end_matches('.');
            let inner = word.trim_end_matches('/');
            let named = (inner.contains('/')
                && (EXTENSIONS.iter().any(|e| inner.ends_with(e))
                    || TOPS.iter().any(|t| word.starts_with(t))))
                || (word.ends_with('/') && is_folder_name(inner));
            let foreign =
                GENERATED.iter().any(|g| word.starts_with(g)) || word.contains("localhost");
            if named && !foreign && !word.starts_with('/') && !word.contains("//") {
                out.push((number + 1, word.to_owned()));
            }
        }
    }
    out
}

/// A folder's name as ours are spelled (not a base64 run that ends in `/`).
fn is_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_./-".contains(c))
}

/// Whether `path`, as a file or a folder, ends a path of the tree.
fn exists(tree: &BTreeSet<String>, path: &str) -> bool {
    let path = path.trim_start_matches("../");
    let folder = format!("{}/", path.trim_end_matches('/'));
    tree.iter().any(|p| {
        [path, folder.as_str()]
            .iter()
            .any(|want| p == want || p.ends_with(&format!("/{want}")))
    })
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = workspace();
    let tree = tree(&root, |path| {
        let name = path.trim_end_matches('/').rsplit('/').next().unwrap();
        SKIPPED.contains(&name)
    });
    let docs: Vec<&String> = tree
        .iter()
        .filter(|p| {
            (p.starts_with("docs/") && p.ends_with(".md") && !p[5..].contains('/'))
                || p.ends_with("README.md")
        })
        .filter(|p| !p.starts_with("fuzz/corpus"))
        .collect();
    assert!(
        docs.iter().any(|d| *d == "docs/architecture.md"),
        "{docs:?}"
    );
    let mut missing = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for (line, path) in paths(&text) {
            if !exists(&tree, &path) {
                missing.push(format!("{doc}:{line}: {path}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_path_that_does_not_exist_is_caught() {
    let tree: BTreeSet<String> = ["crates/", "crates/a/", "crates/a/src/", "crates/a/src/x.rs"]
        .map(String::from)
        .into();
    let text = "see `src/x.rs` and crates/a/src/gone.rs, the folder src/ and the \
                URL https://example.com/a.rs; not words like either/or.";
    let found: Vec<String> = paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(found, ["src/x.rs", "crates/a/src/gone.rs", "src/"]);
    let gone: Vec<&String> = found.iter().filter(|p| !exists(&tree, p)).collect();
    assert_eq!(gone, ["crates/a/src/gone.rs"]);
}
