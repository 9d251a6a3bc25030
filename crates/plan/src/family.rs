//! What a run measures and what it does, for every family plumb runs: a subject (an
//! embedded engine, or a database server plumb starts or reaches by URL) and a workload
//! of one family (db_bench's key-value steps, the sysbench microbenchmarks, the insert
//! benchmark, the probes, the durability trials). Each family's knobs are declared
//! once, with their defaults and help: `plumb sql` and `plumb ib` flatten them into
//! their flags, a suite reads them from its `[sql]` and `[ib]` tables, and the stored
//! plan holds them (the durability family's are in [`crate::durability`]).

use crate::durability::DurabilityWork;
use crate::model::ParamError;
use plumb_targets::EngineSpec;
use plumb_workloads::ibench::IbStepPlan;
use plumb_workloads::sql::SqlStepPlan;
use plumb_workloads::{Arrivals, Distribution, IbKind, SqlGroup};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a run measures. Serialised as `"engine": {…}` or `"server": {…}` beside the
/// target's name, so plans stored before servers joined the plan read as they were and
/// keep their hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Subject {
    /// An embedded engine opened in the run's own process.
    #[serde(rename = "engine")]
    Engine(EngineSpec),
    /// A database server.
    #[serde(rename = "server")]
    Server(ServerSpec),
    /// The host itself: what the probes measure (memory, CPU, the disk under the
    /// suite's `dir`).
    #[serde(rename = "host")]
    Host(HostSpec),
}

/// The host as a target: the probes' subject. Its disk probe's file goes in `dir` (a
/// directory plumb owns on the filesystem to measure), else in the run's data root.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Where the disk probe makes its file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
}

/// A database server: started by plumb from its real binaries (a fresh data directory
/// per run), or someone's running server given by URL. Plain data: `plumb-servers` turns it
/// into a running server; the plan only checks what it can without one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// `postgres[@MAJOR]`, `mariadb[@VERSION]` or `mysql` (with `basedir`); for a URL,
    /// its protocol (`postgres` or `mariadb`).
    pub server: String,
    /// The storage engine of a MySQL-protocol server: `innodb` or `rocksdb` (MyRocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// An install to start instead of the system's (its bin/ holds postgres or mysqld).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basedir: Option<PathBuf>,
    /// A config template of the user's instead of plumb's (same `{placeholders}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    /// Where PostgreSQL's write-ahead log goes (`initdb --waldir`), on a device of its
    /// own as the seeds' servers keep it: commits then wait on the log's device alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waldir: Option<PathBuf>,
    /// Buffer pool / shared_buffers / block cache, MiB.
    #[serde(default = "default_cache_mb")]
    pub cache_mb: u64,
    /// PostgreSQL's memory sized from the RAM the server has (the host's, or the
    /// target's memory limit), as the PostgreSQL deck and pgtune size it, instead of
    /// from `cache_mb` (seed 004's "Simple PostgreSQL Configuration").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ram_sized: bool,
    /// A running server instead, as `postgres://USER@HOST[:PORT]/DB` or `mysql://…`:
    /// never with its password (that comes from the environment when the run starts:
    /// PGPASSWORD, MYSQL_PWD, or PLUMB_URL_PASSWORD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The default cache size of a managed server, MiB.
pub const DEFAULT_CACHE_MB: u64 = 1024;

fn default_cache_mb() -> u64 {
    DEFAULT_CACHE_MB
}

/// The server names a plan accepts (checked again, with the install, when it starts).
pub const SERVER_NAMES: &[&str] = &["postgres", "postgresql", "pg", "mariadb", "mysql"];

impl ServerSpec {
    /// The server's name without a version: `postgres`, `mariadb`, `mysql`.
    pub fn flavor(&self) -> &str {
        self.server.split('@').next().unwrap_or("")
    }

    /// Whether it speaks PostgreSQL's protocol.
    pub fn is_postgres(&self) -> bool {
        matches!(self.flavor(), "postgres" | "postgresql" | "pg")
    }

    /// A label for plans and progress lines: `postgres@16`, `mariadb/rocksdb`, a URL.
    pub fn label(&self) -> String {
        match (&self.url, &self.engine) {
            (Some(u), _) => u.clone(),
            (None, Some(e)) => format!("{}/{e}", self.server),
            (None, None) => self.server.clone(),
        }
    }

    /// Refuses what cannot be a server, naming the field.
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |key, message: String| Err(ParamError { key, message });
        let (name, version) = match self.server.split_once('@') {
            Some((n, v)) => (n, Some(v)),
            None => (self.server.as_str(), None),
        };
        if !SERVER_NAMES.contains(&name) {
            return bad(
                "server",
                format!(
                    "{:?}: unknown server; use postgres[@MAJOR], \
                     mariadb[@VERSION] or mysql (with basedir)",
                    self.server
                ),
            );
        }
        if version == Some("") {
            return bad(
                "server",
                "a version after @ is empty; write e.g. postgres@16".into(),
            );
        }
        match (self.is_postgres(), self.engine.as_deref()) {
            (true, Some(e)) => {
                return bad(
                    "engine",
                    format!("{e:?}: PostgreSQL has one storage engine (heap); drop `engine`"),
                )
            }
            (false, Some(e)) if !matches!(e, "innodb" | "rocksdb" | "myrocks") => {
                return bad(
                    "engine",
                    format!("{e:?} is unknown; use innodb or rocksdb (MyRocks)"),
                )
            }
            _ => {}
        }
        if name == "mysql" && self.basedir.is_none() && self.url.is_none() {
            return bad(
                "basedir",
                "mysql: no package ships MySQL here; give `basedir` (a MySQL install with \
                 bin/mysqld), or use mariadb"
                    .into(),
            );
        }
        if self.cache_mb == 0 {
            return bad("cache_mb", "must be at least 1 MiB".into());
        }
        if self.ram_sized && (self.url.is_some() || !self.is_postgres()) {
            return bad(
                "ram_sized",
                "sizes a PostgreSQL that plumb starts (shared_buffers, effective_cache_size, \
                 work_mem …); a MariaDB buffer pool is `cache_mb`, a running server's \
                 memory its owner's: drop `ram_sized`"
                    .into(),
            );
        }
        if let Some(w) = &self.waldir {
            if self.url.is_some() {
                return bad(
                    "waldir",
                    "a running server's log is where its owner put it; drop `waldir`".into(),
                );
            }
            if !self.is_postgres() {
                return bad(
                    "waldir",
                    "is PostgreSQL's (initdb --waldir); MariaDB's redo log goes where \
                     innodb_log_group_home_dir says: set it in a `config` template"
                        .into(),
                );
            }
            if !w.is_absolute() {
                return bad(
                    "waldir",
                    format!(
                        "{}: give an absolute path (a directory on the log's device)",
                        w.display()
                    ),
                );
            }
        }
        if let Some(u) = &self.url {
            let scheme_ok = ["postgres://", "postgresql://", "mysql://", "mariadb://"]
                .iter()
                .any(|s| u.starts_with(s));
            if !scheme_ok {
                return bad(
                    "url",
                    format!("{u:?}: give postgres://USER@HOST[:PORT]/DB or mysql://…"),
                );
            }
            if url_has_password(u) {
                return bad(
                    "url",
                    "a suite or stored plan never holds a password: drop it from the URL and \
                     set PGPASSWORD, MYSQL_PWD or PLUMB_URL_PASSWORD when running"
                        .into(),
                );
            }
        }
        Ok(())
    }
}

/// A database URL without its password, and the password (still URL-encoded) if it
/// had one: the plan keeps the first, only the running process the second.
pub fn strip_password(u: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = u.split_once("://") else {
        return (u.to_string(), None);
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(end);
    let Some((userinfo, host)) = auth.rsplit_once('@') else {
        return (u.to_string(), None);
    };
    match userinfo.split_once(':') {
        Some((user, pw)) => (
            format!("{scheme}://{user}@{host}{tail}"),
            Some(pw.to_string()),
        ),
        None => (u.to_string(), None),
    }
}

/// A URL with its password replaced (`***`), for error messages about a URL that did
/// not parse and for the command line a run records.
pub fn redact(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "(unparsable URL)".into(),
    }
}

/// Whether a database URL carries a password (`user:secret@host`).
pub fn url_has_password(u: &str) -> bool {
    let rest = u.split_once("://").map(|(_, r)| r).unwrap_or(u);
    let auth = rest.split('/').next().unwrap_or("");
    auth.rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'))
}

/// What a run does: one family's steps and knobs. Serialised beside the workload's
/// name as `"steps": […]` (db_bench's steps, as stored before the other families
/// joined), `"sql": {…}`, `"ib": {…}`, `"probe": {…}` or `"durability": {…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Family {
    /// db_bench's key-value steps on an embedded engine, with their knobs.
    #[serde(rename = "steps")]
    Kv(crate::model::KvWork),
    /// The sysbench microbenchmarks on a server.
    #[serde(rename = "sql")]
    Sql(SqlWork),
    /// The insert benchmark on a server or an embedded engine.
    #[serde(rename = "ib")]
    Ib(IbWork),
    /// The hardware probes on the host: `mem`, `cpu`, `disk` or `all`.
    #[serde(rename = "probe")]
    Probe(ProbeWork),
    /// Writers killed (or power-cut) again and again on an embedded engine that keeps
    /// files or a server plumb starts, every acknowledged write checked after each.
    #[serde(rename = "durability")]
    Durability(DurabilityWork),
}

/// The probes a run measures and their knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeWork {
    /// `mem`, `cpu`, `disk` or `all`.
    pub which: String,
    /// Their knobs.
    pub params: ProbeParams,
}

/// The probes' names.
pub const PROBE_NAMES: &[&str] = &["mem", "cpu", "disk", "all"];

/// The hardware probes' knobs (`plumb probe`'s flags, a suite's `[probe]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct ProbeParams {
    /// Finish in about a minute: fewer passes, 1 s steps, a 256 MiB file, a reduced grid;
    /// figures are indicative.
    #[arg(long)]
    pub quick: bool,
    /// Disk probe file size, e.g. 8G [default: 2 × RAM (MemTotal), at least 1G, capped by
    /// the directory's free space less what is kept free (10% of the filesystem, 1 to
    /// 4 GiB), which the probe's notes then say; refused below 1G of room; 256M with
    /// --quick].
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,
    /// Job counts of the random-IO grid [default: 1,2,4; 1 with --quick].
    #[arg(long, value_name = "LIST")]
    pub jobs: Option<String>,
    /// Queue depths of the random-IO grid [default: 1,4,16,32; 1,32 with --quick].
    #[arg(long, value_name = "LIST")]
    pub depths: Option<String>,
    /// Seconds per disk and CPU step [default: 5; 1 with --quick].
    #[arg(long, value_name = "SECS")]
    pub secs: Option<f64>,
    /// Disk IO modes: direct, buffered or both.
    #[arg(long, default_value = "both")]
    pub io: String,
    /// Disk patterns, comma-separated: seqwrite,seqread,rewrite,randread,randwrite,commit,
    /// zcav. rewrite is bonnie++'s: each chunk read, dirtied and written back in place,
    /// front to back, at the sequential sizes [default: all but rewrite and zcav;
    /// seqread,randread with --device].
    #[arg(long, value_name = "LIST")]
    pub tests: Option<String>,
    /// Disk request sizes: below 128k random, from 128k sequential, e.g. 4k,8k,16k,1m
    /// [default: 4k,8k,16k random (4k,8k with --quick) and 1m sequential]. Multiples of
    /// 512 bytes; with O_DIRECT, of the device's logical block size.
    #[arg(long, value_name = "LIST")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bs: Option<String>,
    /// Sequential request sizes of any size, e.g. 8k,1m (the deck's dd bs=8k), added to
    /// --bs's sequential ones; they replace the default 1m [default: 1m].
    #[arg(long, value_name = "LIST")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_bs: Option<String>,
    /// Probe this block device instead of a file: reads only (O_RDONLY, O_DIRECT),
    /// sequential and random over the whole device; it is never opened for writing.
    #[arg(long, value_name = "DEV")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<std::path::PathBuf>,
    /// Also scan read speed by position (bonnie++'s zcav): one pass of sequential reads
    /// over each of 16 equal slices (8 with --quick), stored as steps zcav.000, zcav.001…
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub zcav: bool,
    /// A TOML file of the device's rated figures (datasheet IOPS, MB/s, class, rpm,
    /// power_loss_protection), set beside the measured ones after a disk probe.
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rated: Option<std::path::PathBuf>,
    /// Before the disk probe measures, write its file with 4 KiB random writes for SECS
    /// seconds after the sequential fill (O_DIRECT where the filesystem allows), so an
    /// SSD's flash translation layer has no fresh blocks left and the figures are its
    /// steady state rather than fresh-out-of-box (the deck: "trust no one"; SNIA's
    /// preconditioning). Files only: a block device is never written.
    #[arg(long, value_name = "SECS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precondition: Option<f64>,
    /// A rated figure as a flag, over --rated's, repeatable: device.class=hdd,
    /// device.rpm=7200, device.power_loss_protection=false, rated.seqread_mbps=200…
    #[arg(long, value_name = "TABLE.KEY=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rated_set: Vec<String>,
}

impl Default for ProbeParams {
    /// The defaults declared in the attributes above.
    fn default() -> Self {
        plumb_targets::options::defaults::<ProbeParams>()
    }
}

impl Family {
    /// The family's name, as suites and progress lines say it.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Kv(_) => "kv",
            Family::Sql(_) => "sql",
            Family::Ib(_) => "ib",
            Family::Probe(_) => "probe",
            Family::Durability(_) => "durability",
        }
    }

    /// The steps' names, in order.
    pub fn step_names(&self) -> Vec<String> {
        let names = |v: Vec<&String>| v.into_iter().cloned().collect();
        match self {
            Family::Kv(w) => names(w.steps.iter().map(|s| &s.name).collect()),
            Family::Sql(w) => names(w.steps.iter().map(|s| &s.name).collect()),
            Family::Ib(w) => names(w.steps.iter().map(|s| &s.name).collect()),
            Family::Probe(w) => vec![w.which.clone()],
            Family::Durability(w) => w.step_names(),
        }
    }

    /// Whether it can run on `subject`: key-value steps on engines, microbenchmarks on
    /// servers, the insert benchmark on both, the probes on the host, the durability
    /// trials on engines that keep files and on servers plumb starts (it crashes them).
    pub fn runs_on(&self, subject: &Subject) -> bool {
        match (self, subject) {
            (Family::Durability(_), Subject::Engine(e)) => {
                crate::durability::engine_keeps_writes(e)
            }
            (Family::Durability(_), Subject::Server(s)) => s.url.is_none(),
            _ => matches!(
                (self, subject),
                (Family::Kv(_), Subject::Engine(_))
                    | (Family::Sql(_), Subject::Server(_))
                    | (Family::Ib(_), Subject::Engine(_) | Subject::Server(_))
                    | (Family::Probe(_), Subject::Host(_))
            ),
        }
    }

    /// Whether a suite's size and thread sweeps apply: the probes measure the host and
    /// the durability trials count kills, so they run once per repeat.
    pub fn swept(&self) -> bool {
        !matches!(self, Family::Probe(_) | Family::Durability(_))
    }

    /// Sets the client threads (sql) or clients (ib) of a thread sweep; kv keeps its
    /// threads in the run's params, and the probes are not swept.
    pub fn set_concurrency(&mut self, n: usize) {
        match self {
            Family::Kv(_) | Family::Probe(_) | Family::Durability(_) => {}
            Family::Sql(w) => w.params.threads = n,
            Family::Ib(w) => w.params.clients = n as u32,
        }
    }

    /// Sets the data size of a size sweep: rows per table (sql; pgbench's scale, TPC-C's
    /// warehouses or YCSB's recordcount for their steps), rows loaded (ib); kv
    /// keeps its keys in the run's params, and the probes are not swept.
    pub fn set_size(&mut self, n: u64) {
        match self {
            Family::Kv(_) | Family::Probe(_) | Family::Durability(_) => {}
            // The size knob of the tables the steps run on.
            Family::Sql(w) => match w.steps.first().map(|s| s.kind.tables()) {
                Some(plumb_workloads::SqlTables::Pgbench) => w.params.scale = n as u32,
                Some(plumb_workloads::SqlTables::Tpcc) => w.params.warehouses = n as u32,
                Some(plumb_workloads::SqlTables::Ycsb) => w.params.recordcount = n,
                _ => w.params.table_size = n,
            },
            Family::Ib(w) => w.params.rows = n,
        }
    }
}

/// The sysbench microbenchmarks of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqlWork {
    /// The microbenchmarks in order (`.pre`/`.post` names kept).
    pub steps: Vec<SqlStepPlan>,
    /// Their knobs.
    pub params: SqlParams,
}

/// The insert benchmark's steps and knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IbWork {
    /// l.i0, l.x, l.i1, l.i2, reduce-debt, qrN, qpN in order.
    pub steps: Vec<IbStepPlan>,
    /// Their knobs.
    pub params: IbParams,
}

/// The sysbench microbenchmarks' knobs, with sysbench's names (underscore spellings
/// accepted on the command line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct SqlParams {
    /// Tables sbtest1..N.
    #[arg(long, default_value_t = 1)]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, alias = "table_size", default_value_t = 100_000)]
    pub table_size: u64,
    /// Rows per range query (sysbench's --range_size).
    #[arg(long, alias = "range_size", default_value_t = 100)]
    pub range_size: u64,
    /// Client threads, one connection each.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Seconds measured per step (the load runs to its end).
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Seconds run unmeasured before each step's window, on the same connections.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Seconds per read microbenchmark instead of --duration (seed 002: 330).
    #[arg(long, value_name = "SECS")]
    pub read_duration: Option<f64>,
    /// Seconds per write microbenchmark instead of --duration (seed 002: 630).
    #[arg(long, value_name = "SECS")]
    pub write_duration: Option<f64>,
    /// Keys: uniform or zipfian[:THETA] (update-zipf is always zipfian).
    #[arg(long, default_value = "uniform")]
    pub distribution: String,
    /// Seconds of single steps, by microbenchmark name (a suite's
    /// `[sql.step_duration]`); wins over the read/write durations.
    #[arg(skip)]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub step_duration: BTreeMap<String, f64>,
    /// Seconds of warm-up of single steps, by name (`[sql.step_warmup]`).
    #[arg(skip)]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub step_warmup: BTreeMap<String, f64>,
    /// Open loop: transactions (events) per second offered to each step but the loads,
    /// in total across the clients (sysbench's --rate), each timed from its intended
    /// start with its service time stored beside; without it clients run closed-loop.
    #[arg(long, value_name = "TPS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Open loop at a rate that changes over time (transactions per second), from each
    /// step's measured start, as `plumb kv --rate-profile`, e.g.
    /// `ramp:100..2k/60s,hold:2k/60s,sine:mean=1k,amp=500,period=30s`.
    #[arg(long, value_name = "PHASES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_profile: Option<String>,
    /// Closed-loop clients whose number changes over time, from each step's measured
    /// start (the loads run --threads): phases as --rate-profile writes them, the value
    /// a count of clients, e.g. `hold:1/20s,ramp:1..16/160s,hold:4/20s`. The step
    /// connects the profile's peak; client i runs transactions while more than i are
    /// counted and idles, connected, otherwise. Each interval stores how many ran; a
    /// timed profile sets the step's length (over --duration).
    #[arg(long, value_name = "PHASES")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_profile: Option<String>,
    /// How open-loop arrivals are spaced: constant or poisson.
    #[arg(long, default_value = "constant")]
    #[serde(skip_serializing_if = "crate::model::is_constant")]
    pub arrivals: Arrivals,
    /// Find the highest rate at which each step but the loads keeps this bound on
    /// response time, e.g. p99:5ms (see `plumb kv --help`): probes stored as
    /// STEP@RATE/s, the result as STEP@max.
    #[arg(long, value_name = "pQ:BOUND")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_search: Option<String>,
    /// Faults inside each measured step but the loads, on a server plumb started:
    /// `at=30s,kind=kill`, `kind=restart` or `kind=sigstop:5s`, or every so often
    /// (`every=20s,kind=restart,count=3`); repeatable. Clients reconnect and retry
    /// through them; each fault's outage, latency in its window against steady state,
    /// recovery and the server's logged recovery phases are stored with the step. Hold
    /// the load at a --rate, so a closed loop does not hide the dip.
    #[arg(long = "fault", value_name = "SPEC")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fault: Vec<String>,
    /// During faults, an op whose service time exceeds this counts against the outage
    /// (default 1s): a hung server fails nothing, it only makes ops slow.
    #[arg(long, value_name = "DUR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault_timeout: Option<String>,
    /// Count the server's perf events one group at a time, SECS seconds each, in turn
    /// over each step's window (seed 002: groups of 10 s after a 30 s warm-up): each
    /// event exact over its slices and divided by their own queries, instead of all
    /// multiplexed over the window; 0 multiplexes them.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    #[serde(skip_serializing_if = "is_zero")]
    pub perf_groups: u32,
    /// Samples per second of what the step's sessions wait on (PostgreSQL's
    /// pg_stat_activity, MariaDB's performance_schema), taken on a connection of its
    /// own over each step's window and stored as the step's wait profile; 0 samples
    /// none. Ten a second give two clients over a 30-second step 600 looks, a share
    /// within a few points, at no cost measured beyond the noise on point selects. The
    /// server's counters are read every second either way.
    #[arg(long, value_name = "HZ", default_value_t = 10.0)]
    #[serde(skip_serializing_if = "is_ten")]
    pub wait_hz: f64,
    /// pgbench's scale factor (pgbench-load): 100000 accounts per unit; the other
    /// pgbench steps read it from the tables, as pgbench does.
    #[arg(long, default_value_t = 1)]
    #[serde(skip_serializing_if = "is_one")]
    pub scale: u32,
    /// TPC-C warehouses (tpcc-load, tproc-c): about 100 MB each.
    #[arg(long, default_value_t = 1)]
    #[serde(skip_serializing_if = "is_one")]
    pub warehouses: u32,
    /// TPC-C with the spec's keying and think times (clause 5.2.5); without it
    /// tproc-c runs none, as HammerDB's TPROC-C does.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spec_timing: bool,
    /// YCSB's recordcount (ycsb-load and ycsb-a … ycsb-f; YCSB's workload files say 1000).
    #[arg(long, default_value_t = 1000)]
    #[serde(skip_serializing_if = "is_thousand")]
    pub recordcount: u64,
    /// A YCSB property over each workload's preset, NAME=VALUE, repeatable (YCSB's -p):
    /// e.g. requestdistribution=uniform, fieldcount=1, maxscanlength=100 (a suite:
    /// `ycsb = ["requestdistribution=uniform"]`).
    #[arg(long = "ycsb", value_name = "NAME=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ycsb: Vec<String>,
    /// A pgbench script file for the `script` step, FILE[@WEIGHT], repeatable (pgbench's
    /// -f): SQL ended by ;, \set with pgbench's expressions and random functions,
    /// \sleep, \if/\elif/\else/\endif, \gset, \aset, :variables. With several
    /// scripts (and --builtin) each transaction picks one by weight. The text is stored
    /// with the run, so `plumb rerun` runs it even if the file changes.
    #[arg(long = "script", short = 'f', value_name = "FILE[@WEIGHT]")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub script: Vec<String>,
    /// One of pgbench's built-in scripts in the `script` step's mix, NAME[@WEIGHT]
    /// (pgbench's -b): tpcb-like, simple-update, select-only.
    #[arg(long = "builtin", short = 'b', value_name = "NAME[@WEIGHT]")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub builtin: Vec<String>,
    /// A script variable, NAME=VALUE, repeatable (pgbench's -D).
    #[arg(long = "define", short = 'D', value_name = "NAME=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub define: Vec<String>,
    /// How the `script` step sends SQL (pgbench's -M): simple (text, pgbench's
    /// default), extended (unnamed statements, PostgreSQL only) or prepared (once per
    /// connection).
    #[arg(
        long = "query-mode",
        short = 'M',
        value_name = "MODE",
        default_value = "simple"
    )]
    #[serde(skip_serializing_if = "is_simple")]
    pub query_mode: String,
    /// The scripts' texts as read when the run was planned (from --script and
    /// --builtin): the run keeps what it ran, and a rerun runs the same text.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptSource>,
    /// A sysbench 1.0 Lua script for the `lua` step (its `prepare` command is the
    /// `lua-prepare` step), run unchanged as `sysbench SCRIPT run` runs it: the
    /// scripts Debian's sysbench installs in /usr/share/sysbench (oltp_read_write.lua,
    /// …) or your own; the modules it requires are read beside it and stored with it.
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lua: Option<String>,
    /// An option of the Lua script or of sysbench, NAME=VALUE, repeatable: what
    /// sysbench takes as --NAME=VALUE, e.g. --lua-opt table_size=100000 --lua-opt
    /// rand-type=uniform (a suite: `lua_opt = ["tables=4"]`).
    #[arg(long = "lua-opt", value_name = "NAME=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lua_opt: Vec<String>,
    /// The Lua script's text and the modules it requires, as read when the run was
    /// planned (the script first): a rerun runs the same text.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lua_sources: Vec<ScriptSource>,
}

/// Where sysbench looks for the modules a script requires after the script's own
/// directory: its package's data directory (Debian's, and a source install's).
pub const SYSBENCH_LUA_DIRS: [&str; 2] = ["/usr/share/sysbench", "/usr/local/share/sysbench"];

impl SqlParams {
    /// The faults of each measured step (`--fault`, `--fault-timeout`); `None` without.
    pub fn faults(&self) -> Result<Option<plumb_workloads::FaultPlan>, String> {
        plumb_workloads::FaultPlan::parse(&self.fault, self.fault_timeout.as_deref())
    }

    /// Reads `--lua` (relative to `base` when not absolute) and the modules it requires
    /// by name (`require("oltp_common")`, found beside it or in sysbench's data
    /// directory, as sysbench finds them), into `lua_sources`, the script first.
    pub fn read_lua(&mut self, base: Option<&std::path::Path>) -> Result<(), ParamError> {
        let Some(file) = self.lua.clone() else {
            self.lua_sources.clear();
            return Ok(());
        };
        let main = ScriptSource::read_file(
            "lua",
            &file,
            1,
            base,
            (
                "Lua script",
                "a sysbench Lua script, e.g. /usr/share/sysbench/oltp_read_write.lua",
            ),
        )?;
        let path = match base {
            Some(b) if std::path::Path::new(&file).is_relative() => b.join(&file),
            _ => std::path::PathBuf::from(&file),
        };
        let mut dirs = vec![path.parent().map(|d| d.to_path_buf()).unwrap_or_default()];
        dirs.extend(SYSBENCH_LUA_DIRS.iter().map(std::path::PathBuf::from));
        let mut sources = vec![main];
        let mut i = 0;
        while i < sources.len() {
            for module in required_modules(&sources[i].text) {
                if sources.iter().skip(1).any(|s| s.name == module) {
                    continue;
                }
                let rel = format!("{}.lua", module.replace('.', "/"));
                let Some(found) = dirs.iter().map(|d| d.join(&rel)).find(|p| p.is_file()) else {
                    // sysbench's own modules (ffi, …) and ones the script guards itself.
                    continue;
                };
                let text = std::fs::read_to_string(&found).map_err(|e| ParamError {
                    key: "lua",
                    message: format!(
                        "{}: cannot read the module {module:?} that {} requires: {e}",
                        found.display(),
                        sources[i].name
                    ),
                })?;
                sources.push(ScriptSource::new(module, 1, text));
            }
            i += 1;
        }
        self.lua_sources = sources;
        Ok(())
    }
}

/// The module names a Lua text requires with a literal name: `require("x")`,
/// `require "x"`, `require 'x'` (comments are not told apart: a module named only in a
/// comment is read and stored too, and never run).
pub fn required_modules(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("require") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "require".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == ':') {
            continue;
        }
        let t = rest.trim_start();
        let t = t.strip_prefix('(').map(str::trim_start).unwrap_or(t);
        let Some(q) = t.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        if let Some(end) = t[1..].find(q) {
            let name = &t[1..1 + end];
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
                && !out.iter().any(|m| m == name)
            {
                out.push(name.to_string());
            }
        }
    }
    out
}

fn is_simple(v: &str) -> bool {
    v == "simple"
}

/// A workload file as a run keeps it: its name, weight in the mix, text and the text's
/// SHA-256, so a stored run says exactly what it ran and `plumb rerun` runs it again
/// even if the file has changed or gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptSource {
    /// The file as given (or `builtin:NAME`).
    pub name: String,
    /// Its weight in the mix.
    pub weight: u32,
    /// Its text.
    pub text: String,
    /// SHA-256 of the text, hex.
    pub sha256: String,
}

impl ScriptSource {
    /// A source with its hash computed.
    pub fn new(name: String, weight: u32, text: String) -> ScriptSource {
        use sha2::Digest;
        let sha256 = sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        ScriptSource {
            name,
            weight,
            text,
            sha256,
        }
    }

    /// Reads `FILE[@WEIGHT]` (relative to `base` when not absolute), naming the file
    /// and what to do when it cannot be read.
    pub fn read(spec: &str, base: Option<&std::path::Path>) -> Result<ScriptSource, ParamError> {
        let (file, weight) = match spec.rsplit_once('@') {
            Some((f, w)) if !f.is_empty() && w.chars().all(|c| c.is_ascii_digit()) => (
                f,
                w.parse().map_err(|_| ParamError {
                    key: "script",
                    message: format!("{spec:?}: the weight after @ must be at most 4294967295"),
                })?,
            ),
            _ => (spec, 1),
        };
        Self::read_file(
            "script",
            file,
            weight,
            base,
            ("script", "a pgbench script file, FILE[@WEIGHT]"),
        )
    }

    /// Reads `file` (relative to `base` when not absolute) as the workload file of the
    /// parameter `key`; an unreadable one names its path, what it is (`what.0`) and
    /// what to give instead (`what.1`).
    pub fn read_file(
        key: &'static str,
        file: &str,
        weight: u32,
        base: Option<&std::path::Path>,
        what: (&str, &str),
    ) -> Result<ScriptSource, ParamError> {
        let path = match base {
            Some(b) if std::path::Path::new(file).is_relative() => b.join(file),
            _ => std::path::PathBuf::from(file),
        };
        let text = std::fs::read_to_string(&path).map_err(|e| ParamError {
            key,
            message: format!(
                "{}: cannot read the {}: {e}; give {}",
                path.display(),
                what.0,
                what.1
            ),
        })?;
        Ok(ScriptSource::new(file.to_string(), weight, text))
    }
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

pub(crate) fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_thousand(v: &u64) -> bool {
    *v == 1000
}

impl SqlParams {
    /// The YCSB properties as (name, value) pairs; a malformed one names itself.
    pub fn ycsb_props(&self) -> Result<Vec<(String, String)>, ParamError> {
        crate::model::ycsb_props(&self.ycsb)
    }
}

impl Default for SqlParams {
    /// The defaults declared in the attributes above.
    fn default() -> Self {
        plumb_targets::options::defaults::<SqlParams>()
    }
}

fn secs_ok(key: &'static str, v: f64, zero_ok: bool) -> Result<(), ParamError> {
    let ok = v.is_finite() && if zero_ok { v >= 0.0 } else { v > 0.0 };
    if ok {
        Ok(())
    } else {
        Err(ParamError {
            key,
            message: format!(
                "{v}: give a number of seconds {}",
                if zero_ok { ">= 0" } else { "> 0" }
            ),
        })
    }
}

impl SqlParams {
    /// Refuses values that cannot run, naming the parameter.
    pub fn validate(&self) -> Result<Distribution, ParamError> {
        let bad = |key, message: String| Err(ParamError { key, message });
        for (key, v) in [
            ("tables", u64::from(self.tables)),
            ("table_size", self.table_size),
            ("range_size", self.range_size),
            ("threads", self.threads as u64),
        ] {
            if v == 0 {
                return bad(key, "must be at least 1".into());
            }
        }
        if self.threads > 1024 {
            return bad("threads", "must be at most 1024".into());
        }
        if self.table_size > i32::MAX as u64 / 2 {
            return bad(
                "table_size",
                format!("ids are INTEGER; use at most {}", i32::MAX / 2),
            );
        }
        secs_ok("duration", self.duration, false)?;
        secs_ok("warmup", self.warmup, true)?;
        wait_hz_ok(self.wait_hz)?;
        if let Some(d) = self.read_duration {
            secs_ok("read_duration", d, false)?;
        }
        if let Some(d) = self.write_duration {
            secs_ok("write_duration", d, false)?;
        }
        for (name, &d) in &self.step_duration {
            secs_ok("step_duration", d, false)?;
            known_sql_step(name, "step_duration")?;
        }
        for (name, &d) in &self.step_warmup {
            secs_ok("step_warmup", d, true)?;
            known_sql_step(name, "step_warmup")?;
        }
        crate::model::pace_of(
            self.rate,
            self.rate_profile.as_deref(),
            self.arrivals,
            self.rate_search.as_deref(),
        )?;
        crate::model::clients_of(
            self.threads_profile.as_deref(),
            self.rate.is_some() || self.rate_profile.is_some() || self.rate_search.is_some(),
        )?;
        if let Some(f) = self.faults().map_err(|message| ParamError {
            key: "fault",
            message,
        })? {
            if self.rate_search.is_some() {
                return bad(
                    "fault",
                    "a rate search's probes are not fault steps: drop --rate-search or --fault"
                        .into(),
                );
            }
            f.schedule(self.duration).map_err(|message| ParamError {
                key: "fault",
                message,
            })?;
        }
        for (key, v) in [
            ("scale", u64::from(self.scale)),
            ("warehouses", u64::from(self.warehouses)),
            ("recordcount", self.recordcount),
        ] {
            if v == 0 {
                return bad(key, "must be at least 1".into());
            }
        }
        crate::model::ycsb_props_ok(&self.ycsb)?;
        let d: Distribution = self.distribution.parse().map_err(|e| ParamError {
            key: "distribution",
            message: format!("{e}"),
        })?;
        if matches!(d, Distribution::HotSet { .. }) {
            return bad("distribution", "use uniform or zipfian[:THETA]".into());
        }
        Ok(d)
    }

    /// The measured seconds of `step`: its own, else its class's, else `duration`.
    pub fn duration_of(&self, step: &SqlStepPlan) -> f64 {
        if let Some(d) = self.step_duration.get(&step.name) {
            return *d;
        }
        if let Some(d) = self.step_duration.get(step.kind.name()) {
            return *d;
        }
        if let Some(s) = self
            .clients_of(step)
            .map(|c| c.secs())
            .filter(|s| s.is_finite())
        {
            return s;
        }
        let class = match step.kind.group() {
            SqlGroup::Load => None,
            SqlGroup::Write => self.write_duration,
            _ => self.read_duration,
        };
        class.unwrap_or(self.duration)
    }

    /// The threads profile of `step`: loads run their --threads throughout.
    pub fn clients_of(&self, step: &SqlStepPlan) -> Option<plumb_workloads::ThreadsProfile> {
        let c = crate::model::clients_of(self.threads_profile.as_deref(), false).ok()??;
        (step.kind.group() != SqlGroup::Load).then_some(c)
    }

    /// The client threads of `step`: a threads profile's peak, or --threads.
    pub fn threads_of(&self, step: &SqlStepPlan) -> usize {
        self.clients_of(step).map_or(self.threads, |c| c.peak())
    }

    /// The warm-up seconds of `step`.
    pub fn warmup_of(&self, step: &SqlStepPlan) -> f64 {
        self.step_warmup
            .get(&step.name)
            .or_else(|| self.step_warmup.get(step.kind.name()))
            .copied()
            .unwrap_or(self.warmup)
    }
}

fn known_sql_step(name: &str, key: &'static str) -> Result<(), ParamError> {
    plumb_workloads::sql::parse_steps(name)
        .map(|_| ())
        .map_err(|e| ParamError {
            key,
            message: format!("{name:?}: {e}"),
        })
}

/// The insert benchmark's knobs, with the published scripts' meanings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct IbParams {
    /// Rows loaded by l.i0.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// Rows inserted by l.i1 (l.i2 inserts a fifth as many, 5 per commit).
    #[arg(long, default_value_t = 200_000)]
    pub inserts: u64,
    /// Clients: each inserts, and in the query steps also queries, on its own
    /// connections.
    #[arg(long, default_value_t = 1)]
    pub clients: u32,
    /// Seconds each query step runs.
    #[arg(long, default_value_t = 60.0)]
    pub duration: f64,
    /// Each insert commit deletes as many of the oldest rows, so the table keeps its
    /// size (l.i1, l.i2 and the query steps).
    #[arg(long)]
    pub delete_per_insert: bool,
    /// Primary keys per point query; LIMIT of a range query.
    #[arg(long, default_value_t = 10)]
    pub rows_per_query: u32,
    /// Open loop for the query steps' query clients: queries per second offered in
    /// total, each timed from its intended start with its service time beside (the
    /// insert benchmark's own queriers run as fast as they can; the inserts are always
    /// paced).
    #[arg(long, value_name = "QPS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_rate: Option<f64>,
    /// Open loop for the query clients at a rate that changes over time, from each
    /// query step's measured start, as `plumb kv --rate-profile` (queries per second).
    #[arg(long, value_name = "PHASES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_rate_profile: Option<String>,
    /// How open-loop query arrivals are spaced: constant or poisson.
    #[arg(long, default_value = "constant")]
    #[serde(skip_serializing_if = "crate::model::is_constant")]
    pub arrivals: Arrivals,
    /// Find the highest query rate at which each query step keeps this bound on
    /// queries' response time, e.g. p99:10ms (see `plumb kv --help`), the inserts paced
    /// as the step says: probes stored as STEP@RATE/s, the result as STEP@max.
    #[arg(long, value_name = "pQ:BOUND")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_search: Option<String>,
    /// Count perf events one group at a time, SECS seconds each, in turn over each
    /// step's window (seed 002's method, as `plumb sql --perf-groups`): a server's
    /// processes, or plumb's own with an embedded engine; 0 counts a server's all at
    /// once, multiplexed, and an embedded engine's not at all.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    #[serde(skip_serializing_if = "is_zero")]
    pub perf_groups: u32,
    /// Samples per second of what a server's sessions wait on (PostgreSQL's
    /// pg_stat_activity, MariaDB's performance_schema), as `plumb sql --wait-hz`: taken
    /// on a connection of its own over each step's window; 0 samples none.
    #[arg(long, value_name = "HZ", default_value_t = 10.0)]
    #[serde(skip_serializing_if = "is_ten")]
    pub wait_hz: f64,
}

impl Default for IbParams {
    /// The defaults declared in the attributes above.
    fn default() -> Self {
        plumb_targets::options::defaults::<IbParams>()
    }
}

/// The wait sampler's default rate (kept out of stored options when unchanged).
fn is_ten(x: &f64) -> bool {
    *x == 10.0
}

/// Refuses a wait sampling rate no sampler can keep.
fn wait_hz_ok(hz: f64) -> Result<(), ParamError> {
    if (0.0..=1000.0).contains(&hz) {
        return Ok(());
    }
    Err(ParamError {
        key: "wait_hz",
        message: format!("{hz} samples per second: give 0 (none) to 1000 (10 is the default)"),
    })
}

impl IbParams {
    /// Refuses values that cannot run, naming the parameter.
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |key, message: String| Err(ParamError { key, message });
        wait_hz_ok(self.wait_hz)?;
        for (key, v) in [
            ("rows", self.rows),
            ("clients", u64::from(self.clients)),
            ("rows_per_query", u64::from(self.rows_per_query)),
        ] {
            if v == 0 {
                return bad(key, "must be at least 1".into());
            }
        }
        if self.rows_per_query > 64 {
            return bad("rows_per_query", "at most 64 keys per point query".into());
        }
        if self.rows > i32::MAX as u64 / 2 {
            return bad("rows", format!("at most {} rows", i32::MAX / 2));
        }
        if self.inserts > i32::MAX as u64 / 4 {
            return bad("inserts", format!("at most {} rows", i32::MAX / 4));
        }
        crate::model::pace_of(
            self.query_rate,
            self.query_rate_profile.as_deref(),
            self.arrivals,
            self.rate_search.as_deref(),
        )
        .map_err(|e| ParamError {
            key: match e.key {
                "rate" => "query_rate",
                "rate_profile" => "query_rate_profile",
                k => k,
            },
            message: e.message.replace("--rate", "--query-rate"),
        })?;
        secs_ok("duration", self.duration, false)
    }

    /// The open-loop load of the query steps' query clients.
    pub fn query_pace(&self) -> Option<plumb_workloads::Pace> {
        crate::model::pace_of(
            self.query_rate,
            self.query_rate_profile.as_deref(),
            self.arrivals,
            None,
        )
        .ok()
        .and_then(|(p, _)| p)
    }

    /// Rows a step writes: the load's, l.i1's, l.i2's (a fifth), none for the others.
    pub fn rows_of(&self, step: &IbStepPlan) -> u64 {
        match (step.kind, step.name.as_str()) {
            (IbKind::Load, _) => self.rows,
            (IbKind::Insert, "l.i2") => (self.inserts / 5).max(1),
            (IbKind::Insert, _) => self.inserts,
            _ => 0,
        }
    }
}

/// Refuses an insert benchmark that does not start with the load (plumb counts the
/// rows it made).
pub fn ib_steps_ok(steps: &[IbStepPlan]) -> Result<(), String> {
    match steps.first() {
        None => Err("no steps given; e.g. l.i0,l.x,qr100".into()),
        Some(s) if s.kind != IbKind::Load => Err(format!(
            "{}: start with l.i0 (it creates and loads the table plumb counts rows of)",
            s.name
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg() -> ServerSpec {
        ServerSpec {
            server: "postgres@16".into(),
            engine: None,
            basedir: None,
            config: None,
            waldir: None,
            cache_mb: 256,
            ram_sized: false,
            url: None,
        }
    }

    #[test]
    fn ram_sizing_is_for_a_postgresql_plumb_starts() {
        let r = |server: &str, url: Option<&str>| {
            ServerSpec {
                server: server.into(),
                ram_sized: true,
                url: url.map(str::to_string),
                ..pg()
            }
            .validate()
        };
        assert!(r("postgres@16", None).is_ok());
        for e in [r("mariadb", None), r("postgres", Some("postgres://u@h/db"))] {
            assert_eq!(e.unwrap_err().key, "ram_sized");
        }
    }

    #[test]
    fn a_wal_directory_is_postgresqls_own_and_absolute() {
        let w = |server: &str, dir: &str, url: Option<&str>| {
            ServerSpec {
                server: server.into(),
                waldir: Some(dir.into()),
                url: url.map(str::to_string),
                ..pg()
            }
            .validate()
        };
        assert!(w("postgres@16", "/wal", None).is_ok());
        let e = w("mariadb", "/wal", None).unwrap_err();
        assert_eq!(e.key, "waldir");
        assert!(
            e.message.contains("innodb_log_group_home_dir"),
            "{}",
            e.message
        );
        let e = w("postgres", "wal", None).unwrap_err();
        assert!(e.message.contains("absolute"), "{}", e.message);
        let e = w("postgres", "/wal", Some("postgres://u@h/db")).unwrap_err();
        assert_eq!(e.key, "waldir");
    }

    #[test]
    fn servers_are_checked_by_field() {
        assert!(pg().validate().is_ok());
        let e = ServerSpec {
            server: "oracle".into(),
            ..pg()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "server");
        let e = ServerSpec {
            engine: Some("rocksdb".into()),
            ..pg()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "engine");
        let e = ServerSpec {
            url: Some("postgres://bench:secret@db1/sbtest".into()),
            ..pg()
        }
        .validate()
        .unwrap_err();
        assert!(e.key == "url" && !e.message.contains("secret"), "{e:?}");
        assert!(ServerSpec {
            url: Some("postgres://bench@db1:5432/sbtest".into()),
            ..pg()
        }
        .validate()
        .is_ok());
    }

    #[test]
    fn a_url_loses_its_password_for_the_plan() {
        let (u, pw) = strip_password("postgres://bench:s%40cret@db1:5432/sbtest?host=/tmp");
        assert_eq!(u, "postgres://bench@db1:5432/sbtest?host=/tmp");
        assert_eq!(pw.as_deref(), Some("s%40cret"));
        assert!(!url_has_password(&u));
        let (u, pw) = strip_password("mysql://root@h/db");
        assert_eq!((u.as_str(), pw), ("mysql://root@h/db", None));
    }

    #[test]
    fn durations_by_step_then_class_then_default() {
        let mut p = SqlParams {
            read_duration: Some(330.0),
            write_duration: Some(630.0),
            ..SqlParams::default()
        };
        p.step_duration.insert("scan".into(), 20.0);
        let steps =
            plumb_workloads::sql::parse_steps("load,point-query,update-index,scan").unwrap();
        let d: Vec<f64> = steps.iter().map(|s| p.duration_of(s)).collect();
        assert_eq!(d, vec![5.0, 330.0, 630.0, 20.0]);
        assert!(p.validate().is_ok());
        p.step_duration.insert("no-such-step".into(), 1.0);
        assert_eq!(p.validate().unwrap_err().key, "step_duration");
    }
}
