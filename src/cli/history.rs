//! `plumb history` (a series of versions: where each step changed, and what the change
//! cost per op) and `plumb check` (the CI gate: the newest runs of a plan against a base
//! or its history, exit status and JUnit XML for CI).

use super::compare::{write_whole, Format};
use super::StoreArg;
use anyhow::{bail, Context};
use plumb_report::changepoint;
use plumb_report::check;
use plumb_report::gate::{self, GateRequest};
use plumb_report::select;
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
    /// Print JSON instead of the Markdown summary (as --format json).
    #[arg(long)]
    json: bool,
    /// What to print: md (the summary), json, or github (a pull-request comment: one
    /// status line, then the table, linked to `plumb serve`'s pages with --serve-url).
    #[arg(long, value_enum, default_value = "md")]
    format: CheckFormat,
    /// Where `plumb serve` answers (http://host:8470), for the links of --format github
    /// [default: $PLUMB_SERVE_URL].
    #[arg(long, value_name = "URL")]
    serve_url: Option<String>,
    /// Without --base: judge against the history without keeping the changes found in
    /// the store (`plumb changes` lists those kept).
    #[arg(long)]
    no_record: bool,
    #[command(flatten)]
    store: StoreArg,
}

/// `plumb check --format`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum CheckFormat {
    /// The Markdown summary.
    Md,
    /// The whole report as JSON.
    Json,
    /// A pull-request comment.
    Github,
}

pub fn history_cmd(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    let opts = changepoint::Options {
        alpha: a.alpha,
        permutations: a.permutations,
        ..changepoint::Options::default()
    };
    plumb_report::history::check_options(&opts)?;
    if matches!(a.format, Format::Csv) {
        bail!("history: --format csv is not a history format; use text, md, html or json");
    }
    let store = a.store.open_existing()?;
    let (h, versions) =
        plumb_report::history::of_selectors(&store, &a.selectors, a.by.as_deref(), &opts)?;
    let doc = plumb_report::history::document(&store, &h, &versions, a.format.into())?;
    match &a.output {
        None => print!("{doc}"),
        Some(path) => write_whole(path, "-o", &doc)?,
    }
    Ok(ExitCode::SUCCESS)
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
    let metrics = plumb_report::metrics::named(&a.metrics)?;
    let store = a.store.open_existing()?;
    let new_sel = match &a.selector {
        Some(s) => s.clone(),
        None => select::newest(&store)?,
    };
    let new = select::one(&store, &new_sel)?;
    let base = a
        .base
        .as_deref()
        .map(|b| select::one(&store, b))
        .transpose()?;
    let report = gate::gate(
        &store,
        GateRequest {
            new,
            base,
            history: a.history,
            threshold: a.threshold / 100.0,
            unstable: a.unstable.unwrap_or(a.threshold) / 100.0,
            metrics,
            steps: a.steps.clone(),
            record: !a.no_record,
            now: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        },
    )?
    .report;
    if let Some(path) = &a.junit {
        let xml = check::junit(&report).context("--junit: writing the JUnit XML")?;
        write_whole(path, "--junit", &xml)?;
    }
    let serve_url = a
        .serve_url
        .clone()
        .or_else(|| std::env::var("PLUMB_SERVE_URL").ok());
    match (a.json, a.format) {
        (true, _) | (false, CheckFormat::Json) => {
            println!("{}", serde_json::to_string_pretty(&report)?)
        }
        (false, CheckFormat::Md) => print!("{}", check::markdown(&report)),
        (false, CheckFormat::Github) => {
            print!("{}", check::github(&report, serve_url.as_deref()))
        }
    }
    Ok(if report.regressed() {
        ExitCode::from(1)
    } else if report.unstable() && !a.allow_unstable {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
