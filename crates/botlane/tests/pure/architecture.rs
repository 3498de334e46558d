//! One-way dependencies between the library's parts (issue 10, item 1): no
//! cycle between its top-level modules (`client`, `session`, `transport`,
//! `dispatch`, `events`, `rest`, `commands`, `keystore`, `crypto`, `wire`,
//! `error`, `sync`…); a directory module and its own children may refer to
//! each other. `checker.rs` builds the graph from the sources with `syn`;
//! the synthetic cases below prove it sees what it must (the old
//! client ↔ rest ↔ message cycle, inline paths, re-exports, globs, `super`,
//! macro tokens).
//!
//! Files by concept (issue 10, item 9): `file_size.rs` counts the lines of
//! every workspace crate's sources outside their tests and fails on a file
//! over 600 that is not on its allow-list with a reason in its header.
//!
//! One path to each public item (issue 31, item 1): `surface.rs` reads the
//! public API listing; the root holds exactly its allow-list, and no name
//! is at two public paths but through the prelude.

#![allow(clippy::unwrap_used)]

#[path = "architecture/checker.rs"]
mod checker;
#[path = "architecture/file_size.rs"]
mod file_size;
#[path = "architecture/surface.rs"]
mod surface;

use std::collections::BTreeSet;
use std::path::Path;

use checker::{graph, Source};

fn library_sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(&root).unwrap();
                sources.push(Source {
                    path: relative.to_string_lossy().replace('\\', "/"),
                    text: std::fs::read_to_string(&path).unwrap(),
                });
            }
        }
    }
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    sources
}

fn sources(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|(path, text)| Source {
            path: (*path).to_owned(),
            text: (*text).to_owned(),
        })
        .collect()
}

fn cycles(files: &[(&str, &str)]) -> Vec<String> {
    graph(&sources(files)).unwrap().cycles()
}

#[test]
fn the_library_has_no_cycle_between_its_parts() {
    let graph = graph(&library_sources()).unwrap();
    let cycles = graph.cycles();
    assert!(
        cycles.is_empty(),
        "dependency cycles between the library's parts:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_library_graph_has_the_seams_it_is_built_around() {
    let graph = graph(&library_sources()).unwrap();
    // The checker sees the real edges (so an empty cycle list means something)…
    for (from, to) in [
        ("client", "session"),
        ("client", "dispatch"),
        ("dispatch", "session"),
        ("dispatch", "framework"),
        ("dispatch", "commands"),
        ("session", "transport"),
        ("session", "framework"),
        ("transport", "wire"),
        ("framework", "commands"),
        ("framework", "message"),
        ("message", "rest"),
        ("message", "commands"),
        ("events", "framework"),
        ("error", "crypto"),
    ] {
        assert!(graph.depends(from, to), "{from} → {to} is missing");
    }
    // …and the seams hold: the lower parts name nothing above them.
    for (from, to) in [
        ("rest", "client"),
        ("rest", "session"),
        ("commands", "framework"),
        ("commands", "message"),
        ("commands", "rest"),
        ("commands", "client"),
        ("commands", "session"),
        ("commands", "dispatch"),
        ("framework", "client"),
        ("framework", "session"),
        ("framework", "dispatch"),
        ("framework", "events"),
        ("message", "framework"),
        ("transport", "session"),
        ("session", "dispatch"),
        ("session", "client"),
        ("dispatch", "client"),
        ("error", "commands"),
    ] {
        assert!(!graph.depends(from, to), "{from} → {to} goes upward");
    }
}

#[test]
fn the_old_client_rest_message_cycle_is_caught() {
    // The imports of the client before the split, reduced to what matters.
    let found = cycles(&[
        (
            "lib.rs",
            "mod client; mod message; mod rest; pub use client::{Client, ClientError};",
        ),
        (
            "client/mod.rs",
            "mod dispatch; pub struct Client; pub struct Shared; pub enum ClientError {}
             use crate::message::Message; use crate::rest::RestLane;",
        ),
        ("client/dispatch.rs", "use super::Shared;"),
        (
            "rest/mod.rs",
            "use crate::client::{ClientError, ClientOptions, Shared}; pub struct RestLane;",
        ),
        (
            "message.rs",
            "use crate::client::{ClientError, Shared}; pub struct Message;",
        ),
    ]);
    let all = found.join("\n");
    assert_eq!(found.len(), 2, "client ↔ message and rest ↔ client: {all}");
    for evidence in [
        "client → message: client/mod.rs names crate::message::Message",
        "message → client: message.rs names crate::client::ClientError",
        "rest → client: rest/mod.rs names crate::client::ClientError",
        "client → rest: client/mod.rs names crate::rest::RestLane",
    ] {
        assert!(all.contains(evidence), "missing {evidence:?} in {all}");
    }
}

#[test]
fn an_inline_path_in_a_body_is_followed() {
    let found = cycles(&[
        ("lib.rs", "mod client; mod rest;"),
        (
            "client/mod.rs",
            "use crate::rest::RestLane; pub struct Shared;",
        ),
        (
            "rest/mod.rs",
            "pub struct RestLane; fn mint() { let _ = crate::client::Shared::default(); }",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("crate::client::Shared::default"),
        "{}",
        found[0]
    );
}

#[test]
fn a_path_through_a_root_re_export_counts_for_the_module_it_comes_from() {
    let files = [
        ("lib.rs", "mod commands; mod rest; pub use rest::RestLane;"),
        (
            "commands/context.rs",
            "pub struct CommandContext; impl CommandContext { fn rest(&self) -> crate::RestLane { self.lane() } }",
        ),
        ("commands/mod.rs", "mod context; pub use context::*;"),
        ("rest/mod.rs", "pub struct RestLane; fn f(_: crate::commands::CommandContext) {}"),
    ];
    let found = cycles(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("commands → rest") || found[0].contains("rest → commands"));
    let graph = graph(&sources(&files)).unwrap();
    assert!(
        !graph.depends("commands", "crate"),
        "the root is looked through"
    );
}

#[test]
fn glob_re_exports_and_renames_are_followed() {
    let found = cycles(&[
        ("lib.rs", "mod commands; mod message; pub use commands::*;"),
        (
            "commands/mod.rs",
            "mod types; mod context; pub use types::*;",
        ),
        ("commands/types.rs", "pub struct CommandInvocation;"),
        (
            "commands/context.rs",
            "use crate::message::Message as M; pub struct CommandContext(M);",
        ),
        (
            "message.rs",
            "pub struct Message { command: Option<crate::CommandInvocation> }",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("message.rs names crate::CommandInvocation"),
        "{}",
        found[0]
    );
}

#[test]
fn super_paths_and_macro_tokens_are_followed() {
    let found = cycles(&[
        ("lib.rs", "mod session; mod dispatch;"),
        ("session/mod.rs", "mod login;"),
        (
            "session/login.rs",
            "fn f() { tracing::warn!(x = ?super::super::dispatch::Verdict::Plain, \"x\"); }",
        ),
        (
            "dispatch/mod.rs",
            "pub enum Verdict { Plain } use crate::session;",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("session/login.rs names super::super::dispatch::Verdict::Plain"),
        "{}",
        found[0]
    );
}

#[test]
fn a_directory_and_its_children_may_refer_to_each_other() {
    let files = [
        ("lib.rs", "mod client; mod rest;"),
        (
            "client/mod.rs",
            "mod outbound; struct Inner; use outbound::SessionOutbound; use crate::rest::RestLane;",
        ),
        (
            "client/outbound.rs",
            "pub(super) struct SessionOutbound; fn f(_: &super::Inner) {}
             mod tests { use super::*; use crate::client::Inner; }",
        ),
        ("rest/mod.rs", "pub struct RestLane; use std::sync::Arc; use self::inner::X; mod inner { pub struct X; }"),
    ];
    assert_eq!(cycles(&files), Vec::<String>::new());
    let graph = graph(&sources(&files)).unwrap();
    assert!(graph.depends("client", "rest"));
    assert!(!graph.depends("rest", "client"));
}

#[test]
fn a_file_that_does_not_parse_is_named() {
    let err = graph(&sources(&[("lib.rs", "mod a;"), ("a.rs", "fn (")]))
        .err()
        .unwrap();
    assert!(err.starts_with("a.rs does not parse"), "{err}");
}

#[test]
fn no_workspace_source_file_is_over_600_lines_outside_its_tests() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = file_size::workspace_sources(&workspace);
    // Every crate's sources were read, this file's crate and botlane-proto among them.
    for expected in [
        "crates/botlane/src/lib.rs",
        "crates/botlane-proto/src/lib.rs",
    ] {
        assert!(
            files.iter().any(|f| f.path == expected),
            "{expected} was not counted"
        );
    }
    let problems = file_size::violations(&files, file_size::ALLOWED);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn test_modules_and_test_items_are_not_counted() {
    let text = "\
//! A file.
fn a() {}

#[cfg(test)]
mod tests;

impl A {
    #[cfg(test)]
    #[allow(dead_code)]
    fn only_in_tests() {
        if x {
        }
    }
    fn b() {}
}

#[cfg(test)]
mod more_tests {
    fn c() {
        let s = \"}\";
    }
}
";
    // Counted: the header, `fn a`, three blanks, `impl A {`, `fn b`, its `}`.
    assert_eq!(file_size::non_test_lines(text).unwrap(), 8);
    assert_eq!(
        file_size::non_test_lines("fn a() {}\nfn b() {}\n").unwrap(),
        2
    );
    let err = file_size::non_test_lines("#[cfg(test)]\nmod t {\n").unwrap_err();
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn the_rule_names_what_is_over_and_keeps_its_allow_list_honest() {
    let file = |path: &str, lines: usize, header: &str| file_size::Counted {
        path: path.to_owned(),
        lines,
        header: header.to_owned(),
    };
    let files = [
        file("crates/a/src/big.rs", 601, "//! Big."),
        file("crates/a/src/ok.rs", 600, "//! Fine."),
        file(
            "crates/a/src/listed.rs",
            900,
            "//! One table, over 600 lines: it is generated.",
        ),
        file("crates/a/src/no_reason.rs", 700, "//! Long."),
        file(
            "crates/a/src/shrunk.rs",
            10,
            "//! Was long, over 600 lines once.",
        ),
    ];
    let allowed = [
        "crates/a/src/listed.rs",
        "crates/a/src/no_reason.rs",
        "crates/a/src/shrunk.rs",
        "crates/a/src/gone.rs",
    ];
    let problems = file_size::violations(&files, &allowed);
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(
        problems[0].starts_with("crates/a/src/big.rs has 601 lines outside its tests, over 600")
    );
    assert!(problems[1].contains("no_reason.rs is on ALLOWED but its header does not say why"));
    assert!(problems[2].contains("shrunk.rs is on ALLOWED but has 10 lines"));
    assert!(problems[3].contains("gone.rs is on ALLOWED but does not exist"));
}

fn botlane_listing() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api/botlane.txt");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_root_holds_exactly_its_allow_list() {
    let items = surface::items(&botlane_listing(), "botlane");
    let root = surface::root_names(&items, "botlane");
    let allowed: BTreeSet<String> = surface::ROOT.iter().map(|n| (*n).to_owned()).collect();
    assert_eq!(
        allowed.len(),
        surface::ROOT.len(),
        "ROOT names a name twice"
    );
    assert!(
        allowed.len() <= surface::MAX_ROOT,
        "{} names at the root, more than {}",
        allowed.len(),
        surface::MAX_ROOT
    );
    let extra: Vec<&String> = root.difference(&allowed).collect();
    let missing: Vec<&String> = allowed.difference(&root).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "the root of docs/api/botlane.txt differs from surface::ROOT: \
         at the root but not listed {extra:?}, listed but not at the root {missing:?}"
    );
}

#[test]
fn every_public_name_has_one_path_but_through_the_prelude() {
    let items = surface::items(&botlane_listing(), "botlane");
    // The listing was read: the root alone has dozens of names.
    assert!(items.len() > 150, "only {} items", items.len());
    let problems = surface::second_paths(&items, "botlane::prelude");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_second_path_and_a_root_name_are_seen_in_a_listing() {
    let listing = "\
pub mod botlane
pub mod botlane::prelude
pub use botlane::prelude::Client
pub struct botlane::Client<D>
pub fn botlane::Client<D>::new(botlane::ClientOptions) -> Self
pub const botlane::MAX_X: usize
pub const botlane::Events::CAPACITY: usize
pub use botlane::Command // re-exports botlane_macros::Command
pub trait botlane::Command
pub fn botlane::canonicalize_menu(&[botlane::CommandDeclaration]) -> botlane::CanonicalMenu
pub mod botlane::framework
#[non_exhaustive] pub struct botlane::framework::Check<D>
pub type botlane::framework::Check = botlane::Other
impl botlane::framework::CommandOptionValue for bool
pub const bool::KIND: botlane::CommandOptionType
pub fn botlane::framework::canonicalize_menu(&[botlane::CommandDeclaration])
pub use botlane::prelude::Lonely
pub use botlane::crypto::<<botlane_proto::crypto::*>> // re-exports botlane_proto::crypto
";
    let items = surface::items(listing, "botlane");
    let root: Vec<String> = surface::root_names(&items, "botlane").into_iter().collect();
    assert_eq!(
        root,
        [
            "Client",
            "Command",
            "MAX_X",
            "canonicalize_menu",
            "framework",
            "prelude"
        ]
    );
    assert_eq!(
        surface::second_paths(&items, "botlane::prelude"),
        [
            "Lonely is in the prelude only",
            "canonicalize_menu is at botlane, botlane::framework",
        ]
    );
}
