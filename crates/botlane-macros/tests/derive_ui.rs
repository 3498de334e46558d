//! The compile errors of `#[derive(Command)]`, `#[derive(CommandChoice)]`
//! and `#[command]` on a function (`fn_*`):
//! one file per declaration rule under `tests/ui/`, each with the expected
//! compiler output checked in beside it (regenerate with `TRYBUILD=overwrite`).
//! Only failures here: trybuild then checks (`cargo check`) instead of
//! building every dependency; what the macros accept compiles in botlane's
//! `pure` tests (`tests/pure/derives.rs`).

#[test]
fn derive_errors_point_at_the_field_or_attribute_at_fault() {
    let cases = trybuild::TestCases::new();
    for rule in [
        "command_name",
        "option_name",
        "missing_doc",
        "description_length",
        "too_many_options",
        "duplicate_option_name",
        "required_after_optional",
        "empty_choices",
        "too_many_choices",
        "choice_too_long",
        "choice_not_of_type",
        "duplicate_choice",
        "choices_on_bool",
        "choice_enum",
        "attributes",
        "unsupported_type",
        "bounds_on_wrong_type",
        "bounds_not_of_type",
        "bounds_inverted",
        "choice_out_of_bounds",
        "bounds_syntax",
        "help_text",
        "fn_rules",
        "fn_misuse",
    ] {
        cases.compile_fail(format!("tests/ui/{rule}.rs"));
    }
}
