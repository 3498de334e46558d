//! The 600-line rule (issue 10, item 9): no source file of any workspace
//! crate (`crates/*/src/**/*.rs`) has more than [`MAX_LINES`] lines outside
//! its tests, unless it is on [`ALLOWED`] and its header (the leading `//!`
//! lines) states why.
//!
//! Test code is what a `#[cfg(test)]` attribute covers: the item after it,
//! from the attribute to the line that closes the item at the attribute's
//! own indentation (rustfmt's layout, which CI enforces), or the one line
//! of an item that ends with `;`.

use std::path::Path;

/// The most lines a source file may have outside its tests.
pub(crate) const MAX_LINES: usize = 600;

/// Files allowed over [`MAX_LINES`], by path from the workspace root; each
/// must say why in its header, with the words `over 600 lines`.
pub(crate) const ALLOWED: &[&str] = &[];

/// One source file's non-test line count.
pub(crate) struct Counted {
    pub(crate) path: String,
    pub(crate) lines: usize,
    pub(crate) header: String,
}

/// Counts the lines of `text` that are not test code.
pub(crate) fn non_test_lines(text: &str) -> Result<usize, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut count = 0;
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            count += 1;
            i += 1;
            continue;
        }
        let indent = indentation(lines[i]);
        let mut j = i + 1;
        // Further attributes of the same item.
        while j < lines.len() && lines[j].trim_start().starts_with("#[") {
            j += 1;
        }
        let Some(item) = lines.get(j) else {
            return Err(format!(
                "line {}: #[cfg(test)] with no item after it",
                i + 1
            ));
        };
        if item.trim_end().ends_with(';') {
            i = j + 1;
            continue;
        }
        let close = (j + 1..lines.len())
            .find(|&k| indentation(lines[k]) == indent && lines[k].trim_start().starts_with('}'));
        match close {
            Some(k) => i = k + 1,
            None => {
                return Err(format!(
                    "line {}: the #[cfg(test)] item is not closed at its indentation",
                    i + 1
                ))
            }
        }
    }
    Ok(count)
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The leading `//!` lines of a file, joined.
pub(crate) fn header(text: &str) -> String {
    text.lines()
        .take_while(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crates/*/src/**/*.rs` file under `workspace`, counted.
pub(crate) fn workspace_sources(workspace: &Path) -> Vec<Counted> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            let rust = super::tree(&src, |_| false).into_iter();
            files.extend(rust.filter(|p| p.ends_with(".rs")).map(|p| src.join(p)));
        }
    }
    files.sort();
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let path = file
                .strip_prefix(workspace)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let lines = non_test_lines(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
            Counted {
                path,
                lines,
                header: header(&text),
            }
        })
        .collect()
}

/// What breaks the rule: files over the limit that are not allowed, allowed
/// files whose header gives no reason, and allowed files that no longer
/// need it (so the list does not outlive its reasons).
pub(crate) fn violations(files: &[Counted], allowed: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        let listed = allowed.contains(&file.path.as_str());
        if file.lines > MAX_LINES && !listed {
            out.push(format!(
                "{} has {} lines outside its tests, over {MAX_LINES}: split it by concept, \
                 or state the reason in its header and add it to ALLOWED",
                file.path, file.lines
            ));
        } else if listed && file.lines <= MAX_LINES {
            out.push(format!(
                "{} is on ALLOWED but has {} lines outside its tests: remove it from the list",
                file.path, file.lines
            ));
        } else if listed && !file.header.contains("over 600 lines") {
            out.push(format!(
                "{} is on ALLOWED but its header does not say why it is over 600 lines",
                file.path
            ));
        }
    }
    for path in allowed {
        if !files.iter().any(|f| f.path == *path) {
            out.push(format!("{path} is on ALLOWED but does not exist"));
        }
    }
    out
}
