//! A bijection of `0..n` in O(1) memory, so filluniquerandom writes every key exactly
//! once in random order without a shuffled array of n entries (db_bench's approach
//! costs 8 bytes per key, gigabytes at billions of keys).
//!
//! Construction: a 4-round Feistel network over the smallest even-bit domain `2^(2h) >=
//! n`, with cycle-walking: values that land outside `0..n` are permuted again until they
//! fall inside. Because the Feistel network is a bijection of its domain, cycle-walking
//! yields a bijection of `0..n`; the domain is < 4n so the expected walk is < 4 steps.

/// A keyed pseudo-random permutation of `0..n`.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

fn mix(mut x: u64) -> u64 {
    // splitmix64 finaliser: cheap, good avalanche.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Permutation {
    /// A permutation of `0..n` chosen by `seed`. `n` must be at least 1.
    pub fn new(n: u64, seed: u64) -> Self {
        assert!(n >= 1, "permutation of an empty range");
        let bits = 64 - (n - 1).leading_zeros().min(63);
        let half_bits = bits.div_ceil(2).max(1);
        let keys = [
            mix(seed ^ 0x9e37_79b9_7f4a_7c15),
            mix(seed.wrapping_add(1) ^ 0x3c6e_f372_fe94_f82a),
            mix(seed.wrapping_add(2) ^ 0xdaa6_6d2b_7a4c_1d3e),
            mix(seed.wrapping_add(3) ^ 0x78dd_e6e5_fd29_a4f1),
        ];
        Permutation {
            n,
            half_bits,
            mask: (1u64 << half_bits) - 1,
            keys,
        }
    }

    /// Size of the permuted range.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether the range is empty (never: `new` refuses 0).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let mut l = x >> self.half_bits;
        let mut r = x & self.mask;
        for k in self.keys {
            let f = mix(r ^ k) & self.mask;
            let t = l ^ f;
            l = r;
            r = t;
        }
        (l << self.half_bits) | r
    }

    /// The image of `i` (which must be < n).
    #[inline]
    pub fn apply(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.feistel(i);
        while x >= self.n {
            x = self.feistel(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_bijection(n: u64, seed: u64) {
        let p = Permutation::new(n, seed);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let v = p.apply(i);
            assert!(v < n, "n={n}: {i} -> {v} out of range");
            assert!(!seen[v as usize], "n={n}: {v} produced twice");
            seen[v as usize] = true;
        }
    }

    #[test]
    fn every_key_exactly_once_over_full_spaces() {
        for n in [1, 2, 3, 7, 16, 17, 1000, 65_536, 100_003, 1 << 20] {
            check_bijection(n, 42);
        }
    }

    #[test]
    fn different_seeds_give_different_orders() {
        let a = Permutation::new(10_000, 1);
        let b = Permutation::new(10_000, 2);
        let same = (0..10_000).filter(|&i| a.apply(i) == b.apply(i)).count();
        assert!(same < 100, "{same} fixed points shared");
    }

    #[test]
    fn order_is_not_sequential() {
        let p = Permutation::new(1_000_000, 7);
        let ascending = (0..10_000u64)
            .filter(|&i| p.apply(i + 1) == p.apply(i) + 1)
            .count();
        assert!(ascending < 50, "{ascending} consecutive pairs");
    }
}
