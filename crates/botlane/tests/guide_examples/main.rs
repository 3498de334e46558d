//! The snippets of `docs/guide.md` and `docs/coming-from-poise.md` that are
//! not part of the standing bot (`examples/dicebot`): each module is one
//! section's code, written as a bot's own library would be, with the tests
//! that show it works over real sockets against an in-process devserver.
//! `tests/guide.rs` checks that every snippet of those pages is an excerpt
//! of a compiled file.
// The modules are written as a bot crate's public library would be: their
// `pub` items are what a reader copies.
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)]

mod answers;
mod bounds;
mod checks;
mod grammar;
mod help;
mod poise;
mod rest;
mod state;
mod timeout;
mod typed;
