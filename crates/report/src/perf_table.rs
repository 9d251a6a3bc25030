//! Seed 002's perf stat table ("What does perf stat tell us about MySQL performance
//! regressions"), per step: one row per counter, each the version's count per query
//! relative to the base's, then GHz, ipc, cpu/o and QPS relative as they are; one column
//! per version; a counter per query more than [`HIGHLIGHT`] times the base's marked, as
//! the seed highlights the ones worth reading, where its extra events could cost at least
//! [`MIN_SHARE`] of the base's query ([`weight`], [`rule`]); and under it each version's
//! reading of the counters (code bloat, memory-system bloat, neither), from
//! [`crate::bloat`].
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

use crate::stats;
use crate::version::{values, Version};
use plumb_core::StepSummary;
use serde::Serialize;
use std::collections::BTreeMap;

/// The seed's mark: "I focus on the cases where the relative value is large (perhaps
/// larger than 1.15, as in a 15% increase)".
pub const HIGHLIGHT: f64 = 1.15;

/// The least share of the base's query a counter's extra events per query (the
/// version's count less the base's) must be able to cost for a ratio past [`HIGHLIGHT`]
/// to be marked: 1% of the base's instructions or cycles per query ([`weight`]).
///
/// Why: the ratio alone marks counters whose base is tiny (0.02 iTLB misses a query
/// rising to 0.05 is 2.5× and costs a few cycles of a query's hundreds of thousands),
/// and the seed's table is read to find where a regression went. Extra events that
/// could not cost 1% of the query cannot explain a QPS change that matters, and 1% is
/// about the run-to-run spread of CPU per query on a quiet host, the smallest change the
/// table beside them can show.
pub const MIN_SHARE: f64 = 0.01;

/// Nominal cycles an L1 data or instruction cache miss costs when the L2 serves it: L2
/// hit latency is 12–14 cycles on current Intel and AMD cores (Intel's optimization
/// reference manual, 7-cpu.com), rounded down. These prices are orders of magnitude, not
/// measurements (an out-of-order core overlaps part of every miss): the mark only has
/// to tell 0.05 misses a query from thousands.
pub const L1_MISS_CYCLES: f64 = 10.0;
/// Nominal cycles a mispredicted branch costs: 15–20 on current cores (Agner Fog, "The
/// microarchitecture of Intel, AMD and VIA CPUs").
pub const BRANCH_MISS_CYCLES: f64 = 20.0;
/// Nominal cycles an access that reaches the last-level cache (an L2 miss: `LLC-loads`,
/// `cache-references`) costs when the LLC serves it: about 40 cycles on a client core,
/// more across a server's mesh (7-cpu.com).
pub const LLC_ACCESS_CYCLES: f64 = 40.0;
/// Nominal cycles a TLB miss costs: a page walk, 20-odd cycles when the page-table
/// entries are cached, up to ~100 when they are not; the high end, so a walk-heavy
/// regression is not hidden.
pub const TLB_MISS_CYCLES: f64 = 100.0;
/// Nominal cycles a last-level cache miss costs when DRAM serves it: ~80 ns ("main
/// memory reference: 100 ns" in the well-known latency table), 200-odd cycles at 2.5–3
/// GHz.
pub const LLC_MISS_CYCLES: f64 = 200.0;

/// Nominal µs of kernel CPU a minor page fault costs: the trap, a page found or
/// allocated and zeroed, the mapping set, 0.5–1 µs on current cores; perf's page-faults
/// counts major faults too, but a cached database's are almost all minor.
pub const PAGE_FAULT_US: f64 = 1.0;
/// Nominal µs a major fault costs: a read from the device, ~100 µs on an SSD.
pub const MAJOR_FAULT_US: f64 = 100.0;
/// Nominal µs a context switch costs the CPU: the switch itself, 1–3 µs with the cache
/// and TLB refills after it (lmbench's lat_ctx reports 1–5 µs on current hardware).
pub const CONTEXT_SWITCH_US: f64 = 2.0;
/// Nominal µs a migration costs: the thread's working set refetched into another core's
/// caches, a few µs for a query's.
pub const MIGRATION_US: f64 = 5.0;

/// What a counter's extra events per query are weighed against, to tell whether they
/// could matter ([`MIN_SHARE`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weight {
    /// Events that are instructions, or one per instruction of a kind (branches, loads,
    /// stores, TLB and icache lookups): against the base's instructions per query.
    Instructions,
    /// Events charged this many nominal cycles each (cycles themselves 1, misses the
    /// `*_CYCLES` prices): against the base's cycles per query.
    Cycles(f64),
    /// CPU time per query (cpu/o, task-clock): its own cost, so the share is the ratio
    /// less one and every ratio past [`HIGHLIGHT`] could matter.
    Time,
    /// Kernel events (page faults, context switches, migrations) charged this many
    /// nominal µs each: against the base's CPU µs per query (cpu/o), which a host
    /// without a PMU still has.
    Micros(f64),
}

/// How `event` (perf's name, `:u`/`:k` and a `pmu/…/` wrapper ignored, or `cpu/o`) is
/// weighed; `None` for events with no nominal cost (anything unknown), which are marked
/// on their ratio alone.
pub fn weight(event: &str) -> Option<Weight> {
    let e = match event.strip_suffix('/').and_then(|s| s.split_once('/')) {
        Some((_, inner)) => inner,
        None => event,
    };
    let e = e.split(':').next().unwrap_or(e);
    Some(match e {
        "instructions"
        | "branches"
        | "branch-instructions"
        | "branch-loads"
        | "L1-dcache-loads"
        | "L1-dcache-stores"
        | "L1-icache-loads"
        | "dTLB-loads"
        | "dTLB-stores"
        | "iTLB-loads"
        | "mem-loads"
        | "mem-stores" => Weight::Instructions,
        "cycles"
        | "cpu-cycles"
        | "ref-cycles"
        | "stalled-cycles-frontend"
        | "stalled-cycles-backend" => Weight::Cycles(1.0),
        "L1-dcache-load-misses"
        | "L1-dcache-store-misses"
        | "L1-dcache-prefetch-misses"
        | "L1-icache-load-misses" => Weight::Cycles(L1_MISS_CYCLES),
        "branch-misses" | "branch-load-misses" => Weight::Cycles(BRANCH_MISS_CYCLES),
        "cache-references" | "LLC-loads" | "LLC-stores" | "LLC-prefetches" => {
            Weight::Cycles(LLC_ACCESS_CYCLES)
        }
        "dTLB-load-misses" | "dTLB-store-misses" | "dTLB-prefetch-misses" | "iTLB-load-misses" => {
            Weight::Cycles(TLB_MISS_CYCLES)
        }
        "cache-misses"
        | "LLC-load-misses"
        | "LLC-store-misses"
        | "LLC-prefetch-misses"
        | "node-loads"
        | "node-load-misses"
        | "node-stores"
        | "node-store-misses" => Weight::Cycles(LLC_MISS_CYCLES),
        "task-clock" | "task-clock-us" | "cpu-clock" | "cpu/o" => Weight::Time,
        "page-faults" | "faults" | "minor-faults" => Weight::Micros(PAGE_FAULT_US),
        "major-faults" => Weight::Micros(MAJOR_FAULT_US),
        "context-switches" | "cs" => Weight::Micros(CONTEXT_SWITCH_US),
        "cpu-migrations" | "migrations" => Weight::Micros(MIGRATION_US),
        _ => return None,
    })
}

/// The rule in one sentence, for the line under the table; `mark` names the mark
/// (`+`, `yellow`).
pub fn rule(mark: &str) -> String {
    format!(
        "{mark} marks a counter more than {HIGHLIGHT}× the base's per query whose extra events \
         could cost at least {}% of the base's query: of its instructions per query for \
         instructions, branches, loads and stores, of its cycles per query for cycles and for \
         misses at a nominal {L1_MISS_CYCLES} cycles an L1 miss, {BRANCH_MISS_CYCLES} a \
         mispredicted branch, {LLC_ACCESS_CYCLES} an LLC access, {TLB_MISS_CYCLES} a TLB miss \
         and {LLC_MISS_CYCLES} an LLC miss, of its CPU time per query for kernel events at a \
         nominal {PAGE_FAULT_US} µs a page fault ({MAJOR_FAULT_US} µs a major one), \
         {CONTEXT_SWITCH_US} µs a context switch and {MIGRATION_US} µs a migration, CPU time \
         (cpu/o, task-clock) being its own cost; \
         a counter with no base figure or nominal cost to weigh is marked on its ratio alone, \
         as the notes under the table say",
        MIN_SHARE * 100.0
    )
}

/// One row of the table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PerfRow {
    /// A perf event (`instructions`, `dTLB-load-misses`), or `GHz`, `ipc`, `cpu/o`, `QPS`.
    pub name: String,
    /// The base's median figure: per query for events, as is for the derived rows.
    pub base: Option<f64>,
    /// Each version's median relative to the base's, base first (1.0 where it has one).
    pub rel: Vec<Option<f64>>,
    /// Each version's 95% interval of its ratio to the base, from every run of each
    /// side ([`stats::ratio`]: Welch's t on log values); `None` for the base, for GHz
    /// and ipc, and with fewer than two runs on either side (`repeat` in a suite).
    pub ci: Vec<Option<(f64, f64)>>,
    /// Each version's mark: an event or cpu/o above [`HIGHLIGHT`] times the base's whose
    /// [`PerfRow::share`] reaches [`MIN_SHARE`] (or, with [`PerfRow::ratio_only`] set,
    /// above [`HIGHLIGHT`] alone).
    pub marked: Vec<bool>,
    /// Each version's extra events per query (its count less the base's, negative for a
    /// drop) as a share of the base's instructions or cycles per query at [`weight`]'s
    /// price (0.004 = 0.4%), what they could cost the query; for CPU time the ratio less
    /// one. `None` where not weighed: GHz, ipc and QPS, a missing figure, or a row with
    /// [`PerfRow::ratio_only`].
    pub share: Vec<Option<f64>>,
    /// Why the row is marked on its ratio alone, the seed's rule, when it is: no nominal
    /// cost for the event, or no base instructions or cycles per query to weigh its extra
    /// events against. `None` for weighed rows and for rows never marked (GHz, ipc, QPS).
    pub ratio_only: Option<String>,
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
    let (per_event, whose) = samples(v, step)?;
    let m: BTreeMap<String, f64> = per_event
        .into_iter()
        .filter_map(|(k, xs)| Some((k, stats::median(&xs)?)))
        .collect();
    Some((m, whose))
}

/// Each event's count per query in every run of `v` that finished `step`, with whose
/// counts they are: the repeats an interval is computed from.
fn samples(v: &Version, step: &str) -> Option<(BTreeMap<String, Vec<f64>>, &'static str)> {
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
    Some((per_event, whose?))
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

/// Each side's extra events per query in `name` as a share of the base's instructions
/// or cycles per query (`base`, the base's counts per query), and why the row is marked
/// on its ratio alone when it cannot be weighed.
fn weigh(
    name: &str,
    base: &BTreeMap<String, f64>,
    base_cpu_us: Option<f64>,
    figures: &[Option<f64>],
) -> (Vec<Option<f64>>, Option<String>) {
    let none = vec![None; figures.len()];
    let Some(b) = figures[0].filter(|b| b.is_finite() && *b > 0.0) else {
        return (none, None);
    };
    let budget = |ev: &str| base.get(ev).copied().filter(|v| v.is_finite() && *v > 0.0);
    let (price, budget) = match weight(name) {
        None => {
            return (
                none,
                Some(format!(
                    "no nominal cost for {name}, so nothing to weigh its extra events by"
                )),
            )
        }
        Some(Weight::Time) => (1.0, b),
        Some(Weight::Micros(price)) => match base_cpu_us.filter(|v| v.is_finite() && *v > 0.0) {
            Some(cpu) => (price, cpu),
            None => {
                return (
                    none,
                    Some("no base CPU time per query to charge its extra events against".into()),
                )
            }
        },
        Some(Weight::Instructions) => match budget("instructions") {
            Some(insn) => (1.0, insn),
            None => {
                return (
                    none,
                    Some("no base instructions per query to weigh its extra events against".into()),
                )
            }
        },
        Some(Weight::Cycles(price)) => match budget("cycles") {
            Some(cycles) => (price, cycles),
            None => {
                return (
                    none,
                    Some("no base cycles per query to charge its extra events against".into()),
                )
            }
        },
    };
    let share = figures
        .iter()
        .map(|x| {
            x.filter(|x| x.is_finite())
                .map(|x| (x - b) * price / budget)
        })
        .collect();
    (share, None)
}

/// Lines under a table for each version past [`HIGHLIGHT`] that the ratio alone would
/// have judged otherwise: not marked because its extra events could not cost
/// [`MIN_SHARE`] of the query, or marked on its ratio alone and why. `labels` are the
/// versions, base first.
pub fn notes(t: &PerfTable, labels: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for r in &t.rows {
        for (i, rel) in r.rel.iter().enumerate().skip(1) {
            let Some(rel) = rel.filter(|x| *x > HIGHLIGHT) else {
                continue;
            };
            let who = labels.get(i).map_or("?", String::as_str);
            if let Some(why) = &r.ratio_only {
                out.push(format!(
                    "{}: {who} {rel:.2}× marked on its ratio alone: {why}",
                    r.name
                ));
            } else if !r.marked[i] {
                let Some(share) = r.share.get(i).copied().flatten() else {
                    continue;
                };
                let extra = r.base.map(|b| b * (rel - 1.0));
                let (of, price) = match weight(&r.name) {
                    Some(Weight::Cycles(p)) if p != 1.0 => {
                        ("cycles", format!(" at {p} cycles each"))
                    }
                    Some(Weight::Cycles(_)) => ("cycles", String::new()),
                    Some(Weight::Micros(p)) => ("CPU time", format!(" at {p} µs each")),
                    _ => ("instructions", String::new()),
                };
                out.push(format!(
                    "{}: {who} {rel:.2}× not marked: its {} more a query could cost {}% of {}'s {of} per query{price}, under {}%",
                    r.name,
                    crate::format::sig(extra, 2),
                    crate::format::sig(Some(share * 100.0), 2),
                    labels.first().map_or("the base", String::as_str),
                    MIN_SHARE * 100.0
                ));
            }
        }
    }
    out
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
    let median_of = |get: &dyn Fn(&StepSummary) -> Option<f64>| -> Vec<Option<f64>> {
        versions
            .iter()
            .map(|v| stats::median(&values(v, step, get)))
            .collect()
    };
    let values_of = |get: &dyn Fn(&StepSummary) -> Option<f64>| -> Vec<Vec<f64>> {
        versions.iter().map(|v| values(v, step, get)).collect()
    };
    let sampled: Vec<BTreeMap<String, Vec<f64>>> = versions
        .iter()
        .map(|v| samples(v, step).map(|(m, _)| m).unwrap_or_default())
        .collect();
    let cpu_o = median_of(&cpu_per_op);
    let base_cpu_us = cpu_o[0];
    let row = |name: &str, figures: Vec<Option<f64>>, runs: Vec<Vec<f64>>, mark: bool| {
        let rel = rel_of(&figures);
        let ci = (0..figures.len())
            .map(|i| {
                let (b, o) = (runs.first()?, runs.get(i)?);
                (i > 0).then(|| stats::ratio(b, o)?.ci).flatten()
            })
            .collect();
        let (share, ratio_only) = if mark {
            weigh(name, &base, base_cpu_us, &figures)
        } else {
            (vec![None; figures.len()], None)
        };
        PerfRow {
            name: name.to_string(),
            base: figures[0],
            marked: rel
                .iter()
                .zip(&share)
                .map(|(r, sh)| {
                    mark && r.is_some_and(|r| r > HIGHLIGHT)
                        && (ratio_only.is_some() || sh.is_some_and(|sh| sh >= MIN_SHARE))
                })
                .collect(),
            rel,
            ci,
            share,
            ratio_only,
        }
    };
    let mut rows: Vec<PerfRow> = base
        .keys()
        .map(|ev| {
            let figs = sides
                .iter()
                .map(|m| m.as_ref().and_then(|m| m.get(ev).copied()))
                .collect();
            let runs = sampled
                .iter()
                .map(|m| m.get(ev).cloned().unwrap_or_default())
                .collect();
            row(ev, figs, runs, true)
        })
        .collect();
    if !no_pmu {
        rows.push(row(
            "GHz",
            derived.iter().map(|d| d.ghz).collect(),
            vec![],
            false,
        ));
        rows.push(row(
            "ipc",
            derived.iter().map(|d| d.ipc).collect(),
            vec![],
            false,
        ));
    }
    rows.sort_by_key(|r| r.name.to_lowercase());
    rows.push(row("cpu/o", cpu_o.clone(), values_of(&cpu_per_op), true));
    rows.push(row(
        "QPS",
        median_of(&|s| Some(s.ops_sec)),
        values_of(&|s| Some(s.ops_sec)),
        false,
    ));
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
        "perf stat, {}: {}'s counters per query relative to {base} (GHz, ipc, cpu/o and QPS as they are; {} = more than {HIGHLIGHT}× the base per query where it could cost {}% of the query, as the line under the table says; {})",
        t.step,
        t.whose,
        MARK,
        MIN_SHARE * 100.0,
        if t.in_turn {
            "each event counted in turn with its group, exactly over its own seconds"
        } else {
            "all events counted at once, perf multiplexing them"
        }
    )
}

/// What marks a figure above [`HIGHLIGHT`] that could matter ([`rule`]) in plain text.
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
