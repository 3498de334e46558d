//! Typed commands: what `#[derive(Command)]` and `#[derive(CommandChoice)]`
//! generate, the conversion from both lanes' arguments, and typed handlers
//! end to end against the devserver.

#![cfg(feature = "macros")]
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};

use botlane::{
    decode_command_data, encode_command_data, parse_invocation_text, validate_declaration,
    ArgValueError, ArgsError, ChannelId, Command, CommandArgValue, CommandArgs, CommandChoice,
    CommandContext, CommandData, CommandDeclaration, CommandErrorReason, CommandInvocation,
    CommandOption, CommandOptionType, CommandRegistry, CommandSource, Message, RoleId, UserId,
};
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
    CommandDeclaration::new("roll", "Roll some dice and add them up.")
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

#[test]
fn from_args_names_the_option_and_the_fault() {
    let err = Roll::from_args(&args(&[("sides", 6.into())])).unwrap_err();
    assert_eq!(
        err,
        ArgsError::Missing {
            option: "count".into()
        }
    );
    assert_eq!(err.to_string(), "option \"count\" is required but missing");

    let err = Roll::from_args(&args(&[("count", "two".into())])).unwrap_err();
    assert_eq!(err.option(), "count");
    assert_eq!(
        err.to_string(),
        "option \"count\": expected an integer, got the string \"two\""
    );

    let err = Roll::from_args(&args(&[("count", 256.into())])).unwrap_err();
    assert!(matches!(
        err,
        ArgsError::Invalid {
            error: ArgValueError::OutOfRange {
                value: 256,
                min: 0,
                max: 255
            },
            ..
        }
    ));

    let err = Roll::from_args(&args(&[("count", 1.into()), ("mode", "max".into())])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option \"mode\": \"max\" is not one of \"sum\", \"keep-highest\", \"drop lowest\""
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("verbose", 2.into())])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option \"verbose\": expected a boolean, got the integer 2"
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("player", "".into())])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option \"player\": expected a user id (ids are non-empty), got the string \"\""
    );

    let err = Roll::from_args(&args(&[("count", 1.into()), ("colour", "red".into())])).unwrap_err();
    assert_eq!(
        err,
        ArgsError::Undeclared {
            option: "colour".into()
        }
    );
}

#[test]
fn integer_types_convert_with_their_ranges() {
    use botlane::CommandOptionValue;
    let v = CommandArgValue::Integer;
    assert_eq!(i8::from_arg(&v(-128)), Ok(-128));
    assert!(i8::from_arg(&v(128)).is_err());
    assert_eq!(
        u64::from_arg(&v(9_007_199_254_740_991)),
        Ok(9_007_199_254_740_991)
    );
    assert_eq!(
        u64::from_arg(&v(-1)),
        Err(ArgValueError::OutOfRange {
            value: -1,
            min: 0,
            max: 9_007_199_254_740_991
        })
    );
    assert!(matches!(
        i64::from_arg(&v(i64::MAX)),
        Err(ArgValueError::OutOfRange {
            max: 9_007_199_254_740_991,
            ..
        })
    ));
    assert_eq!(
        i32::from_arg(&CommandArgValue::Number(3.0)),
        Ok(3),
        "an integral number serves an integer"
    );
    assert_eq!(
        i32::from_arg(&CommandArgValue::Number(3.5))
            .unwrap_err()
            .to_string(),
        "expected an integer, got the number 3.5"
    );
    assert_eq!(
        <ChannelId as CommandOptionValue>::KIND,
        CommandOptionType::Channel
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
    let err = err.downcast::<ArgsError>().unwrap();
    assert_eq!(err.option(), "count");
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
        .command::<Roll>(|ctx, roll: Roll| async move {
            ctx.reply(&format!(
                "{} x d{:?} {:?}",
                roll.count, roll.sides, roll.mode
            ))
            .await
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
    // error carrying the conversion error, not a handler failure.
    let id = alice.send_text(&world.channel, "/roll 300").await.unwrap();
    let e = command_error_event(&mut events, &id).await;
    assert_eq!(e.reason, CommandErrorReason::Arguments);
    assert_eq!(
        e.error.as_ref().unwrap().to_string(),
        "option \"count\": 300 is out of range 0..=255"
    );
}
