//! The property tests' case count: `PROPTEST_CASES` when set (a deep run,
//! see "Running the tests" in `docs/architecture.md`), else a per-block
//! default sized for CI. `ProptestConfig::with_cases` would override the
//! variable instead.

use proptest::test_runner::Config as ProptestConfig;

/// `PROPTEST_CASES` when set, else `default`.
pub(crate) fn cases(default: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default;
    }
    config
}
