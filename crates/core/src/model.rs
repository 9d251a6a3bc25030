//! Results as stored and reported. Every per-op figure is a delta over the measured
//! window divided by the ops in it; `None` means this host or engine cannot give the
//! figure, and reports must say so rather than print 0.

use serde::{Deserialize, Serialize};

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Ran to its planned end.
    Ok,
    /// Stopped early by Ctrl-C; its figures cover the part that ran.
    Interrupted,
    /// An engine error or failed verification.
    Failed,
}

impl StepStatus {
    /// The name stored and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Ok => "ok",
            StepStatus::Interrupted => "interrupted",
            StepStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for StepStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for StepStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ok" => Ok(StepStatus::Ok),
            "interrupted" => Ok(StepStatus::Interrupted),
            "failed" => Ok(StepStatus::Failed),
            other => Err(format!("unknown step status {other:?}")),
        }
    }
}

/// How a run ended, or that it has not (yet): a run still `Running` in the store
/// after its process is gone was killed (kill -9, power loss).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Started, not finished.
    Running,
    /// Every step ran to its planned end.
    Ok,
    /// A step failed (engine error or verification).
    Failed,
    /// Stopped by Ctrl-C, or found unfinished by `--resume`.
    Interrupted,
}

impl RunStatus {
    /// The name stored and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// The worse of two outcomes, for a suite or a group of repeats.
    pub fn worst(self, other: RunStatus) -> RunStatus {
        let rank = |s| match s {
            RunStatus::Ok => 0,
            RunStatus::Running => 1,
            RunStatus::Interrupted => 2,
            RunStatus::Failed => 3,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    /// Whether the run got to its end (`--resume` does not run it again).
    pub fn finished(self) -> bool {
        matches!(self, RunStatus::Ok | RunStatus::Failed)
    }
}

impl From<StepStatus> for RunStatus {
    /// What a run's status is when this is the worst of its steps.
    fn from(s: StepStatus) -> Self {
        match s {
            StepStatus::Ok => RunStatus::Ok,
            StepStatus::Interrupted => RunStatus::Interrupted,
            StepStatus::Failed => RunStatus::Failed,
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RunStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "running" => Ok(RunStatus::Running),
            "ok" => Ok(RunStatus::Ok),
            "failed" => Ok(RunStatus::Failed),
            "interrupted" => Ok(RunStatus::Interrupted),
            other => Err(format!("unknown run status {other:?}")),
        }
    }
}

/// Throughput stability over the 1-second intervals of a step (not its short last one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Qos {
    /// Slowest interval, ops/s.
    pub min: f64,
    /// 1st percentile of interval ops/s.
    pub p1: f64,
    /// 5th percentile of interval ops/s.
    pub p5: f64,
    /// Median interval ops/s.
    pub p50: f64,
    /// Coefficient of variation (stddev / mean) of interval ops/s.
    pub cv: f64,
    /// How many full intervals these figures come from.
    pub intervals: usize,
}

impl Qos {
    /// Throughput stability over a step's 1-second series; `None` with fewer than two
    /// intervals.
    ///
    /// Every interval but the last ended on a tick of the sampler's fixed 1 s schedule
    /// and counts, even when a late tick on a loaded host made it 0.9 s and the next
    /// 1.1 s. The last one ended with the step and counts only if it lasted a full
    /// second: a 0.3 s tail, when threads finish one by one, is not a sample of steady
    /// throughput.
    pub fn of(intervals: &[Interval]) -> Option<Qos> {
        Qos::of_series(intervals.iter().map(|i| (i.secs, i.ops_sec)))
    }

    /// [`Qos::of`] over any per-second rate, as (interval length s, rate) pairs: the
    /// insert benchmark's inserted rows/s beside its queries.
    pub fn of_series(series: impl ExactSizeIterator<Item = (f64, f64)>) -> Option<Qos> {
        let last = series.len().saturating_sub(1);
        let mut v: Vec<f64> = series
            .enumerate()
            .filter(|(n, (secs, _))| *n < last || *secs >= 0.999)
            .map(|(_, (_, rate))| rate)
            .collect();
        if v.len() < 2 {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        // Nearest-rank percentile of the ascending rates.
        let rank = |q: f64| v[((q * n).ceil().max(1.0) as usize).min(v.len()) - 1];
        Some(Qos {
            min: v[0],
            p1: rank(0.01),
            p5: rank(0.05),
            p50: rank(0.5),
            cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
            intervals: v.len(),
        })
    }
}

/// What reads found wrong. Any non-zero `mismatches` or `missing` fails the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// Values read back that were too short, written for another key, or whose
    /// checksum did not match.
    pub mismatches: u64,
    /// Keys that had to exist (every key was loaded and none deleted) but were not found.
    pub missing: u64,
    /// Keys not found where absence is legitimate (after fillrandom or deletes).
    pub not_found: u64,
    /// Values checked (length and key tag; all checks in `--verify all`).
    pub verified: u64,
    /// Of those, values whose full checksum was computed.
    #[serde(default)]
    pub checksummed: u64,
}

impl Verification {
    /// Adds another worker's counts.
    pub fn merge(&mut self, o: &Verification) {
        self.mismatches += o.mismatches;
        self.missing += o.missing;
        self.not_found += o.not_found;
        self.verified += o.verified;
        self.checksummed += o.checksummed;
    }
    /// Whether anything was wrong.
    pub fn failed(&self) -> bool {
        self.mismatches > 0 || self.missing > 0
    }
}

/// Hardware counters per op, or why there are none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HwCounters {
    /// Instructions per op.
    pub instructions_op: Option<f64>,
    /// Cycles per op.
    pub cycles_op: Option<f64>,
    /// Instructions per cycle.
    pub ipc: Option<f64>,
    /// Last-level cache misses per op.
    pub cache_misses_op: Option<f64>,
    /// Branch misses per op.
    pub branch_misses_op: Option<f64>,
    /// Set when the kernel refused: what it said, e.g. "no hardware PMU".
    pub unsupported: Option<String>,
}

/// The background writer of a *whilewriting step: its own figures, kept apart from the
/// readers' throughput that the step reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WriterSummary {
    /// Writes completed.
    pub ops: u64,
    /// Achieved user MB/s (key + value bytes).
    pub mb_sec: f64,
    /// The rate it was asked for, MB/s.
    pub target_mb_sec: f64,
    /// Median write latency from the intended start time, µs.
    pub p50_us: f64,
    /// 99th percentile write latency from the intended start time, µs.
    pub p99_us: f64,
}

/// One op in this many has its time split between the engine call and the harness.
pub const HARNESS_SAMPLE_EVERY: u64 = 128;

/// The least machine CPU time (a window's seconds × its CPUs) over which steal% and
/// outside% are measured or judged. `/proc/stat` counts each CPU's time in 10 ms ticks,
/// so a window holds this many seconds × 100 ticks: at 1 s, 100 ticks, one tick is at
/// most 1% of the machine, a tenth of the outside-load warning's 10%. A shorter window
/// (a 0.05 s compaction wait on 2 CPUs holds 10 ticks, one of them 10%) gives n/a.
pub const NOISE_MIN_CPU_SECS: f64 = 1.0;

/// One measured step's summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// Measured ops (for *whilewriting: the readers' ops).
    pub ops: u64,
    /// Measured window, seconds.
    pub secs: f64,
    /// ops / secs.
    pub ops_sec: f64,
    /// User bytes (key + value) moved per second by the measured ops.
    pub mb_sec: Option<f64>,
    /// Latency percentiles in µs from the merged HDR histogram.
    pub p50_us: Option<f64>,
    /// 99th percentile, µs.
    pub p99_us: Option<f64>,
    /// 99.9th percentile, µs.
    pub p999_us: Option<f64>,
    /// 99.99th percentile, µs.
    pub p9999_us: Option<f64>,
    /// Largest latency seen, µs.
    pub pmax_us: Option<f64>,
    /// User + system CPU of the process per op, µs.
    pub cpu_us_op: Option<f64>,
    /// User-mode CPU of the process per op, µs: the `usr` part of `cpu_us_op`.
    #[serde(default)]
    pub usr_us_op: Option<f64>,
    /// Kernel-mode CPU of the process per op, µs: the `sys` part of `cpu_us_op` (system
    /// calls, page faults, IO submission; a slow clocksource shows up here).
    #[serde(default)]
    pub sys_us_op: Option<f64>,
    /// plumb's own time per op, µs: what the measured threads spend outside the engine
    /// call (key choice, value fill, clock reads, histogram, checks), timed on one op in
    /// [`HARNESS_SAMPLE_EVERY`]. The FFI crossing counts as the engine's.
    pub harness_us_op: Option<f64>,
    /// Voluntary + involuntary context switches per op.
    pub csw_op: Option<f64>,
    /// Major page faults of the process per op: device reads through mapped memory (an
    /// mmap engine such as LMDB reading a page not in memory) that `rd_op` counts
    /// without saying why, and that no read(2) shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub majflt_op: Option<f64>,
    /// Device read requests per op.
    pub rd_op: Option<f64>,
    /// Device KB read per op.
    pub rkb_op: Option<f64>,
    /// Device write requests per op.
    pub wr_op: Option<f64>,
    /// Device KB written per op.
    pub wkb_op: Option<f64>,
    /// The device over the measured window as `iostat -x` shows it (r/s, r_await,
    /// %util …); `None` without a block device, or in runs stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceIo>,
    /// Device bytes written / user bytes written.
    pub w_amp: Option<f64>,
    /// The engine's own: (flush + compaction bytes written) / ingest bytes.
    pub w_amp_engine: Option<f64>,
    /// GB written by compaction during the step.
    pub c_wgb: Option<f64>,
    /// Percent of the window that writers were stalled by the engine.
    pub stall_pct: Option<f64>,
    /// Size of the data dir at step end, GB.
    pub db_gb: Option<f64>,
    /// GB of the engine's own pages holding data at step end, by the engine's count
    /// (LMDB, SQLite); beside db_gb it shows the files' free space.
    #[serde(default)]
    pub eng_used_gb: Option<f64>,
    /// db size / live logical bytes (keys × (key + value) expected live).
    pub space_amp: Option<f64>,
    /// Peak resident memory of the process during the step, GB.
    pub rss_gb: Option<f64>,
    /// Time the hypervisor ran other guests while this VM's CPUs wanted to run, percent
    /// of the machine's CPU capacity in the window (all CPUs together): a neighbour on
    /// the physical host. `None` without `/proc/stat`, and in runs stored before it existed.
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// CPU that processes other than the ones measured used on this machine (the
    /// machine's time neither idle, in iowait nor stolen, less plumb's own CPU and a
    /// managed server's), percent of the machine's CPU capacity in the window (its
    /// length × the online CPUs): a neighbour on this host. `None` without `/proc/stat`, when the server's processes
    /// cannot be seen (an external server), and in runs stored before it existed.
    #[serde(default)]
    pub outside_cpu_pct: Option<f64>,
    /// Interval throughput stability.
    pub qos: Option<Qos>,
    /// Read verification.
    pub verify: Verification,
    /// Hardware counters per op.
    pub hw: HwCounters,
    /// The rate-limited writer beside the readers, for *whilewriting steps.
    pub writer: Option<WriterSummary>,
    /// Compaction the engine still owed when the step started, GB: a step measured
    /// while the previous step's debt drains is not measuring itself alone.
    #[serde(default)]
    pub pending_compaction_gb_start: Option<f64>,
    /// The LSM's own account of the step (stalls by cause, compaction per level, the
    /// shape at the step's end, block cache by block type); `None` for engines that
    /// keep none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsm: Option<crate::LsmAccount>,
    /// The LSM's shape when the measured window opened (memtable entries, files and
    /// bytes per level): what the step's reads passed through. Flushes and compactions
    /// still running from the step before make it differ between identical runs, and
    /// with it a counted run's instructions per op (`plumb icount` settles the engine
    /// first). `None` for engines that keep no LSM account, maintenance steps, and
    /// runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsm_start: Option<crate::LsmShape>,
    /// What a step on a database server cost on the server's side; `None` for embedded
    /// engines and probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCosts>,
    /// The insert benchmark's figures (inserts, deletes and queries apart, the 95% rule,
    /// response-time buckets); `None` for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ib: Option<IbSummary>,
    /// perf stat's counts per op of the system under test, for the families whose step
    /// has no [`ServerCosts`] to hold them: an insert-benchmark step's server processes,
    /// a key-value step's own process under `--perf-groups` (seed 002 reads every
    /// release's counters per op against the base's, for kv and ib as for sql). `None`
    /// when nothing was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf: Option<PerfCounted>,
    /// A durability step's trials: writes acknowledged, lost and wrong after the kills
    /// (or power cuts), and the verdict; `None` for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<DurabilitySummary>,
    /// An open-loop step's offered rate, its service time beside the response time the
    /// percentiles above give, and how far behind its schedule it fell; `None` for
    /// closed-loop steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoop>,
    /// The faults injected inside the step (`--fault`) and what each cost the clients:
    /// outage, latency in its window against steady state, recovery and its phases;
    /// `None` for a step without faults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<crate::FaultReport>,
    /// The threads profile a closed-loop step ran under (`--threads-profile`, as
    /// written), so a report reads it phase by phase; `None` for a fixed thread count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_profile: Option<String>,
    /// What a server's sessions waited on over the window, sampled from a separate
    /// connection; `None` for embedded engines and runs stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<crate::WaitProfile>,
    /// The server's own counters second by second over the window (their rates), so
    /// a checkpoint or a stall shows in time beside throughput and the device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_seconds: Vec<crate::ServerSecond>,
    /// The engine's own per-op breakdown over the window (RocksDB's PerfContext at
    /// `--perf-level`), summed over the measured threads; `None` when not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_perf: Option<EnginePerf>,
    /// Latency per kind of operation, by the name its users know (YCSB's `read`,
    /// `update` …, TPC-C's `new-order` …), for workloads that mix kinds; the step's
    /// percentiles are all of them together.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub by_op: std::collections::BTreeMap<String, OpLatency>,
    /// Set when a report restricted this summary to the step's last seconds
    /// (`--window`): what the whole step gave, so both are printed. Never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
}

/// A summary restricted to a step's last seconds, and the whole step's throughput
/// beside it: seed 001 reads overwrite over its last 300 s, after compaction debt has
/// built up, and over the whole run, and the two can differ by 2×.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The window asked for, seconds back from the step's end.
    pub last_secs: f64,
    /// The whole step's measured seconds.
    pub whole_secs: f64,
    /// The whole step's ops.
    pub whole_ops: u64,
    /// The whole step's ops/s.
    pub whole_ops_sec: f64,
}

/// What an open-loop step was offered and what it kept up with. The step's
/// percentiles are response times, counted from each op's intended start, so an op
/// queued behind a stall counts the stall; the service time here counts from when the
/// op actually started, the engine's own time. Both are needed: response time is what a
/// user waits, service time says whether the engine or the queue made them wait.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoop {
    /// Ops per second offered, across threads (with a rate profile, its mean over the
    /// measured window; each interval's is in [`Interval::target_ops_sec`]).
    pub target_ops_sec: f64,
    /// The rate profile offered, as written (`ramp:1k..20k/60s,hold:20k/120s`); `None`
    /// for one rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// `constant` or `poisson`.
    pub arrivals: String,
    /// Service time: from each op's actual start.
    pub service: OpLatency,
    /// The most any op started after it was due, ms: the queue's longest wait.
    pub lag_max_ms: f64,
    /// Ops that started later than 1 ms after they were due, percent of the measured ops.
    pub late_pct: f64,
    /// Ops due before the step ended that never started: the backlog left behind, never
    /// counted in the step's ops or percentiles (a rate above capacity shows here and in
    /// ops/s below the target).
    pub backlog_ops: u64,
}

/// Upper bounds of the insert benchmark's response-time buckets, µs (≤256 µs, ≤1 ms,
/// ≤4 ms … ≤16 s); one more bucket counts everything above the last.
pub const IB_BUCKETS_US: [u64; 9] = [
    256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000,
];

/// Latency of one kind of op in an insert-benchmark step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpLatency {
    /// Ops timed.
    pub ops: u64,
    /// Percentiles, µs.
    pub p50_us: Option<f64>,
    /// 90th percentile, µs.
    pub p90_us: Option<f64>,
    /// 99th percentile, µs.
    pub p99_us: Option<f64>,
    /// 99.9th percentile, µs.
    pub p999_us: Option<f64>,
    /// Largest, µs (the seeds' "max op time").
    pub max_us: Option<f64>,
    /// Ops per response-time bucket of [`IB_BUCKETS_US`], then those above.
    pub buckets: Vec<u64>,
}

/// One second of an insert-benchmark step: what the published scripts print per
/// second, kept beside the step's intervals (whose ops are the step's main op).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IbSecond {
    /// End of the second since the step's start, s.
    pub t: f64,
    /// Its length, s.
    pub secs: f64,
    /// Rows inserted.
    pub ins: u64,
    /// Rows deleted.
    pub del: u64,
    /// Queries.
    pub queries: u64,
    /// Largest insert-commit latency from its intended start, µs.
    pub ins_max_us: Option<f64>,
    /// 99th percentile query latency, µs.
    pub q_p99_us: Option<f64>,
}

/// What one durability step (a mode and a kind of cut, `kills` trials on one data
/// directory) found: every write acknowledged before a kill is checked after it, so
/// `lost` and `wrong` count the acknowledged writes missing or changed at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DurabilitySummary {
    /// The target as the table names it: the engine, or the server and its release.
    pub target: String,
    /// sync, nosync or unlogged.
    pub mode: String,
    /// kill, power or torn.
    pub cut: String,
    /// Trials asked for.
    pub kills_planned: u32,
    /// Trials run (fewer than asked when interrupted, or when the engine stopped
    /// opening).
    pub trials: u32,
    /// Kills that landed while the writer wrote (fewer when interrupted).
    pub kills: u32,
    /// Writes (or commits) acknowledged in all, each made durable by the recorder.
    pub acknowledged: u64,
    /// Acknowledged writes missing after the last trial.
    pub lost: u64,
    /// Acknowledged writes present with another value.
    pub wrong: u64,
    /// What it means: ok, the price of the mode, or FAIL for a broken promise.
    pub verdict: String,
    /// Why the engine did not open after a kill (all it held counts as lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unopenable: Option<String>,
    /// Unsynced bytes the power cuts dropped (power and torn cuts of engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_bytes: Option<u64>,
    /// fsyncs the power-cut filesystem served (power and torn cuts of engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncs: Option<u64>,
    /// A crash-point step's own figures (`--cut at=fsync:all`): the totals above sum
    /// every point's trial, these count the points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<CrashPointsSummary>,
}

/// What a crash-point step found, point by point: each point a fresh directory, the
/// same writes, the power-cut filesystem frozen right after the N-th call of its kind,
/// the engine reopened and checked. Kept apart from the totals because a point that
/// loses one write and a point that loses twenty are both one broken point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrashPointsSummary {
    /// The calls counted: fsync, rename or unlink.
    pub kind: String,
    /// Points a first run without a crash point counted (0 for a single `at=KIND:N`).
    pub counted: u64,
    /// Points tried.
    pub tried: u32,
    /// Points the run never reached (an engine's background work varies a little).
    pub not_reached: u32,
    /// Points after which an acknowledged write was missing or changed.
    pub lost: u32,
    /// Points after which the engine did not open (everything acknowledged counts lost).
    pub unopened: u32,
    /// Points after which the engine's own integrity check failed.
    pub integrity_failed: u32,
    /// The engine's own check: `PRAGMA integrity_check`, `verify_checksum`, or none.
    pub check: String,
    /// The first broken points, each with what was wrong (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
}

/// An insert-benchmark step's figures. Costs are per the step's main op, as the
/// published summaries give them: per inserted row for l.i0/l.i1/l.i2, per query for
/// the query steps (everything the window cost, the background inserts included).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IbSummary {
    /// Clients (each one inserter, and one querier in the query steps).
    pub clients: u32,
    /// Rows per insert commit.
    pub rows_per_commit: u32,
    /// The inserted rows/s asked of all clients together; `None` when unlimited.
    pub target_ips: Option<f64>,
    /// The 95% rule: `Some(false)` when the average insert rate fell below 95% of the
    /// target, so the step's query rate is not comparable; `None` when unlimited.
    pub rate_ok: Option<bool>,
    /// Each insert deleted as many of the oldest rows (the table stays the same size).
    pub delete_per_insert: bool,
    /// Rows inserted, deleted; queries run.
    pub inserts: u64,
    /// Rows deleted.
    pub deletes: u64,
    /// Queries.
    pub queries: u64,
    /// Inserted rows per second.
    pub ips: f64,
    /// Deleted rows per second.
    pub dps: f64,
    /// Queries per second.
    pub qps: f64,
    /// Rows each query returned, on average.
    pub rows_query: Option<f64>,
    /// Insert commits, timed from each one's intended start when rate-limited.
    pub insert: OpLatency,
    /// Queries (closed loop: from their start).
    pub query: OpLatency,
    /// Per-second inserted rows: the variation of the insert rate.
    pub ins_qos: Option<Qos>,
    /// Device reads per op.
    pub rd_op: Option<f64>,
    /// KB read from the device per op.
    pub rkb_op: Option<f64>,
    /// KB written to the device per inserted row.
    pub wkb_ins: Option<f64>,
    /// CPU of the system under test per op (the server's processes, or plumb's own with
    /// an embedded engine), µs.
    pub cpu_us_op: Option<f64>,
    /// Context switches of the system under test per op.
    pub csw_op: Option<f64>,
    /// Resident memory of the system under test at the step's end, GB.
    pub rss_gb: Option<f64>,
    /// Rows plumb counts in the table after the step (loaded + inserted − deleted) …
    pub rows_expected: u64,
    /// … and the rows the engine or server counted (`SELECT COUNT(*)`, a key scan).
    pub rows_counted: Option<u64>,
    /// Per-second inserts, deletes and queries.
    pub seconds: Vec<IbSecond>,
}

/// perf stat's counts of one step per op, as [`ServerCosts`] keeps a SQL step's
/// (`perf_query`, `perf_unavailable`, `perf_counted_secs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerfCounted {
    /// Whose processes were counted: `server` or `plumb` (an embedded engine's, in
    /// plumb's process).
    pub whose: String,
    /// Each event per op (`task-clock-us` for task-clock, µs).
    pub per_op: std::collections::BTreeMap<String, f64>,
    /// Events perf could not count and why, or why nothing was counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// Seconds each event was counted when counted one group at a time
    /// (`--perf-groups`); empty when all were counted at once over the window.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub counted_secs: std::collections::BTreeMap<String, f64>,
}

/// A SQL step's figures that an embedded engine has no use for: transactions beside
/// queries, and what each query cost inside the server, so client and server costs
/// are told apart (the seeds' explanation of a regression is a server counter's ratio
/// to the base divided by the relative QPS).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCosts {
    /// Transactions per second (a microbenchmark's transaction may hold many queries;
    /// the step's ops are its queries).
    pub tps: f64,
    /// Rows returned or changed per query, by the client's count.
    pub rows_query: Option<f64>,
    /// User + system CPU of the server's processes per query, µs.
    pub cpu_us_query: Option<f64>,
    /// Context switches of the server's processes per query.
    pub csw_query: Option<f64>,
    /// Why the server's CPU is not known (an external server on another host).
    pub cpu_unavailable: Option<String>,
    /// The server's own counters (pg_stat_*, SHOW GLOBAL STATUS), their deltas over the
    /// step divided by its queries, by counter name.
    pub counters_query: std::collections::BTreeMap<String, f64>,
    /// Events rolled back on a conflict sysbench also retries (deadlock, duplicate key).
    #[serde(default)]
    pub retries: u64,
    /// Queries in the measured window (the step's ops are rows for the load).
    #[serde(default)]
    pub queries: u64,
    /// perf counters of the server's processes per query (`task-clock-us`,
    /// `context-switches`, `cycles`, `instructions` …): hardware events where the
    /// kernel has a PMU, software events always.
    #[serde(default)]
    pub perf_query: std::collections::BTreeMap<String, f64>,
    /// Events perf could not count and why (`cycles: <not supported>`), or why nothing
    /// was counted.
    #[serde(default)]
    pub perf_unavailable: Vec<String>,
    /// Seconds each event of `perf_query` was counted when the events were counted one
    /// group at a time (`--perf-groups`): each figure is exact over those seconds and
    /// divided by their own queries. Empty when all were counted at once (multiplexed).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub perf_counted_secs: std::collections::BTreeMap<String, f64>,
}

/// An engine's own account of where an op went, summed over a step's measured threads
/// and divided by its ops: RocksDB's PerfContext (`block_read_time` ns per op,
/// `block_read_count` per op …) at the level asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnginePerf {
    /// The level counted at (db_bench's `--perf_level` numbers).
    pub level: u8,
    /// Each counter per op, by the engine's name (`*_time`/`*_nanos` in ns).
    pub per_op: std::collections::BTreeMap<String, f64>,
    /// What the engine cannot give, or why nothing was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// One second of a step (the last may be shorter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds from the start of the measured window to the interval's end.
    pub t: f64,
    /// Length of this interval, seconds.
    pub secs: f64,
    /// Ops completed in it.
    pub ops: u64,
    /// ops / secs.
    pub ops_sec: f64,
    /// Median latency of the ops completed in it, µs.
    pub p50_us: Option<f64>,
    /// 99th percentile latency, µs.
    pub p99_us: Option<f64>,
    /// Largest latency, µs.
    pub pmax_us: Option<f64>,
    /// Process CPU in it, µs.
    pub cpu_us: Option<f64>,
    /// Device read requests.
    pub rd: Option<u64>,
    /// Device KB read.
    pub rkb: Option<f64>,
    /// Device write requests.
    pub wr: Option<u64>,
    /// Device KB written.
    pub wkb: Option<f64>,
    /// The device in this interval as `iostat -x` shows it; `None` without a block
    /// device, or in runs stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceIo>,
    /// Engine stall time in it, µs.
    pub stall_us: Option<u64>,
    /// Resident memory at its end, GB.
    pub rss_gb: Option<f64>,
    /// Steal in it, percent of the machine's CPU time (as [`StepSummary::steal_pct`]).
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// Other processes' CPU in it, percent of the machine's capacity (as
    /// [`StepSummary::outside_cpu_pct`]); `None` on server steps of more than one
    /// interval, whose server is only read at the window's ends (a walk of /proc each
    /// second would cost the client).
    #[serde(default)]
    pub outside_cpu_pct: Option<f64>,
    /// Ops per second offered in it, on an open-loop step (the rate profile's mean over
    /// the interval): the load beside what was served, so a slow second shows as ops
    /// below their target, not as a lower target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ops_sec: Option<f64>,
    /// Threads running ops in it, on a step under a threads profile (the profile's mean
    /// over the interval): the load beside what it served, as the offered rate is for
    /// an open-loop step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<f64>,
}

/// The block device over a window as sysstat's `iostat -x` reports it, from the
/// `/proc/diskstats` counters of the device holding the data (see
/// `plumb_probes::diskstats::DiskCounters::device_io` for the formulas).
///
/// Each figure is iostat's column of the same name, computed from the same counter
/// deltas with the same formula. One difference: iostat divides by the time between its
/// two readings of `/proc/uptime` (centiseconds), plumb by its own monotonic-clock
/// window (the step's measured window, or the interval), which is the time the counters
/// were read over. The four rates are always there when the device was read; a figure
/// whose denominator is zero (an await with no requests) or whose counter the kernel does
/// not give (the times of the old 7-field partition lines) is `None`, never 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceIo {
    /// `r/s`: read requests completed per second.
    pub r_s: f64,
    /// `rMB/s`: MiB read per second (512-byte sectors / 2048).
    pub rmb_s: f64,
    /// `r_await`: mean time of a read request, queue plus service, ms (ms spent
    /// reading / reads completed).
    pub r_await_ms: Option<f64>,
    /// `rareq-sz`: mean size of a read request, KiB (sectors read / 2 / reads).
    pub rareq_kb: Option<f64>,
    /// `w/s`: write requests completed per second.
    pub w_s: f64,
    /// `wMB/s`: MiB written per second.
    pub wmb_s: f64,
    /// `w_await`: mean time of a write request, queue plus service, ms.
    pub w_await_ms: Option<f64>,
    /// `wareq-sz`: mean size of a write request, KiB.
    pub wareq_kb: Option<f64>,
    /// `aqu-sz`: mean number of requests queued or in service (weighted ms doing IO /
    /// window ms).
    pub aqu_sz: Option<f64>,
    /// `%util`: percent of the window the device had at least one request in flight
    /// (ms doing IO / window ms × 100); above 90% a single-queue disk is saturated, a
    /// parallel one (NVMe, RAID, virtio) may not be.
    pub util_pct: Option<f64>,
    /// `f/s`: cache flush requests completed per second (kernels 5.5+). Set beside
    /// durable commits per second it shows group commit: fewer flushes than commits
    /// means several commits shared one. `None` when the kernel does not count them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(ops_sec: f64, secs: f64) -> Interval {
        Interval {
            secs,
            ops_sec,
            ops: (ops_sec * secs) as u64,
            ..Interval::default()
        }
    }

    #[test]
    fn qos_over_full_intervals_only() {
        let mut v: Vec<Interval> = (1..=100).map(|i| iv(i as f64 * 10.0, 1.0)).collect();
        v.push(iv(1.0, 0.3)); // a short final interval is left out
        let q = Qos::of(&v).unwrap();
        assert_eq!(q.intervals, 100);
        assert_eq!(q.min, 10.0);
        assert_eq!(q.p1, 10.0);
        assert_eq!(q.p5, 50.0);
        assert_eq!(q.p50, 500.0);
        // mean 505, sample stddev of 10..1000 step 10 is 290.11
        assert!((q.cv - 290.11 / 505.0).abs() < 1e-3, "{}", q.cv);
        assert!(Qos::of(&[iv(5.0, 1.0)]).is_none());
        // A late tick shortens the next interval; both still count.
        let q = Qos::of(&[iv(100.0, 1.2), iv(90.0, 0.8), iv(1.0, 0.3)]).unwrap();
        assert_eq!((q.intervals, q.min, q.p50), (2, 90.0, 90.0));
        let q = Qos::of(&[iv(100.0, 1.0), iv(80.0, 1.0)]).unwrap();
        assert_eq!((q.intervals, q.min), (2, 80.0));
    }
}
