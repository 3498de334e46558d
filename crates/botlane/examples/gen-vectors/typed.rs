//! Argument values as the vector files spell them: `{"integer": 2}`,
//! `{"number": 2.0}`, `{"string": "x"}`, `{"boolean": true}`, so that a reader
//! in any language can tell an integer from a float of the same value.

use botlane::{CommandArgValue, CommandArgs};
use serde_json::{json, Map, Value};

/// One value in its typed spelling.
pub(crate) fn value_to_json(value: &CommandArgValue) -> Value {
    match value {
        CommandArgValue::Integer(i) => json!({ "integer": i }),
        CommandArgValue::Number(n) => json!({ "number": n }),
        CommandArgValue::Boolean(b) => json!({ "boolean": b }),
        CommandArgValue::String(s) => json!({ "string": s }),
        #[allow(unreachable_patterns)]
        other => json!({ "string": other.to_string() }),
    }
}

/// Arguments in their typed spelling.
pub(crate) fn args_to_json(args: &CommandArgs) -> Value {
    Value::Object(
        args.iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect::<Map<_, _>>(),
    )
}

/// Reads arguments in their typed spelling.
pub(crate) fn args_from_json(value: &Value) -> Result<CommandArgs, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("args must be an object, got {value}"))?;
    object
        .iter()
        .map(|(key, typed)| {
            let single = typed
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.iter().next())
                .ok_or_else(|| format!("arg {key:?} must be {{\"<type>\": value}}, got {typed}"))?;
            let value = match (single.0.as_str(), single.1) {
                ("integer", Value::Number(n)) if n.is_i64() => {
                    CommandArgValue::Integer(n.as_i64().unwrap_or_default())
                }
                ("number", Value::Number(n)) => CommandArgValue::Number(
                    n.as_f64()
                        .ok_or_else(|| format!("arg {key:?}: {n} is not a float"))?,
                ),
                ("boolean", Value::Bool(b)) => CommandArgValue::Boolean(*b),
                ("string", Value::String(s)) => CommandArgValue::String(s.clone()),
                _ => return Err(format!("arg {key:?}: unknown typed value {typed}")),
            };
            Ok((key.clone(), value))
        })
        .collect()
}
