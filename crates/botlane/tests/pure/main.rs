//! botlane's pure tests, in one binary: the command area's codecs and
//! rules, the keystore's file format, the vectors of `docs/vectors/`, the
//! guide's sync check, the fuzz corpora and the architecture's dependency
//! rule. Nothing here opens a socket: the suites that do are `tests/live`,
//! `tests/hostile` and the binaries that install something process-wide
//! (`docs/architecture.md`, "Running the tests").
#![allow(clippy::unwrap_used)]

#[path = "../support/fixtures.rs"]
mod fixtures;
#[path = "../support/proptest_cases.rs"]
mod proptest_cases;

mod architecture;
mod derives;
mod fuzz_corpus;
mod guide;
mod keystore;
mod menu;
mod option_types;
mod prefixes;
mod registry;
mod registry_text;
mod sidecar;
mod text_grammar;
mod text_roundtrip;
mod validate;
mod vectors;
