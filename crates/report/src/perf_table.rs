//! Seed 002's perf stat table ("What does perf stat tell us about MySQL performance
//! regressions"), per step: one row per counter, each the version's count per query
//! relative to the base's, then GHz, ipc, cpu/o and QPS relative as they are; one column
//! per version; a counter per query more than [`HIGHLIGHT`] times the base's marked, as
//! the seed highlights the ones worth reading; and under it each version's reading of the
//! counters (code bloat, memory-system bloat, neither), from [`crate::bloat`].
//!
//! The seed divides window totals by the relative QPS to get a ratio per query; plumb
//! stores counts per query already, so its ratios are the seed's normalised ones. The
//! seed leaves cycles as a window total; here every counter is per query (cycles per
//! query relative is cpu/o's hardware twin), which the header says.
//!
//! Whose counts: a SQL step's are the server's (`ServerCosts::perf_query`, every event
//! perf counted); an insert-benchmark step's the server's too (`StepSummary::perf`), or
//! plumb's own with an embedded engine when counted in turn; a KV step's are plumb's own
//! process with the embedded engine in it: every event perf counted when counted in turn
//! (`--perf-groups`, `StepSummary::perf`), else `HwCounters` (instructions, cycles,
//! cache and branch misses, with the process's CPU per op standing in for task-clock).

use crate::compare::{values, Version};
use crate::stats;
use plumb_core::StepSummary;
use serde::Serialize;
use std::collections::BTreeMap;

/// The seed's mark: "I focus on the cases where the relative value is large (perhaps
/// larger than 1.15, as in a 15% increase)".
pub const HIGHLIGHT: f64 = 1.15;

/// One row of the table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PerfRow {
    /// A perf event (`instructions`, `dTLB-load-misses`), or `GHz`, `ipc`, `cpu/o`, `QPS`.
    pub name: String,
    /// The base's median figure: per query for events, as is for the derived rows.
    pub base: Option<f64>,
    /// Each version's median relative to the base's, base first (1.0 where it has one).
    pub rel: Vec<Option<f64>>,
    /// Each version's mark: an event or cpu/o above [`HIGHLIGHT`] times the base's.
    pub marked: Vec<bool>,
}

/// One version's reading of the counters against the base.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PerfReading {
    /// The version's label.
    pub version: String,
    /// The verdict in words (`code bloat`, `memory-system bloat`, `unsupported: …`).
    pub verdict: String,
    /// The verdict with the figures behind it, one line.
    pub explanation: String,
}

/// The table of one step.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PerfTable {
    /// The step.
    pub step: String,
    /// Whose processes were counted: `server` or `plumb's process`.
    pub whose: String,
    /// Events in name order (case folded, as the seed lists them) with GHz and ipc among
    /// them, then cpu/o and QPS.
    pub rows: Vec<PerfRow>,
    /// Each version after the base, read against it.
    pub readings: Vec<PerfReading>,
    /// Set when no hardware event was counted on any side (a VM without a PMU): the
    /// table then holds software events and CPU per query only.
    pub no_pmu: bool,
    /// Set when every side counted its events one group at a time (`--perf-groups`),
    /// each exact over its own seconds, as the seed counts them, rather than all at
    /// once and multiplexed by perf.
    pub in_turn: bool,
}

/// Software events perf counts without a PMU: a table of only these has no hardware
/// counts to read.
const SOFTWARE: &[&str] = &[
    "task-clock",
    "task-clock-us",
    "context-switches",
    "cpu-migrations",
    "page-faults",
];

/// A step's counts per op and whose they are; `None` when nothing was counted.
fn counts(s: &StepSummary) -> Option<(BTreeMap<String, f64>, &'static str)> {
    if let Some(srv) = s.server.as_ref().filter(|srv| !srv.perf_query.is_empty()) {
        return Some((srv.perf_query.clone(), "server"));
    }
    if let Some(p) = s.perf.as_ref().filter(|p| !p.per_op.is_empty()) {
        let whose = if p.whose == "server" {
            "server"
        } else {
            "plumb's process"
        };
        return Some((p.per_op.clone(), whose));
    }
    let hw = &s.hw;
    let m: BTreeMap<String, f64> = [
        ("instructions", hw.instructions_op),
        ("cycles", hw.cycles_op),
        ("cache-misses", hw.cache_misses_op),
        ("branch-misses", hw.branch_misses_op),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v.filter(|v| v.is_finite())?)))
    .collect();
    if m.is_empty() {
        return None;
    }
    let mut m = m;
    if let Some(cpu) = s.cpu_us_op.filter(|v| v.is_finite()) {
        m.insert("task-clock-us".into(), cpu);
    }
    Some((m, "plumb's process"))
}

/// A version's median count per query of each event over its runs of `step`, and whose.
fn medians(v: &Version, step: &str) -> Option<(BTreeMap<String, f64>, &'static str)> {
    let mut per_event: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut whose = None;
    for r in &v.runs {
        let Some((s, _)) = r
            .steps
            .iter()
            .find(|(s, _)| s.name == step && s.status == plumb_core::StepStatus::Ok)
        else {
            continue;
        };
        if let Some((m, w)) = counts(&s.summary) {
            whose.get_or_insert(w);
            for (k, x) in m {
                per_event.entry(k).or_default().push(x);
            }
        }
    }
    let m: BTreeMap<String, f64> = per_event
        .into_iter()
        .filter_map(|(k, xs)| Some((k, stats::median(&xs)?)))
        .collect();
    Some((m, whose?))
}

/// The CPU per op the seed calls cpu/o: the server's for a SQL step, the process's else.
fn cpu_per_op(s: &StepSummary) -> Option<f64> {
    match &s.server {
        Some(srv) => srv.cpu_us_query,
        None => s.cpu_us_op,
    }
}

/// The tables of every step whose base has counts, one column per version. Empty with
/// fewer than two versions: a table of ratios needs something to be relative to.
pub fn tables(versions: &[Version], steps: &[String]) -> Vec<PerfTable> {
    if versions.len() < 2 {
        return Vec::new();
    }
    steps
        .iter()
        .filter_map(|step| table(versions, step))
        .collect()
}

fn table(versions: &[Version], step: &str) -> Option<PerfTable> {
    let (base, whose) = medians(&versions[0], step)?;
    let sides: Vec<Option<BTreeMap<String, f64>>> = versions
        .iter()
        .map(|v| medians(v, step).map(|(m, _)| m))
        .collect();
    let no_pmu = sides
        .iter()
        .flatten()
        .all(|m| m.keys().all(|k| SOFTWARE.contains(&k.as_str())));
    let derived: Vec<plumb_probes::perfstat::Derived> = sides
        .iter()
        .map(|m| {
            m.as_ref()
                .map(plumb_probes::perfstat::derived)
                .unwrap_or_default()
        })
        .collect();
    let rel_of = |figures: &[Option<f64>]| -> Vec<Option<f64>> {
        let b = figures[0].filter(|b| *b > 0.0);
        figures.iter().map(|x| Some(x.as_ref()? / b?)).collect()
    };
    let row = |name: &str, figures: Vec<Option<f64>>, mark: bool| {
        let rel = rel_of(&figures);
        PerfRow {
            name: name.to_string(),
            base: figures[0],
            marked: rel
                .iter()
                .map(|r| mark && r.is_some_and(|r| r > HIGHLIGHT))
                .collect(),
            rel,
        }
    };
    let mut rows: Vec<PerfRow> = base
        .keys()
        .map(|ev| {
            let figs = sides
                .iter()
                .map(|m| m.as_ref().and_then(|m| m.get(ev).copied()))
                .collect();
            row(ev, figs, true)
        })
        .collect();
    if !no_pmu {
        rows.push(row("GHz", derived.iter().map(|d| d.ghz).collect(), false));
        rows.push(row("ipc", derived.iter().map(|d| d.ipc).collect(), false));
    }
    rows.sort_by_key(|r| r.name.to_lowercase());
    let median_of = |get: &dyn Fn(&StepSummary) -> Option<f64>| -> Vec<Option<f64>> {
        versions
            .iter()
            .map(|v| stats::median(&values(v, step, get)))
            .collect()
    };
    rows.push(row("cpu/o", median_of(&cpu_per_op), true));
    rows.push(row("QPS", median_of(&|s| Some(s.ops_sec)), false));
    let readings = versions
        .iter()
        .zip(&sides)
        .skip(1)
        .map(|(v, m)| {
            let r = crate::bloat::read(&base, &m.clone().unwrap_or_default());
            PerfReading {
                version: v.label.clone(),
                verdict: r.verdict.to_string(),
                explanation: r.explanation,
            }
        })
        .collect();
    let in_turn = versions.iter().all(|v| {
        v.runs.iter().any(|r| {
            r.steps.iter().any(|(s, _)| {
                s.name == step
                    && (s
                        .summary
                        .server
                        .as_ref()
                        .is_some_and(|srv| !srv.perf_counted_secs.is_empty())
                        || s.summary
                            .perf
                            .as_ref()
                            .is_some_and(|p| !p.counted_secs.is_empty()))
            })
        })
    });
    Some(PerfTable {
        step: step.to_string(),
        whose: whose.to_string(),
        rows,
        readings,
        no_pmu,
        in_turn,
    })
}

/// The title line above a table, shared by the terminal and Markdown.
pub fn title(t: &PerfTable, base: &str) -> String {
    format!(
        "perf stat, {}: {}'s counters per query relative to {base} (GHz, ipc, cpu/o and QPS as they are; {} = more than {HIGHLIGHT}× the base per query; {})",
        t.step,
        t.whose,
        MARK,
        if t.in_turn {
            "each event counted in turn with its group, exactly over its own seconds"
        } else {
            "all events counted at once, perf multiplexing them"
        }
    )
}

/// What marks a figure above [`HIGHLIGHT`] in plain text.
pub const MARK: &str = "+";

/// A relative figure as the seed prints it, `1.66`, with [`MARK`] when marked.
pub fn cell(rel: Option<f64>, marked: bool) -> String {
    match rel {
        None => "n/a".into(),
        Some(r) if marked => format!("{r:.2}{MARK}"),
        Some(r) => format!("{r:.2}"),
    }
}

/// The line said when the table holds no hardware event.
pub const NO_PMU: &str = "no hardware counters on this host (no PMU, or perf refused them): software events and CPU per query only, and no bloat reading";
