//! The verdict of an interleaved A/B (`plumb ab`): two sides run slice by slice,
//! alternately, so drift on a shared machine falls on both alike; each step is judged
//! by a randomisation test on its per-interval throughputs rather than on the means of
//! two whole runs.
//!
//! A slice's 1-second intervals share its process, its cache and the page cache's
//! state, so they are not independent draws: each slice is summarised by the geometric
//! mean of its intervals' ops/s, and the test permutes the slices' labels (a block
//! permutation). With 5 slices a side the 252 splits are enumerated, so the p-value is
//! exact; a p of 2/252 ≈ 0.008 is the smallest five rounds can give.

use crate::sequential::{Rule, Settled};
use crate::version::Version;
use crate::{permtest, sequential, stats};
use plumb_core::StepStatus;
use plumb_store::StoredRun;
use serde::Serialize;

/// How the two sides ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// One side at a time, alternately (A B, B A, …): judged as two samples.
    Interleaved,
    /// Both sides at the same time, each on its own CPUs (`plumb ab --duet`): the
    /// slices of a round share their moment's interference, so they are judged as
    /// pairs.
    Duet,
}

/// How a verdict is reached: at a fixed number of slices, or at a look of a
/// sequential rule (`plumb ab --until`), which spends its error across looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judge {
    /// Significance `alpha`, all slices at once.
    Fixed(f64),
    /// The look with as many slices as there are, under this rule.
    Look(crate::sequential::Rule),
}

/// The ratio of figures measured elsewhere (`plumb ratio`), judged as plumb judges its
/// own: its interval at the level the look may spend, its p, and whether a sequence
/// of repeats may stop.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioVerdict {
    /// other/base with its interval.
    pub ratio: crate::stats::Ratio,
    /// The interval's level.
    pub level: f64,
    /// The paired t test's or the permutation test's p.
    pub p: Option<f64>,
    /// Values a side at this look.
    pub n: usize,
    /// The sequential rule, when the values are one look of a sequence.
    pub rule: Option<Rule>,
    /// Whether that sequence may stop (changed, within) or should add a repeat.
    pub settled: Option<Settled>,
}

impl RatioVerdict {
    /// The verdict as `plumb ratio --json` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "ratio": self.ratio.value,
            "ci": self.ratio.ci,
            "level": self.level,
            "precision": self.ratio.ci.map(sequential::precision),
            "p": self.p,
            "significant_ci": self.ratio.significant(),
            "settled": self.settled,
        })
    }

    /// The verdict as `plumb ratio` prints it, in one line; `paired` names the test
    /// that judged it.
    pub fn text(&self, paired: bool) -> String {
        let ci = self
            .ratio
            .ci
            .map_or("no interval: one value on a side".into(), |(lo, hi)| {
                format!("{:.1}% interval {lo:.3}-{hi:.3}", 100.0 * self.level)
            });
        let p = self.p.map_or("n/a".into(), |p| format!("{p:.4}"));
        let test = if paired { "paired t" } else { "permutation" };
        let look = match (self.settled, self.rule) {
            (Some(st), Some(rl)) => format!(
                "; look at {} of at most {} a side: {}",
                self.n,
                rl.cap,
                match st {
                    Settled::Changed => "settled, changed".to_string(),
                    Settled::Within => format!("settled, within ±{:.1}%", 100.0 * rl.target),
                    Settled::Open => "open, add a repeat".to_string(),
                }
            ),
            _ => String::new(),
        };
        format!("ratio {:.3} ({ci}), {test} p {p}{look}\n", self.ratio.value)
    }
}

/// Judges `other` against `base`: pairs measured together (`paired`, as a duet's)
/// by the paired t test, else two samples by permutation; `until` = (target, cap)
/// makes it one look of a sequence whose first look is at `first` values a side.
pub fn ratio_of(
    base: &[f64],
    other: &[f64],
    paired: bool,
    until: Option<(f64, usize)>,
    first: usize,
) -> Result<RatioVerdict, String> {
    let n = base.len().min(other.len());
    let rule = match until {
        Some((target, cap)) => {
            if cap < first || n > cap {
                return Err(format!(
                    "--cap {cap}: the looks run from {first} values a side to the cap, and this \
                     look has {n}; give a cap of at least {first} and at least the values given"
                ));
            }
            Some(Rule {
                alpha: 0.05,
                target,
                min: first,
                cap,
                power: false,
            })
        }
        None => None,
    };
    // Before the first look there is nothing to spend: the answer is "add a repeat".
    let level = rule.map_or(0.95, |r| if n < r.min { 0.95 } else { r.level(n) });
    if let Some(bad) = base
        .iter()
        .chain(other)
        .find(|x| !(x.is_finite() && **x > 0.0))
    {
        return Err(format!(
            "--base/--other: {bad} is not a positive number; give each repeat's figure"
        ));
    }
    let none = || "--base/--other: no ratio of these values".to_string();
    let (ratio, p) = if paired {
        if base.len() != other.len() {
            return Err(format!(
                "--paired: --base has {} values and --other {}; give one of each per pair",
                base.len(),
                other.len()
            ));
        }
        let v = crate::sequential::paired(base, other, level).ok_or_else(none)?;
        (
            crate::stats::Ratio {
                value: v.ratio,
                ci: v.ci,
            },
            v.p,
        )
    } else {
        (
            crate::stats::ratio_at(base, other, level).ok_or_else(none)?,
            crate::permtest::permutation_p(base, other, 9999, 0),
        )
    };
    let settled = rule.map(|rl| {
        if n < rl.min {
            Settled::Open
        } else {
            rl.settles(ratio.ci)
        }
    });
    Ok(RatioVerdict {
        ratio,
        level,
        p,
        n,
        rule,
        settled,
    })
}

/// One step's A/B verdict.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AbStep {
    /// The step.
    pub step: String,
    /// Each A slice's geometric mean of its intervals' ops/s, in run order.
    pub a: Vec<f64>,
    /// Each B slice's.
    pub b: Vec<f64>,
    /// B/A: median(B) / median(A) interleaved, the geometric mean of the pairs'
    /// ratios in a duet (over its whole blocks of two rounds).
    pub ratio: Option<f64>,
    /// The ratio's interval at `level` (Welch's t on ln slice values interleaved, the
    /// paired t on ln ratios of blocks of two rounds in a duet:
    /// [`sequential::crossover`]).
    pub ci: Option<(f64, f64)>,
    /// Confidence level of `ci`: 1 − alpha at a fixed count, the look's level under a
    /// sequential rule (wider, since the error is spent over many looks).
    pub level: f64,
    /// The interval's relative half-width (0.02 = ±2%): the precision reached.
    pub precision: Option<f64>,
    /// Two-sided p at a fixed count: the permutation test over the slices' labels
    /// interleaved, the paired t test in a duet. `None` under a sequential rule, whose
    /// verdict is its interval (a fixed-count p means nothing after looking early).
    pub p: Option<f64>,
    /// Whether the change is significant: p at most alpha, or under a sequential rule
    /// the look's interval excludes 1.
    pub significant: bool,
    /// Slices a side the verdict rests on (pairs in a duet).
    pub slices: usize,
    /// Where a sequential rule leaves the step; `None` at a fixed count.
    pub settled: Option<crate::sequential::Settled>,
    /// How the sides ran.
    pub design: Design,
    /// Whether its ops write (the database a later slice reads has changed: only
    /// read-only steps are fair to interleave on one database).
    pub writes: bool,
    /// The smallest change this A/B could have seen at its level, at 80% power, from
    /// the scatter its slices showed ([`crate::power`]): what "no difference" rules out.
    pub reach: Option<crate::power::Reach>,
}

/// A slice's throughput: the geometric mean of its intervals' ops/s, each weighted by
/// its seconds (a partial last interval weighs its share of a second), or the step's
/// ops/s when its intervals hold less than half its time.
fn slice_ops(r: &StoredRun, step: &str) -> Option<f64> {
    let (s, ivs) = r
        .steps
        .iter()
        .find(|(s, _)| s.name == step && s.status == StepStatus::Ok)?;
    let (mut w, mut sum) = (0.0, 0.0);
    for iv in ivs.iter().filter(|iv| iv.ops_sec > 0.0 && iv.secs > 0.0) {
        w += iv.secs;
        sum += iv.secs * iv.ops_sec.ln();
    }
    // A step shorter than its intervals' grain (a fill of a few hundred ms) has too
    // little of its time in intervals to summarise: its own ops/s stands for it.
    if w > 0.0 && w >= 0.5 * s.summary.secs {
        Some((sum / w).exp())
    } else {
        (s.summary.ops_sec > 0.0).then_some(s.summary.ops_sec)
    }
}

/// Judges every measured step both sides ran, interleaved, at significance `alpha`.
pub fn interleaved(a: &Version, b: &Version, alpha: f64) -> Vec<AbStep> {
    judge(a, b, Design::Interleaved, Judge::Fixed(alpha))
}

/// Judges every measured step both sides ran, as `design` and by `how`. In a duet,
/// `a.runs[i]` and `b.runs[i]` are the slices that ran together.
pub fn judge(a: &Version, b: &Version, design: Design, how: Judge) -> Vec<AbStep> {
    let steps = crate::version::measured_steps(a.runs.iter());
    steps
        .into_iter()
        .filter_map(|step| {
            let (av, bv): (Vec<f64>, Vec<f64>) = match design {
                Design::Interleaved => (
                    a.runs.iter().filter_map(|r| slice_ops(r, &step)).collect(),
                    b.runs.iter().filter_map(|r| slice_ops(r, &step)).collect(),
                ),
                // A pair counts only when both of its slices ran the step.
                Design::Duet => a
                    .runs
                    .iter()
                    .zip(&b.runs)
                    .filter_map(|(ra, rb)| Some((slice_ops(ra, &step)?, slice_ops(rb, &step)?)))
                    .unzip(),
            };
            if av.is_empty() || bv.is_empty() {
                return None;
            }
            let slices = av.len().min(bv.len());
            // What the rule counts: slices a side, or a duet's blocks of two rounds.
            let looks = match design {
                Design::Interleaved => slices,
                Design::Duet => slices / 2,
            };
            let level = match how {
                Judge::Fixed(alpha) => 1.0 - alpha,
                Judge::Look(rule) => rule.level(looks),
            };
            let (ratio, ci, p, reach) = match design {
                Design::Interleaved => {
                    let r = stats::ratio_at(&av, &bv, level);
                    let p = match how {
                        Judge::Fixed(_) => permtest::permutation_p(&av, &bv, 9999, 0),
                        Judge::Look(_) => None,
                    };
                    let reach = crate::power::Reach::two_sample(
                        &av,
                        &bv,
                        1.0 - level,
                        crate::power::Unit::Slices,
                    );
                    (r.map(|r| r.value), r.and_then(|r| r.ci), p, reach)
                }
                Design::Duet => {
                    let v = sequential::crossover(&av, &bv, level);
                    let p = match how {
                        Judge::Fixed(_) => v.and_then(|v| v.p),
                        Judge::Look(_) => None,
                    };
                    let reach =
                        v.and_then(|v| crate::power::Reach::paired(v.sd?, v.n, 1.0 - level));
                    (v.map(|v| v.ratio), v.and_then(|v| v.ci), p, reach)
                }
            };
            let (significant, settled) = match how {
                Judge::Fixed(alpha) => (p.is_some_and(|p| p <= alpha), None),
                Judge::Look(rule) => {
                    let s = rule.settles_at(ci, looks);
                    (s == sequential::Settled::Changed, Some(s))
                }
            };
            let writes = a
                .runs
                .iter()
                .flat_map(|r| r.steps.iter())
                .find(|(s, _)| s.name == step)
                .is_some_and(|(s, _)| match s.kind {
                    plumb_store::Kind::Kv(k) => k.writes(),
                    _ => false,
                });
            Some(AbStep {
                significant,
                ratio,
                ci,
                level,
                precision: ci.map(sequential::precision),
                p,
                slices,
                settled,
                design,
                writes,
                reach,
                step,
                a: av,
                b: bv,
            })
        })
        .collect()
}

/// The terminal table, with the labels of the two sides, then one line saying how the
/// sides ran and what the intervals are.
pub fn text(steps: &[AbStep], a: &str, b: &str) -> String {
    use std::fmt::Write as _;
    let mut o = format!(
        "{:<22} {:>12} {:>12} {:>22} {:>7} {:>6} {:>8}  verdict\n",
        "step",
        format!("{a} ops/s"),
        format!("{b} ops/s"),
        format!("{b}/{a} (interval)"),
        "±",
        "slices",
        "p"
    );
    for s in steps {
        let ratio = match (s.ratio, s.ci) {
            (Some(r), Some((lo, hi))) => format!("{r:.3} ({lo:.3}-{hi:.3})"),
            (Some(r), None) => format!("{r:.3}"),
            _ => "n/a".into(),
        };
        let pm = |x: Option<f64>| x.map_or("n/a".into(), |x| format!("{:.1}%", 100.0 * x));
        let verdict = match (s.significant, s.ratio, s.settled) {
            (true, Some(r), _) if r < 1.0 => format!("{b} slower"),
            (true, Some(_), _) => format!("{b} faster"),
            (_, _, Some(sequential::Settled::Within)) => {
                format!("no change beyond ±{}", pm(s.precision))
            }
            (_, _, Some(sequential::Settled::Open)) => {
                "not settled at the cap: no difference beyond the noise".into()
            }
            _ => "no difference beyond the noise".into(),
        };
        let _ = writeln!(
            o,
            "{:<22} {:>12} {:>12} {:>22} {:>7} {:>6} {:>8}  {verdict}{}",
            s.step,
            crate::format::sig(stats::median(&s.a), 4),
            crate::format::sig(stats::median(&s.b), 4),
            ratio,
            pm(s.precision),
            s.slices,
            s.p.map_or("n/a".into(), |p| format!("{p:.4}")),
            if s.writes {
                " (writes: each slice changed the database the next one read)"
            } else {
                ""
            }
        );
    }
    // What each "no difference" could have seen: a true "same" and "this host could
    // not have seen it today" read alike without it.
    for s in steps.iter().filter(|s| !s.significant) {
        if let Some(r) = s.reach {
            let _ = writeln!(
                o,
                "{}: no difference found; {}",
                s.step,
                r.sentence(Some(crate::power::REACH_TARGET))
            );
        }
    }
    if let Some(s) = steps.first() {
        let how = match s.design {
            Design::Interleaved => "interleaved slices (A B, B A, …), judged as two samples",
            Design::Duet => {
                "duet: A and B at the same time on their own CPUs, judged in pairs of rounds that swapped CPUs"
            }
        };
        let level = if s.settled.is_some() {
            "each interval at its last look's level (the error spent over the looks)".to_string()
        } else {
            format!("intervals at {:.0}%", 100.0 * s.level)
        };
        let _ = writeln!(o, "{how}; {level}.");
    }
    o
}
