//! `plumb exec-plan`: one planned run handed over by another plumb (hidden). A suite
//! that names `rocksdb@8.5.3` runs in the plumb that links 11.8.1; that plumb hands the
//! run to the plumb built against 8.5.3 (plumb_runner::release), which runs it here,
//! into the same store and suite, and writes the run's id for the plumb that waits.

use super::execute::{self, Job, Printer, Style};
use super::StoreArg;
use anyhow::{bail, Context};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// What the handing plumb passes besides the plan.
#[derive(Debug, clap::Args)]
pub struct ExecPlanArgs {
    /// The run's plan (JSON, as stored with every run).
    #[arg(long, value_name = "FILE")]
    plan: PathBuf,
    /// Where the run's id and status are written when it ends.
    #[arg(long, value_name = "FILE")]
    id_file: PathBuf,
    /// The suite the run belongs to.
    #[arg(long)]
    suite_id: Option<i64>,
    /// Record the run in repeat groups (`--group` joins one).
    #[arg(long)]
    grouped: bool,
    /// The repeat group to join.
    #[arg(long, requires = "grouped")]
    group: Option<i64>,
    /// Where the data directory is made.
    #[arg(long, value_name = "DIR")]
    dir_root: Option<PathBuf>,
    /// Keep the data directory.
    #[arg(long)]
    keep: bool,
    /// The tag recorded with the run.
    #[arg(long)]
    tag: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

/// Runs the plan, which must be for this build.
pub fn run(a: ExecPlanArgs) -> anyhow::Result<ExitCode> {
    let plan = plumb_runner::release::read_plan(&a.plan)?;
    let mut store = a.store.open_existing()?;
    let groups: HashMap<String, i64> = a
        .group
        .map(|g| (plan.variant.clone(), g))
        .into_iter()
        .collect();
    let mut printer = Printer::new(Style::StartOnly);
    let job = Job {
        tag: a.tag,
        suite: a.suite_id.map(|id| (id, Default::default(), groups)),
        grouped: a.grouped,
        ..Job::new(std::slice::from_ref(&plan), a.dir_root, a.keep)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    let Some(id) = out.run_ids.first() else {
        bail!("the run did not start");
    };
    std::fs::write(&a.id_file, format!("{id} {}\n", out.status.as_str()))
        .with_context(|| format!("writing {}", a.id_file.display()))?;
    Ok(execute::exit_code(out.status))
}
