//! Value payload bytes, made once per run: like db_bench's RandomGenerator, half of each
//! 100-byte piece is random and half repeats it, so compressors see ~2:1 data and no
//! op spends time generating randomness.

/// Size of the shared payload buffer.
pub const PAYLOAD_LEN: usize = 2 * plumb_plan::MAX_VALUE_SIZE;

/// The run's payload source. Values are slices of it at rotating offsets.
pub fn make_payload(seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = || {
        // xorshift64*: deterministic per seed, fast, good enough for filler bytes.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
    };
    let mut out = Vec::with_capacity(PAYLOAD_LEN + 100);
    while out.len() < PAYLOAD_LEN {
        let piece: Vec<u8> = (0..50).map(|_| next()).collect();
        out.extend_from_slice(&piece);
        out.extend_from_slice(&piece);
    }
    out.truncate(PAYLOAD_LEN);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_of_each_piece_repeats() {
        let p = make_payload(3);
        assert_eq!(p.len(), PAYLOAD_LEN);
        assert_eq!(p[..50], p[50..100]);
        assert_ne!(p[..50], p[100..150]);
        assert_ne!(make_payload(4)[..50], p[..50]);
    }
}
