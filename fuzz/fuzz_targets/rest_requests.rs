//! Fuzz target: see `botlane_devserver::fuzzing::check_rest_requests` for
//! what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    botlane_devserver::fuzzing::check_rest_requests(data);
});
