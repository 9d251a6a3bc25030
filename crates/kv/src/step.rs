//! Runs one step: spawns the workers, acts as the sampler (its own thread, once a
//! second), and turns what the workers report into a summary and 1-second intervals.

use crate::config::{KeySpace, StepConfig};
use crate::sampler::{self, KvGauge, KvReading, Snapshot};
use crate::worker::{Worker, WorkerEnv};
use crate::workload::kv::KvStep;
use crate::workload::mix::MixStep;
use crate::workload::ycsb::YcsbStep;
use crate::workload::Workload;
use plumb_core::{
    HwCounters, Interval, Maintenance, StepStatus, StepSummary, Target, Verification, WriterSummary,
};
use plumb_probes::diskstats::DeviceStats;
use plumb_probes::perf::HwCounterGroup;
use plumb_runner::kernel::{self, Lane, Run};
use plumb_runner::metrics::{self, GB};
use plumb_runner::{LatencyHistogram, Progress, StepHistograms, StepOutcome};
use plumb_workloads::{Permutation, StepKind};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

/// What a step runs against, shared by all steps of a run.
pub struct RunContext<'a> {
    /// The engine.
    pub target: &'a dyn Target,
    /// Disk counters of the device holding the data dir; `None` when unavailable.
    pub disk: Option<&'a DeviceStats>,
    /// Hardware counters, or the reason there are none.
    pub hw: Result<&'a HwCounterGroup, String>,
    /// Set by Ctrl-C: stop the step now, keep what was measured.
    pub interrupt: &'a AtomicBool,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Record a CPU profile of this process during each measured window, perf's data
    /// file in this directory (`plumb kv --profile`).
    pub profile: Option<plumb_probes::profile::Profiling<'a>>,
}

/// Runs one db_bench step and updates what is known about the key space.
pub fn run_step(ctx: &RunContext<'_>, cfg: &StepConfig, keys: &mut KeySpace) -> StepOutcome {
    let kind = cfg.plan.kind;
    if kind.is_maintenance() {
        return run_maintenance(ctx, &mut gauge_of(ctx, cfg), kind, cfg);
    }
    if kind.is_mix() {
        return match MixStep::new(cfg) {
            Ok(step) => run_workload(ctx, cfg, keys, &step),
            Err(e) => refused(e),
        };
    }
    if kind.is_ycsb() {
        return match YcsbStep::new(cfg, keys) {
            Ok(step) => {
                let out = run_workload(ctx, cfg, keys, &step);
                keys.ycsb_next = Some(step.next_insert());
                if kind == StepKind::YcsbLoad {
                    keys.ycsb_loaded = out.status == StepStatus::Ok;
                }
                out
            }
            Err(e) => refused(e),
        };
    }
    run_workload(ctx, cfg, keys, &KvStep::new(cfg))
}

/// A step that could not start (its knobs were refused), stored as failed.
fn refused(e: plumb_core::TargetError) -> StepOutcome {
    let now = SystemTime::now();
    StepOutcome {
        status: StepStatus::Failed,
        error: Some(e.to_string()),
        verification_failed: false,
        started: now,
        ended: now,
        summary: StepSummary::default(),
        intervals: Vec::new(),
        profile: None,
        histograms: None,
    }
}

/// What the sampler reads for a step of this run.
fn gauge_of<'a>(ctx: &RunContext<'a>, cfg: &StepConfig) -> KvGauge<'a> {
    KvGauge::new(
        ctx.target,
        ctx.hw.as_ref().ok().copied(),
        cfg.index,
        ctx.profile,
        cfg.perf_groups,
    )
}

/// Runs one measured step of any workload: its threads (and a paced writer if it has
/// one) through the kernel's timed loop, the sampler once a second, then the summary.
pub fn run_workload(
    ctx: &RunContext<'_>,
    cfg: &StepConfig,
    keys: &mut KeySpace,
    workload: &dyn Workload,
) -> StepOutcome {
    let started = SystemTime::now();
    let payload = crate::payload::make_payload(cfg.seed ^ cfg.index as u64);
    let perm = Permutation::new(cfg.num.max(1), cfg.seed);
    let classes = workload.classes();
    let env = WorkerEnv {
        cfg,
        target: ctx.target,
        payload: &payload,
        perm: &perm,
        all_present: keys.all_present,
    };
    // RocksDB's PerfContext is per thread: each measured thread starts its own as the
    // window opens (after warm-up) and reads it when its ops are done.
    let level = cfg.perf_level;
    let start = move || ctx.target.thread_perf_start(level);
    let perf_start: Option<&(dyn Fn() + Sync)> = (level > 1).then_some(&start);
    let spec = kernel::Spec {
        threads: cfg.threads,
        writers: usize::from(workload.has_writer()),
        thread_name: "plumb-w",
        classes: classes.len(),
        warmup: if workload.warms_up() {
            cfg.warmup
        } else {
            Duration::ZERO
        },
        duration: cfg.duration,
        disk: ctx.disk,
        interrupt: ctx.interrupt,
        progress: ctx.progress,
        clients: cfg.clients.as_ref(),
        on_open: perf_start,
        faults: None,
    };
    let mut gauge = gauge_of(ctx, cfg);
    ctx.progress
        .start(&cfg.plan.name, cfg.total_ops(), cfg.duration);
    let counted = cfg.perf_level > 1;
    let run = kernel::run(&spec, &mut gauge, |lane: &Lane<'_>, out: &mut ThreadOut| {
        let r = workload.run(&mut Worker::new(&env, lane), &mut out.verify);
        // The thread's own PerfContext, read on the thread that counted it.
        if counted && !lane.writer() {
            out.perf = Some(ctx.target.thread_perf());
        }
        r
    });
    let ended = SystemTime::now();
    ctx.progress.finish();
    let classes: Vec<&str> = classes.iter().map(String::as_str).collect();
    summarise(ctx, cfg, keys, run, gauge, &classes, started, ended)
}

/// What a measured thread leaves the step: what its reads verified, and its engine's
/// own per-op counts when asked for (`Err`: the engine has none).
#[derive(Default)]
struct ThreadOut {
    verify: Verification,
    perf: Option<Result<Vec<(String, u64)>, String>>,
}

/// The measured threads' engine counts summed and divided by the step's `ops`; `None`
/// when the level counts nothing.
fn engine_perf(level: u8, outs: &[ThreadOut], ops: u64) -> Option<plumb_core::EnginePerf> {
    if level <= 1 {
        return None;
    }
    let mut sum: std::collections::BTreeMap<String, u64> = Default::default();
    let mut unavailable = None;
    for o in outs {
        match &o.perf {
            Some(Ok(counts)) => {
                for (k, v) in counts {
                    *sum.entry(k.clone()).or_default() += v;
                }
            }
            Some(Err(why)) => unavailable = Some(why.clone()),
            None => {}
        }
    }
    Some(plumb_core::EnginePerf {
        level,
        per_op: sum
            .into_iter()
            .filter(|_| ops > 0)
            .map(|(k, v)| (k, v as f64 / ops as f64))
            .collect(),
        unavailable,
    })
}

/// A key-value step's outcome: the kernel's common figures, then the engine's (write
/// and space amplification, stalls, the LSM, hardware counters), verification, the
/// paced writer's and the open loop's.
#[allow(clippy::too_many_arguments)]
fn summarise(
    ctx: &RunContext<'_>,
    cfg: &StepConfig,
    keys: &mut KeySpace,
    run: Run<ThreadOut, KvReading>,
    gauge: KvGauge<'_>,
    classes: &[&str],
    started: SystemTime,
    ended: SystemTime,
) -> StepOutcome {
    let kind = cfg.plan.kind;
    let (first, last) = (run.first(), run.last());
    let (intervals, base) = run.figures(
        |a, b, iv| Interval {
            stall_us: sampler::delta(b.extra.engine.stall_micros, a.extra.engine.stall_micros),
            rss_gb: b.extra.rss.map(|r| r as f64 / GB),
            ..iv
        },
        classes,
        cfg.pace.as_ref(),
    );
    let (ops, secs) = (base.ops, base.secs);
    let bytes = run.tally.bytes();
    let writer = &run.tally.writer;
    let mut verify = Verification::default();
    for v in &run.outputs {
        verify.merge(&v.verify);
    }
    let engine_perf = engine_perf(cfg.perf_level, &run.outputs, ops);
    let disk = last.disk_since(first);
    let engine = sampler::engine_delta(&last.extra.engine, &first.extra.engine);
    let user_written = if kind.writes() && kind != StepKind::DeleteRandom {
        bytes
    } else {
        writer.bytes
    };
    let status = if run.interrupted {
        StepStatus::Interrupted
    } else if !run.errors.is_empty() || verify.failed() {
        StepStatus::Failed
    } else {
        StepStatus::Ok
    };
    let finished = status == StepStatus::Ok && cfg.total_ops().is_none_or(|t| ops >= t);
    keys.after(kind, ops + writer.ops, cfg.num, finished);
    let db_bytes = ctx
        .target
        .data_dir()
        .and_then(|d| plumb_probes::dirsize::dir_bytes(d).ok());
    let live_bytes = keys.expected_live * (cfg.key_size + cfg.value_size) as f64;
    let rss_peak = run.marks.iter().filter_map(|m| m.extra.rss).max();
    // Under `plumb icount` the kernel's figures hold callgrind's count.
    let hw = match run.instructions {
        Some(_) => base.hw.clone(),
        None => hw_per_op(ctx, first, last, ops),
    };
    let mut error = run.errors.first().cloned();
    if error.is_none() && verify.failed() {
        error = Some(format!(
            "verification failed: {} values wrong (short, another key's, or checksum \
             mismatches), {} keys missing that must exist (of {} values checked, {} with \
             the full checksum; a database loaded by plumb before value format {} fails \
             every read: reload it)",
            verify.mismatches,
            verify.missing,
            verify.verified,
            verify.checksummed,
            plumb_core::value::FORMAT
        ));
    }

    let summary = StepSummary {
        mb_sec: (secs > 0.0).then(|| bytes as f64 / secs / (1024.0 * 1024.0)),
        w_amp: metrics::device_w_amp(disk.as_ref(), user_written),
        w_amp_engine: metrics::engine_w_amp(&engine),
        c_wgb: engine.compact_write_bytes.map(|b| b as f64 / GB),
        stall_pct: metrics::stall_pct(&engine, secs),
        db_gb: db_bytes.map(|b| b as f64 / GB),
        eng_used_gb: engine.used_bytes.map(|b| b as f64 / GB),
        space_amp: db_bytes
            .filter(|_| live_bytes > 0.0)
            .map(|b| b as f64 / live_bytes),
        rss_gb: rss_peak.map(|b| b as f64 / GB),
        verify,
        hw,
        pending_compaction_gb_start: first
            .extra
            .engine
            .pending_compaction_bytes
            .map(|b| b as f64 / GB),
        lsm: lsm_since(&gauge.lsm).map(|mut l| {
            l.stall_us_by_cause = plumb_core::lsm::stall_us_by_cause(
                run.marks
                    .iter()
                    .map(|m| (m.extra.engine.stall_micros, m.extra.engine.stall_limits)),
            );
            l
        }),
        // What the window's ops passed through: the tree as it was when it opened.
        lsm_start: gauge.lsm[0].as_ref().map(plumb_core::LsmAccount::shape),
        engine_perf,
        // perf stat's events in turn on plumb's own process (`--perf-groups`).
        perf: gauge
            .perf
            .as_ref()
            .and_then(|p| plumb_runner::kernel::perf_counted(p, "plumb", &intervals, ops)),
        writer: (writer.ops > 0).then(|| WriterSummary {
            ops: writer.ops,
            mb_sec: if secs > 0.0 {
                writer.bytes as f64 / secs / (1024.0 * 1024.0)
            } else {
                0.0
            },
            target_mb_sec: cfg.write_rate_mb,
            p50_us: writer.hist.quantile_us(0.5).unwrap_or(0.0),
            p99_us: writer.hist.quantile_us(0.99).unwrap_or(0.0),
        }),
        ..base
    };
    StepOutcome {
        // The whole window's, for a rate search's exact quantile.
        histograms: Some(StepHistograms {
            intervals: Vec::new(),
            total: run.tally.total.clone(),
        }),
        status,
        error,
        verification_failed: run.errors.is_empty() && verify.failed(),
        started,
        ended,
        summary,
        intervals,
        profile: gauge.profiled,
    }
}

fn hw_per_op(ctx: &RunContext<'_>, first: &Snapshot, last: &Snapshot, ops: u64) -> HwCounters {
    match (&ctx.hw, first.extra.hw, last.extra.hw) {
        (Ok(_), Some(a), Some(b)) => {
            let d = b.delta(&a);
            let per = |x: Option<u64>| metrics::per_op(x.map(|v| v as f64), ops);
            HwCounters {
                instructions_op: per(d.instructions),
                cycles_op: per(d.cycles),
                ipc: d.ipc(),
                cache_misses_op: per(d.cache_misses),
                branch_misses_op: per(d.branch_misses),
                unsupported: None,
            }
        }
        (Err(why), _, _) => HwCounters {
            unsupported: Some(why.clone()),
            ..HwCounters::default()
        },
        _ => HwCounters {
            unsupported: Some("hardware counters were not read".into()),
            ..HwCounters::default()
        },
    }
}

/// A step's LSM account from the engine's at its start and end.
fn lsm_since(at: &[Option<plumb_core::LsmAccount>; 2]) -> Option<plumb_core::LsmAccount> {
    match at {
        [Some(start), Some(end)] => Some(end.since(start)),
        _ => None,
    }
}

fn run_maintenance(
    ctx: &RunContext<'_>,
    gauge: &mut KvGauge<'_>,
    kind: StepKind,
    cfg: &StepConfig,
) -> StepOutcome {
    let what: &[Maintenance] = match kind {
        StepKind::Flush => &[Maintenance::Flush],
        StepKind::WaitForCompaction => &[Maintenance::WaitForCompaction],
        StepKind::Compact0 => &[Maintenance::CompactLevel(0)],
        StepKind::Compact1 => &[Maintenance::CompactLevel(1)],
        // benchmark.sh's flush_mt_l0: flush, wait, compact0, wait.
        StepKind::FlushMtL0 => &[
            Maintenance::Flush,
            Maintenance::WaitForCompaction,
            Maintenance::CompactLevel(0),
            Maintenance::WaitForCompaction,
        ],
        _ => &[Maintenance::Compact],
    };
    ctx.progress.start(&cfg.plan.name, None, None);
    let started = SystemTime::now();
    let a = Snapshot::read(ctx.disk, gauge);
    let lsm_a = ctx.target.lsm();
    let result = what.iter().try_for_each(|&m| ctx.target.maintenance(m));
    let b = Snapshot::read(ctx.disk, gauge);
    let lsm = lsm_since(&[lsm_a, ctx.target.lsm()]);
    ctx.progress.finish();
    let engine = sampler::engine_delta(&b.extra.engine, &a.extra.engine);
    // No op was timed: the kernel's window figures (its length, the device's rates, the
    // host's noise) and no percentiles or per-op figures.
    let base = kernel::summary(&a, &b, 0, &LatencyHistogram::new());
    let db_bytes = ctx
        .target
        .data_dir()
        .and_then(|d| plumb_probes::dirsize::dir_bytes(d).ok());
    StepOutcome {
        histograms: None,
        status: if result.is_ok() {
            StepStatus::Ok
        } else {
            StepStatus::Failed
        },
        error: result.err().map(|e| e.to_string()),
        verification_failed: false,
        started,
        ended: SystemTime::now(),
        summary: StepSummary {
            c_wgb: engine.compact_write_bytes.map(|b| b as f64 / GB),
            // A maintenance step ingests nothing: a ratio over the few bytes an
            // engine's lagging counters show here would be noise (its writes are in
            // c_wgb and in the next measured step's figures).
            w_amp_engine: None,
            db_gb: db_bytes.map(|b| b as f64 / GB),
            eng_used_gb: b.extra.engine.used_bytes.map(|u| u as f64 / GB),
            rss_gb: b.extra.rss.map(|r| r as f64 / GB),
            lsm,
            hw: HwCounters {
                unsupported: Some("maintenance step: no ops".into()),
                ..HwCounters::default()
            },
            // The device's rates mean something without ops: what compaction cost it.
            ..base
        },
        intervals: Vec::new(),
        profile: None,
    }
}
