//! Rows of the table `scripts/bench` prints (and `docs/benchmarks.md`
//! records): when `BOTLANE_BENCH_TABLE` names a file, each row is appended
//! to it as one tab-separated line, with the load average at the time.

use std::io::Write;

/// The environment variable naming the table file.
pub(crate) const TABLE_ENV: &str = "BOTLANE_BENCH_TABLE";

/// The WebSocket crate of the client and of every baseline client in the
/// benches that write rows.
pub(crate) const WEBSOCKET: &str = "tokio-websockets (bot and baseline)";

/// The rows one bench command writes, all naming the same crates.
pub(crate) struct Table<'a> {
    command: &'a str,
    crates: &'a str,
}

impl<'a> Table<'a> {
    /// Rows measured by `command`, whose figures involve `crates` (the
    /// last column).
    pub(crate) fn new(command: &'a str, crates: &'a str) -> Self {
        Self { command, crates }
    }

    /// Appends one row: what was measured, the figure, its baseline from
    /// the same run, their ratio and the goal.
    pub(crate) fn row(&self, measure: &str, figure: &str, baseline: &str, ratio: &str, goal: &str) {
        let Some(path) = std::env::var_os(TABLE_ENV) else {
            return;
        };
        let load = load();
        let line = [
            self.command,
            measure,
            figure,
            baseline,
            ratio,
            goal,
            &load,
            self.crates,
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
}

impl Table<'_> {
    /// Appends a row judged on rounds: `ratios`, one a round, in order
    /// after `rounds_of` as the figure, the median round (`unit` after
    /// it) as the ratio.
    // Only the benches judged on rounds call it; the others include this
    // file for `row`.
    #[allow(dead_code)]
    pub(crate) fn rounds_row(
        &self,
        measure: &str,
        rounds_of: &str,
        ratios: &[f64],
        baseline: &str,
        unit: &str,
        goal: &str,
    ) {
        let every = ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>();
        let mut sorted = ratios.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        self.row(
            measure,
            &format!("{rounds_of}: {}", every.join(", ")),
            baseline,
            &format!("{median:.2}{unit} (median round)"),
            goal,
        );
    }
}

/// Whether the bench was asked to measure (`cargo bench` passes `--bench`)
/// rather than to run once as a smoke test (`cargo test --all-targets`).
pub(crate) fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The 1-minute load average, for a row or a round's line.
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}
