//! `CommandRegistry::parse_from_text`: the text lane through the registry.
#![allow(clippy::unwrap_used)]

use botlane::{
    parse_invocation_text, CommandArgValue as V, CommandArgs, CommandDeclaration, CommandOption,
    CommandOptionType as T, CommandRegistry, CommandSource, TextParseResult,
};

fn registry() -> CommandRegistry {
    let mut reg = CommandRegistry::new();
    reg.register(
        CommandDeclaration::new("roll", "Roll dice")
            .option(CommandOption::new("count", "How many", T::Integer).required(true))
            .option(CommandOption::new("sides", "Sides", T::Integer).choices(["6", "20"]))
            .option(CommandOption::new("label", "Label", T::String)),
        |_ctx| async { Ok::<(), std::io::Error>(()) },
    )
    .unwrap()
    .register(CommandDeclaration::new("ping", "Pong"), |_ctx| async {
        Ok::<(), std::io::Error>(())
    })
    .unwrap();
    reg
}

fn ok(text: &str, prefix: Option<&str>) -> (String, CommandArgs) {
    match registry().parse_from_text(text, prefix) {
        TextParseResult::Ok(inv) => {
            assert_eq!(inv.source, CommandSource::Text);
            (inv.name, inv.args)
        }
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn a_registered_command_parses_to_a_text_invocation() {
    let (name, args) = ok("/roll 2 6 fire damage", None);
    assert_eq!(name, "roll");
    assert_eq!(args["count"], V::Integer(2));
    assert_eq!(args["sides"], V::Integer(6));
    assert_eq!(args["label"], V::from("fire damage"));
    let (name, args) = ok("/ping", None);
    assert_eq!((name.as_str(), args.len()), ("ping", 0));
}

#[test]
fn the_name_is_matched_case_insensitively_and_lowercased() {
    let (name, args) = ok("  /ROLL 3", None);
    assert_eq!(name, "roll");
    assert_eq!(args["count"], V::Integer(3));
}

#[test]
fn a_custom_prefix_replaces_the_default() {
    let (name, _) = ok("!roll 1", Some("!"));
    assert_eq!(name, "roll");
    assert_eq!(
        registry().parse_from_text("/roll 1", Some("!")),
        TextParseResult::None
    );
    assert_eq!(
        registry().parse_from_text("!roll 1", None),
        TextParseResult::None
    );
}

#[test]
fn bad_arguments_of_a_registered_command_are_an_error_naming_it() {
    let reg = registry();
    let roll = &reg.get("roll").unwrap().decl;
    for line in ["/roll", "/roll two", "/roll 2 8", "/roll sides:6 2"] {
        match reg.parse_from_text(line, None) {
            TextParseResult::Error { name, error } => {
                assert_eq!(name, "roll", "{line}");
                // The registry passes on the text lane's own error.
                assert_eq!(
                    Err(error),
                    parse_invocation_text(roll, line, None),
                    "{line}"
                );
            }
            other => panic!("{line:?}: {other:?}"),
        }
    }
    assert!(matches!(
        registry().parse_from_text("/ping extra", None),
        TextParseResult::Error { name, .. } if name == "ping"
    ));
}

#[test]
fn lines_invoking_no_registered_command_are_none() {
    for line in [
        "/dance",
        "/rolls 2",
        "hello /roll 2",
        "/ roll 2",
        "",
        "/",
        "/r\u{f6}ll 2",
    ] {
        assert_eq!(
            registry().parse_from_text(line, None),
            TextParseResult::None,
            "{line:?}"
        );
    }
    assert_eq!(
        CommandRegistry::new().parse_from_text("/roll 2", None),
        TextParseResult::None
    );
}
