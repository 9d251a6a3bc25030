//! `plumb kv`: db_bench-style steps on an embedded engine, stored as they finish.

use super::provenance::{command_line, now, rfc3339};
use super::{output, progress::Bar, StoreArg};
use anyhow::{bail, Context};
use plumb_core::{StepStatus, Target};
use plumb_runner::{run_step, KeySpace, NoProgress, Progress, RunContext, StepConfig};
use plumb_store::{NewRun, StepRecord, Store};
use plumb_workloads::steps::{self, StepPlan};
use plumb_workloads::Distribution;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[cfg(feature = "rocksdb")]
use plumb_targets::rocks::{CacheType, CompactionStyle, Compression, RocksOptions, RocksTarget};

/// Set by Ctrl-C; the running step stops, finished steps stay stored.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Default per-step duration when neither --duration nor --ops is given.
const QUICK_SECS: u64 = 3;

/// `plumb kv` options. Names follow db_bench (underscore spellings are accepted too).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Steps: fillseq fillrandom filluniquerandom overwrite readrandom \
multireadrandom readseq fwdrange revrange readwhilewriting fwdrangewhilewriting revrangewhilewriting \
deleterandom, and unmeasured flush waitforcompaction compact.\n\
Examples:\n  plumb kv                                   quick run, temp dir, default sequence\n  \
plumb kv --num 5000000 --duration 60 --workload x3 --db /data/plumb\n  \
plumb kv --db /data/plumb --use-existing-db --benchmarks readrandom --threads 2"
)]
pub struct KvArgs {
    /// Engine: rocksdb (default), memory, or null (measures plumb's own overhead).
    #[arg(long, default_value = "rocksdb")]
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
    /// Keys in the key space (db_bench's --num; small by default for a quick run).
    #[arg(long, default_value_t = 200_000)]
    num: u64,
    /// Bytes per key.
    #[arg(long, alias = "key_size", default_value_t = 20)]
    key_size: usize,
    /// Bytes per value, including its 4-byte checksum.
    #[arg(long, alias = "value_size", default_value_t = 400)]
    value_size: usize,
    /// Measured threads per step (readers, for *whilewriting steps).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds per step; fillrandom stops at --num keys or this, whichever first;
    /// fillseq, filluniquerandom and readseq always cover all --num keys, as in
    /// db_bench [default: 3 s for the other steps when --ops is not given].
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
    /// Ops per non-fill step, in total across threads.
    #[arg(long)]
    ops: Option<u64>,
    /// Unmeasured seconds at the start of each non-fill step.
    #[arg(long, value_name = "SECS", default_value_t = 0.0)]
    warmup: f64,
    /// Seed for every key generator (each step and thread derives its own)
    /// [default: from the clock, printed and stored].
    #[arg(long)]
    seed: Option<u64>,
    /// Steps to run, comma-separated, in order.
    #[arg(long, conflicts_with = "workload")]
    benchmarks: Option<String>,
    /// A named sequence: default, or x3 (RocksDB's benchmark_compare.sh order).
    #[arg(long)]
    workload: Option<String>,
    /// next() calls after each seek in range steps.
    #[arg(long, alias = "seek_nexts", default_value_t = 10)]
    seek_nexts: usize,
    /// Keys per multireadrandom call.
    #[arg(long, alias = "batch_size", default_value_t = 16)]
    batch_size: usize,
    /// MB/s (MiB) of the one rate-limited writer in *whilewriting steps.
    #[arg(long, alias = "write_rate_mb", default_value_t = 2.0)]
    write_rate_mb: f64,
    /// Key distribution: uniform, zipfian[:THETA], or hotset:K (the first K keys).
    #[arg(long, default_value = "uniform")]
    distribution: String,

    /// RocksDB: leveled or universal.
    #[arg(
        long,
        alias = "compaction_style",
        default_value = "leveled",
        help_heading = "RocksDB"
    )]
    compaction_style: String,
    /// RocksDB: block cache bytes (0 = no block cache).
    #[arg(long, alias = "cache_size", default_value_t = 1 << 30, help_heading = "RocksDB")]
    cache_size: u64,
    /// RocksDB: lru or hyperclock.
    #[arg(
        long,
        alias = "cache_type",
        default_value = "lru",
        help_heading = "RocksDB"
    )]
    cache_type: String,
    /// RocksDB: O_DIRECT for user reads.
    #[arg(long, alias = "use_direct_reads", help_heading = "RocksDB")]
    use_direct_reads: bool,
    /// RocksDB: O_DIRECT for flush and compaction.
    #[arg(
        long,
        alias = "use_direct_io_for_flush_and_compaction",
        help_heading = "RocksDB"
    )]
    use_direct_io_for_flush_and_compaction: bool,
    /// RocksDB: none, lz4 or zstd.
    #[arg(
        long,
        alias = "compression_type",
        default_value = "none",
        help_heading = "RocksDB"
    )]
    compression: String,
    /// RocksDB: no WAL for any write (fillseq never uses it).
    #[arg(long, alias = "disable_wal", help_heading = "RocksDB")]
    disable_wal: bool,
    /// RocksDB: fsync the WAL on every write.
    #[arg(long, help_heading = "RocksDB")]
    sync: bool,
    /// RocksDB: bloom filter bits per key (0 = none).
    #[arg(
        long,
        alias = "bloom_bits",
        default_value_t = 10.0,
        help_heading = "RocksDB"
    )]
    bloom_bits: f64,
    /// RocksDB: memtable bytes.
    #[arg(long, alias = "write_buffer_size", default_value_t = 64 << 20, help_heading = "RocksDB")]
    write_buffer_size: u64,
    /// RocksDB: flush + compaction threads.
    #[arg(
        long,
        alias = "max_background_jobs",
        default_value_t = 2,
        help_heading = "RocksDB"
    )]
    max_background_jobs: i32,
    /// RocksDB: data block bytes.
    #[arg(
        long,
        alias = "block_size",
        default_value_t = 8192,
        help_heading = "RocksDB"
    )]
    block_size: u64,

    /// Run the whole sequence this many times, stored as one group (for `plumb compare`:
    /// medians and confidence intervals need repeats). Each repeat gets a fresh data dir
    /// (under --db: DIR/rep-N) and its own seed (seed + N).
    #[arg(long, default_value_t = 1)]
    repeat: u32,

    #[command(flatten)]
    store: StoreArg,
    /// A label stored with the run.
    #[arg(long)]
    tag: Option<String>,
    /// Print the run as JSON (docs/json.md) instead of tables; with --repeat, an array
    /// of such documents.
    #[arg(long)]
    json: bool,
}

/// Options checked and resolved before anything is written.
struct Plan {
    steps: Vec<StepPlan>,
    workload_name: String,
    distribution: Distribution,
    seed: u64,
    #[cfg(feature = "rocksdb")]
    rocks: RocksOptions,
}

fn bad(option: &str, msg: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{option}: {msg}")
}

fn plan(a: &KvArgs) -> anyhow::Result<Plan> {
    if !plumb_targets::engines().contains(&a.engine.as_str()) {
        bail!(
            "--engine {:?}: not built into this plumb; use one of: {}",
            a.engine,
            plumb_targets::engines().join(", ")
        );
    }
    if a.num == 0 {
        return Err(bad("--num", "must be at least 1"));
    }
    if a.key_size < plumb_workloads::KeyFormat::MIN_SIZE || a.key_size > 1 << 16 {
        return Err(bad(
            "--key-size",
            "must be between 8 (a 64-bit key number) and 65536",
        ));
    }
    let min_value = plumb_core::value::CHECKSUM_LEN + 4;
    if a.value_size < min_value || a.value_size > plumb_runner::payload::PAYLOAD_LEN / 2 {
        return Err(bad(
            "--value-size",
            format!(
                "must be between {min_value} (a 4-byte checksum plus payload) and {}",
                plumb_runner::payload::PAYLOAD_LEN / 2
            ),
        ));
    }
    if a.threads == 0 || a.threads > 1024 {
        return Err(bad("--threads", "must be between 1 and 1024"));
    }
    if let Some(d) = a.duration {
        if !(d > 0.0 && d.is_finite()) {
            return Err(bad("--duration", "must be a number of seconds > 0"));
        }
    }
    if a.ops == Some(0) {
        return Err(bad("--ops", "must be at least 1"));
    }
    if !(a.warmup >= 0.0 && a.warmup.is_finite()) {
        return Err(bad("--warmup", "must be a number of seconds >= 0"));
    }
    if !(a.write_rate_mb > 0.0 && a.write_rate_mb.is_finite()) {
        return Err(bad("--write-rate-mb", "must be > 0 MB/s"));
    }
    if a.repeat == 0 || a.repeat > 1000 {
        return Err(bad("--repeat", "must be between 1 and 1000"));
    }
    if a.batch_size == 0 || a.batch_size > 4096 {
        return Err(bad("--batch-size", "must be between 1 and 4096"));
    }
    if a.use_existing_db && a.db.is_none() {
        return Err(bad(
            "--use-existing-db",
            "needs --db DIR naming the database to reuse",
        ));
    }
    if a.keep && a.db.is_some() {
        return Err(bad(
            "--keep",
            "only applies to the temp dir; --db is always kept",
        ));
    }
    let distribution: Distribution = a.distribution.parse()?;
    if let Distribution::HotSet { k } = distribution {
        if k > a.num {
            return Err(bad(
                "--distribution",
                format!("hotset:{k} is larger than --num {}", a.num),
            ));
        }
    }
    let (steps, workload_name) = match (&a.benchmarks, &a.workload) {
        (Some(b), _) => (steps::parse_benchmarks(b)?, b.clone()),
        (None, Some(w)) => (steps::workload(w)?, w.clone()),
        (None, None) => (
            steps::workload("default")?,
            steps::DEFAULT_BENCHMARKS.to_string(),
        ),
    };
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    #[cfg(feature = "rocksdb")]
    let rocks = {
        let r = RocksOptions {
            compaction_style: a.compaction_style.parse::<CompactionStyle>()?,
            cache_size: a.cache_size,
            cache_type: a.cache_type.parse::<CacheType>()?,
            use_direct_reads: a.use_direct_reads,
            use_direct_io_for_flush_and_compaction: a.use_direct_io_for_flush_and_compaction,
            compression: a.compression.parse::<Compression>()?,
            disable_wal: a.disable_wal,
            sync: a.sync,
            bloom_bits: a.bloom_bits,
            write_buffer_size: a.write_buffer_size,
            max_background_jobs: a.max_background_jobs,
            block_size: a.block_size,
        };
        r.validate()?;
        r
    };
    Ok(Plan {
        steps,
        workload_name,
        distribution,
        seed,
        #[cfg(feature = "rocksdb")]
        rocks,
    })
}

/// Where the data lives for this run; a temp dir is removed on drop unless kept.
enum DataDir {
    None,
    Given(PathBuf),
    Temp(tempfile::TempDir),
}

impl DataDir {
    fn path(&self) -> Option<&Path> {
        match self {
            DataDir::None => None,
            DataDir::Given(p) => Some(p),
            DataDir::Temp(t) => Some(t.path()),
        }
    }
}

/// The data dir of repeat `rep`: a fresh temp dir, `DIR/rep-N` under a given --db
/// when repeating, or the one given.
fn repeat_dir(a: &KvArgs, first: DataDir, rep: u32) -> anyhow::Result<DataDir> {
    if rep == 0 && a.repeat == 1 {
        return Ok(first);
    }
    Ok(match first {
        DataDir::None => DataDir::None,
        DataDir::Temp(_) => first,
        DataDir::Given(p) if a.use_existing_db => DataDir::Given(p),
        DataDir::Given(p) => {
            let sub = p.join(format!("rep-{rep}"));
            std::fs::create_dir(&sub)
                .with_context(|| format!("--db: creating {}", sub.display()))?;
            DataDir::Given(sub)
        }
    })
}

fn prepare_dir(a: &KvArgs) -> anyhow::Result<DataDir> {
    if a.engine != "rocksdb" {
        if a.db.is_some() {
            return Err(bad(
                "--db",
                format!("the {} engine keeps no files", a.engine),
            ));
        }
        return Ok(DataDir::None);
    }
    let Some(dir) = &a.db else {
        let t = tempfile::Builder::new()
            .prefix("plumb-kv-")
            .tempdir()
            .context("creating a temp data dir (set TMPDIR to choose where)")?;
        return Ok(DataDir::Temp(t));
    };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(bad(
            "--db",
            format!(
                "{} is not a directory; plumb only writes into directories",
                dir.display()
            ),
        )),
        Ok(_) => {
            let empty = std::fs::read_dir(dir)
                .with_context(|| format!("--db: reading {}", dir.display()))?
                .next()
                .is_none();
            if a.use_existing_db {
                if !dir.join("CURRENT").exists() {
                    return Err(bad(
                        "--use-existing-db",
                        format!(
                            "{} holds no RocksDB database (no CURRENT file)",
                            dir.display()
                        ),
                    ));
                }
            } else if !empty && !a.force {
                return Err(bad(
                    "--db",
                    format!(
                        "{} is not empty; plumb never writes into a non-empty directory. \
                         Use --use-existing-db to run on the database in it, --force to write anyway, \
                         or an empty directory",
                        dir.display()
                    ),
                ));
            }
            Ok(DataDir::Given(dir.clone()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if a.use_existing_db {
                return Err(bad(
                    "--use-existing-db",
                    format!("{} does not exist", dir.display()),
                ));
            }
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--db: creating {}", dir.display()))?;
            Ok(DataDir::Given(dir.clone()))
        }
        Err(e) => Err(bad("--db", format!("{}: {e}", dir.display()))),
    }
}

#[cfg_attr(not(feature = "rocksdb"), allow(unused_variables))]
fn open_target(a: &KvArgs, p: &Plan, dir: &DataDir) -> anyhow::Result<Box<dyn Target>> {
    Ok(match a.engine.as_str() {
        "null" => Box::new(plumb_targets::NullTarget),
        "memory" => Box::new(plumb_targets::MemoryTarget::new()),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => {
            let path = dir.path().expect("rocksdb has a data dir");
            Box::new(
                RocksTarget::open(path, p.rocks.clone())
                    .with_context(|| format!("opening RocksDB in {}", path.display()))?,
            )
        }
        other => bail!("--engine {other:?}: not built into this plumb"),
    })
}

fn effective_options(a: &KvArgs, p: &Plan, target: &dyn Target) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.to_string(), v);
    };
    put("engine", a.engine.clone());
    put("num", a.num.to_string());
    put("key_size", a.key_size.to_string());
    put("value_size", a.value_size.to_string());
    put("threads", a.threads.to_string());
    put(
        "duration",
        a.duration
            .map(|d| d.to_string())
            .unwrap_or_else(|| format!("{QUICK_SECS} (non-fill steps without --ops)")),
    );
    put(
        "ops",
        a.ops
            .map(|d| d.to_string())
            .unwrap_or_else(|| "none".into()),
    );
    put("warmup", a.warmup.to_string());
    put("seed", p.seed.to_string());
    put(
        "benchmarks",
        p.steps
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(","),
    );
    put("seek_nexts", a.seek_nexts.to_string());
    put("batch_size", a.batch_size.to_string());
    put("write_rate_mb", a.write_rate_mb.to_string());
    put("distribution", p.distribution.to_string());
    put("use_existing_db", a.use_existing_db.to_string());
    for (k, v) in target.options() {
        o.insert(format!("{}.{k}", target.name()), v);
    }
    o
}

pub fn run(a: KvArgs) -> anyhow::Result<ExitCode> {
    let p = plan(&a)?;
    let mut store = Store::open(&a.store.path())?;
    // Hardware counters first, so the engine's threads (started at open) inherit them.
    let hw = plumb_probes::perf::HwCounterGroup::open();
    let first = prepare_dir(&a)?;
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    let mut dirs = Some(first);
    let mut group: Option<i64> = None;
    let mut worst = "ok";
    let mut docs = Vec::new();
    for rep in 0..a.repeat {
        let base = match dirs.take() {
            Some(d) => d,
            None => prepare_dir_again(&a)?,
        };
        let dir = repeat_dir(&a, base, rep)?;
        let seed = p.seed.wrapping_add(u64::from(rep));
        let (run_id, status, stored) = run_once(&a, &p, seed, &mut store, &hw, dir, group, rep)?;
        if a.repeat > 1 {
            group.get_or_insert(run_id);
        }
        if a.json {
            docs.push(plumb_report::json::run(&stored));
        } else {
            output::print(&stored, false, &store)?;
        }
        if status != "ok" {
            worst = if worst == "failed" { worst } else { status };
        }
        if status == "interrupted" || INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
    }
    if a.json {
        let doc = if docs.len() == 1 {
            docs.remove(0)
        } else {
            serde_json::Value::Array(docs)
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    }
    if let Some(g) = group {
        eprintln!(
            "plumb: group g{g} holds the repeats; compare them with `plumb compare g{g} OTHER`"
        );
    }
    Ok(match worst {
        "ok" => ExitCode::SUCCESS,
        "interrupted" => ExitCode::from(130),
        _ => ExitCode::from(1),
    })
}

/// Later repeats under a given --db reuse the (now non-empty) parent for subdirs.
fn prepare_dir_again(a: &KvArgs) -> anyhow::Result<DataDir> {
    Ok(match &a.db {
        None if a.engine == "rocksdb" => DataDir::Temp(
            tempfile::Builder::new()
                .prefix("plumb-kv-")
                .tempdir()
                .context("creating a temp data dir (set TMPDIR to choose where)")?,
        ),
        None => DataDir::None,
        Some(d) => DataDir::Given(d.clone()),
    })
}

/// One pass of the sequence: a run in the store. Returns its id, status and record.
#[allow(clippy::too_many_arguments)]
fn run_once(
    a: &KvArgs,
    p: &Plan,
    seed: u64,
    store: &mut Store,
    hw: &Result<plumb_probes::perf::HwCounterGroup, String>,
    dir: DataDir,
    group: Option<i64>,
    rep: u32,
) -> anyhow::Result<(i64, &'static str, plumb_store::StoredRun)> {
    let target = open_target(a, p, &dir)?;
    let disk = dir
        .path()
        .and_then(|d| plumb_probes::diskstats::DeviceStats::for_path(d).ok());
    let host = plumb_host::snapshot(&plumb_host::Options {
        data_bytes: Some(a.num * (a.key_size + a.value_size) as u64),
        ..plumb_host::Options::for_dir(
            dir.path()
                .map(Path::to_path_buf)
                .unwrap_or_else(std::env::temp_dir),
        )
    });
    let mut options = effective_options(a, p, target.as_ref());
    options.insert("seed".into(), seed.to_string());
    let run_id = store.begin_run(&NewRun {
        tag: a.tag.clone(),
        command: command_line(),
        workload: p.workload_name.clone(),
        engine: target.name().to_string(),
        engine_version: target.version(),
        plumb_version: env!("CARGO_PKG_VERSION").to_string(),
        git_hash: Some(env!("PLUMB_GIT_HASH").to_string()).filter(|h| !h.is_empty()),
        options,
        seed,
        started_at: now(),
        data_dir: dir.path().map(|d| d.display().to_string()),
        device: disk.as_ref().map(|d| d.name().to_string()),
        host: Some(serde_json::to_value(&host)?),
        group_id: None,
        repeat_index: None,
    })?;
    if a.repeat > 1 {
        // A group is named after its first run.
        store.set_group(run_id, group.unwrap_or(run_id), i64::from(rep))?;
    }
    let tty = std::io::stdout().is_terminal() && !a.json;
    if tty {
        eprintln!(
            "plumb run {run_id}: {} {} in {} (seed {seed}, store {})",
            target.name(),
            target.version(),
            dir.path()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "memory".into()),
            store.path().display()
        );
    }
    let bar = Bar::new();
    let progress: &dyn Progress = if tty { &bar } else { &NoProgress };
    let ctx = RunContext {
        target: target.as_ref(),
        disk: disk.as_ref(),
        hw: hw.as_ref().map_err(|e| e.clone()),
        interrupt: &INTERRUPTED,
        progress,
    };
    let mut keys = if a.use_existing_db {
        KeySpace::unknown(a.num)
    } else {
        KeySpace::empty()
    };
    let mut run_status = "ok";
    for (i, sp) in p.steps.iter().enumerate() {
        let cfg = StepConfig {
            index: i,
            plan: sp.clone(),
            num: a.num,
            key_size: a.key_size,
            value_size: a.value_size,
            threads: a.threads,
            duration: match (a.duration, a.ops) {
                _ if sp.kind.full_pass() => None,
                (Some(d), _) => Some(Duration::from_secs_f64(d)),
                (None, None) if !sp.kind.is_fill() && sp.ops_fraction_of_num.is_none() => {
                    Some(Duration::from_secs(QUICK_SECS))
                }
                _ => None,
            },
            ops: a.ops,
            warmup: Duration::from_secs_f64(a.warmup),
            seed,
            seek_nexts: a.seek_nexts,
            batch_size: a.batch_size,
            write_rate_mb: a.write_rate_mb,
            distribution: p.distribution,
        };
        let out = run_step(&ctx, &cfg, &mut keys);
        store.add_step(
            run_id,
            &StepRecord {
                seq: i as i64,
                name: sp.name.clone(),
                kind: sp.kind.name().to_string(),
                status: out.status.as_str().to_string(),
                error: out.error.clone(),
                started_at: rfc3339(out.started),
                ended_at: rfc3339(out.ended),
                config: serde_json::to_value(&cfg)?,
                summary: out.summary.clone(),
            },
            &out.intervals,
        )?;
        match out.status {
            StepStatus::Ok => {}
            StepStatus::Interrupted => {
                run_status = "interrupted";
                break;
            }
            StepStatus::Failed => {
                run_status = "failed";
                if out
                    .error
                    .as_deref()
                    .is_some_and(|e| !e.starts_with("verification"))
                {
                    break; // an engine error: later steps would measure a broken state
                }
            }
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            run_status = "interrupted";
            break;
        }
    }
    store.finish_run(run_id, run_status, &now())?;
    let stored = store.run(run_id)?;
    drop(target);
    if let DataDir::Temp(t) = dir {
        if a.keep {
            let kept = t.keep();
            eprintln!("plumb: kept data dir {}", kept.display());
        }
    }
    match run_status {
        "interrupted" => eprintln!("plumb: run {run_id} interrupted; finished steps are stored"),
        "failed" => {
            for (s, _) in &stored.steps {
                if let Some(e) = &s.error {
                    eprintln!("plumb: run {run_id} step {} failed: {e}", s.name);
                }
            }
        }
        _ => {}
    }
    Ok((run_id, run_status, stored))
}
