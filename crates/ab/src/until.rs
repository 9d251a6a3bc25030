//! `--until PCT` for repeats (`plumb kv --repeat N`, `plumb run` of a suite): a variant
//! stops adding repeats once every measured step's ops/s is known to ±PCT, so a plan's
//! repeats go to the variants that are noisy instead of to every variant alike (the
//! Phoronix Test Suite repeats until the relative deviation is small, for the same
//! reason). `plumb ab --until` is the same idea for a difference between two sides.
//!
//! The interval at each look is taken at the level alpha spending allows that look
//! ([`plumb_report::sequential::Rule`], the one `plumb ab --until` uses), so the chance
//! that the interval a variant stopped at misses its true level stays at most 5% however
//! many looks were taken; a fixed 95% interval looked at after every repeat would stop
//! on a lucky narrow one far more often.

use plumb_report::sequential::{spread, Rule};
use plumb_report::Version;
use plumb_store::Store;

/// `2%`, `±2%`, `2` or `0.5%`: a relative precision, as a fraction.
pub fn parse_pct(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_start_matches('±').trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(format!(
            "{s:?}: give the interval's half-width in percent, e.g. 2% (above 0, below 100)"
        )),
    }
}

/// Repeats of the first look: two values say little about their noise.
pub const FIRST_LOOK: usize = 3;

/// Stops a variant when every measured step's ops/s is within ±target.
pub struct Precision {
    rule: Rule,
}

impl Precision {
    /// `target` as a fraction (0.02: ±2%), `cap` the repeats planned (--repeat).
    pub fn new(target: f64, cap: usize) -> Self {
        Precision {
            rule: Rule {
                alpha: 0.05,
                target,
                min: FIRST_LOOK,
                cap,
                power: false,
            },
        }
    }

    /// The widest step's precision at the look with `ids.len()` repeats, and its step.
    fn widest(&self, store: &Store, ids: &[i64]) -> Option<(String, f64)> {
        let v = Version {
            label: String::new(),
            runs: ids.iter().filter_map(|id| store.run(*id).ok()).collect(),
        };
        let level = self.rule.level(ids.len().max(self.rule.min));
        plumb_report::compare::measured_steps(v.runs.iter())
            .into_iter()
            .map(|step| {
                let values = plumb_report::compare::values(&v, &step, &|s| Some(s.ops_sec));
                let p = spread(&values, level).unwrap_or(f64::INFINITY);
                (step, p)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

impl plumb_runner::StopRule for Precision {
    fn settled(&self, store: &Store, variant: &str, ids: &[i64]) -> Option<String> {
        if ids.len() < self.rule.min || ids.len() >= self.rule.cap {
            return None;
        }
        let (step, p) = self.widest(store, ids)?;
        (p <= self.rule.target).then(|| {
            format!(
                "{variant}: settled after {} of {} repeats: every step's ops/s within ±{:.1}% \
                 (widest {step}, at the {:.1}% level this look may spend); the other {} skipped (--until)",
                ids.len(),
                self.rule.cap,
                100.0 * p,
                100.0 * self.rule.level(ids.len()),
                self.rule.cap - ids.len()
            )
        })
    }

    fn unsettled(&self, store: &Store, variant: &str, ids: &[i64]) -> String {
        match self.widest(store, ids) {
            Some((step, p)) if p <= self.rule.target => format!(
                "{variant}: {} repeats, every step's ops/s within ±{:.1}% (widest {step})",
                ids.len(),
                100.0 * p
            ),
            Some((step, p)) => format!(
                "{variant}: not settled at the cap of {} repeats: {step}'s ops/s is \
                 known to ±{:.1}%, not ±{:.1}%",
                ids.len(),
                100.0 * p,
                100.0 * self.rule.target
            ),
            None => format!(
                "{variant}: {} repeats, no measured step to judge",
                ids.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_as_fractions_and_bad_ones_say_what_to_give() {
        assert_eq!(parse_pct("2%"), Ok(0.02));
        assert_eq!(parse_pct("±0.5%"), Ok(0.005));
        assert_eq!(parse_pct("3"), Ok(0.03));
        assert!(parse_pct("0").unwrap_err().contains("e.g. 2%"));
        assert!(parse_pct("two").is_err());
    }
}
