//! The devserver over real sockets, in one binary: the realtime wire and
//! the REST listener driven by raw clients, every reply code, the bounds a
//! hostile client meets, the admin endpoint, the binary itself, and the
//! test kit (`TestUser`, `Scene`) against real bots; and the fuzz corpora.
//!
//! The tests run side by side on the harness's threads, each with a
//! devserver (or a child process of the binary), ports and directories of
//! its own.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod admin;
mod bad_input;
mod binary;
mod bounds;
mod extremes;
mod fuzz_corpus;
mod hostile;
mod membership;
mod realtime;
mod record_caps;
mod reply_codes;
mod rest;
mod scene;
mod test_user;
mod test_user_stall;
