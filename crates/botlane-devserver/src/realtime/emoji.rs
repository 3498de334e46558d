//! The static unicode emoji catalog served by opcode 240.

use botlane_proto::payload::Emoji;

/// The catalog as `(short name, emoji)`; never per-server custom emoji.
pub const EMOJI_CATALOG: [(&str, &str); 20] = [
    ("thumbs_up", "👍"),
    ("thumbs_down", "👎"),
    ("heart", "❤️"),
    ("joy", "😂"),
    ("smile", "😄"),
    ("wink", "😉"),
    ("thinking", "🤔"),
    ("cry", "😢"),
    ("angry", "😠"),
    ("party", "🎉"),
    ("fire", "🔥"),
    ("rocket", "🚀"),
    ("eyes", "👀"),
    ("clap", "👏"),
    ("wave", "👋"),
    ("ok_hand", "👌"),
    ("check", "✅"),
    ("cross", "❌"),
    ("star", "⭐"),
    ("game_die", "🎲"),
];

pub(crate) fn catalog() -> Vec<Emoji> {
    EMOJI_CATALOG
        .iter()
        .map(|(name, emoji)| Emoji::new(*name, *emoji))
        .collect()
}
