//! Guide, "Option order and the greedy last string": how a text line fills
//! the options, shown on a command declared like dicebot's `roll`.

use botlane::Command;

/// Roll some dice
#[derive(Command, Debug, PartialEq)]
pub struct Roll {
    /// How many dice
    pub count: u8,
    /// Sides per die
    pub sides: Option<u32>,
    /// What the roll is for
    pub label: Option<String>,
}

#[cfg(test)]
mod tests {
    use botlane::{CommandRegistry, TextParseResult};

    use super::*;

    /// The `Roll` a line gives, or the parse error's text.
    fn read(line: &str) -> Result<Roll, String> {
        let mut registry = CommandRegistry::new();
        registry
            .command::<Roll>(|_ctx, _roll| async { Ok::<(), std::io::Error>(()) })
            .unwrap();
        match registry.parse_from_text(line, None) {
            TextParseResult::Ok(invocation) => {
                Ok(Roll::from_args(&invocation.args).map_err(|e| e.to_string())?)
            }
            TextParseResult::Error { error, .. } => Err(error.to_string()),
            TextParseResult::None => Err("not a command".into()),
        }
    }

    fn roll(count: u8, sides: Option<u32>, label: Option<&str>) -> Roll {
        Roll {
            count,
            sides,
            label: label.map(str::to_owned),
        }
    }

    #[test]
    fn values_fill_the_options_in_declared_order() {
        assert_eq!(
            read("/roll 3 8 fire damage"),
            Ok(roll(3, Some(8), Some("fire damage")))
        );
        assert_eq!(read("/roll 3"), Ok(roll(3, None, None)));
        // Named arguments may follow the positional ones, in any order.
        assert_eq!(
            read("/roll 3 label:luck sides:20"),
            Ok(roll(3, Some(20), Some("luck")))
        );
        // A positional value after a named one is an error.
        assert!(read("/roll sides:20 3").is_err());
    }

    #[test]
    fn the_last_string_option_takes_the_rest_of_the_line() {
        // As typed: inner quotes and spaces are kept.
        assert_eq!(
            read("/roll 2 6 \"x\" y"),
            Ok(roll(2, Some(6), Some("\"x\" y")))
        );
        // One quoted token and nothing else: what is inside the quotes.
        assert_eq!(
            read("/roll 2 6 \"sides:4\""),
            Ok(roll(2, Some(6), Some("sides:4")))
        );
        // The rest starts with an option's name: split as usual.
        assert_eq!(
            read("/roll 2 6 label:fire"),
            Ok(roll(2, Some(6), Some("fire")))
        );
    }
}
