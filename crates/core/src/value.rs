//! The value format: every value proves which key it was written for and what was
//! written, so a read can catch a wrong-key return or a corrupted value.
//!
//! Layout (format 2): `[checksum: 4][key tag: 4][payload]`.
//! - The key tag is a fold of the key's words (see `key_tag`): a couple of ns, so it is
//!   checked on every read (with the length) in the default mode.
//! - The checksum is the low 32 bits of XXH3-64 over key then payload, mixed: it costs
//!   tens of ns for a 400-byte value, about 8% of a cached range scan's CPU when every
//!   value pays it, so the default mode checks it on a sample of reads and `--verify all`
//!   on every one.
//!
//! A value written with `--verify none` does db_bench's work: it carries the key tag but
//! no checksum (the checksum field is 0), and later reads check its key only.
//!
//! Format 1 (plumb before the key tag) had no tag: a database loaded by it fails the
//! key check; reload it.

use serde::{Deserialize, Serialize};

/// Bytes at the front of every value: checksum then key tag.
pub const HEADER_LEN: usize = 8;

/// The value format written (stored with every run).
pub const FORMAT: u32 = 2;

/// One in this many values read gets the full checksum in [`VerifyMode::Sample`]. The
/// checksum reads the whole value, which a range scan otherwise leaves in memory
/// untouched: at 1 in 32 the cache misses cost a cached scan about 4% of its CPU, at 1
/// in 256 under 1%.
pub const SAMPLE_EVERY: u64 = 256;

/// How much of each value a read checks: the cost of checking is the harness's, and
/// this choice is stored with the run so compare can say when two runs differ in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Length and key tag on every read, the full checksum on every value.
    All,
    /// Length and key tag on every read, the full checksum on one value in
    /// [`SAMPLE_EVERY`]: wrong keys are always caught, corruption statistically.
    #[default]
    Sample,
    /// No check at all: db_bench's work (keys not found are still counted).
    None,
}

impl VerifyMode {
    /// Every mode, in the order help lists them.
    pub const ALL: [VerifyMode; 3] = [VerifyMode::All, VerifyMode::Sample, VerifyMode::None];

    /// The name on the command line and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyMode::All => "all",
            VerifyMode::Sample => "sample",
            VerifyMode::None => "none",
        }
    }
}

impl std::fmt::Display for VerifyMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for VerifyMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        VerifyMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown verify mode `{s}`; use all, sample or none"))
    }
}

/// Outcome of checking a value read back for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Everything checked matches.
    Ok,
    /// The key tag matches; the value carries no checksum (written with `--verify none`).
    KeyOnly,
    /// The value is too short, belongs to another key, or its checksum does not match.
    Mismatch,
}

/// The key tag: a fold of the key's 8-byte words, a couple of ns for a 20-byte key (a
/// hash of the key cost about 4% of a cached range scan's CPU). The first word (plumb's
/// key number, big-endian) enters unmixed, so two keys whose numbers differ and are
/// below 2^32 always get different tags: a value returned for another key is always
/// caught, not only with high probability.
#[inline]
fn key_tag(key: &[u8]) -> u32 {
    let fold = |x: u64| (x as u32) ^ ((x >> 32) as u32);
    let mut tag = (key.len() as u32).wrapping_mul(0x85EB_CA6B);
    let mut words = key.chunks_exact(8);
    for (i, w) in words.by_ref().enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        let f = fold(u64::from_be_bytes(b));
        tag ^= if i == 0 {
            f
        } else {
            f.wrapping_mul(0x9E37_79B9).rotate_left(7 * i as u32)
        };
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        tag ^= fold(u64::from_be_bytes(b))
            .wrapping_mul(0xC2B2_AE35)
            .rotate_left(11);
    }
    tag
}

fn checksum(key: &[u8], payload: &[u8]) -> u32 {
    // Key and payload hashed separately (no copy into one buffer) and mixed. Unseeded on
    // purpose: a seeded XXH3 over inputs > 240 bytes derives a new secret every call,
    // which costs more than hashing the payload.
    let k = xxhash_rust::xxh3::xxh3_64(key);
    let p = xxhash_rust::xxh3::xxh3_64(payload);
    (p ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)) as u32
}

fn word(v: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&v[at..at + 4]);
    u32::from_le_bytes(b)
}

/// Fills `value` (already sized to the value size) for `key`: payload bytes from
/// `payload_source`, then the header in front. Values shorter than the header are
/// rejected at option parsing, so this never truncates.
pub fn encode(key: &[u8], payload_source: &[u8], value: &mut [u8]) {
    let n = value.len() - HEADER_LEN;
    value[HEADER_LEN..].copy_from_slice(&payload_source[..n]);
    // 0 marks a value written without a checksum; a real checksum of 0 is stored as 1
    // (a 2^-32 chance of one missed flip in that value).
    let sum = checksum(key, &value[HEADER_LEN..]).max(1);
    value[..4].copy_from_slice(&sum.to_le_bytes());
    value[4..HEADER_LEN].copy_from_slice(&key_tag(key).to_le_bytes());
}

/// As [`encode`] without the checksum (its field is 0): what `--verify none` writes, so a
/// write costs what db_bench's does, and later reads can still catch a wrong key.
pub fn encode_unsummed(key: &[u8], payload_source: &[u8], value: &mut [u8]) {
    let n = value.len() - HEADER_LEN;
    value[HEADER_LEN..].copy_from_slice(&payload_source[..n]);
    value[..4].copy_from_slice(&0u32.to_le_bytes());
    value[4..HEADER_LEN].copy_from_slice(&key_tag(key).to_le_bytes());
}

/// The cheap check: the value is long enough and was written for `key`.
#[inline]
pub fn verify_key(key: &[u8], value: &[u8]) -> Verdict {
    if value.len() >= HEADER_LEN && word(value, 4) == key_tag(key) {
        Verdict::Ok
    } else {
        Verdict::Mismatch
    }
}

/// The full check: key tag and the checksum over key and payload (only the key tag for a
/// value written without one).
pub fn verify(key: &[u8], value: &[u8]) -> Verdict {
    if verify_key(key, value) == Verdict::Mismatch {
        return Verdict::Mismatch;
    }
    let stored = word(value, 0);
    if stored == 0 {
        return Verdict::KeyOnly;
    }
    if stored == checksum(key, &value[HEADER_LEN..]).max(1) {
        Verdict::Ok
    } else {
        Verdict::Mismatch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_verifies() {
        let payload: Vec<u8> = (0..=255u8).cycle().take(500).collect();
        let mut v = vec![0u8; 400];
        encode(b"key-1", &payload, &mut v);
        assert_eq!(verify(b"key-1", &v), Verdict::Ok);
        assert_eq!(verify_key(b"key-1", &v), Verdict::Ok);
    }

    #[test]
    fn flipped_payload_bit_is_caught_by_the_full_check_only() {
        let payload = vec![7u8; 64];
        let mut v = vec![0u8; 32];
        encode(b"k", &payload, &mut v);
        v[20] ^= 1;
        assert_eq!(verify(b"k", &v), Verdict::Mismatch);
        assert_eq!(verify_key(b"k", &v), Verdict::Ok);
    }

    #[test]
    fn value_under_another_key_is_caught_by_both_checks() {
        let payload = vec![9u8; 64];
        let mut v = vec![0u8; 32];
        encode(b"k1", &payload, &mut v);
        assert_eq!(verify(b"k2", &v), Verdict::Mismatch);
        assert_eq!(verify_key(b"k2", &v), Verdict::Mismatch);
    }

    #[test]
    fn a_value_written_without_a_checksum_is_checked_by_key_only() {
        let payload = vec![3u8; 64];
        let mut v = vec![0u8; 40];
        encode_unsummed(b"k", &payload, &mut v);
        assert_eq!(verify(b"k", &v), Verdict::KeyOnly);
        assert_eq!(verify_key(b"k", &v), Verdict::Ok);
        assert_eq!(verify(b"k2", &v), Verdict::Mismatch);
    }

    #[test]
    fn keys_with_different_numbers_never_share_a_tag() {
        let mut seen = std::collections::HashSet::new();
        let mut key = [0u8; 20];
        for n in (0..200_000u64).chain([u64::from(u32::MAX) - 1, u64::from(u32::MAX)]) {
            key[..8].copy_from_slice(&n.to_be_bytes());
            assert!(seen.insert(key_tag(&key)), "key {n} shares a tag");
        }
        assert_ne!(key_tag(b"k1"), key_tag(b"k2"));
        assert_ne!(key_tag(b"k"), key_tag(b"k\0"));
    }

    #[test]
    fn truncated_value_is_caught() {
        assert_eq!(verify(b"k", &[1, 2]), Verdict::Mismatch);
        assert_eq!(verify_key(b"k", &[1, 2, 3, 4, 5, 6, 7]), Verdict::Mismatch);
    }

    #[test]
    fn modes_read_back_by_name() {
        for m in VerifyMode::ALL {
            assert_eq!(m.as_str().parse::<VerifyMode>(), Ok(m));
        }
        assert!("most".parse::<VerifyMode>().is_err());
    }
}
