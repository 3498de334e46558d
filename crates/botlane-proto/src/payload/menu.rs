//! Opcode 20 `menu_publish`: the canonical command menu (the reply is a
//! [`CodeReply`](super::CodeReply)).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Opcode 20 request: publish the canonical menu (the spec's arrays, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MenuPublish {
    /// The canonical menu, written as it is (its bytes are what the hash covers).
    pub menu: Box<RawValue>,
}

impl MenuPublish {
    /// Publish `menu`, the canonical menu's JSON.
    pub fn new(menu: Box<RawValue>) -> Self {
        Self { menu }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_bytes_pass_through_unchanged() {
        let menu = RawValue::from_string(r#"[{"name":"roll","options":[]}]"#.to_owned()).unwrap();
        let text = serde_json::to_string(&MenuPublish::new(menu)).unwrap();
        assert_eq!(text, r#"{"menu":[{"name":"roll","options":[]}]}"#);
    }
}
