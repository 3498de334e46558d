//! What the derives and `#[command]` on a function accept: each module
//! compiles (the compile errors are `botlane-macros`' `derive_ui`, trybuild
//! in check mode) and declares what its attributes say.

mod limits {
    // Everything the derives accept at the limits: 25 options, 25 choices of 100
    // characters, every value type, every attribute, bounds at their limits.
    use botlane::framework::{ChannelId, RoleId, UserId};
    use botlane::{Command, CommandChoice};

    #[derive(CommandChoice)]
    enum Mode {
        Sum,
        #[choice(name = "drop lowest")]
        DropLowest,
    }

    /// xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    #[derive(Command)]
    #[command(name = "a_32_character_name_is_the_limit")]
    struct Limits {
        /// An integer
        #[option(choices(
            "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
            "17", "18", "19", "20", "21", "22", "23", "24", "25"
        ))]
        o1: i64,
        /// A string
        #[option(choices("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))]
        o2: String,
        /// A number
        #[option(choices("0.5", "1e3"), min = -0.5, max = 1e3)]
        o3: f64,
        /// A boolean
        o4: bool,
        /// A user
        o5: UserId,
        /// A channel
        o6: ChannelId,
        /// A role
        o7: RoleId,
        /// A user id in a String
        #[option(kind = "user", choices("u1"))]
        o8: String,
        /// An enum
        o9: Mode,
        /// Small integers
        #[option(min = -9007199254740991, max = 9007199254740991)]
        o10: Option<u8>,
        /// d
        o11: Option<i8>,
        /// d
        o12: Option<i16>,
        /// d
        o13: Option<i32>,
        /// d
        o14: Option<u16>,
        /// d
        o15: Option<u32>,
        /// d
        o16: Option<u64>,
        /// d
        o17: Option<usize>,
        /// d
        o18: Option<isize>,
        /// d
        #[option(min_length = 0, max_length = 6000)]
        o19: Option<String>,
        /// d
        o20: Option<bool>,
        /// d
        o21: Option<f64>,
        /// d
        o22: Option<Mode>,
        /// d
        #[option(kind = "string", min_length = 3, max_length = 3)]
        o23: Option<String>,
        /// d
        o24: Option<ChannelId>,
        #[option(name = "last", description = "The 25th option")]
        o25: std::option::Option<RoleId>,
    }

    #[test]
    fn every_limit_and_attribute_compiles_and_declares() {
        let decl = <Limits as Command>::declaration();
        assert_eq!(decl.options.len(), 25);
        botlane::validate_declaration(&decl).unwrap();
        assert_eq!(decl.options[2].min_value, Some(-0.5));
        assert_eq!(decl.options[9].max_value, Some(9007199254740991.0));
        assert_eq!(decl.options[18].max_length, Some(6000));
        assert_eq!(decl.options[22].min_length, Some(3));
    }
}

mod function {
    // The function form: every parameter kind and attribute, descriptions from
    // the `# Options` section of the doc comment (an item over two lines, in
    // a block comment), which the help text leaves out, a state type through
    // an alias, checks and settings; and the derive's helper attribute
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
    ///
    /// # Options
    /// * `count`: How many dice
    /** - `mode`: How to add
    - `player`: Who rolls */
    /// - `text`: A label,
    ///   shown with the roll
    #[command(aliases("r"), category = "Fun", user_cooldown = 30, check = is_mod, check = Check::allowed_channels(["c1"]))]
    async fn roll(
        ctx: Ctx,
        #[option(min = 1, max = 10)] count: u8,
        mode: Mode,
        player: Option<UserId>,
        #[option(name = "label", max_length = 200)] text: Option<String>,
    ) -> Result<(), ClientError> {
        let _ = (count, mode, player, text);
        ctx.reply("rolled").await
    }

    // A suffixed literal is a cooldown's seconds too.
    /// Flip a coin
    #[derive(Command)]
    #[command(name = "flip", owners_only, global_cooldown = 1u8)]
    struct Flip;

    #[test]
    fn the_function_form_declares_what_its_attributes_say() {
        let mut registry = CommandRegistry::<Mods>::empty();
        registry.add(roll()).unwrap();
        registry
            .command::<Flip>(|_ctx, _flip| async { Ok::<(), ClientError>(()) })
            .unwrap();
        let roll = registry.get("roll").unwrap();
        assert_eq!(roll.decl.options.len(), 4);
        let descriptions: Vec<&str> = roll
            .decl
            .options
            .iter()
            .map(|o| o.description.as_str())
            .collect();
        assert_eq!(
            descriptions,
            [
                "How many dice",
                "How to add",
                "Who rolls",
                "A label, shown with the roll"
            ]
        );
        assert_eq!(roll.decl.options[3].name, "label");
        assert_eq!(roll.decl.options[3].max_length, Some(200));
        assert_eq!(roll.settings.checks.len(), 2);
        assert_eq!(roll.settings.category.as_deref(), Some("Fun"));
        assert_eq!(
            roll.settings.help_text.as_deref(),
            Some("Rolls them and adds them up.")
        );
        assert!(registry.get("flip").unwrap().settings.owners_only);
        registry.enable_help().unwrap();
        assert!(render_help(&registry, None, None).contains("Fun:"));
    }
}
