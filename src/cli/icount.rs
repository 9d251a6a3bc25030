//! `plumb icount`: instructions per op, counted exactly where no PMU exists. The `kv`
//! command after `--` runs under Valgrind's callgrind with collection off, and plumb's
//! kernel turns it on only in its measured threads while their window is open
//! (`plumb_runner::kernel::callgrind`), so the count is the ops' own: no setup, no
//! sampler, no background thread. Two runs of one build agree to far under 1%, so a
//! 1-2% CPU regression shows with one run a side, where wall time on a shared machine
//! needs dozens of slices.
//!
//! An LSM engine is settled before each read step (`kv --settle`: its memtable flushed
//! and its compactions waited for, as unmeasured steps in the plan), so each read step
//! starts from the same tree in every run. Unsettled, the reads pass through whatever
//! background flushes and compactions left, which differs from run to run, and through
//! the memtable, whose count differs too: RocksDB's skiplist draws each node's height
//! from a per-thread random seeded by the thread's id, so two identical runs build two
//! skiplists (readrandom after fillseq of 20000 keys counted 6117.6 or 6146.0
//! instructions per op, one tree, all in the memtable; settled, the reads go to one
//! SST file and agree to 0.003%). Each measured step stores the shape it started from
//! (`lsm_start`), and comparisons say when two counted runs' shapes differ.
//! `--no-settle` counts the plan as given.
//!
//! The run is stored like any other, its plan marked `under: callgrind`: its times are
//! callgrind's (~50× slow), so its runs are a history of their own, and `plumb check`,
//! `compare` and `history` judge their `instructions_op` (give `--metric
//! instructions_op`) against earlier counted runs of the same plan only.

use anyhow::Context;
use plumb_ab::icount::IcountPlan;
use std::path::PathBuf;
use std::process::ExitCode;

/// `plumb icount [--valgrind PATH] -- kv ARGS…`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb icount -- kv --engine memory --benchmarks fillseq,readrandom --num 20000 --ops 50000\n  \
plumb icount -- kv --engine rocksdb --num 20000 --ops 20000 --benchmarks fillseq,compact,readrandom --seed 1\n  \
plumb check --metric instructions_op --threshold 1      judge the newest counted run against earlier ones\n\
Counted: every instruction the measured threads execute while the window is open (the engine's \
and plumb's own per-op work). Not counted: the engine's background threads (flush, compaction), \
setup, and all that costs time but no instruction (IO, waits, cache and TLB misses). Give a \
fixed --seed and --ops so two runs do the same ops; steps without a fixed op count (fills \
cover --num) count too. An LSM engine (RocksDB, LevelDB, fjall) is settled before each read \
step (kv --settle: memtable flushed, compactions waited for) unless --no-settle.")]
pub struct IcountArgs {
    /// The valgrind to run [default: valgrind on PATH].
    #[arg(long, value_name = "PATH", default_value = "valgrind")]
    valgrind: PathBuf,
    /// Print the child's JSON document (docs/json.md) instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep callgrind's dumps (one per step, `callgrind.out.N`) and its log in this
    /// directory, for `callgrind_annotate` (which functions the instructions went to)
    /// [default: a temporary directory, removed].
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Count the plan as given, without settling an LSM engine before each read step.
    /// By default the run gets `kv --settle`: the memtable is flushed and compactions
    /// are waited for (unmeasured steps settle.flush, settle.waitforcompaction), so each
    /// read step starts from the same tree in every run. Without it the reads pass
    /// through what background flushes and compactions left, and through a memtable
    /// whose skiplist is built differently in every run (RocksDB seeds its node heights
    /// from the thread's id): RocksDB's readrandom then moves by 0.5% between identical
    /// runs. For counting memtable reads or an unsettled tree, or a history counted
    /// before plumb settled.
    #[arg(long)]
    no_settle: bool,
    /// The run counted, after `--`: `kv` with its arguments (--store, --tag, --seed … go
    /// there).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(a: IcountArgs) -> anyhow::Result<ExitCode> {
    let plan = IcountPlan {
        valgrind: a.valgrind,
        bin: std::env::current_exe().context("finding this plumb binary")?,
        command: a.command,
        settle: !a.no_settle,
    };
    // Refused before a directory is made or anything said.
    plumb_ab::icount::child_args(&plan)?;
    let temp;
    let dir = match &a.keep {
        Some(d) => {
            std::fs::create_dir_all(d)
                .with_context(|| format!("--keep {}: creating it", d.display()))?;
            d.as_path()
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("plumb-icount-")
                .tempdir()
                .context("creating a directory for callgrind's dumps")?;
            temp.path()
        }
    };
    eprintln!("plumb icount: running under callgrind (about 50× slower than natively)");
    let stdout = plumb_ab::icount::run(&plan, dir)?;
    if a.json {
        std::io::Write::write_all(&mut std::io::stdout(), &stdout)?;
        return Ok(ExitCode::SUCCESS);
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&stdout).context("the counted run's --json output")?;
    print!("{}", plumb_ab::icount::table(&doc)?);
    Ok(ExitCode::SUCCESS)
}
