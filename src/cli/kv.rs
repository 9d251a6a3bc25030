//! `plumb kv`: db_bench-style steps on an embedded engine. A thin front end: its flags
//! become a plan of one variant (repeated `--repeat` times) that the shared lifecycle
//! runs and stores.

use super::execute::{self, Job, Printer, Style};
use super::StoreArg;
use plumb_plan::{KvParams, RunPlan};
use plumb_probes::profile::ProfileKind;
use plumb_targets::{EngineCommon, EngineFlags, ENGINE_NAMES};
use std::path::PathBuf;
use std::process::ExitCode;

/// `plumb kv` options. Names follow db_bench (underscore spellings are accepted too).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Steps: fillseq fillrandom filluniquerandom overwrite readrandom \
multireadrandom readseq fwdrange revrange readwhilewriting fwdrangewhilewriting revrangewhilewriting \
deleterandom, and unmeasured flush waitforcompaction compact compact0 compact1 flush_mt_l0.\n\
Every option is described in docs/options.md.\n\
Examples:\n  plumb kv                                   quick run, temp dir, default sequence\n  \
plumb kv --num 5000000 --duration 60 --workload x3 --db /data/plumb\n  \
plumb kv --db /data/plumb --use-existing-db --benchmarks readrandom --threads 2"
)]
pub struct KvArgs {
    #[arg(long, default_value = "rocksdb", help = engine_help())]
    engine: String,
    /// Data directory; must be empty or absent (see --use-existing-db, --force)
    /// [default: a temp dir, removed at the end unless --keep].
    #[arg(long, value_name = "DIR")]
    db: Option<PathBuf>,
    /// Run on the database already in --db (skip no steps; fills add to it).
    #[arg(long, alias = "use_existing_db")]
    use_existing_db: bool,
    /// Write into a non-empty --db even though it holds something else.
    #[arg(long)]
    force: bool,
    /// Keep the temp data dir at the end (its path is printed).
    #[arg(long)]
    keep: bool,
    #[command(flatten)]
    params: KvParams,
    /// Seed for every key generator (each step and thread derives its own)
    /// [default: from the clock, printed and stored].
    #[arg(long)]
    seed: Option<u64>,
    /// Steps to run, comma-separated, in order.
    #[arg(long, alias = "steps", conflicts_with = "workload")]
    benchmarks: Option<String>,
    /// Limit this process (which holds the engine) to this much memory, page cache
    /// included, with a cgroup: data larger than it is read from the device, an honest
    /// IO-bound size for every engine (LMDB, SQLite and LevelDB included).
    #[arg(long, value_name = "MIB")]
    memory_mb: Option<u64>,
    /// Drop the OS page cache before each measured step after the first (root only).
    #[arg(long)]
    drop_caches: bool,
    /// A named sequence: default, or x3 (RocksDB's benchmark_compare.sh order).
    #[arg(long)]
    workload: Option<String>,
    /// Settle an LSM engine (RocksDB, Speedb, LevelDB, fjall) before each read step: flush
    /// its memtable and wait for its compactions, as unmeasured steps settle.flush and
    /// settle.waitforcompaction inserted into the plan (not before a read that follows
    /// the plan's own flush,waitforcompaction, or only reads since the last settle).
    /// Without it the tree a read step starts from depends on when background flushes
    /// and compactions happened to finish, which differs between identical runs, and
    /// reads from RocksDB's memtable walk a skiplist built differently in every run (its
    /// node heights come from a random seeded by the thread's id): an exact count moves
    /// with both (plumb icount turns this on; its --no-settle turns it off). LevelDB's flush is a full compaction. The inserted steps move the later
    /// steps' positions, which seed their keys. Other engines have nothing to settle.
    #[arg(long)]
    settle: bool,
    #[command(flatten, next_help_heading = "Every engine")]
    common: EngineCommon,
    #[command(flatten)]
    engines: EngineFlags,
    /// Run the whole sequence this many times, stored as one group (for `plumb compare`:
    /// medians and confidence intervals need repeats). Each repeat gets a fresh data dir
    /// (under --db: DIR/rep-N) and its own seed (seed + N).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Stop repeating once every measured step's ops/s is known to ±PCT (e.g. 2%): --repeat
    /// becomes the most it may take, the first look is after 3, and each look's interval
    /// is at the level alpha spending allows it (so stopping early does not make the
    /// interval promise more than it holds). Prints the repeats taken and the precision.
    #[arg(long, value_name = "PCT", value_parser = plumb_ab::until::parse_pct, requires = "repeat")]
    until: Option<f64>,
    #[command(flatten)]
    store: StoreArg,
    /// A label stored with the run.
    #[arg(long)]
    tag: Option<String>,
    /// Print the run as JSON (docs/json.md) instead of tables; with --repeat, an array
    /// of such documents.
    #[arg(long)]
    json: bool,
    /// Record a profile of each measured step: `cpu` (the default: perf record on the
    /// software clock, with call graphs), `offcpu` (every context switch on the machine,
    /// each of plumb's threads' weighed by the time until it ran again, its stack ending
    /// in the state it left in: D for IO, S for a lock or a sleep, R preempted) or
    /// `wall` (both in one graph). `plumb report --format html` draws a flame graph
    /// per step and a differential one per op against the base. offcpu records every
    /// switch on the machine: meant for steps that wait, not for a throughput figure.
    #[arg(long, value_name = "KIND", num_args = 0..=1, default_missing_value = "cpu")]
    profile: Option<ProfileKind>,
}

/// `--engine`'s help, from the registry: every engine plumb knows and those this build
/// runs, so a new engine is listed without an edit here.
fn engine_help() -> String {
    format!(
        "Engine: one of {} (null measures plumb's own overhead). This build runs: {}",
        ENGINE_NAMES.join(", "),
        plumb_targets::engines().join(", ")
    )
}

/// Checks every flag and builds the plan; nothing is written before this succeeds.
fn plan(a: &KvArgs) -> anyhow::Result<Vec<RunPlan>> {
    Ok(plumb_kv::asked::plan(&plumb_kv::asked::Asked {
        engine: &a.engine,
        engines: &a.engines,
        common: &a.common,
        params: &a.params,
        benchmarks: a.benchmarks.as_deref(),
        workload: a.workload.as_deref(),
        settle: a.settle,
        db: a.db.as_deref(),
        use_existing_db: a.use_existing_db,
        keep: a.keep,
        memory_mb: a.memory_mb,
        drop_caches: a.drop_caches,
        seed: a.seed.unwrap_or_else(plumb_plan::clock_seed),
        repeat: a.repeat,
        first_look: a.until.map(|_| plumb_ab::until::FIRST_LOOK),
    })?)
}

pub fn run(a: KvArgs) -> anyhow::Result<ExitCode> {
    let runs = plan(&a)?;
    let dirs = plumb_kv::asked::data_dir(
        a.db.as_deref(),
        a.use_existing_db,
        a.force,
        a.keep,
        runs[0]
            .target
            .engine_spec()
            .expect("plumb kv plans an engine"),
    )?;
    let style = if a.json { Style::Json } else { Style::Full };
    let mut printer = Printer::new(style);
    let mut store = plumb_store::Store::open(&a.store.path())?;
    let until = a
        .until
        .map(|t| plumb_ab::until::Precision::new(t, a.repeat as usize));
    let job = Job {
        tag: a.tag.clone(),
        grouped: a.repeat > 1,
        profile: a.profile,
        until: until.as_ref().map(|u| u as &dyn plumb_runner::StopRule),
        dirs,
        ..Job::new(&runs, None, false)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    if let Some(g) = out.groups.values().next() {
        eprintln!(
            "plumb: group g{g} holds the repeats; compare them with `plumb compare g{g} OTHER`"
        );
    }
    Ok(execute::exit_code(out.status))
}
