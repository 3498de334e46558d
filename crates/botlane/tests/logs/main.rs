//! botlane's log lines, in the one binary that installs the process's
//! global `tracing` subscriber (`capture.rs`, at TRACE, with the `log`
//! bridge): what a failing handler, a blocking handler, a flood of
//! messages without a key and a whole REST session write to the log, and
//! that no secret or error text ever reaches it. A thread-local subscriber
//! would not do in a binary whose tests run in parallel: it misses events
//! whose callsite another thread registered at the same moment (tracing
//! caches each callsite's interest process-wide). Every test searches only
//! for lines it can tell are its own: its commands' names, its channels,
//! its secrets.
#![allow(clippy::unwrap_used)]

#[path = "../peer/mod.rs"]
mod peer;
#[path = "../support/mod.rs"]
mod support;

mod capture;

mod answer_logs;
mod held_up_log;
mod rest_leak;
mod swallowed_log;
