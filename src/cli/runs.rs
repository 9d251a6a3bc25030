//! `plumb runs` and `plumb show`: read the store.

use super::output;
use super::{StoreArg, WindowArg};
use anyhow::Context;
use std::process::ExitCode;

/// `plumb runs`.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Show at most this many runs.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print JSON (an array of run objects) instead of a table.
    #[arg(long)]
    json: bool,
}

/// `plumb show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The run id (from `plumb runs`).
    run: i64,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    window: WindowArg,
    /// Print JSON (the same document `plumb kv --json` prints).
    #[arg(long)]
    json: bool,
    /// Print each step's 1-second intervals instead: ops/s, latency, CPU, and the
    /// device as `iostat -x 1` shows each second (r/s … r_await, rareq-sz … %util).
    #[arg(long, conflicts_with = "json")]
    intervals: bool,
}

pub fn list(a: RunsArgs) -> anyhow::Result<ExitCode> {
    let store = a.store.open_existing()?;
    let runs = store.runs(a.limit)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", plumb_report::runs_table(&runs));
    Ok(ExitCode::SUCCESS)
}

pub fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = a.store.open_existing()?;
    let mut run = store
        .run(a.run)
        .with_context(|| format!("reading run {}", a.run))?;
    a.window.apply([&mut run]);
    if a.intervals {
        print!("{}", plumb_report::device::intervals_text(&run));
        return Ok(ExitCode::SUCCESS);
    }
    output::print(&run, a.json, &store)?;
    Ok(ExitCode::SUCCESS)
}
