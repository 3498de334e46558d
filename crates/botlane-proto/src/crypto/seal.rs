//! [`ChannelKey`]: AES-256-GCM sealing of message content and sidecars,
//! `base64(nonce(12) || ciphertext || tag(16))` with the channel id as
//! associated data.

use std::fmt;

use aes_gcm::aead::{Aead, AeadInPlace, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::{decode_b64, random_bytes, CryptoError, CHANNEL_KEY_LEN, NONCE_LEN, TAG_LEN};

/// AES-256-GCM with `cipher`; returns `nonce || ciphertext || tag`.
pub(crate) fn seal_raw(
    cipher: &Aes256Gcm,
    nonce: &[u8; NONCE_LEN],
    plaintext: &[u8],
    aad: &[u8],
) -> Result<Vec<u8>, CryptoError> {
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

/// Inverse of [`seal_raw`], in place: `buf` holds `nonce || ciphertext ||
/// tag` and, once the tag is verified, the plaintext alone (nothing is
/// decrypted before that, so on an error it still holds the ciphertext).
/// Whether the buffer is wiped is the caller's: a wrapped key's plaintext
/// is key material (`Zeroizing`), a message's is handed on.
pub(crate) fn open_in_place(
    cipher: &Aes256Gcm,
    what: &'static str,
    buf: &mut Vec<u8>,
    aad: &[u8],
) -> Result<(), CryptoError> {
    let tag_at = decrypt_detached(cipher, what, buf, aad)?;
    buf.truncate(tag_at);
    buf.drain(..NONCE_LEN);
    Ok(())
}

/// Decrypts `nonce || ciphertext || tag` in `buf` once its tag is verified,
/// leaving the nonce and the tag where they are; returns where the tag
/// begins (the plaintext is `buf[NONCE_LEN..tag_at]`).
fn decrypt_detached(
    cipher: &Aes256Gcm,
    what: &'static str,
    buf: &mut [u8],
    aad: &[u8],
) -> Result<usize, CryptoError> {
    if buf.len() < NONCE_LEN + TAG_LEN {
        return Err(CryptoError::Length {
            what,
            expected: "at least 28",
            actual: buf.len(),
        });
    }
    let tag_at = buf.len() - TAG_LEN;
    let (head, tag) = buf.split_at_mut(tag_at);
    let (nonce, body) = head.split_at_mut(NONCE_LEN);
    cipher
        .decrypt_in_place_detached(Nonce::from_slice(nonce), aad, body, Tag::from_slice(tag))
        .map_err(|_| CryptoError::Decrypt)?;
    Ok(tag_at)
}

/// A 256-bit AES-GCM key shared by the members of one channel. It seals
/// message content and the command sidecar.
///
/// The key lives on the heap so that moving a `ChannelKey` around (into a
/// map, out of a function) leaves no copies behind, and it holds its
/// initialised cipher: the AES key schedule runs once, when the key is made,
/// not on every seal and open. The bytes, the round keys and the GHASH key
/// are zeroized on drop. `Debug` prints `ChannelKey([REDACTED])`.
///
/// ```
/// use botlane_proto::crypto::ChannelKey;
///
/// let key = ChannelKey::generate()?;
/// let wire = key.seal(b"hello", b"channel-1")?;
/// assert_eq!(key.open(&wire, b"channel-1")?, b"hello");
/// assert_eq!(format!("{key:?}"), "ChannelKey([REDACTED])");
/// # Ok::<(), botlane_proto::crypto::CryptoError>(())
/// ```
#[derive(Clone)]
pub struct ChannelKey(Box<KeyState>);

/// The key's bytes (for the keystore and key wrapping) and its cipher.
#[derive(Clone)]
struct KeyState {
    bytes: [u8; CHANNEL_KEY_LEN],
    cipher: Aes256Gcm,
}

impl Drop for ChannelKey {
    // The cipher wipes its own AES round keys when dropped (the `zeroize`
    // feature of `aes`; see Cargo.toml for the GHASH key).
    fn drop(&mut self) {
        self.0.bytes.zeroize();
    }
}

impl ZeroizeOnDrop for ChannelKey {}

impl ChannelKey {
    /// Creates a fresh random key from the operating system's generator.
    ///
    /// ```
    /// use botlane_proto::crypto::ChannelKey;
    ///
    /// let a = ChannelKey::generate()?;
    /// let b = ChannelKey::generate()?;
    /// let wire = a.seal(b"x", b"c")?;
    /// assert!(b.open(&wire, b"c").is_err());
    /// # Ok::<(), botlane_proto::crypto::CryptoError>(())
    /// ```
    pub fn generate() -> Result<Self, CryptoError> {
        random_bytes::<CHANNEL_KEY_LEN>().map(|bytes| Self::from_bytes(*bytes))
    }

    /// Wraps raw key bytes (for instance a key exported by a browser with
    /// `crypto.subtle.exportKey("raw", key)`).
    ///
    /// ```
    /// use botlane_proto::crypto::ChannelKey;
    ///
    /// let key = ChannelKey::from_bytes([7; 32]);
    /// let wire = key.seal(b"hi", b"c")?;
    /// assert_eq!(ChannelKey::from_bytes([7; 32]).open(&wire, b"c")?, b"hi");
    /// # Ok::<(), botlane_proto::crypto::CryptoError>(())
    /// ```
    pub fn from_bytes(mut bytes: [u8; CHANNEL_KEY_LEN]) -> Self {
        let key = Self(Box::new(KeyState {
            bytes,
            cipher: Aes256Gcm::new((&bytes).into()),
        }));
        bytes.zeroize();
        key
    }

    /// The raw key bytes, for botlane's keystore and for key wrapping only.
    ///
    /// Hidden and outside the stability promise: public only because the
    /// keystore lives in another crate.
    #[doc(hidden)]
    pub fn expose_bytes(&self) -> &[u8; CHANNEL_KEY_LEN] {
        &self.0.bytes
    }

    /// Encrypts `plaintext` with a fresh random nonce and returns the wire
    /// form `base64(nonce || ciphertext || tag)`.
    ///
    /// `aad` is authenticated but not encrypted; botlane passes the channel
    /// id's UTF-8 bytes so that a payload cannot be replayed into another
    /// channel that happens to share the key.
    ///
    /// ```
    /// use botlane_proto::crypto::ChannelKey;
    ///
    /// let key = ChannelKey::generate()?;
    /// let wire = key.seal(b"secret", b"channel-1")?;
    /// // 12-byte nonce + 6 bytes + 16-byte tag = 34 bytes = 48 base64 chars.
    /// assert_eq!(wire.len(), 48);
    /// assert!(key.open(&wire, b"channel-2").is_err());
    /// # Ok::<(), botlane_proto::crypto::CryptoError>(())
    /// ```
    pub fn seal(&self, plaintext: &[u8], aad: &[u8]) -> Result<String, CryptoError> {
        let nonce = random_bytes::<NONCE_LEN>()?;
        self.seal_with_nonce(&nonce, plaintext, aad)
    }

    /// [`ChannelKey::seal`] with a given nonce: for the vectors only (a
    /// nonce must never repeat under one key).
    pub(crate) fn seal_with_nonce(
        &self,
        nonce: &[u8; NONCE_LEN],
        plaintext: &[u8],
        aad: &[u8],
    ) -> Result<String, CryptoError> {
        seal_raw(&self.0.cipher, nonce, plaintext, aad).map(|sealed| BASE64.encode(sealed))
    }

    /// Decrypts a wire form made by [`ChannelKey::seal`] (or by WebCrypto as
    /// described in `docs/crypto.md`) with the same `aad`.
    ///
    /// Any malformed input gives an error, never a panic; the error never
    /// contains plaintext or key bytes.
    ///
    /// ```
    /// use botlane_proto::crypto::{ChannelKey, CryptoError};
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
        // The ciphertext is public (the service relays it), so its buffer
        // leaves the wiping wrapper, and the plaintext, which goes to the
        // caller, is decrypted into it: one buffer per open, no copy.
        let mut sealed = std::mem::take(&mut *decode_b64(WHAT, wire)?);
        open_in_place(&self.0.cipher, WHAT, &mut sealed, aad)?;
        Ok(sealed)
    }

    /// [`open`](Self::open) into `buf`, a buffer the caller reuses: once it
    /// has grown to the size of the messages, an open allocates nothing.
    /// `buf`'s previous contents are replaced; on success it holds the
    /// nonce, the plaintext and the tag, and the plaintext is returned.
    ///
    /// ```
    /// use botlane_proto::crypto::{ChannelKey, CryptoError};
    ///
    /// let key = ChannelKey::generate()?;
    /// let mut buf = Vec::new();
    /// let wire = key.seal(b"secret", b"c")?;
    /// assert_eq!(key.open_into(&wire, b"c", &mut buf)?, b"secret");
    /// assert_eq!(key.open_into(&wire, b"other", &mut buf), Err(CryptoError::Decrypt));
    /// # Ok::<(), CryptoError>(())
    /// ```
    pub fn open_into<'b>(
        &self,
        wire: &str,
        aad: &[u8],
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], CryptoError> {
        const WHAT: &str = "sealed payload";
        buf.clear();
        BASE64
            .decode_vec(wire, buf)
            .map_err(|_| CryptoError::Base64 { what: WHAT })?;
        let tag_at = decrypt_detached(&self.0.cipher, WHAT, buf, aad)?;
        Ok(&buf[NONCE_LEN..tag_at])
    }
}

impl fmt::Debug for ChannelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChannelKey([REDACTED])")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_held_cipher_wipes_its_round_keys() {
        // Holds only while `aes` is built with its `zeroize` feature.
        fn wiped_on_drop<T: ZeroizeOnDrop>() {}
        wiped_on_drop::<aes::Aes256>();
        wiped_on_drop::<ChannelKey>();
    }

    #[test]
    fn a_clone_seals_and_opens_like_the_original() {
        let key = ChannelKey::from_bytes(counting(0x00));
        let copy = key.clone();
        drop(key);
        let wire = copy
            .seal_with_nonce(&counting(0x10), SEAL_PLAINTEXT, VECTOR_AAD)
            .unwrap();
        assert_eq!(wire, SEAL_WIRE);
        assert_eq!(copy.open(SEAL_WIRE, VECTOR_AAD).unwrap(), SEAL_PLAINTEXT);
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

    proptest! {
        #[test]
        fn seal_open_round_trip(plain in proptest::collection::vec(any::<u8>(), 0..512),
                                aad in proptest::collection::vec(any::<u8>(), 0..64),
                                raw in any::<[u8; 32]>()) {
            let key = ChannelKey::from_bytes(raw);
            let wire = key.seal(&plain, &aad).unwrap();
            prop_assert_eq!(key.open(&wire, &aad).unwrap(), &plain[..]);
            // A reused buffer: what it held before does not show.
            let mut buf = vec![0xAA; 600];
            prop_assert_eq!(key.open_into(&wire, &aad, &mut buf).unwrap(), &plain[..]);
        }

        #[test]
        fn open_never_panics_on_text(wire in ".{0,200}", aad in proptest::collection::vec(any::<u8>(), 0..16)) {
            let key = ChannelKey::from_bytes([3; 32]);
            let refused = key.open(&wire, &aad).unwrap_err();
            prop_assert_eq!(key.open_into(&wire, &aad, &mut Vec::new()).unwrap_err(), refused);
        }

        #[test]
        fn open_never_panics_on_well_encoded_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let wire = BASE64.encode(&bytes);
            let key = ChannelKey::from_bytes([3; 32]);
            let refused = key.open(&wire, b"c").unwrap_err();
            prop_assert_eq!(key.open_into(&wire, b"c", &mut Vec::new()).unwrap_err(), refused);
        }
    }
}
