//! dicebot over real sockets, in one binary: its commands in a devserver
//! `Scene` in this process, and the `dicebot` binary against the
//! `botlane-devserver` binary, each a child process on ports of its own.
#![allow(clippy::unwrap_used)]

mod commands;
mod standing;
