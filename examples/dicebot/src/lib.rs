//! dicebot's commands: dice, a coin, an echo and the shared files, plus the
//! generated help.
//!
//! The binary (`src/main.rs`) connects them to a service; the tests use them
//! in a devserver `Scene` (`tests/live/commands.rs`) and through the
//! binary against the devserver's binary (`tests/live/standing.rs`).
//! Register them all with [`commands`]:
//!
//! ```
//! let mut registry = botlane::CommandRegistry::new();
//! dicebot::commands(&mut registry)?;
//! let names: Vec<&str> = registry.list().map(|d| d.name.as_str()).collect();
//! assert_eq!(names, ["roll", "flip", "echo", "files", "help"]);
//! # Ok::<(), botlane::DeclarationError>(())
//! ```

use std::borrow::Cow;

use botlane::framework::{neutralise_answer_among, CommandSettings};
use botlane::rest::{Method, RestLane};
use botlane::{BoxError, Command, CommandChoice, CommandRegistry, DeclarationError, RestError};
use rand_core::{OsRng, RngCore};
use serde::Deserialize;

/// Roll some dice
#[derive(Command, Debug, Clone, PartialEq)]
pub struct Roll {
    /// How many dice
    #[option(min = 1, max = 20)]
    pub count: u8,
    /// Sides per die
    #[option(choices("4", "6", "8", "12", "20"))]
    pub sides: Option<u32>,
    /// What the roll is for
    #[option(max_length = 100)]
    pub label: Option<String>,
}

impl Roll {
    /// Rolls the dice: `3d6 for fire damage: 2 + 5 + 1 = 8`. Six sides
    /// when `sides` is unset.
    pub fn play(&self) -> String {
        let sides = self.sides.unwrap_or(6);
        let dice: Vec<u32> = (0..self.count).map(|_| die(sides)).collect();
        let total: u32 = dice.iter().sum();
        let shown: Vec<String> = dice.iter().map(u32::to_string).collect();
        let label = self
            .label
            .as_deref()
            .map(|l| format!(" for {l}"))
            .unwrap_or_default();
        format!(
            "{}d{sides}{label}: {} = {total}",
            self.count,
            shown.join(" + ")
        )
    }
}

/// One fair die: 1 to `sides` (a die has at least one side), uniform
/// (draws in the biased tail of `u32` are thrown away).
fn die(sides: u32) -> u32 {
    let sides = sides.max(1);
    // Accept the draws below the largest multiple of `sides` within 2^32:
    // `u32::MAX - sides + 1` is 2^32 - sides, whose remainder is 2^32's.
    let zone = u32::MAX - (u32::MAX - sides + 1) % sides;
    loop {
        let draw = OsRng.next_u32();
        if draw <= zone {
            return draw % sides + 1;
        }
    }
}

/// A side of a coin; its variants are the choices `heads` and `tails`.
#[derive(CommandChoice, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Heads.
    Heads,
    /// Tails.
    Tails,
}

/// Flip a coin
#[derive(Command, Debug, Clone, PartialEq)]
pub struct Flip {
    /// Heads or tails?
    pub call: Side,
}

impl Flip {
    /// Flips the coin: `heads, you win` or `tails, you lose`.
    pub fn play(&self) -> String {
        let landed = if OsRng.next_u32() & 1 == 0 {
            Side::Heads
        } else {
            Side::Tails
        };
        let verdict = if landed == self.call {
            "you win"
        } else {
            "you lose"
        };
        format!("{}, {verdict}", landed.as_choice())
    }
}

/// Say something back
#[derive(Command, Debug, Clone, PartialEq)]
pub struct Echo {
    /// What to say
    pub text: String,
}

/// What `echo` answers when the text would read as a command. It starts
/// with a letter, never with a prefix.
pub const NO_COMMANDS: &str = "I only echo plain text: a line that starts with a command prefix \
                               would be read as a command by the bots here";

impl Echo {
    /// The echo, unless a line of the text would read as a command: one
    /// that [`neutralise_answer_among`] would mark, because it starts
    /// with one of `prefixes` (the client's,
    /// [`CommandContext::prefixes`](botlane::CommandContext::prefixes)) or
    /// with ASCII punctuation (another bot's prefix). Another bot would
    /// read that message, or that line of it, as an invocation, and two
    /// echoing bots would keep invoking each other. Then it is `Err` with
    /// [`NO_COMMANDS`].
    pub fn answer<'p>(
        &self,
        prefixes: impl Iterator<Item = &'p str> + Clone,
    ) -> Result<&str, &'static str> {
        // Borrowed when it marks nothing.
        match neutralise_answer_among(&self.text, prefixes) {
            Cow::Borrowed(_) => Ok(&self.text),
            Cow::Owned(_) => Err(NO_COMMANDS),
        }
    }
}

/// List the files shared with the bot
#[derive(Command, Debug, Clone, PartialEq)]
pub struct Files;

/// The most names `files` shows; it says how many files there are in all.
pub const LISTED_FILES: usize = 10;

/// The most characters of a name `files` shows: the service names the
/// files, and an answer must stay within a message.
const NAME_CHARS: usize = 100;

/// What `files` answers while the service does not mint REST credentials
/// (its flag `BOT_REST_CREDENTIALS` is off, its default): the service's
/// choice, not a failure of the bot.
pub const REST_LANE_OFF: &str = "the REST lane is not enabled for this bot here, \
                                 so I cannot see the shared files";

/// The body of `GET /api/files/list` (the field used).
#[derive(Deserialize)]
struct FileList {
    files: Vec<FileEntry>,
}

#[derive(Deserialize)]
struct FileEntry {
    name: String,
}

impl Files {
    /// The names of the files, in the service's order, through the REST
    /// lane: the first call mints the lane's credential, later ones reuse it.
    pub async fn names(rest: &RestLane) -> Result<Vec<String>, RestError> {
        let list: FileList = rest.json(Method::GET, "/api/files/list", None).await?;
        Ok(list.files.into_iter().map(|f| f.name).collect())
    }

    /// The answer for these names: how many, then the first
    /// [`LISTED_FILES`], quoted (a name is the service's text: quoting
    /// escapes its line breaks and shows where it ends) and cut to 100
    /// characters.
    ///
    /// ```
    /// use dicebot::Files;
    /// assert_eq!(Files::answer(&[]), "no files shared");
    /// let names = ["notes.txt".to_owned(), "a\nb".to_owned()];
    /// assert_eq!(Files::answer(&names), r#"2 files: "notes.txt", "a\nb""#);
    /// ```
    pub fn answer(names: &[String]) -> String {
        let shown: Vec<String> = names
            .iter()
            .take(LISTED_FILES)
            .map(|name| match name.char_indices().nth(NAME_CHARS) {
                Some((cut, _)) => format!("{:?}…", &name[..cut]),
                None => format!("{name:?}"),
            })
            .collect();
        let more = names.len() - shown.len();
        match names.len() {
            0 => "no files shared".to_owned(),
            1 => format!("1 file: {}", shown.join(", ")),
            n if more == 0 => format!("{n} files: {}", shown.join(", ")),
            n => format!("{n} files: {} and {more} more", shown.join(", ")),
        }
    }
}

/// Panic on purpose, to rehearse the alert on failing handlers (owners only)
#[derive(Command, Debug, Clone, PartialEq)]
pub struct Drill;

/// The text of `/drill`'s panic (botlane logs it nowhere; the
/// `CommandError` event carries it).
pub const DRILL_PANIC: &str = "drill: a handler panicked on purpose";

impl Drill {
    /// Panics, as a handler's bug would: botlane catches it, answers the
    /// generic failure and counts the invocation with outcome `panic`
    /// (`botlane_invocations_total`), which the alert on failing handlers
    /// (`docs/operations.md`) sees.
    pub async fn run() -> Result<(), BoxError> {
        panic!("{DRILL_PANIC}")
    }
}

/// Registers `roll`, `flip`, `echo`, `files` and the built-in `help`.
///
/// `roll`, `flip` and `files` answer with a reply (their invoker is
/// notified); `echo` posts a plain message, or replies [`NO_COMMANDS`] to a
/// text any line of which would read as a command. `files` replies
/// [`REST_LANE_OFF`] when the service refuses the bot a REST credential
/// (code `-7`); its other failures get the default answer.
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    registry
        .command::<Roll>(|ctx, roll| async move { ctx.reply(&roll.play()).await })?
        .command::<Flip>(|ctx, flip| async move { ctx.reply(&flip.play()).await })?
        .command::<Echo>(|ctx, echo| async move {
            match echo.answer(ctx.prefixes()) {
                Ok(text) => ctx.message().channel().send(text).await,
                Err(refusal) => ctx.reply(refusal).await,
            }
        })?
        .command::<Files>(|ctx, _files| async move {
            let answer = match Files::names(&ctx.rest()?).await {
                Ok(names) => Files::answer(&names),
                // The mint refused with -7: the service keeps the lane off.
                Err(RestError::Action(refused)) if refused.code == -7 => REST_LANE_OFF.to_owned(),
                Err(e) => return Err(BoxError::from(e)),
            };
            ctx.reply(&answer).await?;
            Ok(())
        })?
        .enable_help()?;
    Ok(())
}

/// Registers `drill`, for a bot that has owners
/// ([`ClientOptions::owners`](botlane::ClientOptions::owners)): botlane's
/// owners-only check refuses everyone else (outcome `check`).
///
/// ```
/// let mut registry = botlane::CommandRegistry::new();
/// dicebot::drill(&mut registry)?;
/// assert!(registry.get("drill").unwrap().settings.owners_only);
/// # Ok::<(), botlane::DeclarationError>(())
/// ```
pub fn drill(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    registry.command_with::<Drill>(CommandSettings::new().owners_only(), |_ctx, _drill| {
        Drill::run()
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dice_stay_on_the_die() {
        for sides in [0, 1, 2, 3, 6, 20, u32::MAX] {
            for _ in 0..200 {
                let d = die(sides);
                assert!((1..=sides.max(1)).contains(&d), "{d} on a d{sides}");
            }
        }
        // Every face of a d4 turns up.
        let mut seen = [false; 4];
        for _ in 0..1_000 {
            seen[usize::try_from(die(4) - 1).unwrap_or(0)] = true;
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn a_roll_reads_as_dice_and_their_total() {
        let roll = Roll {
            count: 3,
            sides: Some(8),
            label: Some("fire damage".into()),
        };
        let shown = roll.play();
        let (dice, total) = shown
            .strip_prefix("3d8 for fire damage: ")
            .and_then(|rest| rest.split_once(" = "))
            .unwrap_or_else(|| panic!("not a roll: {shown}"));
        let dice: Vec<u32> = dice.split(" + ").filter_map(|d| d.parse().ok()).collect();
        assert_eq!(dice.len(), 3);
        assert!(dice.iter().all(|d| (1..=8).contains(d)));
        assert_eq!(total.parse::<u32>().ok(), Some(dice.iter().sum()));
    }

    #[test]
    fn files_counts_them_all_and_names_the_first_ten() {
        let names: Vec<String> = (1..=12).map(|i| format!("f{i}.txt")).collect();
        assert_eq!(Files::answer(&names[..1]), r#"1 file: "f1.txt""#);
        assert_eq!(
            Files::answer(&names[..LISTED_FILES]),
            format!("10 files: {}", quoted(&names[..10]))
        );
        assert_eq!(
            Files::answer(&names),
            format!("12 files: {} and 2 more", quoted(&names[..10]))
        );
        // A long name is cut at 100 characters, not bytes.
        let long = "é".repeat(150);
        assert_eq!(
            Files::answer(&[long]),
            format!("1 file: \"{}\"…", "é".repeat(100))
        );
        // The answer never starts with what another bot would run, and no
        // name makes a line of its own: every line break is escaped.
        assert!(Files::answer(&["/roll 2".to_owned()]).starts_with("1 file: "));
        let breaks: Vec<String> = [
            "\n/roll 2",
            "\r/roll",
            "\u{85}/roll",
            "\u{2028}/roll",
            "\u{2029}/roll",
        ]
        .map(str::to_owned)
        .into();
        let answer = Files::answer(&breaks);
        assert!(
            !answer
                .chars()
                .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')),
            "{answer}"
        );
    }

    fn quoted(names: &[String]) -> String {
        let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        quoted.join(", ")
    }

    #[test]
    fn echo_refuses_what_would_read_as_a_command() {
        let echo = |text: &str| Echo { text: text.into() };
        let under = |prefixes: &'static [&'static str]| prefixes.iter().copied();
        assert_eq!(echo("hello").answer(under(&["/"])), Ok("hello"));
        assert_eq!(echo("a/b").answer(under(&["/"])), Ok("a/b"));
        assert_eq!(echo("/roll 2").answer(under(&["/"])), Err(NO_COMMANDS));
        assert_eq!(echo("  /roll 2").answer(under(&["/"])), Err(NO_COMMANDS));
        assert_eq!(echo("!roll 2").answer(under(&["!"])), Err(NO_COMMANDS));
        assert_eq!(echo("?roll 2").answer(under(&["!", "?"])), Err(NO_COMMANDS));
        // ASCII punctuation is another bot's prefix; a word is not.
        assert_eq!(echo("?roll 2").answer(under(&["!"])), Err(NO_COMMANDS));
        assert_eq!(echo("bot roll").answer(under(&["!"])), Ok("bot roll"));
        assert_eq!(
            echo("bot roll").answer(under(&["!", "bot"])),
            Err(NO_COMMANDS)
        );
        // Any line, not only the first.
        assert_eq!(echo("hi\n/roll 2").answer(under(&["/"])), Err(NO_COMMANDS));
        assert_eq!(
            echo("hi\r\n bot roll").answer(under(&["!", "bot"])),
            Err(NO_COMMANDS)
        );
        assert_eq!(
            echo("hi\nthere a/b").answer(under(&["/"])),
            Ok("hi\nthere a/b")
        );
        assert!(!NO_COMMANDS.starts_with('/') && !NO_COMMANDS.starts_with('!'));
    }
}
