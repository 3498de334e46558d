//! The renderer behind `scripts/public-api`: turns rustdoc JSON into the
//! one-item-per-line listing checked in under `docs/api/`, and names the
//! workspace crates that get a listing.
//!
//! Usage:
//!   api-listing crates <workspace Cargo.toml>   published library crates, one per line
//!   api-listing render <rustdoc JSON file>      the listing of one crate on stdout
//!
//! The listing is the `public-api` crate's rendering, sorted, with blanket
//! impls left out: they come from the dependencies (`impl<T> From<T> for T`,
//! `impl<T> Instrument for T`, …), so they would change with a dependency's
//! upgrade, never with botlane's own surface. Auto trait impls (Send, Sync,
//! Unpin, UnwindSafe) and derived impls stay: losing one is a breaking change.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, ExitCode};

use rustdoc_types::{Crate, Impl, ItemEnum};
use serde::Deserialize;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [mode, manifest] if mode == "crates" => crates(Path::new(manifest)),
        [mode, json] if mode == "render" => render(Path::new(json)),
        _ => Err(Error::Usage),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("api-listing: {error}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Debug)]
enum Error {
    Usage,
    Io(String, io::Error),
    Json(String, serde_json::Error),
    Cargo(String),
    FormatVersion { file: String, found: u32 },
    PublicApi(String, public_api::Error),
    Inconsistent(String, u32),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage => f.write_str(
                "usage: api-listing crates <workspace Cargo.toml> | api-listing render <rustdoc JSON>",
            ),
            Error::Io(what, e) => write!(f, "{what}: {e}"),
            Error::Json(what, e) => write!(f, "{what} is not the expected JSON: {e}"),
            Error::Cargo(why) => write!(f, "cargo metadata failed: {why}"),
            Error::FormatVersion { file, found } => write!(
                f,
                "{file} is rustdoc JSON format {found}, but this tool reads format {} \
                 (public-api 0.52.1, rustdoc-types 0.57.3); the toolchain changed: pin the \
                 public-api release that reads format {found} in tools/api-listing/Cargo.toml",
                rustdoc_types::FORMAT_VERSION
            ),
            Error::PublicApi(file, e) => write!(f, "cannot list the public API of {file}: {e}"),
            Error::Inconsistent(file, id) => write!(
                f,
                "{file}: public-api listed item {id}, which the JSON's index does not hold"
            ),
        }
    }
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
}

#[derive(Deserialize)]
struct Package {
    id: String,
    name: String,
    /// `None`: publishable anywhere; `Some([])`: `publish = false`.
    publish: Option<Vec<String>>,
    targets: Vec<Target>,
}

#[derive(Deserialize)]
struct Target {
    kind: Vec<String>,
}

/// Every workspace member that can be published and has a library target:
/// a crate added later gets a listing without touching the script.
fn crates(manifest: &Path) -> Result<(), Error> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|e| Error::Io("cannot run cargo".into(), e))?;
    if !output.status.success() {
        return Err(Error::Cargo(
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        ));
    }
    let metadata: Metadata = serde_json::from_slice(&output.stdout)
        .map_err(|e| Error::Json("the output of cargo metadata".into(), e))?;
    let mut names: Vec<&str> = metadata
        .packages
        .iter()
        .filter(|p| metadata.workspace_members.contains(&p.id))
        .filter(|p| {
            p.publish
                .as_ref()
                .is_none_or(|registries| !registries.is_empty())
        })
        .filter(|p| {
            p.targets
                .iter()
                .any(|t| t.kind.iter().any(|k| k == "lib" || k == "proc-macro"))
        })
        .map(|p| p.name.as_str())
        .collect();
    names.sort_unstable();
    let mut out = io::stdout().lock();
    for name in names {
        writeln!(out, "{name}").map_err(|e| Error::Io("cannot write to stdout".into(), e))?;
    }
    Ok(())
}

#[derive(Deserialize)]
struct Header {
    format_version: u32,
}

/// The auto traits a stable crate can rely on. rustdoc also reports the
/// unstable ones (`Freeze`, `UnsafeUnpin`), which no stable user can name, so
/// they would only add churn.
const STABLE_AUTO_TRAITS: [&[&str]; 5] = [
    &["core", "marker", "Send"],
    &["core", "marker", "Sync"],
    &["core", "marker", "Unpin"],
    &["core", "panic", "unwind_safe", "UnwindSafe"],
    &["core", "panic", "unwind_safe", "RefUnwindSafe"],
];

fn render(json: &Path) -> Result<(), Error> {
    let file = json.display().to_string();
    let text =
        std::fs::read_to_string(json).map_err(|e| Error::Io(format!("cannot read {file}"), e))?;
    // Checked first: public-api reads a neighbouring format without an error
    // but may render it wrongly.
    let header: Header = parse(&text).map_err(|e| Error::Json(file.clone(), e))?;
    if header.format_version != rustdoc_types::FORMAT_VERSION {
        return Err(Error::FormatVersion {
            file,
            found: header.format_version,
        });
    }
    let krate: Crate = parse(&text).map_err(|e| Error::Json(file.clone(), e))?;
    drop(text);
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .build()
        .map_err(|e| Error::PublicApi(file.clone(), e))?;
    let mut out = io::stdout().lock();
    for item in api.items() {
        let Some(source) = krate.index.get(&item.id()) else {
            return Err(Error::Inconsistent(file, item.id().0));
        };
        match &source.inner {
            ItemEnum::Impl(imp) if imp.is_synthetic && !is_stable_auto_trait(&krate, imp) => {
                continue
            }
            ItemEnum::Use(import) => {
                // public-api prints a foreign re-export by its local name
                // only (`pub use botlane::EventRecvError`); the foreign path is
                // what a review (and the leak check) must see.
                let foreign = import
                    .id
                    .filter(|id| !krate.index.contains_key(id))
                    .and_then(|id| krate.paths.get(&id));
                match foreign {
                    Some(summary) => {
                        writeln!(out, "{item} // re-exports {}", summary.path.join("::"))
                    }
                    None => writeln!(out, "{item}"),
                }
            }
            _ => writeln!(out, "{item}"),
        }
        .map_err(|e| Error::Io("cannot write to stdout".into(), e))?;
    }
    Ok(())
}

/// Without serde_json's nesting limit of 128, as public-api reads the same
/// file: deeply nested types of large crates exceed it, and rustdoc's output
/// is trusted input.
fn parse<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    T::deserialize(&mut deserializer)
}

fn is_stable_auto_trait(krate: &Crate, imp: &Impl) -> bool {
    imp.trait_
        .as_ref()
        .and_then(|t| krate.paths.get(&t.id))
        .is_some_and(|summary| {
            STABLE_AUTO_TRAITS.iter().any(|stable| {
                summary
                    .path
                    .iter()
                    .map(String::as_str)
                    .eq(stable.iter().copied())
            })
        })
}
