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
//! Key material is zeroized on drop and never shown by `Debug`.
//!
//! One file per primitive: `seal.rs` ([`ChannelKey`], AES-256-GCM),
//! `public_key.rs` ([`PublicKey`]), `wrap.rs` ([`IdentityKeyPair`],
//! [`WrappedKey`], [`wrap_channel_key`]: X25519 + HKDF-SHA256).

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use zeroize::Zeroizing;

mod public_key;
mod seal;
mod wrap;

pub use public_key::PublicKey;
pub use seal::ChannelKey;
pub use wrap::{wrap_channel_key, IdentityKeyPair, WrappedKey};

/// Length in bytes of a channel key (AES-256).
pub const CHANNEL_KEY_LEN: usize = 32;
/// Length in bytes of the random AES-GCM nonce that starts every sealed payload.
pub const NONCE_LEN: usize = 12;
/// Length in bytes of the AES-GCM authentication tag that ends every sealed payload.
pub const TAG_LEN: usize = 16;
/// Length in bytes of an X25519 public or secret key.
pub const X25519_KEY_LEN: usize = 32;
/// HKDF `info` string of the key-wrapping scheme. The version in it changes
/// whenever the wrapping scheme does, so old and new wraps never decrypt
/// under each other's rules.
pub const WRAP_INFO: &[u8] = b"botlane channel key v1";

/// What went wrong while sealing, opening, wrapping or unwrapping.
///
/// No variant ever carries plaintext or key bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// A field is not canonical standard base64 (RFC 4648 §4, padded).
    #[error("{what} is not valid standard base64 (padded, no whitespace)")]
    Base64 {
        /// The field at fault.
        what: &'static str,
    },
    /// A field decoded to the wrong number of bytes.
    #[error("{what} must be {expected} bytes, got {actual}")]
    Length {
        /// The field at fault.
        what: &'static str,
        /// What the format asks for (a minimum for sealed payloads).
        expected: &'static str,
        /// The decoded length.
        actual: usize,
    },
    /// Authentication failed: wrong key, wrong associated data (channel), or
    /// the payload was altered.
    #[error("decryption failed: wrong key, wrong channel, or tampered data")]
    Decrypt,
    /// An X25519 agreement gave the all-zero secret, which happens only with a
    /// low-order (malicious or broken) public key.
    #[error("x25519 key agreement is non-contributory: the {which} public key has low order")]
    LowOrderKey {
        /// Which public key was at fault (`"recipient"` or `"ephemeral"`).
        which: &'static str,
    },
    /// The plaintext is longer than AES-GCM can encrypt under one nonce.
    #[error("plaintext of {len} bytes is too long for aes-256-gcm")]
    TooLong {
        /// The plaintext length.
        len: usize,
    },
    /// The operating system's random number generator failed.
    #[error("the operating system random number generator failed: {reason}")]
    Random {
        /// The reason given by the OS.
        reason: String,
    },
}

pub(crate) fn random_bytes<const N: usize>() -> Result<Zeroizing<[u8; N]>, CryptoError> {
    let mut bytes = Zeroizing::new([0u8; N]);
    OsRng
        .try_fill_bytes(bytes.as_mut())
        .map_err(|e| CryptoError::Random {
            reason: e.to_string(),
        })?;
    Ok(bytes)
}

pub(crate) fn decode_b64(
    what: &'static str,
    text: &str,
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    BASE64
        .decode(text)
        .map(Zeroizing::new)
        .map_err(|_| CryptoError::Base64 { what })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod fixtures {
    //! The vectors and helpers the crypto tests share.

    use super::*;

    pub(crate) const VECTOR_AAD: &[u8] = b"channel-42";
    pub(crate) const SEAL_PLAINTEXT: &[u8] = b"botlane test vector: hello, channel!";
    // Produced by the WebCrypto reference code in docs/crypto.md (Node 20).
    pub(crate) const SEAL_WIRE: &str =
        "EBESExQVFhcYGRobH5HseiinX5O+EHtpLw8MMKM/PDQ7qjLdi5bORz08NbU+jDsiCG6ebCopcfCxenpyTTJYXw==";
    pub(crate) const WRAP_EPHEMERAL: &str = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";
    pub(crate) const WRAP_CIPHERTEXT: &str =
        "wMHCw8TFxsfIycrLAI49MdZ6QBYsOpqNpLB7wpNmpL5OIFhXgYo58IteRH1D1gopsSBe4QjWZssb0Ngq";

    pub(crate) fn counting<const N: usize>(start: u8) -> [u8; N] {
        std::array::from_fn(|i| start + u8::try_from(i).unwrap())
    }

    pub(crate) fn hex32(text: &str) -> [u8; 32] {
        std::array::from_fn(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
    }

    // RFC 7748 §6.1: Alice plays the ephemeral sender, Bob the recipient bot.
    pub(crate) fn alice_secret() -> [u8; 32] {
        hex32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    }
    pub(crate) fn bob() -> IdentityKeyPair {
        IdentityKeyPair::from_secret_bytes(hex32(
            "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
        ))
    }

    pub(crate) fn vector_wrapped() -> WrappedKey {
        WrappedKey {
            ephemeral: WRAP_EPHEMERAL.to_owned(),
            ciphertext: WRAP_CIPHERTEXT.to_owned(),
        }
    }

    /// Decodes, lets `edit` change the raw bytes, re-encodes.
    pub(crate) fn edited(wire: &str, edit: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut bytes = BASE64.decode(wire).unwrap();
        edit(&mut bytes);
        BASE64.encode(bytes)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::fixtures::*;
    use super::seal::*;
    use super::wrap::*;
    use super::*;
    use x25519_dalek::StaticSecret;

    /// The documentation, so that its test vectors cannot drift from the code.
    const DOC: &str = include_str!("../../../../docs/crypto.md");

    #[test]
    fn documentation_carries_the_checked_vectors() {
        for text in [SEAL_WIRE, WRAP_EPHEMERAL, WRAP_CIPHERTEXT] {
            assert!(DOC.contains(text), "docs/crypto.md lacks {text}");
        }
        let key_b64 = BASE64.encode(counting::<32>(0x00));
        let nonce_b64 = BASE64.encode(counting::<12>(0x10));
        assert!(DOC.contains(&key_b64) && DOC.contains(&nonce_b64));
        assert!(DOC.contains(std::str::from_utf8(WRAP_INFO).unwrap()));
    }

    /// The language-neutral vectors (WebCrypto-made): sealing and wrapping
    /// with their fixed nonces and ephemeral secrets gives every byte of
    /// them, the key-encryption key included. Opening and every refusal
    /// are checked through the public API by botlane's `tests/pure/vectors.rs`.
    #[test]
    fn seal_and_wrap_reproduce_docs_vectors() {
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../../../docs/vectors/crypto.json")).unwrap();
        let bytes = |v: &serde_json::Value| -> Vec<u8> {
            let text = v.as_str().unwrap();
            (0..text.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
                .collect()
        };
        let array = |v: &serde_json::Value| -> [u8; 32] { bytes(v).try_into().unwrap() };
        let seals = file["seal"].as_array().unwrap();
        assert!(seals.len() >= 5, "crypto.json lost its seal cases");
        for case in seals {
            let key = ChannelKey::from_bytes(array(&case["key"]));
            let nonce: [u8; NONCE_LEN] = bytes(&case["nonce"]).try_into().unwrap();
            let aad = case["aad"].as_str().unwrap().as_bytes();
            let wire = key
                .seal_with_nonce(&nonce, &bytes(&case["plaintext"]), aad)
                .unwrap();
            assert_eq!(wire, case["wire"].as_str().unwrap(), "{}", case["name"]);
        }
        let wraps = file["wrap"].as_array().unwrap();
        assert!(wraps.len() >= 2, "crypto.json lost its wrap cases");
        for case in wraps {
            let recipient = IdentityKeyPair::from_secret_bytes(array(&case["recipient_secret"]));
            assert_eq!(
                recipient.public_key().as_bytes(),
                &array(&case["recipient_public"])
            );
            let ephemeral = StaticSecret::from(array(&case["ephemeral_secret"]));
            let ephemeral_public = PublicKey(x25519_dalek::PublicKey::from(&ephemeral));
            assert_eq!(
                ephemeral_public.as_bytes(),
                &array(&case["ephemeral_public"])
            );
            let channel_id = case["channel_id"].as_str().unwrap();
            let kek = wrapping_key(
                &ephemeral,
                &recipient.public_key(),
                &recipient.public_key(),
                &ephemeral_public,
                "recipient",
            )
            .unwrap();
            assert_eq!(*kek, array(&case["kek"]), "{}", case["name"]);
            let nonce: [u8; NONCE_LEN] = bytes(&case["nonce"]).try_into().unwrap();
            let wrapped = wrap_with(
                &ChannelKey::from_bytes(array(&case["channel_key"])),
                &recipient.public_key(),
                channel_id,
                ephemeral,
                &nonce,
            )
            .unwrap();
            let expected: WrappedKey = serde_json::from_value(case["wrapped"].clone()).unwrap();
            assert_eq!(wrapped, expected, "{}", case["name"]);
        }
    }
}
