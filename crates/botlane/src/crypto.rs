//! End-to-end encryption primitives: per-channel message keys and the bot's
//! X25519 identity, through which channel keys are delivered.
//!
//! The byte-exact formats, written so that a browser can reproduce them with
//! WebCrypto, are in `docs/crypto.md`. In short:
//!
//! * a sealed payload is `base64(nonce(12) || ciphertext || tag(16))`,
//!   AES-256-GCM under a [`ChannelKey`], with the channel id as associated
//!   data;
//! * a [`WrappedKey`] carries a channel key to one [`PublicKey`]: ephemeral
//!   X25519, HKDF-SHA256, then AES-256-GCM of the 32 key bytes.
//!
//! Key material is zeroized on drop and never shown by `Debug`. The types
//! are defined in `botlane-proto` as pure functions over bytes (no I/O),
//! shared with the reference service, and are the same types under both
//! names.
//!
//! ```
//! use botlane::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair};
//!
//! let bot = IdentityKeyPair::generate()?;
//! let key = ChannelKey::generate()?;
//! let wrapped = wrap_channel_key(&key, &bot.public_key(), "channel-1")?;
//! let received = bot.unwrap_channel_key(&wrapped, "channel-1")?;
//! assert_eq!(received.open(&key.seal(b"hi", b"channel-1")?, b"channel-1")?, b"hi");
//! # Ok::<(), botlane::crypto::CryptoError>(())
//! ```

pub use botlane_proto::crypto::*;
