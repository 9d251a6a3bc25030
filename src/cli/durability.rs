//! `plumb durability`: does an engine (or a server) keep every write it acknowledged
//! when the process holding it is killed, or the power cut? The front end of the
//! durability family: its flags become one planned run per engine and server, run
//! through the one lifecycle (`execute::run_batch`) and stored like any run, so `plumb
//! show`, `plumb report`, `plumb rerun`, suites and workers read and repeat them. The
//! trials themselves are in `plumb_durability`.

use super::execute::{self, Job, Printer, Style, INTERRUPTED};
use super::StoreArg;
use anyhow::Context;
use plumb_core::StepStatus;
use plumb_durability::targets::Asked;
use plumb_plan::DurabilityParams;
use plumb_store::{Store, StoredRun};
use plumb_targets::EngineSpec;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// `plumb durability`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "What a process kill cannot show: the OS page cache survives it, so \
this finds writes an engine kept in its own memory after acknowledging them, not writes \
the OS loses when power fails. `--cut power` shows those: the engine's directory is on a \
FUSE filesystem plumb serves (root and /dev/fuse needed) that keeps file data written \
since the last fsync in memory and drops it after the kill, and undoes every directory \
entry (create, rename, unlink, mkdir) whose directory was not fsynced since, as fsync(2) \
promises no more (`--dir-entries ext4`: a file's own fsync keeps its name too, as ext4, XFS \
and btrfs do). `--cut at=fsync:N` cuts the power right after the N-th fsync, fdatasync or \
directory fsync (at=rename:N, at=unlink:N likewise); `--cut at=fsync:all` counts the points \
of 40 writes, then tries every one on a fresh directory, reopens the engine, checks every \
acknowledged write and runs the engine's own check (SQLite PRAGMA integrity_check, RocksDB \
verify_checksum): the kills column counts points, the JSON rows hold `points`. `--cut \
flakey` (dm-flakey on a loop device) says why not where the kernel lacks them. A device that acknowledges \
flushes it has not done (a volatile write cache) needs a real power cut; `plumb host \
--dir DIR` reports the write cache of the device under DIR (check disk.write_cache).

Each engine and server is a run in the store (each mode and cut a step), so `plumb show \
RUN` prints its table again and `plumb rerun RUN` repeats it; a suite runs the same trials \
with a `durability = [\"sync\"]` workload and a `[durability]` table.

Examples:
  plumb durability                          # RocksDB, synced and not, 10 kills each
  plumb durability --kv all --kills 20      # every engine in this build
  plumb durability --kv lmdb,sqlite --modes sync --dir /data/plumb
  plumb durability --kv lmdb,sqlite --server postgres --cut power
  plumb durability --kv lmdb,sqlite --modes sync --cut torn --kills 50
  plumb durability --kv rocksdb,sqlite --modes sync --cut at=fsync:all
  plumb durability --kv rocksdb --modes sync --cut at=rename:2"
)]
pub struct DurabilityArgs {
    /// Engines, comma-separated, or `all` (every engine in this build that keeps files),
    /// or `none` (servers only).
    #[arg(long, default_value = "rocksdb", value_name = "LIST")]
    kv: String,
    /// Modes, comma-separated: sync (each write flushed before it returns), nosync
    /// (written to the OS, not flushed), unlogged (RocksDB's write-ahead log off), or
    /// both (sync and nosync).
    #[arg(long, default_value = "sync,nosync", value_name = "LIST")]
    modes: String,
    /// Servers too, comma-separated: postgres[@MAJOR], innodb, myrocks (MariaDB). Each
    /// is started by plumb, crashed with SIGKILL (every process of it) while a client
    /// commits rows one by one, restarted, and checked. `--kv none` runs only these.
    #[arg(long, value_name = "LIST")]
    server: Option<String>,
    #[command(flatten)]
    params: DurabilityParams,
    /// Where the engines' and servers' directories are made [default: /var/tmp];
    /// removed at the end.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Random seed for the kill moments and the values [default: from the clock].
    #[arg(long)]
    seed: Option<u64>,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
    /// A label stored with the runs.
    #[arg(long)]
    tag: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

/// The hidden writer: opens the engine and writes keys from `--from`, one per
/// acknowledgement the recorder returns.
#[derive(Debug, clap::Args)]
pub struct WriterArgs {
    /// The engine with its options and mode applied, as the plan stores it (JSON).
    #[arg(long)]
    spec: String,
    #[arg(long)]
    dir: PathBuf,
    #[arg(long)]
    from: u64,
    #[arg(long)]
    seed: u64,
}

/// `plumb durability-writer`: never returns while the recorder answers.
pub fn writer(a: WriterArgs) -> anyhow::Result<ExitCode> {
    let spec: EngineSpec = serde_json::from_str(&a.spec).context("--spec")?;
    plumb_durability::engine::write_until_killed(&spec, &a.dir, a.from, a.seed)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `plumb durability`: the plan of its flags through the one lifecycle, then the
/// table of what every stored step found. Exit 0 when every promise held, 1 when a
/// synced write was lost, 130 after Ctrl-C (the trial under way ends as usual, and the
/// table holds the trials that ran).
pub fn run(a: DurabilityArgs) -> anyhow::Result<ExitCode> {
    let plans = plumb_durability::targets::plans(&Asked {
        kv: &a.kv,
        servers: a.server.as_slice(),
        modes: &a.modes,
        params: &a.params,
        seed: a.seed.unwrap_or_else(plumb_plan::clock_seed),
    })?;
    let root = a.dir.clone().unwrap_or_else(|| PathBuf::from("/var/tmp"));
    let mut store = Store::open(&a.store.path())?;
    let mut printer = Printer::new(Style::StartOnly);
    let job = Job {
        tag: a.tag.clone(),
        ..Job::new(&plans, Some(root), false)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    let runs = out
        .run_ids
        .iter()
        .map(|&id| {
            store
                .run(id)
                .with_context(|| format!("reading run {id} back"))
        })
        .collect::<anyhow::Result<Vec<StoredRun>>>()?;
    print_table(&runs, a.json)?;
    let failed = plumb_report::durability::steps(&runs).any(|(_, s)| s == StepStatus::Failed);
    Ok(if INTERRUPTED.load(Ordering::Relaxed) {
        eprintln!("plumb: interrupted: the table holds the trials that ran");
        ExitCode::from(130)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The table of every step of `runs`, as text with its note or as a JSON array of
/// rows (engine, mode, cut, kills, acknowledged, lost, wrong, verdict).
fn print_table(runs: &[StoredRun], json: bool) -> anyhow::Result<()> {
    if json {
        let rows = plumb_report::durability::json(runs);
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        let table = plumb_report::durability::table(runs).unwrap_or_default();
        println!("{table}");
        println!("\n{}", plumb_report::durability::NOTE);
    }
    Ok(())
}
