//! The gate as one call: new runs against a named base or their plan's history, with
//! the floors learned from the store, every change kept once in the store's changes and
//! judged as people triaged it. `plumb check` and the served Compare page both call it,
//! so a verdict in the browser is the verdict in CI.

use crate::base;
use crate::check::{self, CheckOptions, CheckReport, Verdict};
use crate::metrics::Metric;
use crate::select::{bail, SelectError};
use crate::version::Version;
use plumb_store::{NewChange, Store, TriageState};

/// What the gate is asked.
pub struct GateRequest {
    /// The runs judged.
    pub new: Version,
    /// The base, when named; `None`: the plan's history.
    pub base: Option<Version>,
    /// Without a base: how many earlier groups of the plan make it.
    pub history: usize,
    /// Fail beyond this fraction.
    pub threshold: f64,
    /// Unstable beyond this swing (fraction).
    pub unstable: f64,
    /// The metrics judged.
    pub metrics: Vec<&'static Metric>,
    /// Only these steps (empty: every measured step).
    pub steps: Vec<String>,
    /// Keep the changes found in the store and honour their triage (the nightly gate);
    /// false for a look that must leave the store as it was (a page view).
    pub record: bool,
    /// When, for the changes kept (RFC 3339).
    pub now: String,
}

/// What the gate judged and against what.
pub struct Gated {
    /// The verdicts.
    pub report: CheckReport,
    /// The base they were judged against (named, or picked from the plan's history), so
    /// a page that draws the comparison beside the verdicts does not pick it again.
    pub base: Version,
}

/// Judges `r.new`; errors are bad selections (a run on both sides, no history, an
/// unknown step).
pub fn gate(store: &Store, r: GateRequest) -> Result<Gated, SelectError> {
    let from_history = r.base.is_none();
    let base = match r.base {
        Some(b) => b,
        None => base::history_base(store, &r.new, r.history.max(1))?,
    };
    let new = r.new;
    if let Some(shared) = new
        .runs
        .iter()
        .find(|x| base.runs.iter().any(|b| b.run.id == x.run.id))
    {
        bail!(
            "check: run {} is on both sides ({} and {}); a run cannot be its own base",
            shared.run.id,
            new.label,
            base.label
        );
    }
    let judged: Vec<i64> = new.runs.iter().map(|x| x.run.id).collect();
    let blocks = base::noise_blocks(
        store,
        &base.runs.iter().map(|x| x.run.clone()).collect::<Vec<_>>(),
        &judged,
    )?;
    let measured = crate::version::measured_steps(new.runs.iter());
    let floors = crate::noise::floors(&blocks, &measured, &r.metrics);
    let opts = CheckOptions {
        threshold: r.threshold,
        unstable: r.unstable,
        metrics: r.metrics,
        floors,
        counted: base::counted_sides(&base, &new)?,
    };
    let mut report = check::check(&base, &new, &opts);
    for s in &r.steps {
        if !report.results.iter().any(|j| &j.step == s) {
            bail!(
                "--step {s}: {} has no such measured step; it has {}",
                new.label,
                measured.join(", ")
            );
        }
    }
    if !r.steps.is_empty() {
        report.results.retain(|j| r.steps.contains(&j.step));
    }
    if report.results.is_empty() {
        bail!("check: {} has no measured step to judge", new.label);
    }
    if from_history {
        triage(store, &mut report, &base, &new, r.record, &r.now)?;
    }
    Ok(Gated { report, base })
}

/// What the kept change of a step and metric is: the plan's identity and a label.
fn plan_of(new: &Version) -> Option<(String, String)> {
    let r = new.runs.first()?;
    let plan = base::plan_identity(r.run.plan.as_ref())?;
    Some((
        plan,
        format!(
            "{} on {} {}",
            r.run.workload, r.run.engine, r.run.engine_version
        ),
    ))
}

/// Keeps each change the gate found (when `record`), then judges it as triaged: a
/// change called noise passes, saying so; an open one still fails.
fn triage(
    store: &Store,
    report: &mut CheckReport,
    base: &Version,
    new: &Version,
    record: bool,
    now: &str,
) -> Result<(), SelectError> {
    let Some((plan, label)) = plan_of(new) else {
        return Ok(());
    };
    let first = |v: &Version| v.runs.iter().map(|x| x.run.id).min();
    let last = |v: &Version| v.runs.iter().map(|x| x.run.id).max();
    let (Some(at_run), Some(last_run), Some(base_from)) = (first(new), last(new), first(base))
    else {
        return Ok(());
    };
    let first_new = new.runs.iter().find(|x| x.run.id == at_run);
    let host = first_new
        .and_then(|x| x.run.host.as_ref())
        .and_then(|h| h.inventory.hostname.clone());
    let reference = first_new.is_some_and(|x| x.run.tag.as_deref() == Some("reference"));
    let at_time = first_new
        .map(|x| x.run.started_at.clone())
        .unwrap_or_default();
    for j in report.results.iter_mut() {
        let direction = match j.verdict {
            Verdict::Regression => "regression",
            Verdict::Improved => "improvement",
            _ => continue,
        };
        // A change is kept with its size; a verdict without a ratio has none to keep.
        let Some(ratio) = j.ratio else {
            continue;
        };
        let id = if record {
            let cause = crate::history::causes_between(base, new, &j.step)
                .iter()
                .take(3)
                .map(crate::history::cause_text)
                .collect::<Vec<_>>()
                .join("; ");
            store
                .record_change(&NewChange {
                    plan: plan.clone(),
                    label: label.clone(),
                    step: j.step.clone(),
                    metric: j.metric.clone(),
                    direction: direction.into(),
                    at_run,
                    before_run: last(base),
                    last_run,
                    base_from,
                    ratio,
                    cause: (!cause.is_empty()).then_some(cause),
                    host: host.clone(),
                    reference,
                    at_time: at_time.clone(),
                    seen_at: now.to_string(),
                })?
                .0
        } else {
            match store
                .changes(&plumb_store::ChangeFilter {
                    plan: Some(plan.clone()),
                    step: Some(j.step.clone()),
                    ..Default::default()
                })?
                .into_iter()
                .find(|c| c.metric == j.metric && c.direction == direction)
            {
                Some(c) => c.id,
                None => continue,
            }
        };
        let c = store.change(id)?;
        j.change = Some((c.id, c.state));
        if c.state == TriageState::NotAChange && j.verdict == Verdict::Regression {
            j.verdict = Verdict::Pass;
            j.reason = format!(
                "{} (change #{} was triaged not-a-change{}{})",
                j.reason,
                c.id,
                c.set_by
                    .as_deref()
                    .map(|b| format!(" by {b}"))
                    .unwrap_or_default(),
                c.note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}
