//! `CommandRegistry`: registration rules (leaving the registry unchanged on
//! every failure), lookups, `accepts` and `coerce`, the menu and its hash,
//! the built-in help command, and the argument checks with detail beside
//! `coerce`. `parse_from_text` is tested in `registry_text.rs`.
#![allow(clippy::unwrap_used)]

use botlane::framework::{help_declaration, ArgValueKind};

use botlane::{
    canonical_menu_json, canonicalize_menu, compute_menu_hash, decode_command_data,
    encode_command_data, ArgumentRule, CommandArgValue as V, CommandArgs, CommandData,
    CommandDeclaration, CommandHandler, CommandLookup, CommandOption, CommandOptionType as T,
    CommandRegistry, DeclarationError, DeclarationRule as R, MAX_COMMANDS_PAYLOAD,
    MAX_COMMANDS_PER_BOT,
};

use crate::fixtures::roll_with_choices as roll;

fn ok_handler() -> CommandHandler {
    CommandHandler::new(|_ctx| async { Ok::<(), std::io::Error>(()) })
}

fn register(reg: &mut CommandRegistry, decl: CommandDeclaration) -> Result<(), DeclarationError> {
    reg.register(decl, |_ctx| async { Ok::<(), std::io::Error>(()) })
        .map(|_| ())
}

fn everything() -> CommandDeclaration {
    CommandDeclaration::new("all", "Every type")
        .option(CommandOption::new("who", "User", T::User).required(true))
        .option(CommandOption::new("ratio", "Number", T::Number).choices(["0.5", "1.5"]))
        .option(CommandOption::new("loud", "Boolean", T::Boolean))
        .option(CommandOption::new("room", "Channel", T::Channel))
        .option(CommandOption::new("color", "String", T::String).choices(["red", "blue"]))
}

/// What must not change when a registration fails.
fn snapshot(reg: &CommandRegistry) -> (Vec<CommandDeclaration>, String, usize) {
    (reg.list().cloned().collect(), reg.hash(), reg.len())
}

fn rules(err: &DeclarationError) -> Vec<R> {
    err.violations().iter().map(|v| v.rule().clone()).collect()
}

fn args<const N: usize>(pairs: [(&str, V); N]) -> CommandArgs {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[test]
fn register_is_chainable_and_keeps_registration_order() {
    let mut reg = CommandRegistry::new();
    assert!(reg.is_empty());
    reg.register(roll(), |_ctx| async { Ok::<(), std::io::Error>(()) })
        .unwrap()
        .register(CommandDeclaration::new("ping", "Pong"), |_ctx| async {
            Ok::<(), std::io::Error>(())
        })
        .unwrap()
        .register_handler(CommandDeclaration::new("help", "Help"), ok_handler())
        .unwrap();
    assert_eq!(reg.len(), 3);
    assert!(!reg.is_empty());
    let names: Vec<_> = reg.list().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["roll", "ping", "help"]);
    assert_eq!(reg.list().next(), Some(&roll()));
}

#[test]
fn handlers_may_fail_with_any_error_type() {
    let mut reg = CommandRegistry::new();
    reg.register(CommandDeclaration::new("a", "A"), |_ctx| async {
        Err::<(), _>("a static message")
    })
    .unwrap()
    .register(CommandDeclaration::new("b", "B"), |_ctx| async {
        Err::<(), _>(std::fmt::Error)
    })
    .unwrap();
    assert_eq!(reg.len(), 2);
}

#[test]
fn invalid_declarations_are_rejected_with_every_violation() {
    let mut reg = CommandRegistry::new();
    register(&mut reg, roll()).unwrap();
    let before = snapshot(&reg);
    let bad = CommandDeclaration::new("Bad", "")
        .option(CommandOption::new("x", "x", T::Boolean).choices(["yes"]));
    let err = register(&mut reg, bad).unwrap_err();
    assert_eq!(
        rules(&err),
        [R::InvalidName, R::EmptyDescription, R::ChoicesOnBoolean]
    );
    assert_eq!(snapshot(&reg), before);
}

#[test]
fn duplicate_names_are_rejected() {
    let mut reg = CommandRegistry::new();
    register(&mut reg, roll()).unwrap();
    let before = snapshot(&reg);
    let err = register(&mut reg, CommandDeclaration::new("roll", "Another roll")).unwrap_err();
    assert_eq!(rules(&err), [R::DuplicateCommand]);
    assert_eq!(
        err.to_string(),
        "command \"roll\": a command with this name is already registered"
    );
    assert_eq!(snapshot(&reg), before);
    // The original handler and declaration are still the registered ones.
    assert_eq!(reg.get("roll").unwrap().decl, roll());
}

#[test]
fn registry_rules_and_declaration_rules_are_reported_together() {
    let mut reg = CommandRegistry::new();
    register(&mut reg, roll()).unwrap();
    let before = snapshot(&reg);
    let err = register(&mut reg, CommandDeclaration::new("roll", "")).unwrap_err();
    assert_eq!(rules(&err), [R::EmptyDescription, R::DuplicateCommand]);
    assert!(err
        .to_string()
        .starts_with("2 declaration rules violated:\n"));
    assert_eq!(snapshot(&reg), before);
}

#[test]
fn the_51st_command_is_rejected() {
    let mut reg = CommandRegistry::new();
    for i in 0..MAX_COMMANDS_PER_BOT {
        register(&mut reg, CommandDeclaration::new(format!("c{i}"), "d")).unwrap();
    }
    assert_eq!(reg.len(), 50);
    let before = snapshot(&reg);
    let err = register(&mut reg, CommandDeclaration::new("c50", "d")).unwrap_err();
    assert_eq!(rules(&err), [R::TooManyCommands]);
    assert_eq!(
        err.to_string(),
        "command \"c50\": the registry already holds MAX_COMMANDS_PER_BOT (50) commands"
    );
    assert_eq!(err.violations()[0].path(), "c50");
    assert_eq!(snapshot(&reg), before);
}

/// A registry whose menu is a few hundred bytes short of the payload cap.
fn nearly_full() -> CommandRegistry {
    let mut reg = CommandRegistry::new();
    for i in 0..5 {
        let mut decl = CommandDeclaration::new(format!("big{i}"), "d".repeat(100));
        for j in 0..25 {
            decl = decl.option(CommandOption::new(
                format!("o{j}"),
                "e".repeat(100),
                T::String,
            ));
        }
        register(&mut reg, decl).unwrap();
    }
    let size = canonical_menu_json(&reg.list().cloned().collect::<Vec<_>>()).len();
    assert!(
        (15_000..MAX_COMMANDS_PAYLOAD - 300).contains(&size),
        "{size}"
    );
    reg
}

/// A command that brings the menu of `reg` to exactly `target` bytes: `k`
/// options of 100-character descriptions, the last shortened, and the
/// command description adjusted byte by byte.
fn filling(reg: &CommandRegistry, target: usize) -> CommandDeclaration {
    let build = |k: usize, cmd_desc: usize, last_desc: usize| {
        let mut decl = CommandDeclaration::new("last", "x".repeat(cmd_desc));
        for j in 0..k {
            let len = if j + 1 == k { last_desc } else { 100 };
            decl = decl.option(CommandOption::new(
                format!("p{j}"),
                "y".repeat(len),
                T::String,
            ));
        }
        decl
    };
    let size = |decl: &CommandDeclaration| {
        let mut all: Vec<_> = reg.list().cloned().collect();
        all.push(decl.clone());
        canonical_menu_json(&all).len()
    };
    for k in (1..=25).rev() {
        let smallest = size(&build(k, 1, 1));
        if smallest > target {
            continue;
        }
        // ASCII descriptions: every extra character is one more byte.
        let gap = target - smallest;
        let last = (1 + gap).min(100);
        let cmd = 1 + gap - (last - 1);
        if cmd <= 100 {
            let decl = build(k, cmd, last);
            assert_eq!(size(&decl), target);
            return decl;
        }
    }
    panic!("no filling command for {target} bytes");
}

#[test]
fn a_menu_of_exactly_the_payload_cap_is_accepted() {
    let mut reg = nearly_full();
    let decl = filling(&reg, MAX_COMMANDS_PAYLOAD);
    register(&mut reg, decl).unwrap();
    let menu = canonical_menu_json(&reg.list().cloned().collect::<Vec<_>>());
    assert_eq!(menu.len(), MAX_COMMANDS_PAYLOAD);
}

#[test]
fn a_menu_one_byte_over_the_payload_cap_is_rejected() {
    let mut reg = nearly_full();
    let before = snapshot(&reg);
    let decl = filling(&reg, MAX_COMMANDS_PAYLOAD + 1);
    let err = register(&mut reg, decl).unwrap_err();
    assert_eq!(rules(&err), [R::PayloadTooLarge { bytes: 16385 }]);
    assert_eq!(
        err.to_string(),
        "command \"last\": with this command the canonical menu would be 16385 bytes, \
         more than MAX_COMMANDS_PAYLOAD (16384)"
    );
    assert_eq!(snapshot(&reg), before);
    // A smaller command still fits afterwards.
    register(&mut reg, CommandDeclaration::new("small", "s")).unwrap();
}

#[test]
fn payload_counts_escaped_bytes() {
    // A control character is one byte in the declaration and six (`\u0001`)
    // in the menu: 25 options with 99 of them each make a command of about
    // 15,000 bytes, so a second one goes over the cap.
    let controls = |name: &str| {
        (0..25).fold(CommandDeclaration::new(name, "d"), |decl, j| {
            decl.option(CommandOption::new(
                format!("o{j}"),
                "\u{1}".repeat(99),
                T::String,
            ))
        })
    };
    let mut reg = CommandRegistry::new();
    register(&mut reg, controls("c0")).unwrap();
    let before = snapshot(&reg);
    let err = register(&mut reg, controls("c1")).unwrap_err();
    let expected = canonical_menu_json(&[controls("c0"), controls("c1")]).len();
    assert!(expected > MAX_COMMANDS_PAYLOAD);
    assert_eq!(rules(&err), [R::PayloadTooLarge { bytes: expected }]);
    assert_eq!(snapshot(&reg), before);
}

#[test]
fn get_is_ascii_case_insensitive() {
    let mut reg = CommandRegistry::new();
    register(&mut reg, roll()).unwrap();
    for name in ["roll", "ROLL", "Roll", "rOlL"] {
        assert_eq!(reg.get(name).unwrap().decl.name, "roll", "{name}");
    }
    for name in ["rol", "rolls", "", "r\u{f6}ll", "\u{212a}"] {
        assert!(reg.get(name).is_none(), "{name}");
    }
}

#[test]
fn canonical_menu_and_hash_follow_the_list() {
    let mut reg = CommandRegistry::new();
    assert_eq!(reg.hash(), compute_menu_hash(&[]));
    register(&mut reg, roll()).unwrap();
    register(&mut reg, everything()).unwrap();
    let list: Vec<_> = reg.list().cloned().collect();
    assert_eq!(reg.canonical_menu(), canonicalize_menu(&list));
    assert_eq!(reg.hash(), compute_menu_hash(&list));
    assert_eq!(reg.canonical_menu()[0].name, "all");
}

#[test]
fn hash_does_not_depend_on_registration_order() {
    let mut a = CommandRegistry::new();
    let mut b = CommandRegistry::new();
    register(&mut a, roll()).unwrap();
    register(&mut a, everything()).unwrap();
    register(&mut b, everything()).unwrap();
    register(&mut b, roll()).unwrap();
    assert_ne!(a.list().collect::<Vec<_>>(), b.list().collect::<Vec<_>>());
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.canonical_menu(), b.canonical_menu());
}

#[test]
fn hash_depends_on_option_order() {
    let mut a = CommandRegistry::new();
    let mut b = CommandRegistry::new();
    register(&mut a, roll()).unwrap();
    let mut swapped = roll();
    swapped.options.swap(1, 2);
    register(&mut b, swapped).unwrap();
    assert_ne!(a.hash(), b.hash());
}

fn registry() -> CommandRegistry {
    let mut reg = CommandRegistry::new();
    register(&mut reg, roll()).unwrap();
    register(&mut reg, everything()).unwrap();
    register(&mut reg, CommandDeclaration::new("ping", "Pong")).unwrap();
    reg
}

#[test]
fn accepts_well_formed_invocations() {
    let reg = registry();
    assert!(reg.accepts("ping", &CommandArgs::new()));
    assert!(reg.accepts("roll", &args([("count", V::Integer(2))])));
    assert!(reg.accepts("ROLL", &args([("count", V::Integer(2))])));
    assert!(reg.accepts(
        "roll",
        &args([
            ("count", V::Integer(-9_007_199_254_740_991)),
            ("sides", V::Integer(20)),
            ("label", V::from("")),
        ])
    ));
    assert!(reg.accepts(
        "all",
        &args([
            ("who", V::from("u1")),
            ("ratio", V::Number(1.5)),
            ("loud", V::Boolean(false)),
            ("room", V::from("c1")),
            ("color", V::from("blue")),
        ])
    ));
}

#[test]
fn accepts_rejects_unknown_names_and_keys() {
    let reg = registry();
    assert!(!reg.accepts("dance", &CommandArgs::new()));
    assert!(!reg.accepts("", &CommandArgs::new()));
    assert!(!reg.accepts("ping", &args([("extra", V::Integer(1))])));
    assert!(!reg.accepts(
        "roll",
        &args([("count", V::Integer(2)), ("size", V::Integer(6))])
    ));
    // Keys are option names exactly; the text lane's case folding happens before.
    assert!(!reg.accepts("roll", &args([("Count", V::Integer(2))])));
}

#[test]
fn accepts_requires_every_required_option() {
    let reg = registry();
    assert!(!reg.accepts("roll", &CommandArgs::new()));
    assert!(!reg.accepts("roll", &args([("sides", V::Integer(6))])));
    assert!(!reg.accepts("all", &args([("loud", V::Boolean(true))])));
}

#[test]
fn accepts_rejects_values_of_the_wrong_variant() {
    let reg = registry();
    for bad in [V::from("2"), V::Number(2.0), V::Boolean(true)] {
        assert!(
            !reg.accepts("roll", &args([("count", bad.clone())])),
            "{bad:?}"
        );
    }
    assert!(!reg.accepts(
        "roll",
        &args([("count", V::Integer(9_007_199_254_740_992))])
    ));
    let who = |v: V| args([("who", v)]);
    assert!(!reg.accepts("all", &who(V::from(""))), "ids are non-empty");
    assert!(!reg.accepts("all", &who(V::Integer(1))));
    let with = |k: &str, v: V| args([("who", V::from("u")), (k, v)]);
    assert!(!reg.accepts("all", &with("ratio", V::Integer(1))));
    assert!(!reg.accepts("all", &with("ratio", V::Number(f64::NAN))));
    assert!(!reg.accepts("all", &with("loud", V::from("true"))));
    assert!(!reg.accepts("all", &with("color", V::Integer(1))));
}

#[test]
fn accepts_rejects_values_outside_the_choices() {
    let reg = registry();
    let roll_with = |sides: V| args([("count", V::Integer(1)), ("sides", sides)]);
    assert!(reg.accepts("roll", &roll_with(V::Integer(6))));
    assert!(!reg.accepts("roll", &roll_with(V::Integer(8))));
    let all_with = |k: &str, v: V| args([("who", V::from("u")), (k, v)]);
    assert!(!reg.accepts("all", &all_with("color", V::from("Red"))));
    assert!(!reg.accepts("all", &all_with("ratio", V::Number(0.25))));
    assert!(reg.accepts("all", &all_with("ratio", V::Number(0.5))));
}

#[test]
fn coerce_converts_structured_values_to_the_declared_types() {
    let reg = registry();
    let got = reg
        .coerce(
            "ROLL",
            args([("count", V::from("3")), ("sides", V::Number(20.0))]),
        )
        .unwrap();
    assert_eq!(
        got,
        args([("count", V::Integer(3)), ("sides", V::Integer(20))])
    );
    let got = reg.coerce(
        "all",
        args([
            ("who", V::from("u1")),
            ("loud", V::from("yes")),
            ("ratio", V::Integer(0)),
        ]),
    );
    // 0 is not one of the ratio choices.
    assert_eq!(got, None);
    let got = reg
        .coerce(
            "all",
            args([
                ("who", V::from("u1")),
                ("loud", V::from("YES")),
                ("ratio", V::from(".5")),
            ]),
        )
        .unwrap();
    assert_eq!(
        got,
        args([
            ("who", V::from("u1")),
            ("loud", V::Boolean(true)),
            ("ratio", V::Number(0.5))
        ])
    );
    // What coerce returns is what accepts takes.
    assert!(reg.accepts("all", &got));
}

#[test]
fn coerce_refuses_what_does_not_fit() {
    let reg = registry();
    assert_eq!(reg.coerce("dance", CommandArgs::new()), None);
    assert_eq!(
        reg.coerce("roll", CommandArgs::new()),
        None,
        "missing required"
    );
    assert_eq!(
        reg.coerce(
            "roll",
            args([("count", V::Integer(1)), ("size", V::Integer(6))])
        ),
        None,
        "unknown key"
    );
    assert_eq!(reg.coerce("roll", args([("count", V::from("two"))])), None);
    assert_eq!(reg.coerce("roll", args([("count", V::Number(1.5))])), None);
    assert_eq!(
        reg.coerce(
            "roll",
            args([("count", V::Integer(1)), ("sides", V::from("8"))])
        ),
        None,
        "outside the choices"
    );
    assert_eq!(reg.coerce("all", args([("who", V::from(""))])), None);
}

#[test]
fn a_registry_is_a_command_lookup_object() {
    let reg = registry();
    let lookup: &dyn CommandLookup = &reg;
    assert!(lookup.accepts("ping", &CommandArgs::new()));
    assert_eq!(
        lookup.coerce("roll", args([("count", V::from("4"))])),
        Some(args([("count", V::Integer(4))]))
    );
}

#[test]
fn help_clashes_with_an_own_help_command_in_either_order() {
    let own = || CommandDeclaration::new("help", "My own help");

    let mut reg = CommandRegistry::new();
    reg.enable_help().unwrap();
    let before = snapshot(&reg);
    let err = register(&mut reg, own()).unwrap_err();
    assert_eq!(rules(&err), [R::HelpClash]);
    assert_eq!(
        err.to_string(),
        "command \"help\": the built-in help command is enabled (CommandRegistry::enable_help), \
         so no other command may be named \"help\"; rename this one or do not enable the built-in help"
    );
    assert_eq!(snapshot(&reg), before);
    let err = register(&mut reg, CommandDeclaration::new("HELP", "Shouted")).unwrap_err();
    assert!(rules(&err).contains(&R::HelpClash), "{err}");

    let mut reg = CommandRegistry::new();
    register(&mut reg, own()).unwrap();
    let before = snapshot(&reg);
    let err = reg.enable_help().unwrap_err();
    assert_eq!(rules(&err), [R::HelpClash]);
    assert_eq!(snapshot(&reg), before);
    assert!(!reg.help_enabled());
    assert_eq!(
        reg.get("help").unwrap().decl,
        own(),
        "the author's help is kept"
    );
}

#[test]
fn enabling_help_twice_registers_it_once() {
    let mut reg = CommandRegistry::new();
    reg.enable_help().unwrap().enable_help().unwrap();
    assert_eq!(reg.len(), 1);
    assert_eq!(reg.get("help").unwrap().decl, help_declaration());
    assert_eq!(
        reg.canonical_menu(),
        canonicalize_menu(&[help_declaration()])
    );
}

#[test]
fn help_counts_toward_the_command_cap() {
    let mut reg = CommandRegistry::new();
    for i in 0..MAX_COMMANDS_PER_BOT - 1 {
        register(&mut reg, CommandDeclaration::new(format!("c{i}"), "d")).unwrap();
    }
    reg.enable_help().unwrap();
    assert_eq!(reg.len(), MAX_COMMANDS_PER_BOT);
    let err = register(&mut reg, CommandDeclaration::new("one-more", "d")).unwrap_err();
    assert_eq!(rules(&err), [R::TooManyCommands]);

    let mut full = CommandRegistry::new();
    for i in 0..MAX_COMMANDS_PER_BOT {
        register(&mut full, CommandDeclaration::new(format!("c{i}"), "d")).unwrap();
    }
    let before = snapshot(&full);
    let err = full.enable_help().unwrap_err();
    assert_eq!(rules(&err), [R::TooManyCommands]);
    assert_eq!(snapshot(&full), before);
    assert!(!full.help_enabled());
}

#[test]
fn help_counts_toward_the_payload_cap() {
    let mut reg = nearly_full();
    let decl = filling(&reg, MAX_COMMANDS_PAYLOAD);
    register(&mut reg, decl).unwrap();
    let before = snapshot(&reg);
    let err = reg.enable_help().unwrap_err();
    assert!(
        matches!(rules(&err)[..], [R::PayloadTooLarge { bytes }] if bytes > MAX_COMMANDS_PAYLOAD),
        "{err}"
    );
    assert_eq!(snapshot(&reg), before);
}

fn bounded() -> CommandDeclaration {
    CommandDeclaration::new("remind", "Remind me")
        .option(
            CommandOption::new("minutes", "When", T::Integer)
                .required(true)
                .min(1)
                .max(3600),
        )
        .option(CommandOption::new("note", "What", T::String).max_length(5))
}

#[test]
fn bounds_leave_accepts_coerce_and_decode_alone() {
    let mut reg = CommandRegistry::new();
    register(&mut reg, bounded()).unwrap();
    let out_of_bounds = args([("minutes", V::Integer(0)), ("note", V::from("too long"))]);
    assert!(reg.accepts("remind", &out_of_bounds));
    assert_eq!(
        reg.coerce("remind", out_of_bounds.clone()),
        Some(out_of_bounds.clone())
    );
    let sidecar = encode_command_data(&CommandData {
        bot_id: "b1".into(),
        name: "remind".into(),
        args: out_of_bounds.clone(),
    });
    let decoded = decode_command_data(&sidecar, Some(&reg))
        .expect("an out-of-bounds payload is well-formed: it stays on the structured lane");
    let err = reg
        .get("remind")
        .unwrap()
        .decl
        .check_invocation(decoded.args, Some("!"))
        .unwrap_err();
    assert_eq!(err.option(), "minutes");
    assert_eq!(err.rule(), &ArgumentRule::BelowMin { min: 1.0 });
    assert_eq!(err.value_kind(), Some(ArgValueKind::Integer));
    assert_eq!(
        err.to_string(),
        "option \"minutes\" must be at least 1\nusage: !remind <minutes (1 to 3600)> [note (up to 5 characters)]"
    );
}

#[test]
fn the_menu_and_hash_are_the_same_with_and_without_bounds() {
    let mut plain = bounded();
    for option in &mut plain.options {
        option.min_value = None;
        option.max_value = None;
        option.max_length = None;
    }
    assert_ne!(plain, bounded());
    assert_eq!(
        canonicalize_menu(&[plain.clone()]),
        canonicalize_menu(&[bounded()])
    );
    assert_eq!(
        canonical_menu_json(&[plain.clone()]),
        canonical_menu_json(&[bounded()])
    );
    assert_eq!(compute_menu_hash(&[plain]), compute_menu_hash(&[bounded()]));
}

#[test]
fn check_args_says_why_where_coerce_says_none() {
    let reg = registry();
    let roll = &reg.get("roll").unwrap().decl;
    let all = &reg.get("all").unwrap().decl;
    let cases = [
        (roll, args([]), "count", ArgumentRule::Missing, None),
        (
            roll,
            args([("count", V::Integer(1)), ("cuont", V::Integer(1))]),
            "cuont",
            ArgumentRule::Unknown,
            None,
        ),
        (
            roll,
            args([("count", V::from("two"))]),
            "count",
            ArgumentRule::WrongType {
                expected: T::Integer,
            },
            Some(ArgValueKind::String),
        ),
        (
            roll,
            args([("count", V::Number(1.5))]),
            "count",
            ArgumentRule::WrongType {
                expected: T::Integer,
            },
            Some(ArgValueKind::Number),
        ),
        (
            roll,
            args([("count", V::Integer(1)), ("sides", V::from("8"))]),
            "sides",
            ArgumentRule::NotInChoices {
                choices: vec!["6".into(), "20".into()],
            },
            Some(ArgValueKind::String),
        ),
        (
            all,
            args([("who", V::from(""))]),
            "who",
            ArgumentRule::WrongType { expected: T::User },
            Some(ArgValueKind::String),
        ),
        (
            all,
            args([("who", V::from("u1")), ("loud", V::Integer(1))]),
            "loud",
            ArgumentRule::WrongType {
                expected: T::Boolean,
            },
            Some(ArgValueKind::Integer),
        ),
    ];
    for (decl, given, option, rule, kind) in cases {
        assert_eq!(reg.coerce(&decl.name, given.clone()), None, "{given:?}");
        let err = decl.check_args(given.clone(), None).unwrap_err();
        assert_eq!(
            (err.option(), err.rule(), err.value_kind()),
            (option, &rule, kind),
            "{given:?}"
        );
        let usage = botlane::framework::usage_line(decl, None);
        assert_eq!(err.usage(), Some(usage.as_str()));
        assert!(
            err.to_string().ends_with(&format!("\nusage: {usage}")),
            "{err}"
        );
        assert!(!err.to_string().contains("two"), "never the value: {err}");
    }
    let fine = args([("count", V::from("3")), ("sides", V::Number(20.0))]);
    assert_eq!(
        roll.check_args(fine.clone(), None).ok(),
        reg.coerce("roll", fine)
    );
}
