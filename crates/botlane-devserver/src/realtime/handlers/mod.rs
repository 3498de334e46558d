//! One file per group of opcodes, and what each handler answers with: a
//! [`Refusal`] (a reply code and a reason) or, for the reader loop, a
//! [`Flow`].

pub(super) mod channels;
pub(super) mod keys;
pub(super) mod login;
pub(super) mod menu;
pub(crate) mod messages;

use botlane_proto::payload::CodeReply;
use botlane_proto::ReplyCode;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// What the reader loop does after a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The connection has just logged in: no login timeout any more.
    LoggedIn,
    /// Close the socket with this code and reason (after flushing the
    /// replies queued so far).
    Close {
        code: u16,
        reason: String,
    },
}

/// A refusal: a reply code and an optional reason.
pub(crate) struct Refusal(ReplyCode, Option<String>);

impl Refusal {
    pub(crate) fn new(code: ReplyCode, reason: impl Into<String>) -> Self {
        Self(code, Some(reason.into()))
    }

    pub(crate) fn reply(self) -> CodeReply {
        let mut reply = CodeReply::new(self.0.code());
        reply.reason = self.1;
        reply
    }
}

pub(crate) type Handled = Result<(), Refusal>;

/// Decodes a request payload (already checked by dispatch) into `T`.
pub(crate) fn decode<T: DeserializeOwned>(d: &RawValue) -> Result<T, Refusal> {
    serde_json::from_str(d.get()).map_err(|e| {
        Refusal::new(
            ReplyCode::BadRequest,
            format!("malformed payload: {}", describe(&e)),
        )
    })
}

/// A decoder's complaint without the values it quotes (`invalid type:
/// string "…", expected u32` becomes `invalid type: string, expected u32`):
/// a reason never carries what the client sent.
pub(crate) fn describe(e: &serde_json::Error) -> String {
    let shown = e.to_string();
    let shown = &shown[..shown.find(" at line ").unwrap_or(shown.len())];
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = shown.strip_prefix(prefix) {
            let (unexpected, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
            let kind = unexpected
                .find([' ', '`', '"'])
                .map_or(unexpected, |at| &unexpected[..at]);
            return format!("{prefix}{kind}, expected {expected}");
        }
    }
    shown.to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reasons_never_quote_values() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct T {
            n: u32,
            s: String,
        }
        let reason = |json: &str| {
            let d = RawValue::from_string(json.to_owned()).unwrap();
            decode::<T>(&d)
                .map(|_| ())
                .unwrap_err()
                .reply()
                .reason
                .unwrap()
        };
        assert_eq!(
            reason(r#"{"n":"sekrit","s":"x"}"#),
            "malformed payload: invalid type: string, expected u32"
        );
        assert_eq!(
            reason(r#"{"n":1,"s":12345}"#),
            "malformed payload: invalid type: integer, expected a string"
        );
        assert_eq!(reason(r#"{"n":1}"#), "malformed payload: missing field `s`");
        assert_eq!(
            reason(r#"{"n":1,"s":"a","n":2}"#),
            "malformed payload: duplicate field `n`"
        );
        assert_eq!(
            reason(r#"{"n":-1,"s":"a"}"#),
            "malformed payload: invalid value: integer, expected u32"
        );
    }
}
