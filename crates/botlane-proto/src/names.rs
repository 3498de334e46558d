//! The name rule of commands and options, `^[a-z0-9_-]{1,32}$`.
//!
//! The spec calls the constant and the regex internal and not exported:
//! this module is `#[doc(hidden)]`, outside the stability promise, and
//! public only so that `botlane` (validation, the text lane) and
//! `botlane-macros` (compile-time checks) share one definition.

/// Longest command or option name.
pub const MAX_NAME_LEN: usize = 32;

/// Whether `name` satisfies the name rule `^[a-z0-9_-]{1,32}$`: bytes, so
/// no Unicode letter (not even the Kelvin sign that lower-cases to `k`)
/// passes.
pub fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rule() {
        assert!(is_valid_name("roll"));
        assert!(is_valid_name("a_b-9"));
        assert!(is_valid_name(&"x".repeat(32)));
        assert!(!is_valid_name(&"x".repeat(33)));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("Roll"));
        assert!(!is_valid_name("ro ll"));
        assert!(!is_valid_name("café"));
        assert!(!is_valid_name("\u{212a}elvin"));
    }
}
