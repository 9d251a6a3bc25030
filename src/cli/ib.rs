//! `plumb ib`: the insert benchmark (l.i0, l.x, l.i1, l.i2, the write-debt step, then
//! qr100 … qp1000) on a server plumb starts (PostgreSQL, MariaDB with InnoDB or
//! MyRocks), one given by URL, or an embedded engine (`--kv rocksdb`), stored as a run
//! like any other so `plumb compare` and `plumb report` set engines side by side.

use super::execute::{self, exit_code, Job, Printer, Style};
use super::server_args::ServerArgs;
use super::StoreArg;
use plumb_plan::IbParams;
use plumb_runner::family::Extras;
use plumb_store::Store;
use std::process::ExitCode;

/// `plumb ib`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Steps (--steps, comma-separated): l.i0 (create the table and load \
it in key order, no secondary indexes, 100 rows per commit), l.x (create the three \
secondary indexes), l.i1 (inserts, 50 rows per commit), l.i2 (inserts, 5 rows per commit), \
reduce-debt (vacuum/checkpoint, InnoDB flush, MyRocks/RocksDB flush and compaction; \
unmeasured), qrN / qpN (range / point queries as fast as they go while each client inserts \
N rows/s; the step fails if inserts average below 95% of that). The default is the \
published sequence: l.i0,l.x,l.i1,l.i2,reduce-debt,qr100,qp100,qr500,qp500,qr1000,qp1000.

Examples:
  plumb ib --server postgres --rows 1000000 --inserts 200000 --duration 60
  plumb ib --server mariadb --engine rocksdb --delete-per-insert --tag myrocks
  plumb ib --kv rocksdb --rows 2000000 --steps l.i0,l.x,l.i1,qr1000,qp1000"
)]
pub struct IbArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// An embedded engine instead of a server (rocksdb, lmdb, sqlite, leveldb,
    /// wiredtiger, memory): the table and its three indexes are key spaces written in
    /// one batch per commit.
    #[arg(long, value_name = "ENGINE", conflicts_with_all = ["server", "engine", "url", "basedir", "port", "config"])]
    kv: Option<String>,
    /// With --kv: flush every commit to the device before it is acknowledged.
    #[arg(long, requires = "kv")]
    sync: bool,
    #[command(flatten)]
    params: IbParams,
    /// Steps to run, in order [default: the published sequence].
    #[arg(long, alias = "benchmarks", value_name = "LIST")]
    steps: Option<String>,
    /// Limit what holds the data (the server's processes, or plumb with --kv) to this
    /// much memory, page cache included (a cgroup).
    #[arg(long, value_name = "MIB")]
    memory_mb: Option<u64>,
    /// Random seed [default: from the clock, printed and stored].
    #[arg(long)]
    seed: Option<u64>,
    /// A label stored with the run.
    #[arg(long)]
    tag: Option<String>,
    #[command(flatten)]
    store: StoreArg,
    /// Print the run as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `plumb ib`: one planned run through the one runner.
pub fn run(a: IbArgs) -> anyhow::Result<ExitCode> {
    // With --kv there is no server (and no --url, so no password).
    let (server, password) = a.server.spec();
    let plan = plumb_ibench::asked::plan(plumb_ibench::asked::Asked {
        params: &a.params,
        steps: a.steps.as_deref(),
        kv: a.kv.as_deref(),
        sync: a.sync,
        cache_mb: a.server.cache_mb,
        server,
        memory_mb: a.memory_mb,
        seed: a.seed.unwrap_or_else(plumb_plan::clock_seed),
    })?;
    let mut store = Store::open(&a.store.path())?;
    let mut printer = Printer::new(if a.json { Style::Json } else { Style::Full });
    let runs = std::slice::from_ref(&plan);
    let job = Job {
        tag: a.tag.clone(),
        extras: Extras {
            password,
            port: a.server.port,
            ..Extras::default()
        },
        ..Job::new(runs, a.server.dir.clone(), a.server.keep)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    Ok(exit_code(out.status))
}
