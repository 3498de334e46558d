//! Fuzz target: see `botlane::fuzzing::check_decode_frame` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| botlane::fuzzing::check_decode_frame(data));
