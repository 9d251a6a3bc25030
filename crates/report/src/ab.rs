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

use crate::compare::Version;
use crate::{permtest, stats};
use plumb_core::StepStatus;
use plumb_store::StoredRun;
use serde::Serialize;

/// One step's A/B verdict.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AbStep {
    /// The step.
    pub step: String,
    /// Each A slice's geometric mean of its intervals' ops/s, in run order.
    pub a: Vec<f64>,
    /// Each B slice's.
    pub b: Vec<f64>,
    /// median(B) / median(A).
    pub ratio: Option<f64>,
    /// 95% interval of the ratio (Welch's t on ln slice values).
    pub ci: Option<(f64, f64)>,
    /// The permutation test's two-sided p over the slices' labels.
    pub p: Option<f64>,
    /// Whether p is at most the significance asked for.
    pub significant: bool,
    /// Whether its ops write (the database a later slice reads has changed: only
    /// read-only steps are fair to interleave on one database).
    pub writes: bool,
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

/// Judges every measured step both sides ran.
pub fn interleaved(a: &Version, b: &Version, alpha: f64) -> Vec<AbStep> {
    let steps = crate::compare::measured_steps(a.runs.iter());
    steps
        .into_iter()
        .filter_map(|step| {
            let av: Vec<f64> = a.runs.iter().filter_map(|r| slice_ops(r, &step)).collect();
            let bv: Vec<f64> = b.runs.iter().filter_map(|r| slice_ops(r, &step)).collect();
            if av.is_empty() || bv.is_empty() {
                return None;
            }
            let r = stats::ratio(&av, &bv);
            let p = permtest::permutation_p(&av, &bv, 9999, 0);
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
                significant: p.is_some_and(|p| p <= alpha),
                ratio: r.map(|r| r.value),
                ci: r.and_then(|r| r.ci),
                p,
                writes,
                step,
                a: av,
                b: bv,
            })
        })
        .collect()
}

/// The terminal table, with the labels of the two sides.
pub fn text(steps: &[AbStep], a: &str, b: &str) -> String {
    use std::fmt::Write as _;
    let mut o = format!(
        "{:<22} {:>12} {:>12} {:>22} {:>8}  verdict\n",
        "step",
        format!("{a} ops/s"),
        format!("{b} ops/s"),
        format!("{b}/{a} (95%)"),
        "p"
    );
    for s in steps {
        let ratio = match (s.ratio, s.ci) {
            (Some(r), Some((lo, hi))) => format!("{r:.3} ({lo:.3}-{hi:.3})"),
            (Some(r), None) => format!("{r:.3}"),
            _ => "n/a".into(),
        };
        let verdict = match (s.significant, s.ratio) {
            (true, Some(r)) if r < 1.0 => format!("{b} slower"),
            (true, Some(_)) => format!("{b} faster"),
            _ => "no difference beyond the noise".into(),
        };
        let _ = writeln!(
            o,
            "{:<22} {:>12} {:>12} {:>22} {:>8}  {verdict}{}",
            s.step,
            crate::sig(stats::median(&s.a), 4),
            crate::sig(stats::median(&s.b), 4),
            ratio,
            s.p.map_or("n/a".into(), |p| format!("{p:.4}")),
            if s.writes {
                " (writes: each slice changed the database the next one read)"
            } else {
                ""
            }
        );
    }
    o
}
