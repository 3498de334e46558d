//! `validate_declaration`: one test per rule (each checking that the message
//! names the rule and the value at fault), every violation reported at once,
//! and the JSON shape's own errors.
#![allow(clippy::unwrap_used)]

use botlane::{
    validate_declaration, ArgumentRule, CommandDeclaration, CommandOption, CommandOptionType as T,
    DeclarationError, DeclarationRule as R, MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN,
    MAX_COMMAND_DESC, MAX_OPTIONS_PER_COMMAND, MAX_OPTION_LENGTH,
};

fn opt(name: &str, kind: T) -> CommandOption {
    CommandOption::new(name, "an option", kind)
}

fn cmd(options: Vec<CommandOption>) -> CommandDeclaration {
    let mut decl = CommandDeclaration::new("roll", "Roll dice");
    decl.options = options;
    decl
}

/// The only violation of `decl`, with its message.
fn only(decl: &CommandDeclaration) -> (R, String, String) {
    let err = validate_declaration(decl).unwrap_err();
    assert_eq!(err.violations().len(), 1, "{err}");
    let v = &err.violations()[0];
    assert_eq!(
        v.to_string(),
        err.to_string(),
        "one violation displays alone"
    );
    (v.rule().clone(), err.to_string(), v.path())
}

#[test]
fn a_declaration_using_every_type_and_limit_is_valid() {
    let decl = CommandDeclaration::new("a_b-9", "d".repeat(MAX_COMMAND_DESC))
        .option(opt("s", T::String).required(true).choices(["", "x y", "é"]))
        .option(
            opt("i", T::Integer)
                .required(true)
                .choices(["-6", "+20", "9007199254740991"]),
        )
        .option(opt("b", T::Boolean))
        .option(opt("u", T::User).choices(["u1"]))
        .option(opt("c", T::Channel))
        .option(opt("r", T::Role))
        .option(opt("n", T::Number).choices(["1.5", ".5", "-2e3"]));
    validate_declaration(&decl).unwrap();
    let max = CommandDeclaration::new("x".repeat(32), "d").option(
        opt(&"o".repeat(32), T::String).choices(
            (0..MAX_CHOICES_PER_OPTION).map(|i| format!("{i:0>width$}", width = MAX_CHOICE_LEN)),
        ),
    );
    validate_declaration(&max).unwrap();
}

#[test]
fn command_name_rule() {
    for bad in [
        "Roll",
        "",
        "ro ll",
        "roll!",
        "\u{212a}elvin",
        "rоll", /* Cyrillic о */
    ] {
        let (rule, msg, path) = only(&CommandDeclaration::new(bad, "d"));
        assert_eq!(rule, R::InvalidName, "{bad:?}");
        assert_eq!(
            msg,
            format!("command {bad:?}: name must match ^[a-z0-9_-]{{1,32}}$")
        );
        assert_eq!(path, bad);
    }
    let (rule, msg, _) = only(&CommandDeclaration::new("x".repeat(33), "d"));
    assert_eq!(rule, R::InvalidName);
    assert!(msg.contains(&"x".repeat(33)), "{msg}");
}

#[test]
fn command_description_must_not_be_empty() {
    let (rule, msg, path) = only(&CommandDeclaration::new("roll", ""));
    assert_eq!(rule, R::EmptyDescription);
    assert_eq!(msg, "command \"roll\": description must not be empty");
    assert_eq!(path, "roll");
}

#[test]
fn command_description_length_counts_characters_not_bytes() {
    for fits in ["é".repeat(MAX_COMMAND_DESC), "😀".repeat(MAX_COMMAND_DESC)] {
        validate_declaration(&CommandDeclaration::new("roll", fits)).unwrap();
    }
    let long = format!("{}{}", "é".repeat(MAX_COMMAND_DESC), "!");
    let (rule, msg, _) = only(&CommandDeclaration::new("roll", long.clone()));
    assert_eq!(
        rule,
        R::DescriptionTooLong {
            description: long,
            chars: 101
        }
    );
    assert_eq!(
        msg,
        format!(
            "command \"roll\": description is 101 characters, more than MAX_COMMAND_DESC (100): \"{}…\"",
            "é".repeat(40)
        )
    );
}

#[test]
fn too_many_options() {
    let options = |n: usize| (0..n).map(|i| opt(&format!("o{i}"), T::String)).collect();
    validate_declaration(&cmd(options(MAX_OPTIONS_PER_COMMAND))).unwrap();
    let (rule, msg, path) = only(&cmd(options(MAX_OPTIONS_PER_COMMAND + 1)));
    assert_eq!(rule, R::TooManyOptions { count: 26 });
    assert_eq!(
        msg,
        "command \"roll\": 26 options, more than MAX_OPTIONS_PER_COMMAND (25)"
    );
    assert_eq!(path, "roll");
}

#[test]
fn option_name_rule() {
    let (rule, msg, path) = only(&cmd(vec![
        opt("count", T::Integer),
        opt("Sides", T::Integer),
    ]));
    assert_eq!(rule, R::InvalidName);
    assert_eq!(
        msg,
        "option \"Sides\" of command \"roll\": name must match ^[a-z0-9_-]{1,32}$"
    );
    assert_eq!(path, "roll.options[1]");
}

#[test]
fn option_names_are_unique() {
    let (rule, msg, path) = only(&cmd(vec![
        opt("a", T::String),
        opt("count", T::Integer),
        opt("count", T::String),
    ]));
    assert_eq!(rule, R::DuplicateOptionName { first_index: 1 });
    assert_eq!(
        msg,
        "option \"count\" of command \"roll\": duplicate option name: options[1] already has this name"
    );
    assert_eq!(path, "roll.options[2]");
}

#[test]
fn option_names_differing_only_in_ascii_case_are_duplicates() {
    let err = validate_declaration(&cmd(vec![
        opt("count", T::Integer),
        opt("COUNT", T::String),
    ]))
    .unwrap_err();
    let rules: Vec<_> = err.violations().iter().map(|v| v.rule().clone()).collect();
    assert_eq!(
        rules,
        [R::InvalidName, R::DuplicateOptionName { first_index: 0 }]
    );
}

#[test]
fn option_description_rules() {
    let mut empty = opt("a", T::String);
    empty.description = String::new();
    let (rule, msg, path) = only(&cmd(vec![empty]));
    assert_eq!(rule, R::EmptyDescription);
    assert_eq!(
        msg,
        "option \"a\" of command \"roll\": description must not be empty"
    );
    assert_eq!(path, "roll.options[0]");

    let mut long = opt("a", T::String);
    long.description = "y".repeat(MAX_COMMAND_DESC + 5);
    let (rule, msg, _) = only(&cmd(vec![long]));
    assert!(matches!(rule, R::DescriptionTooLong { chars: 105, .. }));
    assert!(
        msg.contains("description is 105 characters, more than MAX_COMMAND_DESC (100)"),
        "{msg}"
    );
}

#[test]
fn required_options_precede_optional_ones() {
    let (rule, msg, path) = only(&cmd(vec![
        opt("count", T::Integer).required(true),
        opt("sides", T::Integer),
        opt("label", T::String).required(true),
    ]));
    assert_eq!(
        rule,
        R::RequiredAfterOptional {
            optional_index: 1,
            optional_name: "sides".into()
        }
    );
    assert_eq!(
        msg,
        "option \"label\" of command \"roll\": required option follows optional option \"sides\" \
         (options[1]); every required option must precede every optional one"
    );
    assert_eq!(path, "roll.options[2]");
}

#[test]
fn every_late_required_option_is_reported() {
    let err = validate_declaration(&cmd(vec![
        opt("a", T::String),
        opt("b", T::String).required(true),
        opt("c", T::String).required(true),
    ]))
    .unwrap_err();
    let paths: Vec<_> = err.violations().iter().map(|v| v.path()).collect();
    assert_eq!(paths, ["roll.options[1]", "roll.options[2]"]);
}

#[test]
fn choices_must_not_be_empty() {
    let mut o = opt("sides", T::Integer);
    o.choices = Some(vec![]);
    let (rule, msg, _) = only(&cmd(vec![o]));
    assert_eq!(rule, R::EmptyChoices);
    assert_eq!(
        msg,
        "option \"sides\" of command \"roll\": choices must not be empty (omit choices to allow any value)"
    );
}

#[test]
fn boolean_options_cannot_have_choices() {
    for choices in [vec!["true".to_string(), "x".into()], vec![]] {
        let mut o = opt("loud", T::Boolean);
        o.choices = Some(choices);
        // Only the one fault: the entries of a forbidden list are not examined.
        let (rule, msg, path) = only(&cmd(vec![o]));
        assert_eq!(rule, R::ChoicesOnBoolean);
        assert_eq!(
            msg,
            "option \"loud\" of command \"roll\": a boolean option cannot have choices"
        );
        assert_eq!(path, "roll.options[0]");
    }
}

#[test]
fn too_many_choices() {
    let choices = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
    validate_declaration(&cmd(vec![
        opt("n", T::Integer).choices(choices(MAX_CHOICES_PER_OPTION))
    ]))
    .unwrap();
    let (rule, msg, _) = only(&cmd(vec![
        opt("n", T::Integer).choices(choices(MAX_CHOICES_PER_OPTION + 1))
    ]));
    assert_eq!(rule, R::TooManyChoices { count: 26 });
    assert_eq!(
        msg,
        "option \"n\" of command \"roll\": 26 choices, more than MAX_CHOICES_PER_OPTION (25)"
    );
}

#[test]
fn choice_length_counts_characters() {
    validate_declaration(&cmd(vec![
        opt("s", T::String).choices(["ж".repeat(MAX_CHOICE_LEN)])
    ]))
    .unwrap();
    let long = "ж".repeat(MAX_CHOICE_LEN + 1);
    let (rule, msg, path) = only(&cmd(vec![opt("s", T::String).choices(["ok", &long])]));
    assert_eq!(
        rule,
        R::ChoiceTooLong {
            choice: long,
            chars: 101
        }
    );
    assert_eq!(
        msg,
        format!(
            "option \"s\" of command \"roll\": choice \"{}…\" is 101 characters, more than MAX_CHOICE_LEN (100)",
            "ж".repeat(40)
        )
    );
    assert_eq!(path, "roll.options[0].choices[1]");
}

#[test]
fn integer_choices_must_be_integers() {
    for bad in ["x", "1.5", "1e3", "", " 6", "9007199254740992"] {
        let (rule, msg, path) = only(&cmd(vec![opt("sides", T::Integer).choices(["6", bad])]));
        assert_eq!(
            rule,
            R::ChoiceNotOfType {
                choice: bad.into(),
                kind: T::Integer
            }
        );
        assert_eq!(
            msg,
            format!("option \"sides\" of command \"roll\": choice {bad:?} is not an integer")
        );
        assert_eq!(path, "roll.options[0].choices[1]");
    }
}

#[test]
fn number_choices_must_be_numbers() {
    for bad in ["abc", "inf", "NaN", "1e999", "1,5", ""] {
        let (rule, msg, _) = only(&cmd(vec![opt("ratio", T::Number).choices([bad])]));
        assert_eq!(
            rule,
            R::ChoiceNotOfType {
                choice: bad.into(),
                kind: T::Number
            }
        );
        assert!(
            msg.ends_with(&format!("choice {bad:?} is not a number")),
            "{msg}"
        );
    }
}

#[test]
fn id_choices_must_not_be_empty_but_string_choices_may() {
    for kind in [T::User, T::Channel, T::Role] {
        let (rule, msg, _) = only(&cmd(vec![opt("who", kind).choices(["id1", ""])]));
        assert_eq!(
            rule,
            R::ChoiceNotOfType {
                choice: String::new(),
                kind
            }
        );
        assert!(
            msg.ends_with(&format!(
                "choice \"\" is not a {kind} id (ids are non-empty)"
            )),
            "{msg}"
        );
    }
    validate_declaration(&cmd(vec![opt("s", T::String).choices(["", "a"])])).unwrap();
}

#[test]
fn duplicate_choices() {
    let (rule, msg, path) = only(&cmd(vec![
        opt("c", T::String).choices(["red", "blue", "red"])
    ]));
    assert_eq!(
        rule,
        R::DuplicateChoice {
            choice: "red".into(),
            first_index: 0
        }
    );
    assert_eq!(
        msg,
        "option \"c\" of command \"roll\": duplicate choice \"red\": choices[0] has the same value"
    );
    assert_eq!(path, "roll.options[0].choices[2]");
    // Strings compare exactly, as the text lane does.
    validate_declaration(&cmd(vec![opt("c", T::String).choices(["red", "Red"])])).unwrap();
}

#[test]
fn numeric_choices_with_the_same_value_are_duplicates() {
    let (rule, _, _) = only(&cmd(vec![opt("n", T::Integer).choices(["6", "20", "+06"])]));
    assert_eq!(
        rule,
        R::DuplicateChoice {
            choice: "+06".into(),
            first_index: 0
        }
    );
    let (rule, _, _) = only(&cmd(vec![opt("x", T::Number).choices(["0.5", ".50"])]));
    assert!(matches!(rule, R::DuplicateChoice { first_index: 0, .. }));
}

#[test]
fn every_violation_is_reported_at_once_in_declaration_order() {
    let mut no_desc = opt("b", T::String);
    no_desc.description = String::new();
    let decl = CommandDeclaration::new("Bad Name", "")
        .option(opt("a", T::String))
        .option(no_desc.required(true))
        .option(opt("n", T::Integer).choices(["1", "one", "1"]))
        .option(opt("flag", T::Boolean).choices(["yes"]));
    let err = validate_declaration(&decl).unwrap_err();
    let got: Vec<_> = err
        .violations()
        .iter()
        .map(|v| (v.path(), v.rule().clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("Bad Name".to_string(), R::InvalidName),
            ("Bad Name".into(), R::EmptyDescription),
            ("Bad Name.options[1]".into(), R::EmptyDescription),
            (
                "Bad Name.options[1]".into(),
                R::RequiredAfterOptional {
                    optional_index: 0,
                    optional_name: "a".into()
                }
            ),
            (
                "Bad Name.options[2].choices[1]".into(),
                R::ChoiceNotOfType {
                    choice: "one".into(),
                    kind: T::Integer
                }
            ),
            (
                "Bad Name.options[2].choices[2]".into(),
                R::DuplicateChoice {
                    choice: "1".into(),
                    first_index: 0
                }
            ),
            ("Bad Name.options[3]".into(), R::ChoicesOnBoolean),
        ]
    );
    let msg = err.to_string();
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(lines[0], "7 declaration rules violated:");
    assert_eq!(lines.len(), 8);
    for (line, v) in lines[1..].iter().zip(err.violations()) {
        assert_eq!(*line, format!("- {v}"));
    }
}

#[test]
fn violations_carry_a_structured_location() {
    let decl = cmd(vec![
        opt("count", T::Integer),
        opt("sides", T::Integer).choices(["6", "x"]),
    ]);
    let err = validate_declaration(&decl).unwrap_err();
    let v = &err.violations()[0];
    assert_eq!(v.command_name(), "roll");
    assert_eq!(v.option_ref(), Some((1, "sides")));
    assert_eq!(v.choice_index(), Some(1));

    let err = validate_declaration(&CommandDeclaration::new("roll", "")).unwrap_err();
    let v = &err.violations()[0];
    assert_eq!((v.option_ref(), v.choice_index()), (None, None));
}

#[test]
fn huge_values_are_cut_in_messages_and_paths() {
    let huge = "Z".repeat(100_000);
    let decl = CommandDeclaration::new(huge.clone(), huge.clone())
        .option(opt("s", T::String).choices([huge.clone()]));
    let err = validate_declaration(&decl).unwrap_err();
    let msg = err.to_string();
    assert!(msg.len() < 1000, "{} bytes", msg.len());
    assert!(msg.contains(&format!("\"{}…\"", "Z".repeat(40))), "{msg}");
    assert!(!msg.contains(&"Z".repeat(41)));
    assert_eq!(err.violations()[0].path(), format!("{}…", "Z".repeat(40)));
    // The structured error keeps the whole value.
    assert!(err
        .violations()
        .iter()
        .any(|v| matches!(v.rule(), R::ChoiceTooLong { choice, .. } if *choice == huge)));
}

#[test]
fn values_are_escaped_so_a_message_cannot_forge_lines() {
    let (_, msg, _) = only(&CommandDeclaration::new("a\nb\"c", "d"));
    assert_eq!(
        msg,
        "command \"a\\nb\\\"c\": name must match ^[a-z0-9_-]{1,32}$"
    );
    assert_eq!(msg.lines().count(), 1);
}

#[test]
fn declaration_error_is_a_std_error() {
    fn takes(_: &dyn std::error::Error) {}
    let err: DeclarationError = validate_declaration(&CommandDeclaration::new("", "")).unwrap_err();
    takes(&err);
}

#[test]
fn json_attachment_type_is_rejected_with_a_clear_message() {
    let err = serde_json::from_str::<CommandDeclaration>(
        r#"{"name":"up","description":"Upload","options":[{"name":"file","description":"f","type":"attachment"}]}"#,
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("option type \"attachment\" is unsupported"),
        "{msg}"
    );
}

#[test]
fn json_unknown_type_is_rejected_naming_it() {
    let err = serde_json::from_str::<CommandDeclaration>(
        r#"{"name":"up","description":"d","options":[{"name":"f","description":"f","type":"float"}]}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("unknown option type \"float\""),
        "{err}"
    );
}

#[test]
fn json_required_must_be_a_real_boolean() {
    for bad in [r#""true""#, "1", "null"] {
        let json = format!(
            r#"{{"name":"r","description":"d","options":[{{"name":"f","description":"f","type":"string","required":{bad}}}]}}"#
        );
        let err = serde_json::from_str::<CommandDeclaration>(&json).unwrap_err();
        assert!(err.to_string().contains("a real boolean"), "{bad}: {err}");
    }
}

#[test]
fn json_declarations_are_validated_after_parsing() {
    let decl: CommandDeclaration = serde_json::from_str(
        r#"{"name":"roll","description":"Roll","options":[{"name":"sides","description":"s","type":"integer","choices":["6","d20"]}]}"#,
    )
    .unwrap();
    let (rule, _, path) = only(&decl);
    assert!(matches!(
        rule,
        R::ChoiceNotOfType {
            kind: T::Integer,
            ..
        }
    ));
    assert_eq!(path, "roll.options[0].choices[1]");
}

#[test]
fn bounds_within_every_limit_are_valid() {
    let decl = cmd(vec![
        opt("i", T::Integer)
            .min(-9_007_199_254_740_991_i64 as f64)
            .max(9_007_199_254_740_991_i64 as f64),
        opt("n", T::Number).min(-0.5).max(-0.5),
        opt("s", T::String)
            .min_length(0)
            .max_length(MAX_OPTION_LENGTH),
        opt("c", T::Integer).choices(["1", "3"]).min(1).max(3),
        opt("t", T::String)
            .choices(["ab", "abc"])
            .min_length(2)
            .max_length(3),
    ]);
    validate_declaration(&decl).unwrap();
}

#[test]
fn bounds_apply_only_to_their_types() {
    for kind in [T::String, T::Boolean, T::User, T::Channel, T::Role] {
        let (rule, msg, path) = only(&cmd(vec![opt("o", kind).min(1)]));
        assert_eq!(
            rule,
            R::BoundNotForType {
                bound: "min_value",
                kind
            }
        );
        assert_eq!(
            msg,
            format!(
                "option \"o\" of command \"roll\": min_value does not apply to a {kind} option"
            )
        );
        assert_eq!(path, "roll.options[0]");
    }
    for kind in [
        T::Integer,
        T::Number,
        T::Boolean,
        T::User,
        T::Channel,
        T::Role,
    ] {
        let (rule, _, _) = only(&cmd(vec![opt("o", kind).max_length(3)]));
        assert_eq!(
            rule,
            R::BoundNotForType {
                bound: "max_length",
                kind
            }
        );
    }
}

#[test]
fn numeric_bounds_must_be_values_of_the_type() {
    for bad in [1.5, 9_007_199_254_740_992.0, f64::NAN, f64::INFINITY] {
        let (rule, msg, _) = only(&cmd(vec![opt("o", T::Integer).max(bad)]));
        assert!(
            matches!(
                rule,
                R::BoundNotOfType {
                    bound: "max_value",
                    kind: T::Integer,
                    ..
                }
            ),
            "{bad}"
        );
        assert!(
            msg.ends_with("is not a whole number within ±9007199254740991"),
            "{msg}"
        );
    }
    for bad in [f64::NAN, f64::NEG_INFINITY] {
        let (rule, msg, _) = only(&cmd(vec![opt("o", T::Number).min(bad)]));
        assert!(matches!(
            rule,
            R::BoundNotOfType {
                bound: "min_value",
                ..
            }
        ));
        assert!(msg.ends_with("is not a finite number"), "{msg}");
    }
}

#[test]
fn minimums_must_not_exceed_maximums() {
    let (rule, msg, _) = only(&cmd(vec![opt("o", T::Number).min(2).max(1.5)]));
    assert_eq!(rule, R::MinAboveMax { min: 2.0, max: 1.5 });
    assert!(
        msg.ends_with("min_value 2 is greater than max_value 1.5"),
        "{msg}"
    );
    let (rule, msg, _) = only(&cmd(vec![opt("o", T::String).min_length(3).max_length(2)]));
    assert_eq!(
        rule,
        R::MinLengthAboveMaxLength {
            min_length: 3,
            max_length: 2
        }
    );
    assert!(
        msg.ends_with("min_length 3 is greater than max_length 2"),
        "{msg}"
    );
}

#[test]
fn lengths_are_capped() {
    let (rule, msg, _) = only(&cmd(vec![
        opt("o", T::String).min_length(MAX_OPTION_LENGTH + 1)
    ]));
    assert_eq!(
        rule,
        R::LengthTooLarge {
            bound: "min_length",
            length: MAX_OPTION_LENGTH + 1
        }
    );
    assert!(
        msg.ends_with("min_length 6001 is more than MAX_OPTION_LENGTH (6000)"),
        "{msg}"
    );
}

#[test]
fn every_choice_must_be_within_the_bounds() {
    let decl = cmd(vec![
        opt("i", T::Integer).choices(["1", "+07", "20"]).max(6),
        opt("s", T::String).choices(["a", "abcd"]).min_length(2),
    ]);
    let err = validate_declaration(&decl).unwrap_err();
    let found: Vec<(R, String)> = err
        .violations()
        .iter()
        .map(|v| (v.rule().clone(), v.path()))
        .collect();
    assert_eq!(
        found,
        [
            (
                R::ChoiceOutOfBounds {
                    choice: "+07".into(),
                    broken: ArgumentRule::AboveMax { max: 6.0 }
                },
                "roll.options[0].choices[1]".into()
            ),
            (
                R::ChoiceOutOfBounds {
                    choice: "20".into(),
                    broken: ArgumentRule::AboveMax { max: 6.0 }
                },
                "roll.options[0].choices[2]".into()
            ),
            (
                R::ChoiceOutOfBounds {
                    choice: "a".into(),
                    broken: ArgumentRule::TooShort { min_length: 2 }
                },
                "roll.options[1].choices[0]".into()
            ),
        ]
    );
    assert_eq!(
        err.violations()[0].to_string(),
        "option \"i\" of command \"roll\": choice \"+07\" is outside the option's bounds: it must be at most 6"
    );
}

#[test]
fn every_bound_violation_is_reported_at_once() {
    let decl = cmd(vec![
        opt("b", T::Boolean).min(0).max_length(1),
        opt("i", T::Integer).min(0.5).max(-1),
    ]);
    let err = validate_declaration(&decl).unwrap_err();
    let rules: Vec<&R> = err.violations().iter().map(|v| v.rule()).collect();
    assert_eq!(rules.len(), 4, "{err}");
    assert!(
        err.to_string().starts_with("4 declaration rules violated:"),
        "{err}"
    );
}

#[test]
fn json_bounds_are_validated_after_parsing() {
    let decl: CommandDeclaration = serde_json::from_str(
        r#"{"name":"roll","description":"Roll","options":[
            {"name":"n","description":"d","type":"integer","min_value":0.5},
            {"name":"s","description":"d","type":"string","min_length":4,"max_length":2}
        ]}"#,
    )
    .unwrap();
    assert_eq!(
        validate_declaration(&decl).unwrap_err().violations().len(),
        2
    );
}
