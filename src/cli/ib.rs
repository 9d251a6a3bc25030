//! `plumb ib`: the insert benchmark (l.i0, l.x, l.i1, l.i2, the write-debt step, then
//! qr100 … qp1000) on a server plumb starts (PostgreSQL, MariaDB with InnoDB or
//! MyRocks), one given by URL, or an embedded engine (`--kv rocksdb`), stored as a run
//! like any other so `plumb compare` and `plumb report` set engines side by side.

use super::execute::{self, clock_seed, exit_code, INTERRUPTED};
use super::progress::Bar;
use super::server::{self, Server, ServerArgs};
use super::StoreArg;
use anyhow::{bail, Context};
use plumb_core::StepStatus;
use plumb_ibench::kv::KvTable;
use plumb_ibench::sql::{SqlEngine, SqlTable};
use plumb_ibench::{run_ib_step, IbContext, IbStepConfig, IbTally, IbTarget};
use plumb_runner::lifecycle::rfc3339;
use plumb_runner::NoProgress;
use plumb_sql::{CounterReader, Protocol, StorageEngine};
use plumb_store::{StepRecord, Store};
use plumb_targets::{EngineCommon, EngineSpec};
use plumb_workloads::ibench::{self as ibsteps, IbStepPlan};
use plumb_workloads::{IbKind, Kind};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

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
    /// Rows loaded by l.i0.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Rows inserted by l.i1 (l.i2 inserts a fifth as many, 5 per commit).
    #[arg(long, default_value_t = 200_000)]
    inserts: u64,
    /// Clients: each inserts, and in the query steps also queries, on its own
    /// connections.
    #[arg(long, default_value_t = 1)]
    clients: u32,
    /// Seconds each query step runs.
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// Each insert commit deletes as many of the oldest rows, so the table keeps its
    /// size (l.i1, l.i2 and the query steps).
    #[arg(long)]
    delete_per_insert: bool,
    /// Primary keys per point query; LIMIT of a range query.
    #[arg(long, default_value_t = 10)]
    rows_per_query: u32,
    /// Steps to run, in order [default: the published sequence].
    #[arg(long, value_name = "LIST")]
    steps: Option<String>,
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

fn check(a: &IbArgs) -> anyhow::Result<Vec<IbStepPlan>> {
    if a.rows == 0 || a.clients == 0 || a.rows_per_query == 0 {
        bail!("--rows, --clients and --rows-per-query must be at least 1");
    }
    if a.rows_per_query > 64 {
        bail!(
            "--rows-per-query {}: at most 64 keys per point query",
            a.rows_per_query
        );
    }
    if a.rows > i32::MAX as u64 / 2 || a.inserts > i32::MAX as u64 / 4 {
        bail!("--rows / --inserts: at most {} rows", i32::MAX / 4);
    }
    if !(a.duration > 0.0 && a.duration.is_finite()) {
        bail!("--duration {}: give a number of seconds > 0", a.duration);
    }
    let steps = match &a.steps {
        Some(s) => ibsteps::parse_steps(s)?,
        None => ibsteps::default_order(),
    };
    if steps.is_empty() {
        bail!("--steps: no steps given; e.g. --steps l.i0,l.x,qr100");
    }
    if steps[0].kind != IbKind::Load {
        bail!(
            "--steps {}: start with l.i0 (it creates and loads the table plumb counts rows of)",
            steps[0].name
        );
    }
    Ok(steps)
}

/// An embedded engine in a fresh directory under --dir.
struct Embedded {
    table: KvTable,
    name: String,
    version: String,
    options: Vec<(String, String)>,
    durability: &'static str,
    dir: tempfile::TempDir,
}

fn open_kv(a: &IbArgs, name: &str) -> anyhow::Result<Embedded> {
    let mut spec = EngineSpec::default_for(name).map_err(|_| {
        anyhow::anyhow!(
            "--kv {name:?}: this build runs {}",
            plumb_targets::engines().join(", ")
        )
    })?;
    spec.check_built_in()
        .map_err(|e| anyhow::anyhow!("--kv {name:?}: {e}"))?;
    let caps = spec.capabilities();
    if !caps.delete || !caps.stores_data {
        bail!("--kv {name}: the insert benchmark needs an engine that stores data and deletes");
    }
    let common = EngineCommon {
        sync: a.sync,
        cache_size: caps.cache.then_some(a.server.cache_mb << 20),
    };
    spec.apply_common(&common)
        .and_then(|()| spec.validate())
        .map_err(|e| anyhow::anyhow!("--kv {name}: {e}"))?;
    let root = a
        .server
        .dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("/var/tmp"));
    for gone in plumb_store::owner::sweep(&root) {
        eprintln!(
            "plumb: removed {}, left by a plumb that was killed",
            gone.display()
        );
    }
    let dir = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .prefix(&format!("plumb-ib-{name}-"))
        .tempdir_in(&root)
        .with_context(|| format!("--dir: making a directory in {}", root.display()))?;
    plumb_store::owner::claim(dir.path());
    let target = spec
        .open(caps.keeps_files.then(|| dir.path()))
        .with_context(|| format!("opening {name} in {}", dir.path().display()))?;
    let options = target.options();
    Ok(Embedded {
        name: spec.name().to_string(),
        version: spec.version(),
        durability: spec.durability().name(),
        options,
        table: KvTable::new(target),
        dir,
    })
}

/// Runs `plumb ib`.
pub fn run(a: IbArgs) -> anyhow::Result<ExitCode> {
    let steps = check(&a)?;
    let seed = a.seed.unwrap_or_else(clock_seed);
    if let Some(name) = a.kv.clone() {
        let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
        let e = open_kv(&a, &name)?;
        eprintln!(
            "plumb: {} {} in {}{}",
            e.name,
            e.version,
            e.dir.path().display(),
            if a.server.keep {
                " (kept after the run)"
            } else {
                ""
            }
        );
        let mut options: BTreeMap<String, String> = e
            .options
            .iter()
            .map(|(k, v)| (format!("engine.{k}"), v.clone()))
            .collect();
        options.insert("sync".into(), a.sync.to_string());
        options.insert("durability".into(), e.durability.into());
        let data_dir = e.dir.path().to_path_buf();
        let code = measure(
            &a,
            Subject {
                target: &e.table,
                engine: &e.name,
                version: &e.version,
                options,
                data_dir: Some(data_dir),
            },
            &steps,
            seed,
            &mut None,
        );
        plumb_store::owner::release(e.dir.path());
        if a.server.keep {
            eprintln!("plumb: kept {}", e.dir.keep().display());
        }
        return code;
    }
    let (mut server, choice) = server::start(&a.server)?;
    let result = measure_server(&a, &mut server, choice.as_ref(), &steps, seed);
    let stopped = server.stop(a.server.keep);
    let code = result?;
    stopped.context("the run is stored, but the server did not stop cleanly")?;
    Ok(code)
}

fn measure_server(
    a: &IbArgs,
    server: &mut Server,
    choice: Option<&plumb_sql::ServerChoice>,
    steps: &[IbStepPlan],
    seed: u64,
) -> anyhow::Result<ExitCode> {
    let ep = server.endpoint().clone();
    let mut counters = CounterReader::connect(&ep)?;
    let id = server::identify(&a.server, server, choice, &mut counters)?;
    let engine = match (ep.protocol, id.storage) {
        (Protocol::Postgres, _) => SqlEngine::Postgres,
        (_, Some(StorageEngine::RocksDb)) => SqlEngine::MyRocks,
        _ => SqlEngine::InnoDb,
    };
    let (pid, data_dir) = server.local();
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    options.insert("cache_mb".into(), a.server.cache_mb.to_string());
    server::record_settings(server, &mut counters, id.storage, &mut options);
    drop(counters);
    let table = SqlTable {
        endpoint: ep,
        engine,
        pid,
        data_dir: data_dir.clone(),
    };
    let mut died = None;
    let code = measure(
        a,
        Subject {
            target: &table,
            engine: &id.engine,
            version: &id.version,
            options,
            data_dir,
        },
        steps,
        seed,
        &mut Some((server, &mut died)),
    )?;
    if let Some(e) = died {
        eprintln!("plumb: error: {e}\nplumb: finished steps are stored");
        return Ok(ExitCode::from(1));
    }
    Ok(code)
}

/// A managed server to watch for death after a failed step, and where to say it died.
type Watch<'a, 'b> = Option<(&'a mut Server, &'b mut Option<plumb_sql::SqlError>)>;

/// What a run measures, and what the store calls it.
struct Subject<'a> {
    target: &'a dyn IbTarget,
    engine: &'a str,
    version: &'a str,
    /// Options recorded with the run (the command's own are added).
    options: BTreeMap<String, String>,
    data_dir: Option<std::path::PathBuf>,
}

fn measure(
    a: &IbArgs,
    subject: Subject<'_>,
    steps: &[IbStepPlan],
    seed: u64,
    watch: &mut Watch<'_, '_>,
) -> anyhow::Result<ExitCode> {
    let Subject {
        target,
        engine,
        version,
        mut options,
        data_dir,
    } = subject;
    for (k, v) in [
        ("rows", a.rows.to_string()),
        ("inserts", a.inserts.to_string()),
        ("clients", a.clients.to_string()),
        ("duration", a.duration.to_string()),
        ("delete_per_insert", a.delete_per_insert.to_string()),
        ("rows_per_query", a.rows_per_query.to_string()),
    ] {
        options.insert(k.to_string(), v);
    }
    let mut store = Store::open(&a.store.path())?;
    let (mut rec, disk) = execute::begin_run(
        &mut store,
        execute::RunHeader {
            tag: a.tag.clone(),
            workload: match &a.steps {
                Some(s) => format!("ibench:{s}"),
                None => "ibench".into(),
            },
            engine: engine.to_string(),
            version: version.to_string(),
            options,
            seed,
            data_dir,
        },
    )?;
    let run_id = rec.id();
    eprintln!(
        "plumb: run {run_id}: insert benchmark on {engine} {version}, {} rows, {} client{}, seed {seed}",
        a.rows,
        a.clients,
        if a.clients == 1 { "" } else { "s" }
    );
    let (bar, no) = (Bar::new(), NoProgress);
    let progress = execute::progress(a.json, &bar, &no);
    let mut tally = IbTally::default();
    for (i, plan) in steps.iter().enumerate() {
        let rows = match (plan.kind, plan.name.as_str()) {
            (IbKind::Load, _) => a.rows,
            (IbKind::Insert, "l.i2") => (a.inserts / 5).max(1),
            (IbKind::Insert, _) => a.inserts,
            _ => 0,
        };
        let cfg = IbStepConfig {
            index: i,
            plan: plan.clone(),
            clients: a.clients,
            rows,
            duration: Duration::from_secs_f64(a.duration),
            delete_per_insert: a.delete_per_insert,
            rows_per_query: a.rows_per_query,
            seed,
        };
        let mut ctx = IbContext {
            target,
            disk: disk.as_ref(),
            interrupt: &INTERRUPTED,
            progress,
            tally: &mut tally,
        };
        let result = run_ib_step(&mut ctx, &cfg);
        let mut out = result.outcome;
        let mut server_died = false;
        if out.status == StepStatus::Failed && !out.verification_failed {
            if let Some((server, died)) = watch.as_mut() {
                if let Some(e) = server.died(&plan.name) {
                    out.error = Some(e.to_string());
                    **died = Some(e);
                    server_died = true;
                }
            }
        }
        let mut config = serde_json::json!({
            "step": plan.name,
            "rows_per_commit": plan.rows_per_commit,
            "rate_per_client": plan.rate,
            "rows": rows,
            "clients": a.clients,
            "duration_s": a.duration,
            "delete_per_insert": a.delete_per_insert,
            "rows_per_query": a.rows_per_query,
            "seed": seed.to_string(),
        });
        if let Some(did) = &result.note {
            config["did"] = serde_json::Value::String(did.clone());
        }
        rec.step(
            StepRecord {
                seq: 0,
                name: plan.name.clone(),
                kind: Kind::Ib(plan.kind),
                status: out.status,
                error: out.error.clone(),
                started_at: rfc3339(out.started),
                ended_at: rfc3339(out.ended),
                config,
                summary: out.summary.clone(),
            },
            &out.intervals,
        )?;
        if let Some(e) = &out.error {
            eprintln!("plumb: step {} failed: {e}", plan.name);
        }
        if out.status == StepStatus::Interrupted
            || INTERRUPTED.load(Ordering::Relaxed)
            || server_died
            || (out.status == StepStatus::Failed && !out.verification_failed)
        {
            break;
        }
    }
    let status = rec.finish(INTERRUPTED.load(Ordering::Relaxed))?;
    execute::print_finished(&store, run_id, status, a.json)?;
    Ok(exit_code(status))
}
