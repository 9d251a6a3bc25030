//! `plumb compare` and `plumb report`: runs from the store, relative to a base.

use super::{StoreArg, WindowArg};
use anyhow::Context;
use plumb_report::compare;
use plumb_report::select;
use std::path::PathBuf;
use std::process::ExitCode;

/// `plumb compare BASE OTHER…`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Selectors: a run id (12), a range of ids (12-16), a group of repeats (g12), or filters \
such as tag=new, engine=rocksdb, version=11.8.1, host=db7, opt.threads=2 (comma-joined, all must \
match), after a suite if you like (s3,host=db7).\n\
Examples:\n  plumb compare g12 g20\n  \
plumb compare s3 --by host        one suite run by a fleet, each host against the first\n\
How often it is wrong (bench/README.md, measured on a shared 2-vCPU VM, AMD EPYC host, \
memory engine, readrandom at the defaults): two groups run in separate blocks (--repeat 3, \
then --repeat 3) were called significantly different 30% of the time when nothing \
changed, because drift between blocks is not in the interval; interleaved slices \
(plumb ab --rounds 5) were wrong 5% of the time and found 95% of 10% slowdowns but 15% \
of 5% ones (about 30 slices a side find 5%). A warning says when the sides ran in \
separate blocks, and a `floor:` line sets each step's change beside its noise floor on \
this host (the drift between other blocks of the base's plan in the store, as plumb \
noise and plumb check learn it; printed once the store holds 4 such blocks)."
)]
pub struct CompareArgs {
    /// The base, then the versions compared to it (one is enough with --by).
    #[arg(required = true, num_args = 1.., value_name = "SELECTOR")]
    selectors: Vec<String>,
    /// Split the selected runs by this key (host, cpu, engine, version, tag, opt.NAME):
    /// one version per value, the first seen the base.
    #[arg(long, value_name = "KEY")]
    by: Option<String>,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    window: WindowArg,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
}

/// Output formats of `plumb report`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Terminal tables.
    Text,
    /// Markdown tables, ready to paste.
    Md,
    /// One self-contained HTML file with inline SVG charts.
    Html,
    /// Every stored figure, one per row.
    Csv,
    /// Runs and comparison (docs/report.schema.json).
    Json,
}

impl From<Format> for plumb_report::document::Format {
    fn from(f: Format) -> Self {
        use plumb_report::document::Format as D;
        match f {
            Format::Text => D::Text,
            Format::Md => D::Md,
            Format::Html => D::Html,
            Format::Csv => D::Csv,
            Format::Json => D::Json,
        }
    }
}

/// `plumb report RUNS…`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Runs to report; with two or more, the first is the base of a comparison. A suite
    /// (s3) is drawn as its sweeps: throughput vs threads and vs size.
    #[arg(required = true, value_name = "SELECTOR")]
    selectors: Vec<String>,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    window: WindowArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write to this file instead of stdout (written whole, or not at all).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn compare_cmd(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let store = a.store.open_existing()?;
    let mut versions = select::versions(&store, &a.selectors)?;
    a.window
        .apply(versions.iter_mut().flat_map(|v| v.runs.iter_mut()));
    match &a.by {
        Some(key) => versions = select::split_by(versions, key)?,
        None if versions.len() < 2 => anyhow::bail!(
            "compare: give a base and at least one other selector, or split one with --by host"
        ),
        None => {}
    }
    let mut c = compare(&versions);
    c.set_floors(&plumb_report::base::learned_floors(&store, &versions)?);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        let runs: Vec<_> = versions.iter().flat_map(|v| v.runs.iter()).collect();
        if let Some(n) = plumb_report::window::note(&runs) {
            println!("{n}\n");
        }
        print!(
            "{}",
            plumb_report::document::comparison_or_durability(&versions, &c)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn report_cmd(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let store = a.store.open_existing()?;
    let mut versions = select::versions(&store, &a.selectors)?;
    a.window
        .apply(versions.iter_mut().flat_map(|v| v.runs.iter_mut()));
    let doc = plumb_report::document::report(
        &store,
        &versions,
        plumb_report::document::names_suite(&a.selectors),
        a.format.into(),
    )?;
    match &a.output {
        None => print!("{doc}"),
        Some(path) => write_whole(path, "-o", &doc)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `doc` to `path` beside it and renames, so a failure leaves no half file;
/// `flag` names the option in errors.
pub fn write_whole(path: &std::path::Path, flag: &str, doc: &str) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| {
        format!(
            "{flag} {}: cannot write in {}",
            path.display(),
            dir.display()
        )
    })?;
    std::io::Write::write_all(&mut tmp, doc.as_bytes())
        .with_context(|| format!("{flag} {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("{flag} {}", path.display()))?;
    eprintln!("plumb: wrote {}", path.display());
    Ok(())
}
