//! Key wrapping: a [`ChannelKey`] encrypted to one recipient's
//! [`PublicKey`] with an ephemeral X25519 key, HKDF-SHA256 and AES-256-GCM
//! ([`wrap_channel_key`], [`IdentityKeyPair::unwrap_channel_key`]).

use std::fmt;

use aes_gcm::aead::KeyInit;
use aes_gcm::Aes256Gcm;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hkdf::Hkdf;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use x25519_dalek::StaticSecret;
use zeroize::{Zeroize, Zeroizing};

use super::seal::{open_in_place, seal_raw};
use super::{
    decode_b64, random_bytes, ChannelKey, CryptoError, PublicKey, CHANNEL_KEY_LEN, NONCE_LEN,
    TAG_LEN, WRAP_INFO, X25519_KEY_LEN,
};

/// The bot's long-term X25519 key pair. Channel members wrap channel keys
/// to its public half; the secret half never leaves the keystore.
///
/// The secret is zeroized on drop; `Debug` shows only the public key.
///
/// ```
/// use botlane_proto::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair};
///
/// let bot = IdentityKeyPair::generate()?;
/// let key = ChannelKey::generate()?;
/// let wrapped = wrap_channel_key(&key, &bot.public_key(), "channel-1")?;
/// let received = bot.unwrap_channel_key(&wrapped, "channel-1")?;
/// let wire = key.seal(b"hi", b"channel-1")?;
/// assert_eq!(received.open(&wire, b"channel-1")?, b"hi");
/// assert!(format!("{bot:?}").contains("[REDACTED]"));
/// # Ok::<(), botlane_proto::crypto::CryptoError>(())
/// ```
pub struct IdentityKeyPair {
    secret: StaticSecret,
    public: PublicKey,
}

impl IdentityKeyPair {
    /// Creates a fresh key pair from the operating system's generator.
    ///
    /// ```
    /// use botlane_proto::crypto::IdentityKeyPair;
    ///
    /// let a = IdentityKeyPair::generate()?;
    /// let b = IdentityKeyPair::generate()?;
    /// assert_ne!(a.public_key(), b.public_key());
    /// # Ok::<(), botlane_proto::crypto::CryptoError>(())
    /// ```
    pub fn generate() -> Result<Self, CryptoError> {
        random_bytes::<X25519_KEY_LEN>().map(|bytes| Self::from_secret_bytes(*bytes))
    }

    /// Rebuilds a key pair from its 32 secret bytes (X25519 clamping is
    /// applied at use, as RFC 7748 says, so any 32 bytes are accepted).
    ///
    /// ```
    /// use botlane_proto::crypto::IdentityKeyPair;
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

    /// The secret bytes, for botlane's keystore only.
    ///
    /// Hidden and outside the stability promise: public only because the
    /// keystore lives in another crate.
    #[doc(hidden)]
    pub fn expose_secret_bytes(&self) -> &[u8; X25519_KEY_LEN] {
        self.secret.as_bytes()
    }

    /// The public half, to publish so that channel members can wrap keys to it.
    ///
    /// ```
    /// use botlane_proto::crypto::IdentityKeyPair;
    ///
    /// let bot = IdentityKeyPair::generate()?;
    /// assert_eq!(bot.public_key().to_base64().len(), 44);
    /// # Ok::<(), botlane_proto::crypto::CryptoError>(())
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
    /// use botlane_proto::crypto::{wrap_channel_key, ChannelKey, CryptoError, IdentityKeyPair};
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
        // Wiped on drop: the plaintext, key material, is opened into it.
        let mut sealed = decode_b64(WHAT, &wrapped.ciphertext)?;
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
        open_in_place(&kek_cipher(&kek), WHAT, &mut sealed, channel_id.as_bytes())?;
        let bytes: [u8; CHANNEL_KEY_LEN] = sealed
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
/// use botlane_proto::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair, WrappedKey};
///
/// let bot = IdentityKeyPair::generate()?;
/// let wrapped = wrap_channel_key(&ChannelKey::generate()?, &bot.public_key(), "c")?;
/// let json = serde_json::to_string(&wrapped).unwrap();
/// let parsed: WrappedKey = serde_json::from_str(&json).unwrap();
/// assert_eq!(parsed, wrapped);
/// assert!(bot.unwrap_channel_key(&parsed, "c").is_ok());
/// # Ok::<(), botlane_proto::crypto::CryptoError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WrappedKey {
    /// Standard padded base64 of the ephemeral X25519 public key.
    pub ephemeral: String,
    /// Standard padded base64 of `nonce || encrypted channel key || tag`.
    pub ciphertext: String,
}

impl WrappedKey {
    /// A wrapped key of these two texts, as read from elsewhere:
    /// [`wrap_channel_key`] makes one from a key.
    pub fn new(ephemeral: impl Into<String>, ciphertext: impl Into<String>) -> Self {
        Self {
            ephemeral: ephemeral.into(),
            ciphertext: ciphertext.into(),
        }
    }
}

/// Derives the AES-256-GCM key-encryption key of a wrap.
///
/// Both sides compute the same X25519 secret; the HKDF salt binds it to the
/// exact pair of public keys (ephemeral first, recipient second).
pub(crate) fn wrapping_key(
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

/// The cipher of a key-encryption key: made per wrap, as a wrap is rare.
fn kek_cipher(kek: &[u8; CHANNEL_KEY_LEN]) -> Aes256Gcm {
    Aes256Gcm::new(kek.into())
}

pub(crate) fn wrap_with(
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
    let sealed = seal_raw(
        &kek_cipher(&kek),
        nonce,
        key.expose_bytes(),
        channel_id.as_bytes(),
    )?;
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
/// use botlane_proto::crypto::{wrap_channel_key, ChannelKey, IdentityKeyPair, PublicKey};
///
/// let bot = IdentityKeyPair::generate()?;
/// let key = ChannelKey::generate()?;
/// let a = wrap_channel_key(&key, &bot.public_key(), "c")?;
/// let b = wrap_channel_key(&key, &bot.public_key(), "c")?;
/// assert_ne!(a, b); // fresh ephemeral key and nonce each time
/// assert!(wrap_channel_key(&key, &PublicKey::from_bytes([0; 32]), "c").is_err());
/// # Ok::<(), botlane_proto::crypto::CryptoError>(())
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
    use super::super::fixtures::*;
    use super::*;
    use proptest::prelude::*;

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
