//! Comparisons in the seeds' layout: one row per test, one column per version, every
//! figure relative to the base version, with medians over repeats, a 95% interval of
//! each ratio and a `~` where the difference is not significant.

use crate::stats::{self, Ratio};
pub use crate::version::{measured_steps, values, Version};
use crate::warnings;
use plumb_core::StepSummary;
use serde::Serialize;

/// One (step, version) cell.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cell {
    /// Median over the version's repeats; `None` if no run has the figure.
    pub median: Option<f64>,
    /// Repeats that had the figure.
    pub n: usize,
    /// Relative to the base (absent for the base itself or when undefined).
    pub ratio: Option<f64>,
    /// 95% interval of the ratio.
    pub ci: Option<(f64, f64)>,
    /// Whether the difference from the base is significant.
    pub significant: bool,
}

/// A table: one row per step, one cell per version.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// The figure compared.
    pub metric: String,
    /// `rows[step][version]`.
    pub rows: Vec<Vec<Cell>>,
}

/// Everything `plumb compare` and the reports print.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Labels, base first.
    pub versions: Vec<String>,
    /// Run ids behind each label.
    pub run_ids: Vec<Vec<i64>>,
    /// Step names, in the base's order then any only the others have.
    pub steps: Vec<String>,
    /// ops_sec.
    pub ops_sec: Table,
    /// Per-op costs with at least one figure.
    pub costs: Vec<Table>,
    /// Fairness warnings, printed above the tables.
    pub warnings: Vec<String>,
    /// SQL runs: relative QPS summarised per group of microbenchmarks (point, range
    /// without and with aggregation, writes), one row per group and version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSummary>,
    /// SQL runs: the server's own counters per query, each a table like `costs`, in
    /// name order. Every counter that moved is here, whichever versions have it, so the
    /// JSON and the HTML report lose nothing the terminal leaves out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_counters: Vec<Table>,
    /// Indices into `server_counters` of the ones the terminal and Markdown print, most
    /// moved first: between engines most counters are one side's own and would bury
    /// the few both can be read against (see [`rank_server_counters`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_counters_shown: Vec<usize>,
    /// Steps every version ran under the same rate profile, phase by phase: a mean
    /// over a ramp that asked for different rates in each phase hides where one side
    /// fell behind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseComparison>,
    /// The counters left out of the terminal and Markdown because only some versions
    /// have them (PostgreSQL's pg_stat_* beside MariaDB's status variables): without a
    /// figure on both sides there is no ratio to read, only a list to scroll past.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_counters_left_out: Vec<LeftOutCounter>,
    /// Steps whose sides ran beside different host noise (steal, other processes' CPU)
    /// by more than [`warnings::NOISE_DIFF_PCT`] points: their difference may be the
    /// host's, not the engine's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<NoiseDiff>,
    /// Options whose value differs between the versions (the engine's effective
    /// options included, as RocksDB wrote them in its OPTIONS file): what changed
    /// besides the thing compared, or because of it (a release's new default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options_differ: Vec<OptionDiff>,
    /// Each step's ops/s change beside its noise floor on this host, when the store
    /// holds enough blocks of the base's plan ([`Comparison::set_floors`]): a
    /// significant change inside the floor is what drift between blocks alone does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub floors: Vec<FloorNote>,
    /// What each "no significant change" in ops/s could have seen (80% power, 5%
    /// level): from the repeats' scatter, or the step's floor once one is set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reach: Vec<ReachNote>,
    /// Seed 002's perf stat table per step with counters: each counter per query
    /// relative to the base, GHz, ipc, cpu/o and QPS, and each version's bloat reading.
    pub perf: Vec<crate::perf_table::PerfTable>,
}

/// One step's ops/s change against the base, beside the step's noise floor.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FloorNote {
    /// The step.
    pub step: String,
    /// The other version's label.
    pub version: String,
    /// The floor learned from the store.
    pub floor: crate::noise::Floor,
    /// The line printed under the tables.
    pub note: String,
}

/// One step's ops/s "no significant change", with what it could have seen.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReachNote {
    /// The step.
    pub step: String,
    /// The other version's label.
    pub version: String,
    /// The smallest change the comparison could have seen.
    pub reach: crate::power::Reach,
    /// The line printed under the tables.
    pub note: String,
}

impl ReachNote {
    fn new(step: &str, version: &str, base: &str, ratio: f64, reach: crate::power::Reach) -> Self {
        ReachNote {
            step: step.to_string(),
            version: version.to_string(),
            reach,
            note: format!(
                "{step} ops/s, {version} against {base}: no significant change ({:+.1}%); {}",
                100.0 * (ratio - 1.0),
                reach.sentence(Some(crate::power::REACH_TARGET))
            ),
        }
    }
}

/// The reach of every ops/s cell that is not significant, from its repeats.
fn reach_notes(versions: &[Version], steps: &[String], ops: &Table) -> Vec<ReachNote> {
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let base = values(&versions[0], step, &|s| Some(s.ops_sec));
        for (vi, v) in versions.iter().enumerate().skip(1) {
            let cell = &ops.rows[i][vi];
            let (Some(r), false) = (cell.ratio, cell.significant) else {
                continue;
            };
            let vals = values(v, step, &|s| Some(s.ops_sec));
            if let Some(reach) =
                crate::power::Reach::two_sample(&base, &vals, 0.05, crate::power::Unit::Repeats)
            {
                out.push(ReachNote::new(step, &v.label, &versions[0].label, r, reach));
            }
        }
    }
    out
}

impl Comparison {
    /// Sets each step's ops/s change beside its floor (`floors` by (step, metric id), as
    /// [`crate::noise::floors`] returns them). The floors come from the store, which this
    /// crate does not open, so the caller learns them and hands them in.
    pub fn set_floors(
        &mut self,
        floors: &std::collections::BTreeMap<(String, String), crate::noise::Floor>,
    ) {
        self.floors.clear();
        for (i, step) in self.steps.iter().enumerate() {
            let Some(f) = floors.get(&(step.clone(), "ops_sec".to_string())) else {
                continue;
            };
            for (vi, v) in self.versions.iter().enumerate().skip(1) {
                let cell = &self.ops_sec.rows[i][vi];
                let Some(r) = cell.ratio else { continue };
                // Blocks of repeats are judged against the floor, so a "no change" could
                // have seen what the floor lets through, not what the repeats' scatter
                // alone would.
                let base = self.versions[0].clone();
                for n in self
                    .reach
                    .iter_mut()
                    .filter(|n| &n.step == step && &n.version == v)
                {
                    *n = ReachNote::new(step, v, &base, r, crate::power::Reach::floor(f));
                }
                self.floors.push(FloorNote {
                    step: step.clone(),
                    version: v.clone(),
                    floor: *f,
                    note: format!(
                        "{step} ops/s, {v} against {}: {}",
                        self.versions[0],
                        crate::noise::beside_floor(r, cell.ci, f)
                    ),
                });
            }
        }
    }
}

/// A server counter the terminal and Markdown leave out, and which versions lack it,
/// so the one line that says so can name the sides and a reader of the JSON need not
/// work it out from the cells.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LeftOutCounter {
    /// Index into `Comparison::server_counters`, where its table is.
    pub index: usize,
    /// The counter's name as recorded (`blks_hit`, `perf.cycles`), without "/query".
    pub counter: String,
    /// Labels of the versions with no figure for it in any step, in version order.
    pub missing_from: Vec<String>,
}

/// A step whose two sides (the base and one other version) ran beside different host
/// noise: medians over each side's repeats, percent of the machine's CPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NoiseDiff {
    /// The step.
    pub step: String,
    /// The other version's label (the base is `Comparison::versions[0]`).
    pub version: String,
    /// Steal, base then other; `None` where a side has no figure.
    pub steal_pct: [Option<f64>; 2],
    /// Other processes' CPU, base then other.
    pub outside_cpu_pct: [Option<f64>; 2],
    /// The footnote printed under the tables.
    pub note: String,
}

/// The steps whose sides differ in steal or outside load by more than
/// [`warnings::NOISE_DIFF_PCT`] points, each other version against the base.
pub fn noise_diffs(versions: &[Version], steps: &[String]) -> Vec<NoiseDiff> {
    let Some(base) = versions.first() else {
        return Vec::new();
    };
    let median = |v: &Version, step: &str, get: fn(&StepSummary) -> Option<f64>| {
        stats::median(&values(v, step, &get))
    };
    let steal = |s: &StepSummary| s.steal_pct;
    let outside = |s: &StepSummary| s.outside_cpu_pct;
    let mut out = Vec::new();
    for step in steps {
        for v in &versions[1..] {
            let st = [median(base, step, steal), median(v, step, steal)];
            let ou = [median(base, step, outside), median(v, step, outside)];
            let apart = |x: [Option<f64>; 2]| match x {
                [Some(a), Some(b)] => (a - b).abs() > warnings::NOISE_DIFF_PCT,
                _ => false,
            };
            let mut what = Vec::new();
            if apart(st) {
                what.push(format!(
                    "{} had {:.0}% steal, {} {:.0}%",
                    v.label,
                    st[1].unwrap_or(0.0),
                    base.label,
                    st[0].unwrap_or(0.0)
                ));
            }
            if apart(ou) {
                what.push(format!(
                    "other processes used {:.0}% of the machine beside {}, {:.0}% beside {}",
                    ou[1].unwrap_or(0.0),
                    v.label,
                    ou[0].unwrap_or(0.0),
                    base.label
                ));
            }
            if !what.is_empty() {
                out.push(NoiseDiff {
                    step: step.clone(),
                    version: v.label.clone(),
                    steal_pct: st,
                    outside_cpu_pct: ou,
                    note: format!(
                        "{step}: {}: the difference may be the host (`plumb show --intervals` \
                         has each second's steal% and outside%)",
                        what.join("; ")
                    ),
                });
            }
        }
    }
    out
}

/// One option that differs between versions.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OptionDiff {
    /// The option's key as stored (`rocksdb.effective.db.compaction_readahead_size`).
    pub key: String,
    /// Its value in each version, base first: `None` where the version's runs lack
    /// it, "(varies)" where its repeats disagree.
    pub values: Vec<Option<String>>,
}

/// Keys that name a run's place rather than how it ran.
const PLACE_KEYS: [&str; 3] = ["target", "variant", "size"];

/// The options whose values differ between versions, in key order. Between different
/// engines, options only some versions have (one engine's own) are left out: they
/// differ by construction, and would bury the ones that matter.
pub fn options_differ(versions: &[Version]) -> Vec<OptionDiff> {
    let value = |v: &Version, k: &str| -> Option<String> {
        let mut vals = v.runs.iter().map(|r| r.run.options.get(k));
        let first = vals.next()??;
        if vals.all(|x| x == Some(first)) {
            Some(first.clone())
        } else {
            Some("(varies)".into())
        }
    };
    let engines: std::collections::BTreeSet<Option<String>> =
        versions.iter().map(|v| value(v, "engine")).collect();
    let same_engine = engines.len() == 1;
    let keys: std::collections::BTreeSet<&String> = versions
        .iter()
        .flat_map(|v| v.runs.iter().flat_map(|r| r.run.options.keys()))
        .filter(|k| !PLACE_KEYS.contains(&k.as_str()))
        .collect();
    keys.into_iter()
        .map(|k| OptionDiff {
            key: k.clone(),
            values: versions.iter().map(|v| value(v, k)).collect(),
        })
        .filter(|d| d.values.iter().any(|v| v != &d.values[0]))
        .filter(|d| same_engine || d.values.iter().all(Option::is_some))
        .collect()
}

/// Relative QPS of one version over one group of microbenchmarks, as the seeds'
/// tables summarise them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupSummary {
    /// The group's heading.
    pub group: String,
    /// The version (not the base).
    pub version: String,
    /// Microbenchmarks with a ratio.
    pub n: usize,
    /// Median of their relative QPS.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

fn table(
    versions: &[Version],
    steps: &[String],
    name: &str,
    get: &dyn Fn(&StepSummary) -> Option<f64>,
) -> Table {
    let rows = steps
        .iter()
        .map(|step| {
            let base = values(&versions[0], step, get);
            versions
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let vals = values(v, step, get);
                    let r: Option<Ratio> = (i > 0).then(|| stats::ratio(&base, &vals)).flatten();
                    Cell {
                        median: stats::median(&vals),
                        n: vals.len(),
                        ratio: r.map(|r| r.value),
                        ci: r.and_then(|r| r.ci),
                        significant: r.is_some_and(|r| r.significant()),
                    }
                })
                .collect()
        })
        .collect();
    Table {
        metric: name.to_string(),
        rows,
    }
}

/// Whether the host's noise may explain this step's difference between the sides
/// (the mark `*` beside its name).
pub fn noisy(c: &Comparison, step: &str) -> bool {
    c.noise.iter().any(|n| n.step == step)
}

/// Builds the comparison; `versions[0]` is the base. Needs at least one version.
pub fn compare(versions: &[Version]) -> Comparison {
    let steps = measured_steps(versions.iter().flat_map(|v| v.runs.iter()));
    let ops_sec = table(versions, &steps, "ops_sec", &|s| Some(s.ops_sec));
    let costs = crate::metrics::COMPARE_COSTS
        .iter()
        .map(|id| crate::metrics::metric(id))
        .map(|m| table(versions, &steps, m.id, &m.get))
        .filter(|t| t.rows.iter().flatten().any(|c| c.median.is_some()))
        .collect();
    let groups = group_summaries(versions, &steps, &ops_sec);
    let noise = noise_diffs(versions, &steps);
    let server_counters: Vec<Table> = counter_names(versions)
        .into_iter()
        .map(|name| {
            let n = name.clone();
            table(versions, &steps, &format!("{name}/query"), &move |s| {
                if let Some(ev) = n.strip_prefix("wait.") {
                    return plumb_core::waits::us_query(s).get(ev).copied();
                }
                let srv = s.server.as_ref()?;
                match n.strip_prefix("perf.") {
                    Some(ev) => srv.perf_query.get(ev).copied(),
                    None => srv.counters_query.get(&n).copied(),
                }
            })
        })
        // Counters that never moved explain nothing.
        .filter(|t| {
            t.rows
                .iter()
                .flatten()
                .any(|c| c.median.is_some_and(|m| m > 0.0))
        })
        .collect();
    let labels: Vec<String> = versions.iter().map(|v| v.label.clone()).collect();
    let reach = reach_notes(versions, &steps, &ops_sec);
    let perf = crate::perf_table::tables(versions, &steps);
    let phases = phase_comparisons(versions, &steps);
    let (server_counters_shown, server_counters_left_out) =
        rank_server_counters(&server_counters, &labels);
    Comparison {
        versions: labels,
        run_ids: versions
            .iter()
            .map(|v| v.runs.iter().map(|r| r.run.id).collect())
            .collect(),
        steps,
        ops_sec,
        costs,
        warnings: warnings::fairness(versions),
        noise,
        groups,
        server_counters,
        server_counters_shown,
        phases,
        server_counters_left_out,
        options_differ: options_differ(versions),
        floors: Vec::new(),
        reach,
        perf,
    }
}

/// One step's phases under one rate profile, every version's figures per phase
/// (medians over its repeats).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhaseComparison {
    /// The step.
    pub step: String,
    /// The profile every version ran.
    pub profile: String,
    /// Each phase as written.
    pub phase: Vec<String>,
    /// Served ops/s, `[phase][version]`.
    pub served: Vec<Vec<Option<f64>>>,
    /// The worst second's p99 response time, µs, `[phase][version]`.
    pub p99_worst_us: Vec<Vec<Option<f64>>>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The steps every version ran under one and the same rate profile, phase by phase.
pub fn phase_comparisons(versions: &[Version], steps: &[String]) -> Vec<PhaseComparison> {
    let mut out = Vec::new();
    for step in steps {
        // Every run of every version: the step's profile and its phase rows.
        let Some((profile, per_version)) =
            crate::phases::rows_by_version(versions, step, false).filter(|_| versions.len() > 1)
        else {
            continue;
        };
        let Ok(parsed) = profile.parse::<plumb_workloads::RateProfile>() else {
            continue;
        };
        let names: Vec<String> = parsed.phases().iter().map(|p| p.to_string()).collect();
        let pick = |f: &dyn Fn(&crate::phases::PhaseRow) -> Option<f64>| -> Vec<Vec<Option<f64>>> {
            names
                .iter()
                .map(|name| {
                    per_version
                        .iter()
                        .map(|runs| {
                            median(
                                runs.iter()
                                    .filter_map(|rows| rows.iter().find(|r| &r.phase == name))
                                    .filter_map(f)
                                    .collect(),
                            )
                        })
                        .collect()
                })
                .collect()
        };
        let served = pick(&|r| Some(r.served));
        let p99 = pick(&|r| r.p99_worst_us);
        // Phases no version reached say nothing.
        let keep: Vec<usize> = (0..names.len())
            .filter(|&i| served[i].iter().any(Option::is_some))
            .collect();
        out.push(PhaseComparison {
            step: step.clone(),
            profile,
            phase: keep.iter().map(|&i| names[i].clone()).collect(),
            served: keep.iter().map(|&i| served[i].clone()).collect(),
            p99_worst_us: keep.iter().map(|&i| p99[i].clone()).collect(),
        });
    }
    out
}

/// How far a counter moved per query: the largest |ln ratio| over its cells, so a
/// halving and a doubling count alike. A drop to zero is infinitely far; `None` when no
/// cell has a ratio.
pub fn moved(t: &Table) -> Option<f64> {
    t.rows
        .iter()
        .flatten()
        .filter_map(|c| c.ratio)
        .map(|r| r.ln().abs())
        .max_by(f64::total_cmp)
}

/// Splits `tables` (server counters, in name order, one cell per label) into the
/// indices worth printing, most moved first, and the ones only some versions have.
/// A counter counts as had by a version when any step has a figure for it. Ties keep
/// name order; counters with no ratio anywhere come after every one with a ratio,
/// since there is nothing to rank them by.
pub fn rank_server_counters(
    tables: &[Table],
    labels: &[String],
) -> (Vec<usize>, Vec<LeftOutCounter>) {
    let mut order: Vec<(usize, Option<f64>)> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (i, moved(t)))
        .collect();
    // Stable: equal scores stay in name order.
    order.sort_by(|a, b| match (a.1, b.1) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let mut shown = Vec::new();
    let mut left_out = Vec::new();
    for (i, _) in order {
        let t = &tables[i];
        let missing_from: Vec<String> = labels
            .iter()
            .enumerate()
            .filter(|(vi, _)| {
                !t.rows
                    .iter()
                    .any(|r| r.get(*vi).is_some_and(|c| c.median.is_some()))
            })
            .map(|(_, l)| l.clone())
            .collect();
        if missing_from.is_empty() {
            shown.push(i);
        } else {
            left_out.push(LeftOutCounter {
                index: i,
                counter: t
                    .metric
                    .strip_suffix("/query")
                    .unwrap_or(&t.metric)
                    .to_string(),
                missing_from,
            });
        }
    }
    (shown, left_out)
}

/// Most counter names the left-out line prints: enough to recognise each side's
/// family, few enough to keep it one line.
const LEFT_OUT_NAMES: usize = 8;

/// The one line the terminal and Markdown print for the counters they leave out: how
/// many, why, which sides have them, a few names of each, and where the rest are.
/// `None` when nothing was left out.
pub fn left_out_line(c: &Comparison) -> Option<String> {
    if c.server_counters_left_out.is_empty() {
        return None;
    }
    // Group by which versions have the counter, in the order the groups first appear.
    let mut groups: Vec<(Vec<&String>, Vec<&str>)> = Vec::new();
    for l in &c.server_counters_left_out {
        let have: Vec<&String> = c
            .versions
            .iter()
            .filter(|v| !l.missing_from.contains(v))
            .collect();
        match groups.iter_mut().find(|(h, _)| *h == have) {
            Some((_, names)) => names.push(&l.counter),
            None => groups.push((have, vec![&l.counter])),
        }
    }
    let per_group = (LEFT_OUT_NAMES / groups.len()).max(1);
    let parts: Vec<String> = groups
        .iter()
        .map(|(have, names)| {
            let who = match have.as_slice() {
                [] => "no version has a figure for".to_string(),
                [one] => format!("only {one} has"),
                many => format!(
                    "only {} have",
                    many.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            let mut list = names[..names.len().min(per_group)].join(", ");
            if names.len() > per_group {
                list.push_str(", …");
            }
            format!("{who} {}: {list}", names.len())
        })
        .collect();
    let n = c.server_counters_left_out.len();
    Some(format!(
        "server counters: {n} left out that only some versions have, so no ratio to read (all are in --json and the HTML report); {}",
        parts.join("; ")
    ))
}

/// Every server counter name any run recorded, sorted.
fn counter_names(versions: &[Version]) -> Vec<String> {
    let mut names: Vec<String> = versions
        .iter()
        .flat_map(|v| v.runs.iter())
        .flat_map(|r| r.steps.iter())
        .flat_map(|(s, _)| {
            let c = s.summary.server.as_ref();
            c.into_iter()
                .flat_map(|c| {
                    c.counters_query
                        .keys()
                        .cloned()
                        .chain(c.perf_query.keys().map(|k| format!("perf.{k}")))
                })
                .chain(
                    plumb_core::waits::us_query(&s.summary)
                        .into_keys()
                        .map(|k| format!("wait.{k}")),
                )
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The SQL group of a step name, from the first run that has the step.
fn group_of(versions: &[Version], step: &str) -> Option<plumb_workloads::SqlGroup> {
    versions
        .iter()
        .flat_map(|v| v.runs.iter())
        .flat_map(|r| r.steps.iter())
        .find(|(s, _)| s.name == step)
        .and_then(|(s, _)| match s.kind {
            plumb_store::Kind::Sql(k) => Some(k.group()),
            _ => None,
        })
}

fn group_summaries(versions: &[Version], steps: &[String], ops: &Table) -> Vec<GroupSummary> {
    use plumb_workloads::SqlGroup;
    let mut out = Vec::new();
    for g in [
        SqlGroup::Point,
        SqlGroup::Range,
        SqlGroup::RangeAgg,
        SqlGroup::Write,
    ] {
        for (vi, v) in versions.iter().enumerate().skip(1) {
            let mut r: Vec<f64> = steps
                .iter()
                .enumerate()
                .filter(|(_, st)| group_of(versions, st) == Some(g))
                .filter_map(|(i, _)| ops.rows[i][vi].ratio)
                .collect();
            if r.is_empty() {
                continue;
            }
            r.sort_by(f64::total_cmp);
            out.push(GroupSummary {
                group: g.label().to_string(),
                version: v.label.clone(),
                n: r.len(),
                median: stats::median(&r).unwrap_or(f64::NAN),
                min: r[0],
                max: r[r.len() - 1],
            });
        }
    }
    out
}

/// A ratio cell as the seeds print it: `0.91`, with ` ~` when not significant.
pub fn ratio_text(c: &Cell) -> String {
    match c.ratio {
        None => "n/a".into(),
        Some(r) => {
            let mark = if c.significant { "" } else { " ~" };
            match c.ci {
                Some((lo, hi)) if c.significant => format!("{r:.2} ({lo:.2}-{hi:.2})"),
                _ => format!("{r:.2}{mark}"),
            }
        }
    }
}
