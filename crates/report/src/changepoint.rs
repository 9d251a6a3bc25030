//! Where performance changed along a history of versions (releases or commits, in the
//! user's order), each measured a few times. Comparing neighbours pairwise drowns in
//! noise and multiple tests; E-divisive means (Matteson & James 2014, the method behind
//! MongoDB's and Apache Otava's change-point tools) instead splits the whole history
//! where the two sides' distributions are furthest apart, checks the split with a
//! permutation test, then looks for the next split in any of the segments, stopping at
//! the first that is not significant. It assumes no distribution and finds shifts in
//! spread as well as in level.
//!
//! Distances are |ln x − ln y| (exponent 1), so a change is measured as a ratio, and
//! splits fall only between versions: repeats of one version are one build and one
//! configuration, so a change between them would be noise by definition.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

use crate::stats::{median, ratio};

/// How strict the search is; the defaults are the usual ones for a history of a few
/// dozen versions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Significance of each split. The search stops at the first split that fails, so
    /// a history without any change raises a false alarm with probability about alpha,
    /// and after each real change about alpha again. Default 0.05.
    pub alpha: f64,
    /// Random relabellings per test. The smallest reachable p is 1/(permutations+1),
    /// so this must be well above 1/alpha; 199 reaches 0.005 and takes milliseconds
    /// for a few dozen versions. Default 199.
    pub permutations: usize,
    /// Fewest versions on each side of a split (values below 1 mean 1). Raising it
    /// stops one odd version from being reported as a change and a change back.
    /// Default 1.
    pub min_points: usize,
    /// Seed of the permutations, so the same history always gives the same report.
    pub seed: u64,
}

impl Default for Options {
    /// Conventional significance and enough permutations to reach it several times over.
    fn default() -> Self {
        Options {
            alpha: 0.05,
            permutations: 199,
            min_points: 1,
            seed: 0,
        }
    }
}

/// One change: where it starts, how sure the test is and how large it is, in the
/// terms of a comparison table (medians, a ratio and its interval) so it reads like one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Caller's index of the first version of the new segment (the first version with
    /// values, if empty versions sit at the boundary): the version to bisect towards.
    pub index: usize,
    /// p-value of the permutation test that accepted this split, (count+1)/(permutations+1).
    pub p_value: f64,
    /// Median of every value from the previous change point (or the start) to this one:
    /// the level the history settled at, not one noisy version.
    pub before: f64,
    /// Median of every value from this change point to the next (or the end).
    pub after: f64,
    /// `after / before`: above 1 is faster for throughput, slower for a cost.
    pub ratio: f64,
    /// 95% interval of the ratio (as in [`crate::stats::ratio`]); `None` when a side
    /// has fewer than two values, because one value says nothing about noise.
    pub ci: Option<(f64, f64)>,
}

/// Change points of `series` (one `Vec` of repeat values per version), sorted by index.
///
/// Values that are not positive and finite are dropped (they have no logarithm and
/// would mean a broken measurement, not a slower one); versions left empty are skipped,
/// so they never form a boundary on their own, but indices still refer to `series`.
pub fn detect(series: &[Vec<f64>], opts: &Options) -> Vec<ChangePoint> {
    let kept: Vec<(usize, Vec<f64>)> = series
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let v: Vec<f64> = v
                .iter()
                .copied()
                .filter(|x| x.is_finite() && *x > 0.0)
                .collect();
            (!v.is_empty()).then_some((i, v))
        })
        .collect();
    let logs: Vec<Vec<f64>> = kept
        .iter()
        .map(|(_, v)| v.iter().map(|x| x.ln()).collect())
        .collect();

    let mut rng = StdRng::seed_from_u64(opts.seed);
    // Accepted change points (indices into `kept`) with their p-values, kept sorted:
    // the segments are the gaps between them.
    let mut found: Vec<(usize, f64)> = Vec::new();
    let bounds = |found: &[(usize, f64)]| -> Vec<usize> {
        let mut b = vec![0];
        b.extend(found.iter().map(|f| f.0));
        b.push(kept.len());
        b
    };
    while let Some((k, p)) = next_change(&logs, &bounds(&found), opts, &mut rng) {
        found.push((k, p));
        found.sort_by_key(|f| f.0);
    }

    let bounds = bounds(&found);
    let values = |from: usize, to: usize| -> Vec<f64> {
        kept[from..to]
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .collect()
    };
    found
        .iter()
        .enumerate()
        .filter_map(|(j, &(k, p_value))| {
            let b = values(bounds[j], bounds[j + 1]);
            let a = values(bounds[j + 1], bounds[j + 2]);
            let r = ratio(&b, &a)?;
            Some(ChangePoint {
                index: kept[k].0,
                p_value,
                before: median(&b)?,
                after: median(&a)?,
                ratio: r.value,
                ci: r.ci,
            })
        })
        .collect()
}

/// One stage of the hierarchy: the best split of any segment between `bounds`, and its
/// p-value, if significant. Under "no further change" the observations within each
/// segment are exchangeable, so shuffling each segment (keeping its version sizes) and
/// taking the best split of any segment again gives the null distribution of the
/// maximum: it accounts for having picked the best of many boundaries and segments,
/// and the first stage that fails ends the search, so a flat history raises a false
/// alarm with probability about alpha rather than alpha per segment.
fn next_change(
    logs: &[Vec<f64>],
    bounds: &[usize],
    opts: &Options,
    rng: &mut StdRng,
) -> Option<(usize, f64)> {
    let min = opts.min_points.max(1);
    // (first version, flattened observations, observation offset of each version and
    // the end) of every segment long enough to split.
    let mut segments: Vec<(usize, Vec<f64>, Vec<usize>)> = bounds
        .windows(2)
        .filter(|w| w[1] - w[0] >= min.saturating_mul(2))
        .map(|w| {
            let versions = &logs[w[0]..w[1]];
            let mut pos = vec![0];
            pos.extend(versions.iter().scan(0, |n, v| {
                *n += v.len();
                Some(*n)
            }));
            (w[0], versions.concat(), pos)
        })
        .collect();
    let (start, k, observed) = segments
        .iter()
        .filter_map(|(start, z, pos)| best_split(z, pos, min).map(|(k, q)| (*start, k, q)))
        .max_by(|x, y| x.2.total_cmp(&y.2))?;
    // Relabellings that reproduce the observed groups sum the same distances in another
    // order; a last-bit difference must not turn a tie (e.g. a constant series) into a
    // win for the observed split.
    let tol = 1e-9 * (1.0 + observed.abs());
    let p_of = |count: usize| (count + 1) as f64 / (opts.permutations as f64 + 1.0);
    let mut count = 0;
    for _ in 0..opts.permutations {
        let best = segments
            .iter_mut()
            .filter_map(|(_, z, pos)| {
                z.shuffle(rng);
                best_split(z, pos, min).map(|(_, q)| q)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        if best >= observed - tol {
            count += 1;
            if p_of(count) > opts.alpha {
                return None; // cannot become significant: spare the other permutations
            }
        }
    }
    let p = p_of(count);
    (p <= opts.alpha).then_some((start + k, p))
}

/// The best change in one segment: z holds its observations, version by version, and
/// `pos` the offset where each version starts (plus the end). Following Matteson &
/// James, a change at version τ compares X = versions [0, τ) with Y = versions [τ, κ)
/// for every κ, not only the segment's end, so a short excursion (one odd version)
/// stands out instead of being averaged into everything after it; each side holds at
/// least `min` versions. The statistic is
/// Q = nm/(n+m) · (2/(nm) Σ|xᵢ−yⱼ| − Σ_{i<k}|xᵢ−xₖ|/C(n,2) − Σ_{j<k}|yⱼ−yₖ|/C(m,2)),
/// a within term being 0 for a single observation; the weight nm/(n+m) keeps a short
/// side's noisy distance from winning. Returns (τ, Q) of the largest Q.
fn best_split(z: &[f64], pos: &[usize], min: usize) -> Option<(usize, f64)> {
    let v = pos.len() - 1;
    let d = v + 1;
    // s[p·d + q]: Σ over version pairs u < p, w < q, u ≤ w, of the distances between
    // version u's and version w's observations, each unordered pair once. Then the sum
    // over pairs inside versions [p, q) is an O(1) difference.
    let mut s = vec![0.0; d * d];
    for u in 0..v {
        let xs = &z[pos[u]..pos[u + 1]];
        for w in 0..v {
            let block = if w < u {
                0.0
            } else {
                let ys = &z[pos[w]..pos[w + 1]];
                let sum: f64 = xs
                    .iter()
                    .map(|x| ys.iter().map(|y| (x - y).abs()).sum::<f64>())
                    .sum();
                if u == w {
                    sum / 2.0
                } else {
                    sum
                }
            };
            s[(u + 1) * d + w + 1] = block + s[u * d + w + 1] + s[(u + 1) * d + w] - s[u * d + w];
        }
    }
    let within = |p: usize, q: usize| s[q * d + q] - s[p * d + q] - s[q * d + p] + s[p * d + p];
    let mean = |sum: f64, n: f64| {
        if n >= 2.0 {
            sum / (n * (n - 1.0) / 2.0)
        } else {
            0.0
        }
    };
    let mut best: Option<(usize, f64)> = None;
    for t in min..v {
        let (wx, n) = (within(0, t), pos[t] as f64);
        for k in t + min..=v {
            let (wy, m) = (within(t, k), (pos[k] - pos[t]) as f64);
            let between = within(0, k) - wx - wy;
            let q = n * m / (n + m) * (2.0 * between / (n * m) - mean(wx, n) - mean(wy, m));
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((t, q));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ±2% uniform pseudo-noise (splitmix64), deterministic so failures reproduce.
    fn noise(k: u64) -> f64 {
        let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        1.0 + 0.04 * ((z >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
    }

    /// One version per level, `repeats` noisy values each; `salt` picks another draw.
    fn noisy(levels: &[f64], repeats: usize, salt: u64) -> Vec<Vec<f64>> {
        levels
            .iter()
            .enumerate()
            .map(|(v, l)| {
                (0..repeats)
                    .map(|r| l * noise(salt * 1_000_003 + (v * repeats + r) as u64))
                    .collect()
            })
            .collect()
    }

    fn steps(parts: &[(f64, usize)]) -> Vec<f64> {
        parts
            .iter()
            .flat_map(|&(l, n)| std::iter::repeat_n(l, n))
            .collect()
    }

    fn indices(cps: &[ChangePoint]) -> Vec<usize> {
        cps.iter().map(|c| c.index).collect()
    }

    #[test]
    fn flat_noisy_series_has_no_change_point() {
        let s = noisy(&[100.0; 12], 3, 0);
        assert_eq!(detect(&s, &Options::default()), vec![]);
    }

    #[test]
    fn flat_series_false_alarms_stay_near_alpha() {
        // 40 independent flat histories: ~2 false alarms expected at alpha = 0.05;
        // more than 6 would mean the permutation null is miscalibrated.
        let alarms = (1..=40)
            .filter(|&salt| !detect(&noisy(&[100.0; 12], 3, salt), &Options::default()).is_empty())
            .count();
        assert!(alarms <= 6, "{alarms} of 40 flat series had a change point");
    }

    #[test]
    fn one_step_is_found_at_its_version() {
        let s = noisy(&steps(&[(100.0, 7), (90.0, 5)]), 3, 0);
        let cps = detect(&s, &Options::default());
        assert_eq!(indices(&cps), vec![7], "{cps:?}");
        let c = &cps[0];
        assert!(c.p_value <= 0.05);
        assert!((c.ratio - 0.9).abs() < 0.02, "{c:?}");
        assert!(
            (c.before - 100.0).abs() < 2.0 && (c.after - 90.0).abs() < 2.0,
            "{c:?}"
        );
        let (lo, hi) = c.ci.unwrap();
        assert!(lo < c.ratio && c.ratio < hi && hi < 1.0, "{c:?}");
    }

    #[test]
    fn two_steps_are_both_found() {
        let s = noisy(&steps(&[(100.0, 4), (90.0, 5), (100.0, 3)]), 3, 0);
        let cps = detect(&s, &Options::default());
        assert_eq!(indices(&cps), vec![4, 9], "{cps:?}");
        assert!((cps[0].ratio - 0.9).abs() < 0.02, "{cps:?}");
        assert!((cps[1].ratio - 1.0 / 0.9).abs() < 0.02, "{cps:?}");
    }

    #[test]
    fn an_outlier_version_within_noise_is_not_a_change() {
        // Version 5 is 1% high: less than the ±2% noise between repeats.
        let mut levels = [100.0; 12];
        levels[5] = 101.0;
        let cps = detect(&noisy(&levels, 3, 0), &Options::default());
        assert_eq!(cps, vec![], "{cps:?}");
    }

    #[test]
    fn a_large_spike_is_its_start_and_its_end() {
        // One version 30% high is a real change and a change back; with min_points = 2
        // a single version cannot be a segment, so it cannot be reported as both.
        let mut levels = [100.0; 12];
        levels[5] = 130.0;
        let s = noisy(&levels, 3, 0);
        let cps = detect(&s, &Options::default());
        assert_eq!(indices(&cps), vec![5, 6], "{cps:?}");
        assert!((cps[0].ratio - 1.3).abs() < 0.03, "{cps:?}");
        assert!((cps[1].ratio - 1.0 / 1.3).abs() < 0.03, "{cps:?}");
        let opts = Options {
            min_points: 2,
            ..Options::default()
        };
        let at = indices(&detect(&s, &opts));
        assert!(
            at.windows(2).all(|w| w[1] - w[0] >= 2) && !(at.contains(&5) && at.contains(&6)),
            "{at:?}"
        );
    }

    #[test]
    fn single_repeat_series_finds_a_step() {
        let s = noisy(&steps(&[(100.0, 12), (90.0, 12)]), 1, 0);
        let cps = detect(&s, &Options::default());
        assert_eq!(indices(&cps), vec![12], "{cps:?}");
        assert!((cps[0].ratio - 0.9).abs() < 0.02, "{cps:?}");
        assert!(cps[0].ci.is_some_and(|(_, hi)| hi < 1.0), "{cps:?}");
    }

    #[test]
    fn constant_series_has_no_change() {
        assert_eq!(
            detect(&vec![vec![100.0; 3]; 10], &Options::default()),
            vec![]
        );
        assert_eq!(detect(&vec![vec![100.0]; 10], &Options::default()), vec![]);
    }

    #[test]
    fn min_points_keeps_segments_long() {
        let s = noisy(&steps(&[(100.0, 2), (80.0, 10)]), 3, 0);
        assert_eq!(indices(&detect(&s, &Options::default())), vec![2]);
        let opts = Options {
            min_points: 3,
            ..Options::default()
        };
        assert!(
            detect(&s, &opts).iter().all(|c| c.index >= 3),
            "{:?}",
            detect(&s, &opts)
        );
    }

    #[test]
    fn bad_values_and_empty_versions_keep_caller_indices() {
        let mut s = noisy(&steps(&[(100.0, 7), (90.0, 5)]), 3, 0);
        s[2].push(f64::NAN);
        s[3] = vec![];
        s[9] = vec![0.0, -1.0, f64::INFINITY];
        assert_eq!(indices(&detect(&s, &Options::default())), vec![7]);
        // An empty version at the boundary: the change is at the first version with data.
        s[7] = vec![];
        assert_eq!(indices(&detect(&s, &Options::default())), vec![8]);
    }

    #[test]
    fn nothing_to_split() {
        let o = Options::default();
        assert_eq!(detect(&[], &o), vec![]);
        assert_eq!(detect(&[vec![1.0, 2.0]], &o), vec![]);
        assert_eq!(detect(&[vec![], vec![f64::NAN]], &o), vec![]);
        let none = Options {
            permutations: 0,
            ..o
        };
        let s = noisy(&steps(&[(100.0, 7), (90.0, 5)]), 3, 0);
        assert_eq!(detect(&s, &none), vec![]);
        let huge = Options {
            min_points: usize::MAX,
            ..o
        };
        assert_eq!(detect(&s, &huge), vec![]);
    }

    #[test]
    fn same_seed_same_answer() {
        let s = noisy(&steps(&[(100.0, 4), (95.0, 4), (100.0, 4)]), 3, 5);
        let o = Options {
            seed: 9,
            ..Options::default()
        };
        assert_eq!(detect(&s, &o), detect(&s, &o));
    }

    #[test]
    fn statistic_matches_hand_computation() {
        // Versions {0, 1} and {3}: between 2/2 · (3 + 2) = 5, within X 1/1, within Y 0;
        // Q = 2·1/3 · (5 − 1) = 8/3.
        let (t, q) = best_split(&[0.0, 1.0, 3.0], &[0, 2, 3], 1).unwrap();
        assert_eq!(t, 1);
        assert!((q - 8.0 / 3.0).abs() < 1e-12, "{q}");
        // Same values as three versions: (τ=2, κ=3) is that split again and beats
        // {0}|{1} (Q = 1) and {0}|{1, 3} (Q = 2/3 · (4 − 2) = 4/3).
        let (t, q) = best_split(&[0.0, 1.0, 3.0], &[0, 1, 2, 3], 1).unwrap();
        assert_eq!(t, 2);
        assert!((q - 8.0 / 3.0).abs() < 1e-12, "{q}");
    }

    #[test]
    fn a_spike_is_compared_with_itself_not_with_the_rest() {
        // 0 0 0 5 0 0: against everything after it the spike averages out (Q = 0 for
        // κ = end), but X = {0,0,0}, Y = {5} gives Q = 3/4 · 2·15/3 = 7.5.
        let (t, q) =
            best_split(&[0.0, 0.0, 0.0, 5.0, 0.0, 0.0], &[0, 1, 2, 3, 4, 5, 6], 1).unwrap();
        assert_eq!(t, 3);
        assert!((q - 7.5).abs() < 1e-12, "{q}");
    }
}
