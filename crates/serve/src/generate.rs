//! A generated history of nightly runs, written through the store's own write API
//! (`begin_run`, `add_step`, `set_group`, `finish_run`), so `plumb check`, `history`,
//! `show` and the served pages read it exactly as they read real runs.
//!
//! Tests need a history with one change of known size at a known night, and the
//! page-time bench needs a team's store (10,000 runs, a million interval rows) without
//! running 10,000 benchmarks. Every figure is derived from one level per run (ops/s)
//! and a seeded generator, so the same [`Spec`] always writes the same figures: a test
//! built on it cannot fail by chance.
//!
//! What makes it read as real:
//! - each plan is a stored `plan` JSON in the shape `plumb kv` stores (suite, variant,
//!   target, workload, params, seed, repeat), equal across nights but for `seed` and
//!   `repeat`, so [`plumb_report::base::plan_identity`] puts every night of a plan in
//!   one history;
//! - each night's repeats are one group (`set_group`), nights start one day apart;
//! - a step's CPU per op follows its time per op (a single-threaded, cached step is
//!   CPU-bound), so a change of throughput by `factor` shows as user CPU per op rising
//!   by `1/factor`: the cost `check` and `history` name.

use plumb_core::{HwCounters, Interval, Qos, RunStatus, StepStatus, StepSummary, Verification};
use plumb_host::{HostSnapshot, Inventory};
use plumb_store::{Kind, NewRun, StepRecord, Store, StoreError};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// How many plans (each its own history: another block cache size, another level).
    pub plans: usize,
    /// Nights per plan: groups of repeats, one day apart.
    pub groups: usize,
    /// Runs per night (the group's repeats).
    pub repeats: usize,
    /// The steps of every run, by db_bench name (`fillseq`, `readrandom` …).
    pub steps: Vec<String>,
    /// 1-second interval rows per step (0: none; the step then lasts 10 s).
    pub intervals: usize,
    /// The one change the history holds, if any.
    pub change: Option<Change>,
    /// The host every run ran on (`inventory.hostname`).
    pub host: String,
    /// The tag of every run.
    pub tag: String,
    /// The first night's start (RFC 3339 UTC, whole seconds).
    pub start: String,
    /// Seeds the noise: the same spec writes the same figures.
    pub seed: u64,
}

impl Default for Spec {
    /// One plan, a week of nights of three repeats of `readrandom`, 100 intervals a
    /// step, no change: the smallest history `check` judges with a full base.
    fn default() -> Self {
        Spec {
            plans: 1,
            groups: 7,
            repeats: 3,
            steps: vec!["readrandom".into()],
            intervals: 100,
            change: None,
            host: "bench-1".into(),
            tag: "nightly".into(),
            start: "2026-11-01T02:00:00Z".into(),
            seed: 1,
        }
    }
}

/// A change of level: from night `at_group` on, `step` of plan `plan` runs at `factor`
/// times its ops/s (0.8: 20% fewer), its user CPU per op `1/factor` times as high.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Which plan, from 0.
    pub plan: usize,
    /// The first night at the new level, from 0.
    pub at_group: usize,
    /// Which step.
    pub step: String,
    /// New level over old.
    pub factor: f64,
}

/// What was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// Per plan, in plan order.
    pub plans: Vec<GeneratedPlan>,
}

/// One plan's history as written.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedPlan {
    /// Its identity ([`plumb_report::base::plan_identity`]): what `/history?plan=`
    /// and the changes table name it by.
    pub identity: String,
    /// Its variant label (`rocksdb/readrandom/cache64M`).
    pub variant: String,
    /// Run ids per night, oldest first; each night's first id is its group id.
    pub groups: Vec<Vec<i64>>,
}

impl Generated {
    /// Every run written, in id order.
    pub fn runs(&self) -> Vec<i64> {
        let mut all: Vec<i64> = self
            .plans
            .iter()
            .flat_map(|p| p.groups.iter().flatten().copied())
            .collect();
        all.sort_unstable();
        all
    }
}

/// A spec that cannot be written, or a store that refused a write.
#[derive(Debug, Error)]
pub enum GenerateError {
    /// The spec asks for something that is not a run plumb could have made.
    #[error("generate: {0}")]
    Spec(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Writes the whole history: night by night, and within a night plan by plan, so ids
/// grow with time as a fleet's nightly runs would (the newest run is the last plan's).
pub fn history(store: &mut Store, spec: &Spec) -> Result<Generated, GenerateError> {
    validate(spec)?;
    let mut plans: Vec<GeneratedPlan> = (0..spec.plans)
        .map(|p| GeneratedPlan {
            identity: identity(spec, p),
            variant: variant(spec, p),
            groups: Vec::with_capacity(spec.groups),
        })
        .collect();
    for g in 0..spec.groups {
        for (p, plan) in plans.iter_mut().enumerate() {
            let ids = night(store, spec, p, g, factor_at(spec, p, g))?;
            plan.groups.push(ids);
        }
    }
    Ok(Generated { plans })
}

/// Adds one more night of plan `plan` after the nights the store already holds of it,
/// at `factor` times the base level (as [`night`] applies it). Returns the night's run
/// ids. A test uses it to add "the next night" after a change was triaged.
pub fn append_group(
    store: &mut Store,
    spec: &Spec,
    plan: usize,
    factor: f64,
) -> Result<Vec<i64>, GenerateError> {
    validate(spec)?;
    if plan >= spec.plans {
        return Err(GenerateError::Spec(format!(
            "plan {plan}: the spec has {} plan(s)",
            spec.plans
        )));
    }
    let id = identity(spec, plan);
    let nights: BTreeSet<i64> = store
        .runs(usize::MAX >> 1)?
        .into_iter()
        .filter(|r| plumb_report::base::plan_identity(r.plan.as_ref()).as_deref() == Some(&id))
        .map(|r| r.group_id.unwrap_or(r.id))
        .collect();
    night(store, spec, plan, nights.len(), factor)
}

/// Writes night `group` of plan `plan` (its start is the spec's plus `group` days):
/// `spec.repeats` runs as one group at `factor` times the base level. The factor moves
/// the change's step when the spec's change is on this plan (the other steps stay at
/// their level, as a regression in one code path leaves the rest alone), else every
/// step. Returns the run ids (the first is the group id).
pub fn night(
    store: &mut Store,
    spec: &Spec,
    plan: usize,
    group: usize,
    factor: f64,
) -> Result<Vec<i64>, GenerateError> {
    validate(spec)?;
    let change = spec.change.as_ref().filter(|c| c.plan == plan);
    night_at(store, spec, plan, group, |step| match change {
        Some(c) if c.step != step => 1.0,
        _ => factor,
    })
}

/// The level `history` writes night `group` of plan `plan` at: the change's factor
/// from its night on, else 1.
fn factor_at(spec: &Spec, plan: usize, group: usize) -> f64 {
    match &spec.change {
        Some(c) if c.plan == plan && group >= c.at_group => c.factor,
        _ => 1.0,
    }
}

fn validate(spec: &Spec) -> Result<(), GenerateError> {
    let bad = |m: String| Err(GenerateError::Spec(m));
    if spec.plans == 0 || spec.repeats == 0 {
        return bad("a history needs at least one plan and one repeat".into());
    }
    if spec.steps.is_empty() {
        return bad("a run needs at least one step".into());
    }
    for s in &spec.steps {
        if s.parse::<Kind>().is_err() {
            return bad(format!("step {s:?} is not a step plumb runs"));
        }
    }
    if parse_time(&spec.start).is_none() {
        return bad(format!(
            "start {:?}: give RFC 3339 UTC, e.g. 2026-11-01T02:00:00Z",
            spec.start
        ));
    }
    if let Some(c) = &spec.change {
        if c.plan >= spec.plans {
            return bad(format!(
                "change on plan {}: only {} plan(s)",
                c.plan, spec.plans
            ));
        }
        if !spec.steps.contains(&c.step) {
            return bad(format!("change on step {:?}: not one of the steps", c.step));
        }
        if !(c.factor.is_finite() && c.factor > 0.0) {
            return bad(format!("change factor {}: give a positive level", c.factor));
        }
    }
    Ok(())
}

/// The plan's block cache, MiB: what tells the plans apart.
fn cache_mb(plan: usize) -> u64 {
    64 * (plan as u64 + 1)
}

fn variant(spec: &Spec, plan: usize) -> String {
    format!("rocksdb/{}/cache{}M", spec.steps.join("+"), cache_mb(plan))
}

/// The params `plumb kv` stores beside the workload.
fn params(spec: &Spec) -> serde_json::Value {
    serde_json::json!({
        "num": 1_000_000u64,
        "key_size": 20,
        "value_size": 400,
        "threads": 1,
        "fill_threads": null,
        "duration": step_secs(spec),
        "ops": null,
        "warmup": 0.0,
        "seek_nexts": 10,
    })
}

/// The stored plan of one run: equal for every run of the plan but for seed and repeat.
fn plan_json(spec: &Spec, plan: usize, seed: u64, repeat: usize) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = spec
        .steps
        .iter()
        .map(|s| serde_json::json!({"kind": s, "name": s, "ops_fraction_of_num": null}))
        .collect();
    serde_json::json!({
        "suite": "kv",
        "variant": variant(spec, plan),
        "target": {
            "name": "rocksdb",
            "engine": {
                "engine": "rocksdb",
                "options": {
                    "block_cache_mb": cache_mb(plan).to_string(),
                    "compression": "lz4",
                },
            },
        },
        "workload": {"name": spec.steps.join(","), "steps": steps},
        "size": null,
        "params": params(spec),
        "seed": seed,
        "repeat": repeat,
        "use_existing_db": false,
    })
}

fn identity(spec: &Spec, plan: usize) -> String {
    plumb_report::base::plan_identity(Some(&plan_json(spec, plan, 0, 0)))
        .expect("a generated plan is an object")
}

fn step_secs(spec: &Spec) -> f64 {
    if spec.intervals == 0 {
        10.0
    } else {
        spec.intervals as f64
    }
}

/// A step's base level, ops/s, on plan 0: about what RocksDB does on one thread here.
fn base_ops_sec(step: &str) -> f64 {
    match step {
        "fillseq" => 620_000.0,
        "fillrandom" | "filluniquerandom" => 310_000.0,
        "overwrite" => 260_000.0,
        "readrandom" => 240_000.0,
        "multireadrandom" => 180_000.0,
        "readseq" => 2_900_000.0,
        "fwdrange" | "revrange" => 70_000.0,
        "readwhilewriting" => 190_000.0,
        _ => 150_000.0,
    }
}

fn writes(step: &str) -> bool {
    step.starts_with("fill") || matches!(step, "overwrite" | "deleterandom")
}

/// The user and system CPU per op at the step's base level: the system part (reads,
/// syscalls) stays when the engine's own code gets slower, the user part moves.
fn cpu_split(step: &str, base_time_us: f64) -> (f64, f64) {
    let cpu = base_time_us * 0.97;
    let sys = cpu * if writes(step) { 0.18 } else { 0.08 };
    (cpu - sys, sys)
}

fn night_at(
    store: &mut Store,
    spec: &Spec,
    plan: usize,
    group: usize,
    factor_of: impl Fn(&str) -> f64,
) -> Result<Vec<i64>, GenerateError> {
    let day = parse_time(&spec.start).expect("validated") + group as i64 * 86_400;
    let mut ids = Vec::with_capacity(spec.repeats);
    for repeat in 0..spec.repeats {
        let seed = mix(&[spec.seed, plan as u64, group as u64, repeat as u64]);
        let mut rng = Rng::new(seed);
        let start = day + repeat as i64 * 1_200;
        let run = store.begin_run(&new_run(spec, plan, seed, repeat, start))?;
        let first = *ids.first().unwrap_or(&run);
        store.set_group(run, first, repeat as i64)?;
        let mut at = start as f64 + 2.0;
        for (seq, step) in spec.steps.iter().enumerate() {
            let (rec, ivs) = step_of(
                spec,
                seq,
                step,
                plan_level(plan),
                factor_of(step),
                at,
                &mut rng,
            );
            at += rec.summary.secs + 1.5;
            store.add_step(run, &rec, &ivs)?;
        }
        store.finish_run(run, RunStatus::Ok, &rfc3339(at as i64 + 1))?;
        ids.push(run);
    }
    Ok(ids)
}

/// Plans differ in level as their block caches do: a few percent apart.
fn plan_level(plan: usize) -> f64 {
    1.0 + 0.04 * (plan % 10) as f64
}

fn new_run(spec: &Spec, plan: usize, seed: u64, repeat: usize, start: i64) -> NewRun {
    let cache = cache_mb(plan);
    let secs = step_secs(spec);
    let benchmarks = spec.steps.join(",");
    let mut options: BTreeMap<String, String> = [
        ("engine", "rocksdb".to_string()),
        ("benchmarks", benchmarks.clone()),
        ("num", "1000000".into()),
        ("key_size", "20".into()),
        ("value_size", "400".into()),
        ("threads", "1".into()),
        ("duration", format!("{secs}")),
        ("block_cache_mb", cache.to_string()),
        ("compression", "lz4".into()),
        ("write_buffer_size", "67108864".into()),
        ("max_background_jobs", "2".into()),
        ("variant", variant(spec, plan)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    options.insert("seed".into(), seed.to_string());
    let plan_value = plan_json(spec, plan, seed, repeat);
    let plan_hash = format!("{:016x}", fnv(plan_value.to_string().as_bytes()));
    NewRun {
        tag: Some(spec.tag.clone()),
        command: format!(
            "plumb kv --engine rocksdb --benchmarks {benchmarks} --num 1000000 --duration {secs} \
             --block-cache-mb {cache} --tag {} --seed {seed}",
            spec.tag
        ),
        workload: benchmarks,
        engine: "rocksdb".into(),
        engine_version: "10.4.2".into(),
        plumb_version: env!("CARGO_PKG_VERSION").into(),
        git_hash: None,
        options,
        seed,
        started_at: rfc3339(start),
        data_dir: Some(format!("/var/tmp/plumb-nightly/{}", variant(spec, plan))),
        device: Some("vda".into()),
        host: Some(host(spec, start)),
        group_id: None,
        repeat_index: Some(repeat as i64),
        suite_id: None,
        plan: Some(plan_value),
        plan_hash: Some(plan_hash),
    }
}

fn host(spec: &Spec, start: i64) -> HostSnapshot {
    let mut inventory = Inventory {
        hostname: Some(spec.host.clone()),
        kernel: Some("6.1.0-28-amd64".into()),
        distribution: Some("Debian GNU/Linux 12 (bookworm)".into()),
        numa_nodes: Some(1),
        core_pmu: Some(false),
        ..Inventory::default()
    };
    inventory.cpu.model = Some("AMD EPYC 7R13 Processor".into());
    inventory.cpu.vendor = Some("AuthenticAMD".into());
    inventory.cpu.sockets = Some(1);
    inventory.cpu.cores = Some(2);
    inventory.cpu.threads = Some(2);
    inventory.cpu.hypervisor_flag = true;
    inventory.clocksource.current = Some("tsc".into());
    inventory.memory.total_bytes = Some(24 << 30);
    inventory.memory.thp_enabled = Some("madvise".into());
    HostSnapshot {
        taken_at_unix: start.max(0) as u64,
        checks: vec![
            plumb_host::checks::governor(None),
            plumb_host::checks::thp(Some("madvise")),
            plumb_host::checks::pmu(Some(false)),
        ],
        inventory,
        ..HostSnapshot::default()
    }
}

/// One step at `factor` × the plan's level of the step's base ops/s, ±1% a run and
/// ±2% an interval.
fn step_of(
    spec: &Spec,
    seq: usize,
    step: &str,
    plan_level: f64,
    factor: f64,
    at: f64,
    rng: &mut Rng,
) -> (StepRecord, Vec<Interval>) {
    let base = base_ops_sec(step) * plan_level;
    let run_level = base * factor * (1.0 + 0.01 * rng.sym());
    let (usr0, sys0) = cpu_split(step, 1e6 / base);
    let write = writes(step);
    let n = spec.intervals;
    let mut ivs = Vec::with_capacity(n);
    let mut ops: u64 = 0;
    let secs = step_secs(spec);
    let per_op_of = |ops_sec: f64| {
        let t = 1e6 / ops_sec;
        // The user part absorbs what the step lost (the engine's code got slower); the
        // system part stays the base level's.
        let usr = (t * 0.97 - sys0).max(usr0 * 0.5);
        (t, usr, sys0)
    };
    for i in 0..n {
        let ops_sec = run_level * (1.0 + 0.02 * rng.sym());
        let n_ops = ops_sec.round().max(1.0) as u64;
        ops += n_ops;
        let (t, usr, sys) = per_op_of(n_ops as f64);
        ivs.push(Interval {
            t: (i + 1) as f64,
            secs: 1.0,
            ops: n_ops,
            ops_sec: n_ops as f64,
            p50_us: Some(t * 0.86),
            p99_us: Some(t * 2.7 * (1.0 + 0.05 * rng.sym())),
            pmax_us: Some(t * 180.0 * (1.0 + 0.3 * rng.sym())),
            cpu_us: Some((usr + sys) * n_ops as f64),
            rd: Some(0),
            rkb: Some(0.0),
            wr: Some(if write { n_ops / 600 } else { 0 }),
            wkb: Some(if write { n_ops as f64 * 0.46 } else { 0.0 }),
            device: None,
            stall_us: Some(0),
            rss_gb: Some(0.12 + cache_gb(spec, seq) + 0.002 * i as f64 / n.max(1) as f64),
            steal_pct: Some(0.1 * (1.0 + rng.sym()).max(0.0)),
            outside_cpu_pct: Some(0.6 * (1.0 + 0.5 * rng.sym())),
            target_ops_sec: None,
            threads: None,
        });
    }
    if n == 0 {
        ops = (run_level * secs).round() as u64;
    }
    let ops_sec = ops as f64 / secs;
    let (t, usr, sys) = per_op_of(ops_sec);
    let jitter = 1.0 + 0.003 * rng.sym();
    let summary = StepSummary {
        ops,
        secs,
        ops_sec,
        mb_sec: Some(ops_sec * 420.0 / 1e6),
        p50_us: Some(t * 0.86 * jitter),
        p99_us: Some(t * 2.7 * jitter),
        p999_us: Some(t * 6.1 * jitter),
        p9999_us: Some(t * 14.0 * jitter),
        pmax_us: Some(t * 420.0 * (1.0 + 0.2 * rng.sym())),
        cpu_us_op: Some((usr + sys) * jitter),
        usr_us_op: Some(usr * jitter),
        sys_us_op: Some(sys * jitter),
        harness_us_op: Some(0.21 * (1.0 + 0.01 * rng.sym())),
        csw_op: Some(0.0004 * (1.0 + 0.1 * rng.sym())),
        majflt_op: Some(0.0),
        rd_op: Some(0.0),
        rkb_op: Some(0.0),
        wr_op: Some(if write { 1.0 / 600.0 } else { 0.0 }),
        wkb_op: Some(if write { 0.46 } else { 0.0 }),
        w_amp: write.then_some(1.12),
        w_amp_engine: write.then_some(1.08),
        c_wgb: Some(if write { 0.11 } else { 0.0 }),
        stall_pct: Some(0.0),
        db_gb: Some(0.43),
        space_amp: Some(1.02),
        rss_gb: Some(0.12 + cache_gb(spec, seq)),
        steal_pct: Some(0.1),
        outside_cpu_pct: Some(0.6),
        qos: Qos::of(&ivs),
        verify: Verification {
            verified: if write { 0 } else { ops },
            ..Verification::default()
        },
        hw: HwCounters {
            unsupported: Some("no hardware PMU (a VM)".into()),
            ..HwCounters::default()
        },
        ..StepSummary::default()
    };
    let started = at;
    let ended = at + secs;
    let rec = StepRecord {
        seq: seq as i64,
        name: step.to_string(),
        kind: step.parse().expect("validated"),
        status: StepStatus::Ok,
        error: None,
        started_at: rfc3339(started as i64),
        ended_at: rfc3339(ended.ceil() as i64),
        config: serde_json::json!({
            "threads": 1,
            "num": 1_000_000u64,
            "key_size": 20,
            "value_size": 400,
            "duration": secs,
        }),
        summary,
    };
    (rec, ivs)
}

/// The block cache's share of resident memory, GB (the first step has it filling).
fn cache_gb(_spec: &Spec, seq: usize) -> f64 {
    if seq == 0 {
        0.03
    } else {
        0.06
    }
}

/// A small seeded generator (SplitMix64): the same seed, the same figures.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn sym(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// One seed from several numbers.
fn mix(parts: &[u64]) -> u64 {
    let mut r = Rng::new(0x5EED);
    for p in parts {
        r.0 ^= p.wrapping_mul(0x2545_F491_4F6C_DD1D);
        r.next();
    }
    r.next()
}

/// FNV-1a, for the stored plan hash (`--resume`'s key; nothing judges it).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ`.
fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3_600 + mi * 60 + se)
}

/// RFC 3339 UTC of seconds since the epoch.
fn rfc3339(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn spec() -> Spec {
        Spec {
            plans: 2,
            groups: 4,
            repeats: 3,
            steps: vec!["fillseq".into(), "readrandom".into()],
            intervals: 5,
            change: Some(Change {
                plan: 1,
                at_group: 3,
                step: "readrandom".into(),
                factor: 0.8,
            }),
            ..Spec::default()
        }
    }

    fn step_figure(store: &Store, id: i64, step: &str, f: fn(&StepSummary) -> f64) -> f64 {
        let r = store.run(id).unwrap();
        let (s, _) = r.steps.iter().find(|(s, _)| s.name == step).unwrap();
        f(&s.summary)
    }

    #[test]
    fn a_generated_history_reads_back_as_runs_of_one_plan_per_history() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("g.sqlite")).unwrap();
        let spec = spec();
        let g = history(&mut store, &spec).unwrap();
        assert_eq!(g.plans.len(), 2);
        assert_eq!(g.runs().len(), 2 * 4 * 3);
        assert_ne!(g.plans[0].identity, g.plans[1].identity);
        // Ids grow night by night across plans: the newest run is the last plan's.
        assert_eq!(
            store.runs(1).unwrap()[0].id,
            *g.plans[1].groups[3].last().unwrap()
        );
        for plan in &g.plans {
            for (n, night) in plan.groups.iter().enumerate() {
                assert_eq!(store.group(night[0]).unwrap(), *night);
                for (r, id) in night.iter().enumerate() {
                    let run = store.run(*id).unwrap();
                    assert_eq!(run.run.status, RunStatus::Ok);
                    assert_eq!(run.run.tag.as_deref(), Some("nightly"));
                    assert_eq!(run.run.engine, "rocksdb");
                    assert_eq!(run.run.group_id, Some(night[0]));
                    assert_eq!(run.run.repeat_index, Some(r as i64));
                    assert_eq!(
                        plumb_report::base::plan_identity(run.run.plan.as_ref()).as_deref(),
                        Some(plan.identity.as_str())
                    );
                    let p = run.run.plan.as_ref().unwrap();
                    assert_eq!(p["repeat"], r);
                    assert_eq!(
                        run.run.host.as_ref().unwrap().inventory.hostname.as_deref(),
                        Some("bench-1")
                    );
                    assert_eq!(
                        run.run.started_at,
                        rfc3339(1_793_498_400 + n as i64 * 86_400 + r as i64 * 1_200)
                    );
                    assert_eq!(run.steps.len(), 2);
                    for (s, ivs) in &run.steps {
                        assert_eq!(ivs.len(), 5);
                        let sum: u64 = ivs.iter().map(|i| i.ops).sum();
                        assert_eq!(sum, s.summary.ops);
                        assert!((s.summary.ops_sec - sum as f64 / 5.0).abs() < 1e-9);
                        let cpu = s.summary.cpu_us_op.unwrap();
                        let t = 1e6 / s.summary.ops_sec;
                        assert!(cpu > 0.9 * t && cpu < t, "cpu {cpu} of {t} µs/op");
                        assert!(s.summary.qos.is_some());
                    }
                }
            }
        }
        // Seeds differ per run, the plan JSON only by seed and repeat.
        let a = store.run(g.plans[0].groups[0][0]).unwrap().run;
        let b = store.run(g.plans[0].groups[2][1]).unwrap().run;
        assert_ne!(a.seed, b.seed);
        let strip = |p: &serde_json::Value| {
            let mut p = p.clone();
            p.as_object_mut().unwrap().remove("seed");
            p.as_object_mut().unwrap().remove("repeat");
            p
        };
        assert_eq!(
            strip(a.plan.as_ref().unwrap()),
            strip(b.plan.as_ref().unwrap())
        );
    }

    #[test]
    fn the_change_shows_in_the_medians_at_its_night_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let spec = spec();
        let g = history(&mut store, &spec).unwrap();
        let med = |plan: usize, night: usize, step: &str, f: fn(&StepSummary) -> f64| {
            median(
                g.plans[plan].groups[night]
                    .iter()
                    .map(|id| step_figure(&store, *id, step, f))
                    .collect(),
            )
        };
        let ops = |s: &StepSummary| s.ops_sec;
        let usr = |s: &StepSummary| s.usr_us_op.unwrap();
        let sys = |s: &StepSummary| s.sys_us_op.unwrap();
        let before = med(1, 2, "readrandom", ops);
        let after = med(1, 3, "readrandom", ops);
        let r = after / before;
        assert!((r - 0.8).abs() < 0.025, "ops/s ratio {r}");
        // Its user CPU per op rises by about 1/factor; the system part stays.
        let u = med(1, 3, "readrandom", usr) / med(1, 2, "readrandom", usr);
        assert!(u > 1.2 && u < 1.35, "usr ratio {u}");
        let s = med(1, 3, "readrandom", sys) / med(1, 2, "readrandom", sys);
        assert!((s - 1.0).abs() < 0.02, "sys ratio {s}");
        // The other step of the plan, and the other plan, stay within the noise.
        for (plan, step) in [(1, "fillseq"), (0, "readrandom"), (0, "fillseq")] {
            let r = med(plan, 3, step, ops) / med(plan, 2, step, ops);
            assert!((r - 1.0).abs() < 0.025, "plan {plan} {step}: {r}");
        }
    }

    #[test]
    fn the_same_spec_writes_the_same_figures_and_a_night_appends_after_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let figures = |name: &str| {
            let mut store = Store::open(&dir.path().join(name)).unwrap();
            let mut s = spec();
            s.plans = 1;
            s.groups = 2;
            s.change = None;
            let g = history(&mut store, &s).unwrap();
            let added = append_group(&mut store, &s, 0, 0.8).unwrap();
            assert_eq!(added.len(), 3);
            let night = store.run(added[0]).unwrap();
            assert_eq!(night.run.group_id, Some(added[0]));
            assert_eq!(night.run.started_at, rfc3339(1_793_498_400 + 2 * 86_400));
            assert_eq!(
                plumb_report::base::plan_identity(night.run.plan.as_ref()).as_deref(),
                Some(g.plans[0].identity.as_str())
            );
            g.runs()
                .iter()
                .chain(&added)
                .map(|id| step_figure(&store, *id, "readrandom", |s| s.ops_sec))
                .collect::<Vec<f64>>()
        };
        let a = figures("a.sqlite");
        assert_eq!(a, figures("b.sqlite"));
        let old = median(a[..6].to_vec());
        let new = median(a[6..].to_vec());
        assert!((new / old - 0.8).abs() < 0.025, "{}", new / old);
    }

    #[test]
    fn a_spec_that_no_run_could_have_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.sqlite")).unwrap();
        for bad in [
            Spec {
                steps: vec!["readsomething".into()],
                ..Spec::default()
            },
            Spec {
                plans: 0,
                ..Spec::default()
            },
            Spec {
                start: "yesterday".into(),
                ..Spec::default()
            },
            Spec {
                change: Some(Change {
                    plan: 3,
                    at_group: 1,
                    step: "readrandom".into(),
                    factor: 0.8,
                }),
                ..Spec::default()
            },
        ] {
            let e = history(&mut store, &bad).unwrap_err();
            assert!(matches!(e, GenerateError::Spec(_)), "{e}");
        }
        assert!(store.runs(1).unwrap().is_empty());
    }

    #[test]
    fn times_are_rfc3339_utc_both_ways() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(parse_time("2026-11-01T02:00:00Z"), Some(1_793_498_400));
        for t in [0, 951_782_400, 1_793_498_400, 4_107_542_399] {
            assert_eq!(parse_time(&rfc3339(t)), Some(t));
        }
    }
}
