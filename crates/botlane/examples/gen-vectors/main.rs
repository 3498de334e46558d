//! Writes, or checks, the parts of `docs/vectors/` that botlane computes.
//!
//! ```text
//! cargo run -p botlane --example gen-vectors                  rewrite every file
//! cargo run -p botlane --example gen-vectors -- --check       fail on any difference
//! cargo run -p botlane --example gen-vectors -- grammar       only text-grammar.json
//! ```
//!
//! Parts: `grammar` (text-grammar.json) and `sidecars` (sidecars.json)
//! recompute every expected result from the inputs stored in the file;
//! `transcripts` (transcripts/*.json) runs the real devserver, a real
//! `Client` and `TestUser`s through recording relays and writes what went
//! over the wire, random values replaced by placeholders; `admin.json`
//! records a raw HTTP client of the devserver's admin endpoint. In check mode a
//! transcript is compared modulo the reorderings the protocol allows.
//! `menus.json` and `crypto.json` are written by node (`gen-menus.mjs`,
//! `gen-crypto.mjs`) and checked by `check.mjs` and the Rust tests.
//!
//! `scripts/test` runs it with `--check`.

// Reporting what was written or what differs is this program's job.
#![allow(clippy::print_stdout)]

mod admin;
mod grammar;
mod relay;
mod scenario;
mod sidecars;
mod strict;
mod tour;
mod transcript;
mod typed;

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

/// How to regenerate, written into every file.
const GENERATOR: &str = "cargo run -p botlane --example gen-vectors";

/// The vector directory, `docs/vectors/` at the workspace root.
fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/vectors")
}

/// Pretty JSON with two-space indents and a final newline, as every vector file is written.
fn pretty<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value)
        .map(|text| text + "\n")
        .map_err(|e| format!("cannot serialize: {e}"))
}

/// The first line where two texts differ, for a readable check failure.
fn first_difference(old: &str, new: &str) -> String {
    let line = old
        .lines()
        .zip(new.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| old.lines().count().min(new.lines().count()));
    format!(
        "line {}: file has {:?}, generator computes {:?}",
        line + 1,
        old.lines().nth(line).unwrap_or("<end of file>"),
        new.lines().nth(line).unwrap_or("<end of file>")
    )
}

/// Regenerates one computed-from-inputs file; in check mode, reports a difference.
fn recompute(
    name: &str,
    check: bool,
    generate: fn(&str) -> Result<String, String>,
) -> Result<(), String> {
    let path = vectors_dir().join(name);
    let old = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let new = generate(&old)?;
    if check {
        if old != new {
            return Err(format!(
                "{name} is out of date ({}); run: {GENERATOR}",
                first_difference(&old, &new)
            ));
        }
        println!("{name}: up to date");
    } else {
        std::fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("{name}: written");
    }
    Ok(())
}

/// Captures the transcripts and writes them, or compares them with the files.
async fn transcripts(check: bool) -> Result<(), String> {
    let run = scenario::run().await?;
    let dir = vectors_dir().join("transcripts");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut problems = Vec::new();
    for (name, new) in scenario::files(&run)? {
        let path = vectors_dir().join(&name);
        if check {
            let old = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            match transcript::same_modulo_reordering(&old, &new) {
                Ok(()) => println!("{name}: up to date"),
                Err(e) => problems.push(format!("{name} is out of date ({e}); run: {GENERATOR}")),
            }
        } else {
            // A file that differs only by a legal reordering is kept, so
            // that a regeneration shows real changes only.
            let old = std::fs::read_to_string(&path).unwrap_or_default();
            if transcript::same_modulo_reordering(&old, &new).is_ok() {
                println!("{name}: unchanged");
                continue;
            }
            std::fs::write(&path, new)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("{name}: written");
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let parts: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--check")
        .collect();
    let wants = |part: &str| parts.is_empty() || parts.contains(&part);
    let mut failed = false;
    let mut report = |result: Result<(), String>| {
        if let Err(e) = result {
            eprintln!("gen-vectors: {e}");
            failed = true;
        }
    };
    for part in &parts {
        if !["grammar", "sidecars", "transcripts"].contains(part) {
            report(Err(format!(
                "unknown part {part:?}: expected grammar, sidecars, transcripts"
            )));
        }
    }
    if wants("grammar") {
        report(recompute("text-grammar.json", check, grammar::generate));
    }
    if wants("sidecars") {
        report(recompute("sidecars.json", check, sidecars::generate));
    }
    if wants("transcripts") {
        report(transcripts(check).await);
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
