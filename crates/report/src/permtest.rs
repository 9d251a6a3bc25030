//! Whether two sets of repeats differ by more than their own noise, without assuming
//! how benchmark figures are distributed (they are skewed and often bimodal, so a t
//! test's normality is a guess): a two-sample randomisation test. The statistic is the
//! difference of mean logs, because throughputs and costs are positive and compared as
//! ratios (×1.1 and ÷1.1 are equally far from "no change").

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Two-sided p-value for "`a` and `b` come from the same distribution", with the
/// statistic |mean(ln a) − mean(ln b)|.
///
/// Small samples (the usual 3–5 repeats) have few distinct splits, so when
/// C(|a|+|b|, |a|) ≤ `permutations` every split is enumerated and the p-value is exact;
/// otherwise `permutations` seeded random relabellings give the (count+1)/(n+1)
/// estimate, which never claims p = 0 from a finite sample and is the same for the
/// same `seed`, so reports are reproducible.
///
/// `None` when either side is empty or holds a value that is not a positive finite
/// number: a log ratio of such values means nothing, and silently dropping them would
/// hide a broken measurement.
pub fn permutation_p(a: &[f64], b: &[f64], permutations: usize, seed: u64) -> Option<f64> {
    let valid = |x: &f64| x.is_finite() && *x > 0.0;
    if a.is_empty() || b.is_empty() || !a.iter().chain(b).all(valid) {
        return None;
    }
    let pooled: Vec<f64> = a.iter().chain(b).map(|x| x.ln()).collect();
    let (na, n) = (a.len(), pooled.len());
    let total: f64 = pooled.iter().sum();
    let stat = |sum_a: f64| (sum_a / na as f64 - (total - sum_a) / (n - na) as f64).abs();
    let observed = stat(pooled[..na].iter().sum());
    // The same values summed in another order differ in the last bits; a relabelling
    // that reproduces the observed split (or its mirror) must count as a tie.
    let largest = pooled.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let tol = 1e-12 * n as f64 * largest;
    let extreme = |sum_a: f64| stat(sum_a) >= observed - tol;

    if let Some(splits) = splits_at_most(n, na, permutations) {
        let mut idx: Vec<usize> = (0..na).collect();
        let mut count = 0usize;
        loop {
            if extreme(idx.iter().map(|&i| pooled[i]).sum()) {
                count += 1;
            }
            // Next combination in lexicographic order.
            let Some(i) = (0..na).rev().find(|&i| idx[i] < n - na + i) else {
                break;
            };
            idx[i] += 1;
            for j in i + 1..na {
                idx[j] = idx[j - 1] + 1;
            }
        }
        return Some(count as f64 / splits as f64);
    }

    let mut rng = StdRng::seed_from_u64(seed);
    let mut shuffled = pooled;
    let mut count = 0usize;
    for _ in 0..permutations {
        shuffled.shuffle(&mut rng);
        if extreme(shuffled[..na].iter().sum()) {
            count += 1;
        }
    }
    Some((count + 1) as f64 / (permutations as f64 + 1.0))
}

/// C(n, k) when it is at most `limit`, else `None`: the caller only needs to know
/// whether exact enumeration is affordable, and the full count can overflow any
/// integer for a few hundred repeats.
fn splits_at_most(n: usize, k: usize, limit: usize) -> Option<u128> {
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        // C(n, i) · (n − i) / (i + 1) = C(n, i + 1), exact in integers; it grows with
        // i up to n/2, so once past the limit it stays past it.
        c = c * (n - i) as u128 / (i + 1) as u128;
        if c > limit as u128 {
            return None;
        }
    }
    (c <= limit as u128).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_samples_are_not_different() {
        let s = [100.0, 102.0, 98.0, 101.0];
        // Exact (C(8,4) = 70 splits) and sampled (C(20,10) > 999) paths.
        assert_eq!(permutation_p(&s, &s, 1000, 1), Some(1.0));
        let t: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        let p = permutation_p(&t, &t, 999, 1).unwrap();
        assert!(p > 0.9, "{p}");
    }

    #[test]
    fn well_separated_samples_are_different() {
        let a: Vec<f64> = (0..10).map(|i| 100.0 + i as f64 * 0.3).collect();
        let b: Vec<f64> = (0..10).map(|i| 90.0 + i as f64 * 0.3).collect();
        let p = permutation_p(&a, &b, 999, 7).unwrap();
        assert!(p < 0.01, "{p}");
        // The estimator's floor: no relabelling beats the observed one (or its mirror,
        // which is ~1/184756 of draws), so p is 1/1000 or 2/1000.
        assert!(p >= 1.0 / 1000.0, "{p}");
    }

    #[test]
    fn exact_enumeration_matches_hand_count() {
        // 6 splits of {1,2,3,4} into two pairs; {1,2}|{3,4} and its mirror are the
        // most extreme, so p = 2/6.
        let p = permutation_p(&[1.0, 2.0], &[3.0, 4.0], 100, 0).unwrap();
        assert!((p - 2.0 / 6.0).abs() < 1e-12, "{p}");
        // Unequal sizes: 3 splits, {1}|{2,3} is alone the most extreme
        // (|0 − ln6/2| = 0.896 against 0.144 and 0.752), so p = 1/3.
        let p = permutation_p(&[1.0], &[2.0, 3.0], 100, 0).unwrap();
        assert!((p - 1.0 / 3.0).abs() < 1e-12, "{p}");
        // Exactly at the limit is still exact: C(4,2) = 6 ≤ 6.
        let p = permutation_p(&[1.0, 2.0], &[3.0, 4.0], 6, 0).unwrap();
        assert!((p - 2.0 / 6.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn sampled_estimate_approaches_exact_value() {
        // Overlapping samples with a moderate p; C(16,8) = 12870 splits.
        let a = [100.0, 103.0, 98.0, 105.0, 101.0, 99.0, 104.0, 102.0];
        let b = [101.0, 97.0, 99.5, 96.0, 100.5, 98.5, 102.5, 95.0];
        let exact = permutation_p(&a, &b, 20_000, 0).unwrap();
        let sampled = permutation_p(&a, &b, 4_000, 3).unwrap();
        assert!(exact > 0.02 && exact < 0.5, "exact {exact}");
        // Binomial standard error at 4000 draws is below 0.008.
        assert!((exact - sampled).abs() < 0.03, "{exact} vs {sampled}");
    }

    #[test]
    fn seeded_draws_are_reproducible() {
        let a = [100.0, 103.0, 98.0, 105.0, 101.0, 99.0, 104.0, 102.0];
        let b = [101.0, 97.0, 99.5, 96.0, 100.5, 98.5, 102.5, 95.0];
        let p = |seed| permutation_p(&a, &b, 199, seed).unwrap();
        assert_eq!(p(42), p(42));
        // The seed is actually used: some other seed gives another estimate.
        assert!((0..10).any(|s| p(s) != p(42)));
    }

    #[test]
    fn bad_input_has_no_p() {
        assert_eq!(permutation_p(&[], &[1.0], 10, 0), None);
        assert_eq!(permutation_p(&[1.0], &[], 10, 0), None);
        assert_eq!(permutation_p(&[1.0, 0.0], &[2.0], 10, 0), None);
        assert_eq!(permutation_p(&[1.0], &[-2.0], 10, 0), None);
        assert_eq!(permutation_p(&[f64::NAN], &[2.0], 10, 0), None);
        assert_eq!(permutation_p(&[1.0], &[f64::INFINITY], 10, 0), None);
    }

    #[test]
    fn split_counts() {
        assert_eq!(splits_at_most(4, 2, 100), Some(6));
        assert_eq!(splits_at_most(20, 10, 184_756), Some(184_756));
        assert_eq!(splits_at_most(20, 10, 184_755), None);
        assert_eq!(splits_at_most(1000, 500, usize::MAX), None);
        assert_eq!(splits_at_most(5, 5, 1), Some(1));
    }
}
