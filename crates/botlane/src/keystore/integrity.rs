//! The version 2 integrity tag: HMAC-SHA256 over the file's body, keyed by
//! HKDF-SHA256 from the identity secret (`docs/crypto.md` §4).
//!
//! The key derives from the secret the file itself holds, so the tag proves
//! that whoever wrote the channel keys knew the identity secret. It catches
//! every accidental change; it cannot stop someone who can read the file
//! (and so the secret) from rewriting it with a fresh tag.

use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::crypto::X25519_KEY_LEN;

/// The HKDF `info` of the tag key; its version changes with the scheme.
pub(crate) const TAG_INFO: &[u8] = b"botlane keystore tag v2";

/// Length of the tag in bytes.
pub(crate) const TAG_LEN: usize = 32;

type HmacSha256 = Hmac<Sha256>;

fn tag_key(identity_secret: &[u8; X25519_KEY_LEN]) -> Zeroizing<[u8; 32]> {
    let mut key = Zeroizing::new([0u8; 32]);
    Hkdf::<Sha256>::new(None, identity_secret)
        .expand(TAG_INFO, key.as_mut())
        .expect("32 bytes is a valid HKDF-SHA256 output length (at most 255 * 32)");
    key
}

fn mac(identity_secret: &[u8; X25519_KEY_LEN], body: &[u8]) -> HmacSha256 {
    let key = tag_key(identity_secret);
    let mut mac =
        <HmacSha256 as Mac>::new_from_slice(key.as_ref()).expect("HMAC accepts keys of any length");
    mac.update(body);
    mac
}

/// The tag of `body` under the key derived from `identity_secret`.
pub(crate) fn tag(identity_secret: &[u8; X25519_KEY_LEN], body: &[u8]) -> [u8; TAG_LEN] {
    mac(identity_secret, body).finalize().into_bytes().into()
}

/// Whether `tag` is the tag of `body`, compared in constant time.
pub(crate) fn verify(identity_secret: &[u8; X25519_KEY_LEN], body: &[u8], tag: &[u8]) -> bool {
    mac(identity_secret, body).verify_slice(tag).is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tag_depends_on_every_input() {
        let body = b"{\"version\": 2}\n";
        let base = tag(&[1; 32], body);
        assert!(verify(&[1; 32], body, &base));
        assert_ne!(tag(&[2; 32], body), base);
        assert_ne!(tag(&[1; 32], b"{\"version\": 3}\n"), base);
        let mut flipped = base;
        flipped[31] ^= 1;
        assert!(!verify(&[1; 32], body, &flipped));
        assert!(!verify(&[1; 32], body, &base[..31]));
    }

    #[test]
    fn tag_is_rfc_hkdf_then_hmac() {
        // The same computation spelled out with the primitives' own APIs,
        // salt absent (RFC 5869: a string of HashLen zeros).
        let secret = [9u8; 32];
        let (prk, _) = Hkdf::<Sha256>::extract(Some(&[0u8; 32]), &secret);
        let okm = Hkdf::<Sha256>::from_prk(&prk).unwrap();
        let mut key = [0u8; 32];
        okm.expand(TAG_INFO, &mut key).unwrap();
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&key).unwrap();
        mac.update(b"body");
        let expected: [u8; 32] = mac.finalize().into_bytes().into();
        assert_eq!(tag(&secret, b"body"), expected);
    }
}
