//! The hard caps of the command area, as the spec's Limits table gives them.
//! `botlane` re-exports them from its root; `botlane-macros` checks derived
//! declarations against the same constants at compile time.
//!
//! "Characters" are Unicode scalar values (`chars().count()`); bytes are
//! UTF-8 bytes.

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
/// The version stamped into every command sidecar (`{"v": 1, …}`).
pub const COMMAND_DATA_VERSION: u32 = 1;

/// The largest integer that survives a trip through an IEEE-754 double,
/// which is what a JavaScript peer holds every number in: integer
/// arguments and bounds stay within ±this. Not one of the spec's limits (a
/// rule of the coercion table), hence hidden.
#[doc(hidden)]
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// The most characters (Unicode scalar values) of a command's help text,
/// botlane's `MAX_HELP_TEXT_CHARS` (documented there). Not one of the
/// spec's limits (the built-in help is botlane's own), hence hidden; here
/// so that `botlane-macros` checks a derived help text against the very
/// constant registration checks it with.
#[doc(hidden)]
pub const MAX_HELP_TEXT_CHARS: usize = 2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safe_integer_is_two_to_the_53_minus_one() {
        assert_eq!(MAX_SAFE_INTEGER, (1_i64 << 53) - 1);
        // The largest integer a double holds exactly, and the next is lost.
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let back = (MAX_SAFE_INTEGER as f64) as i64;
        assert_eq!(back, MAX_SAFE_INTEGER);
    }
}
