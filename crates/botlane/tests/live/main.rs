//! botlane against the real devserver, in one binary: each module is one
//! area of the client (login, dispatch, the framework's features, prefixes,
//! aliases, typed commands, the REST lane, a ported poise bot, many bots in
//! one process), talking over real sockets on loopback to a devserver the
//! test starts.
//!
//! The tests run side by side on the harness's threads, each with a
//! devserver, ports, keystore directory and client of its own. `many_bots`
//! raises the process's soft open-file limit, which only ever helps the
//! others.
#![allow(clippy::unwrap_used)]

#[path = "../support/mod.rs"]
mod support;

mod aliases;
mod answers;
mod client;
mod dynamic_prefix;
mod framework;
mod handler_pace;
mod in_memory_keystore;
mod many_bots;
mod poise_port;
mod prefixes;
mod rest;
mod rest_lane;
mod typed;
