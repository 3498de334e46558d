//! [`Sidecar`]: a structured sidecar built field by field, right or
//! deliberately wrong, for tests of how a bot treats what it is sent.

use std::fmt;

use botlane::framework::canonical_bot_id;
use botlane::{
    Command, CommandArgValue, CommandArgs, CommandDeclaration, CommandOptionType,
    COMMAND_DATA_VERSION,
};

/// The JSON payload of a structured sidecar, built without writing JSON by
/// hand: right by default, wrong in exactly the way a test asks for.
///
/// Start from [`Sidecar::to`] (the bot it is addressed to), name the command
/// ([`command`](Self::command), [`declaration`](Self::declaration) or
/// [`invoking`](Self::invoking) a typed value), then break what the test is
/// about. Send it with [`TestUser::send_with_sidecar`](crate::TestUser::send_with_sidecar)
/// (sealed with the channel key like any sidecar), or
/// [`Scene::send_sidecar`](crate::Scene::send_sidecar).
///
/// | call | gives | what botlane's dispatch makes of it |
/// |---|---|---|
/// | [`arg`](Self::arg)`("count", "abc")` | any scalar value for any key | decided by the declaration |
/// | [`wrong_type`](Self::wrong_type)`("count")` | a value of a type the option refuses | an argument error (structured wins: no text fallback) |
/// | [`unknown_choice`](Self::unknown_choice)`("sides")` | a value of the right type outside the choices | an argument error |
/// | [`out_of_bounds`](Self::out_of_bounds)`("count")` | a value of the right type just outside the local bounds | an argument error |
/// | [`remove_arg`](Self::remove_arg)`("count")` | a required option left out | an argument error |
/// | [`raw_args`](Self::raw_args)`("[1]")` | `args` as written (not an object, a `null` value, a repeated key…) | malformed: the text line decides |
/// | [`version`](Self::version)`(2)` | another `v` | malformed: the text line decides |
/// | [`field`](Self::field)`("bot", "\"…\"")` | one more top-level field, even a repeated one | a repeated known key is malformed |
/// | [`for_another_bot`](Self::for_another_bot) | addressed to a bot that is not this one | dropped: no command, no text fallback |
///
/// ```
/// use botlane::{decode_command_data, encode_command_data, Command, CommandData};
/// use botlane_devserver::Sidecar;
///
/// /// Roll some dice
/// #[derive(Command)]
/// struct Roll {
///     /// How many dice
///     #[option(min = 1, max = 20)]
///     count: u8,
///     /// Sides per die
///     #[option(choices("6", "20"))]
///     sides: Option<u32>,
/// }
///
/// let bot = "6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55";
/// let right = Sidecar::to(bot).invoking(&Roll { count: 2, sides: Some(6) });
/// // Right, it is exactly what botlane's own encoder writes.
/// let data = CommandData { bot_id: bot.into(), name: "roll".into(), args: Roll { count: 2, sides: Some(6) }.to_args() };
/// assert_eq!(right.to_json(), encode_command_data(&data));
///
/// let wrong = right.clone().wrong_type("count").unknown_choice("sides");
/// assert_eq!(
///     wrong.to_json(),
///     r#"{"v":1,"bot":"6f1c2b0e2a4c4f439d1e0b8e6a1e9a55","name":"roll","args":{"count":true,"sides":21}}"#
/// );
/// assert!(right.clone().out_of_bounds("count").to_json().contains(r#""count":21"#));
///
/// // Malformed ones do not even decode.
/// assert!(decode_command_data(&right.clone().version(2).to_json(), None).is_none());
/// assert!(decode_command_data(&right.clone().raw_args(r#"{"count":null}"#).to_json(), None).is_none());
/// assert!(decode_command_data(&right.clone().field("bot", r#""ff""#).to_json(), None).is_none());
/// // Well formed, but for somebody else.
/// let other = decode_command_data(&right.for_another_bot().to_json(), None).unwrap();
/// assert_ne!(other.bot_id, "6f1c2b0e2a4c4f439d1e0b8e6a1e9a55");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Sidecar {
    version: i64,
    bot: String,
    name: String,
    args: CommandArgs,
    /// When set, written as `args` instead of [`Sidecar::args`].
    raw_args: Option<String>,
    extra: Vec<(String, String)>,
    declaration: Option<CommandDeclaration>,
}

impl Sidecar {
    /// A well-formed, empty sidecar (`v` 1, no command name yet, no
    /// arguments) addressed to `bot_id`, written in canonical form (no
    /// dashes, lower case) as a chat app writes it.
    pub fn to(bot_id: &str) -> Self {
        Self {
            version: i64::from(COMMAND_DATA_VERSION),
            bot: canonical_bot_id(bot_id),
            name: String::new(),
            args: CommandArgs::new(),
            raw_args: None,
            extra: Vec::new(),
            declaration: None,
        }
    }

    /// Sets the command name, written as given. Without a declaration,
    /// [`wrong_type`](Self::wrong_type), [`unknown_choice`](Self::unknown_choice)
    /// and [`out_of_bounds`](Self::out_of_bounds) have no types, choices or
    /// bounds to go by (see each).
    #[must_use]
    pub fn command(mut self, name: &str) -> Self {
        name.clone_into(&mut self.name);
        self
    }

    /// Sets the command name from `decl`, and keeps `decl` for the option
    /// types, choices and bounds that the wrong values are made from.
    #[must_use]
    pub fn declaration(mut self, decl: &CommandDeclaration) -> Self {
        self.name.clone_from(&decl.name);
        self.declaration = Some(decl.clone());
        self
    }

    /// Invokes the typed command `value`: its declaration
    /// ([`Command::declaration`], kept as with [`declaration`](Self::declaration))
    /// and all its arguments ([`Command::to_args`]), replacing any set before.
    #[must_use]
    pub fn invoking<C: Command>(self, value: &C) -> Self {
        let mut sidecar = self.declaration(&C::declaration());
        sidecar.args = value.to_args();
        sidecar.raw_args = None;
        sidecar
    }

    /// Sets one argument to any scalar value, right or wrong for its option
    /// (`.arg("count", "abc")`, `.arg("nope", 1_i64)`). Replaces
    /// [`raw_args`](Self::raw_args).
    #[must_use]
    pub fn arg(mut self, option: &str, value: impl Into<CommandArgValue>) -> Self {
        self.values().insert(option.to_owned(), value.into());
        self
    }

    /// Leaves one argument out (a required option then goes missing).
    #[must_use]
    pub fn remove_arg(mut self, option: &str) -> Self {
        self.values().remove(option);
        self
    }

    /// Sets `option` to a value of a JSON type that its declared type
    /// refuses: the boolean `true` for a string, id, integer or number
    /// option, the integer 2 for a boolean option. When the option is not
    /// declared (no [`declaration`](Self::declaration), or not one of its
    /// options), the value's current type decides instead: the integer 2 for
    /// a boolean, `true` for anything else or nothing.
    #[must_use]
    pub fn wrong_type(mut self, option: &str) -> Self {
        let boolean = match self.declared_kind(option) {
            Some(kind) => kind == CommandOptionType::Boolean,
            None => matches!(self.current(option), Some(CommandArgValue::Boolean(_))),
        };
        let value = if boolean {
            CommandArgValue::Integer(2)
        } else {
            CommandArgValue::Boolean(true)
        };
        self.values().insert(option.to_owned(), value);
        self
    }

    /// Sets `option` to a value of its declared type that is not one of its
    /// choices: one more than the largest choice for an integer or number
    /// option, a string that no choice equals otherwise. Without declared
    /// choices, the string `not-a-choice`.
    #[must_use]
    pub fn unknown_choice(mut self, option: &str) -> Self {
        let declared = self.declared(option);
        let value = match declared.and_then(|o| Some((o.kind, o.choices.as_ref()?))) {
            Some((CommandOptionType::Integer, choices)) => {
                let largest = choices.iter().filter_map(|c| c.parse::<i64>().ok()).max();
                CommandArgValue::Integer(largest.map_or(0, |n| n.saturating_add(1)))
            }
            Some((CommandOptionType::Number, choices)) => {
                let largest = choices
                    .iter()
                    .filter_map(|c| c.parse::<f64>().ok())
                    .fold(0.0, f64::max);
                CommandArgValue::Number(largest + 1.0)
            }
            Some((_, choices)) => {
                let mut text = "not-a-choice".to_owned();
                while choices.contains(&text) {
                    text.push('!');
                }
                CommandArgValue::String(text)
            }
            None => CommandArgValue::from("not-a-choice"),
        };
        self.values().insert(option.to_owned(), value);
        self
    }

    /// Sets `option` to a value of its declared type just outside its local
    /// bounds: one above `max_value` (else one below `min_value`) for an
    /// integer or number option, one character more than `max_length` (else
    /// one fewer than `min_length`) for a string option. Left as it is when
    /// the option declares no bound.
    #[must_use]
    pub fn out_of_bounds(mut self, option: &str) -> Self {
        let Some(declared) = self.declared(option) else {
            return self;
        };
        let value = match declared.kind {
            CommandOptionType::Integer => declared
                .max_value
                .map(|max| max + 1.0)
                .or(declared.min_value.map(|min| min - 1.0))
                .map(|n| {
                    // Bounds of an integer option are whole numbers within
                    // ±(2^53 − 1) (validate_declaration), so this is exact.
                    #[allow(clippy::cast_possible_truncation)]
                    CommandArgValue::Integer(n as i64)
                }),
            CommandOptionType::Number => declared
                .max_value
                .map(|max| max + 1.0)
                .or(declared.min_value.map(|min| min - 1.0))
                .map(CommandArgValue::Number),
            CommandOptionType::String => declared
                .max_length
                .map(|max| max + 1)
                .or(declared.min_length.map(|min| min.saturating_sub(1)))
                .map(|len| CommandArgValue::String("x".repeat(len))),
            _ => None,
        };
        if let Some(value) = value {
            self.values().insert(option.to_owned(), value);
        }
        self
    }

    /// Writes `args` as this JSON text, exactly (`[1]`, `null`,
    /// `{"count":null}`, `{"a":1,"a":2}`): for payloads that must not
    /// decode. [`arg`](Self::arg) and the others start from an empty object
    /// again.
    #[must_use]
    pub fn raw_args(mut self, json: &str) -> Self {
        self.args.clear();
        self.raw_args = Some(json.to_owned());
        self
    }

    /// Sets `v` (botlane decodes only [`COMMAND_DATA_VERSION`]).
    #[must_use]
    pub fn version(mut self, version: i64) -> Self {
        self.version = version;
        self
    }

    /// Appends one more top-level field, its value written as this JSON
    /// text, after the four of the format: an unknown field, or a repeated
    /// `bot`, `name`, `v` or `args`.
    #[must_use]
    pub fn field(mut self, key: &str, raw_json: &str) -> Self {
        self.extra.push((key.to_owned(), raw_json.to_owned()));
        self
    }

    /// Addresses the sidecar to a bot that is not the one given to
    /// [`to`](Self::to): a fresh random id.
    #[must_use]
    pub fn for_another_bot(mut self) -> Self {
        let mut other = canonical_bot_id(&uuid::Uuid::new_v4().to_string());
        while other == self.bot {
            other = canonical_bot_id(&uuid::Uuid::new_v4().to_string());
        }
        self.bot = other;
        self
    }

    /// The bot id the sidecar is addressed to, in canonical form.
    pub fn bot_id(&self) -> &str {
        &self.bot
    }

    /// The JSON text, compact, fields in the format's order (`v`, `bot`,
    /// `name`, `args`) then those of [`field`](Self::field). Arguments are
    /// written in key order, as [`botlane::encode_command_data`] writes them.
    pub fn to_json(&self) -> String {
        self.to_string()
    }

    /// The arguments, to change: raw args, if any, are dropped.
    fn values(&mut self) -> &mut CommandArgs {
        self.raw_args = None;
        &mut self.args
    }

    fn current(&self, option: &str) -> Option<&CommandArgValue> {
        self.args.get(option)
    }

    fn declared(&self, option: &str) -> Option<&botlane::CommandOption> {
        self.declaration.as_ref()?.find_option(option)
    }

    fn declared_kind(&self, option: &str) -> Option<CommandOptionType> {
        self.declared(option).map(|o| o.kind)
    }
}

impl fmt::Display for Sidecar {
    /// The JSON text of [`to_json`](Sidecar::to_json).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |s: &str| serde_json::Value::from(s).to_string();
        let args = match &self.raw_args {
            Some(raw) => raw.clone(),
            // A map of scalars always serializes (a non-finite number
            // becomes `null`, as in the library's encoder).
            None => serde_json::to_string(&self.args).map_err(|_| fmt::Error)?,
        };
        write!(
            f,
            r#"{{"v":{},"bot":{},"name":{},"args":{args}"#,
            self.version,
            text(&self.bot),
            text(&self.name)
        )?;
        for (key, raw) in &self.extra {
            write!(f, ",{}:{raw}", text(key))?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use botlane::{decode_command_data, CommandOption};

    use super::*;

    const BOT: &str = "3f2504e04f8911d39a0c0305e82c3301";

    fn decl() -> CommandDeclaration {
        CommandDeclaration::new("pick", "Pick things")
            .option(CommandOption::new("n", "How many", CommandOptionType::Integer).max(9))
            .option(CommandOption::new("x", "Ratio", CommandOptionType::Number).min(0.5))
            .option(CommandOption::new(
                "on",
                "Switch",
                CommandOptionType::Boolean,
            ))
            .option(
                CommandOption::new("word", "Which", CommandOptionType::String)
                    .choices(["not-a-choice", "b"])
                    .max_length(3),
            )
            .option(CommandOption::new("short", "Short", CommandOptionType::String).min_length(2))
            .option(
                CommandOption::new("size", "Size", CommandOptionType::Number)
                    .choices(["1.5", "-3"]),
            )
    }

    fn args(sidecar: &Sidecar) -> CommandArgs {
        decode_command_data(&sidecar.to_json(), None).unwrap().args
    }

    #[test]
    fn wrong_types_follow_the_declared_type() {
        let s = Sidecar::to(BOT)
            .declaration(&decl())
            .wrong_type("n")
            .wrong_type("on")
            .wrong_type("word");
        let a = args(&s);
        assert_eq!(a["n"], CommandArgValue::Boolean(true));
        assert_eq!(a["on"], CommandArgValue::Integer(2));
        assert_eq!(a["word"], CommandArgValue::Boolean(true));
    }

    #[test]
    fn without_a_declaration_wrong_types_follow_the_current_value() {
        let s = Sidecar::to(BOT)
            .command("pick")
            .arg("on", true)
            .arg("n", 3_i64)
            .wrong_type("on")
            .wrong_type("n")
            .wrong_type("absent");
        let a = args(&s);
        assert_eq!(a["on"], CommandArgValue::Integer(2));
        assert_eq!(a["n"], CommandArgValue::Boolean(true));
        assert_eq!(a["absent"], CommandArgValue::Boolean(true));
    }

    #[test]
    fn unknown_choices_are_outside_the_choices_and_of_the_right_type() {
        let s = Sidecar::to(BOT)
            .declaration(&decl())
            .unknown_choice("word")
            .unknown_choice("size")
            .unknown_choice("n");
        let a = args(&s);
        // "not-a-choice" is a choice here, so another string is picked.
        assert_eq!(a["word"], CommandArgValue::from("not-a-choice!"));
        assert_eq!(a["size"], CommandArgValue::Number(2.5));
        assert_eq!(a["n"], CommandArgValue::from("not-a-choice"));
    }

    #[test]
    fn out_of_bounds_values_are_just_outside() {
        let s = Sidecar::to(BOT)
            .declaration(&decl())
            .out_of_bounds("n")
            .out_of_bounds("x")
            .out_of_bounds("word")
            .out_of_bounds("short")
            .out_of_bounds("on");
        let a = args(&s);
        assert_eq!(a["n"], CommandArgValue::Integer(10));
        assert_eq!(a["x"], CommandArgValue::Number(-0.5));
        assert_eq!(a["word"], CommandArgValue::from("xxxx"));
        assert_eq!(a["short"], CommandArgValue::from("x"));
        // No bounds to leave: nothing is set.
        assert!(!a.contains_key("on"));
        let undeclared = Sidecar::to(BOT).command("pick").out_of_bounds("n");
        assert!(args(&undeclared).is_empty());
    }

    #[test]
    fn raw_args_are_written_as_given_until_an_argument_is_set() {
        let raw = Sidecar::to(BOT)
            .command("pick")
            .arg("n", 1_i64)
            .raw_args("[1]");
        assert_eq!(
            raw.to_json(),
            format!(r#"{{"v":1,"bot":"{BOT}","name":"pick","args":[1]}}"#)
        );
        let again = raw.arg("n", 2_i64);
        assert_eq!(
            args(&again),
            CommandArgs::from([("n".to_owned(), 2_i64.into())])
        );
    }

    #[test]
    fn fields_versions_and_names_are_written_as_given() {
        let s = Sidecar::to("3F2504E0-4F89-11D3-9A0C-0305E82C3301")
            .command("Pick \"it\"")
            .version(-1)
            .field("t", "[null]")
            .field("v", "1");
        assert_eq!(
            s.to_json(),
            format!(
                r#"{{"v":-1,"bot":"{BOT}","name":"Pick \"it\"","args":{{}},"t":[null],"v":1}}"#
            )
        );
        assert_eq!(s.to_string(), s.to_json());
    }

    #[test]
    fn another_bot_is_never_this_one() {
        for _ in 0..32 {
            let s = Sidecar::to(BOT).for_another_bot();
            assert_ne!(s.bot_id(), BOT);
            assert_eq!(s.bot_id().len(), 32);
        }
    }
}
