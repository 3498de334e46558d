//! `docs/vectors/text-grammar.json`: lines → arguments or a parse error,
//! arguments → lines or a format error, lines → the command they name, and
//! usage lines, all computed by botlane from the inputs stored in the file.

use std::collections::BTreeMap;

use botlane::framework::usage_line;

use botlane::{
    format_invocation_text, match_command_name, parse_invocation_text, CommandDeclaration,
    FormatError, ParseError, ParseErrorKind,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::typed::{args_from_json, args_to_json};

const ABOUT: &str = "The text lane grammar of docs/text-grammar.md: which command a line names, how a line parses into arguments against a declaration (or which error it gives, where), and how arguments are written back as a line. Inputs are written by hand; every 'expect' is computed by botlane.";

fn fields() -> Value {
    json!({
        "declarations": "named CommandDeclaration objects in the spec's JSON shape, referred to by 'decl'",
        "match[]": "line, prefix -> expect: the lowered command name the line invokes, or null",
        "usage[]": "decl, prefix -> expect: the usage line (required options <name>, optional [name])",
        "parse[]": "decl, line, prefix (note: where the case comes from) -> expect: {args} or {error}",
        "format[]": "decl, args, prefix -> expect: {line} or {error}",
        "args": "option name -> typed value: {\"integer\": 2}, {\"number\": 2.0}, {\"boolean\": true} or {\"string\": \"x\"} (user, channel and role values are strings); an unfilled option is absent",
        "parse error": "kind (NotThisCommand, UnterminatedQuote, TextAfterClosingQuote, EmptyNamedValue, PositionalAfterNamed, DuplicateOption, ExtraArgument, MissingRequired, InvalidValue, NotInChoices), option (the declared option at fault, or null), span ([start, end) in UTF-8 bytes of the line), usage; InvalidValue adds expected (the type), NotInChoices adds choices",
        "format error": "kind (UnknownOption, MissingRequired, NotInChoices, WrongType), option; WrongType adds expected, NotInChoices adds choices",
    })
}

#[derive(Serialize, Deserialize)]
struct File {
    about: String,
    fields: Value,
    generator: String,
    declarations: BTreeMap<String, Value>,
    #[serde(rename = "match")]
    matches: Vec<MatchCase>,
    usage: Vec<UsageCase>,
    parse: Vec<ParseCase>,
    format: Vec<FormatCase>,
}

#[derive(Serialize, Deserialize)]
struct MatchCase {
    line: String,
    prefix: String,
    #[serde(default)]
    expect: Value,
}

#[derive(Serialize, Deserialize)]
struct UsageCase {
    decl: String,
    prefix: String,
    #[serde(default)]
    expect: Value,
}

#[derive(Serialize, Deserialize)]
struct ParseCase {
    decl: String,
    line: String,
    prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default)]
    expect: Value,
}

#[derive(Serialize, Deserialize)]
struct FormatCase {
    decl: String,
    args: Value,
    prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default)]
    expect: Value,
}

/// The variant name of a `Debug`-printed enum value (`InvalidValue { .. }` → `InvalidValue`).
fn variant_name(debug: &str) -> String {
    debug
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn parse_error(error: &ParseError) -> Value {
    let span = error.span();
    let mut out = json!({
        "kind": variant_name(&format!("{:?}", error.kind())),
        "option": error.option(),
        "span": [span.start, span.end],
        "usage": error.usage(),
    });
    match error.kind() {
        ParseErrorKind::InvalidValue { expected } => out["expected"] = json!(expected.as_str()),
        ParseErrorKind::NotInChoices { choices } => out["choices"] = json!(choices),
        _ => {}
    }
    out
}

fn format_error(error: &FormatError) -> Value {
    let mut out = json!({ "kind": variant_name(&format!("{error:?}")) });
    match error {
        FormatError::UnknownOption { option, .. } | FormatError::MissingRequired { option, .. } => {
            out["option"] = json!(option);
        }
        FormatError::NotInChoices {
            option, choices, ..
        } => {
            out["option"] = json!(option);
            out["choices"] = json!(choices);
        }
        FormatError::WrongType {
            option, expected, ..
        } => {
            out["option"] = json!(option);
            out["expected"] = json!(expected.as_str());
        }
        _ => {}
    }
    out
}

/// Recomputes every `expect` of the file text `old`; returns the new text.
pub(crate) fn generate(old: &str) -> Result<String, String> {
    let mut file: File =
        serde_json::from_str(old).map_err(|e| format!("text-grammar.json: {e}"))?;
    let decls: BTreeMap<String, CommandDeclaration> = file
        .declarations
        .iter()
        .map(|(name, v)| {
            serde_json::from_value(v.clone())
                .map(|d| (name.clone(), d))
                .map_err(|e| format!("declaration {name:?}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let decl = |name: &str| {
        decls
            .get(name)
            .ok_or_else(|| format!("no declaration named {name:?}"))
    };
    for case in &mut file.matches {
        case.expect = json!(match_command_name(&case.line, Some(&case.prefix)));
    }
    for case in &mut file.usage {
        case.expect = json!(usage_line(decl(&case.decl)?, Some(&case.prefix)));
    }
    for case in &mut file.parse {
        case.expect = match parse_invocation_text(decl(&case.decl)?, &case.line, Some(&case.prefix))
        {
            Ok(args) => json!({ "args": args_to_json(&args) }),
            Err(error) => json!({ "error": parse_error(&error) }),
        };
    }
    for case in &mut file.format {
        let args = args_from_json(&case.args)?;
        case.expect = match format_invocation_text(decl(&case.decl)?, &args, Some(&case.prefix)) {
            Ok(line) => json!({ "line": line }),
            Err(error) => json!({ "error": format_error(&error) }),
        };
    }
    file.about = ABOUT.to_owned();
    file.fields = fields();
    file.generator = crate::GENERATOR.to_owned();
    crate::pretty(&file)
}
