//! Guide, "Bounds": the same command with bounds, by hand and derived.

use botlane::{
    Command, CommandDeclaration, CommandOption, CommandOptionType, CommandRegistry,
    DeclarationError,
};

/// `/remind <minutes> [note]`, declared by hand.
pub fn remind() -> CommandDeclaration {
    CommandDeclaration::new("remind", "Remind me later")
        .option(
            CommandOption::new("minutes", "In how many minutes", CommandOptionType::Integer)
                .required(true)
                .min(1)
                .max(3600),
        )
        .option(
            CommandOption::new("note", "What to remind you of", CommandOptionType::String)
                .max_length(200),
        )
}

/// Remind me later
#[derive(Command, Debug, PartialEq)]
pub struct Remind {
    /// In how many minutes
    #[option(min = 1, max = 3600)]
    pub minutes: u16,
    /// What to remind you of
    #[option(max_length = 200)]
    pub note: Option<String>,
}

/// Registers `remind`: the handler only ever sees 1 to 3600 minutes.
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    registry.command::<Remind>(|ctx, remind| async move {
        let note = remind.note.as_deref().unwrap_or("something");
        ctx.reply(&format!(
            "in {} minutes I will remind you of {note}",
            remind.minutes
        ))
        .await
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use botlane::framework::usage_line;
    use botlane::{
        canonical_menu_json, ArgumentRule, CommandArgs, CommandOption, CommandOptionType,
        DeclarationRule,
    };
    use botlane_devserver::{Scene, Sidecar};

    use super::*;

    #[test]
    fn the_derive_and_the_builder_declare_the_same_command() {
        assert_eq!(Remind::declaration(), remind());
        assert_eq!(
            usage_line(&remind(), Some("/")),
            "/remind <minutes (1 to 3600)> [note (up to 200 characters)]"
        );
    }

    #[test]
    fn bounds_are_not_in_the_menu() {
        let unbounded = CommandDeclaration::new("remind", "Remind me later")
            .option(
                CommandOption::new("minutes", "In how many minutes", CommandOptionType::Integer)
                    .required(true),
            )
            .option(CommandOption::new(
                "note",
                "What to remind you of",
                CommandOptionType::String,
            ));
        assert_eq!(
            canonical_menu_json(&[remind()]),
            canonical_menu_json(&[unbounded])
        );
    }

    #[test]
    fn a_choice_outside_the_bounds_is_refused_at_register_time() {
        let dice = CommandDeclaration::new("dice", "Roll one die").option(
            CommandOption::new("sides", "Sides", CommandOptionType::Integer)
                .choices(["6", "120"])
                .max(100),
        );
        let mut registry = CommandRegistry::new();
        let err = registry
            .register(dice, |_ctx| async { Ok::<(), std::io::Error>(()) })
            .unwrap_err();
        assert_eq!(err.violations().len(), 1, "{err}");
        let DeclarationRule::ChoiceOutOfBounds { choice, .. } = err.violations()[0].rule() else {
            panic!("{err}");
        };
        assert_eq!(choice, "120");
    }

    #[test]
    fn an_argument_error_names_the_option_and_the_rule() {
        let mut args = CommandArgs::new();
        args.insert("minutes".into(), 0_i64.into());
        let err = remind().check_invocation(args, Some("/")).unwrap_err();
        assert_eq!(err.option(), "minutes");
        assert!(matches!(err.rule(), ArgumentRule::BelowMin { .. }));
        assert_eq!(
            err.to_string(),
            "option \"minutes\" must be at least 1\n\
             usage: /remind <minutes (1 to 3600)> [note (up to 200 characters)]"
        );
    }

    #[tokio::test]
    async fn out_of_bounds_is_answered_on_both_lanes() {
        let scene = Scene::start(commands).await.unwrap();
        scene.say("/remind 0 tea").await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "option \"minutes\" must be at least 1\n\
             usage: /remind <minutes (1 to 3600)> [note (up to 200 characters)]"
        );
        let tea = Remind {
            minutes: 5,
            note: Some("tea".into()),
        };
        let wrong = Sidecar::to(scene.bot_id())
            .invoking(&tea)
            .out_of_bounds("minutes");
        scene.send_sidecar("/remind 5 tea", &wrong).await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "option \"minutes\" must be at most 3600\n\
             usage: /remind <minutes (1 to 3600)> [note (up to 200 characters)]"
        );
        scene.invoke(&tea).await.unwrap();
        assert_eq!(
            scene.answer().await.unwrap().content,
            "in 5 minutes I will remind you of tea"
        );
    }
}
