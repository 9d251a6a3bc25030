//! A per-thread random stream for the probes' ops: a few ns per draw, no allocation.

use std::time::SystemTime;

/// xorshift64*: a per-thread random stream, a few ns per draw, no allocation.
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded from the thread index and the clock; never zero.
    pub(crate) fn new(seed: u64) -> Rng {
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9);
        Rng((seed.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ t) | 1)
    }
    /// The next draw.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0), by multiply-shift: no division per draw.
    #[inline]
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}
