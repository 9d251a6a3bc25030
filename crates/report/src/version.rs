//! One side of a comparison and what every judgement reads from it, apart from the
//! comparison itself: the tables, the floors, the A/B verdicts, `--until` and the gate
//! all take a [`Version`] and its values, so they live in a leaf that imports no other
//! module of this crate (it was the knot that tied ten of them into one cycle).

use plumb_core::StepSummary;
use plumb_store::StoredRun;

/// One side of a comparison: a label (the selector the user typed) and its runs.
#[derive(Debug, Clone)]
pub struct Version {
    /// What the user called it: a run id, `g12`, `tag=new`.
    pub label: String,
    /// Its runs (repeats).
    pub runs: Vec<StoredRun>,
}

/// The values of `get` for `step` across a version's runs (ok steps only): what every
/// judgement of a version's repeats reads (its cells, its floor, `--until`'s look).
pub fn values(v: &Version, step: &str, get: &dyn Fn(&StepSummary) -> Option<f64>) -> Vec<f64> {
    v.runs
        .iter()
        .filter_map(|r| {
            r.steps
                .iter()
                .find(|(s, _)| s.name == step && s.status == plumb_core::StepStatus::Ok)
                .and_then(|(s, _)| get(&s.summary))
        })
        .filter(|x| x.is_finite())
        .collect()
}

/// Names of the measured (non-maintenance) steps of `runs`, in first-seen order.
pub fn measured_steps<'a>(runs: impl Iterator<Item = &'a StoredRun>) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    for r in runs {
        for (s, _) in &r.steps {
            let maintenance = s.kind.is_maintenance();
            if !maintenance && !steps.contains(&s.name) {
                steps.push(s.name.clone());
            }
        }
    }
    steps
}
