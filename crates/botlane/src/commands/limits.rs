//! The hard caps of the command area, as the spec's Limits table gives them.

/// Commands in one registry.
pub const MAX_COMMANDS_PER_BOT: usize = 50;
/// Options in one declaration.
pub const MAX_OPTIONS_PER_COMMAND: usize = 25;
/// Entries in one `choices` list.
pub const MAX_CHOICES_PER_OPTION: usize = 25;
/// Characters (Unicode scalar values) in one choice.
pub const MAX_CHOICE_LEN: usize = 100;
/// Characters (Unicode scalar values) in a command or option description; the minimum is 1.
pub const MAX_COMMAND_DESC: usize = 100;
/// Bytes of the compact JSON of the canonical menu.
pub const MAX_COMMANDS_PAYLOAD: usize = 16384;
/// Characters of the encrypted sidecar of one invocation.
pub const MAX_COMMAND_WIRE: usize = 2048;
/// The most characters (Unicode scalar values) a `string` option's local
/// `min_length` or `max_length` bound may name.
///
/// A local cap, not the service's: bounds are never published. It is
/// Discord's cap for the same bounds, and a value of that length fits a
/// message many times over (the devserver takes 64 KiB of content).
pub const MAX_OPTION_LENGTH: usize = 6000;
/// The version stamped into every sidecar by [`encode_command_data`](crate::encode_command_data).
pub const COMMAND_DATA_VERSION: u32 = 1;
/// The text-lane prefix used when none is given.
pub const DEFAULT_COMMAND_PREFIX: &str = "/";

/// Longest command or option name (the name rule is `^[a-z0-9_-]{1,32}$`).
pub(crate) const MAX_NAME_LEN: usize = 32;
/// The largest integer that survives a trip through an IEEE-754 double,
/// which is what a JavaScript peer holds every number in.
pub(crate) const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Whether `name` satisfies the name rule `^[a-z0-9_-]{1,32}$`.
pub(crate) fn is_valid_name(name: &str) -> bool {
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
        assert!(!is_valid_name("\u{212a}elvin"));
    }
}
