//! The payloads that carry nothing (a heartbeat, `{}` requests) or nothing
//! but a code (most replies).

use serde::{Deserialize, Serialize};

/// An empty payload `{}`.
///
/// Not `#[non_exhaustive]`, unlike every other payload: it is the shape
/// `{}` itself, so `Empty {}` stays the way to write it; an exchange that
/// gains a field gets a type of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// A reply that carries nothing but its code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CodeReply {
    /// `0` on success, a negative [`ReplyCode`](crate::ReplyCode) otherwise.
    pub code: i32,
    /// A human-readable reason for a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CodeReply {
    /// A reply with `code` and no reason.
    pub fn new(code: i32) -> Self {
        Self { code, reason: None }
    }

    /// With a reason for the refusal.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
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
