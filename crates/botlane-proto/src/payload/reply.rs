//! The payloads that carry nothing (a heartbeat, `{}` requests) or nothing
//! but a code (most replies).

use serde::{Deserialize, Serialize};

/// An empty payload `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// A reply that carries nothing but its code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeReply {
    /// `0` on success, a negative [`ReplyCode`](crate::ReplyCode) otherwise.
    pub code: i32,
    /// A human-readable reason for a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_written_only_when_there_is_one() {
        let ok = CodeReply::default();
        assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"code":0}"#);
        let refused: CodeReply =
            serde_json::from_str(r#"{"code":-5,"reason":"unknown opcode 9"}"#).unwrap();
        assert_eq!(refused.reason.as_deref(), Some("unknown opcode 9"));
        assert_eq!(serde_json::to_string(&Empty {}).unwrap(), "{}");
    }
}
