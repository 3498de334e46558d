//! The guide's code is real code: every Rust block of `docs/guide.md` and
//! `docs/coming-from-poise.md` is an excerpt of a file of this workspace
//! that is compiled (and, for the test files, run), named by a marker on
//! the last non-blank line before the block's fence, such as
//! `<!-- file: examples/dicebot/src/lib.rs -->`.
//!
//! The block must appear in that file verbatim, as consecutive lines. A line
//! that is only `// ...` (or `...` in a block that is not Rust) leaves lines
//! out: the parts around it must appear in that order. The file must exist
//! and be compiled: the root of a target of a workspace member (`src/lib.rs`,
//! `src/main.rs`, `tests/*.rs`, `tests/*/main.rs`, `examples/…`, `benches/…`)
//! or a module that a compiled file declares with `mod name;`.
//!
//! A Rust block without a `file:` marker is an error, unless it is marked
//! `rust,ignore` with `<!-- not compiled: why -->` before it (poise's code,
//! which is not a dependency). Blocks in other languages (`text`, `toml`,
//! `sh`, `json`) need no marker; one with a `file:` marker is checked the
//! same way (a config file quoted whole, say), without the compile rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The pages whose blocks are checked, relative to the workspace root.
const PAGES: &[&str] = &["docs/guide.md", "docs/coming-from-poise.md"];

const FILE_MARKER: &str = "file:";
const NOT_COMPILED_MARKER: &str = "not compiled:";

/// Where the checked files are read from: the workspace, or a map in the
/// unit tests below.
trait Files {
    /// The text of `path` (relative to the workspace root), if it exists.
    fn read(&self, path: &str) -> Option<String>;
}

struct Workspace(PathBuf);

impl Files for Workspace {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(path)).ok()
    }
}

impl Files for BTreeMap<&str, &str> {
    fn read(&self, path: &str) -> Option<String> {
        self.get(path).map(|text| (*text).to_owned())
    }
}

/// What precedes a block: the last non-blank line before its fence, when
/// it is one of the markers.
#[derive(Debug, PartialEq)]
enum Marker {
    None,
    File(String),
    NotCompiled(String),
}

struct Block {
    /// The info string: `rust`, `rust,ignore`, `text`…
    info: String,
    lines: Vec<String>,
    marker: Marker,
    /// The 1-based line of the opening fence.
    at: usize,
}

fn marker(line: &str) -> Marker {
    let Some(inner) = line
        .trim()
        .strip_prefix("<!--")
        .and_then(|l| l.strip_suffix("-->"))
    else {
        return Marker::None;
    };
    let inner = inner.trim();
    if let Some(path) = inner.strip_prefix(FILE_MARKER) {
        Marker::File(path.trim().to_owned())
    } else if let Some(reason) = inner.strip_prefix(NOT_COMPILED_MARKER) {
        Marker::NotCompiled(reason.trim().to_owned())
    } else {
        Marker::None
    }
}

/// The fenced blocks of a page, or the problem that stops reading it.
fn blocks(page: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut previous = "";
    for (index, line) in page.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    lines: Vec::new(),
                    marker: marker(previous),
                    at: index + 1,
                });
            }
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some(block), None) => block.lines.push(line.to_owned()),
            (None, None) => {}
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    match open {
        Some(block) => Err(format!("line {}: the block is never closed", block.at)),
        None => Ok(blocks),
    }
}

fn is_rust(info: &str) -> bool {
    info.split(',').next().map(str::trim) == Some("rust")
}

/// The parts of a block between its elision lines, empty parts dropped.
fn parts(block: &Block) -> Vec<&[String]> {
    let elision = |line: &String| {
        let line = line.trim();
        if is_rust(&block.info) {
            line == "// ..." || line == "// …"
        } else {
            line == "..." || line == "…"
        }
    };
    block
        .lines
        .split(elision)
        .filter(|part| !part.is_empty())
        .collect()
}

/// Whether `parts` appear in `file` in that order, each as consecutive
/// whole lines.
fn appears_in(parts: &[&[String]], file: &str) -> bool {
    let lines: Vec<&str> = file.lines().collect();
    let mut from = 0;
    for part in parts {
        let found = (from..=lines.len().saturating_sub(part.len())).find(|&start| {
            part.iter()
                .zip(&lines[start..start + part.len()])
                .all(|(a, b)| a == b)
        });
        match found {
            Some(start) if start + part.len() <= lines.len() => from = start + part.len(),
            _ => return false,
        }
    }
    true
}

/// The member directories of the workspace, from the root `Cargo.toml`.
fn members(files: &impl Files) -> Vec<String> {
    let manifest = files.read("Cargo.toml").unwrap_or_default();
    let Some(list) = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = ["))
    else {
        return Vec::new();
    };
    list.split(',')
        .map(|m| m.trim().trim_end_matches(']').trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `rel`, relative to a crate's directory, is the root of one of
/// the targets cargo finds by itself.
fn is_target_root(rel: &str) -> bool {
    let segments: Vec<&str> = rel.split('/').collect();
    match segments.as_slice() {
        ["src", "lib.rs" | "main.rs"] | ["build.rs"] => true,
        ["src", "bin", file] | ["tests" | "examples" | "benches", file] => file.ends_with(".rs"),
        ["src", "bin", _, "main.rs"] | ["tests" | "examples" | "benches", _, "main.rs"] => true,
        _ => false,
    }
}

/// Whether `text` declares the module `name` (`mod name;`, any visibility).
fn declares_module(text: &str, name: &str) -> bool {
    let declaration = format!("mod {name};");
    text.lines().any(|line| {
        let line = line.trim();
        line == declaration
            || (line.starts_with("pub") && line.ends_with(&format!(" {declaration}")))
    })
}

/// Whether `path` is compiled: a target root of a workspace member, or a
/// module declared by a compiled file.
fn is_compiled(files: &impl Files, path: &str) -> bool {
    let members = members(files);
    let Some(member) = members
        .iter()
        .filter(|m| path.starts_with(&format!("{m}/")))
        .max_by_key(|m| m.len())
    else {
        return false;
    };
    is_compiled_in(files, member, path, 0)
}

fn is_compiled_in(files: &impl Files, member: &str, path: &str, depth: usize) -> bool {
    let Some(rel) = path.strip_prefix(&format!("{member}/")) else {
        return false;
    };
    if is_target_root(rel) {
        return true;
    }
    // `dir/name.rs` or `dir/name/mod.rs` is module `name` of a file in `dir`
    // (`mod.rs`, `lib.rs`, `main.rs`) or of `dir.rs` itself.
    let (dir, name) = match path.strip_suffix("/mod.rs") {
        Some(module_dir) => match module_dir.rsplit_once('/') {
            Some((dir, name)) => (dir, name),
            None => return false,
        },
        None => match path.strip_suffix(".rs").and_then(|p| p.rsplit_once('/')) {
            Some((dir, name)) => (dir, name),
            None => return false,
        },
    };
    if depth > 16 {
        return false;
    }
    let parents = [
        format!("{dir}/mod.rs"),
        format!("{dir}/lib.rs"),
        format!("{dir}/main.rs"),
        format!("{dir}.rs"),
    ];
    parents.iter().any(|parent| {
        parent.as_str() != path
            && files
                .read(parent)
                .is_some_and(|text| declares_module(&text, name))
            && is_compiled_in(files, member, parent, depth + 1)
    })
}

/// Every problem of one page, each naming the page and the line.
fn check_page(files: &impl Files, name: &str, page: &str) -> Vec<String> {
    let blocks = match blocks(page) {
        Ok(blocks) => blocks,
        Err(problem) => return vec![format!("{name}: {problem}")],
    };
    let mut problems = Vec::new();
    for block in &blocks {
        let at = format!("{name}:{}", block.at);
        if block.info.is_empty() {
            problems.push(format!(
                "{at}: a block without a language (write `rust`, `text`, `toml`, `sh`…)"
            ));
            continue;
        }
        let rust = is_rust(&block.info);
        let ignored = block.info.split(',').any(|a| a.trim() == "ignore");
        match &block.marker {
            Marker::NotCompiled(reason) if rust && ignored && !reason.is_empty() => {}
            Marker::NotCompiled(_) if rust && ignored => {
                problems.push(format!("{at}: `not compiled:` needs a reason"));
            }
            Marker::NotCompiled(_) => problems.push(format!(
                "{at}: only a `rust,ignore` block can be marked `not compiled:`"
            )),
            Marker::None if rust && ignored => problems.push(format!(
                "{at}: a `rust,ignore` block needs `<!-- not compiled: why -->` before it"
            )),
            Marker::None if rust => problems.push(format!(
                "{at}: a Rust block needs `<!-- file: path -->` before it, naming the \
                 compiled file it is an excerpt of"
            )),
            Marker::None => {}
            Marker::File(_) if ignored => problems.push(format!(
                "{at}: a block from a compiled file cannot be `ignore`"
            )),
            Marker::File(path) => {
                if path.split('/').any(|s| s == ".." || s.is_empty()) {
                    problems.push(format!(
                        "{at}: {path} must be a plain path from the workspace root"
                    ));
                    continue;
                }
                let Some(text) = files.read(path) else {
                    problems.push(format!("{at}: {path} does not exist"));
                    continue;
                };
                if !appears_in(&parts(block), &text) {
                    problems.push(format!(
                        "{at}: the block does not appear verbatim in {path} (it drifted: \
                         copy it from the file again)"
                    ));
                }
                if path.ends_with(".rs") && !is_compiled(files, path) {
                    problems.push(format!(
                        "{at}: {path} is not compiled: it is no target root of a \
                         workspace member and no compiled file declares it as a module"
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn every_snippet_of_the_guide_is_an_excerpt_of_a_compiled_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = Workspace(root);
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in PAGES {
        let text = files
            .read(page)
            .unwrap_or_else(|| panic!("{page} is readable"));
        let blocks = blocks(&text).unwrap_or_default();
        checked += blocks
            .iter()
            .filter(|b| matches!(b.marker, Marker::File(_)))
            .count();
        problems.extend(check_page(&files, page, &text));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The pages are mostly real code: a guide that lost its markers would
    // pass the loop above vacuously.
    assert!(checked >= 20, "only {checked} blocks name their file");
}

/// A small workspace: one member with a library, a test target with a
/// module, and a stray file nobody declares.
fn workspace() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("Cargo.toml", "[workspace]\nmembers = [\"crates/bot\"]\n"),
        ("crates/bot/src/lib.rs", "pub mod roll;\n\npub fn a() {}\n"),
        (
            "crates/bot/src/roll.rs",
            "pub fn roll() -> u8 {\n    4\n}\n\npub fn flip() -> bool {\n    true\n}\n",
        ),
        ("crates/bot/tests/kit/main.rs", "mod scene;\n"),
        ("crates/bot/tests/kit/scene.rs", "fn scene() {}\n"),
        ("crates/bot/src/stray.rs", "pub fn stray() {}\n"),
        ("crates/bot/config.json", "{\"listen\": \"127.0.0.1:0\"}\n"),
    ])
}

fn problems(page: &str) -> Vec<String> {
    check_page(&workspace(), "page.md", page)
}

#[test]
fn an_excerpt_as_it_is_in_its_file_passes() {
    let page = "Intro.\n\n<!-- file: crates/bot/src/roll.rs -->\n```rust\npub fn roll() -> u8 {\n    4\n}\n```\n";
    assert_eq!(problems(page), Vec::<String>::new());
    let elided = "<!-- file: crates/bot/src/roll.rs -->\n\n```rust\npub fn roll() -> u8 {\n// ...\npub fn flip() -> bool {\n```\n";
    assert_eq!(problems(elided), Vec::<String>::new());
    let module = "<!-- file: crates/bot/tests/kit/scene.rs -->\n```rust\nfn scene() {}\n```\n";
    assert_eq!(problems(module), Vec::<String>::new());
}

#[test]
fn a_drifted_snippet_fails() {
    // The file says 4.
    let page =
        "<!-- file: crates/bot/src/roll.rs -->\n```rust\npub fn roll() -> u8 {\n    6\n}\n```\n";
    let found = problems(page);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .starts_with("page.md:2: the block does not appear verbatim in crates/bot/src/roll.rs"),
        "{}",
        found[0]
    );
    // Indentation counts, and so does the order of the parts.
    let reindented =
        "<!-- file: crates/bot/src/roll.rs -->\n```rust\npub fn roll() -> u8 {\n  4\n}\n```\n";
    assert_eq!(problems(reindented).len(), 1);
    let reordered = "<!-- file: crates/bot/src/roll.rs -->\n```rust\npub fn flip() -> bool {\n// ...\npub fn roll() -> u8 {\n```\n";
    assert_eq!(problems(reordered).len(), 1);
}

#[test]
fn a_rust_block_without_its_file_fails() {
    let found = problems("Some prose.\n\n```rust\nfn main() {}\n```\n");
    assert_eq!(found.len(), 1);
    assert!(
        found[0].contains("needs `<!-- file: path -->`"),
        "{}",
        found[0]
    );
    // A marker further up, before other prose, does not count.
    let far =
        "<!-- file: crates/bot/src/roll.rs -->\nProse.\n```rust\npub fn roll() -> u8 {\n```\n";
    assert_eq!(problems(far).len(), 1);
    let bare = problems("```\nsomething\n```\n");
    assert!(bare[0].contains("without a language"), "{}", bare[0]);
}

#[test]
fn a_file_that_is_missing_or_not_compiled_fails() {
    let missing = problems("<!-- file: crates/bot/src/gone.rs -->\n```rust\nfn x() {}\n```\n");
    assert!(
        missing[0].contains("crates/bot/src/gone.rs does not exist"),
        "{missing:?}"
    );
    let stray =
        problems("<!-- file: crates/bot/src/stray.rs -->\n```rust\npub fn stray() {}\n```\n");
    assert_eq!(stray.len(), 1, "{stray:?}");
    assert!(stray[0].contains("is not compiled"), "{}", stray[0]);
    let outside = problems("<!-- file: ../secret.rs -->\n```rust\nfn x() {}\n```\n");
    assert!(outside[0].contains("plain path"), "{outside:?}");
}

#[test]
fn only_explained_rust_ignore_and_other_languages_go_without_a_file() {
    let explained = "<!-- not compiled: poise is not a dependency -->\n```rust,ignore\n#[poise::command(slash_command)]\n```\n";
    assert_eq!(problems(explained), Vec::<String>::new());
    let unexplained = "```rust,ignore\nfn x() {}\n```\n";
    assert!(problems(unexplained)[0].contains("not compiled: why"));
    let no_reason = "<!-- not compiled: -->\n```rust,ignore\nfn x() {}\n```\n";
    assert!(problems(no_reason)[0].contains("needs a reason"));
    let prose =
        "```text\nanything at all\n```\n\n```sh\ncargo run\n```\n\n```toml\n[package]\n```\n";
    assert_eq!(problems(prose), Vec::<String>::new());
    // Quoted from a file, a block in another language is checked too.
    let config =
        "<!-- file: crates/bot/config.json -->\n```json\n{\"listen\": \"127.0.0.1:7700\"}\n```\n";
    assert!(problems(config)[0].contains("does not appear verbatim"));
    let unclosed = problems("```rust\nfn x() {}\n");
    assert!(unclosed[0].contains("never closed"), "{unclosed:?}");
}

/// The two-terminal commands of the guide's "Run it on its own" section
/// name the config file that exists and the token it gives the bot.
#[test]
fn the_standing_bot_commands_match_its_config() {
    let files = Workspace(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let guide = files.read("docs/guide.md").expect("the guide is readable");
    let config_flag = guide
        .lines()
        .find_map(|l| l.split("--config ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the guide starts the devserver with --config FILE");
    let config = files
        .read(config_flag)
        .unwrap_or_else(|| panic!("the guide's --config {config_flag} exists"));
    let token = guide
        .lines()
        .find_map(|l| l.trim().strip_prefix("BOTLANE_TOKEN="))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the guide starts the bot with BOTLANE_TOKEN=…");
    assert!(
        config.contains(&format!("\"token\": \"{token}\"")),
        "{config_flag} gives no bot the token {token}"
    );
}
