//! What a verdict could have seen: the smallest change it would find, at its level and
//! with [`POWER`], from the scatter it measured.
//!
//! "Not significant" on a quiet host and on a noisy one read alike, yet one may have
//! been able to see 2% and the other only 20%. So every "no change" verdict (`ab`,
//! `check`, `compare`) carries its reach: the minimum detectable effect of the test it
//! ran, (t₁₋α/₂ + t_power) · sd · √(2/n) on log values for two samples of n,
//! (t₁₋α/₂ + t_power) · sd / √n for n pairs, with the t quantiles at the test's degrees
//! of freedom (the usual approximation of the noncentral t; Welch's are fewer than the
//! pooled test's, see `two_sample_mde`), and the count of repeats, slices or rounds that would see a
//! target. A blocked check judged against a learned floor reads the floor instead:
//! the floor is 1.96 sd of two blocks' difference, so its reach is (1.96 + z_power)/1.96
//! of it, and no count of repeats in a block lowers it.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The change a "no difference" line says what it would take to see: check's default
/// threshold.
pub const REACH_TARGET: f64 = 0.05;

/// The power every reach is stated at: a change of the reach's size is found 80% of the
/// time (the convention of power analysis; bench/error-rates.sh's MODE=power measures it).
pub const POWER: f64 = 0.8;

/// What the reach's `n` counts, so its sentence and the count it asks for are in the
/// unit the user types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Repeats a side (`--repeat`), judged as two samples (Welch).
    Repeats,
    /// Interleaved slices a side (`plumb ab --rounds`), two samples.
    Slices,
    /// Blocks of two duet rounds (`plumb ab --duet`), paired; asked for in rounds.
    DuetBlocks,
    /// Blocks of repeats judged against a learned noise floor: no count lowers it.
    FloorBlocks,
}

/// The smallest change a verdict could have seen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reach {
    /// The relative change found with probability `power` (0.09: 9%), either way.
    pub mde: f64,
    /// The power it is stated at.
    pub power: f64,
    /// The test's two-sided false-positive rate.
    pub alpha: f64,
    /// The scatter it rests on: the sd of one unit's log value (a repeat's, a block's log
    /// ratio), or for a floor the sd of two blocks' log difference.
    pub sd: f64,
    /// Units the verdict had (a side's, or pairs).
    pub n: usize,
    /// What `n` counts.
    pub unit: Unit,
}

fn t(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|d| d.inverse_cdf(p))
        .unwrap_or(f64::INFINITY)
}

fn z(p: f64) -> f64 {
    Normal::new(0.0, 1.0)
        .map(|d| d.inverse_cdf(p))
        .unwrap_or(f64::INFINITY)
}

fn sd_of(v: &[f64]) -> Option<(f64, usize)> {
    let l: Vec<f64> = v
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect();
    if l.len() < 2 || l.len() != v.len() {
        return None;
    }
    let n = l.len() as f64;
    let m = l.iter().sum::<f64>() / n;
    Some((
        (l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
        l.len(),
    ))
}

impl Reach {
    /// Two samples of positive values (repeats or interleaved slices a side) judged at
    /// `alpha`: the pooled sd of their logs; `None` with fewer than two a side.
    pub fn two_sample(base: &[f64], new: &[f64], alpha: f64, unit: Unit) -> Option<Reach> {
        let (sb, nb) = sd_of(base)?;
        let (sn, nn) = sd_of(new)?;
        let df = (nb + nn - 2) as f64;
        let sd = (((nb - 1) as f64 * sb * sb + (nn - 1) as f64 * sn * sn) / df).sqrt();
        // The reach is stated for the smaller side, as equal sides of it: what more
        // repeats on the short side would buy is what `needed` says.
        let n = nb.min(nn);
        Some(Reach {
            mde: Self::two_sample_mde(sd, n, alpha),
            power: POWER,
            alpha,
            sd,
            n,
            unit,
        })
    }

    /// Pairs (a duet's blocks of two rounds) whose log ratios scatter by `sd`, `n` of
    /// them, judged by the paired t test at `alpha`.
    pub fn paired(sd: f64, n: usize, alpha: f64) -> Option<Reach> {
        (n >= 2 && sd.is_finite() && sd >= 0.0).then(|| Reach {
            mde: Self::paired_mde(sd, n, alpha),
            power: POWER,
            alpha,
            sd,
            n,
            unit: Unit::DuetBlocks,
        })
    }

    /// A check judged against a learned floor: two blocks differ by more than the floor
    /// 5% of the time when nothing changed.
    pub fn floor(floor: &crate::noise::Floor) -> Reach {
        let sd = (1.0 + floor.floor).ln() / 1.96;
        Reach {
            mde: ((1.96 + z(POWER)) * sd).exp() - 1.0,
            power: POWER,
            alpha: 0.05,
            sd,
            n: floor.groups,
            unit: Unit::FloorBlocks,
        }
    }

    fn two_sample_mde(sd: f64, n: usize, alpha: f64) -> f64 {
        // Welch's test estimates its degrees of freedom from the two variances, so it
        // has fewer than the pooled test's 2n − 2 (n − 1 at the least): at 1.5 (n − 1)
        // the stated power held within 2 points from 3 to 20 a side on generated
        // series (at 2n − 2 it fell to 68% at 3 a side), tested below.
        let df = 1.5 * (n as f64 - 1.0);
        let k = t(1.0 - alpha / 2.0, df) + t(POWER, df);
        (k * sd * (2.0 / n as f64).sqrt()).exp() - 1.0
    }

    fn paired_mde(sd: f64, n: usize, alpha: f64) -> f64 {
        let df = (n - 1) as f64;
        let k = t(1.0 - alpha / 2.0, df) + t(POWER, df);
        (k * sd / (n as f64).sqrt()).exp() - 1.0
    }

    /// Units (a side's, or pairs) that would see `target` (0.05: 5%) at this scatter,
    /// level and power; `None` for a floor (more repeats in a block do not lower it) or
    /// beyond 100,000.
    pub fn needed(&self, target: f64) -> Option<usize> {
        let mde = |n: usize| match self.unit {
            Unit::Repeats | Unit::Slices => Self::two_sample_mde(self.sd, n, self.alpha),
            Unit::DuetBlocks => Self::paired_mde(self.sd, n, self.alpha),
            Unit::FloorBlocks => f64::INFINITY,
        };
        if self.unit == Unit::FloorBlocks || target <= 0.0 {
            return None;
        }
        // mde falls monotonically with n: a doubling search, then a bisection.
        let mut hi = 2;
        while mde(hi) > target {
            hi *= 2;
            if hi > 100_000 {
                return None;
            }
        }
        let mut lo = hi / 2;
        if lo < 2 {
            return Some(2);
        }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if mde(mid) > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(hi)
    }

    /// "could see 9.1% or more (80% power, 5% level; scatter 3.2% a repeat, 3 a side);
    /// 5% needs about 9 repeats a side": the reach, and what a `target` would need.
    pub fn sentence(&self, target: Option<f64>) -> String {
        let pct = |x: f64| format!("{:.1}%", 100.0 * x);
        let (each, had) = match self.unit {
            Unit::Repeats => ("a repeat", format!("{} repeats a side", self.n)),
            Unit::Slices => ("a slice", format!("{} slices a side", self.n)),
            Unit::DuetBlocks => ("a block of two rounds", format!("{} rounds", 2 * self.n)),
            Unit::FloorBlocks => (
                "between two blocks",
                format!("the floor of {} blocks", self.n),
            ),
        };
        let mut s = format!(
            "could see {} or more ({:.0}% power, {} level; scatter {} {each}, {had})",
            pct(self.mde),
            100.0 * self.power,
            pct(self.alpha),
            pct(self.sd.exp() - 1.0),
        );
        if let Some(target) = target.filter(|t| *t < self.mde) {
            match (self.unit, self.needed(target)) {
                (Unit::FloorBlocks, _) => s.push_str(&format!(
                    "; {} needs interleaved slices (plumb ab --duet), not more repeats",
                    pct(target)
                )),
                (Unit::DuetBlocks, Some(n)) => {
                    s.push_str(&format!("; {} needs about {} rounds", pct(target), 2 * n))
                }
                (Unit::Slices, Some(n)) => {
                    s.push_str(&format!("; {} needs about {n} slices a side", pct(target)))
                }
                (Unit::Repeats, Some(n)) => {
                    s.push_str(&format!("; {} needs about {n} repeats a side", pct(target)))
                }
                (_, None) => s.push_str(&format!(
                    "; {} is out of reach at this scatter",
                    pct(target)
                )),
            }
        }
        s
    }
}

/// The interval half-width (relative, as [`crate::sequential::precision`] reads one)
/// at which a paired test of `n` pairs at confidence `level` reaches `target` at
/// [`POWER`]: the interval's half-width is t_level · se and the reach (t_level + t_power)
/// · se, so an interval this narrow means the test could see `target`. What `plumb ab
/// --until PCT --power` waits for.
pub fn width_for(target: f64, n: usize, level: f64) -> f64 {
    let df = n.saturating_sub(1).max(1) as f64;
    let ta = t(0.5 + level / 2.0, df);
    ((1.0 + target).ln() * ta / (ta + t(POWER, df))).exp() - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal as N};

    #[test]
    fn the_reach_matches_the_textbook_formula() {
        // Two samples, sd 0.05, 10 a side, 5%: (t.975 + t.8)·0.05·√0.2 at Welch's
        // 1.5 (n − 1) = 13.5 degrees of freedom (between t's 13 and 14 table rows:
        // 2.160 + 0.870 and 2.145 + 0.868).
        let k = t(0.975, 13.5) + t(POWER, 13.5);
        assert!(k > 2.145 + 0.868 && k < 2.160 + 0.870, "{k}");
        let want = (k * 0.05 * 0.2f64.sqrt()).exp() - 1.0;
        let got = Reach::two_sample_mde(0.05, 10, 0.05);
        assert!((got - want).abs() < 1e-5, "{got} {want}");
        // Pairs: sd 0.02, 5 blocks: (t.975,4 + t.8,4)·0.02/√5.
        let k = 2.776_445 + 0.940_965;
        let want = (k * 0.02 / 5f64.sqrt()).exp() - 1.0;
        let got = Reach::paired(0.02, 5, 0.05).unwrap().mde;
        assert!((got - want).abs() < 1e-5, "{got} {want}");
        // A 5% floor: sd of the difference ln(1.05)/1.96, reach ×(1.96 + 0.8416)/1.96.
        let f = crate::noise::Floor {
            floor: 0.05,
            aa: 0.0,
            groups: 6,
        };
        let r = Reach::floor(&f);
        let want = (1.05f64.ln() * (1.96 + 0.841_621) / 1.96).exp() - 1.0;
        assert!((r.mde - want).abs() < 1e-5, "{r:?}");
        assert_eq!(r.needed(0.01), None);
    }

    #[test]
    fn needed_is_the_least_count_whose_reach_is_the_target() {
        let r = Reach::paired(0.03, 5, 0.05).unwrap();
        let n = r.needed(0.02).unwrap();
        assert!(Reach::paired_mde(0.03, n, 0.05) <= 0.02);
        assert!(Reach::paired_mde(0.03, n - 1, 0.05) > 0.02);
        let s = r.sentence(Some(0.02));
        assert!(
            s.contains(&format!("2.0% needs about {} rounds", 2 * n)),
            "{s}"
        );
        // A target already in reach asks for nothing.
        assert!(!r.sentence(Some(0.5)).contains("needs"));
        // Too few values: no reach.
        assert!(Reach::two_sample(&[1.0], &[1.0, 2.0], 0.05, Unit::Repeats).is_none());
        assert!(Reach::paired(0.01, 1, 0.05).is_none());
    }

    /// The stated power holds: changes of the reach's size, drawn at a known scatter, are
    /// found by the paired t test about 80% of the time (and by Welch's two-sample test).
    #[test]
    fn changes_of_the_reach_s_size_are_found_at_the_stated_power() {
        let mut rng = StdRng::seed_from_u64(59);
        let sd = 0.03;
        let noise = N::new(0.0, sd).unwrap();
        for n in [5usize, 10, 20] {
            let mde = Reach::paired(sd, n, 0.05).unwrap().mde;
            let trials = 2000;
            let found = (0..trials)
                .filter(|_| {
                    let a: Vec<f64> = (0..n).map(|_| 1.0).collect();
                    let b: Vec<f64> = (0..n)
                        .map(|_| ((1.0 + mde).ln() + noise.sample(&mut rng)).exp())
                        .collect();
                    crate::sequential::paired(&a, &b, 0.95)
                        .is_some_and(|p| p.p.is_some_and(|p| p <= 0.05))
                })
                .count();
            let share = found as f64 / trials as f64;
            assert!((share - POWER).abs() < 0.05, "n {n}: found {share}");
        }
        for n in [3usize, 5, 10] {
            let mde = Reach::two_sample_mde(sd, n, 0.05);
            let trials = 2000;
            let found = (0..trials)
                .filter(|_| {
                    let a: Vec<f64> = (0..n).map(|_| noise.sample(&mut rng).exp()).collect();
                    let b: Vec<f64> = (0..n)
                        .map(|_| ((1.0 + mde).ln() + noise.sample(&mut rng)).exp())
                        .collect();
                    crate::stats::ratio(&a, &b).is_some_and(|r| r.significant())
                })
                .count();
            let share = found as f64 / trials as f64;
            assert!((share - POWER).abs() < 0.06, "n {n}: found {share}");
        }
    }

    #[test]
    fn an_interval_of_width_for_could_see_its_target() {
        // At the width, reach = target: sd·t_a/√n = ln-width, so reach is the target.
        let (n, level) = (5, 0.95);
        let w = width_for(0.05, n, level);
        let ta = t(0.975, 4.0);
        let sd = (1.0 + w).ln() / ta * (n as f64).sqrt();
        let r = Reach::paired(sd, n, 0.05).unwrap();
        assert!((r.mde - 0.05).abs() < 1e-9, "{r:?} width {w}");
        assert!(w < 0.05);
    }
}
