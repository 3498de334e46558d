// The function form: every parameter kind and attribute, descriptions from
// doc comments on the parameters (which rustc refuses on a function's
// parameters: the attribute takes them off), a state type through an alias,
// checks and settings; and the derive's helper attribute
// beside the attribute macro, both from the prelude.
use botlane::framework::{render_help, UserError, UserId};
use botlane::prelude::*;

struct Mods(Vec<String>);
type Ctx = CommandContext<Mods>;

#[derive(CommandChoice)]
enum Mode {
    Sum,
    #[choice(name = "drop lowest")]
    DropLowest,
}

fn is_mod(ctx: &Ctx) -> Result<(), UserError> {
    let author = &ctx.message().author_id;
    match ctx.data().0.contains(author) {
        true => Ok(()),
        false => Err(UserError::from("moderators only")),
    }
}

/// Roll some dice
///
/// Rolls them and adds them up.
#[command(aliases("r"), category = "Fun", user_cooldown = 30, check = is_mod, check = Check::allowed_channels(["c1"]))]
async fn roll(
    ctx: Ctx,
    /// How many dice
    #[option(min = 1, max = 10)]
    count: u8,
    /** How to add */
    mode: Mode,
    /// Who rolls
    player: Option<UserId>,
    /// A label,
    /// shown with the roll
    #[option(name = "label", max_length = 200)]
    text: Option<String>,
) -> Result<(), ClientError> {
    let _ = (count, mode, player, text);
    ctx.reply("rolled").await
}

// A suffixed literal is a cooldown's seconds too.
/// Flip a coin
#[derive(Command)]
#[command(name = "flip", owners_only, global_cooldown = 1u8)]
struct Flip;

fn main() {
    let mut registry = CommandRegistry::<Mods>::empty();
    registry.add(roll()).unwrap();
    registry.command::<Flip>(|_ctx, _flip| async { Ok::<(), ClientError>(()) }).unwrap();
    let roll = registry.get("roll").unwrap();
    assert_eq!(roll.decl.options.len(), 4);
    let descriptions: Vec<&str> = roll.decl.options.iter().map(|o| o.description.as_str()).collect();
    assert_eq!(descriptions, ["How many dice", "How to add", "Who rolls", "A label, shown with the roll"]);
    assert_eq!(roll.decl.options[3].name, "label");
    assert_eq!(roll.decl.options[3].max_length, Some(200));
    assert_eq!(roll.settings.checks.len(), 2);
    assert_eq!(roll.settings.category.as_deref(), Some("Fun"));
    assert_eq!(roll.settings.help_text.as_deref(), Some("Rolls them and adds them up."));
    assert!(registry.get("flip").unwrap().settings.owners_only);
    registry.enable_help().unwrap();
    assert!(render_help(&registry, None, None).contains("Fun:"));
}
