//! What a handler is given.

use super::types::CommandInvocation;
use crate::message::Message;

/// SKELETON
#[derive(Debug, Clone)]
pub struct CommandContext {
    invocation: CommandInvocation,
    message: Message,
}

impl CommandContext {
    /// SKELETON
    pub fn get_integer(&self, name: &str) -> Option<i64> {
        todo!("{name}{:?}{:?}", self.invocation, self.message)
    }
}
