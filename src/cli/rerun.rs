//! `plumb rerun RUN`: the stored plan of a run, run again as a new run.

use super::execute::{self, Job, Printer, Style};
use super::StoreArg;
use std::path::PathBuf;
use std::process::ExitCode;

/// `plumb rerun`.
#[derive(Debug, clap::Args)]
pub struct RerunArgs {
    /// The run to repeat (from `plumb runs`).
    run: i64,
    /// Where to make the new run's data dir [default: the temp dir].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Keep the new run's data dir.
    #[arg(long)]
    keep: bool,
    /// Print the new run as JSON.
    #[arg(long)]
    json: bool,
    /// A label stored with the new run.
    #[arg(long)]
    tag: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

pub fn run(a: RerunArgs) -> anyhow::Result<ExitCode> {
    let mut store = a.store.open_existing()?;
    let old = store.run(a.run)?.run;
    let plan = plumb_runner::rerun::stored_plan(&old)?;
    let prov = execute::provenance(a.tag.clone());
    let diffs = plumb_runner::rerun::differences(&prov, &plan, &old);
    for d in &diffs {
        eprintln!("plumb: rerun of run {} differs: {d}", old.id);
    }
    let mut printer = Printer::new(if a.json { Style::Json } else { Style::Full });
    let job = Job {
        tag: a.tag.or(old.tag.clone()),
        ..Job::new(std::slice::from_ref(&plan), a.dir, a.keep)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    if let Some(id) = out.run_ids.first() {
        eprintln!("plumb: run {id} reran run {} from its stored plan", old.id);
    }
    Ok(execute::exit_code(out.status))
}
