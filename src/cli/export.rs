//! `plumb export` and `plumb import`: runs out of plumb, into the tools teams already
//! run (Bencher, Apache Otava, Prometheus/Grafana), and into another store as a bundle.

use super::compare::write_whole;
use super::StoreArg;
use anyhow::bail;
use plumb_report::export;
use plumb_report::select;
use plumb_store::bundle;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `plumb export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Bencher Metric Format JSON, for `bencher run --adapter json --file FILE`.
    Bmf,
    /// Apache Otava's CSV (a `type: csv` test; docs/otava.md).
    Otava,
    /// OpenMetrics text, ending with `# EOF`, for a Prometheus scrape.
    Openmetrics,
    /// A result bundle: a plumb store file holding only these runs (needs -o).
    Bundle,
}

/// `plumb export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Selectors as in `plumb compare`: a run id (12), a range (12-16), a group \
(g12), a suite (s3), or filters such as tag=nightly, engine=rocksdb, host=db7; with none, every \
finished run. Each selector is one version: BMF names a benchmark STEP with one selector and \
SELECTOR/STEP with several.\n\
Formats:\n  \
bmf          Bencher: measures throughput (ops/s), latency (p99, ns), cpu-per-op (µs)\n  \
otava        Apache Otava CSV: one row per run, columns STEP.ops_sec, STEP.p99_us, STEP.cpu_us_op\n  \
openmetrics  gauges plumb_step_ops_per_second, plumb_step_p99_seconds, plumb_step_cpu_seconds_per_op\n  \
bundle       a plumb store file of just these runs, for `plumb import` or --store elsewhere\n\
Examples:\n  \
plumb export tag=nightly --format bmf -o bmf.json && bencher run --adapter json --file bmf.json\n  \
plumb export engine=rocksdb --format otava -o rocksdb.csv      (docs/otava.md)\n  \
plumb export --format openmetrics -o /srv/metrics/plumb.txt   (serve the directory; docs/export.md)\n  \
plumb export g12 g20 --format bundle -o results.plumb\n  \
plumb compare --store results.plumb g1 g3                       (on another machine)"
)]
pub struct ExportArgs {
    /// Runs to export [default: every finished run].
    #[arg(value_name = "SELECTOR")]
    selectors: Vec<String>,
    /// Output format.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// Write to this file (whole, or not at all) instead of stdout; a bundle needs it.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Replace an existing bundle file.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    store: StoreArg,
}

/// `plumb import`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Copies every run of a bundle (`plumb export --format bundle`) into the \
store, with its steps, 1-second intervals, histograms, profiles, plan and host snapshot; groups \
of repeats stay groups, under new ids. A run the store already holds (same start, command and \
process) is not copied again, so importing twice is harmless.\n\
Examples:\n  \
plumb import results.plumb\n  \
plumb import results.plumb --store postgres://plumb@db/plumb"
)]
pub struct ImportArgs {
    /// The bundle file.
    #[arg(value_name = "BUNDLE")]
    bundle: PathBuf,
    #[command(flatten)]
    store: StoreArg,
}

pub fn export_cmd(a: ExportArgs) -> anyhow::Result<ExitCode> {
    if a.format == ExportFormat::Bundle && a.output.is_none() {
        bail!("--format bundle: give -o FILE (a bundle is a store file, not text for stdout)");
    }
    let store = a.store.open_existing()?;
    let versions = select::versions_or_all(&store, &a.selectors)?;
    let runs = select::distinct_runs(&versions);
    let doc = match a.format {
        ExportFormat::Bmf => serde_json::to_string_pretty(&export::bmf(&versions))? + "\n",
        ExportFormat::Otava => {
            let csv = export::otava_csv(&runs);
            if !csv.left_out.is_empty() {
                eprintln!(
                    "plumb: left out {} (not every run has it; Otava refuses an empty cell): {}",
                    if csv.left_out.len() == 1 {
                        "a column"
                    } else {
                        "columns"
                    },
                    csv.left_out.join(", ")
                );
            }
            if csv.metrics.is_empty() {
                bail!(
                    "--format otava: no step figure that every selected run has; select the \
                     runs of one plan (e.g. engine=rocksdb,workload=readrandom)"
                );
            }
            csv.text
        }
        ExportFormat::Openmetrics => export::openmetrics(&runs),
        ExportFormat::Bundle => {
            let path = a.output.as_deref().expect("checked above");
            let ids: Vec<i64> = runs.iter().map(|r| r.run.id).collect();
            let out = bundle::write_bundle(&store, &ids, path, a.force)?;
            eprintln!(
                "plumb: wrote bundle {}: {} run{} ({}); read it with `plumb compare --store {} …` \
                 or `plumb import {}`",
                path.display(),
                out.len(),
                if out.len() == 1 { "" } else { "s" },
                select::ids_text(&ids),
                path.display(),
                path.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
    };
    match &a.output {
        None => print!("{doc}"),
        Some(path) => write_whole(path, "-o", &doc)?,
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import_cmd(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let (got, shown) = bundle::import(&a.bundle, &a.store.path())?;
    for g in &got {
        if g.copied {
            println!("run {} copied as run {}", g.source, g.target);
        } else {
            println!("run {} already here as run {}", g.source, g.target);
        }
    }
    let copied = got.iter().filter(|g| g.copied).count();
    eprintln!(
        "plumb: imported {copied} of {} run{} from {} into {}{}",
        got.len(),
        if got.len() == 1 { "" } else { "s" },
        a.bundle.display(),
        shown,
        if copied < got.len() {
            format!(" ({} already there)", got.len() - copied)
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}
