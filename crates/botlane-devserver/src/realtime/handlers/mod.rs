//! One file per group of opcodes.

pub(super) mod channels;
pub(super) mod keys;
pub(super) mod login;
pub(super) mod menu;
pub(crate) mod messages;
