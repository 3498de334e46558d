//! Declaration rules: everything the service would reject.

use super::types::CommandDeclaration;

/// SKELETON: designed by the validation work.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclarationError {}

/// SKELETON
pub fn validate_declaration(decl: &CommandDeclaration) -> Result<(), DeclarationError> {
    todo!("{decl:?}")
}
