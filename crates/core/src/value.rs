//! The value format: every value carries a checksum of its key and payload in its first
//! four bytes, so every read can prove it got back what some write put there.
//!
//! The checksum is the low 32 bits of XXH3-64 over key then payload: for 400-byte
//! values it costs about a third of CRC32C's single-stream hardware path, and every read
//! and write pays it, so it must stay far below the engine's own cost per op.

/// Bytes at the front of every value that hold the checksum.
pub const CHECKSUM_LEN: usize = 4;

/// Outcome of checking a value read back for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The checksum matches key and payload.
    Ok,
    /// The value is too short to hold a checksum, or the checksum does not match.
    Mismatch,
}

fn checksum(key: &[u8], payload: &[u8]) -> u32 {
    // Key and payload hashed separately (no copy into one buffer) and mixed. Unseeded on
    // purpose: a seeded XXH3 over inputs > 240 bytes derives a new secret every call,
    // which costs more than hashing the payload.
    let k = xxhash_rust::xxh3::xxh3_64(key);
    let p = xxhash_rust::xxh3::xxh3_64(payload);
    (p ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)) as u32
}

/// Fills `value` (already sized to the value size) for `key`: payload bytes from
/// `payload_source`, then the checksum in front. Values shorter than the checksum are
/// rejected at option parsing, so this never truncates.
pub fn encode(key: &[u8], payload_source: &[u8], value: &mut [u8]) {
    let n = value.len() - CHECKSUM_LEN;
    value[CHECKSUM_LEN..].copy_from_slice(&payload_source[..n]);
    let sum = checksum(key, &value[CHECKSUM_LEN..]);
    value[..CHECKSUM_LEN].copy_from_slice(&sum.to_le_bytes());
}

/// Checks a value read back for `key`.
pub fn verify(key: &[u8], value: &[u8]) -> Verdict {
    if value.len() < CHECKSUM_LEN {
        return Verdict::Mismatch;
    }
    let mut stored = [0u8; CHECKSUM_LEN];
    stored.copy_from_slice(&value[..CHECKSUM_LEN]);
    if u32::from_le_bytes(stored) == checksum(key, &value[CHECKSUM_LEN..]) {
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
    }

    #[test]
    fn flipped_payload_bit_is_caught() {
        let payload = vec![7u8; 64];
        let mut v = vec![0u8; 32];
        encode(b"k", &payload, &mut v);
        v[20] ^= 1;
        assert_eq!(verify(b"k", &v), Verdict::Mismatch);
    }

    #[test]
    fn value_under_another_key_is_caught() {
        let payload = vec![9u8; 64];
        let mut v = vec![0u8; 32];
        encode(b"k1", &payload, &mut v);
        assert_eq!(verify(b"k2", &v), Verdict::Mismatch);
    }

    #[test]
    fn truncated_value_is_caught() {
        assert_eq!(verify(b"k", &[1, 2]), Verdict::Mismatch);
    }
}
