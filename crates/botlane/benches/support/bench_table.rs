//! Rows of the table `scripts/bench` prints (and `docs/benchmarks.md`
//! records): when `BOTLANE_BENCH_TABLE` names a file, each row is appended
//! to it as one tab-separated line, with the load average at the time.

use std::io::Write;

/// The environment variable naming the table file.
pub(crate) const TABLE_ENV: &str = "BOTLANE_BENCH_TABLE";

/// The WebSocket crate of the client and of every baseline client in the
/// benches that write rows.
pub(crate) const WEBSOCKET: &str = "tokio-websockets (bot and baseline)";

/// Appends one row: the command that measured it, what was measured, the
/// figure, its baseline from the same run, their ratio and the goal.
pub(crate) fn row(
    command: &str,
    measure: &str,
    figure: &str,
    baseline: &str,
    ratio: &str,
    goal: &str,
) {
    row_of(WEBSOCKET, command, measure, figure, baseline, ratio, goal);
}

/// [`row`] for a bench whose figures involve `crates` instead of
/// [`WEBSOCKET`].
pub(crate) fn row_of(
    crates: &str,
    command: &str,
    measure: &str,
    figure: &str,
    baseline: &str,
    ratio: &str,
    goal: &str,
) {
    let Some(path) = std::env::var_os(TABLE_ENV) else {
        return;
    };
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned());
    let line = [
        command, measure, figure, baseline, ratio, goal, &load, crates,
    ]
    .join("\t");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot append to {}: {e}", path.to_string_lossy()));
    writeln!(file, "{line}")
        .unwrap_or_else(|e| panic!("cannot append to {}: {e}", path.to_string_lossy()));
}
