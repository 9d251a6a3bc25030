//! The order runs go in. Repeats interleave (A B A B, not A A B B) so drift over the
//! hours of a suite hits every variant alike; a shuffle randomises each round with a
//! recorded seed.

use crate::model::RunPlan;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// `repeat` rounds of `cells`, each round one run per cell. Repeat `r` of every cell
/// uses seed `seed + r`: variants compared within a round see the same keys, and
/// repeats do not replay each other's.
pub fn rounds(cells: &[RunPlan], repeat: u32, shuffle: Option<u64>) -> Vec<RunPlan> {
    let mut out = Vec::with_capacity(cells.len() * repeat as usize);
    for r in 0..repeat {
        let mut round: Vec<RunPlan> = cells
            .iter()
            .map(|c| RunPlan {
                repeat: r,
                seed: c.seed.wrapping_add(u64::from(r)),
                ..c.clone()
            })
            .collect();
        if let Some(s) = shuffle {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(s.wrapping_add(u64::from(r)));
            round.shuffle(&mut rng);
        }
        out.extend(round);
    }
    out
}
