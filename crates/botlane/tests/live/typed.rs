//! Typed commands: what `#[derive(Command)]` and `#[derive(CommandChoice)]`
//! generate, the conversion from both lanes' arguments, and typed handlers
//! end to end against the devserver.

#![cfg(feature = "macros")]
#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::{Arc, Mutex};

use botlane::framework::{
    usage_line, ArgValueKind, ChannelId, CommandOptionValue, CommandSettings, RoleId, UserId,
};

use botlane::{
    compute_menu_hash, decode_command_data, encode_command_data, format_invocation_text,
    parse_invocation_text, validate_declaration, ArgumentError, ArgumentRule, Command,
    CommandArgValue, CommandArgs, CommandChoice, CommandContext, CommandData, CommandDeclaration,
    CommandErrorReason, CommandInvocation, CommandOption, CommandOptionType, CommandRegistry,
    CommandSource, Message,
};
use botlane_devserver::{Scene, StoredMenu};
use support::{command_error_event, World, WAIT};

#[derive(CommandChoice, Debug, Clone, Copy, PartialEq)]
enum Mode {
    Sum,
    KeepHighest,
    #[choice(name = "drop lowest")]
    DropLowest,
}

/// Roll some dice
///
/// and add them up.
#[derive(Command, Debug, Clone, PartialEq)]
struct Roll {
    /// How many dice
    count: u8,
    /// Sides per die
    #[option(choices("4", "6", "20"))]
    sides: Option<i64>,
    /// How to combine them
    mode: Option<Mode>,
    /// Scale the total
    factor: Option<f64>,
    /// Show each die
    verbose: Option<bool>,
    /// What the roll is for
    label: Option<String>,
    /// Who rolls
    player: Option<UserId>,
    /// Where to post
    #[option(kind = "channel")]
    channel: Option<String>,
    /// Who may see it
    role: Option<RoleId>,
}

fn hand_written_roll() -> CommandDeclaration {
    use CommandOptionType as T;
    CommandDeclaration::new("roll", "Roll some dice")
        .option(CommandOption::new("count", "How many dice", T::Integer).required(true))
        .option(CommandOption::new("sides", "Sides per die", T::Integer).choices(["4", "6", "20"]))
        .option(
            CommandOption::new("mode", "How to combine them", T::String).choices([
                "sum",
                "keep-highest",
                "drop lowest",
            ]),
        )
        .option(CommandOption::new("factor", "Scale the total", T::Number))
        .option(CommandOption::new("verbose", "Show each die", T::Boolean))
        .option(CommandOption::new(
            "label",
            "What the roll is for",
            T::String,
        ))
        .option(CommandOption::new("player", "Who rolls", T::User))
        .option(CommandOption::new("channel", "Where to post", T::Channel))
        .option(CommandOption::new("role", "Who may see it", T::Role))
}

#[test]
fn the_derived_declaration_equals_the_hand_written_one_and_is_valid() {
    let decl = Roll::declaration();
    assert_eq!(decl, hand_written_roll());
    validate_declaration(&decl).unwrap();
    // The doc comment's second paragraph is the help text, not the description.
    assert_eq!(Roll::help_text().as_deref(), Some("and add them up."));
}

/// Set a value
///
/// Keys are case-sensitive.
/// Values are integers.
#[derive(Command)]
#[command(description = "Set a configuration value")]
struct SetWithHelp;

/// Reset every value
///
/// Not what the help says: the attribute is.
#[derive(Command)]
#[command(help_text = "Resets every value.\n\n• /reset-all takes no options.")]
struct ResetAll;

async fn ok<C>(_ctx: CommandContext, _value: C) -> Result<(), std::io::Error> {
    Ok(())
}

#[test]
fn an_attribute_replaces_only_its_own_part_of_the_doc_comment() {
    assert_eq!(
        SetWithHelp::declaration().description,
        "Set a configuration value"
    );
    assert_eq!(
        SetWithHelp::help_text().as_deref(),
        Some("Keys are case-sensitive.\nValues are integers.")
    );
    assert_eq!(ResetAll::declaration().description, "Reset every value");
    assert_eq!(
        ResetAll::help_text().as_deref(),
        Some("Resets every value.\n\n• /reset-all takes no options.")
    );
    assert_eq!(PingPong::help_text(), None);

    // Registered, the help text is the command's; the settings' own wins.
    let mut registry = CommandRegistry::new();
    registry
        .command::<SetWithHelp>(ok)
        .unwrap()
        .command_with::<ResetAll>(CommandSettings::new().help_text("Resets."), ok)
        .unwrap()
        .command::<PingPong>(ok)
        .unwrap();
    let help = |name: &str| registry.get(name).unwrap().settings.help_text.clone();
    assert_eq!(
        help("set-with-help").as_deref(),
        Some("Keys are case-sensitive.\nValues are integers.")
    );
    assert_eq!(help("reset-all").as_deref(), Some("Resets."));
    assert_eq!(help("ping-pong"), None);
}

/// Check the bot
#[derive(Command, Debug, PartialEq)]
struct PingPong;

/// Set a value
#[derive(Command, Debug, PartialEq)]
#[command(name = "set", description = "Set a configuration value")]
struct SetValue {
    /// The key
    r#type: String,
    #[option(name = "to", description = "The new value")]
    value: i32,
}

#[test]
fn names_default_to_kebab_case_and_field_names() {
    assert_eq!(
        PingPong::declaration(),
        CommandDeclaration::new("ping-pong", "Check the bot")
    );
    assert_eq!(PingPong::from_args(&CommandArgs::new()), Ok(PingPong));

    let set = SetValue::declaration();
    assert_eq!(set.name, "set");
    assert_eq!(set.description, "Set a configuration value");
    assert_eq!(set.options[0].name, "type");
    assert_eq!(set.options[1].name, "to");
    assert_eq!(set.options[1].description, "The new value");
    validate_declaration(&set).unwrap();
}

#[test]
fn choice_enums_map_variants_both_ways() {
    assert_eq!(Mode::CHOICES, ["sum", "keep-highest", "drop lowest"]);
    for mode in [Mode::Sum, Mode::KeepHighest, Mode::DropLowest] {
        assert_eq!(Mode::from_choice(mode.as_choice()), Some(mode));
    }
    assert_eq!(Mode::from_choice("Sum"), None);
}

// Edge cases of the integer and number syntax that the macro must accept
// exactly as botlane's validator does.
/// Edge cases
#[derive(Command)]
struct Edges {
    /// Signed and padded integers
    #[option(choices("+06", "-7", "9007199254740991"))]
    int: i64,
    /// Numbers in every spelling
    #[option(choices(".5", "1.", "1e3", "-2.5E-2"))]
    num: f64,
    /// A hundred characters
    #[option(choices("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))]
    text: String,
}

#[test]
fn choices_the_macro_accepts_pass_the_validator() {
    let decl = Edges::declaration();
    assert_eq!(decl.name, "edges");
    validate_declaration(&decl).unwrap();
    let long = "x".repeat(100);
    let edges = Edges::from_args(
        &parse_invocation_text(&decl, &format!("/edges 6 0.5 {long}"), None).unwrap(),
    )
    .unwrap();
    assert_eq!((edges.int, edges.num, edges.text), (6, 0.5, long));
}

fn text_args(line: &str) -> CommandArgs {
    parse_invocation_text(&Roll::declaration(), line, None).unwrap()
}

#[test]
fn from_args_reads_a_text_invocation() {
    let roll = Roll::from_args(&text_args(
        "/roll 3 20 keep-highest 1.5 yes \"fire ball\" u1 c1 r1",
    ))
    .unwrap();
    assert_eq!(
        roll,
        Roll {
            count: 3,
            sides: Some(20),
            mode: Some(Mode::KeepHighest),
            factor: Some(1.5),
            verbose: Some(true),
            label: Some("fire ball".into()),
            player: Some(UserId("u1".into())),
            channel: Some("c1".into()),
            role: Some(RoleId("r1".into())),
        }
    );
    let roll = Roll::from_args(&text_args("/roll 1 mode:\"drop lowest\"")).unwrap();
    assert_eq!(
        (roll.count, roll.mode, roll.sides),
        (1, Some(Mode::DropLowest), None)
    );
}

#[test]
fn from_args_reads_a_structured_invocation() {
    let mut registry = CommandRegistry::new();
    registry
        .command::<Roll>(|_ctx, _roll| async { Ok::<(), std::io::Error>(()) })
        .unwrap();
    let sent = CommandData {
        bot_id: "b1".into(),
        name: "roll".into(),
        args: CommandArgs::from([
            // Coerced by the registry: a string integer, an integral number.
            ("count".to_string(), CommandArgValue::from("2")),
            ("sides".to_string(), CommandArgValue::Number(6.0)),
            ("mode".to_string(), CommandArgValue::from("sum")),
            ("factor".to_string(), CommandArgValue::Integer(2)),
            ("player".to_string(), CommandArgValue::from("u9")),
        ]),
    };
    let decoded = decode_command_data(&encode_command_data(&sent), Some(&registry)).unwrap();
    let roll = Roll::from_args(&decoded.args).unwrap();
    assert_eq!(roll.count, 2);
    assert_eq!(roll.sides, Some(6));
    assert_eq!(roll.mode, Some(Mode::Sum));
    assert_eq!(roll.factor, Some(2.0));
    assert_eq!(roll.player.as_ref().map(UserId::as_str), Some("u9"));

    // Without a registry the values arrive raw; the conversion reads them by
    // the same coercion table.
    let raw = decode_command_data(&encode_command_data(&sent), None).unwrap();
    assert_eq!(Roll::from_args(&raw.args).unwrap(), roll);
}

fn args(pairs: &[(&str, CommandArgValue)]) -> CommandArgs {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// `(option, rule, value type)` of an argument error.
fn detail(err: &ArgumentError) -> (&str, &ArgumentRule, Option<ArgValueKind>) {
    (err.option(), err.rule(), err.value_kind())
}

#[test]
fn from_args_names_the_option_the_rule_and_the_value_type() {
    let err = Roll::from_args(&args(&[("sides", 6.into())])).unwrap_err();
    assert_eq!(detail(&err), ("count", &ArgumentRule::Missing, None));
    assert_eq!(err.to_string(), "option \"count\" is required");

    let err = Roll::from_args(&args(&[("count", "two".into())])).unwrap_err();
    assert_eq!(
        detail(&err),
        (
            "count",
            &ArgumentRule::WrongType {
                expected: CommandOptionType::Integer
            },
            Some(ArgValueKind::String)
        )
    );
    assert_eq!(
        err.to_string(),
        "option \"count\" expects an integer, got a string",
        "the type of the value, never the value"
    );

    let err = Roll::from_args(&args(&[("count", 256.into())])).unwrap_err();
    assert_eq!(
        detail(&err),
        (
            "count",
            &ArgumentRule::OutOfRange { min: 0, max: 255 },
            Some(ArgValueKind::Integer)
        )
    );
    assert_eq!(
        err.to_string(),
        "option \"count\" must be a whole number from 0 to 255"
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("mode", "max".into())])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option \"mode\" must be one of sum, keep-highest, drop lowest"
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("verbose", 2.into())])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option \"verbose\" expects true or false (or yes/no, 1/0), got an integer"
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("player", "".into())])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option \"player\" expects a non-empty user id, got a string"
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("colour", "red".into())])).unwrap_err();
    assert_eq!(detail(&err), ("colour", &ArgumentRule::Unknown, None));
    assert_eq!(err.to_string(), "this command has no option \"colour\"");
}

#[test]
fn integer_types_convert_with_their_ranges() {
    let v = CommandArgValue::Integer;
    assert_eq!(i8::from_arg(&v(-128)), Ok(-128));
    assert!(i8::from_arg(&v(128)).is_err());
    assert_eq!(
        u64::from_arg(&v(9_007_199_254_740_991)),
        Ok(9_007_199_254_740_991)
    );
    assert_eq!(
        u64::from_arg(&v(-1)),
        Err(ArgumentRule::OutOfRange {
            min: 0,
            max: 9_007_199_254_740_991
        })
    );
    assert_eq!(
        i64::from_arg(&v(i64::MAX)),
        Err(ArgumentRule::OutOfRange {
            min: -9_007_199_254_740_991,
            max: 9_007_199_254_740_991
        })
    );
    assert_eq!(
        i32::from_arg(&CommandArgValue::Number(3.0)),
        Ok(3),
        "an integral number serves an integer"
    );
    assert_eq!(
        i32::from_arg(&CommandArgValue::Number(3.5)),
        Err(ArgumentRule::WrongType {
            expected: CommandOptionType::Integer
        })
    );
    assert_eq!(
        <ChannelId as CommandOptionValue>::KIND,
        CommandOptionType::Channel
    );
}

fn full_roll() -> Roll {
    Roll {
        count: 3,
        sides: Some(20),
        mode: Some(Mode::DropLowest),
        factor: Some(-0.5),
        verbose: Some(false),
        label: Some("sides:6 \"fire\" ball ".into()),
        player: Some(UserId("u1".into())),
        channel: Some("c 1".into()),
        role: None,
    }
}

#[test]
fn to_args_is_read_back_by_from_args_on_both_lanes() {
    let decl = Roll::declaration();
    let mut registry = CommandRegistry::new();
    registry
        .command::<Roll>(|_ctx, _roll| async { Ok::<(), std::io::Error>(()) })
        .unwrap();
    for roll in [
        full_roll(),
        Roll {
            count: 0,
            sides: None,
            mode: None,
            factor: None,
            verbose: None,
            label: None,
            player: None,
            channel: None,
            role: Some(RoleId("r1".into())),
        },
    ] {
        let args = roll.to_args();
        assert!(!args.values().any(|v| v == &CommandArgValue::from("")));
        assert_eq!(Roll::from_args(&args).unwrap(), roll);

        let line = format_invocation_text(&decl, &args, Some("!")).unwrap();
        let parsed = parse_invocation_text(&decl, &line, Some("!")).unwrap();
        assert_eq!(Roll::from_args(&parsed).unwrap(), roll, "{line}");

        let sidecar = encode_command_data(&CommandData {
            bot_id: "b1".into(),
            name: decl.name.clone(),
            args,
        });
        let decoded = decode_command_data(&sidecar, Some(&registry)).unwrap();
        assert_eq!(Roll::from_args(&decoded.args).unwrap(), roll);
    }
    let unfilled = full_roll().to_args();
    assert!(
        !unfilled.contains_key("role"),
        "an unfilled option is absent"
    );
}

/// Remind me later
#[derive(Command, Debug, PartialEq)]
struct Remind {
    /// In how many minutes
    #[option(min = 1, max = 3600)]
    minutes: u16,
    /// How loud, from a whisper to a shout
    #[option(min = -1.5, max = 1e3)]
    volume: Option<f64>,
    /// Which tone
    #[option(choices("2", "4"), max = 4)]
    tone: Option<i32>,
    /// What about
    #[option(min_length = 1, max_length = 200)]
    note: Option<String>,
}

#[test]
fn derived_bounds_equal_the_builders_and_leave_the_menu_alone() {
    use CommandOptionType as T;
    let built = CommandDeclaration::new("remind", "Remind me later")
        .option(
            CommandOption::new("minutes", "In how many minutes", T::Integer)
                .required(true)
                .min(1)
                .max(3600),
        )
        .option(
            CommandOption::new("volume", "How loud, from a whisper to a shout", T::Number)
                .min(-1.5)
                .max(1e3),
        )
        .option(
            CommandOption::new("tone", "Which tone", T::Integer)
                .choices(["2", "4"])
                .max(4),
        )
        .option(
            CommandOption::new("note", "What about", T::String)
                .min_length(1)
                .max_length(200),
        );
    assert_eq!(Remind::declaration(), built);
    validate_declaration(&built).unwrap();

    let mut bare = built.clone();
    for option in &mut bare.options {
        option.min_value = None;
        option.max_value = None;
        option.min_length = None;
        option.max_length = None;
    }
    assert_ne!(bare, built);
    assert_eq!(compute_menu_hash(&[bare]), compute_menu_hash(&[built]));
    assert_eq!(
        usage_line(&Remind::declaration(), None),
        "/remind <minutes (1 to 3600)> [volume (-1.5 to 1e3)] [tone (at most 4)] \
         [note (1 to 200 characters)]"
    );
}

fn context(args: CommandArgs) -> CommandContext {
    CommandContext::for_test(
        CommandInvocation {
            name: "roll".into(),
            args,
            source: CommandSource::Text,
        },
        Message::new("m1", "c1", "u1", "/roll"),
    )
}

#[tokio::test]
async fn a_typed_handler_gets_the_struct_or_fails_with_the_args_error() {
    let seen: Arc<Mutex<Vec<Roll>>> = Arc::default();
    let mut registry = CommandRegistry::new();
    let sink = Arc::clone(&seen);
    registry
        .command::<Roll>(move |ctx, roll| {
            let sink = Arc::clone(&sink);
            async move {
                assert_eq!(ctx.name(), "roll");
                sink.lock().unwrap().push(roll);
                Ok::<(), std::io::Error>(())
            }
        })
        .unwrap();
    assert_eq!(registry.list().next(), Some(&hand_written_roll()));
    let handler = registry.get("roll").unwrap().handler.clone();

    handler
        .call(context(args(&[("count", 4.into())])))
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap()[0].count, 4);

    let err = handler
        .call(context(args(&[("count", 400.into())])))
        .await
        .unwrap_err();
    let err = err.downcast::<ArgumentError>().unwrap();
    assert_eq!(err.option(), "count");
    assert_eq!(
        err.usage(),
        Some(usage_line(&Roll::declaration(), None).as_str()),
        "the typed registration adds the usage line"
    );
    assert_eq!(seen.lock().unwrap().len(), 1, "the handler did not run");

    // Registering a typed command goes through the same checks as any other.
    let again = registry.command::<Roll>(|_ctx, _roll| async { Ok::<(), std::io::Error>(()) });
    assert!(again.is_err());
}

#[tokio::test]
async fn typed_commands_run_on_both_lanes_through_the_client() {
    let world = World::new().await;
    let client = world.client();
    client
        .commands()
        .update(|registry| {
            registry
                .command::<Roll>(|ctx, roll: Roll| async move {
                    ctx.reply(&format!(
                        "{} x d{:?} {:?}",
                        roll.count, roll.sides, roll.mode
                    ))
                    .await
                })
                .map(drop)
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;

    alice
        .send_text(&world.channel, "/roll 2 6 keep-highest")
        .await
        .unwrap();
    let reply = alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap();
    assert_eq!(reply.content, "2 x dSome(6) Some(KeepHighest)");

    let payload = encode_command_data(&CommandData {
        bot_id: world.bot.id.clone(),
        name: "roll".into(),
        args: args(&[("count", "3".into()), ("mode", "drop lowest".into())]),
    });
    alice
        .send_with_sidecar(&world.channel, "/roll 3", &payload)
        .await
        .unwrap();
    let reply = alice
        .wait_for_message(
            |m| m.author_id == world.bot.id && m.content.starts_with('3'),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(reply.content, "3 x dNone Some(DropLowest)");

    // 300 is a valid integer for the declaration but not a u8: an argument
    // error carrying the conversion error, not a handler failure, on the
    // lane it came on.
    let id = alice.send_text(&world.channel, "/roll 300").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Arguments);
    assert_eq!(e.source, CommandSource::Text);
    assert_eq!(
        e.argument_error.as_ref().unwrap().to_string(),
        format!(
            "option \"count\" must be a whole number from 0 to 255\nusage: {}",
            usage_line(&Roll::declaration(), None)
        )
    );
    assert_eq!(
        e.to_string(),
        "text invocation of command \"roll\" has arguments that do not fit: \
         option \"count\" must be a whole number from 0 to 255"
    );
    let payload = encode_command_data(&CommandData {
        bot_id: world.bot.id.clone(),
        name: "roll".into(),
        args: args(&[("count", 300.into())]),
    });
    let id = alice
        .send_with_sidecar(&world.channel, "/roll 300", &payload)
        .await
        .unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(
        (e.reason, e.source),
        (CommandErrorReason::Arguments, CommandSource::Structured)
    );
    assert!(e.to_string().starts_with("structured invocation"), "{e}");
}

/// Roll some dice
///
/// Rolls six-sided dice and adds
/// them up.
///
///
/// /dice 2 rolls two.
#[derive(Command)]
struct Dice {
    /// How many dice
    count: Option<u8>,
}

#[tokio::test]
async fn a_doc_comment_s_later_paragraphs_are_the_help_and_leave_the_menu_alone() {
    let scene = Scene::builder()
        .start(|registry| {
            registry.command::<Dice>(ok)?.enable_help()?;
            Ok(())
        })
        .await
        .unwrap();
    scene.say("/help dice").await.unwrap();
    assert_eq!(
        scene.answer().await.unwrap().content,
        "Command dice: Roll some dice\n\
         usage: /dice [count]\n\
         - count (integer): How many dice\n\
         \n\
         Rolls six-sided dice and adds\n\
         them up.\n\
         \n\
         ⚠ /dice 2 rolls two."
    );

    // The menu the service holds is that of the first paragraph alone.
    let mut plain = CommandRegistry::new();
    let count = CommandOption::new("count", "How many dice", CommandOptionType::Integer);
    plain
        .register(
            CommandDeclaration::new("dice", "Roll some dice").option(count),
            |_ctx| async { Ok::<(), std::io::Error>(()) },
        )
        .unwrap()
        .enable_help()
        .unwrap();
    let stored = scene.server.menu(scene.bot_id()).unwrap();
    let expected = StoredMenu::from_canonical_json(&plain.canonical_menu_json()).unwrap();
    assert_eq!(stored, expected);
    let derived: Vec<CommandDeclaration> =
        scene.bot.commands().snapshot().list().cloned().collect();
    let hand_written: Vec<CommandDeclaration> = plain.list().cloned().collect();
    assert_eq!(
        compute_menu_hash(&derived),
        compute_menu_hash(&hand_written)
    );
    scene.close().await.unwrap();
}
