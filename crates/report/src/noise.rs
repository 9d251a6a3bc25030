//! A step's noise floor on one host, learned from the store: how far apart two blocks of
//! repeats of the same plan land when nothing changed.
//!
//! Repeats run back to back share a window of time, so their interval (what `compare`
//! and `check` compute) knows only the scatter inside a block. Between blocks a shared
//! VM drifts as much again (bench/README.md: 6.9% between groups' means on the 2-vCPU
//! VM, which made blocked A/A pairs "significant" 30% of the time). The floor is that
//! drift, measured: the scatter of successive blocks' medians of the same plan, engine
//! build and host, as ClickHouse sets each query's threshold from its own history of
//! run-to-run noise. It is estimated robustly (the median of the successive
//! differences' sizes), so one real change in the history does not inflate it.
//!
//! A change smaller than the floor cannot be told from drift by blocked repeats however
//! many repeats a block has; a step whose floor is above the threshold asked for is
//! unjudgeable at that threshold, and says so.

use serde::Serialize;

/// Blocks of history needed before a floor is claimed: three successive differences,
/// the fewest whose median is not one pair's accident.
pub const MIN_GROUPS: usize = 4;

/// The blocks of history a floor looks back over at most: recent drift is the drift
/// that matters, and an old host configuration should age out.
pub const MAX_GROUPS: usize = 12;

/// One step's floor for one metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Floor {
    /// The relative change two single blocks reach 95% of the time when nothing
    /// changed (0.04: 4%): 1.96 × the sd of successive blocks' log difference, the sd
    /// estimated as 1.4826 × the median of the differences' sizes.
    pub floor: f64,
    /// The last A/A delta: the newest block against the one before it, relative
    /// (−0.01: the newest ran 1% lower).
    pub aa: f64,
    /// Blocks it was learned from.
    pub groups: usize,
}

/// The floor of a metric from its blocks in time order, each block's values (its
/// repeats); `None` with fewer than [`MIN_GROUPS`] blocks holding a positive median.
/// Only the newest [`MAX_GROUPS`] blocks count.
pub fn floor_of(blocks: &[Vec<f64>]) -> Option<Floor> {
    let medians: Vec<f64> = blocks
        .iter()
        .filter_map(|b| crate::stats::median(b))
        .filter(|m| m.is_finite() && *m > 0.0)
        .collect();
    let medians = &medians[medians.len().saturating_sub(MAX_GROUPS)..];
    if medians.len() < MIN_GROUPS {
        return None;
    }
    let diffs: Vec<f64> = medians
        .windows(2)
        .map(|w| (w[1] / w[0]).ln().abs())
        .collect();
    let mad = crate::stats::median(&diffs)?;
    let sd = 1.4826 * mad;
    let last = medians[medians.len() - 1] / medians[medians.len() - 2];
    Some(Floor {
        floor: (1.96 * sd).exp() - 1.0,
        aa: last - 1.0,
        groups: medians.len(),
    })
}

/// Floors by (step, metric id) for `steps`, from `blocks` of history in time order
/// (each a group of repeats of the same plan and build on one host); a step and
/// metric with too few blocks gets none.
pub fn floors(
    blocks: &[crate::version::Version],
    steps: &[String],
    metrics: &[&crate::metrics::Metric],
) -> std::collections::BTreeMap<(String, String), Floor> {
    let mut out = std::collections::BTreeMap::new();
    for step in steps {
        for m in metrics {
            let values: Vec<Vec<f64>> = blocks
                .iter()
                .map(|b| crate::version::values(b, step, &m.get))
                .collect();
            if let Some(f) = floor_of(&values) {
                out.insert((step.clone(), m.id.to_string()), f);
            }
        }
    }
    out
}

/// A change beside its noise, as reth's CI prints it ("+3.12% (±0.28%, floor 2.50%, A/A
/// −0.01%)"): the change and its 95% interval, the step's floor and last A/A delta, and
/// what that makes of the change. Every view that prints a verdict (`compare`, `check`,
/// `history`, `ab`) shows it, so a reader weighs a change against what drift alone does.
pub fn beside_floor(ratio: f64, ci: Option<(f64, f64)>, floor: &Floor) -> String {
    let pct = |x: f64| format!("{:+.1}%", 100.0 * (x - 1.0));
    let interval = ci.map_or(String::new(), |(lo, hi)| {
        format!(" (95% {} to {})", pct(lo), pct(hi))
    });
    let within = ratio.ln().abs() <= (1.0 + floor.floor).ln();
    format!(
        "{}{interval}, floor {:.1}%, A/A {:+.1}% ({} blocks): {}",
        pct(ratio),
        100.0 * floor.floor,
        100.0 * floor.aa,
        floor.groups,
        if within {
            "within the floor, drift between blocks alone reaches it"
        } else {
            "beyond the floor"
        }
    )
}

/// Interleaved slices a side that would find a change of `delta` (0.05: 5%) 95% of the
/// time at a 5% false-positive rate, for slices whose log values scatter by `sd`:
/// 2·(1.96 + 1.645)²·sd²/δ², at least 2. What a step too noisy for blocked repeats
/// would need from `plumb ab` instead.
pub fn slices_needed(sd: f64, delta: f64) -> usize {
    let d = (1.0 + delta).ln();
    if d <= 0.0 || !sd.is_finite() {
        return usize::MAX;
    }
    ((2.0 * (1.96f64 + 1.645).powi(2) * sd * sd / (d * d)).ceil() as usize).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    #[test]
    fn a_change_is_read_against_its_floor() {
        let f = Floor {
            floor: 0.035,
            aa: -0.004,
            groups: 6,
        };
        let inside = beside_floor(0.97, Some((0.95, 0.99)), &f);
        assert_eq!(
            inside,
            "-3.0% (95% -5.0% to -1.0%), floor 3.5%, A/A -0.4% (6 blocks): within the floor, \
             drift between blocks alone reaches it"
        );
        assert!(beside_floor(1.05, None, &f).ends_with("beyond the floor"));
        // A drop's size is read on the log scale, as the floor is: 1/1.035 is on the floor.
        assert!(beside_floor(1.0 / 1.0351, None, &f).ends_with("beyond the floor"));
    }

    #[test]
    fn too_few_blocks_claim_no_floor() {
        let b = |m: f64| vec![m, m * 1.01, m * 0.99];
        assert_eq!(floor_of(&[b(100.0), b(101.0), b(99.0)]), None);
        assert!(floor_of(&[b(100.0), b(101.0), b(99.0), b(100.0)]).is_some());
        assert_eq!(floor_of(&[vec![], vec![], vec![], vec![]]), None);
    }

    #[test]
    fn the_floor_of_blocks_drifting_by_a_known_sd_is_near_its_formula() {
        // Blocks whose medians drift with sd 3% (log): two single blocks differ with
        // sd 3%·√2, so the floor should be near e^(1.96·0.0424) − 1 ≈ 8.7%.
        let mut rng = StdRng::seed_from_u64(3);
        let drift = Normal::new(0.0f64, 0.03).unwrap();
        let mut floors = Vec::new();
        for _ in 0..200 {
            let blocks: Vec<Vec<f64>> = (0..MAX_GROUPS)
                .map(|_| vec![1e6 * drift.sample(&mut rng).exp()])
                .collect();
            floors.push(floor_of(&blocks).unwrap().floor);
        }
        let med = crate::stats::median(&floors).unwrap();
        let want = (1.96 * 0.03 * 2f64.sqrt()).exp() - 1.0;
        assert!(
            (med - want).abs() < 0.2 * want,
            "median floor {med}, want {want}"
        );
    }

    #[test]
    fn one_real_change_in_the_history_does_not_raise_the_floor_much() {
        let steady = [100.0, 101.0, 99.5, 100.5, 100.0, 99.0, 100.8];
        let mut stepped: Vec<f64> = steady.to_vec();
        stepped.extend([80.0, 80.5, 79.8, 80.2]);
        let f = |v: &[f64]| floor_of(&v.iter().map(|m| vec![*m]).collect::<Vec<_>>()).unwrap();
        let (a, b) = (f(&steady), f(&stepped));
        assert!(
            b.floor < 2.0 * a.floor + 0.01,
            "steady {a:?}, with a 20% step {b:?}"
        );
        assert!((b.aa - (80.2 / 79.8 - 1.0)).abs() < 1e-12);
        assert_eq!(b.groups, 11);
    }

    #[test]
    fn only_the_newest_blocks_count() {
        // Wild old history, quiet recent history: the floor is the recent one's.
        let mut v: Vec<Vec<f64>> = (0..10)
            .map(|k| vec![if k % 2 == 0 { 50.0 } else { 150.0 }])
            .collect();
        v.extend((0..MAX_GROUPS).map(|k| vec![100.0 + (k % 3) as f64 * 0.1]));
        let f = floor_of(&v).unwrap();
        assert_eq!(f.groups, MAX_GROUPS);
        assert!(f.floor < 0.01, "{f:?}");
    }

    #[test]
    fn slices_needed_matches_bench_readmes_estimate() {
        // σ 5.3% and a 5% change: about 30 slices a side (bench/README.md).
        let n = slices_needed(0.053, 0.05);
        assert!((27..=33).contains(&n), "{n}");
        assert_eq!(slices_needed(0.001, 0.5), 2);
        assert_eq!(slices_needed(0.05, 0.0), usize::MAX);
    }
}
