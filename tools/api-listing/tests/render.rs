//! The renderer on a fixture crate documented by the machine's own rustdoc
//! (stable, with RUSTC_BOOTSTRAP=1, as scripts/public-api does), and the
//! crate selection on a fixture workspace.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TOOL: &str = env!("CARGO_BIN_EXE_api-listing");

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    // A leftover of an earlier run: start clean so no old file is read.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the cargo target tmp dir is writable");
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(TOOL)
        .args(args)
        .output()
        .expect("the api-listing binary runs")
}

/// rustdoc JSON of tests/fixture/lib.rs, built in `dir`.
fn fixture_json(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/lib.rs");
    let rustdoc = std::env::var("RUSTDOC").unwrap_or_else(|_| "rustdoc".into());
    let status = Command::new(rustdoc)
        .env("RUSTC_BOOTSTRAP", "1")
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--crate-name",
            "fixture",
        ])
        .args(["-Z", "unstable-options", "--output-format", "json", "-o"])
        .arg(dir)
        .arg(source)
        .status()
        .expect("rustdoc runs");
    assert!(status.success(), "rustdoc failed on the fixture");
    dir.join("fixture.json")
}

/// The listing of the fixture; `name` keeps the parallel tests' files apart.
fn listing(name: &str) -> Vec<String> {
    let dir = scratch(name);
    let json = fixture_json(&dir);
    let output = run(&["render", json.to_str().expect("the tmp path is UTF-8")]);
    assert!(
        output.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("the listing is UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn foreign_re_exports_name_the_foreign_path() {
    let lines = listing("foreign");
    assert!(
        lines.contains(
            &"pub use fixture::Map // re-exports std::collections::hash::map::HashMap".to_owned()
        ),
        "{lines:#?}"
    );
    // A re-export of the crate's own item is inlined, not annotated.
    assert!(
        lines.contains(&"pub struct fixture::Inner".to_owned()),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("Inner //")), "{lines:#?}");
}

#[test]
fn only_stable_auto_traits_are_listed() {
    let lines = listing("only");
    for expected in [
        "impl core::marker::Send for fixture::Plain",
        "impl core::marker::Sync for fixture::Plain",
        "impl core::marker::Unpin for fixture::Plain",
        "impl core::panic::unwind_safe::UnwindSafe for fixture::Plain",
        "impl core::panic::unwind_safe::RefUnwindSafe for fixture::Plain",
        "impl !core::marker::Sync for fixture::NotSync",
    ] {
        assert!(
            lines.contains(&expected.to_owned()),
            "{expected} missing: {lines:#?}"
        );
    }
    let unstable: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("Freeze") || l.contains("UnsafeUnpin"))
        .collect();
    assert!(unstable.is_empty(), "{unstable:#?}");
}

#[test]
fn blanket_impls_and_hidden_items_are_left_out_but_own_impls_stay() {
    let lines = listing("blanket");
    assert!(
        lines.contains(&"pub fn fixture::Plain::new() -> Self".to_owned()),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"impl core::default::Default for fixture::Plain".to_owned()),
        "{lines:#?}"
    );
    let leftovers: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("impl<") || l.contains("hidden_helper"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:#?}");
}

#[test]
fn another_format_version_is_refused_with_the_fix() {
    let dir = scratch("format");
    let json = dir.join("old.json");
    std::fs::write(&json, r#"{"format_version": 56, "index": {}}"#).expect("tmp is writable");
    let output = run(&["render", json.to_str().expect("the tmp path is UTF-8")]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("format 56"), "{stderr}");
    assert!(stderr.contains("reads format 57"), "{stderr}");
    assert!(stderr.contains("tools/api-listing/Cargo.toml"), "{stderr}");
}

#[test]
fn a_missing_file_is_named() {
    let output = run(&["render", "/nonexistent/botlane.json"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read /nonexistent/botlane.json"),
        "{stderr}"
    );
}

#[test]
fn crates_lists_published_library_members_only() {
    let dir = scratch("workspace");
    let member = |name: &str, manifest_extra: &str, file: &str| {
        let root = dir.join(name);
        std::fs::create_dir_all(root.join("src")).expect("tmp is writable");
        std::fs::write(
            root.join("Cargo.toml"),
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{manifest_extra}"),
        )
        .expect("tmp is writable");
        std::fs::write(root.join("src").join(file), "").expect("tmp is writable");
    };
    member("zeta-lib", "", "lib.rs");
    member("alpha-macros", "[lib]\nproc-macro = true\n", "lib.rs");
    member("private-lib", "publish = false\n", "lib.rs");
    member("some-bin", "", "main.rs");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nresolver = \"2\"\nmembers = [\"zeta-lib\", \"alpha-macros\", \"private-lib\", \"some-bin\"]\n",
    )
    .expect("tmp is writable");
    let manifest = dir.join("Cargo.toml");
    let output = run(&["crates", manifest.to_str().expect("the tmp path is UTF-8")]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "alpha-macros\nzeta-lib\n"
    );
}

#[test]
fn bad_arguments_print_the_usage() {
    let output = run(&["list"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("usage: api-listing"));
}
