//! Judging a sample that grows, slice by slice, until the answer is known.
//!
//! A fixed number of slices a side wastes most of them on clear cases (a 20% change is
//! plain after three) and has too few for close ones. Looking after every slice and
//! stopping at the first interval that excludes 1 would, with a fixed 95% interval,
//! call an A/A pair "changed" far more often than 5%: every look is another chance.
//! So the error is *spent* across the looks (Lan and DeMets' alpha spending, with the
//! power family ρ = 2 of Kim and DeMets): the look with n slices a side of a cap N
//! spends α·((n/N)² − ((n−1)/N)²), and the first look everything below it. The looks'
//! shares sum to α, so by the union bound the chance that *any* look calls an A/A pair
//! changed is at most α, however the looks fall: the false-positive rate holds at every
//! look. Early looks spend little (a wide interval: only a large change stops there)
//! and the last ones most, which keeps the rule close to a fixed test at the cap.
//!
//! Duet slices (A and B at the same time, `plumb ab --duet`) come in pairs that share
//! their moment's interference, so they are judged paired: the log ratio of each pair,
//! with a one-sample t interval, over blocks of two rounds that swapped CPUs
//! ([`crossover`]); the rule's n then counts blocks. Interleaved slices are judged with Welch's interval on
//! the two sides' logs ([`crate::stats::ratio_at`]).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The verdict of pairs of slices run at the same time: each pair's B/A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Paired {
    /// exp(mean of ln(b/a)): the geometric mean of the pairs' ratios.
    pub ratio: f64,
    /// The interval of the ratio at the level asked for; `None` with one pair.
    pub ci: Option<(f64, f64)>,
    /// Two-sided p of the paired t test on the log ratios; `None` with one pair.
    pub p: Option<f64>,
    /// Pairs judged.
    pub n: usize,
    /// Standard deviation of the pairs' log ratios (≈ the relative scatter of a pair).
    pub sd: Option<f64>,
}

/// Pairs `a[i]`, `b[i]` judged on their log ratios at confidence `level`; `None` when
/// there is no pair or a value is not a positive finite number (a log ratio of such a
/// value means nothing, and dropping it would hide a broken slice).
pub fn paired(a: &[f64], b: &[f64], level: f64) -> Option<Paired> {
    let valid = |x: &f64| x.is_finite() && *x > 0.0;
    let n = a.len().min(b.len());
    if n == 0 || !a[..n].iter().chain(&b[..n]).all(valid) {
        return None;
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(a, b)| (b / a).ln()).collect();
    let m = d.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some(Paired {
            ratio: m.exp(),
            ci: None,
            p: None,
            n,
            sd: None,
        });
    }
    let var = d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    let se = (var / n as f64).sqrt();
    let (ci, p) = if se > 0.0 {
        let t = StudentsT::new(0.0, 1.0, n as f64 - 1.0).ok()?;
        let half = t.inverse_cdf(0.5 + level / 2.0) * se;
        let p = 2.0 * (1.0 - t.cdf((m / se).abs()));
        (((m - half).exp(), (m + half).exp()), p)
    } else {
        // Every pair the same ratio: no noise, so the interval is the point.
        ((m.exp(), m.exp()), if m == 0.0 { 1.0 } else { 0.0 })
    };
    Some(Paired {
        ratio: m.exp(),
        ci: Some(ci),
        p: Some(p),
        n,
        sd: Some(var.sqrt()),
    })
}

/// Duet rounds judged two at a time: a duet swaps the sides' CPUs every round, so a
/// neighbour that sits on one CPU (or a CPU that is slower) favours A in one round and
/// B in the next. Each block of two consecutive rounds is summarised by its geometric
/// means, `√(a₀a₁)` and `√(b₀b₁)`, whose log ratio is the mean of the two rounds' and
/// carries no CPU effect; the blocks are then [`paired`]. On the 2-vCPU VM a busy loop
/// pinned to one CPU made single rounds' ln(B/A) swing ±0.95 and blocks' by 1-3%.
/// A last round without its partner is left out. `n` counts blocks.
pub fn crossover(a: &[f64], b: &[f64], level: f64) -> Option<Paired> {
    let rounds = a.len().min(b.len()) / 2 * 2;
    let (ba, bb): (Vec<f64>, Vec<f64>) = (0..rounds / 2)
        .map(|k| {
            (
                (a[2 * k] * a[2 * k + 1]).sqrt(),
                (b[2 * k] * b[2 * k + 1]).sqrt(),
            )
        })
        .unzip();
    paired(&ba, &bb, level)
}

/// The relative half-width of an interval: √(hi/lo) − 1, so ±2% is 0.02 whatever the
/// ratio (the interval is symmetric in log terms).
pub fn precision((lo, hi): (f64, f64)) -> f64 {
    if lo > 0.0 && hi >= lo {
        (hi / lo).sqrt() - 1.0
    } else {
        f64::INFINITY
    }
}

/// The relative half-width of the interval of one side's level (the geometric mean of
/// `values`, e.g. a variant's repeats) at confidence `level`: a t interval on their
/// logs, as [`precision`] reads a ratio's. `None` with fewer than two positive values,
/// where one value says nothing about noise. What `--repeat N --until PCT` waits for.
pub fn spread(values: &[f64], level: f64) -> Option<f64> {
    if values.len() < 2 || !values.iter().all(|x| x.is_finite() && *x > 0.0) {
        return None;
    }
    let n = values.len() as f64;
    let l: Vec<f64> = values.iter().map(|x| x.ln()).collect();
    let m = l.iter().sum::<f64>() / n;
    let var = l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    let t = StudentsT::new(0.0, 1.0, n - 1.0).ok()?;
    let half = t.inverse_cdf(0.5 + level / 2.0) * (var / n).sqrt();
    Some(half.exp() - 1.0)
}

/// When to stop adding slices: an interval that excludes 1, or one at least as tight
/// as `target`, at the level the look may spend; never before `min` or after `cap`
/// slices a side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// The false-positive rate over all looks together.
    pub alpha: f64,
    /// The relative half-width that settles a verdict of "no change beyond ±target".
    pub target: f64,
    /// Slices a side of the first look.
    pub min: usize,
    /// Slices a side at most.
    pub cap: usize,
    /// Settle "no change" when the test could see a change of `target` at
    /// [`crate::power::POWER`] (`plumb ab --until PCT --power`), rather than when the
    /// interval is within ±target: a narrower interval, more slices, and a "no change"
    /// that says the change was not there rather than that it was not seen.
    #[serde(default)]
    pub power: bool,
}

/// Where a step stands at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Settled {
    /// The interval excludes 1: a change, at the rule's false-positive rate.
    Changed,
    /// The interval is inside ±target: no change as large as the target.
    Within,
    /// Neither yet.
    Open,
}

impl Rule {
    /// The share of `alpha` the look with `n` slices a side may spend (0 before
    /// `min`; the first look also takes what the looks before it would have).
    pub fn spent(&self, n: usize) -> f64 {
        if n < self.min || n > self.cap || self.cap == 0 {
            return 0.0;
        }
        let f = |k: usize| (k as f64 / self.cap as f64).powi(2);
        let before = if n == self.min { 0.0 } else { f(n - 1) };
        self.alpha * (f(n) - before)
    }

    /// The confidence level of the interval judged at the look with `n` slices a side.
    pub fn level(&self, n: usize) -> f64 {
        1.0 - self.spent(n)
    }

    /// Where an interval (at [`Rule::level`]) leaves a step, judged by its width.
    pub fn settles(&self, ci: Option<(f64, f64)>) -> Settled {
        match ci {
            Some((lo, hi)) if lo > 1.0 || hi < 1.0 => Settled::Changed,
            Some(ci) if precision(ci) <= self.target => Settled::Within,
            _ => Settled::Open,
        }
    }

    /// The relative half-width that settles "no change" at the look with `n` slices a
    /// side (pairs, or blocks): `target` itself, or under [`Rule::power`] the width at
    /// which the look's test could see `target` ([`crate::power::width_for`]).
    pub fn width(&self, n: usize) -> f64 {
        if self.power {
            crate::power::width_for(self.target, n, self.level(n))
        } else {
            self.target
        }
    }

    /// Where an interval at the look with `n` slices a side leaves a step: changed, or
    /// within [`Rule::width`], or open.
    pub fn settles_at(&self, ci: Option<(f64, f64)>, n: usize) -> Settled {
        match ci {
            Some((lo, hi)) if lo > 1.0 || hi < 1.0 => Settled::Changed,
            Some(ci) if precision(ci) <= self.width(n) => Settled::Within,
            _ => Settled::Open,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    #[test]
    fn the_looks_spend_alpha_exactly_once() {
        let r = Rule {
            alpha: 0.05,
            target: 0.02,
            min: 3,
            cap: 20,
            power: false,
        };
        let total: f64 = (0..=25).map(|n| r.spent(n)).sum();
        assert!((total - 0.05).abs() < 1e-12, "{total}");
        assert_eq!(r.spent(2), 0.0);
        assert_eq!(r.spent(21), 0.0);
        // Early looks spend little, late ones most.
        assert!(r.spent(4) < r.spent(5) && r.spent(19) < r.spent(20));
        // The first look takes what n = 1 and 2 would have: 9/400 of alpha.
        assert!((r.spent(3) - 0.05 * 9.0 / 400.0).abs() < 1e-15);
        assert!((r.level(20) - (1.0 - 0.05 * 39.0 / 400.0)).abs() < 1e-12);
    }

    #[test]
    fn spread_matches_a_hand_computation() {
        // ln values 0, ln 1.1, ln 0.9: sd 0.1001 (n − 1), t(0.975, 2 df) = 4.3027.
        let l = [0.0, 1.1f64.ln(), 0.9f64.ln()];
        let m = l.iter().sum::<f64>() / 3.0;
        let sd = (l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let want = (4.302_652_7 * sd / 3f64.sqrt()).exp() - 1.0;
        let got = spread(&[100.0, 110.0, 90.0], 0.95).unwrap();
        assert!((got - want).abs() < 1e-6, "{got} {want}");
        // Equal repeats: no spread; one value, or a broken one: no answer.
        assert_eq!(spread(&[5.0, 5.0, 5.0], 0.95), Some(0.0));
        assert_eq!(spread(&[5.0], 0.95), None);
        assert_eq!(spread(&[5.0, 0.0], 0.95), None);
        // A wider level is a wider interval.
        assert!(spread(&[100.0, 110.0, 90.0], 0.99).unwrap() > got);
    }

    #[test]
    fn paired_matches_a_hand_computation() {
        let a = [100.0, 200.0, 400.0];
        let b = [110.0, 200.0, 360.0];
        let d = [1.1f64.ln(), 0.0, 0.9f64.ln()];
        let m = d.iter().sum::<f64>() / 3.0;
        let sd = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let p = paired(&a, &b, 0.95).unwrap();
        assert!((p.ratio - m.exp()).abs() < 1e-12);
        assert!((p.sd.unwrap() - sd).abs() < 1e-12);
        // t(0.975, 2 df) = 4.3027.
        let (lo, hi) = p.ci.unwrap();
        assert!((hi.ln() - m - 4.3027 * sd / 3f64.sqrt()).abs() < 1e-3);
        assert!((m - lo.ln() - 4.3027 * sd / 3f64.sqrt()).abs() < 1e-3);
        assert!(p.p.unwrap() > 0.5, "{p:?}");
        assert_eq!(paired(&[1.0], &[2.0], 0.95).unwrap().ci, None);
        assert_eq!(paired(&[1.0, 0.0], &[2.0, 1.0], 0.95), None);
        assert_eq!(paired(&[], &[], 0.95), None);
    }

    #[test]
    fn crossover_blocks_cancel_a_slow_cpu() {
        // Whoever holds CPU 0 runs at half speed; CPUs swap every round; B is 3% slower.
        let a = [50.0, 100.0, 50.0, 100.0, 50.0, 100.0, 80.0];
        let b = [97.0, 48.5, 97.0, 48.5, 97.0, 48.5, 10.0];
        let per_round = paired(&a, &b, 0.95).unwrap();
        assert!(per_round.ci.unwrap().1 >= 1.0, "{per_round:?}");
        let c = crossover(&a, &b, 0.95).unwrap();
        assert_eq!(c.n, 3, "three blocks; the seventh round has no partner");
        assert!((c.ratio - 0.97).abs() < 1e-12, "{c:?}");
        assert_eq!(c.ci, Some((c.ratio, c.ratio)));
        assert_eq!(crossover(&a[..1], &b[..1], 0.95), None);
    }

    #[test]
    fn equal_pairs_have_a_point_interval() {
        let p = paired(&[100.0, 50.0], &[90.0, 45.0], 0.95).unwrap();
        let (lo, hi) = p.ci.unwrap();
        assert!((lo - 0.9).abs() < 1e-12 && (hi - 0.9).abs() < 1e-12);
        assert_eq!(p.p, Some(0.0));
    }

    /// Runs the rule on one generated trial of pairs whose log ratio is
    /// `shift + N(0, sd)`; returns (changed?, pairs used).
    fn trial(rng: &mut StdRng, rule: &Rule, shift: f64, sd: f64) -> (bool, usize) {
        let noise = Normal::new(0.0, sd).unwrap();
        // The machine's level swings 5% from slice to slice (drift both sides of a
        // pair share): pairing removes it.
        let drift = Normal::new(0.0f64, 0.05).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for n in 1..=rule.cap {
            let level = 1e6 * drift.sample(rng).exp();
            a.push(level);
            b.push(level * (shift + noise.sample(rng)).exp());
            if n < rule.min {
                continue;
            }
            let v = paired(&a, &b, rule.level(n)).unwrap();
            match rule.settles(v.ci) {
                Settled::Changed => return (true, n),
                Settled::Within => return (false, n),
                Settled::Open => {}
            }
        }
        (false, rule.cap)
    }

    #[test]
    fn stopping_early_keeps_the_false_positive_rate_at_every_look() {
        let mut rng = StdRng::seed_from_u64(7);
        // No precision target: the rule looks at every n up to the cap, the case most
        // prone to false positives.
        let rule = Rule {
            alpha: 0.05,
            target: 0.0,
            min: 3,
            cap: 20,
            power: false,
        };
        let trials = 4000;
        let fp = (0..trials)
            .filter(|_| trial(&mut rng, &rule, 0.0, 0.01).0)
            .count();
        assert!(
            (fp as f64) / (trials as f64) <= 0.05,
            "{fp} of {trials} A/A trials called changed"
        );
        // The naive rule (95% at every look) is what the spending protects against.
        let mut rng = StdRng::seed_from_u64(7);
        let naive = (0..trials)
            .filter(|_| {
                let noise = Normal::new(0.0, 0.01).unwrap();
                let d: Vec<f64> = (0..20).map(|_| noise.sample(&mut rng)).collect();
                (3..=20).any(|n| {
                    let b: Vec<f64> = d[..n].iter().map(|x| x.exp()).collect();
                    let p = paired(&vec![1.0; n], &b, 0.95).unwrap();
                    let (lo, hi) = p.ci.unwrap();
                    lo > 1.0 || hi < 1.0
                })
            })
            .count();
        assert!(
            naive > 2 * fp && naive as f64 / trials as f64 > 0.15,
            "naive {naive}, spent {fp}"
        );
    }

    #[test]
    fn a_clear_change_stops_early_and_a_small_one_is_found_by_the_cap() {
        let mut rng = StdRng::seed_from_u64(11);
        let rule = Rule {
            alpha: 0.05,
            target: 0.02,
            min: 3,
            cap: 10,
            power: false,
        };
        // 5% slower with 1% scatter a pair: found in every trial, well before the cap.
        let runs: Vec<(bool, usize)> = (0..500)
            .map(|_| trial(&mut rng, &rule, (0.95f64).ln(), 0.01))
            .collect();
        assert!(runs.iter().all(|r| r.0), "a 5% change missed");
        let median_n = {
            let mut n: Vec<usize> = runs.iter().map(|r| r.1).collect();
            n.sort_unstable();
            n[n.len() / 2]
        };
        assert!(median_n <= 5, "median pairs {median_n}");
        // A/A with the ±2% target stops, settled within it, long before the cap of 20.
        let rule = Rule { cap: 20, ..rule };
        let aa: Vec<(bool, usize)> = (0..500)
            .map(|_| trial(&mut rng, &rule, 0.0, 0.01))
            .collect();
        assert!(aa.iter().filter(|r| r.0).count() <= 25);
        assert!(aa.iter().filter(|r| r.1 < 20).count() > 450);
    }

    #[test]
    fn settles_reads_the_interval() {
        let rule = Rule {
            alpha: 0.05,
            target: 0.02,
            min: 3,
            cap: 10,
            power: false,
        };
        assert_eq!(rule.settles(Some((0.90, 0.97))), Settled::Changed);
        assert_eq!(rule.settles(Some((1.01, 1.03))), Settled::Changed);
        assert_eq!(rule.settles(Some((0.99, 1.01))), Settled::Within);
        assert_eq!(rule.settles(Some((0.95, 1.05))), Settled::Open);
        assert_eq!(rule.settles(None), Settled::Open);
        assert!((precision((0.98, 1.0 / 0.98)) - (1.0 / 0.98 - 1.0)).abs() < 1e-12);
    }
}
