//! Opcode 240 `fetch_emojis`: the static unicode catalog.

use serde::{Deserialize, Serialize};

/// One emoji of the static catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emoji {
    /// Its short name, such as `thumbs_up`.
    pub name: String,
    /// The emoji itself.
    pub emoji: String,
}

/// Opcode 240 reply: the static unicode catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmojiReply {
    /// `0` on success.
    pub code: i32,
    /// The catalog.
    #[serde(default)]
    pub emojis: Vec<Emoji>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_reads_with_and_without_emojis() {
        let full: EmojiReply =
            serde_json::from_str(r#"{"code":0,"emojis":[{"name":"thumbs_up","emoji":"👍"}]}"#)
                .unwrap();
        assert_eq!(full.emojis[0].emoji, "👍");
        let refused: EmojiReply = serde_json::from_str(r#"{"code":-6}"#).unwrap();
        assert!(refused.emojis.is_empty());
    }
}
