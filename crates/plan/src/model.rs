//! The plan as data: what each run will do, typed, serialisable and hashable. A run
//! stores its [`RunPlan`]; `plumb rerun` rebuilds the run from it and `--resume` knows
//! a run by its hash.

use crate::family::{Family, ServerSpec, Subject};
use plumb_core::value::VerifyMode;
use plumb_targets::EngineSpec;
use plumb_workloads::steps::StepPlan;
use plumb_workloads::{
    Arrivals, Distribution, LatencyBound, Pace, RateProfile, StepKind, ThreadsProfile,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The largest value: values are cut from a payload buffer of twice this size.
pub const MAX_VALUE_SIZE: usize = 512 << 10;

/// Seconds per step when neither a duration nor an op count is given (a quick run).
pub const QUICK_SECS: f64 = 3.0;

/// The key-value workload's knobs, with db_bench's names. One typed definition serves
/// `plumb kv`'s flags, a suite's `[params]` table, the stored plan and the option
/// reference: each default and each line of help is written once, below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct KvParams {
    /// Keys in the key space (db_bench's --num; small by default for a quick run).
    #[arg(long, default_value_t = 200_000)]
    pub num: u64,
    /// Bytes per key.
    #[arg(long, alias = "key_size", default_value_t = 20)]
    pub key_size: usize,
    /// Bytes per value, including its 8-byte header (checksum and key tag).
    #[arg(long, alias = "value_size", default_value_t = 400)]
    pub value_size: usize,
    /// Measured threads per step (readers, for *whilewriting steps).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Threads of the load steps (fills) when they should differ from --threads, so a
    /// thread sweep loads every database the same way [default: --threads].
    #[arg(long, alias = "fill_threads", value_name = "N")]
    pub fill_threads: Option<usize>,
    /// Seconds per step; fillrandom stops at --num keys or this, whichever first;
    /// fillseq, filluniquerandom and readseq always cover all --num keys, as in
    /// db_bench [default: 3 s for the other steps when --ops is not given].
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Ops per non-fill step, in total across threads.
    #[arg(long)]
    pub ops: Option<u64>,
    /// Unmeasured seconds at the start of each non-fill step.
    #[arg(long, value_name = "SECS", default_value_t = 0.0)]
    pub warmup: f64,
    /// next() calls after each seek in range steps.
    #[arg(long, alias = "seek_nexts", default_value_t = 10)]
    pub seek_nexts: usize,
    /// Keys per multireadrandom call.
    #[arg(long, alias = "batch_size", default_value_t = 16)]
    pub batch_size: usize,
    /// MB/s (MiB) of the one rate-limited writer in *whilewriting steps.
    #[arg(long, alias = "write_rate_mb", default_value_t = 2.0)]
    pub write_rate_mb: f64,
    /// Key distribution: uniform, zipfian[:THETA], or hotset:K (the first K keys).
    #[arg(long, default_value = "uniform")]
    pub distribution: String,
    /// What every read checks: `sample` checks the length and key tag (a wrong-key
    /// return) of each point read's value and of the first value of each range, and the
    /// full checksum on one checked value in 256 (corruption), at under 2% of a read's
    /// CPU; `all` the full checksum on every value; `none`
    /// nothing, db_bench's work (a key that must exist and is missing still fails).
    #[arg(long, default_value_t = VerifyMode::Sample, value_parser = verify_mode)]
    pub verify: VerifyMode,
    /// Open loop: ops/s offered to each non-fill step in total across threads (as
    /// sysbench's --rate and YCSB's -target), each op timed from its intended start, its
    /// service time stored beside; without it steps run closed-loop.
    #[arg(long, value_name = "OPS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Open loop at a rate that changes over time, from each non-fill step's measured
    /// start: phases apart by commas, e.g.
    /// `ramp:1k..20k/60s,hold:20k/120s,sine:mean=10k,amp=5k,period=300s` (rates with k
    /// or m; the last phase may go without a duration and lasts to the step's end).
    /// Intended start times follow the integrated rate, so a slow op shows as lateness,
    /// not as a lower rate; each interval stores what it was offered.
    #[arg(long, value_name = "PHASES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_profile: Option<String>,
    /// Closed loop with a number of threads that changes over time, from each non-fill
    /// step's measured start: phases as --rate-profile writes them, the value a thread
    /// count, e.g. `hold:1/30s,ramp:1..8/80s,hold:4` (each moment runs the value
    /// rounded to whole threads). The step starts the profile's peak of threads, and
    /// thread i runs ops while more than i are counted, sleeping otherwise; each interval
    /// stores how many ran. Sets --threads; a timed profile sets the step's length
    /// (over --duration).
    #[arg(long, value_name = "PHASES")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_profile: Option<String>,
    /// How open-loop arrivals are spaced: constant or poisson.
    #[arg(long, default_value = "constant")]
    #[serde(skip_serializing_if = "is_constant")]
    pub arrivals: Arrivals,
    /// Find the highest rate at which each non-fill step keeps this bound on response
    /// time, e.g. p99:2ms: a closed-loop pass, then open-loop probes bisecting below it,
    /// each stored as STEP@RATE/s (the curve of rate against latency).
    #[arg(long, value_name = "pQ:BOUND")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_search: Option<String>,
    /// A YCSB property over each ycsb-* step's preset, NAME=VALUE, repeatable (YCSB's
    /// -p); --num is the recordcount. E.g. requestdistribution=uniform, fieldcount=1.
    #[arg(long = "ycsb", value_name = "NAME=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ycsb: Vec<String>,
    /// The `mix` step's op-mix file (TOML: operations with weights, a key distribution,
    /// value-size and scan-length distributions; examples/mixes/ has YCSB's A-F,
    /// readrandomwriterandom and mixgraph as such files). Its text is stored with the
    /// run, so `plumb rerun` runs it even if the file changes.
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    /// The mix file's text as read when the run was planned.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mix_file: Option<crate::family::ScriptSource>,
    /// A db_bench mixgraph parameter over its default, NAME=VALUE, repeatable, with
    /// db_bench's names: mix_get_ratio, mix_put_ratio, mix_seek_ratio,
    /// keyrange_dist_a..d, keyrange_num, key_dist_a, key_dist_b, value_k, value_sigma,
    /// iter_k, iter_sigma, mix_max_value_size, mix_max_scan_len.
    #[arg(long = "mixgraph", value_name = "NAME=VALUE")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mixgraph: Vec<String>,
    /// Count perf stat's events on plumb's own process (the embedded engine runs in it)
    /// one group at a time, SECS seconds each, in turn over each step's window (seed
    /// 002's method, as `plumb sql --perf-groups`): each event exact over its slices and
    /// divided by their own ops, stored per op beside the four counters read always.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    #[serde(skip_serializing_if = "crate::family::is_zero")]
    pub perf_groups: u32,
    /// RocksDB's PerfContext level on each measured thread (db_bench's --perf_level): 1
    /// off (db_bench's default), 2 counts (RocksDB's own default: block reads, cache
    /// hits, bloom checks, keys compared), 3 with waits (write delay, mutexes), 4 with
    /// times (memtable, block reads, decompression, WAL), 5 with CPU times, 6 all. Summed
    /// over each step's window and stored per op; engines without one say so.
    #[arg(long, value_name = "LEVEL", default_value_t = 2)]
    #[serde(skip_serializing_if = "is_two")]
    pub perf_level: u8,
}

/// RocksDB's own default PerfContext level (kept out of stored options when unchanged).
fn is_two(x: &u8) -> bool {
    *x == 2
}

impl KvParams {
    /// The mixgraph parameters as pairs; a malformed one names itself.
    pub fn mixgraph_params(&self) -> Result<Vec<(String, String)>, ParamError> {
        name_values("mixgraph", &self.mixgraph, "mix_get_ratio=0.5")
    }

    /// The `mix` step's file when it has phases (a file that does not parse is named
    /// by the step itself, with its line).
    fn phased_mix(&self, kind: StepKind) -> Option<plumb_workloads::Mix> {
        if kind != StepKind::Mix {
            return None;
        }
        let src = self.mix_file.as_ref()?;
        plumb_workloads::parse_mix(&src.text, &src.name)
            .ok()
            .filter(|m| !m.phases.is_empty())
    }

    /// The load a phased mix file sets (its phases' rates or threads) against the
    /// flags that would set it too: one of them must.
    fn mix_phases_ok(&self) -> Result<(), ParamError> {
        let Some(m) = self.phased_mix(StepKind::Mix) else {
            return Ok(());
        };
        let what = if m.rate_profile().is_some() {
            "rate"
        } else if m.threads_profile().is_some() {
            "threads"
        } else {
            return Ok(());
        };
        let flags = self.rate.is_some()
            || self.rate_profile.is_some()
            || self.rate_search.is_some()
            || self.threads_profile.is_some();
        if flags {
            return Err(ParamError {
                key: "mix",
                message: format!(
                    "{}: its phases set the {what}: drop --rate, --rate-profile, \
                     --rate-search and --threads-profile",
                    self.mix.as_deref().unwrap_or("mix")
                ),
            });
        }
        Ok(())
    }

    /// Reads the `--mix` file into the plan (relative to `base` when not absolute), so
    /// the run keeps its text, and checks it now: a missing file names its path, a bad
    /// one its file:line and field, before any step of the run (or of a suite) starts.
    pub fn read_mix(&mut self, base: Option<&std::path::Path>) -> Result<(), ParamError> {
        if let Some(m) = &self.mix {
            let src = crate::family::ScriptSource::read_file(
                "mix",
                m,
                1,
                base,
                ("mix file", "a mix file (TOML; examples/mixes/ has some)"),
            )?;
            let bad = |message: String| ParamError {
                key: "mix",
                message,
            };
            let mix =
                plumb_workloads::parse_mix(&src.text, &src.name).map_err(|e| bad(e.to_string()))?;
            mix.refuse_unrunnable()
                .map_err(|e| bad(format!("{}: {e}", src.name)))?;
            self.mix_file = Some(src);
        }
        Ok(())
    }
}

/// Whether arrivals are the default (left out of stored plans, which keep their hash).
pub(crate) fn is_constant(a: &Arrivals) -> bool {
    *a == Arrivals::Constant
}

/// `NAME=VALUE` YCSB properties as pairs (`--ycsb`, shared by the kv and sql
/// families); a malformed one names itself.
pub fn ycsb_props(list: &[String]) -> Result<Vec<(String, String)>, ParamError> {
    name_values("ycsb", list, "requestdistribution=uniform")
}

/// `NAME=VALUE` items of the parameter `key` as pairs; a malformed one names itself and
/// shows `example`.
fn name_values(
    key: &'static str,
    list: &[String],
    example: &str,
) -> Result<Vec<(String, String)>, ParamError> {
    list.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(ParamError {
                key,
                message: format!("{s:?}: write NAME=VALUE, e.g. {example}"),
            }),
        })
        .collect()
}

/// Checks YCSB properties against YCSB's own rules (names, values), over the defaults.
pub fn ycsb_props_ok(list: &[String]) -> Result<(), ParamError> {
    let props = ycsb_props(list)?;
    plumb_workloads::ycsb::CoreParams::default()
        .set_all(props.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(|e| ParamError {
            key: "ycsb",
            message: e.to_string(),
        })
}

/// Checks open-loop knobs, shared by every family that has them: the rate offered
/// (`None`: closed loop) and the bound of a rate search.
pub fn pace_of(
    rate: Option<f64>,
    rate_profile: Option<&str>,
    arrivals: Arrivals,
    rate_search: Option<&str>,
) -> Result<(Option<Pace>, Option<LatencyBound>), ParamError> {
    let pace = match (rate, rate_profile) {
        (Some(_), Some(_)) => {
            return Err(ParamError {
                key: "rate_profile",
                message: "a rate profile sets the rate over time: drop --rate".into(),
            })
        }
        (Some(r), None) if !(r > 0.0 && r.is_finite()) => {
            return Err(ParamError {
                key: "rate",
                message: format!("{r}: give ops per second > 0"),
            })
        }
        (Some(r), None) => Some(Pace::constant(r, arrivals)),
        (None, Some(text)) => Some(Pace::profiled(
            text.parse::<RateProfile>().map_err(|message| ParamError {
                key: "rate_profile",
                message,
            })?,
            arrivals,
        )),
        (None, None) => None,
    };
    let bound = match rate_search {
        Some(b) => Some(b.parse::<LatencyBound>().map_err(|message| ParamError {
            key: "rate_search",
            message,
        })?),
        None => None,
    };
    if pace.is_some() && bound.is_some() {
        return Err(ParamError {
            key: "rate_search",
            message: "a rate search chooses its own rates: drop --rate and --rate-profile".into(),
        });
    }
    Ok((pace, bound))
}

/// Checks a threads profile, shared by every family that has one: it drives a closed
/// loop, so an offered rate (fixed, profiled or searched) cannot go with it.
pub fn clients_of(
    threads_profile: Option<&str>,
    open_loop: bool,
) -> Result<Option<ThreadsProfile>, ParamError> {
    let Some(text) = threads_profile else {
        return Ok(None);
    };
    if open_loop {
        return Err(ParamError {
            key: "threads_profile",
            message: "a threads profile runs closed-loop clients; an offered rate that \
                      changes is --rate-profile: give one of them"
                .into(),
        });
    }
    text.parse::<ThreadsProfile>()
        .map(Some)
        .map_err(|message| ParamError {
            key: "threads_profile",
            message,
        })
}

fn verify_mode(s: &str) -> Result<VerifyMode, String> {
    s.parse()
}

impl Default for KvParams {
    /// The defaults declared in the attributes above.
    fn default() -> Self {
        plumb_targets::options::defaults::<KvParams>()
    }
}

/// A parameter that cannot be used: its key (as in a suite file) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    /// The suite key, e.g. `num`; the command line flag is `--` + key with dashes.
    pub key: &'static str,
    /// What is wrong and what to do.
    pub message: String,
}

impl KvParams {
    /// Refuses values that cannot run or measure nothing, naming the parameter.
    pub fn validate(&self) -> Result<Distribution, ParamError> {
        let bad = |key, message: String| Err(ParamError { key, message });
        if self.num == 0 {
            return bad("num", "must be at least 1".into());
        }
        if self.key_size < plumb_workloads::KeyFormat::MIN_SIZE || self.key_size > 1 << 16 {
            return bad(
                "key_size",
                "must be between 8 (a 64-bit key number) and 65536".into(),
            );
        }
        let (min_value, max_value) = (8, MAX_VALUE_SIZE);
        if self.value_size < min_value || self.value_size > max_value {
            return bad(
                "value_size",
                format!("must be between {min_value} (the checksum and key tag) and {max_value}"),
            );
        }
        for (key, t) in [
            ("threads", Some(self.threads)),
            ("fill_threads", self.fill_threads),
        ] {
            if t.is_some_and(|t| t == 0 || t > 1024) {
                return bad(key, "must be between 1 and 1024".into());
            }
        }
        if self.duration.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
            return bad("duration", "must be a number of seconds > 0".into());
        }
        if self.ops == Some(0) {
            return bad("ops", "must be at least 1".into());
        }
        if !(self.warmup >= 0.0 && self.warmup.is_finite()) {
            return bad("warmup", "must be a number of seconds >= 0".into());
        }
        if !(self.write_rate_mb > 0.0 && self.write_rate_mb.is_finite()) {
            return bad("write_rate_mb", "must be > 0 MB/s".into());
        }
        pace_of(
            self.rate,
            self.rate_profile.as_deref(),
            self.arrivals,
            self.rate_search.as_deref(),
        )?;
        clients_of(
            self.threads_profile.as_deref(),
            self.rate.is_some() || self.rate_profile.is_some() || self.rate_search.is_some(),
        )?;
        self.mix_phases_ok()?;
        ycsb_props_ok(&self.ycsb)?;
        if self.batch_size == 0 || self.batch_size > 4096 {
            return bad("batch_size", "must be between 1 and 4096".into());
        }
        let d: Distribution = self.distribution.parse().map_err(|e| ParamError {
            key: "distribution",
            message: format!("{e}"),
        })?;
        if let Distribution::HotSet { k } = d {
            if k > self.num {
                return bad(
                    "distribution",
                    format!("hotset:{k} is larger than num {}", self.num),
                );
            }
        }
        Ok(d)
    }

    /// How long a step of `kind` is allowed to run (`None`: until its op quota).
    pub fn step_duration(&self, plan: &StepPlan) -> Option<Duration> {
        let kind = plan.kind;
        let profiled = self
            .step_clients(kind)
            .map(|c| c.secs())
            .filter(|s| s.is_finite())
            .or_else(|| self.phased_mix(kind)?.phases_secs());
        match (self.duration, self.ops) {
            _ if kind.full_pass() => None,
            _ if profiled.is_some() => profiled.map(Duration::from_secs_f64),
            (Some(d), _) => Some(Duration::from_secs_f64(d)),
            (None, None) if !kind.is_fill() && plan.ops_fraction_of_num.is_none() => {
                Some(Duration::from_secs_f64(QUICK_SECS))
            }
            _ => None,
        }
    }

    /// The open-loop load of a step of `kind`: fills and maintenance run closed-loop
    /// (their work is a quota, not an offered rate).
    pub fn step_pace(&self, kind: StepKind) -> Option<Pace> {
        if let Some(text) = self.phased_mix(kind).and_then(|m| m.rate_profile()) {
            return Some(Pace::profiled(text.parse().ok()?, self.arrivals));
        }
        let p = pace_of(self.rate, self.rate_profile.as_deref(), self.arrivals, None)
            .ok()?
            .0?;
        (!kind.is_fill() && !kind.is_maintenance()).then_some(p)
    }

    /// The YCSB properties as (name, value) pairs.
    pub fn ycsb_props(&self) -> Result<Vec<(String, String)>, ParamError> {
        ycsb_props(&self.ycsb)
    }

    /// Threads of a step of `kind`.
    pub fn step_threads(&self, kind: StepKind) -> usize {
        if kind.is_fill() {
            self.fill_threads.unwrap_or(self.threads)
        } else if let Some(c) = self.step_clients(kind) {
            c.peak()
        } else {
            self.threads
        }
    }

    /// The threads profile of a step of `kind`: fills and maintenance run their
    /// threads throughout (their work is a quota).
    pub fn step_clients(&self, kind: StepKind) -> Option<ThreadsProfile> {
        if let Some(text) = self.phased_mix(kind).and_then(|m| m.threads_profile()) {
            return text.parse().ok();
        }
        let c = clients_of(self.threads_profile.as_deref(), false).ok()??;
        (!kind.is_fill() && !kind.is_maintenance()).then_some(c)
    }

    /// Bytes of keys and values when every key is live.
    pub fn data_bytes(&self) -> u64 {
        self.num * (self.key_size + self.value_size) as u64
    }
}

/// The target of a run: its name in the suite (unique there), what it is (an engine
/// or a server), and the memory it may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetPlan {
    /// The suite's name for it, e.g. `leveled` or `pg@16` (the engine name for `plumb kv`).
    pub name: String,
    /// The engine and its options, or the server.
    #[serde(flatten)]
    pub subject: Subject,
    /// A memory limit, MiB, for what holds the data (the engine's process or the
    /// server's processes), page cache included: enforced by a cgroup, so data larger
    /// than it is read from the device (an honest IO-bound size for every engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Drop the OS page cache before each measured step (root only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_caches: bool,
    /// The engine's build to run (`8.5.3`, or `tree:/path` for a RocksDB source tree):
    /// a plumb built against it (scripts/build-rocksdb-release.sh) runs the run; `None`
    /// is the build this binary links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
}

/// The smallest memory limit, MiB: below it a server or an engine with plumb beside it
/// cannot start, which says nothing about IO-bound sizes.
pub const MIN_MEMORY_MB: u64 = 16;

/// Refuses a memory limit too small to run in.
pub fn check_memory_mb(mb: Option<u64>) -> Result<(), ParamError> {
    match mb {
        Some(m) if m < MIN_MEMORY_MB => Err(ParamError {
            key: "memory_mb",
            message: format!("{m}: give at least {MIN_MEMORY_MB} MiB"),
        }),
        _ => Ok(()),
    }
}

impl TargetPlan {
    /// An embedded engine target without a memory limit.
    pub fn engine(name: impl Into<String>, engine: EngineSpec) -> TargetPlan {
        TargetPlan {
            name: name.into(),
            subject: Subject::Engine(engine),
            memory_mb: None,
            drop_caches: false,
            release: None,
        }
    }

    /// A server target without a memory limit.
    pub fn server(name: impl Into<String>, server: ServerSpec) -> TargetPlan {
        TargetPlan {
            name: name.into(),
            subject: Subject::Server(server),
            memory_mb: None,
            drop_caches: false,
            release: None,
        }
    }

    /// The embedded engine, when it is one.
    pub fn engine_spec(&self) -> Option<&EngineSpec> {
        match &self.subject {
            Subject::Engine(e) => Some(e),
            _ => None,
        }
    }

    /// Whether this binary runs the target's engine build: no `release`, or the release
    /// (or source tree) it links. Another release runs in the plumb built against it.
    pub fn runs_in_this_build(&self) -> bool {
        match (&self.release, self.engine_spec()) {
            (Some(r), Some(e)) => e.linked_release().as_deref() == Some(r.as_str()),
            _ => true,
        }
    }

    /// The server, when it is one.
    pub fn server_spec(&self) -> Option<&ServerSpec> {
        match &self.subject {
            Subject::Server(s) => Some(s),
            _ => None,
        }
    }

    /// What it is, for tables: the engine's name, the server's label, `host`.
    pub fn kind_label(&self) -> String {
        match &self.subject {
            Subject::Engine(e) => e.name().to_string(),
            Subject::Server(s) => s.label(),
            Subject::Host(_) => "host".into(),
        }
    }
}

/// A named workload of one family.
/// The key-value family's work: db_bench's steps and the knobs they run with (num,
/// threads, durations …, sweep values applied), as the other families hold theirs.
/// Its stored form is the steps alone (`"steps": […]`); the knobs are stored beside the
/// workload, where they always were ([`StoredRunPlan`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KvWork {
    /// The steps, in order.
    pub steps: Vec<StepPlan>,
    /// Their knobs.
    pub params: KvParams,
}

impl Serialize for KvWork {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.steps.serialize(s)
    }
}

impl<'de> Deserialize<'de> for KvWork {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(KvWork {
            steps: Vec::deserialize(d)?,
            params: KvParams::default(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadPlan {
    /// `x3`, `default`, a suite's name, or the `--benchmarks` list.
    pub name: String,
    /// The family's steps and knobs.
    #[serde(flatten)]
    pub family: Family,
}

impl WorkloadPlan {
    /// db_bench's steps and their knobs, when the workload is key-value.
    pub fn kv(&self) -> Option<&KvWork> {
        match &self.family {
            Family::Kv(w) => Some(w),
            _ => None,
        }
    }

    /// db_bench's steps, when the workload is key-value.
    pub fn kv_steps(&self) -> Option<&[StepPlan]> {
        self.kv().map(|w| w.steps.as_slice())
    }

    /// The key-value knobs, when the workload is key-value.
    pub fn kv_params(&self) -> Option<&KvParams> {
        self.kv().map(|w| &w.params)
    }

    /// A key-value workload: db_bench's steps with their knobs.
    pub fn kv_with(
        name: impl Into<String>,
        steps: Vec<StepPlan>,
        params: KvParams,
    ) -> WorkloadPlan {
        WorkloadPlan {
            name: name.into(),
            family: Family::Kv(KvWork { steps, params }),
        }
    }
}

/// One run: a workload on a target at one size, thread count and repeat. Stored and
/// hashed in [`StoredRunPlan`]'s form, the key-value knobs beside the workload as they
/// were before they moved into [`KvWork`], so stored plans keep their hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "StoredRunPlan", from = "StoredRunPlan")]
pub struct RunPlan {
    /// The suite it belongs to (`kv` for `plumb kv`).
    pub suite: String,
    /// Its place in the matrix as a label, e.g. `leveled/reads/1M/t2`; repeats of one
    /// variant share it, so reports group them.
    pub variant: String,
    /// What is measured.
    pub target: TargetPlan,
    /// What it does.
    pub workload: WorkloadPlan,
    /// The suite's name for the size, when the suite sweeps sizes.
    pub size: Option<String>,
    /// Every key generator derives its seed from this.
    pub seed: u64,
    /// Which repeat of the variant, from 0.
    pub repeat: u32,
    /// Runs on the database already in the data dir instead of a fresh one.
    #[serde(default)]
    pub use_existing_db: bool,
    /// The tool the run was measured under (`callgrind`, by `plumb icount`): its times
    /// and rates are that tool's, so its runs make a history of their own (the plan's
    /// identity differs) and are never judged against native ones; its instructions
    /// per op are exact.
    pub under: Option<String>,
}

/// A [`RunPlan`] as it is stored and hashed: field for field the form plumb has always
/// written, with the key-value knobs (`params`) beside the workload (their defaults
/// for the other families). Runs stored before the knobs moved into [`KvWork`] read
/// back into it, and every plan hashes as it did.
#[derive(Serialize, Deserialize)]
struct StoredRunPlan {
    suite: String,
    variant: String,
    target: TargetPlan,
    workload: WorkloadPlan,
    size: Option<String>,
    #[serde(default)]
    params: KvParams,
    seed: u64,
    repeat: u32,
    #[serde(default)]
    use_existing_db: bool,
    // Absent for native runs, so their plans hash as they always have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    under: Option<String>,
}

impl From<RunPlan> for StoredRunPlan {
    fn from(p: RunPlan) -> Self {
        let params = p.workload.kv_params().cloned().unwrap_or_default();
        StoredRunPlan {
            suite: p.suite,
            variant: p.variant,
            target: p.target,
            workload: p.workload,
            size: p.size,
            params,
            seed: p.seed,
            repeat: p.repeat,
            use_existing_db: p.use_existing_db,
            under: p.under,
        }
    }
}

impl From<StoredRunPlan> for RunPlan {
    fn from(s: StoredRunPlan) -> Self {
        let mut workload = s.workload;
        if let Family::Kv(w) = &mut workload.family {
            w.params = s.params;
        }
        RunPlan {
            suite: s.suite,
            variant: s.variant,
            target: s.target,
            workload,
            size: s.size,
            seed: s.seed,
            repeat: s.repeat,
            use_existing_db: s.use_existing_db,
            under: s.under,
        }
    }
}

impl RunPlan {
    /// The one run of a command that is not a suite (`plumb kv`, `sql`, `ib`, `probe`,
    /// `durability`): suite `suite`, the target's name as its variant, no size axis,
    /// repeat 0 on a fresh database, measured natively.
    pub fn single(suite: &str, target: TargetPlan, workload: WorkloadPlan, seed: u64) -> RunPlan {
        RunPlan {
            suite: suite.to_string(),
            variant: target.name.clone(),
            target,
            workload,
            size: None,
            seed,
            repeat: 0,
            use_existing_db: false,
            under: None,
        }
    }

    /// The run's data size and concurrency as its family counts them: keys and
    /// threads (kv), rows per table and client threads (sql), rows loaded and
    /// clients (ib). Sweeps and plan tables read them.
    pub fn size_and_concurrency(&self) -> (u64, usize) {
        match &self.workload.family {
            Family::Kv(w) => (w.params.num, w.params.threads),
            Family::Sql(w) => (w.params.table_size, w.params.threads),
            Family::Ib(w) => (w.params.rows, w.params.clients as usize),
            Family::Probe(_) | Family::Durability(_) => (0, 0),
        }
    }

    /// A stable identity: equal plans have equal hashes, on any machine, so an
    /// interrupted suite knows which runs it already finished.
    pub fn hash(&self) -> String {
        hash_of(self)
    }
}

/// Why `engine` cannot run `steps` with `params`, if it cannot (the first step it
/// lacks, or an entry larger than it stores), so such a plan is refused before anything
/// runs.
pub fn refused(engine: &EngineSpec, steps: &[StepPlan], params: &KvParams) -> Option<String> {
    let caps = engine.capabilities();
    if let Some(max) = caps.max_entry_bytes {
        let entry = params.key_size as u64 + params.value_size as u64;
        if entry > max {
            return Some(format!(
                "key_size + value_size is {entry} bytes; the {} engine stores at most {max} \
                 per entry",
                engine.name()
            ));
        }
    }
    steps.iter().find_map(|s| {
        let lacks = match s.kind {
            StepKind::RevRange | StepKind::RevRangeWhileWriting if !caps.reverse_scan => {
                "reverse range scans"
            }
            StepKind::DeleteRandom if !caps.delete => "deletes",
            _ => return None,
        };
        Some(format!(
            "step {}: the {} engine has no {lacks}; drop the step or pick another engine",
            s.name,
            engine.name()
        ))
    })
}

/// The hash of a value's JSON form, as 16 hex digits.
pub fn hash_of<T: Serialize>(v: &T) -> String {
    let bytes = serde_json::to_vec(v).expect("plans serialise");
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
}

/// A whole suite, expanded: every run in the order it will run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The suite's name.
    pub name: String,
    /// The hash of the suite's definition (not of its clock seed), so `--resume` finds
    /// the interrupted attempt of the same file.
    pub definition_hash: String,
    /// Where run data dirs are made (`None`: the temp dir).
    pub dir: Option<std::path::PathBuf>,
    /// The seed the order was shuffled with, when it was.
    pub shuffle_seed: Option<u64>,
    /// The runs, in order.
    pub runs: Vec<RunPlan>,
    /// What `--scale` changed, one line each (empty at the suite's own scale).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaled: Vec<String>,
}

impl Plan {
    /// How many variants (distinct matrix cells) the plan holds.
    pub fn variants(&self) -> usize {
        let mut v: Vec<&str> = self.runs.iter().map(|r| r.variant.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    }

    /// The most runs any one variant has (its repeats): with `--until`, the most a
    /// variant may take.
    pub fn most_repeats(&self) -> usize {
        let mut per_variant: std::collections::HashMap<&str, usize> = Default::default();
        for r in &self.runs {
            *per_variant.entry(r.variant.as_str()).or_default() += 1;
        }
        per_variant.values().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunPlan {
        RunPlan {
            suite: "s".into(),
            variant: "a".into(),
            target: TargetPlan::engine("null", EngineSpec::Null),
            workload: WorkloadPlan::kv_with(
                "w",
                plumb_workloads::steps::parse_benchmarks("fillseq,readrandom").unwrap(),
                KvParams {
                    num: 12_345,
                    threads: 3,
                    ..KvParams::default()
                },
            ),
            size: None,
            seed: 7,
            repeat: 0,
            use_existing_db: false,
            under: None,
        }
    }

    #[test]
    fn hash_follows_content() {
        let a = run();
        assert_eq!(a.hash(), run().hash());
        let mut b = run();
        b.repeat = 1;
        assert_ne!(a.hash(), b.hash());
        let back: RunPlan = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.hash(), a.hash());
    }

    #[test]
    fn a_kv_plan_keeps_the_form_and_hash_it_was_stored_with() {
        // The JSON form of a run plan as plumb stored it before servers and the other
        // families joined the plan (target.engine, workload.steps): it must read, and
        // hash, the same, so old runs rerun and old suites resume.
        let a = run();
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["target"]["engine"]["engine"], "null", "{v}");
        assert_eq!(v["workload"]["steps"][1]["name"], "readrandom", "{v}");
        assert!(v["target"].get("memory_mb").is_none(), "{v}");
        // The text of the old struct form, field for field.
        let old = format!(
            "{{\"suite\":\"s\",\"variant\":\"a\",\"target\":{{\"name\":\"null\",\"engine\":{}}},\
             \"workload\":{{\"name\":\"w\",\"steps\":{}}},\"size\":null,\"params\":{},\
             \"seed\":7,\"repeat\":0,\"use_existing_db\":false}}",
            serde_json::to_string(&EngineSpec::Null).unwrap(),
            serde_json::to_string(a.workload.kv_steps().unwrap()).unwrap(),
            serde_json::to_string(a.workload.kv_params().unwrap()).unwrap(),
        );
        // The knobs are stored beside the workload, where they were before they moved
        // into the key-value family's work.
        assert_eq!(v["params"]["num"], 12_345, "{v}");
        assert!(v["workload"].get("params").is_none(), "{v}");
        assert_eq!(serde_json::to_string(&a).unwrap(), old);
        let back: RunPlan = serde_json::from_str(&old).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn server_plans_round_trip() {
        let mut a = run();
        a.target = TargetPlan::server(
            "pg@16",
            ServerSpec {
                server: "postgres@16".into(),
                engine: None,
                basedir: None,
                config: None,
                waldir: None,
                ram_sized: false,
                cache_mb: 128,
                url: None,
            },
        );
        a.target.memory_mb = Some(256);
        a.workload = WorkloadPlan {
            name: "micro".into(),
            family: Family::Sql(crate::family::SqlWork {
                steps: plumb_workloads::sql::parse_steps("load,point-query").unwrap(),
                params: crate::family::SqlParams::default(),
            }),
        };
        let j = serde_json::to_string(&a).unwrap();
        let back: RunPlan = serde_json::from_str(&j).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.hash(), a.hash());
        assert_eq!(back.target.server_spec().unwrap().server, "postgres@16");
        // Another family's plan stores the key-value knobs at their defaults, as it
        // always did, so its hash is the one it was stored with.
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(
            v["params"],
            serde_json::to_value(KvParams::default()).unwrap()
        );
    }

    #[test]
    fn defaults_and_validation() {
        let p = KvParams::default();
        assert_eq!(
            (p.num, p.key_size, p.value_size, p.threads),
            (200_000, 20, 400, 1)
        );
        assert!(p.validate().is_ok());
        let e = KvParams {
            num: 0,
            ..p.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "num");
        let e = KvParams {
            distribution: "hotset:999999999".into(),
            ..p.clone()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "distribution");
        let e = KvParams {
            fill_threads: Some(0),
            ..p
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "fill_threads");
    }

    #[test]
    fn an_engine_refuses_what_it_cannot_store_before_anything_runs() {
        let steps = plumb_workloads::steps::parse_benchmarks("fillrandom,revrange").unwrap();
        let splinter = EngineSpec::default_for("splinterdb").unwrap();
        assert_eq!(refused(&splinter, &steps, &KvParams::default()), None);
        let big = KvParams {
            value_size: 4096,
            ..KvParams::default()
        };
        let why = refused(&splinter, &steps, &big).unwrap();
        assert!(why.contains("4116") && why.contains("splinterdb"), "{why}");
        // No limit on the others.
        assert_eq!(
            refused(&EngineSpec::default_for("lmdb").unwrap(), &steps, &big),
            None
        );
    }
}
