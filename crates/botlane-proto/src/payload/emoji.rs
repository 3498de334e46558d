//! Opcode 240 `fetch_emojis`: the static unicode catalog.

use serde::{Deserialize, Serialize};

/// One emoji of the static catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Emoji {
    /// Its short name, such as `thumbs_up`.
    pub name: String,
    /// The emoji itself.
    pub emoji: String,
}

impl Emoji {
    /// An emoji of the catalog.
    pub fn new(name: impl Into<String>, emoji: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            emoji: emoji.into(),
        }
    }
}

/// Opcode 240 reply: the static unicode catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmojiReply {
    /// `0` on success.
    pub code: i32,
    /// The catalog.
    #[serde(default)]
    pub emojis: Vec<Emoji>,
}

impl EmojiReply {
    /// A reply with `code` and no emoji.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            emojis: Vec::new(),
        }
    }

    /// With the catalog.
    #[must_use]
    pub fn with_emojis(mut self, emojis: Vec<Emoji>) -> Self {
        self.emojis = emojis;
        self
    }
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
