//! The statistics behind "relative to base": medians, and a 95% confidence interval
//! for the ratio other/base from repeats, computed on log values with Welch's t so the
//! interval is symmetric in ratio terms (×1.1 and ÷1.1 are equally far from 1).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Median of `v` (mean of the middle two for even lengths); `None` if empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, var)
}

/// A ratio other/base with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// median(other) / median(base).
    pub value: f64,
    /// 95% interval of the ratio of geometric means; `None` with fewer than two
    /// repeats on either side.
    pub ci: Option<(f64, f64)>,
}

impl Ratio {
    /// Whether the difference is significant: the interval excludes 1. Without an
    /// interval nothing can be claimed, so it is not.
    pub fn significant(&self) -> bool {
        self.ci.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0)
    }
}

/// The ratio of `other` to `base`, or `None` when either side has no positive value
/// (a ratio of or to nothing means nothing).
pub fn ratio(base: &[f64], other: &[f64]) -> Option<Ratio> {
    ratio_at(base, other, 0.95)
}

/// [`ratio`] with its interval at confidence `level` (e.g. 0.95): a sequential rule
/// that looks at a growing sample many times spends a smaller share of its error at
/// each look, so each look's interval is wider than 95%.
pub fn ratio_at(base: &[f64], other: &[f64], level: f64) -> Option<Ratio> {
    let b = median(base)?;
    let o = median(other)?;
    if b <= 0.0 || o < 0.0 || !b.is_finite() || !o.is_finite() {
        return None;
    }
    let value = o / b;
    let ci = if base.len() >= 2 && other.len() >= 2 && base.iter().chain(other).all(|x| *x > 0.0) {
        let lb: Vec<f64> = base.iter().map(|x| x.ln()).collect();
        let lo: Vec<f64> = other.iter().map(|x| x.ln()).collect();
        let (mb, vb) = mean_var(&lb);
        let (mo, vo) = mean_var(&lo);
        let (nb, no) = (lb.len() as f64, lo.len() as f64);
        let d = mo - mb;
        let se2 = vb / nb + vo / no;
        if se2 <= 0.0 {
            Some((d.exp(), d.exp()))
        } else {
            // Welch–Satterthwaite degrees of freedom.
            let df =
                se2.powi(2) / ((vb / nb).powi(2) / (nb - 1.0) + (vo / no).powi(2) / (no - 1.0));
            let t = StudentsT::new(0.0, 1.0, df)
                .map(|d| d.inverse_cdf(0.5 + level / 2.0))
                .unwrap_or(f64::INFINITY);
            let half = t * se2.sqrt();
            Some(((d - half).exp(), (d + half).exp()))
        }
    } else {
        None
    };
    Some(Ratio { value, ci })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn identical_distributions_are_not_significant() {
        let r = ratio(&[100.0, 102.0, 98.0], &[101.0, 99.0, 100.0]).unwrap();
        assert!(!r.significant(), "{r:?}");
        let same = ratio(&[5.0, 5.0], &[5.0, 5.0]).unwrap();
        assert_eq!(same.ci, Some((1.0, 1.0)));
        assert!(!same.significant());
    }

    #[test]
    fn a_ten_percent_shift_with_small_noise_is_significant() {
        let r = ratio(&[100.0, 101.0, 99.0], &[110.0, 111.0, 109.0]).unwrap();
        assert!((r.value - 1.1).abs() < 1e-12);
        assert!(r.significant(), "{r:?}");
    }

    #[test]
    fn interval_matches_hand_computation() {
        // base ln: ln 100, ln 110 ; other ln: ln 120, ln 130
        let (b1, b2, o1, o2) = (100f64.ln(), 110f64.ln(), 120f64.ln(), 130f64.ln());
        let d = (o1 + o2) / 2.0 - (b1 + b2) / 2.0;
        let vb = (b1 - b2).powi(2) / 2.0; // sample variance of two values
        let vo = (o1 - o2).powi(2) / 2.0;
        let se = (vb / 2.0 + vo / 2.0).sqrt();
        let df = (vb / 2.0 + vo / 2.0).powi(2) / ((vb / 2.0).powi(2) + (vo / 2.0).powi(2));
        // t(0.975) at this df (≈1.99), from statrs; checked against a t table below.
        let t = StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975);
        assert!(df > 1.9 && df < 2.0 && t > 4.3 && t < 4.5, "df {df} t {t}");
        let r = ratio(&[100.0, 110.0], &[120.0, 130.0]).unwrap();
        assert!((r.value - 125.0 / 105.0).abs() < 1e-12);
        let (lo, hi) = r.ci.unwrap();
        assert!((lo - (d - t * se).exp()).abs() < 1e-9);
        assert!((hi - (d + t * se).exp()).abs() < 1e-9);
        // t(0.975, df=2) is 4.303 in every table; df=1.99 is a little above it.
        let t2 = StudentsT::new(0.0, 1.0, 2.0).unwrap().inverse_cdf(0.975);
        assert!((t2 - 4.3027).abs() < 1e-3);
    }

    #[test]
    fn single_repeats_have_no_interval_and_zero_base_has_no_ratio() {
        let r = ratio(&[100.0], &[150.0]).unwrap();
        assert_eq!(r.ci, None);
        assert!(!r.significant());
        assert_eq!(ratio(&[0.0], &[1.0]), None);
        assert_eq!(ratio(&[], &[1.0]), None);
    }
}
