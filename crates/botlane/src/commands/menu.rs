//! The canonical menu published at login, and its SHA-256 skip guard.

use super::types::CommandDeclaration;

/// SKELETON
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalOption {}
/// SKELETON
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalCommand {}
/// SKELETON
pub type CanonicalMenu = Vec<CanonicalCommand>;

/// SKELETON
pub fn canonicalize_menu(decls: &[CommandDeclaration]) -> CanonicalMenu {
    todo!("{decls:?}")
}

/// SKELETON
pub fn compute_menu_hash(decls: &[CommandDeclaration]) -> String {
    todo!("{decls:?}")
}
