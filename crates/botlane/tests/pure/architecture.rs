//! One-way dependencies (issue 10, item 1; issue 31, item 3): in every
//! crate of the workspace, no cycle between the concepts of a folder, at
//! every level: the crate's top-level modules (`client`, `session`,
//! `dispatch`, `framework`, `commands`…), then the files and folders inside
//! each folder (`commands/`, `framework/`, `session/`, `dispatch/`, the
//! devserver's `state/`…). A `mod.rs` and its own children may refer to
//! each other. `checker.rs` builds the graphs from the sources with `syn`;
//! the synthetic cases below prove it sees what it must (the old
//! client ↔ rest ↔ message cycle, the old registry → handler → context →
//! registry loop inside `commands/`, inline paths, re-exports, globs,
//! `super`, macro tokens).
//!
//! Files by concept (issue 10, item 9): `file_size.rs` counts the lines of
//! every workspace crate's sources outside their tests and fails on a file
//! over 600 that is not on its allow-list with a reason in its header.
//!
//! Docs by role (issue 31, item 6): `doc_paths.rs` fails on a path named
//! in the docs that does not exist.
//!
//! One path to each public item (issue 31, item 1): `surface.rs` reads the
//! public API listing; the root holds exactly its allow-list, and no name
//! is at two public paths but through the prelude.

#![allow(clippy::unwrap_used)]

#[path = "architecture/checker.rs"]
mod checker;
#[path = "architecture/doc_paths.rs"]
mod doc_paths;
#[path = "architecture/file_size.rs"]
mod file_size;
#[path = "architecture/surface.rs"]
mod surface;

use std::collections::BTreeSet;
use std::path::Path;

use checker::{graph, Source};

/// The workspace root.
fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file and folder below `root` but those `skip` is true of, by
/// their paths relative to `root` (`/`-separated, a folder's with a
/// trailing `/`); a folder skipped is not entered.
fn tree(root: &Path, skip: impl Fn(&str) -> bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let mut relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                relative.push('/');
            }
            if skip(&relative) {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            }
            out.insert(relative);
        }
    }
    out
}

/// The library sources of the workspace member at `member` (its `src/`,
/// paths relative to it), by path. A `main.rs` beside a `lib.rs`, and
/// `src/bin/`, are crates of their own: binaries, which only use the
/// library.
fn crate_sources(member: &str) -> Vec<Source> {
    let root = workspace().join(member).join("src");
    let has_lib = root.join("lib.rs").exists();
    tree(&root, |path| {
        has_lib && (path == "main.rs" || path == "bin/")
    })
    .into_iter()
    .filter(|path| path.ends_with(".rs"))
    .map(|path| Source {
        text: std::fs::read_to_string(root.join(&path)).unwrap(),
        path,
    })
    .collect()
}

fn library_sources() -> Vec<Source> {
    crate_sources("crates/botlane")
}

/// The workspace's members, as the root `Cargo.toml` lists them.
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let list = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("members = ["))
        .and_then(|rest| rest.strip_suffix(']'))
        .expect("the workspace manifest lists its members on one line");
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
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
fn no_folder_of_any_crate_has_a_cycle_between_its_concepts() {
    let mut problems = Vec::new();
    let mut checked = BTreeSet::new();
    for member in members() {
        let graphs = checker::graphs(&crate_sources(&member)).unwrap();
        for (folder, graph) in graphs {
            for cycle in graph.cycles() {
                problems.push(format!("{member}/src/{folder}: {cycle}"));
            }
            checked.insert(format!("{member}/src/{folder}"));
        }
    }
    assert!(
        problems.is_empty(),
        "dependency cycles between the concepts of a folder:\n{}",
        problems.join("\n")
    );
    // The folders come from the tree, so a new one is checked by itself;
    // these are the ones the layout is built around.
    for folder in [
        "crates/botlane/src/",
        "crates/botlane/src/commands",
        "crates/botlane/src/framework",
        "crates/botlane/src/session",
        "crates/botlane/src/dispatch",
        "crates/botlane-devserver/src/",
        "crates/botlane-devserver/src/state",
        "crates/botlane-devserver/src/realtime",
        "crates/botlane-proto/src/",
        "crates/botlane-macros/src/",
    ] {
        assert!(
            checked.contains(folder),
            "{folder} was not checked: {checked:?}"
        );
    }
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
fn the_old_registry_handler_context_circle_is_caught_inside_its_folder() {
    // The command area before the framework had its own folder, reduced
    // to the loop: the registry holds handlers, a handler takes a
    // context, a context held the registry.
    let files = sources(&[
        ("lib.rs", "mod client; mod commands; pub use commands::*;"),
        (
            "client/mod.rs",
            "use crate::CommandRegistry; pub struct Client(CommandRegistry);",
        ),
        (
            "commands/mod.rs",
            "mod context; mod handler; mod registry; mod types;
             pub use context::*; pub use handler::*; pub use registry::*; pub use types::*;",
        ),
        ("commands/types.rs", "pub struct CommandDeclaration;"),
        (
            "commands/registry.rs",
            "use super::handler::CommandHandler; use super::types::CommandDeclaration;
             pub struct CommandRegistry { commands: Vec<(CommandDeclaration, CommandHandler)> }",
        ),
        (
            "commands/handler.rs",
            "use super::context::CommandContext; pub struct CommandHandler(fn(CommandContext));",
        ),
        (
            "commands/context.rs",
            "use std::sync::Arc; use super::registry::CommandRegistry;
             pub struct CommandContext { registry: Option<Arc<CommandRegistry>> }",
        ),
    ]);
    let graphs = checker::graphs(&files).unwrap();
    // One level down it is invisible: `commands` is one node there.
    assert_eq!(graphs[""].cycles(), Vec::<String>::new());
    let found = graphs["commands"].cycles();
    assert_eq!(found.len(), 1, "{found:?}");
    for evidence in [
        "commands/registry → commands/handler: commands/registry.rs names super::handler::CommandHandler",
        "commands/handler → commands/context: commands/handler.rs names super::context::CommandContext",
        "commands/context → commands/registry: commands/context.rs names super::registry::CommandRegistry",
    ] {
        assert!(found[0].contains(evidence), "missing {evidence:?} in {}", found[0]);
    }
    // Cut at a narrow trait the context holds instead, the loop is gone.
    let mut cut = files;
    let context = cut
        .iter_mut()
        .find(|s| s.path == "commands/context.rs")
        .unwrap();
    context.text = "use std::sync::Arc; pub trait RegistryView {}
        pub struct CommandContext { registry: Option<Arc<dyn RegistryView>> }"
        .to_owned();
    let graphs = checker::graphs(&cut).unwrap();
    assert_eq!(graphs["commands"].cycles(), Vec::<String>::new());
}

#[test]
fn every_folder_gets_its_graph_and_test_code_names_no_dependency() {
    let graphs = checker::graphs(&sources(&[
        ("lib.rs", "mod a; mod b;"),
        ("a/mod.rs", "mod x; mod y; mod deep;"),
        ("a/x.rs", "use super::y::Y; pub struct X;"),
        (
            "a/y.rs",
            "pub struct Y;
             #[cfg(test)] mod tests { use super::super::x::X; use crate::b::B; }",
        ),
        ("a/deep/mod.rs", "mod p; mod q;"),
        ("a/deep/p.rs", "use super::q::Q; pub struct P;"),
        ("a/deep/q.rs", "use super::p::P; pub struct Q;"),
        ("b.rs", "use crate::a::Thing; pub struct B;"),
    ]))
    .unwrap();
    let folders: Vec<&str> = graphs.keys().map(String::as_str).collect();
    assert_eq!(folders, ["", "a", "a/deep"], "a test module is no folder");
    // `a/y`'s tests name `x` and `b`, which name it: no cycle, they are tests.
    assert_eq!(graphs[""].cycles(), Vec::<String>::new());
    assert_eq!(graphs["a"].cycles(), Vec::<String>::new());
    assert!(graphs["a"].depends("a/x", "a/y"));
    assert!(!graphs["a"].depends("a/y", "a/x"));
    // Three levels down, found all the same.
    let deep = graphs["a/deep"].cycles();
    assert_eq!(deep.len(), 1, "{deep:?}");
    assert!(
        deep[0].starts_with("a/deep/p → a/deep/q → a/deep/p"),
        "{}",
        deep[0]
    );
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
    let files = file_size::workspace_sources(&workspace());
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
    let path = workspace().join("docs/api/botlane.txt");
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
