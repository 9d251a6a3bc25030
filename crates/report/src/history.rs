//! A series of versions of one plan (releases, commits, tags or dates, in the user's
//! order): per step, where the throughput changed (change points, found by
//! [`crate::changepoint`]) and what each change cost per op, so a regression comes with
//! its explanation rather than a number to chase.
//!
//! The explanation sets each per-op cost of the segment before a change point against
//! the segment after it. Costs in time (user, system, plumb's own, compaction and server
//! CPU and the device's busy time per op) are ranked by the share of the change in time per op they
//! account for: `Δcost / Δ(threads × 1e6 / ops_sec)`, the CPU-or-device time each op
//! was given. Costs in counts (IOs, bytes, misses, counters per op or query) cannot be
//! set against time; they follow, ranked by how far they moved (|ln ratio|). Only costs
//! whose 95% interval excludes "no change" are named.

use crate::changepoint::{self, ChangePoint};
use crate::metrics::{self, Better};
use crate::select::{bail, SelectError};
use crate::stats;
use crate::version::Version;
use plumb_core::{StepStatus, StepSummary};
use plumb_store::StoredRun;
use serde::Serialize;

/// One point of the series: a version of the thing measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    /// What the user called it (a selector, or `KEY=VALUE` of `--by`).
    pub label: String,
    /// Its runs (repeats).
    pub run_ids: Vec<i64>,
}

/// One cost set against a change point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cause {
    /// The cost's id (a metric id, `server.NAME/query`, `perf.EVENT/query`).
    pub cost: String,
    /// Median over the segment before.
    pub before: f64,
    /// Median over the segment after.
    pub after: f64,
    /// after / before.
    pub ratio: f64,
    /// 95% interval of the ratio.
    pub ci: Option<(f64, f64)>,
    /// For costs in time: the share of the change in time per op it accounts for
    /// (1.0: all of it).
    pub share: Option<f64>,
}

/// A change point with its explanation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    /// Where, how large and how sure.
    #[serde(flatten)]
    pub point: ChangePoint,
    /// The last point before the change and the first after it.
    pub between: (String, String),
    /// Whether it is a regression (the step got slower).
    pub regression: bool,
    /// The costs that moved with it, the largest account first.
    pub causes: Vec<Cause>,
    /// The hardware counters' reading of it (seed 002's: more instructions per op is
    /// code bloat; more cache/TLB misses at equal instructions is memory-system bloat),
    /// or why there is none ("unsupported: …" on a host without a PMU).
    pub counters: String,
    /// The change `plumb check` kept for it (its first run among the point's after the
    /// change), with what people said of it; set by [`History::set_triage`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<(i64, plumb_store::TriageState)>,
}

/// One step's series.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepHistory {
    /// The step.
    pub step: String,
    /// Each point's values of the metric followed (its repeats).
    pub values: Vec<Vec<f64>>,
    /// Each point's median.
    pub medians: Vec<Option<f64>>,
    /// Change points, in series order.
    pub changes: Vec<Change>,
    /// The step's noise floor on this host (blocks of the first point's plan in the
    /// store), when there is history enough: each change is printed beside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<crate::noise::Floor>,
}

impl History {
    /// Marks each change point with the kept change of the same step and direction
    /// whose first run is one of the point's runs (`changes`: the plan's kept changes),
    /// so a history shows which changes were triaged and how.
    pub fn set_triage(&mut self, changes: &[plumb_store::ChangeRecord]) {
        let points = self.points.clone();
        for s in &mut self.steps {
            for c in &mut s.changes {
                let Some(p) = points.get(c.point.index) else {
                    continue;
                };
                let dir = if c.regression {
                    "regression"
                } else {
                    "improvement"
                };
                c.kept = changes
                    .iter()
                    .find(|k| {
                        k.step == s.step
                            && k.direction == dir
                            && k.metric == self.metric
                            && p.run_ids.contains(&k.at_run)
                    })
                    .map(|k| (k.id, k.state));
            }
        }
    }

    /// Sets each step's floor from `floors` (by (step, metric id), as
    /// [`crate::noise::floors`] returns them; the caller learns them from the store).
    pub fn set_floors(
        &mut self,
        floors: &std::collections::BTreeMap<(String, String), crate::noise::Floor>,
    ) {
        for s in &mut self.steps {
            s.floor = floors.get(&(s.step.clone(), self.metric.clone())).copied();
        }
    }
}

/// Everything `plumb history` prints.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct History {
    /// The metric followed (ops_sec).
    pub metric: String,
    /// The points, in the user's order.
    pub points: Vec<Point>,
    /// One series per measured step.
    pub steps: Vec<StepHistory>,
    /// How change points were found, in a sentence (printed under every report).
    pub method: String,
}

/// Reads one cost from a step summary.
type Getter = Box<dyn Fn(&StepSummary) -> Option<f64>>;

/// A per-op cost the explanation reads.
struct CostDef {
    id: String,
    time: bool,
    get: Getter,
}

/// Outcomes rather than costs (latency follows throughput), and the sum of parts that
/// are shown themselves.
const NOT_CAUSES: &[&str] = &["p50_us", "p99_us", "p99.9_us", "cpu_us_op", "util"];

fn cost_defs(versions: &[Version]) -> Vec<CostDef> {
    let mut defs: Vec<CostDef> = metrics::COMPARE_COSTS
        .iter()
        .chain(std::iter::once(&"dev_us_op"))
        .filter(|id| !NOT_CAUSES.contains(id))
        .map(|id| metrics::metric(id))
        .filter(|m| m.better == Better::Lower || m.id == "rareq_sz" || m.id == "wareq_sz")
        .map(|m| CostDef {
            id: m.id.to_string(),
            // Costs in µs per op or query can be set against the change in time per op.
            time: m.unit.starts_with("µs/"),
            get: Box::new(m.get),
        })
        .collect();
    // The server's own counters per query, where the runs have them.
    let mut names = std::collections::BTreeSet::new();
    let mut waits = std::collections::BTreeSet::new();
    for r in versions.iter().flat_map(|v| v.runs.iter()) {
        for (s, _) in &r.steps {
            if let Some(srv) = &s.summary.server {
                names.extend(srv.counters_query.keys().map(|k| (false, k.clone())));
                names.extend(srv.perf_query.keys().map(|k| (true, k.clone())));
            }
            waits.extend(plumb_core::waits::us_query(&s.summary).into_keys());
        }
    }
    // Active session time per query in each wait event, µs: a time, set against the
    // change in time per query as the costs in µs are.
    for name in waits {
        defs.push(CostDef {
            id: format!("wait.{name} µs/query"),
            time: true,
            get: Box::new(move |s| plumb_core::waits::us_query(s).get(&name).copied()),
        });
    }
    for (perf, name) in names {
        let key = name.clone();
        defs.push(CostDef {
            id: if perf {
                format!("perf.{name}/query")
            } else {
                format!("server.{name}/query")
            },
            time: false,
            get: Box::new(move |s| {
                let srv = s.server.as_ref()?;
                if perf {
                    srv.perf_query.get(&key).copied()
                } else {
                    srv.counters_query.get(&key).copied()
                }
            }),
        });
    }
    defs
}

/// The ok step `step` of a run.
fn step_of<'a>(r: &'a StoredRun, step: &str) -> Option<&'a plumb_store::StepRecord> {
    r.steps
        .iter()
        .map(|(s, _)| s)
        .find(|s| s.name == step && s.status == StepStatus::Ok)
}

/// Threads (or clients) the step ran with: its config says, 1 when it does not.
fn threads(s: &plumb_store::StepRecord) -> f64 {
    s.config["threads"]
        .as_u64()
        .or_else(|| s.config["clients"].as_u64())
        .unwrap_or(1)
        .max(1) as f64
}

/// `get` over the runs of points `range`, ok steps only, finite values only.
fn pooled(
    versions: &[Version],
    range: std::ops::Range<usize>,
    step: &str,
    get: &dyn Fn(&plumb_store::StepRecord) -> Option<f64>,
) -> Vec<f64> {
    versions[range]
        .iter()
        .flat_map(|v| v.runs.iter())
        .filter_map(|r| step_of(r, step).and_then(get))
        .filter(|x| x.is_finite())
        .collect()
}

/// What moved with the change at `cp`, between the segments `before` and `after`.
fn explain(
    versions: &[Version],
    step: &str,
    before: std::ops::Range<usize>,
    after: std::ops::Range<usize>,
    defs: &[CostDef],
) -> Vec<Cause> {
    let time_per_op = |s: &plumb_store::StepRecord| {
        (s.summary.ops_sec > 0.0).then(|| threads(s) * 1e6 / s.summary.ops_sec)
    };
    let t_b = stats::median(&pooled(versions, before.clone(), step, &time_per_op));
    let t_a = stats::median(&pooled(versions, after.clone(), step, &time_per_op));
    let dt = match (t_b, t_a) {
        (Some(b), Some(a)) if (a - b).abs() > 0.0 => Some(a - b),
        _ => None,
    };
    let mut causes: Vec<Cause> = defs
        .iter()
        .filter_map(|d| {
            let get = |s: &plumb_store::StepRecord| (d.get)(&s.summary);
            let b = pooled(versions, before.clone(), step, &get);
            let a = pooled(versions, after.clone(), step, &get);
            let r = stats::ratio(&b, &a)?;
            if !r.significant() {
                return None;
            }
            let (mb, ma) = (stats::median(&b)?, stats::median(&a)?);
            let share = if d.time {
                dt.map(|dt| (ma - mb) / dt)
            } else {
                None
            };
            Some(Cause {
                cost: d.id.clone(),
                before: mb,
                after: ma,
                ratio: r.value,
                ci: r.ci,
                share,
            })
        })
        .collect();
    causes.sort_by(|x, y| rank(y).total_cmp(&rank(x)));
    causes
}

/// The costs that moved between two sides of one step (a check's base and its new
/// runs), ranked as a change point's are: what a kept change names as its cost.
pub fn causes_between(before: &Version, after: &Version, step: &str) -> Vec<Cause> {
    let both = [before.clone(), after.clone()];
    explain(&both, step, 0..1, 1..2, &cost_defs(&both))
}

/// Per-op (per-query) hardware counter medians over the runs of `range`: the server's
/// own events where it was counted (`perf_query`), else plumb's (`hw`).
fn counter_medians(
    versions: &[Version],
    range: std::ops::Range<usize>,
    step: &str,
) -> std::collections::BTreeMap<String, f64> {
    let mut all: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for r in versions[range].iter().flat_map(|v| v.runs.iter()) {
        let Some(s) = step_of(r, step) else { continue };
        let m = &s.summary;
        match m.server.as_ref().filter(|srv| !srv.perf_query.is_empty()) {
            Some(srv) => {
                for (k, v) in &srv.perf_query {
                    all.entry(k.clone()).or_default().push(*v);
                }
            }
            None => {
                for (k, v) in [
                    ("instructions", m.hw.instructions_op),
                    ("cycles", m.hw.cycles_op),
                    ("cache-misses", m.hw.cache_misses_op),
                ] {
                    if let Some(v) = v {
                        all.entry(k.into()).or_default().push(v);
                    }
                }
            }
        }
    }
    all.into_iter()
        .filter_map(|(k, v)| Some((k, stats::median(&v)?)))
        .collect()
}

/// The counters' reading of a change, with the host's reason when it has no counters.
fn counters(
    versions: &[Version],
    step: &str,
    before: std::ops::Range<usize>,
    after: std::ops::Range<usize>,
) -> String {
    let reading = crate::bloat::read(
        &counter_medians(versions, before, step),
        &counter_medians(versions, after.clone(), step),
    );
    let why = versions[after]
        .iter()
        .flat_map(|v| v.runs.iter())
        .filter_map(|r| step_of(r, step))
        .find_map(|s| s.summary.hw.unsupported.clone());
    match (&reading.verdict, why) {
        (crate::bloat::Verdict::Unsupported(_), Some(why)) => {
            format!("{} ({why})", reading.explanation)
        }
        _ => reading.explanation,
    }
}

/// The order of causes: time costs by the share they account for (above everything
/// that is a count), then counts by how far they moved.
fn rank(c: &Cause) -> f64 {
    match c.share {
        Some(s) => 1e6 + s.abs(),
        None => c.ratio.ln().abs(),
    }
}

/// Builds the history of `versions` (the series, in order), following ops/s.
pub fn history(versions: &[Version], opts: &changepoint::Options) -> History {
    let steps = crate::version::measured_steps(versions.iter().flat_map(|v| v.runs.iter()));
    let defs = cost_defs(versions);
    let steps = steps
        .into_iter()
        .flat_map(|step| {
            let values: Vec<Vec<f64>> = (0..versions.len())
                .map(|i| pooled(versions, i..i + 1, &step, &|s| Some(s.summary.ops_sec)))
                .collect();
            let found = changepoint::detect(&values, opts);
            let bounds: Vec<usize> = std::iter::once(0)
                .chain(found.iter().map(|c| c.index))
                .chain(std::iter::once(versions.len()))
                .collect();
            let changes = found
                .into_iter()
                .enumerate()
                .map(|(k, cp)| {
                    let before = bounds[k]..bounds[k + 1];
                    let after = bounds[k + 1]..bounds[k + 2];
                    let last_before = (before.start..before.end)
                        .rev()
                        .find(|&i| !values[i].is_empty())
                        .unwrap_or(before.start);
                    Change {
                        between: (
                            versions[last_before].label.clone(),
                            versions[cp.index].label.clone(),
                        ),
                        regression: cp.ratio < 1.0,
                        counters: counters(versions, &step, before.clone(), after.clone()),
                        causes: explain(versions, &step, before, after, &defs),
                        point: cp,
                        kept: None,
                    }
                })
                .collect();
            let mut series = vec![StepHistory {
                medians: values.iter().map(|v| stats::median(v)).collect(),
                step: step.clone(),
                values,
                changes,
                floor: None,
            }];
            series.extend(phase_series(versions, &step, opts));
            series
        })
        .collect();
    History {
        metric: "ops_sec".into(),
        points: versions
            .iter()
            .map(|v| Point {
                label: v.label.clone(),
                run_ids: v.runs.iter().map(|r| r.run.id).collect(),
            })
            .collect(),
        steps,
        method: format!(
            "change points: E-divisive means (Matteson & James 2014) on ln(ops/s), splits \
             only between points, each kept when a permutation test ({} permutations) gives \
             p <= {}; intervals: Welch's t on ln values of the segments either side",
            opts.permutations, opts.alpha
        ),
    }
}

/// A step run under one rate profile at every point, phase by phase: one series per
/// phase (`readrandom [ramp:1k..20k/60s]`) of the rate it served, with its change
/// points, so a release that keeps up in a hold but falls behind in a ramp shows where.
/// Their changes name no causes: a step's costs are measured over the whole step. None
/// when the profile differs between runs, or the step ran without one.
fn phase_series(versions: &[Version], step: &str, opts: &changepoint::Options) -> Vec<StepHistory> {
    // Per point, per run: the phases' rows.
    let Some((profile, rows)) = crate::phases::rows_by_version(versions, step, true) else {
        return Vec::new();
    };
    let Ok(parsed) = profile.parse::<plumb_workloads::RateProfile>() else {
        return Vec::new();
    };
    let names: Vec<String> = parsed.phases().iter().map(|p| p.to_string()).collect();
    if names.len() < 2 {
        return Vec::new();
    }
    names
        .iter()
        .map(|name| {
            let values: Vec<Vec<f64>> = rows
                .iter()
                .map(|runs| {
                    runs.iter()
                        .filter_map(|r| r.iter().find(|p| &p.phase == name))
                        .map(|p| p.served)
                        .filter(|x| x.is_finite())
                        .collect()
                })
                .collect();
            let changes = changepoint::detect(&values, opts)
                .into_iter()
                .map(|cp| {
                    let last_before = (0..cp.index)
                        .rev()
                        .find(|&i| !values[i].is_empty())
                        .unwrap_or(0);
                    Change {
                        between: (
                            versions[last_before].label.clone(),
                            versions[cp.index].label.clone(),
                        ),
                        regression: cp.ratio < 1.0,
                        counters: String::new(),
                        causes: Vec::new(),
                        point: cp,
                        kept: None,
                    }
                })
                .collect();
            StepHistory {
                step: format!("{step} [{name}]"),
                medians: values.iter().map(|v| stats::median(v)).collect(),
                values,
                changes,
                floor: None,
            }
        })
        .collect()
}

/// The series of `versions` as `plumb history` shows it: its change points, each
/// beside the step's learned noise floor and the triage kept for its plan, so a change
/// already judged "expected" is not news again.
pub fn of_store(
    store: &plumb_store::Store,
    versions: &[Version],
    opts: &changepoint::Options,
) -> Result<History, crate::select::SelectError> {
    let mut h = history(versions, opts);
    h.set_floors(&crate::base::learned_floors(store, versions)?);
    let plans: std::collections::BTreeSet<String> = versions
        .iter()
        .flat_map(|v| v.runs.iter())
        .filter_map(|r| crate::base::plan_identity(r.run.plan.as_ref()))
        .collect();
    let mut kept = Vec::new();
    for plan in plans {
        kept.extend(store.changes(&plumb_store::ChangeFilter {
            plan: Some(plan),
            ..Default::default()
        })?);
    }
    h.set_triage(&kept);
    Ok(h)
}

/// A cause in one line: `usr_us_op 1.02 → 1.24 (×1.22, 0.97 of the change)`.
pub fn cause_text(c: &Cause) -> String {
    let moved = match c.ci {
        Some((lo, hi)) => format!("×{:.2} ({lo:.2}-{hi:.2})", c.ratio),
        None => format!("×{:.2}", c.ratio),
    };
    let share = c
        .share
        .map(|s| format!(", {:.0}% of the change in time/op", s * 100.0))
        .unwrap_or_default();
    format!(
        "{} {} → {} {moved}{share}",
        c.cost,
        crate::format::sig(Some(c.before), 3),
        crate::format::sig(Some(c.after), 3)
    )
}

fn change_line(c: &Change, floor: Option<&crate::noise::Floor>) -> String {
    let ci = c
        .point
        .ci
        .map(|(lo, hi)| format!(" ({lo:.2}-{hi:.2})"))
        .unwrap_or_default();
    let beside = floor.map_or(String::new(), |f| {
        format!(
            "; {}",
            crate::noise::beside_floor(c.point.ratio, c.point.ci, f)
        )
    });
    let kept = c
        .kept
        .map(|(id, state)| format!("; change #{id}, {state}"))
        .unwrap_or_default();
    format!(
        "{} between {} and {}: ops/s {} → {}, ×{:.2}{ci}, p={:.3}{beside}{kept}",
        if c.regression { "slower" } else { "faster" },
        c.between.0,
        c.between.1,
        crate::format::sig(Some(c.point.before), 3),
        crate::format::sig(Some(c.point.after), 3),
        c.point.ratio,
        c.point.p_value
    )
}

/// How many causes a text or Markdown report names per change.
const SHOWN_CAUSES: usize = 6;

/// The terminal report: the series' medians per step, then each change point with the
/// costs that moved with it.
pub fn text(h: &History) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(o, "history of {} over {} points:", h.metric, h.points.len());
    for (i, p) in h.points.iter().enumerate() {
        let ids: Vec<String> = p.run_ids.iter().map(i64::to_string).collect();
        let _ = writeln!(o, "  [{i}] {} (runs {})", p.label, ids.join(", "));
    }
    for s in &h.steps {
        let meds: Vec<String> = s
            .medians
            .iter()
            .map(|m| crate::format::sig(*m, 3))
            .collect();
        let _ = writeln!(o, "\n{}: {}", s.step, meds.join("  "));
        if s.changes.is_empty() {
            let _ = writeln!(o, "  no change point");
        }
        if let Some(f) = &s.floor {
            let _ = writeln!(
                o,
                "  floor {:.1}%, last A/A {:+.1}% ({} blocks of this plan on this host)",
                100.0 * f.floor,
                100.0 * f.aa,
                f.groups
            );
        }
        for c in &s.changes {
            let _ = writeln!(
                o,
                "  change at [{}]: {}",
                c.point.index,
                change_line(c, s.floor.as_ref())
            );
            if c.causes.is_empty() {
                let _ = writeln!(o, "    no per-op cost moved significantly with it");
            }
            for cause in c.causes.iter().take(SHOWN_CAUSES) {
                let _ = writeln!(o, "    {}", cause_text(cause));
            }
            let _ = writeln!(o, "    counters: {}", c.counters);
            if c.causes.len() > SHOWN_CAUSES {
                let _ = writeln!(
                    o,
                    "    … {} more in --format json or html",
                    c.causes.len() - SHOWN_CAUSES
                );
            }
        }
    }
    let _ = writeln!(o, "\n{}", h.method);
    o
}

/// Markdown: a table of medians per step and point, then the change points.
pub fn markdown(h: &History) -> String {
    use crate::format::cell;
    use std::fmt::Write as _;
    let mut o = format!("## History of {}\n\n| step |", h.metric);
    for p in &h.points {
        let _ = write!(o, " {} |", cell(&p.label));
    }
    o.push_str("\n|---|");
    o.push_str(&"---:|".repeat(h.points.len()));
    o.push('\n');
    for s in &h.steps {
        let _ = write!(o, "| {} |", cell(&s.step));
        for (i, m) in s.medians.iter().enumerate() {
            let mark = if s.changes.iter().any(|c| c.point.index == i) {
                " ▲"
            } else {
                ""
            };
            let _ = write!(o, " {}{mark} |", crate::format::sig(*m, 3));
        }
        o.push('\n');
    }
    o.push_str("\n▲: a change point (the first point of the new level).\n\n### Change points\n\n");
    let mut any = false;
    for s in &h.steps {
        for c in &s.changes {
            any = true;
            let _ = writeln!(
                o,
                "- **{}**: {}",
                cell(&s.step),
                cell(&change_line(c, s.floor.as_ref()))
            );
            for cause in c.causes.iter().take(SHOWN_CAUSES) {
                let _ = writeln!(o, "  - {}", cell(&cause_text(cause)));
            }
            let _ = writeln!(o, "  - counters: {}", cell(&c.counters));
        }
    }
    if !any {
        o.push_str("None: no step changed beyond its noise.\n");
    }
    let _ = writeln!(o, "\n_{}_", h.method);
    o
}

/// One step's trend chart (every repeat a dot, the medians joined, each change point a
/// dashed line), as [`html`] draws it: for a page that shows a step's history beside
/// its verdict (`plumb serve`'s Compare and History pages). `None` for a step the
/// history does not follow.
pub fn step_trend_svg(h: &History, step: &str) -> Option<String> {
    h.steps
        .iter()
        .find(|s| s.step == step)
        .map(|s| trend_svg(h, s))
}

/// A change point in one line, beside the step's floor when it has one, as the text,
/// Markdown and HTML histories print it: `slower between g3 and g4: ops/s 1.2M → 1.0M …`.
pub fn change_text(c: &Change, floor: Option<&crate::noise::Floor>) -> String {
    change_line(c, floor)
}

/// A trend chart of one step: every repeat as a dot, the medians joined, each change
/// point a dashed line before its first point.
fn trend_svg(h: &History, s: &StepHistory) -> String {
    use crate::format::esc;
    use std::fmt::Write as _;
    let n = h.points.len().max(1);
    let (w, ht, left, right, top, bottom) = (760.0, 300.0, 70.0, 20.0, 16.0, 70.0);
    let y_max = s.values.iter().flatten().copied().fold(0.0, f64::max) * 1.1;
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let step_x = (w - left - right) / n as f64;
    let x = |i: f64| left + step_x * (i + 0.5);
    let y = |v: f64| top + (ht - top - bottom) * (1.0 - v / y_max);
    let mut o = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="trend" width="{w}" height="{ht}" viewBox="0 0 {w} {ht}" role="img"><title>{} ops/s per point</title>"#,
        esc(&s.step)
    );
    for k in 0..=4 {
        let v = y_max * k as f64 / 4.0;
        let _ = write!(
            o,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e8ec"/><text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
            w - right,
            left - 6.0,
            y(v) + 4.0,
            crate::svg::human(v),
            y = y(v)
        );
    }
    for c in &s.changes {
        let cx = x(c.point.index as f64 - 0.5);
        let colour = if c.regression { "#cf222e" } else { "#1a7f37" };
        let _ = write!(
            o,
            r#"<line class="change" x1="{cx:.1}" x2="{cx:.1}" y1="{top}" y2="{:.1}" stroke="{colour}" stroke-dasharray="6 4"><title>{}</title></line>"#,
            ht - bottom,
            esc(&change_line(c, s.floor.as_ref()))
        );
    }
    let line: Vec<String> = s
        .medians
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.map(|m| format!("{:.1},{:.1}", x(i as f64), y(m))))
        .collect();
    let _ = write!(
        o,
        r##"<polyline fill="none" stroke="#0969da" stroke-width="2" points="{}"/>"##,
        line.join(" ")
    );
    for (i, vals) in s.values.iter().enumerate() {
        for v in vals {
            let _ = write!(
                o,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#0969da" fill-opacity="0.5"/>"##,
                x(i as f64),
                y(*v)
            );
        }
        let label: String = h.points[i].label.chars().take(16).collect();
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" transform="rotate(-35 {:.1} {:.1})">{}</text>"#,
            x(i as f64),
            ht - bottom + 14.0,
            x(i as f64),
            ht - bottom + 14.0,
            esc(&label)
        );
    }
    o.push_str("</svg>");
    o
}

/// One HTML page: per step, the trend chart with its change points, each change's
/// causes, and where both sides stored CPU profiles, a differential flame graph per op
/// of the first run after the change against the last before it.
pub fn html(h: &History, runs: &[StoredRun], profiles: &crate::html::Profiles) -> String {
    use crate::format::esc;
    use std::fmt::Write as _;
    let mut body = format!(
        "<h1>History of {}</h1><p class=\"sub\">{} points: {}</p>",
        esc(&h.metric),
        h.points.len(),
        esc(&h
            .points
            .iter()
            .map(|p| p.label.as_str())
            .collect::<Vec<_>>()
            .join(" → "))
    );
    let ops = |id: i64, step: &str| {
        runs.iter()
            .find(|r| r.run.id == id)
            .and_then(|r| step_of(r, step))
            .map(|s| s.summary.ops)
    };
    let folded = |id: i64, step: &str| {
        profiles
            .get(&id)
            .and_then(|p| p.iter().find(|(s, _)| s == step))
            .map(|(_, f)| f.as_str())
    };
    for s in &h.steps {
        let _ = write!(body, "<h2>{}</h2>", esc(&s.step));
        body.push_str(&trend_svg(h, s));
        if s.changes.is_empty() {
            body.push_str("<p class=\"note\">No change point.</p>");
        }
        for c in &s.changes {
            let _ = write!(body, "<h3>{}</h3><table><thead><tr><th>cost</th><th class=\"num\">before</th><th class=\"num\">after</th><th class=\"num\">ratio</th><th class=\"num\">share of Δtime/op</th></tr></thead><tbody>", esc(&change_line(c, s.floor.as_ref())));
            for cause in &c.causes {
                let _ = write!(
                    body,
                    "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{}</td></tr>",
                    esc(&cause.cost),
                    crate::format::sig(Some(cause.before), 3),
                    crate::format::sig(Some(cause.after), 3),
                    cause.ratio,
                    cause.share.map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "—".into())
                );
            }
            body.push_str("</tbody></table>");
            let _ = write!(body, "<p class=\"note\">Counters: {}</p>", esc(&c.counters));
            let before_id = h.points[..c.point.index]
                .iter()
                .rev()
                .find_map(|p| p.run_ids.last().copied());
            let after_id = h.points[c.point.index].run_ids.first().copied();
            if let (Some(b), Some(a)) = (before_id, after_id) {
                if let (Some(fb), Some(fa), Some(qb), Some(qa)) = (
                    folded(b, &s.step),
                    folded(a, &s.step),
                    ops(b, &s.step),
                    ops(a, &s.step),
                ) {
                    let title = format!("{}: run {a} against run {b}, per op", s.step);
                    if let Some(svg) = crate::flame::differential(fb, qb, fa, qa, &title) {
                        body.push_str(&svg);
                    }
                }
            }
        }
    }
    let _ = write!(body, "<p class=\"note\">{}</p>", esc(&h.method));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>plumb history: {}</title><style>{}</style></head><body><main>{body}\
         </main></body></html>\n",
        esc(&h.metric),
        crate::html::STYLE
    )
}

/// Refuses options no history can be judged with: a significance that is not a
/// probability strictly between 0 and 1, or too few permutations for any p-value to
/// reach 0.05.
pub fn check_options(o: &changepoint::Options) -> Result<(), SelectError> {
    if !(o.alpha > 0.0 && o.alpha < 1.0) {
        bail!(
            "--alpha {}: give a significance between 0 and 1, e.g. 0.05",
            o.alpha
        );
    }
    if o.permutations < 19 {
        bail!(
            "--permutations {}: at least 19, or no p-value can reach 0.05",
            o.permutations
        );
    }
    Ok(())
}

/// The history of the points `selectors` name in the store, oldest first (or of one
/// selector's runs split by `by`), with the points themselves; refused below 3 points.
pub fn of_selectors(
    store: &plumb_store::Store,
    selectors: &[String],
    by: Option<&str>,
    opts: &changepoint::Options,
) -> Result<(History, Vec<Version>), SelectError> {
    let mut versions = crate::select::versions(store, selectors)?;
    if let Some(key) = by {
        versions = crate::select::split_by(versions, key)?;
    }
    if versions.len() < 3 {
        bail!(
            "history: {} point(s); a series needs at least 3 (for two, use plumb compare)",
            versions.len()
        );
    }
    let h = of_store(store, &versions, opts)?;
    Ok((h, versions))
}

/// The history as a document in `format` (CSV is not a history format: text instead),
/// its HTML with the points' runs' flame graphs from the store.
pub fn document(
    store: &plumb_store::Store,
    h: &History,
    versions: &[Version],
    format: crate::document::Format,
) -> Result<String, SelectError> {
    use crate::document::Format;
    Ok(match format {
        Format::Text | Format::Csv => text(h),
        Format::Md => markdown(h),
        Format::Json => {
            serde_json::to_string_pretty(h).map_err(|e| SelectError::Bad(e.to_string()))? + "\n"
        }
        Format::Html => {
            let runs: Vec<_> = versions
                .iter()
                .flat_map(|v| v.runs.iter().cloned())
                .collect();
            html(h, &runs, &crate::document::profiles(store, &runs)?)
        }
    })
}
