//! The crate boundary: botlane-proto is the wire without I/O. Its normal
//! dependency graph (`cargo tree -e normal -p botlane-proto`, what a crate
//! that depends on it compiles) holds no async runtime, no socket, TLS or
//! HTTP crate and no other crate of the workspace (the arrows run
//! `botlane`, `botlane-devserver`, `botlane-macros` → `botlane-proto`, never
//! back); its sources name no I/O module of std.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Crates whose presence would mean I/O (or a way back up the workspace).
/// A name ending in `*` stands for every crate starting with the rest.
const FORBIDDEN: &[&str] = &[
    "tokio*",
    "mio",
    "socket2",
    "async-std",
    "futures*",
    "hyper*",
    "reqwest",
    "rustls*",
    "tungstenite",
    "tokio-tungstenite",
    "axum*",
    "tracing*",
    "botlane",
    "botlane-devserver",
    "botlane-macros",
];

/// Every crate name in the normal dependency graph of botlane-proto.
fn normal_dependencies() -> Vec<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["-p", "botlane-proto"])
        .output()
        .expect("cargo (the one running this test) can be started");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut names: Vec<String> = String::from_utf8(output.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn forbidden(name: &str) -> bool {
    FORBIDDEN.iter().any(|rule| match rule.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *rule,
    })
}

#[test]
fn the_normal_graph_has_no_runtime_no_socket_and_no_other_workspace_crate() {
    let names = normal_dependencies();
    // The graph was read: the crate itself and what it is built on are there.
    for expected in ["botlane-proto", "aes-gcm", "x25519-dalek", "serde_json"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from cargo tree's output: {names:?}"
        );
    }
    let bad: Vec<&String> = names.iter().filter(|n| forbidden(n)).collect();
    assert!(
        bad.is_empty(),
        "botlane-proto must stay free of I/O and of the crates above it, but its normal \
         dependencies include {bad:?}"
    );
}

#[test]
fn the_forbidden_list_matches_what_it_should() {
    assert!(forbidden("tokio"));
    assert!(forbidden("tokio-websockets"));
    assert!(forbidden("hyper-util"));
    assert!(forbidden("botlane"));
    assert!(!forbidden("botlane-proto"));
    assert!(!forbidden("aes-gcm"));
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_sources_name_no_io_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 5,
        "expected the crate's sources under {src:?}"
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for needle in [
            "std::net",
            "std::fs",
            "std::process",
            "std::thread",
            "tokio::",
        ] {
            if text.contains(needle) {
                found.push(format!("{}: {needle}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "botlane-proto's sources do I/O: {found:?}"
    );
}
