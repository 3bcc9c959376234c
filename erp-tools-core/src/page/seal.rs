//! [`Sealer`]: small values a client carries and gives back unchanged, sealed with the
//! server's key (HMAC-SHA-256) so that any change is detected, and expiring.
//!
//! A sealed value reads `<payload>.<tag>`, both base64url without padding: the payload is
//! the value as JSON plus its expiry, the tag the first 16 bytes of the HMAC-SHA-256 of
//! the purpose and the payload. The payload is readable by whoever holds the value (it is
//! signed, not encrypted): seal nothing the holder may not see.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

/// Fewest bytes a sealing key may have.
pub const MIN_KEY_LEN: usize = 32;
/// Bytes of the HMAC tag kept in a sealed value.
const TAG_LEN: usize = 16;
/// SHA-256's block size, for HMAC.
const BLOCK: usize = 64;

/// Why a sealed value was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// Not a sealed value at all (wrong shape or encoding).
    #[error("it is not a value this server issued")]
    Malformed,
    /// The tag does not match: forged, altered, sealed with another key or for another
    /// purpose.
    #[error("it was altered or not issued by this server")]
    Forged,
    /// Sealed correctly, but past its expiry.
    #[error("it has expired")]
    Expired,
}

/// A key shorter than [`MIN_KEY_LEN`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a sealing key needs at least {MIN_KEY_LEN} bytes, this one has {0}")]
pub struct KeyTooShort(pub usize);

/// Seals and opens values with one key; every replica that holds the same key opens what
/// any of them sealed.
#[derive(Clone)]
pub struct Sealer {
    inner_pad: [u8; BLOCK],
    outer_pad: [u8; BLOCK],
    ttl: Duration,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Envelope<'a, T> {
    exp: u64,
    v: &'a T,
}

#[derive(serde::Deserialize)]
struct Opened<T> {
    exp: u64,
    v: T,
}

impl Sealer {
    /// A sealer with `key` (at least [`MIN_KEY_LEN`] bytes), values valid for `ttl`.
    pub fn new(key: &[u8], ttl: Duration) -> Result<Self, KeyTooShort> {
        if key.len() < MIN_KEY_LEN {
            return Err(KeyTooShort(key.len()));
        }
        let mut block = [0u8; BLOCK];
        if key.len() > BLOCK {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let mut inner_pad = [0x36u8; BLOCK];
        let mut outer_pad = [0x5cu8; BLOCK];
        for i in 0..BLOCK {
            inner_pad[i] ^= block[i];
            outer_pad[i] ^= block[i];
        }
        Ok(Sealer {
            inner_pad,
            outer_pad,
            ttl,
        })
    }

    /// A sealer with a random key of this process: what it seals is not accepted after a
    /// restart or by another process.
    pub fn random(ttl: Duration) -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system provides random bytes");
        Sealer::new(&key, ttl).expect("32 bytes is a valid key")
    }

    /// How long a sealed value stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn tag(&self, purpose: &str, payload: &[u8]) -> [u8; TAG_LEN] {
        let inner = Sha256::new()
            .chain_update(self.inner_pad)
            .chain_update(purpose.as_bytes())
            .chain_update([0x1f])
            .chain_update(payload)
            .finalize();
        let outer = Sha256::new()
            .chain_update(self.outer_pad)
            .chain_update(inner)
            .finalize();
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&outer[..TAG_LEN]);
        tag
    }

    /// Seals `value` for `purpose` (a label such as `erp-tools/cursor/v1`, so that a value
    /// sealed for one use is refused by another).
    pub fn seal<T: Serialize>(&self, purpose: &str, value: &T) -> String {
        let exp = now_secs().saturating_add(self.ttl.as_secs());
        let payload = serde_json::to_vec(&Envelope { exp, v: value })
            .expect("a sealed value serialises to JSON");
        let tag = self.tag(purpose, &payload);
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Opens a value sealed for `purpose`: checked tag first, then expiry.
    pub fn open<T: DeserializeOwned>(&self, purpose: &str, sealed: &str) -> Result<T, SealError> {
        let (payload, tag) = sealed.split_once('.').ok_or(SealError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| SealError::Malformed)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| SealError::Malformed)?;
        if tag.len() != TAG_LEN {
            return Err(SealError::Malformed);
        }
        let expected = self.tag(purpose, &payload);
        // Constant time: every byte is compared whatever the first difference.
        let diff = expected
            .iter()
            .zip(&tag)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            return Err(SealError::Forged);
        }
        let opened: Opened<T> =
            serde_json::from_slice(&payload).map_err(|_| SealError::Malformed)?;
        if opened.exp < now_secs() {
            return Err(SealError::Expired);
        }
        Ok(opened.v)
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    #[test]
    fn hmac_matches_rfc_4231_case_6() {
        // RFC 4231 test case 6 (a key longer than the block): the full HMAC-SHA-256 of
        // "Test Using Larger Than Block-Size Key - Hash Key First" starts 60e43159.
        let key = [0xaau8; 131];
        let sealer = Sealer::new(&key, Duration::from_secs(60)).unwrap();
        let inner = Sha256::new()
            .chain_update(sealer.inner_pad)
            .chain_update(b"Test Using Larger Than Block-Size Key - Hash Key First")
            .finalize();
        let outer = Sha256::new()
            .chain_update(sealer.outer_pad)
            .chain_update(inner)
            .finalize();
        assert_eq!(hex::encode(&outer[..4]), "60e43159");
    }

    #[test]
    fn a_sealed_value_opens_only_unchanged_with_its_key_and_purpose() {
        let sealer = Sealer::new(KEY, Duration::from_secs(60)).unwrap();
        let sealed = sealer.seal("p", &("V-00231", 7));
        assert_eq!(
            sealer.open::<(String, i64)>("p", &sealed).unwrap(),
            ("V-00231".to_string(), 7)
        );
        assert_eq!(
            sealer.open::<(String, i64)>("q", &sealed),
            Err(SealError::Forged)
        );
        let other = Sealer::new(&[9u8; 32], Duration::from_secs(60)).unwrap();
        assert_eq!(
            other.open::<(String, i64)>("p", &sealed),
            Err(SealError::Forged)
        );
        // Flip one character of the payload.
        let mut bytes = sealed.into_bytes();
        bytes[3] = if bytes[3] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(bytes).unwrap();
        assert_eq!(
            sealer.open::<(String, i64)>("p", &altered),
            Err(SealError::Forged)
        );
        assert_eq!(
            sealer.open::<(String, i64)>("p", "not-a-cursor"),
            Err(SealError::Malformed)
        );
    }

    #[test]
    fn an_expired_value_is_refused_as_expired() {
        let sealer = Sealer::new(KEY, Duration::from_secs(0)).unwrap();
        let sealed = sealer.seal("p", &1);
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(sealer.open::<i32>("p", &sealed), Err(SealError::Expired));
    }

    #[test]
    fn a_short_key_is_refused() {
        assert_eq!(
            Sealer::new(b"short", Duration::from_secs(1)).unwrap_err(),
            KeyTooShort(5)
        );
    }
}
