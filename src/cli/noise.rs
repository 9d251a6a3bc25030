//! `plumb noise`: a plan's noise floor on this host, measured on purpose. The command
//! runs as several separate blocks of repeats (each block one invocation, as a CI job
//! or a person would run it), and the floor is the drift between the blocks' medians
//! (plumb_report::noise). The blocks are ordinary runs in the store, so `plumb check`
//! learns the same floor from them later, beside whatever history the plan already had.

use super::StoreArg;
use anyhow::{bail, Context};
use plumb_ab::blocks::BlocksPlan;
use std::process::ExitCode;

/// `plumb noise [--blocks N] [--repeat R] -- kv ARGS…`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb noise -- kv --engine rocksdb --db /data/n --use-existing-db --benchmarks readrandom\n  \
plumb noise --blocks 6 --pause 60 -- sql --server postgres --steps point-query\n\
The floor is the change two single blocks of repeats reach 95% of the time when nothing \
changed; `plumb check` uses it (a change must exceed it, and a step whose floor is above \
--threshold is unjudgeable at that threshold).")]
pub struct NoiseArgs {
    /// Blocks of repeats, each a separate invocation: the drift between them is what
    /// the floor measures (at least 4).
    #[arg(long, default_value_t = 5, value_name = "N")]
    blocks: usize,
    /// Repeats per block.
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeat: u32,
    /// Seconds to wait between blocks, so they sample more of the host's moods.
    #[arg(long, default_value_t = 0.0, value_name = "SECS")]
    pause: f64,
    /// The figures whose floor is measured (metric ids), repeatable.
    #[arg(long = "metric", value_name = "ID", default_value = "ops_sec")]
    metrics: Vec<String>,
    /// The tag of the blocks' runs [default: noise-UNIXTIME].
    #[arg(long)]
    tag: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
    /// The command measured, after `--` (kv, sql or ib with its arguments).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(a: NoiseArgs) -> anyhow::Result<ExitCode> {
    if !(a.pause.is_finite() && a.pause >= 0.0) {
        bail!("--pause {}: give seconds, 0 or more", a.pause);
    }
    let tag = a
        .tag
        .clone()
        .unwrap_or_else(|| plumb_ab::child::default_tag("noise"));
    let plan = BlocksPlan {
        bin: std::env::current_exe().context("finding this plumb binary")?,
        command: a.command,
        blocks: a.blocks,
        repeat: a.repeat,
        pause: std::time::Duration::from_secs_f64(a.pause),
        metrics: plumb_report::metrics::named(&a.metrics)?,
        tag: tag.clone(),
        store: a.store.path(),
    };
    let found = plumb_ab::blocks::run(&plan, &mut |s| eprintln!("plumb noise: {s}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&found.to_json(&tag))?);
    } else {
        print!("{}", found.text(&plan.metrics));
    }
    Ok(ExitCode::SUCCESS)
}
