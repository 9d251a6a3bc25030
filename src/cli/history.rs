//! `plumb history` (a series of versions: where each step changed, and what the change
//! cost per op) and `plumb check` (the CI gate: the newest runs of a plan against a base
//! or its history, exit status and JUnit XML for CI).

use super::compare::{write_whole, Format};
use super::{select, StoreArg};
use anyhow::{bail, Context};
use plumb_report::changepoint;
use plumb_report::check::{self, CheckOptions};
use plumb_report::Version;
use plumb_store::Store;
use std::path::PathBuf;
use std::process::ExitCode;

/// `plumb history SELECTOR… | SELECTOR --by KEY`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Each selector is one point of the series, in the order given (a run id, \
g12, s3, or filters such as tag=v1, version=8.6.7, git=abc123); or one selector split \
with --by KEY, one point per value in the order the runs were made.\n\
Examples:\n  plumb history version=8.1.1 version=8.6.7 version=8.8.1\n  \
plumb history engine=rocksdb,tag=nightly --by version\n  \
plumb history s3 --by tag --format html -o history.html"
)]
pub struct HistoryArgs {
    /// The points of the series, oldest first (one is enough with --by).
    #[arg(required = true, num_args = 1.., value_name = "SELECTOR")]
    selectors: Vec<String>,
    /// Split the selected runs into points by this key (version, git, tag, plumb, host,
    /// opt.NAME), in the order of each value's first run.
    #[arg(long, value_name = "KEY")]
    by: Option<String>,
    /// Significance of a change point: the permutation test's p must be at most this.
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    alpha: f64,
    /// Permutations per test (more: finer p-values, slower).
    #[arg(long, default_value_t = 199, value_name = "N")]
    permutations: usize,
    /// Output format (text, md, html, json).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write to this file instead of stdout (written whole, or not at all).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

/// `plumb check [SELECTOR] [--base SELECTOR]`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 no regression; 1 a regression beyond the threshold; \
3 a step too noisy to judge (unstable) and none regressed (0 with --allow-unstable); 2 bad \
input.\n\
Without --base, the base is the history: the runs of the same plan made before the new \
ones (the last --history groups of repeats).\n\
Examples:\n  plumb check                                  newest group against its plan's history\n  \
plumb check g40 --base tag=release --threshold 3 --junit check.xml"
)]
pub struct CheckArgs {
    /// The runs checked [default: the newest run's group of repeats].
    #[arg(value_name = "SELECTOR")]
    selector: Option<String>,
    /// The base (a run id, g12, tag=release, …) [default: the plan's history].
    #[arg(long, value_name = "SELECTOR")]
    base: Option<String>,
    /// Without --base: how many earlier groups of the same plan make the base.
    #[arg(long, default_value_t = 5, value_name = "N")]
    history: usize,
    /// Fail on a significant change worse than this, in percent.
    #[arg(long, default_value_t = 5.0, value_name = "PCT")]
    threshold: f64,
    /// A step whose repeats swing more than this (percent of their median) is unstable,
    /// unless its change is beyond the noise (significant and past the threshold: then
    /// it is judged) [default: the threshold].
    #[arg(long, value_name = "PCT")]
    unstable: Option<f64>,
    /// The figures judged (metric ids from `plumb compare --json`), repeatable.
    #[arg(long = "metric", value_name = "ID", default_value = "ops_sec")]
    metrics: Vec<String>,
    /// Judge only these steps (repeatable) [default: every measured step].
    #[arg(long = "step", value_name = "NAME")]
    steps: Vec<String>,
    /// Exit 0 when steps are unstable and none regressed.
    #[arg(long)]
    allow_unstable: bool,
    /// Also write JUnit XML here (one test case per step and metric).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Print JSON instead of the Markdown summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
}

/// Refuses a significance level that is not a probability strictly between 0 and 1.
pub fn check_alpha(alpha: f64) -> anyhow::Result<()> {
    if !(alpha > 0.0 && alpha < 1.0) {
        bail!("--alpha {alpha}: give a significance between 0 and 1, e.g. 0.05");
    }
    Ok(())
}

pub fn history_cmd(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    check_alpha(a.alpha)?;
    if a.permutations < 19 {
        bail!(
            "--permutations {}: at least 19, or no p-value can reach 0.05",
            a.permutations
        );
    }
    if matches!(a.format, Format::Csv) {
        bail!("history: --format csv is not a history format; use text, md, html or json");
    }
    let store = a.store.open_existing()?;
    let mut versions = select::versions(&store, &a.selectors)?;
    if let Some(key) = &a.by {
        versions = select::split_by(versions, key)?;
    }
    if versions.len() < 3 {
        bail!(
            "history: {} point(s); a series needs at least 3 (for two, use plumb compare)",
            versions.len()
        );
    }
    let opts = changepoint::Options {
        alpha: a.alpha,
        permutations: a.permutations,
        ..changepoint::Options::default()
    };
    let mut h = plumb_report::history::history(&versions, &opts);
    h.set_floors(&learned_floors(&store, &versions)?);
    let doc = match a.format {
        Format::Text | Format::Csv => plumb_report::history::text(&h),
        Format::Md => plumb_report::history::markdown(&h),
        Format::Json => serde_json::to_string_pretty(&h)? + "\n",
        Format::Html => {
            let runs: Vec<_> = versions
                .iter()
                .flat_map(|v| v.runs.iter().cloned())
                .collect();
            plumb_report::history::html(&h, &runs, &super::compare::profiles(&store, &runs)?)
        }
    };
    match &a.output {
        None => print!("{doc}"),
        Some(path) => write_whole(path, "-o", &doc)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The newest run's group (or the run itself), as a selector.
fn newest(store: &Store) -> anyhow::Result<String> {
    let Some(r) = store
        .runs(1)?
        .into_iter()
        .find(|r| r.status == plumb_core::RunStatus::Ok)
    else {
        bail!("check: the store holds no finished run; run a benchmark first");
    };
    Ok(match r.group_id {
        Some(g) => format!("g{g}"),
        None => r.id.to_string(),
    })
}

/// What makes two runs "the same plan" for a history: the stored plan without its seed
/// and repeat index (each invocation draws a seed from the clock, and each repeat has
/// its own), hashed.
fn plan_identity(plan: Option<&serde_json::Value>) -> Option<String> {
    let mut p = plan?.clone();
    let o = p.as_object_mut()?;
    o.remove("seed");
    o.remove("repeat");
    Some(plumb_plan::hash_of(&p))
}

/// The base made of the plan's history: the last `groups` groups of runs of the same
/// plan as `new` (equal but for seed and repeat), made before it.
fn history_base(store: &Store, new: &Version, groups: usize) -> anyhow::Result<Version> {
    let hashes: std::collections::BTreeSet<String> = new
        .runs
        .iter()
        .filter_map(|r| plan_identity(r.run.plan.as_ref()))
        .collect();
    let Some(first) = new.runs.iter().map(|r| r.run.id).min() else {
        bail!("check: {} holds no run", new.label);
    };
    if hashes.is_empty() {
        bail!(
            "check: the runs of {} carry no plan hash (stored before plans were kept); \
             give --base SELECTOR",
            new.label
        );
    }
    let mut earlier: Vec<plumb_store::RunRecord> = store
        .runs(usize::MAX >> 1)?
        .into_iter()
        .filter(|r| r.id < first && r.status == plumb_core::RunStatus::Ok)
        .filter(|r| plan_identity(r.plan.as_ref()).is_some_and(|h| hashes.contains(&h)))
        .collect();
    earlier.sort_by_key(|r| std::cmp::Reverse(r.id));
    let mut picked: Vec<i64> = Vec::new();
    let mut seen_groups: Vec<i64> = Vec::new();
    for r in earlier {
        let g = r.group_id.unwrap_or(r.id);
        if !seen_groups.contains(&g) {
            if seen_groups.len() == groups {
                break;
            }
            seen_groups.push(g);
        }
        picked.push(r.id);
    }
    if picked.is_empty() {
        bail!(
            "check: no earlier run of the plan of {} (the same plan but for its seed); run \
             it before the change, or give --base SELECTOR",
            new.label
        );
    }
    picked.sort_unstable();
    let runs = picked
        .iter()
        .map(|id| store.run(*id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Version {
        label: format!("history ({} earlier runs of its plan)", picked.len()),
        runs,
    })
}

/// Whether both sides were counted by callgrind (`plumb icount`); refuses a check
/// with counted runs on one side only, whose times are callgrind's (~50× slow).
fn counted_sides(base: &Version, new: &Version) -> anyhow::Result<bool> {
    let counted = |v: &Version| -> Vec<bool> {
        v.runs
            .iter()
            .map(|r| {
                r.run
                    .plan
                    .as_ref()
                    .and_then(|p| p.get("under"))
                    .and_then(|u| u.as_str())
                    == Some("callgrind")
            })
            .collect()
    };
    let all: Vec<bool> = counted(base).into_iter().chain(counted(new)).collect();
    if all.iter().all(|&c| c) {
        return Ok(true);
    }
    if all.iter().any(|&c| c) {
        bail!(
            "check: {} and {} mix runs counted under callgrind (plumb icount) with native \
             ones; callgrind's times are ~50× slow and its instructions exact: check counted \
             runs against counted runs",
            base.label,
            new.label
        );
    }
    Ok(false)
}

/// The blocks of history a noise floor is learned from: the groups of repeats of the
/// same plan (but for seed and repeat), the same engine build and the same host as
/// the base's runs, oldest first, the newest [`plumb_report::noise::MAX_GROUPS`] of
/// them, leaving out the runs judged.
pub(super) fn noise_blocks(
    store: &Store,
    base: &[plumb_store::RunRecord],
    judged: &[i64],
) -> anyhow::Result<Vec<Version>> {
    type Key = (String, String, Option<String>);
    let key = |r: &plumb_store::RunRecord| -> Option<Key> {
        Some((
            plan_identity(r.plan.as_ref())?,
            r.engine_version.clone(),
            r.host.as_ref().and_then(|h| h.inventory.hostname.clone()),
        ))
    };
    let keys: std::collections::BTreeSet<Key> = base.iter().filter_map(key).collect();
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut groups: std::collections::BTreeMap<i64, Vec<i64>> = Default::default();
    for r in store.runs(usize::MAX >> 1)? {
        if r.status == plumb_core::RunStatus::Ok
            && !judged.contains(&r.id)
            && key(&r).is_some_and(|k| keys.contains(&k))
        {
            groups
                .entry(r.group_id.unwrap_or(r.id))
                .or_default()
                .push(r.id);
        }
    }
    let newest = groups.len().saturating_sub(plumb_report::noise::MAX_GROUPS);
    groups
        .into_iter()
        .skip(newest)
        .map(|(g, ids)| {
            Ok(Version {
                label: format!("g{g}"),
                runs: ids
                    .iter()
                    .map(|id| store.run(*id))
                    .collect::<Result<Vec<_>, _>>()?,
            })
        })
        .collect()
}

/// The ops/s floors of the first version's plan on its host, learned from every other
/// block in the store (none of `versions`' runs among them): what `compare`, `history`
/// and `ab` print beside each change.
pub(super) fn learned_floors(
    store: &Store,
    versions: &[Version],
) -> anyhow::Result<std::collections::BTreeMap<(String, String), plumb_report::noise::Floor>> {
    let Some(base) = versions.first() else {
        return Ok(Default::default());
    };
    let judged: Vec<i64> = versions
        .iter()
        .flat_map(|v| v.runs.iter().map(|r| r.run.id))
        .collect();
    let blocks = noise_blocks(
        store,
        &base.runs.iter().map(|r| r.run.clone()).collect::<Vec<_>>(),
        &judged,
    )?;
    Ok(plumb_report::noise::floors(
        &blocks,
        &plumb_report::compare::measured_steps(versions.iter().flat_map(|v| v.runs.iter())),
        &[plumb_report::metrics::metric("ops_sec")],
    ))
}

/// The metrics named by `--metric` flags, or an error naming the unknown one.
pub(super) fn metrics_of(
    ids: &[String],
) -> anyhow::Result<Vec<&'static plumb_report::metrics::Metric>> {
    ids.iter()
        .map(|id| {
            plumb_report::metrics::METRICS
                .iter()
                .find(|m| m.id == id)
                .with_context(|| {
                    format!(
                        "--metric {id}: no such metric; known: {}",
                        plumb_report::metrics::METRICS
                            .iter()
                            .map(|m| m.id)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
        })
        .collect()
}

pub fn check_cmd(a: CheckArgs) -> anyhow::Result<ExitCode> {
    for (flag, v) in [
        ("--threshold", Some(a.threshold)),
        ("--unstable", a.unstable),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v < 100.0) {
                bail!("{flag} {v}: give a percentage between 0 and 100, e.g. 5");
            }
        }
    }
    let metrics = metrics_of(&a.metrics)?;
    let store = a.store.open_existing()?;
    let new_sel = match &a.selector {
        Some(s) => s.clone(),
        None => newest(&store)?,
    };
    let new = select::versions(&store, std::slice::from_ref(&new_sel))?.remove(0);
    let base = match &a.base {
        Some(b) => select::versions(&store, std::slice::from_ref(b))?.remove(0),
        None => history_base(&store, &new, a.history.max(1))?,
    };
    if let Some(shared) = new
        .runs
        .iter()
        .find(|r| base.runs.iter().any(|b| b.run.id == r.run.id))
    {
        bail!(
            "check: run {} is on both sides ({} and {}); a run cannot be its own base",
            shared.run.id,
            new.label,
            base.label
        );
    }
    let judged: Vec<i64> = new.runs.iter().map(|r| r.run.id).collect();
    let blocks = noise_blocks(
        &store,
        &base.runs.iter().map(|r| r.run.clone()).collect::<Vec<_>>(),
        &judged,
    )?;
    let floors = plumb_report::noise::floors(
        &blocks,
        &plumb_report::compare::measured_steps(new.runs.iter()),
        &metrics,
    );
    let opts = CheckOptions {
        threshold: a.threshold / 100.0,
        unstable: a.unstable.unwrap_or(a.threshold) / 100.0,
        metrics,
        floors,
        counted: counted_sides(&base, &new)?,
    };
    let mut report = check::check(&base, &new, &opts);
    for s in &a.steps {
        if !report.results.iter().any(|j| &j.step == s) {
            bail!(
                "--step {s}: {} has no such measured step; it has {}",
                new.label,
                plumb_report::compare::measured_steps(new.runs.iter()).join(", ")
            );
        }
    }
    if !a.steps.is_empty() {
        report.results.retain(|j| a.steps.contains(&j.step));
    }
    if report.results.is_empty() {
        bail!("check: {} has no measured step to judge", new.label);
    }
    if let Some(path) = &a.junit {
        let xml = check::junit(&report).context("--junit: writing the JUnit XML")?;
        write_whole(path, "--junit", &xml)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", check::markdown(&report));
    }
    Ok(if report.regressed() {
        ExitCode::from(1)
    } else if report.unstable() && !a.allow_unstable {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
