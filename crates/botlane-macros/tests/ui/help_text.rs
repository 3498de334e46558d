// The help text breaks the rule of CommandSettings::help_text: shown on
// the `///` line at fault, or on the attribute.
use botlane::Command;

/// Roll some dice
///
/// Rolls them.
/// Columns:	count	sides
#[derive(Command)]
struct Roll;

/// Flip a coin
#[derive(Command)]
#[command(help_text = " \n ")]
struct Flip;

/// Ping
#[derive(Command)]
#[command(help_text = "Checks the bot.\u{2028}Answers pong.")]
struct Ping;

/// Echo
#[derive(Command)]
#[command(help_text = "Echoes.", help_text = "Echoes again.")]
struct Echo;

fn main() {}
