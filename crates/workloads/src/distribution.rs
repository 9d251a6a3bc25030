//! Which key an op touches. Each worker owns a [`KeyChooser`] with its own seed so
//! threads and steps never replay the same key sequence (shared seeds warm caches and
//! inflate hit rates, a comparison trap DESIGN.md names).

use crate::{Permutation, WorkloadError};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution as _, Zipf};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The key distribution of read and overwrite steps (`--distribution`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Distribution {
    /// Every key in `0..num` equally likely.
    Uniform,
    /// Zipfian with exponent `theta` (YCSB's 0.99 by default); ranks are scattered over
    /// the key space by a permutation so the hot keys are not all adjacent.
    Zipfian {
        /// Skew exponent, > 0.
        theta: f64,
    },
    /// Uniform over the first `k` keys only (the hyper clock cache post's hot sets).
    HotSet {
        /// How many keys are hot.
        k: u64,
    },
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipfian { theta } => write!(f, "zipfian:{theta}"),
            Distribution::HotSet { k } => write!(f, "hotset:{k}"),
        }
    }
}

impl FromStr for Distribution {
    type Err = WorkloadError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| WorkloadError::Distribution {
            given: s.to_string(),
            why: why.to_string(),
        };
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        match (name, arg) {
            ("uniform", None) => Ok(Distribution::Uniform),
            ("zipfian", None) => Ok(Distribution::Zipfian { theta: 0.99 }),
            ("zipfian", Some(a)) => match a.parse::<f64>() {
                Ok(t) if t > 0.0 && t.is_finite() => Ok(Distribution::Zipfian { theta: t }),
                _ => Err(bad(
                    "the zipfian exponent must be a number > 0, e.g. zipfian:0.99",
                )),
            },
            ("hotset", Some(a)) => match a.parse::<u64>() {
                Ok(k) if k > 0 => Ok(Distribution::HotSet { k }),
                _ => Err(bad("hotset takes a key count > 0, e.g. hotset:10000")),
            },
            ("hotset", None) => Err(bad("hotset needs a key count, e.g. hotset:10000")),
            _ => Err(bad("use uniform, zipfian[:THETA] or hotset:K")),
        }
    }
}

enum Sampler {
    Uniform,
    Zipf(Zipf<f64>, Permutation),
    Hot(u64),
}

/// One worker's key generator for one step.
pub struct KeyChooser {
    rng: SmallRng,
    num: u64,
    sampler: Sampler,
}

impl KeyChooser {
    /// A chooser over `0..num` (num >= 1). `seed` must differ per step and thread.
    pub fn new(dist: Distribution, num: u64, seed: u64) -> Result<Self, WorkloadError> {
        let sampler = match dist {
            Distribution::Uniform => Sampler::Uniform,
            Distribution::Zipfian { theta } => {
                let z = Zipf::new(num as f64, theta).map_err(|e| WorkloadError::Distribution {
                    given: dist.to_string(),
                    why: e.to_string(),
                })?;
                // Fixed scatter so every thread agrees on which keys are hot.
                Sampler::Zipf(z, Permutation::new(num, 0x5eed))
            }
            Distribution::HotSet { k } => {
                if k > num {
                    return Err(WorkloadError::Distribution {
                        given: dist.to_string(),
                        why: format!("the hot set ({k} keys) is larger than --num ({num})"),
                    });
                }
                Sampler::Hot(k)
            }
        };
        Ok(KeyChooser {
            rng: SmallRng::seed_from_u64(seed),
            num,
            sampler,
        })
    }

    /// The next key number.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        match &self.sampler {
            Sampler::Uniform => self.rng.random_range(0..self.num),
            Sampler::Hot(k) => self.rng.random_range(0..*k),
            Sampler::Zipf(z, perm) => {
                let rank = z.sample(&mut self.rng) as u64; // 1..=num
                perm.apply(rank.clamp(1, self.num) - 1)
            }
        }
    }

    /// A uniform number in `0..n`, for choices that are not keys (value offsets).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.rng.random_range(0..n)
    }
}

/// Derives a distinct seed for each (run seed, step, thread) so no two workers share
/// a random sequence.
pub fn worker_seed(run_seed: u64, step_index: usize, thread: usize) -> u64 {
    let mut x = run_seed
        ^ (step_index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (thread as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(dist: Distribution, num: u64, draws: usize) -> Vec<u64> {
        let mut c = vec![0u64; num as usize];
        let mut k = KeyChooser::new(dist, num, 1).unwrap();
        for _ in 0..draws {
            c[k.next_key() as usize] += 1;
        }
        c
    }

    #[test]
    fn parses_all_forms_and_rejects_bad_ones() {
        assert_eq!(
            "uniform".parse::<Distribution>().unwrap(),
            Distribution::Uniform
        );
        assert_eq!(
            "zipfian".parse::<Distribution>().unwrap(),
            Distribution::Zipfian { theta: 0.99 }
        );
        assert_eq!(
            "hotset:100".parse::<Distribution>().unwrap(),
            Distribution::HotSet { k: 100 }
        );
        for bad in ["", "zipf", "hotset", "hotset:0", "zipfian:-1", "uniform:3"] {
            let e = bad.parse::<Distribution>().unwrap_err().to_string();
            assert!(e.contains("--distribution"), "{bad}: {e}");
        }
    }

    #[test]
    fn uniform_is_flat() {
        let c = counts(Distribution::Uniform, 100, 200_000);
        let (min, max) = (*c.iter().min().unwrap(), *c.iter().max().unwrap());
        // Expected 2000 per key; 5 sigma is about 224.
        assert!(min > 1700 && max < 2300, "min {min} max {max}");
    }

    #[test]
    fn zipfian_is_skewed_and_in_range() {
        let mut c = counts(Distribution::Zipfian { theta: 0.99 }, 1000, 200_000);
        c.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u64 = c[..10].iter().sum();
        // With theta 0.99 over 1000 keys, the 10 hottest keys take ~39% of draws.
        assert!(top10 > 60_000, "top 10 keys got only {top10} of 200000");
        assert!(c[0] > 10 * c[500], "hottest {} vs median {}", c[0], c[500]);
    }

    #[test]
    fn hotset_touches_only_the_first_k() {
        let c = counts(Distribution::HotSet { k: 10 }, 1000, 10_000);
        assert!(c[..10].iter().all(|&x| x > 0));
        assert!(c[10..].iter().all(|&x| x == 0));
        assert!(KeyChooser::new(Distribution::HotSet { k: 2000 }, 1000, 1).is_err());
    }

    #[test]
    fn worker_seeds_differ() {
        let mut s = std::collections::HashSet::new();
        for step in 0..10 {
            for t in 0..10 {
                assert!(s.insert(worker_seed(42, step, t)));
            }
        }
    }
}
