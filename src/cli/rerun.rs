//! `plumb rerun RUN`: the stored plan of a run, run again as a new run.

use super::execute::{self, Printer, Style};
use super::StoreArg;
use anyhow::{bail, Context};
use plumb_plan::RunPlan;
use plumb_runner::{DirPolicy, Grouping};
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
    let Some(plan) = &old.plan else {
        bail!(
            "run {}: stored by a plumb that did not keep plans; its command was `{}`",
            old.id,
            old.command
        );
    };
    let plan: RunPlan = serde_json::from_value(plan.clone()).with_context(|| {
        format!(
            "run {}: the stored plan is unreadable by this plumb",
            old.id
        )
    })?;
    if plan.use_existing_db {
        bail!(
            "run {}: ran on an existing database ({}); rerun it with `plumb kv --use-existing-db \
             --db DIR` on that database",
            old.id,
            old.data_dir.as_deref().unwrap_or("?")
        );
    }
    if let Some(e) = plan.target.engine_spec() {
        e.check_built_in()?;
    }
    let prov = execute::provenance(a.tag.clone());
    let mut diffs = Vec::new();
    if prov.plumb_version != old.plumb_version || prov.git_hash != old.git_hash {
        diffs.push(format!(
            "plumb {} ({}) now, {} ({}) then",
            prov.plumb_version,
            prov.git_hash.as_deref().unwrap_or("no git hash"),
            old.plumb_version,
            old.git_hash.as_deref().unwrap_or("no git hash")
        ));
    }
    // A server's release is known once it runs (the new run records it).
    let engine_now = plan
        .target
        .engine_spec()
        .map(|e| e.version())
        .unwrap_or_else(|| old.engine_version.clone());
    if engine_now != old.engine_version {
        diffs.push(format!(
            "{} {engine_now} now, {} then",
            old.engine, old.engine_version
        ));
    }
    for d in &diffs {
        eprintln!("plumb: rerun of run {} differs: {d}", old.id);
    }
    let mut printer = Printer::new(if a.json { Style::Json } else { Style::Full });
    let out = execute::run_batch(
        &mut store,
        a.tag.or(old.tag.clone()),
        std::slice::from_ref(&plan),
        None,
        DirPolicy::Fresh {
            root: a.dir,
            keep: a.keep,
        },
        Grouping::None,
        &mut printer,
        None,
        plumb_runner::family::Extras::default(),
    )?;
    printer.finish()?;
    if let Some(id) = out.run_ids.first() {
        eprintln!("plumb: run {id} reran run {} from its stored plan", old.id);
    }
    Ok(execute::exit_code(out.status))
}
