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

use std::fmt;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hkdf::Hkdf;
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use x25519_dalek::StaticSecret;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

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

fn random_bytes<const N: usize>() -> Result<Zeroizing<[u8; N]>, CryptoError> {
    let mut bytes = Zeroizing::new([0u8; N]);
    OsRng
        .try_fill_bytes(bytes.as_mut())
        .map_err(|e| CryptoError::Random {
            reason: e.to_string(),
        })?;
    Ok(bytes)
}

fn decode_b64(what: &'static str, text: &str) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    BASE64
        .decode(text)
        .map(Zeroizing::new)
        .map_err(|_| CryptoError::Base64 { what })
}

/// AES-256-GCM under `key`; returns `nonce || ciphertext || tag`.
fn seal_raw(
    key: &[u8; CHANNEL_KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    plaintext: &[u8],
    aad: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let cipher = Aes256Gcm::new(key.into());
    let sealed = cipher
        .encrypt(
            Nonce::from_slice(nonce),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .map_err(|_| CryptoError::TooLong {
            len: plaintext.len(),
        })?;
    let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
    out.extend_from_slice(nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Inverse of [`seal_raw`]. The plaintext comes back in `Zeroizing` because
/// for a wrapped key it is itself key material.
fn open_raw(
    key: &[u8; CHANNEL_KEY_LEN],
    what: &'static str,
    sealed: &[u8],
    aad: &[u8],
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    if sealed.len() < NONCE_LEN + TAG_LEN {
        return Err(CryptoError::Length {
            what,
            expected: "at least 28",
            actual: sealed.len(),
        });
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    Aes256Gcm::new(key.into())
        .decrypt(Nonce::from_slice(nonce), Payload { msg: body, aad })
        .map(Zeroizing::new)
        .map_err(|_| CryptoError::Decrypt)
}

/// A 256-bit AES-GCM key shared by the members of one channel. It seals
/// message content and the command sidecar.
///
/// The key lives on the heap so that moving a `ChannelKey` around (into a
/// map, out of a function) leaves no copies behind; it is zeroized on drop.
/// `Debug` prints `ChannelKey([REDACTED])`.
///
/// ```
/// use botlane::crypto::ChannelKey;
///
/// let key = ChannelKey::generate()?;
/// let wire = key.seal(b"hello", b"channel-1")?;
/// assert_eq!(key.open(&wire, b"channel-1")?, b"hello");
/// assert_eq!(format!("{key:?}"), "ChannelKey([REDACTED])");
/// # Ok::<(), botlane::crypto::CryptoError>(())
/// ```
#[derive(Clone, ZeroizeOnDrop)]
pub struct ChannelKey(Box<[u8; CHANNEL_KEY_LEN]>);

impl ChannelKey {
    /// Creates a fresh random key from the operating system's generator.
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    ///
    /// let a = ChannelKey::generate()?;
    /// let b = ChannelKey::generate()?;
    /// let wire = a.seal(b"x", b"c")?;
    /// assert!(b.open(&wire, b"c").is_err());
    /// # Ok::<(), botlane::crypto::CryptoError>(())
    /// ```
    pub fn generate() -> Result<Self, CryptoError> {
        random_bytes::<CHANNEL_KEY_LEN>().map(|bytes| Self::from_bytes(*bytes))
    }

    /// Wraps raw key bytes (for instance a key exported by a browser with
    /// `crypto.subtle.exportKey("raw", key)`).
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    ///
    /// let key = ChannelKey::from_bytes([7; 32]);
    /// let wire = key.seal(b"hi", b"c")?;
    /// assert_eq!(ChannelKey::from_bytes([7; 32]).open(&wire, b"c")?, b"hi");
    /// # Ok::<(), botlane::crypto::CryptoError>(())
    /// ```
    pub fn from_bytes(mut bytes: [u8; CHANNEL_KEY_LEN]) -> Self {
        let key = Self(Box::new(bytes));
        bytes.zeroize();
        key
    }

    /// The raw key bytes, for the keystore and key wrapping only.
    pub(crate) fn expose_bytes(&self) -> &[u8; CHANNEL_KEY_LEN] {
        &self.0
    }

    /// Encrypts `plaintext` with a fresh random nonce and returns the wire
    /// form `base64(nonce || ciphertext || tag)`.
    ///
    /// `aad` is authenticated but not encrypted; botlane passes the channel
    /// id's UTF-8 bytes so that a payload cannot be replayed into another
    /// channel that happens to share the key.
    ///
    /// ```
    /// use botlane::crypto::ChannelKey;
    ///
    /// let key = ChannelKey::generate()?;
    /// let wire = key.seal(b"secret", b"channel-1")?;
    /// // 12-byte nonce + 6 bytes + 16-byte tag = 34 bytes = 48 base64 chars.
    /// assert_eq!(wire.len(), 48);
    /// assert!(key.open(&wire, b"channel-2").is_err());
    /// # Ok::<(), botlane::crypto::CryptoError>(())
    /// ```
    pub fn seal(&self, plaintext: &[u8], aad: &[u8]) -> Result<String, CryptoError> {
        let nonce = random_bytes::<NONCE_LEN>()?;
        self.seal_with_nonce(&nonce, plaintext, aad)
    }

    fn seal_with_nonce(
        &self,
        nonce: &[u8; NONCE_LEN],
        plaintext: &[u8],
        aad: &[u8],
    ) -> Result<String, CryptoError> {
        seal_raw(&self.0, nonce, plaintext, aad).map(|sealed| BASE64.encode(sealed))
    }

    /// Decrypts a wire form made by [`ChannelKey::seal`] (or by WebCrypto as
    /// described in `docs/crypto.md`) with the same `aad`.
    ///
    /// Any malformed input gives an error, never a panic; the error never
    /// contains plaintext or key bytes.
    ///
    /// ```
    /// use botlane::crypto::{ChannelKey, CryptoError};
    ///
    /// let key = ChannelKey::generate()?;
    /// let wire = key.seal(b"secret", b"c")?;
    /// assert_eq!(key.open(&wire, b"c")?, b"secret");
    /// assert_eq!(key.open("not base64!", b"c"), Err(CryptoError::Base64 { what: "sealed payload" }));
    /// assert_eq!(key.open(&wire, b"other"), Err(CryptoError::Decrypt));
    /// # Ok::<(), CryptoError>(())
    /// ```
    pub fn open(&self, wire: &str, aad: &[u8]) -> Result<Vec<u8>, CryptoError> {
        const WHAT: &str = "sealed payload";
        let sealed = decode_b64(WHAT, wire)?;
        open_raw(&self.0, WHAT, &sealed, aad).map(|mut plain| std::mem::take(&mut *plain))
    }
}

impl fmt::Debug for ChannelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChannelKey([REDACTED])")
    }
}

/// An X25519 public key; its text form is standard padded base64 of the 32
/// bytes (the same as `exportKey("raw", …)` in WebCrypto, base64-encoded).
///
/// ```
/// use botlane::crypto::PublicKey;
///
/// let key = PublicKey::from_bytes([9; 32]);
/// let text = key.to_base64();
/// assert_eq!(PublicKey::from_base64(&text)?, key);
/// assert_eq!(serde_json::to_string(&key).unwrap(), format!("\"{text}\""));
/// # Ok::<(), botlane::crypto::CryptoError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey(x25519_dalek::PublicKey);

impl PublicKey {
    /// Wraps raw public key bytes.
    ///
    /// ```
    /// use botlane::crypto::PublicKey;
    ///
    /// assert_eq!(PublicKey::from_bytes([1; 32]).as_bytes(), &[1; 32]);
    /// ```
    pub fn from_bytes(bytes: [u8; X25519_KEY_LEN]) -> Self {
        Self(x25519_dalek::PublicKey::from(bytes))
    }

    /// The raw 32 bytes.
    ///
    /// ```
    /// use botlane::crypto::PublicKey;
    ///
    /// assert_eq!(PublicKey::from_bytes([2; 32]).as_bytes().len(), 32);
    /// ```
    pub fn as_bytes(&self) -> &[u8; X25519_KEY_LEN] {
        self.0.as_bytes()
    }

    /// Standard padded base64 of the 32 bytes.
    ///
    /// ```
    /// use botlane::crypto::PublicKey;
    ///
    /// assert_eq!(PublicKey::from_bytes([0; 32]).to_base64(), "A".repeat(43) + "=");
    /// ```
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.as_bytes())
    }

    /// Parses standard padded base64 of exactly 32 bytes.
    ///
    /// ```
    /// use botlane::crypto::{CryptoError, PublicKey};
    ///
    /// assert!(PublicKey::from_base64(&"A".repeat(43)).is_err()); // padding missing
    /// assert!(matches!(PublicKey::from_base64("AAAA"), Err(CryptoError::Length { actual: 3, .. })));
    /// ```
    pub fn from_base64(text: &str) -> Result<Self, CryptoError> {
        Self::parse("public key", text)
    }

    fn parse(what: &'static str, text: &str) -> Result<Self, CryptoError> {
        let bytes = decode_b64(what, text)?;
        let array: [u8; X25519_KEY_LEN] =
            bytes
                .as_slice()
                .try_into()
                .map_err(|_| CryptoError::Length {
                    what,
                    expected: "32",
                    actual: bytes.len(),
                })?;
        Ok(Self::from_bytes(array))
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_base64())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base64())
    }
}

impl Serialize for PublicKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for PublicKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// The bot's long-term X25519 key pair. Channel members wrap channel keys
/// to its public half; the secret half never leaves the keystore.
///
/// The secret is zeroized on drop; `Debug` shows only the public key.
///
/// ```
/// use botlane::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair};
///
/// let bot = IdentityKeyPair::generate()?;
/// let key = ChannelKey::generate()?;
/// let wrapped = wrap_channel_key(&key, &bot.public_key(), "channel-1")?;
/// let received = bot.unwrap_channel_key(&wrapped, "channel-1")?;
/// let wire = key.seal(b"hi", b"channel-1")?;
/// assert_eq!(received.open(&wire, b"channel-1")?, b"hi");
/// assert!(format!("{bot:?}").contains("[REDACTED]"));
/// # Ok::<(), botlane::crypto::CryptoError>(())
/// ```
pub struct IdentityKeyPair {
    secret: StaticSecret,
    public: PublicKey,
}

impl IdentityKeyPair {
    /// Creates a fresh key pair from the operating system's generator.
    ///
    /// ```
    /// use botlane::crypto::IdentityKeyPair;
    ///
    /// let a = IdentityKeyPair::generate()?;
    /// let b = IdentityKeyPair::generate()?;
    /// assert_ne!(a.public_key(), b.public_key());
    /// # Ok::<(), botlane::crypto::CryptoError>(())
    /// ```
    pub fn generate() -> Result<Self, CryptoError> {
        random_bytes::<X25519_KEY_LEN>().map(|bytes| Self::from_secret_bytes(*bytes))
    }

    /// Rebuilds a key pair from its 32 secret bytes (X25519 clamping is
    /// applied at use, as RFC 7748 says, so any 32 bytes are accepted).
    ///
    /// ```
    /// use botlane::crypto::IdentityKeyPair;
    ///
    /// let a = IdentityKeyPair::from_secret_bytes([5; 32]);
    /// let b = IdentityKeyPair::from_secret_bytes([5; 32]);
    /// assert_eq!(a.public_key(), b.public_key());
    /// ```
    pub fn from_secret_bytes(mut bytes: [u8; X25519_KEY_LEN]) -> Self {
        let secret = StaticSecret::from(bytes);
        bytes.zeroize();
        let public = PublicKey(x25519_dalek::PublicKey::from(&secret));
        Self { secret, public }
    }

    /// The secret bytes, for the keystore only.
    pub(crate) fn expose_secret_bytes(&self) -> &[u8; X25519_KEY_LEN] {
        self.secret.as_bytes()
    }

    /// The public half, to publish so that channel members can wrap keys to it.
    ///
    /// ```
    /// use botlane::crypto::IdentityKeyPair;
    ///
    /// let bot = IdentityKeyPair::generate()?;
    /// assert_eq!(bot.public_key().to_base64().len(), 44);
    /// # Ok::<(), botlane::crypto::CryptoError>(())
    /// ```
    pub fn public_key(&self) -> PublicKey {
        self.public
    }

    /// Recovers a channel key wrapped to this identity for `channel_id`.
    ///
    /// Fails (never panics) on malformed fields, a low-order ephemeral key, a
    /// wrap meant for another recipient or another channel, or tampering.
    ///
    /// ```
    /// use botlane::crypto::{wrap_channel_key, ChannelKey, CryptoError, IdentityKeyPair};
    ///
    /// let bot = IdentityKeyPair::generate()?;
    /// let wrapped = wrap_channel_key(&ChannelKey::generate()?, &bot.public_key(), "c1")?;
    /// assert!(bot.unwrap_channel_key(&wrapped, "c1").is_ok());
    /// assert_eq!(bot.unwrap_channel_key(&wrapped, "c2").unwrap_err(), CryptoError::Decrypt);
    /// # Ok::<(), CryptoError>(())
    /// ```
    pub fn unwrap_channel_key(
        &self,
        wrapped: &WrappedKey,
        channel_id: &str,
    ) -> Result<ChannelKey, CryptoError> {
        const WHAT: &str = "wrapped key ciphertext";
        let ephemeral = PublicKey::parse("wrapped key ephemeral public key", &wrapped.ephemeral)?;
        let sealed = decode_b64(WHAT, &wrapped.ciphertext)?;
        let expected = NONCE_LEN + CHANNEL_KEY_LEN + TAG_LEN;
        if sealed.len() != expected {
            return Err(CryptoError::Length {
                what: WHAT,
                expected: "60",
                actual: sealed.len(),
            });
        }
        let kek = wrapping_key(
            &self.secret,
            &ephemeral,
            &self.public,
            &ephemeral,
            "ephemeral",
        )?;
        let plain = open_raw(&kek, WHAT, &sealed, channel_id.as_bytes())?;
        let bytes: [u8; CHANNEL_KEY_LEN] = plain
            .as_slice()
            .try_into()
            .expect("a 60-byte payload opens to exactly 32 plaintext bytes");
        Ok(ChannelKey::from_bytes(bytes))
    }
}

impl fmt::Debug for IdentityKeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityKeyPair")
            .field("public", &self.public)
            .field("secret", &format_args!("[REDACTED]"))
            .finish()
    }
}

/// A channel key encrypted to one recipient's [`PublicKey`], as it travels
/// on the wire (JSON `{"ephemeral": b64, "ciphertext": b64}`).
///
/// `ephemeral` is the sender's one-time X25519 public key (32 bytes);
/// `ciphertext` is `nonce(12) || encrypted key(32) || tag(16)`. See
/// `docs/crypto.md` for the derivation.
///
/// ```
/// use botlane::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair, WrappedKey};
///
/// let bot = IdentityKeyPair::generate()?;
/// let wrapped = wrap_channel_key(&ChannelKey::generate()?, &bot.public_key(), "c")?;
/// let json = serde_json::to_string(&wrapped).unwrap();
/// let parsed: WrappedKey = serde_json::from_str(&json).unwrap();
/// assert_eq!(parsed, wrapped);
/// assert!(bot.unwrap_channel_key(&parsed, "c").is_ok());
/// # Ok::<(), botlane::crypto::CryptoError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrappedKey {
    /// Standard padded base64 of the ephemeral X25519 public key.
    pub ephemeral: String,
    /// Standard padded base64 of `nonce || encrypted channel key || tag`.
    pub ciphertext: String,
}

/// Derives the AES-256-GCM key-encryption key of a wrap.
///
/// Both sides compute the same X25519 secret; the HKDF salt binds it to the
/// exact pair of public keys (ephemeral first, recipient second).
fn wrapping_key(
    own_secret: &StaticSecret,
    their_public: &PublicKey,
    recipient: &PublicKey,
    ephemeral: &PublicKey,
    low_order_side: &'static str,
) -> Result<Zeroizing<[u8; CHANNEL_KEY_LEN]>, CryptoError> {
    let shared = own_secret.diffie_hellman(&their_public.0);
    if !shared.was_contributory() {
        return Err(CryptoError::LowOrderKey {
            which: low_order_side,
        });
    }
    let mut salt = [0u8; 2 * X25519_KEY_LEN];
    salt[..X25519_KEY_LEN].copy_from_slice(ephemeral.as_bytes());
    salt[X25519_KEY_LEN..].copy_from_slice(recipient.as_bytes());
    let mut kek = Zeroizing::new([0u8; CHANNEL_KEY_LEN]);
    Hkdf::<Sha256>::new(Some(&salt), shared.as_bytes())
        .expand(WRAP_INFO, kek.as_mut())
        .expect("32 bytes is within hkdf-sha256's 8160-byte output limit");
    Ok(kek)
}

fn wrap_with(
    key: &ChannelKey,
    recipient: &PublicKey,
    channel_id: &str,
    ephemeral_secret: StaticSecret,
    nonce: &[u8; NONCE_LEN],
) -> Result<WrappedKey, CryptoError> {
    let ephemeral = PublicKey(x25519_dalek::PublicKey::from(&ephemeral_secret));
    let kek = wrapping_key(
        &ephemeral_secret,
        recipient,
        recipient,
        &ephemeral,
        "recipient",
    )?;
    let sealed = seal_raw(&kek, nonce, key.expose_bytes(), channel_id.as_bytes())?;
    Ok(WrappedKey {
        ephemeral: ephemeral.to_base64(),
        ciphertext: BASE64.encode(sealed),
    })
}

/// Encrypts `key` to `recipient` for `channel_id`, with a fresh ephemeral
/// X25519 key pair and a fresh nonce.
///
/// Fails with [`CryptoError::LowOrderKey`] when `recipient` is a low-order
/// point (no real key is).
///
/// ```
/// use botlane::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair, PublicKey};
///
/// let bot = IdentityKeyPair::generate()?;
/// let key = ChannelKey::generate()?;
/// let a = wrap_channel_key(&key, &bot.public_key(), "c")?;
/// let b = wrap_channel_key(&key, &bot.public_key(), "c")?;
/// assert_ne!(a, b); // fresh ephemeral key and nonce each time
/// assert!(wrap_channel_key(&key, &PublicKey::from_bytes([0; 32]), "c").is_err());
/// # Ok::<(), botlane::crypto::CryptoError>(())
/// ```
pub fn wrap_channel_key(
    key: &ChannelKey,
    recipient: &PublicKey,
    channel_id: &str,
) -> Result<WrappedKey, CryptoError> {
    let ephemeral_secret = StaticSecret::from(*random_bytes::<X25519_KEY_LEN>()?);
    let nonce = random_bytes::<NONCE_LEN>()?;
    wrap_with(key, recipient, channel_id, ephemeral_secret, &nonce)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The documentation, so that its test vectors cannot drift from the code.
    const DOC: &str = include_str!("../../../docs/crypto.md");

    const VECTOR_AAD: &[u8] = b"channel-42";
    const SEAL_PLAINTEXT: &[u8] = b"botlane test vector: hello, channel!";
    // Produced by the WebCrypto reference code in docs/crypto.md (Node 20).
    const SEAL_WIRE: &str =
        "EBESExQVFhcYGRobH5HseiinX5O+EHtpLw8MMKM/PDQ7qjLdi5bORz08NbU+jDsiCG6ebCopcfCxenpyTTJYXw==";
    const WRAP_EPHEMERAL: &str = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";
    const WRAP_CIPHERTEXT: &str =
        "wMHCw8TFxsfIycrLAI49MdZ6QBYsOpqNpLB7wpNmpL5OIFhXgYo58IteRH1D1gopsSBe4QjWZssb0Ngq";

    fn counting<const N: usize>(start: u8) -> [u8; N] {
        std::array::from_fn(|i| start + u8::try_from(i).unwrap())
    }

    fn hex32(text: &str) -> [u8; 32] {
        std::array::from_fn(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
    }

    // RFC 7748 §6.1: Alice plays the ephemeral sender, Bob the recipient bot.
    fn alice_secret() -> [u8; 32] {
        hex32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    }
    fn bob() -> IdentityKeyPair {
        IdentityKeyPair::from_secret_bytes(hex32(
            "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
        ))
    }

    fn vector_wrapped() -> WrappedKey {
        WrappedKey {
            ephemeral: WRAP_EPHEMERAL.to_owned(),
            ciphertext: WRAP_CIPHERTEXT.to_owned(),
        }
    }

    /// Decodes, lets `edit` change the raw bytes, re-encodes.
    fn edited(wire: &str, edit: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut bytes = BASE64.decode(wire).unwrap();
        edit(&mut bytes);
        BASE64.encode(bytes)
    }

    #[test]
    fn seal_vector_matches_webcrypto() {
        let key = ChannelKey::from_bytes(counting(0x00));
        let wire = key
            .seal_with_nonce(&counting(0x10), SEAL_PLAINTEXT, VECTOR_AAD)
            .unwrap();
        assert_eq!(wire, SEAL_WIRE);
        assert_eq!(key.open(SEAL_WIRE, VECTOR_AAD).unwrap(), SEAL_PLAINTEXT);
    }

    #[test]
    fn wrap_vector_matches_webcrypto() {
        let bob = bob();
        assert_eq!(
            bob.public_key().as_bytes(),
            &hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        );
        let wrapped = wrap_with(
            &ChannelKey::from_bytes(counting(0x20)),
            &bob.public_key(),
            "channel-42",
            StaticSecret::from(alice_secret()),
            &counting(0xc0),
        )
        .unwrap();
        assert_eq!(wrapped, vector_wrapped());
        let key = bob
            .unwrap_channel_key(&vector_wrapped(), "channel-42")
            .unwrap();
        assert_eq!(key.expose_bytes(), &counting::<32>(0x20));
    }

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
    /// are checked through the public API by `tests/vectors.rs`.
    #[test]
    fn seal_and_wrap_reproduce_docs_vectors() {
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/vectors/crypto.json")).unwrap();
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

    #[test]
    fn seal_uses_a_fresh_nonce_each_time() {
        let key = ChannelKey::generate().unwrap();
        let a = key.seal(b"same", b"c").unwrap();
        let b = key.seal(b"same", b"c").unwrap();
        assert_ne!(a, b);
        assert_eq!(key.open(&a, b"c").unwrap(), key.open(&b, b"c").unwrap());
    }

    #[test]
    fn every_flipped_bit_is_detected() {
        let key = ChannelKey::from_bytes(counting(0x00));
        let total_bits = BASE64.decode(SEAL_WIRE).unwrap().len() * 8;
        // Covers the nonce (first 96 bits), the ciphertext and the tag (last 128).
        for bit in 0..total_bits {
            let tampered = edited(SEAL_WIRE, |b| b[bit / 8] ^= 1 << (bit % 8));
            assert_eq!(
                key.open(&tampered, VECTOR_AAD),
                Err(CryptoError::Decrypt),
                "bit {bit}"
            );
        }
    }

    #[test]
    fn changed_aad_or_key_is_detected() {
        let key = ChannelKey::from_bytes(counting(0x00));
        assert_eq!(
            key.open(SEAL_WIRE, b"channel-43"),
            Err(CryptoError::Decrypt)
        );
        assert_eq!(key.open(SEAL_WIRE, b""), Err(CryptoError::Decrypt));
        let other = ChannelKey::from_bytes(counting(0x01));
        assert_eq!(other.open(SEAL_WIRE, VECTOR_AAD), Err(CryptoError::Decrypt));
    }

    #[test]
    fn truncation_and_extension_are_detected() {
        let key = ChannelKey::from_bytes(counting(0x00));
        let short = edited(SEAL_WIRE, |b| b.truncate(27));
        assert_eq!(
            key.open(&short, VECTOR_AAD),
            Err(CryptoError::Length {
                what: "sealed payload",
                expected: "at least 28",
                actual: 27
            })
        );
        let cut_tag = edited(SEAL_WIRE, |b| {
            b.pop();
        });
        assert_eq!(key.open(&cut_tag, VECTOR_AAD), Err(CryptoError::Decrypt));
        let longer = edited(SEAL_WIRE, |b| b.push(0));
        assert_eq!(key.open(&longer, VECTOR_AAD), Err(CryptoError::Decrypt));
    }

    #[test]
    fn empty_plaintext_seals_to_nonce_and_tag_only() {
        let key = ChannelKey::generate().unwrap();
        let wire = key.seal(b"", b"c").unwrap();
        assert_eq!(BASE64.decode(&wire).unwrap().len(), NONCE_LEN + TAG_LEN);
        assert_eq!(key.open(&wire, b"c").unwrap(), b"");
    }

    #[test]
    fn only_canonical_padded_base64_is_accepted() {
        let key = ChannelKey::from_bytes(counting(0x00));
        let unpadded = SEAL_WIRE.trim_end_matches('=');
        let spaced = format!(" {SEAL_WIRE}");
        let url_safe = SEAL_WIRE.replace('+', "-").replace('/', "_");
        for bad in [unpadded, spaced.as_str(), url_safe.as_str(), ""] {
            let err = key.open(bad, VECTOR_AAD).unwrap_err();
            // The empty string is valid base64 of zero bytes, so it is too short instead.
            assert!(
                matches!(
                    err,
                    CryptoError::Base64 { .. } | CryptoError::Length { actual: 0, .. }
                ),
                "{bad:?} gave {err:?}"
            );
        }
    }

    #[test]
    fn errors_never_show_plaintext_or_key() {
        let key = ChannelKey::from_bytes(counting(0x00));
        let key_b64 = BASE64.encode(key.expose_bytes());
        let wire = key.seal(b"top secret words", b"c").unwrap();
        for err in [
            key.open(&wire, b"d").unwrap_err(),
            key.open(&wire[1..], b"c").unwrap_err(),
        ] {
            let shown = format!("{err} {err:?}");
            assert!(
                !shown.contains("top secret") && !shown.contains(&key_b64),
                "{shown}"
            );
        }
    }

    #[test]
    fn debug_redacts_secrets() {
        let key = ChannelKey::from_bytes([0xab; 32]);
        assert_eq!(format!("{key:?}"), "ChannelKey([REDACTED])");
        let bob = bob();
        let shown = format!("{bob:?} {bob:#?}");
        assert!(shown.contains("[REDACTED]"));
        assert!(shown.contains(&bob.public_key().to_base64()));
        let secret = bob.expose_secret_bytes();
        assert!(!shown.contains(&BASE64.encode(secret)));
        assert!(!shown.contains(&format!("{secret:?}")));
    }

    #[test]
    fn wrap_round_trip_and_binding() {
        let bot = IdentityKeyPair::generate().unwrap();
        let stranger = IdentityKeyPair::generate().unwrap();
        let key = ChannelKey::generate().unwrap();
        let wrapped = wrap_channel_key(&key, &bot.public_key(), "c1").unwrap();
        let got = bot.unwrap_channel_key(&wrapped, "c1").unwrap();
        assert_eq!(got.expose_bytes(), key.expose_bytes());
        assert_eq!(
            stranger.unwrap_channel_key(&wrapped, "c1").unwrap_err(),
            CryptoError::Decrypt
        );
        assert_eq!(
            bot.unwrap_channel_key(&wrapped, "c2").unwrap_err(),
            CryptoError::Decrypt
        );
    }

    #[test]
    fn tampered_wraps_are_rejected() {
        let bob = bob();
        let mut swapped_ephemeral = vector_wrapped();
        swapped_ephemeral.ephemeral = IdentityKeyPair::generate()
            .unwrap()
            .public_key()
            .to_base64();
        assert_eq!(
            bob.unwrap_channel_key(&swapped_ephemeral, "channel-42")
                .unwrap_err(),
            CryptoError::Decrypt
        );
        for byte in 0..60 {
            let mut w = vector_wrapped();
            w.ciphertext = edited(&w.ciphertext, |b| b[byte] ^= 0x80);
            assert_eq!(
                bob.unwrap_channel_key(&w, "channel-42").unwrap_err(),
                CryptoError::Decrypt,
                "byte {byte}"
            );
        }
    }

    #[test]
    fn malformed_wraps_give_precise_errors() {
        let bob = bob();
        let mut low_order = vector_wrapped();
        low_order.ephemeral = BASE64.encode([0u8; 32]);
        assert_eq!(
            bob.unwrap_channel_key(&low_order, "channel-42")
                .unwrap_err(),
            CryptoError::LowOrderKey { which: "ephemeral" }
        );
        let mut short_ephemeral = vector_wrapped();
        short_ephemeral.ephemeral = BASE64.encode([9u8; 31]);
        assert!(matches!(
            bob.unwrap_channel_key(&short_ephemeral, "channel-42"),
            Err(CryptoError::Length { actual: 31, .. })
        ));
        let mut long_ciphertext = vector_wrapped();
        long_ciphertext.ciphertext = edited(WRAP_CIPHERTEXT, |b| b.push(0));
        assert!(matches!(
            bob.unwrap_channel_key(&long_ciphertext, "channel-42"),
            Err(CryptoError::Length { actual: 61, .. })
        ));
        let mut not_b64 = vector_wrapped();
        not_b64.ciphertext.push('!');
        assert!(matches!(
            bob.unwrap_channel_key(&not_b64, "channel-42"),
            Err(CryptoError::Base64 { .. })
        ));
        let key = ChannelKey::generate().unwrap();
        assert_eq!(
            wrap_channel_key(&key, &PublicKey::from_bytes([0; 32]), "c").unwrap_err(),
            CryptoError::LowOrderKey { which: "recipient" }
        );
    }

    #[test]
    fn wrapped_key_json_shape() {
        let json = serde_json::to_value(vector_wrapped()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"ephemeral": WRAP_EPHEMERAL, "ciphertext": WRAP_CIPHERTEXT})
        );
        assert!(serde_json::from_str::<WrappedKey>(r#"{"ephemeral":"AA=="}"#).is_err());
    }

    proptest! {
        #[test]
        fn seal_open_round_trip(plain in proptest::collection::vec(any::<u8>(), 0..512),
                                aad in proptest::collection::vec(any::<u8>(), 0..64),
                                raw in any::<[u8; 32]>()) {
            let key = ChannelKey::from_bytes(raw);
            let wire = key.seal(&plain, &aad).unwrap();
            prop_assert_eq!(key.open(&wire, &aad).unwrap(), plain);
        }

        #[test]
        fn open_never_panics_on_text(wire in ".{0,200}", aad in proptest::collection::vec(any::<u8>(), 0..16)) {
            prop_assert!(ChannelKey::from_bytes([3; 32]).open(&wire, &aad).is_err());
        }

        #[test]
        fn open_never_panics_on_well_encoded_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let wire = BASE64.encode(&bytes);
            prop_assert!(ChannelKey::from_bytes([3; 32]).open(&wire, b"c").is_err());
        }

        #[test]
        fn wrapped_key_parse_never_panics(json in ".{0,200}") {
            prop_assert!(serde_json::from_str::<WrappedKey>(&json).is_err());
        }

        #[test]
        fn unwrap_never_panics(ephemeral in ".{0,60}", ciphertext in ".{0,100}",
                               eph_bytes in any::<[u8; 32]>(),
                               ct_bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let bob = bob();
            for wrapped in [
                WrappedKey { ephemeral: ephemeral.clone(), ciphertext: ciphertext.clone() },
                WrappedKey { ephemeral: BASE64.encode(eph_bytes), ciphertext: BASE64.encode(&ct_bytes) },
                WrappedKey { ephemeral: WRAP_EPHEMERAL.to_owned(), ciphertext: BASE64.encode(&ct_bytes) },
            ] {
                prop_assert!(bob.unwrap_channel_key(&wrapped, "channel-42").is_err());
            }
        }
    }
}
