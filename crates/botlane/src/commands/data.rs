//! The structured sidecar codec.

use super::registry::CommandLookup;
use super::types::CommandData;

/// SKELETON
pub fn encode_command_data(data: &CommandData) -> String {
    todo!("{data:?}")
}

/// SKELETON
pub fn decode_command_data(json: &str, registry: Option<&dyn CommandLookup>) -> Option<CommandData> {
    todo!("{json}{}", registry.is_some())
}
