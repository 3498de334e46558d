//! Runs every seed of every fuzz target's corpus (`fuzz/corpus/<target>/`)
//! through the same check as the target, so the corpora run in `cargo test`
//! without a nightly toolchain.

use botlane::fuzzing::run_corpus;

#[test]
fn decode_command_data_corpus() {
    run_corpus(
        "decode_command_data",
        botlane::fuzzing::check_decode_command_data,
    );
}

#[test]
fn parse_invocation_text_corpus() {
    run_corpus(
        "parse_invocation_text",
        botlane::fuzzing::check_parse_invocation_text,
    );
}

#[test]
fn parse_from_text_corpus() {
    run_corpus("parse_from_text", botlane::fuzzing::check_parse_from_text);
}

#[test]
fn decode_frame_corpus() {
    run_corpus("decode_frame", botlane::fuzzing::check_decode_frame);
}

#[test]
fn open_sealed_corpus() {
    run_corpus("open_sealed", botlane::fuzzing::check_open_sealed);
}

#[test]
fn keystore_corpus() {
    run_corpus("keystore", botlane::fuzzing::check_keystore);
}
