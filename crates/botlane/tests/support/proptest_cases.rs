//! The property tests' case count: `PROPTEST_CASES` when set (a deep run,
//! `scripts/test --deep`), else a per-block default sized for CI. The
//! `proptest!` macro lays the `PROPTEST_*` variables over each block's own
//! config (proptest 1.12), so the variable wins over the count given here;
//! `property_tests_obey_proptest_cases` (`tests/pure/keystore.rs`) checks
//! it. Generators make valid inputs rather than reject them
//! (`prop_assume!`, `prop_filter`): proptest's reject budget (1,024 global,
//! 65,536 local) does not grow with the case count, so a deep run with
//! rejects aborts.

use proptest::test_runner::Config as ProptestConfig;

/// `default` cases, unless `PROPTEST_CASES` says otherwise.
pub(crate) fn cases(default: u32) -> ProptestConfig {
    ProptestConfig::with_cases(default)
}
