//! `plumb sql`: the sysbench microbenchmarks on a database server plumb starts itself
//! (PostgreSQL, MariaDB with InnoDB or MyRocks, a MySQL install) or one given by URL,
//! stored as a run like any other, so `plumb compare` sets releases and engines side
//! by side.

use super::execute::{self, clock_seed, exit_code, INTERRUPTED};
use super::progress::Bar;
use super::server::{self, Server, ServerArgs};
use super::StoreArg;
use anyhow::{bail, Context};
use plumb_core::StepStatus;
use plumb_runner::lifecycle::rfc3339;
use plumb_runner::NoProgress;
use plumb_sql::{
    run_sql_step, CounterReader, Protocol, ServerChoice, Shape, SqlContext, SqlStepConfig,
};
use plumb_store::{StepRecord, Store};
use plumb_workloads::{sql as sqlsteps, Distribution, Kind, SqlKind};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// `plumb sql`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Microbenchmarks (--steps, comma-separated; .pre/.post suffixes \
allowed): load, point-query, random-points-10/100/1000, hot-points, points-covered-pk, \
points-notcovered-pk, points-covered-si, points-notcovered-si, range-covered-pk, \
range-notcovered-pk, range-covered-si, range-notcovered-si, scan, read-only-10/100/10000, \
read-only-simple, read-only-sum, read-only-order, read-only-distinct, read-only-count, \
read-write-10/100, write-only, update-index, update-nonindex, update-one, update-zipf, \
update-inlist, delete, insert. The default runs load, the reads (.pre), the writes, the \
reads again (.post), delete and insert.

Examples:
  plumb sql --server postgres --table-size 1000000 --threads 2 --tag pg15
  plumb sql --server mariadb --engine rocksdb --steps load,point-query,read-only-100
  plumb sql --url postgres://bench@db1/sbtest --steps point-query --threads 8"
)]
pub struct SqlArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Tables sbtest1..N.
    #[arg(long, default_value_t = 1)]
    tables: u32,
    /// Rows per table.
    #[arg(long, alias = "table_size", default_value_t = 100_000)]
    table_size: u64,
    /// Rows per range query (sysbench's --range_size).
    #[arg(long, alias = "range_size", default_value_t = 100)]
    range_size: u64,
    /// Client threads, one connection each.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Run everything this many times, each on a fresh server with a fresh load (seeds
    /// seed, seed+1, …), stored as one group (g<first run id>) for `plumb compare`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Seconds measured per step (the load runs to its end).
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Seconds run unmeasured before each step's window, on the same connections.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Microbenchmarks to run, in order [default: the seeds' order].
    #[arg(long, value_name = "LIST")]
    steps: Option<String>,
    /// Keys: uniform or zipfian[:THETA] (update-zipf is always zipfian).
    #[arg(long, default_value = "uniform")]
    distribution: String,
    /// Random seed [default: from the clock, printed and stored].
    #[arg(long)]
    seed: Option<u64>,
    /// Record a CPU profile of each measured step (perf record on the software clock,
    /// with call graphs) of plumb and the server's processes; `plumb report --format
    /// html` draws a flame graph per step and, in a comparison, a differential one per
    /// query against the base.
    #[arg(long)]
    profile: bool,
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

fn check(a: &SqlArgs) -> anyhow::Result<(Vec<sqlsteps::SqlStepPlan>, Distribution)> {
    if a.tables == 0 || a.table_size == 0 || a.threads == 0 || a.range_size == 0 {
        bail!("--tables, --table-size, --range-size and --threads must be at least 1");
    }
    if !(a.duration > 0.0 && a.duration.is_finite()) {
        bail!("--duration {}: give a number of seconds > 0", a.duration);
    }
    if !(a.warmup >= 0.0 && a.warmup.is_finite()) {
        bail!("--warmup {}: give a number of seconds >= 0", a.warmup);
    }
    if a.table_size > i32::MAX as u64 / 2 {
        bail!(
            "--table-size {}: ids are INTEGER; use at most {}",
            a.table_size,
            i32::MAX / 2
        );
    }
    let steps = match &a.steps {
        Some(s) => sqlsteps::parse_steps(s)?,
        None => sqlsteps::default_order(),
    };
    if steps.is_empty() {
        bail!("--steps: no microbenchmarks given; e.g. --steps load,point-query");
    }
    if let Some(g) = &a.client_group {
        if a.server.url.is_none() {
            bail!(
                "--client-group {g}: the clients of a group share one server; give it with \
                 --url (start it once, not per client)"
            );
        }
        if a.steps.is_none() || steps.iter().any(|s| s.kind == SqlKind::Load) {
            bail!(
                "--client-group {g}: every client would load the same tables; load them once \
                 beforehand (plumb sql --url … --steps load) and give the clients --steps \
                 without load, e.g. --steps point-query,read-only-10"
            );
        }
        if a.repeat > 1 {
            bail!("--client-group {g}: --repeat runs one client group per name; start a new group instead");
        }
        if !(a.barrier_timeout > 0.0 && a.barrier_timeout.is_finite()) {
            bail!(
                "--barrier-timeout {}: give a number of seconds > 0",
                a.barrier_timeout
            );
        }
    }
    let dist: Distribution = a
        .distribution
        .parse()
        .map_err(|e: plumb_workloads::WorkloadError| anyhow::anyhow!("{e}"))?;
    if matches!(dist, Distribution::HotSet { .. }) {
        bail!(
            "--distribution {}: use uniform or zipfian[:THETA]",
            a.distribution
        );
    }
    Ok((steps, dist))
}

/// Runs `plumb sql`: each repeat on a fresh server (and a fresh load).
pub fn run(a: SqlArgs) -> anyhow::Result<ExitCode> {
    let (steps, distribution) = check(&a)?;
    let seed = a.seed.unwrap_or_else(clock_seed);
    let mut group = None;
    let mut code = ExitCode::SUCCESS;
    for rep in 0..a.repeat {
        let (mut server, choice) = server::start(&a.server)?;
        let result = measure(
            &a,
            &mut server,
            choice.as_ref(),
            &steps,
            distribution,
            seed.wrapping_add(u64::from(rep)),
            (&mut group, rep),
        );
        let stopped = server.stop(a.server.keep);
        code = result?;
        stopped.context("the run is stored, but the server did not stop cleanly")?;
        if code != ExitCode::SUCCESS || INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(code)
}

fn measure(
    a: &SqlArgs,
    server: &mut Server,
    choice: Option<&ServerChoice>,
    steps: &[sqlsteps::SqlStepPlan],
    distribution: Distribution,
    seed: u64,
    (group, rep): (&mut Option<i64>, u32),
) -> anyhow::Result<ExitCode> {
    let ep = server.endpoint().clone();
    let mut counters = CounterReader::connect(&ep)?;
    let id = server::identify(&a.server, server, choice, &mut counters)?;
    let (engine, version) = (id.engine, id.version);
    let engine_clause = id
        .storage
        .map(|e| format!(" ENGINE = {}", e.sql_name()))
        .unwrap_or_default();
    if !steps.iter().any(|s| s.kind == SqlKind::Load) && counters.max_id(a.tables) == 0 {
        bail!(
            "no rows in sbtest1..{} at {}: add `load` to --steps (it creates and fills them)",
            a.tables,
            ep.redacted_url()
        );
    }
    let (pid, data_dir) = server.local();
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in [
        ("server", engine.clone()),
        ("tables", a.tables.to_string()),
        ("table_size", a.table_size.to_string()),
        ("range_size", a.range_size.to_string()),
        ("threads", a.threads.to_string()),
        ("duration", a.duration.to_string()),
        ("warmup", a.warmup.to_string()),
        ("distribution", distribution.to_string()),
        ("cache_mb", a.server.cache_mb.to_string()),
    ] {
        options.insert(k.to_string(), v);
    }
    server::record_settings(server, &mut counters, id.storage, &mut options);
    let mut store = Store::open(&a.store.path())?;
    let (mut rec, disk) = execute::begin_run(
        &mut store,
        execute::RunHeader {
            tag: a.tag.clone(),
            workload: match &a.steps {
                Some(s) => s.clone(),
                None => "sql-default".into(),
            },
            engine: engine.clone(),
            version: version.clone(),
            options,
            seed,
            data_dir: data_dir.clone(),
        },
    )?;
    let run_id = rec.id();
    let group_of = a.client_group.as_deref().zip(a.clients);
    if let Some((g, _)) = group_of {
        rec.store().set_client_group(run_id, g)?;
    }
    if a.repeat > 1 {
        let g = *group.get_or_insert(run_id);
        rec.store().set_group(run_id, g, i64::from(rep))?;
    }
    eprintln!(
        "plumb: run {run_id}: {engine} {version}, {} × {} rows, {} threads, seed {seed}",
        a.tables, a.table_size, a.threads
    );
    let (bar, no) = (Bar::new(), NoProgress);
    let progress = execute::progress(a.json, &bar, &no);
    let shape = Shape {
        tables: a.tables,
        table_size: a.table_size,
        range_size: a.range_size,
        engine_clause,
        postgres: ep.protocol == Protocol::Postgres,
    };
    let perf_dir = execute::perf_dir(a.profile)?;
    // A database plumb did not just load may have lost rows to earlier deletes.
    let mut all_present = false;
    let mut server_died = None;
    for (i, plan) in steps.iter().enumerate() {
        let cfg = SqlStepConfig {
            index: i,
            plan: plan.clone(),
            threads: a.threads,
            duration: Duration::from_secs_f64(a.duration),
            warmup: Duration::from_secs_f64(a.warmup),
            seed,
            shape: shape.clone(),
            distribution,
        };
        let mut ctx = SqlContext {
            endpoint: &ep,
            server_pid: pid,
            data_dir: data_dir.as_deref(),
            disk: disk.as_ref(),
            counters: &mut counters,
            interrupt: &INTERRUPTED,
            progress,
            all_present: &mut all_present,
            profile: perf_dir.as_ref().map(|d| d.path()),
        };
        if let Some((g, n)) = group_of {
            let place = ctx_barrier(rec.store(), g, i, n, a.barrier_timeout)?;
            eprintln!(
                "plumb: client group {g}: step {}: all {n} clients here (arrived {})",
                plan.name,
                place + 1
            );
        }
        let mut out = run_sql_step(&mut ctx, &cfg);
        // A failed step may be the first sign of a dying server.
        if out.status == StepStatus::Failed {
            if let Some(e) = server.died(&plan.name) {
                out.status = StepStatus::Failed;
                out.error = Some(e.to_string());
                server_died = Some(e);
            }
        }
        let step_id = rec.step(
            StepRecord {
                seq: 0,
                name: plan.name.clone(),
                kind: Kind::Sql(plan.kind),
                status: out.status,
                error: out.error.clone(),
                started_at: rfc3339(out.started),
                ended_at: rfc3339(out.ended),
                config: serde_json::json!({
                    "microbenchmark": plan.kind.name(),
                    "threads": a.threads,
                    "duration_s": a.duration,
                    "warmup_s": a.warmup,
                    "tables": a.tables,
                    "table_size": a.table_size,
                    "range_size": a.range_size,
                    "distribution": distribution.to_string(),
                    "seed": seed.to_string(),
                }),
                summary: out.summary.clone(),
            },
            &out.intervals,
        )?;
        if let (Some(_), Some(h)) = (group_of, &out.histograms) {
            let mut hists = vec![(plumb_store::clients::WHOLE_STEP, h.total.to_v2_base64())];
            hists.extend(
                h.intervals
                    .iter()
                    .enumerate()
                    .map(|(i, h)| (i as i64, h.to_v2_base64())),
            );
            rec.store().add_histograms(step_id, &hists)?;
        }
        match &out.profile {
            Some(Ok(folded)) => rec.store().add_profile(step_id, folded)?,
            Some(Err(why)) => eprintln!("plumb: no profile of step {}: {why}", plan.name),
            None => {}
        }
        if let Some(e) = &out.error {
            eprintln!("plumb: step {} failed: {e}", plan.name);
        }
        if out.status == StepStatus::Interrupted
            || INTERRUPTED.load(Ordering::Relaxed)
            || server_died.is_some()
            || (out.status == StepStatus::Failed && !out.verification_failed)
        {
            break;
        }
    }
    let status = rec.finish(INTERRUPTED.load(Ordering::Relaxed))?;
    execute::print_finished(&store, run_id, status, a.json)?;
    if let Some(e) = server_died {
        eprintln!("plumb: error: run {run_id}: {e}\nplumb: finished steps are stored");
        return Ok(ExitCode::from(1));
    }
    Ok(exit_code(status))
}

/// Waits for the other clients of the group before step `index`.
fn ctx_barrier(
    store: &Store,
    group: &str,
    index: usize,
    n: u32,
    timeout: f64,
) -> anyhow::Result<i64> {
    Ok(store.barrier(
        &format!("{group}/{index}"),
        i64::from(n),
        Duration::from_secs_f64(timeout),
        &INTERRUPTED,
    )?)
}
