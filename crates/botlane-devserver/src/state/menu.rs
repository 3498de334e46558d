//! The service's strict reading of a published canonical menu.
//!
//! The service does not trust the client's validation: it re-checks every
//! rule of the spec on the arrays it receives, independently of botlane's
//! own code, so that a client bug shows up as a refused publish.

use botlane::{
    MAX_CHOICES_PER_OPTION, MAX_CHOICE_LEN, MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT,
    MAX_COMMAND_DESC, MAX_OPTIONS_PER_COMMAND,
};
use serde_json::Value;

/// A bot's published menu as the service stores it, command names casefolded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredMenu {
    /// The commands in canonical order (sorted by name).
    pub commands: Vec<StoredCommand>,
}

/// One command of a [`StoredMenu`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredCommand {
    /// The casefolded name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The options in declared order.
    pub options: Vec<StoredOption>,
}

/// One option of a [`StoredCommand`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredOption {
    /// The option name.
    pub name: String,
    /// The `COMMAND_OPTION_TYPE_CODES` code (1 to 7).
    pub type_code: u8,
    /// The description.
    pub description: String,
    /// Whether the option is required.
    pub required: bool,
    /// The choices; empty when there are none.
    pub choices: Vec<String>,
}

impl StoredMenu {
    /// The command with this name (casefolded before the lookup).
    ///
    /// ```
    /// use botlane_devserver::StoredMenu;
    /// let menu = StoredMenu::from_canonical_json(r#"[["Roll","Roll dice",[]]]"#)?;
    /// assert_eq!(menu.command("ROLL").map(|c| c.name.as_str()), Some("roll"));
    /// # Ok::<(), botlane_devserver::MenuRejection>(())
    /// ```
    pub fn command(&self, name: &str) -> Option<&StoredCommand> {
        let folded = casefold(name);
        self.commands.iter().find(|c| c.name == folded)
    }

    /// Reads a canonical menu strictly (see the crate docs for the rules).
    ///
    /// ```
    /// use botlane_devserver::{MenuRejection, StoredMenu};
    /// let menu = StoredMenu::from_canonical_json(
    ///     r#"[["roll","Roll dice",[["count",2,"How many",true,[]],["sides",2,"Sides",false,["6","20"]]]]]"#,
    /// )?;
    /// assert_eq!(menu.commands[0].options[1].choices, ["6", "20"]);
    /// // `required` must be a real boolean.
    /// let err = StoredMenu::from_canonical_json(r#"[["roll","Roll",[["count",2,"How many","yes",[]]]]]"#);
    /// assert!(matches!(err, Err(MenuRejection::Malformed(_))));
    /// # Ok::<(), MenuRejection>(())
    /// ```
    pub fn from_canonical_json(json: &str) -> Result<Self, MenuRejection> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| MenuRejection::Malformed(format!("menu is not JSON: {e}")))?;
        Self::from_value(&value)
    }

    pub(crate) fn from_value(value: &Value) -> Result<Self, MenuRejection> {
        // The cap applies to the compact form the service serializes itself,
        // whatever whitespace the client sent.
        let size = value.to_string().len();
        if size > MAX_COMMANDS_PAYLOAD {
            return Err(MenuRejection::TooLarge(size));
        }
        let commands = value
            .as_array()
            .ok_or_else(|| malformed("menu must be an array of commands"))?;
        if commands.len() > MAX_COMMANDS_PER_BOT {
            return Err(malformed(format!(
                "menu has {} commands, more than MAX_COMMANDS_PER_BOT ({MAX_COMMANDS_PER_BOT})",
                commands.len()
            )));
        }
        let mut stored: Vec<StoredCommand> = Vec::with_capacity(commands.len());
        for (index, command) in commands.iter().enumerate() {
            let command = parse_command(command)
                .map_err(|why| malformed(format!("command {index}: {why}")))?;
            if stored.iter().any(|c| c.name == command.name) {
                return Err(malformed(format!(
                    "command {index}: duplicate command name {:?}",
                    command.name
                )));
            }
            stored.push(command);
        }
        // Canonical order: sorted by (casefolded) name, which for valid
        // names is plain byte order; duplicates were refused above.
        if let Some(pair) = stored.windows(2).find(|pair| pair[0].name > pair[1].name) {
            return Err(malformed(format!(
                "commands are not in canonical order (sorted by name): {:?} comes after {:?}",
                pair[1].name, pair[0].name
            )));
        }
        Ok(Self { commands: stored })
    }
}

/// Why a published menu was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MenuRejection {
    /// Not a valid canonical menu (reply code `-5`).
    #[error("malformed menu: {0}")]
    Malformed(String),
    /// Over `MAX_COMMANDS_PAYLOAD` bytes (reply code `-8`).
    #[error("menu is {0} bytes, over MAX_COMMANDS_PAYLOAD ({MAX_COMMANDS_PAYLOAD})")]
    TooLarge(usize),
}

fn malformed(why: impl Into<String>) -> MenuRejection {
    MenuRejection::Malformed(why.into())
}

/// The service's casefolding of command names: Unicode lower-casing, after
/// which the name must still satisfy the ASCII name rule.
pub(crate) fn casefold(name: &str) -> String {
    name.to_lowercase()
}

fn is_valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

fn check_description(what: &str, text: &str) -> Result<(), String> {
    let chars = text.chars().count();
    if (1..=MAX_COMMAND_DESC).contains(&chars) {
        Ok(())
    } else {
        Err(format!(
            "{what} description has {chars} characters, must be 1 to MAX_COMMAND_DESC ({MAX_COMMAND_DESC})"
        ))
    }
}

fn parse_command(value: &Value) -> Result<StoredCommand, String> {
    let [name, description, options] = value
        .as_array()
        .map(Vec::as_slice)
        .and_then(|a| <&[Value; 3]>::try_from(a).ok())
        .ok_or("must be an array [name, description, options]")?;
    let raw_name = name.as_str().ok_or("name must be a string")?;
    let name = casefold(raw_name);
    if !is_valid_name(&name) {
        return Err(format!(
            "name {raw_name:?} does not match ^[a-z0-9_-]{{1,32}}$"
        ));
    }
    let description = description.as_str().ok_or("description must be a string")?;
    check_description("command", description)?;
    let options = options.as_array().ok_or("options must be an array")?;
    if options.len() > MAX_OPTIONS_PER_COMMAND {
        return Err(format!(
            "{} options, more than MAX_OPTIONS_PER_COMMAND ({MAX_OPTIONS_PER_COMMAND})",
            options.len()
        ));
    }
    let mut stored: Vec<StoredOption> = Vec::with_capacity(options.len());
    for (index, option) in options.iter().enumerate() {
        let option = parse_option(option).map_err(|why| format!("option {index}: {why}"))?;
        if stored.iter().any(|o| o.name == option.name) {
            return Err(format!(
                "option {index}: duplicate option name {:?}",
                option.name
            ));
        }
        if option.required && stored.iter().any(|o| !o.required) {
            return Err(format!(
                "option {index}: required option {:?} follows an optional one",
                option.name
            ));
        }
        stored.push(option);
    }
    Ok(StoredCommand {
        name,
        description: description.to_owned(),
        options: stored,
    })
}

/// The type codes this reading treats apart (`type_codes_are_botlanes`
/// checks them against botlane's table).
const INTEGER: u8 = 2;
const BOOLEAN: u8 = 3;
const NUMBER: u8 = 7;

fn parse_option(value: &Value) -> Result<StoredOption, String> {
    let [name, type_code, description, required, choices] = value
        .as_array()
        .map(Vec::as_slice)
        .and_then(|a| <&[Value; 5]>::try_from(a).ok())
        .ok_or("must be an array [name, typeCode, description, required, choices]")?;
    let name = name.as_str().ok_or("name must be a string")?;
    if !is_valid_name(name) {
        return Err(format!("name {name:?} does not match ^[a-z0-9_-]{{1,32}}$"));
    }
    let type_code = type_code
        .as_u64()
        .and_then(|c| u8::try_from(c).ok())
        .filter(|c| (1..=7).contains(c))
        .ok_or("typeCode must be an integer from 1 to 7")?;
    let description = description.as_str().ok_or("description must be a string")?;
    check_description("option", description)?;
    let required = required
        .as_bool()
        .ok_or("required must be a real boolean")?;
    let choices = choices.as_array().ok_or("choices must be an array")?;
    if choices.len() > MAX_CHOICES_PER_OPTION {
        return Err(format!(
            "{} choices, more than MAX_CHOICES_PER_OPTION ({MAX_CHOICES_PER_OPTION})",
            choices.len()
        ));
    }
    if type_code == BOOLEAN && !choices.is_empty() {
        return Err("a boolean option cannot have choices".into());
    }
    let mut stored = Vec::with_capacity(choices.len());
    for choice in choices {
        let choice = choice.as_str().ok_or("every choice must be a string")?;
        if choice.chars().count() > MAX_CHOICE_LEN {
            return Err(format!(
                "choice {choice:?} is longer than MAX_CHOICE_LEN ({MAX_CHOICE_LEN})"
            ));
        }
        check_choice_type(type_code, choice)?;
        stored.push(choice.to_owned());
    }
    Ok(StoredOption {
        name: name.to_owned(),
        type_code,
        description: description.to_owned(),
        required,
        choices: stored,
    })
}

/// Integer and number choices must coerce to their type (text-grammar §4).
fn check_choice_type(type_code: u8, choice: &str) -> Result<(), String> {
    match type_code {
        INTEGER if !is_integer_text(choice) => Err(format!("choice {choice:?} is not an integer")),
        NUMBER if !is_number_text(choice) => Err(format!("choice {choice:?} is not a number")),
        _ => Ok(()),
    }
}

/// `^[+-]?[0-9]+$` within ±(2^53 − 1).
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits
            .parse::<u64>()
            .is_ok_and(|n| n <= 9_007_199_254_740_991)
}

/// `^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`, finite.
fn is_number_text(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(int) && all_digits(frac) && !(int.is_empty() && frac.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && all_digits(digits)
    });
    mantissa_ok && exponent_ok && text.parse::<f64>().is_ok_and(f64::is_finite)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn reject(json: &str) -> String {
        match StoredMenu::from_canonical_json(json) {
            Err(MenuRejection::Malformed(why)) => why,
            other => panic!("expected a malformed-menu refusal for {json}, got {other:?}"),
        }
    }

    #[test]
    fn names_are_casefolded_and_checked_after_folding() {
        let menu = StoredMenu::from_canonical_json(r#"[["Ping","d",[]],["ROLL","d",[]]]"#).unwrap();
        let names: Vec<_> = menu.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["ping", "roll"]);
        assert!(reject(r#"[["roll","d",[]],["Roll","d",[]]]"#).contains("duplicate command name"));
        assert!(reject(r#"[["ro ll","d",[]]]"#).contains("does not match"));
    }

    #[test]
    fn commands_must_come_in_canonical_order() {
        let why = reject(r#"[["roll","d",[]],["ping","d",[]]]"#);
        assert_eq!(
            why,
            r#"commands are not in canonical order (sorted by name): "ping" comes after "roll""#
        );
        // Plain byte order: `-` and digits before letters, `_` between cases.
        let sorted = r#"[["a-b","d",[]],["a0","d",[]],["a_b","d",[]],["ab","d",[]]]"#;
        assert!(StoredMenu::from_canonical_json(sorted).is_ok());
    }

    /// The service reads menus on its own, but it must accept exactly the
    /// option types botlane publishes: a type added to botlane's table
    /// (`COMMAND_OPTION_TYPE_CODES`) fails here until this reading knows it.
    #[test]
    fn type_codes_are_botlanes() {
        for code in 0..=u8::MAX {
            let json = format!(r#"[["roll","d",[["a",{code},"d",true,[]]]]]"#);
            let known = botlane::COMMAND_OPTION_TYPE_CODES
                .iter()
                .any(|(_, c)| *c == code);
            assert_eq!(
                StoredMenu::from_canonical_json(&json).is_ok(),
                known,
                "type code {code}"
            );
        }
        let code = |kind: botlane::CommandOptionType| kind.code();
        assert_eq!(BOOLEAN, code(botlane::CommandOptionType::Boolean));
        assert_eq!(INTEGER, code(botlane::CommandOptionType::Integer));
        assert_eq!(NUMBER, code(botlane::CommandOptionType::Number));
    }

    #[test]
    fn structural_rules() {
        for (json, rule) in [
            (r#"{}"#, "array of commands"),
            (r#"[["roll","d"]]"#, "[name, description, options]"),
            (r#"[["roll","",[]]]"#, "description has 0 characters"),
            (r#"[["roll","d",[["a",9,"d",true,[]]]]]"#, "typeCode"),
            (r#"[["roll","d",[["a",2,"d",1,[]]]]]"#, "real boolean"),
            (r#"[["roll","d",[["a",2,"d",null,[]]]]]"#, "real boolean"),
            (r#"[["roll","d",[["a",2,"d",true]]]]"#, "[name, typeCode"),
            (
                r#"[["roll","d",[["a",1,"d",false,[]],["b",1,"d",true,[]]]]]"#,
                "follows an optional",
            ),
            (
                r#"[["roll","d",[["a",1,"d",true,[]],["a",1,"d",true,[]]]]]"#,
                "duplicate option",
            ),
            (
                r#"[["roll","d",[["a",3,"d",true,["true"]]]]]"#,
                "boolean option cannot have choices",
            ),
            (
                r#"[["roll","d",[["a",2,"d",true,["1.5"]]]]]"#,
                "not an integer",
            ),
            (
                r#"[["roll","d",[["a",7,"d",true,["abc"]]]]]"#,
                "not a number",
            ),
            (
                r#"[["roll","d",[["a",1,"d",true,[1]]]]]"#,
                "must be a string",
            ),
        ] {
            let why = reject(json);
            assert!(why.contains(rule), "{json}: {why}");
        }
    }

    #[test]
    fn typed_choices_follow_the_grammar() {
        for ok in ["6", "+6", "-20", "9007199254740991"] {
            assert!(is_integer_text(ok), "{ok}");
        }
        for bad in ["", "+", "1.0", "1e3", "9007199254740992", " 1"] {
            assert!(!is_integer_text(bad), "{bad}");
        }
        for ok in ["1", "1.", ".5", "-2.5e-3", "1E9"] {
            assert!(is_number_text(ok), "{ok}");
        }
        for bad in ["", ".", "e5", "1e", "inf", "NaN", "1e999", "0x10"] {
            assert!(!is_number_text(bad), "{bad}");
        }
    }

    #[test]
    fn the_size_cap_counts_compact_bytes() {
        let desc = "d".repeat(100);
        let options: Vec<_> = (0..25)
            .map(|i| format!(r#"["o{i}",1,"{desc}",false,[]]"#))
            .collect();
        let command = |i: usize| format!(r#"["c{i}","{desc}",[{}]]"#, options.join(","));
        let menu = |n: usize, sep: &str| {
            let commands: Vec<_> = (0..n).map(command).collect();
            format!("[{}]", commands.join(sep))
        };
        // About 3.2 KB per command: four fit under the cap, six do not.
        let padded = menu(4, &format!(",{}", " ".repeat(4000)));
        assert!(padded.len() > MAX_COMMANDS_PAYLOAD);
        assert!(StoredMenu::from_canonical_json(&padded).is_ok());
        let big = menu(6, ",");
        assert_eq!(
            StoredMenu::from_canonical_json(&big),
            Err(MenuRejection::TooLarge(big.len()))
        );
    }
}
