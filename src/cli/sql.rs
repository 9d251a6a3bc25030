//! `plumb sql`: the sysbench microbenchmarks on a database server plumb starts itself
//! (PostgreSQL, MariaDB with InnoDB or MyRocks, a MySQL install) or one given by URL,
//! stored as a run like any other, so `plumb compare` sets releases and engines side
//! by side.

use super::execute::{self, exit_code, Job, Printer, Style};
use super::server_args::ServerArgs;
use super::StoreArg;
use plumb_plan::SqlParams;
use plumb_probes::profile::ProfileKind;
use plumb_runner::family::Extras;
use plumb_store::Store;
use plumb_workloads::sql as sqlsteps;
use std::process::ExitCode;

/// The help's tail: every `--steps` name by the tables it runs on, then examples.
fn after_help() -> String {
    format!(
        "Microbenchmarks (--steps, comma-separated; .pre/.post suffixes allowed), by the tables \
they run on:
{}
The default runs sysbench's: load, the reads (.pre), the writes, the reads again (.post), \
delete and insert. Each other set needs its load step first (pgbench-load, tpcc-load, \
ycsb-load); cached-select makes its own table.

Examples:
  plumb sql --server postgres --table-size 1000000 --threads 2 --tag pg15
  plumb sql --server mariadb --engine rocksdb --steps load,point-query,read-only-100
  plumb sql --server postgres --steps pgbench-load,tpcb-like,select-only --scale 10
  plumb sql --url postgres://bench@db1/pgbench --script my.sql@3 -b select-only@1 -M prepared
  plumb sql --server postgres --steps pgbench-load,script --script custom.sql -D zipf=1.2
  plumb sql --url postgres://bench@db1/sbtest --steps point-query --threads 8
  plumb sql --server mariadb --lua /usr/share/sysbench/oltp_read_write.lua --lua-opt table_size=100000
  plumb sql --url mysql://sb@db1/sbtest --lua my_oltp.lua --lua-opt tables=4 --threads 16",
        sqlsteps::steps_by_tables()
    )
}

/// `plumb sql`.
#[derive(Debug, clap::Args)]
#[command(after_help = after_help())]
pub struct SqlArgs {
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    params: SqlParams,
    /// Run everything this many times, each on a fresh server with a fresh load (seeds
    /// seed, seed+1, …), stored as one group (g<first run id>) for `plumb compare`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Microbenchmarks to run, in order [default: the seeds' order].
    #[arg(long, alias = "benchmarks", value_name = "LIST")]
    steps: Option<String>,
    /// Random seed [default: from the clock, printed and stored].
    #[arg(long)]
    seed: Option<u64>,
    /// Record a profile of each measured step, of plumb and the server's processes:
    /// `cpu` (the default: perf record on the software clock, with call graphs),
    /// `offcpu` (every context switch on the machine, each of the measured processes'
    /// threads weighed by the time until it ran again, its stack ending in the state it
    /// left in: D for IO, S for a lock or a socket, R preempted) or `wall` (both in one
    /// graph). `plumb report --format html` draws a flame graph per step and, in a
    /// comparison, a differential one per query against the base. offcpu records every
    /// switch on the machine: meant for steps that wait, not for a throughput figure.
    #[arg(long, value_name = "KIND", num_args = 0..=1, default_missing_value = "cpu")]
    profile: Option<ProfileKind>,
    /// Limit the managed server's processes to this much memory, page cache included
    /// (a cgroup), so a table larger than it is read from the device.
    #[arg(long, value_name = "MIB")]
    memory_mb: Option<u64>,
    /// A label stored with the run.
    #[arg(long)]
    tag: Option<String>,
    /// This process is one client of a multi-client run of this name: --clients
    /// processes (on this host or others, same --url, same --store) start each step
    /// together at a barrier in the store and keep their histograms, and `plumb
    /// clients NAME` reports percentiles of the merged histograms. Give each run a new
    /// name; load the tables beforehand (a plumb sql --url … --steps load).
    #[arg(long, value_name = "NAME", requires = "clients")]
    client_group: Option<String>,
    /// How many client processes the --client-group has.
    #[arg(long, value_name = "N", requires = "client_group",
          value_parser = clap::value_parser!(u32).range(1..))]
    clients: Option<u32>,
    /// Seconds a client waits at a step's barrier for the others.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    barrier_timeout: f64,
    #[command(flatten)]
    store: StoreArg,
    /// Print the run as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `plumb sql`: one planned run per repeat, each on a fresh server (and a fresh
/// load), through the one runner.
pub fn run(a: SqlArgs) -> anyhow::Result<ExitCode> {
    let (server, password) = a.server.spec();
    let runs = plumb_sql::asked::plan(plumb_sql::asked::Asked {
        params: a.params.clone(),
        steps: a.steps.as_deref(),
        server,
        memory_mb: a.memory_mb,
        client_group: a.client_group.as_deref(),
        barrier_timeout: a.barrier_timeout,
        repeat: a.repeat,
        seed: a.seed.unwrap_or_else(plumb_plan::clock_seed),
    })?;
    let mut store = Store::open(&a.store.path())?;
    let mut printer = Printer::new(if a.json { Style::Json } else { Style::Full });
    let job = Job {
        tag: a.tag.clone(),
        grouped: a.repeat > 1,
        profile: a.profile,
        extras: Extras {
            password,
            port: a.server.port,
            client_group: a.client_group.clone().zip(a.clients),
            barrier_timeout: a.barrier_timeout,
        },
        ..Job::new(&runs, a.server.dir.clone(), a.server.keep)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    Ok(exit_code(out.status))
}
