//! [`PublicKey`]: an X25519 public key and its base64 text form.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{decode_b64, CryptoError, X25519_KEY_LEN};

/// An X25519 public key; its text form is standard padded base64 of the 32
/// bytes (the same as `exportKey("raw", …)` in WebCrypto, base64-encoded).
///
/// ```
/// use botlane_proto::crypto::PublicKey;
///
/// let key = PublicKey::from_bytes([9; 32]);
/// let text = key.to_base64();
/// assert_eq!(PublicKey::from_base64(&text)?, key);
/// assert_eq!(serde_json::to_string(&key).unwrap(), format!("\"{text}\""));
/// # Ok::<(), botlane_proto::crypto::CryptoError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey(pub(crate) x25519_dalek::PublicKey);

impl PublicKey {
    /// Wraps raw public key bytes.
    ///
    /// ```
    /// use botlane_proto::crypto::PublicKey;
    ///
    /// assert_eq!(PublicKey::from_bytes([1; 32]).as_bytes(), &[1; 32]);
    /// ```
    pub fn from_bytes(bytes: [u8; X25519_KEY_LEN]) -> Self {
        Self(x25519_dalek::PublicKey::from(bytes))
    }

    /// The raw 32 bytes.
    ///
    /// ```
    /// use botlane_proto::crypto::PublicKey;
    ///
    /// assert_eq!(PublicKey::from_bytes([2; 32]).as_bytes().len(), 32);
    /// ```
    pub fn as_bytes(&self) -> &[u8; X25519_KEY_LEN] {
        self.0.as_bytes()
    }

    /// Standard padded base64 of the 32 bytes.
    ///
    /// ```
    /// use botlane_proto::crypto::PublicKey;
    ///
    /// assert_eq!(PublicKey::from_bytes([0; 32]).to_base64(), "A".repeat(43) + "=");
    /// ```
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.as_bytes())
    }

    /// Whether this is a low-order point: every key agreement with it gives
    /// the all-zero secret, so nothing wrapped to it would be secret. No real
    /// key is one; [`wrap_channel_key`](super::wrap_channel_key) refuses
    /// them, and a service may refuse them at login.
    ///
    /// ```
    /// use botlane_proto::crypto::{IdentityKeyPair, PublicKey};
    ///
    /// assert!(PublicKey::from_bytes([0; 32]).is_low_order());
    /// assert!(!IdentityKeyPair::from_secret_bytes([5; 32]).public_key().is_low_order());
    /// ```
    pub fn is_low_order(&self) -> bool {
        // Any scalar shows it: clamped scalars are multiples of the cofactor,
        // so a low-order point always yields the all-zero shared secret.
        let probe = x25519_dalek::StaticSecret::from([0x5a; X25519_KEY_LEN]);
        !probe.diffie_hellman(&self.0).was_contributory()
    }

    /// Parses standard padded base64 of exactly 32 bytes.
    ///
    /// ```
    /// use botlane_proto::crypto::{CryptoError, PublicKey};
    ///
    /// assert!(PublicKey::from_base64(&"A".repeat(43)).is_err()); // padding missing
    /// assert!(matches!(PublicKey::from_base64("AAAA"), Err(CryptoError::Length { actual: 3, .. })));
    /// ```
    pub fn from_base64(text: &str) -> Result<Self, CryptoError> {
        Self::parse("public key", text)
    }

    pub(crate) fn parse(what: &'static str, text: &str) -> Result<Self, CryptoError> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_low_order_points_are_found() {
        // The order-1, order-2 and order-4/8 points of Curve25519 (RFC 7748
        // implementations' usual blocklist), and a real key.
        let hex = |text: &str| -> [u8; 32] {
            std::array::from_fn(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
        };
        for low in [
            "0000000000000000000000000000000000000000000000000000000000000000",
            "0100000000000000000000000000000000000000000000000000000000000000",
            "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
            "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        ] {
            assert!(PublicKey::from_bytes(hex(low)).is_low_order(), "{low}");
        }
        let real = hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
        assert!(!PublicKey::from_bytes(real).is_low_order());
    }

    #[test]
    fn debug_display_and_json_show_the_base64() {
        let key = PublicKey::from_bytes([0; 32]);
        let text = "A".repeat(43) + "=";
        assert_eq!(format!("{key}"), text);
        assert_eq!(format!("{key:?}"), format!("PublicKey({text})"));
        assert_eq!(serde_json::to_string(&key).unwrap(), format!("\"{text}\""));
        assert!(serde_json::from_str::<PublicKey>("\"AAAA\"").is_err());
    }
}
