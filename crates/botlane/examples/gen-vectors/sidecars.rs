//! `docs/vectors/sidecars.json`: sidecar plaintexts → the decoded
//! `CommandData` (without a registry, then with one) or a refusal, and
//! `CommandData` → the encoded plaintext, computed by botlane.

use botlane::{
    decode_command_data, encode_command_data, CommandData, CommandDeclaration, CommandRegistry,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::typed::{args_from_json, args_to_json};

const ABOUT: &str = "The structured sidecar's plaintext, {\"v\":1,\"bot\",\"name\",\"args\"} (docs/protocol.md, 'The command sidecar'): JSON texts and what a decoder makes of them, first structurally (no registry), then with the registry below applied (the declared types coerce the values). Inputs and 'why' are written by hand; 'decoded', 'with_registry' and encode's 'expect' are computed by botlane.";

fn fields() -> Value {
    json!({
        "registry": "the declarations registered for the with_registry column (spec JSON shape)",
        "decode[].json": "the sidecar plaintext, exactly as it would be sealed",
        "decode[].decoded": "decodeCommandData(json) without a registry: {bot, name, args} or null (refused)",
        "decode[].with_registry": "decodeCommandData(json, registry): {bot, name, args} with args coerced, or null (refused)",
        "decode[].why": "why the case is refused, by the decoder or by the registry (present exactly when one of the two is null)",
        "encode[].data": "a CommandData: bot_id (any spelling), name (any case), args",
        "encode[].expect": "encodeCommandData(data): the compact JSON text, v first, bot id canonical, name lower-case, args in key order",
        "bot": "the canonical bot id: dashes removed, ASCII lower-case",
        "args": "option name -> typed value: {\"integer\": 2}, {\"number\": 2.0}, {\"boolean\": true} or {\"string\": \"x\"}",
    })
}

#[derive(Serialize, Deserialize)]
struct File {
    about: String,
    fields: Value,
    generator: String,
    registry: Vec<Value>,
    decode: Vec<DecodeCase>,
    encode: Vec<EncodeCase>,
}

#[derive(Serialize, Deserialize)]
struct DecodeCase {
    name: String,
    json: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<String>,
    #[serde(default)]
    decoded: Value,
    #[serde(default)]
    with_registry: Value,
}

#[derive(Serialize, Deserialize)]
struct EncodeCase {
    name: String,
    data: Value,
    #[serde(default)]
    expect: Value,
}

fn data_to_json(data: Option<CommandData>) -> Value {
    data.map_or(
        Value::Null,
        |d| json!({ "bot": d.bot_id, "name": d.name, "args": args_to_json(&d.args) }),
    )
}

/// Recomputes every computed field of the file text `old`; returns the new text.
pub(crate) fn generate(old: &str) -> Result<String, String> {
    let mut file: File = serde_json::from_str(old).map_err(|e| format!("sidecars.json: {e}"))?;
    let mut registry = CommandRegistry::new();
    for decl in &file.registry {
        let decl: CommandDeclaration = serde_json::from_value(decl.clone())
            .map_err(|e| format!("sidecars.json registry: {e}"))?;
        registry
            .register(decl, |_ctx| async { Ok::<(), std::io::Error>(()) })
            .map_err(|e| format!("sidecars.json registry: {e}"))?;
    }
    for case in &mut file.decode {
        case.decoded = data_to_json(decode_command_data(&case.json, None));
        case.with_registry = data_to_json(decode_command_data(&case.json, Some(&registry)));
        let refused = case.decoded.is_null() || case.with_registry.is_null();
        match (&case.why, refused) {
            (None, true) => {
                return Err(format!(
                    "sidecars.json case {:?} is refused: say why in \"why\"",
                    case.name
                ))
            }
            (Some(_), false) => {
                return Err(format!(
                    "sidecars.json case {:?} is accepted but has a \"why\"",
                    case.name
                ))
            }
            _ => {}
        }
    }
    for case in &mut file.encode {
        let text = |key: &str| {
            case.data[key]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("encode case {:?}: {key} must be a string", case.name))
        };
        let data = CommandData {
            bot_id: text("bot_id")?,
            name: text("name")?,
            args: args_from_json(&case.data["args"])?,
        };
        case.expect = json!(encode_command_data(&data));
    }
    file.about = ABOUT.to_owned();
    file.fields = fields();
    file.generator = crate::GENERATOR.to_owned();
    crate::pretty(&file)
}
