//! Runs one step: spawns the workers, acts as the sampler (its own thread, once a
//! second), and turns what the workers report into a summary and 1-second intervals.

use crate::config::{KeySpace, StepConfig};
use crate::histogram::LatencyHistogram;
use crate::metrics::{self, GB};
use crate::pacing::OpenTally;
use crate::sampler::{self, Sampler, Snapshot};
use crate::worker::{self, HarnessTime, Msg, Padded, Report, Role, Shared, WorkerEnv};
use crate::workload::kv::KvStep;
use crate::workload::ycsb::YcsbStep;
use crate::workload::Workload;
use plumb_core::{
    HwCounters, Interval, Maintenance, StepStatus, StepSummary, Target, Verification, WriterSummary,
};
use plumb_probes::diskstats::DeviceStats;
use plumb_probes::perf::HwCounterGroup;
use plumb_workloads::{Permutation, StepKind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant, SystemTime};

/// Live progress for a terminal; the runner calls it from the sampler thread only.
pub trait Progress: Sync {
    /// A step starts: its name, its op quota and/or its duration.
    fn start(&self, name: &str, total_ops: Option<u64>, duration: Option<Duration>);
    /// Once a second: measured ops so far and time since the window opened.
    fn tick(&self, ops: u64, elapsed: Duration);
    /// The step ended.
    fn finish(&self);
}

/// Progress that shows nothing (not a terminal, tests, JSON output).
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: Option<u64>, _: Option<Duration>) {}
    fn tick(&self, _: u64, _: Duration) {}
    fn finish(&self) {}
}

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
    pub profile: Option<&'a std::path::Path>,
}

/// A finished step: what is stored and reported.
#[derive(Debug, Clone)]
pub struct StepOutcome {
    /// How it ended.
    pub status: StepStatus,
    /// The engine error or verification failure, if any.
    pub error: Option<String>,
    /// It failed only because reads found wrong or missing values: the engine still
    /// works, so later steps can run (and will be checked too).
    pub verification_failed: bool,
    /// Wall-clock start and end.
    pub started: SystemTime,
    /// Wall-clock end.
    pub ended: SystemTime,
    /// The summary.
    pub summary: StepSummary,
    /// The 1-second series; its ops add up to `summary.ops`.
    pub intervals: Vec<Interval>,
    /// The CPU profile of the measured window (folded stacks, ns), when asked for; or
    /// why there is none.
    pub profile: Option<Result<String, String>>,
    /// The latency histograms behind the percentiles, kept where a step may be one of
    /// several clients' whose percentiles come from the merged counts.
    pub histograms: Option<StepHistograms>,
}

/// A step's latency histograms: one per interval (as `intervals`) and the whole step's.
#[derive(Debug, Clone, Default)]
pub struct StepHistograms {
    /// One per 1-second interval.
    pub intervals: Vec<LatencyHistogram>,
    /// The measured window's.
    pub total: LatencyHistogram,
}

/// Runs one db_bench step and updates what is known about the key space.
pub fn run_step(ctx: &RunContext<'_>, cfg: &StepConfig, keys: &mut KeySpace) -> StepOutcome {
    let kind = cfg.plan.kind;
    if kind.is_maintenance() {
        return run_maintenance(ctx, &sampler_of(ctx), kind, cfg);
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
fn sampler_of<'a>(ctx: &RunContext<'a>) -> Sampler<'a> {
    Sampler {
        target: ctx.target,
        disk: ctx.disk,
        hw: ctx.hw.as_ref().ok().copied(),
    }
}

/// Runs one measured step of any workload: its threads (and a paced writer if it has
/// one) through the timed loop, the sampler once a second, then the summary.
pub fn run_workload(
    ctx: &RunContext<'_>,
    cfg: &StepConfig,
    keys: &mut KeySpace,
    workload: &dyn Workload,
) -> StepOutcome {
    let sampler = sampler_of(ctx);
    let started = SystemTime::now();
    let payload = crate::payload::make_payload(cfg.seed ^ cfg.index as u64);
    let perm = Permutation::new(cfg.num.max(1), cfg.seed);
    let shared = Shared {
        epoch: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        progress: (0..cfg.threads).map(|_| Padded::default()).collect(),
        writer_start: std::sync::OnceLock::new(),
    };
    let writer = workload.has_writer();
    let classes = workload.classes();
    let warmup = if workload.warms_up() {
        cfg.warmup
    } else {
        Duration::ZERO
    };
    let workers = cfg.threads + usize::from(writer);
    let barrier = Barrier::new(workers + 1);
    let env = WorkerEnv {
        cfg,
        target: ctx.target,
        shared: &shared,
        payload: &payload,
        perm: &perm,
        all_present: keys.all_present,
        barrier: &barrier,
        classes: classes.len(),
    };
    let (tx, rx) = mpsc::channel::<Msg>();
    let total_ops = cfg.total_ops();
    ctx.progress.start(&cfg.plan.name, total_ops, cfg.duration);

    let collected = std::thread::scope(|scope| {
        for t in 0..cfg.threads {
            let (env, tx) = (&env, tx.clone());
            std::thread::Builder::new()
                .name(format!("plumb-w{t}"))
                .spawn_scoped(scope, move || {
                    worker::run_worker(env, workload, Role::Measured(t), tx)
                })
                .expect("spawn worker thread");
        }
        if writer {
            let (env, tx) = (&env, tx.clone());
            std::thread::Builder::new()
                .name("plumb-writer".into())
                .spawn_scoped(scope, move || {
                    worker::run_worker(env, workload, Role::Writer, tx)
                })
                .expect("spawn writer thread");
        }
        drop(tx);
        // Without warm-up the window opens as the workers are released, so no op
        // can fall outside it.
        let opened = warmup.is_zero().then(|| open_window(&sampler, &shared));
        barrier.wait();
        sample(ctx, &sampler, cfg, &shared, warmup, writer, &rx, opened)
    });
    let ended = SystemTime::now();
    ctx.progress.finish();
    summarise(ctx, cfg, keys, collected, &classes, started, ended)
}

/// What the sampler gathered while the workers ran.
struct Collected {
    marks: Vec<Snapshot>,
    /// The LSM's account at the window's start and end (read beside the first and
    /// closing snapshots, never per second).
    lsm: [Option<plumb_core::LsmAccount>; 2],
    reports: Vec<Report>,
    verify: Verification,
    harness: HarnessTime,
    /// Open-loop ops the measured threads left due and never started.
    backlog: u64,
    errors: Vec<String>,
    interrupted: bool,
    reader_done: usize,
    profile: Option<Result<String, String>>,
}

#[allow(clippy::too_many_arguments)]
fn sample(
    ctx: &RunContext<'_>,
    sampler: &Sampler<'_>,
    cfg: &StepConfig,
    shared: &Shared,
    warmup: Duration,
    writer: bool,
    rx: &mpsc::Receiver<Msg>,
    opened: Option<Snapshot>,
) -> Collected {
    let mut c = Collected {
        marks: Vec::new(),
        lsm: [None, None],
        reports: Vec::new(),
        verify: Verification::default(),
        harness: HarnessTime::default(),
        backlog: 0,
        errors: Vec::new(),
        interrupted: false,
        reader_done: 0,
        profile: None,
    };
    let mut writer_done = !writer;
    let handle = |msg: Msg, c: &mut Collected, writer_done: &mut bool| match msg {
        Msg::Interval(r) => c.reports.push(r),
        Msg::Done {
            writer,
            verify,
            harness,
            backlog,
            error,
        } => {
            c.verify.merge(&verify);
            if !writer {
                c.harness.merge(&harness);
                c.backlog += backlog;
            }
            c.errors.extend(error);
            if writer {
                *writer_done = true;
            } else {
                c.reader_done += 1;
            }
        }
    };
    // Warm-up: epoch 0; its reports are discarded.
    let warm_end = Instant::now() + warmup;
    while Instant::now() < warm_end && !ctx.interrupt.load(Ordering::Relaxed) {
        let wait = warm_end
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(200));
        if let Ok(m) = rx.recv_timeout(wait) {
            handle(m, &mut c, &mut writer_done);
        }
    }
    let t0 = opened.unwrap_or_else(|| open_window(sampler, shared));
    let recording = ctx.profile.map(|dir| {
        plumb_probes::profile::start(&[std::process::id()], dir, &format!("step{}", cfg.index))
    });
    c.marks.push(t0);
    c.lsm[0] = ctx.target.lsm();
    let deadline = cfg.duration.map(|d| t0.at + d);
    let mut next_tick = t0.at + Duration::from_secs(1);
    loop {
        if c.reader_done == cfg.threads && writer_done {
            break;
        }
        let now = Instant::now();
        let stop_now = ctx.interrupt.load(Ordering::Relaxed)
            || deadline.is_some_and(|d| now >= d)
            || c.reader_done == cfg.threads;
        if stop_now {
            if ctx.interrupt.load(Ordering::Relaxed) {
                c.interrupted = true;
            }
            shared.stop.store(true, Ordering::Relaxed);
        }
        if now >= next_tick {
            c.marks.push(sampler.snapshot());
            shared.epoch.fetch_add(1, Ordering::Release);
            next_tick += Duration::from_secs(1);
            let done: u64 = shared
                .progress
                .iter()
                .map(|p| p.0.load(Ordering::Relaxed))
                .sum();
            ctx.progress.tick(done, now - t0.at);
            continue;
        }
        let mut wait = next_tick - now;
        if let Some(d) = deadline {
            wait = wait.min(d.saturating_duration_since(now));
        }
        match rx.recv_timeout(wait.min(Duration::from_millis(200))) {
            Ok(m) => handle(m, &mut c, &mut writer_done),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // Everyone is done; drain what is left and take the closing snapshot.
    while let Ok(m) = rx.try_recv() {
        handle(m, &mut c, &mut writer_done);
    }
    c.marks.push(sampler.snapshot());
    c.lsm[1] = ctx.target.lsm();
    c.profile = recording.map(|r| r.and_then(|r| r.stop()));
    c
}

/// Opens the measured window: the first snapshot, then epoch 1.
fn open_window(sampler: &Sampler<'_>, shared: &Shared) -> Snapshot {
    let t0 = sampler.snapshot();
    let _ = shared.writer_start.set(t0.at);
    shared.epoch.store(1, Ordering::Release);
    t0
}

fn summarise(
    ctx: &RunContext<'_>,
    cfg: &StepConfig,
    keys: &mut KeySpace,
    c: Collected,
    classes: &[&'static str],
    started: SystemTime,
    ended: SystemTime,
) -> StepOutcome {
    let kind = cfg.plan.kind;
    let first = c.marks[0];
    let last = *c.marks.last().expect("closing snapshot");
    let secs = (last.at - first.at).as_secs_f64();
    let epochs = c.marks.len() - 1; // intervals 1..=epochs

    let mut per_epoch: Vec<(u64, u64, LatencyHistogram)> = (0..epochs)
        .map(|_| (0, 0, LatencyHistogram::new()))
        .collect();
    let mut total = LatencyHistogram::new();
    let mut open = OpenTally::default();
    let mut by_class: Vec<LatencyHistogram> =
        classes.iter().map(|_| LatencyHistogram::new()).collect();
    let (mut w_ops, mut w_bytes, mut w_hist) = (0u64, 0u64, LatencyHistogram::new());
    for r in &c.reports {
        if r.epoch == 0 {
            continue; // warm-up
        }
        if r.writer {
            w_ops += r.ops;
            w_bytes += r.bytes;
            w_hist.merge(&r.hist);
            continue;
        }
        let slot = &mut per_epoch[(r.epoch as usize - 1).min(epochs - 1)];
        slot.0 += r.ops;
        slot.1 += r.bytes;
        slot.2.merge(&r.hist);
        total.merge(&r.hist);
        if let Some(o) = &r.open {
            open.merge(o);
        }
        for (all, h) in by_class.iter_mut().zip(&r.by_class) {
            all.merge(h);
        }
    }

    let mut intervals = Vec::with_capacity(epochs);
    for (i, (ops, _bytes, h)) in per_epoch.iter().enumerate() {
        let (a, b) = (&c.marks[i], &c.marks[i + 1]);
        let isecs = (b.at - a.at).as_secs_f64();
        let disk = match (b.disk, a.disk) {
            (Some(x), Some(y)) => Some(x.delta(&y)),
            _ => None,
        };
        intervals.push(Interval {
            stall_us: sampler::delta(b.engine.stall_micros, a.engine.stall_micros),
            rss_gb: b.rss.map(|r| r as f64 / GB),
            ..metrics::interval(
                (b.at - first.at).as_secs_f64(),
                isecs,
                *ops,
                h,
                b.process.delta(&a.process).cpu_us(),
                disk,
                sampler::noise(a, b),
            )
        });
    }
    if metrics::empty_tail(&intervals) {
        intervals.pop();
    }

    let ops: u64 = per_epoch.iter().map(|e| e.0).sum();
    let bytes: u64 = per_epoch.iter().map(|e| e.1).sum();
    let disk = match (last.disk, first.disk) {
        (Some(x), Some(y)) => Some(x.delta(&y)),
        _ => None,
    };
    let engine = sampler::engine_delta(&last.engine, &first.engine);
    let user_written = if kind.writes() && kind != StepKind::DeleteRandom {
        bytes
    } else {
        w_bytes
    };
    let [rd_op, rkb_op, wr_op, wkb_op] = metrics::disk_per_op(disk.as_ref(), ops);
    let process = last.process.delta(&first.process);
    let [cpu_us_op, usr_us_op, sys_us_op] = metrics::cpu_per_op(&process, ops);
    let noise = sampler::noise(&first, &last);
    let status = if c.interrupted {
        StepStatus::Interrupted
    } else if !c.errors.is_empty() || c.verify.failed() {
        StepStatus::Failed
    } else {
        StepStatus::Ok
    };
    let finished = status == StepStatus::Ok && cfg.total_ops().is_none_or(|t| ops >= t);
    keys.after(kind, ops + w_ops, cfg.num, finished);
    let db_bytes = ctx
        .target
        .data_dir()
        .and_then(|d| plumb_probes::dirsize::dir_bytes(d).ok());
    let live_bytes = keys.expected_live * (cfg.key_size + cfg.value_size) as f64;
    let rss_peak = c.marks.iter().filter_map(|m| m.rss).max();
    let hw = hw_per_op(ctx, &first, &last, ops);
    let mut error = c.errors.first().cloned();
    if error.is_none() && c.verify.failed() {
        error = Some(format!(
            "verification failed: {} values wrong (short, another key's, or checksum \
             mismatches), {} keys missing that must exist (of {} values checked, {} with \
             the full checksum; a database loaded by plumb before value format {} fails \
             every read: reload it)",
            c.verify.mismatches,
            c.verify.missing,
            c.verify.verified,
            c.verify.checksummed,
            plumb_core::value::FORMAT
        ));
    }

    let summary = StepSummary {
        ops,
        secs,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        mb_sec: (secs > 0.0).then(|| bytes as f64 / secs / (1024.0 * 1024.0)),
        p50_us: total.quantile_us(0.5),
        p99_us: total.quantile_us(0.99),
        p999_us: total.quantile_us(0.999),
        p9999_us: total.quantile_us(0.9999),
        pmax_us: total.max_us(),
        cpu_us_op,
        usr_us_op,
        sys_us_op,
        harness_us_op: metrics::per_op(Some(c.harness.ns as f64 / 1e3), c.harness.ops),
        csw_op: metrics::per_op(Some(process.csw() as f64), ops),
        rd_op,
        rkb_op,
        wr_op,
        wkb_op,
        device: metrics::device_io(disk.as_ref(), secs),
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
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        qos: metrics::qos(&intervals),
        verify: c.verify,
        hw,
        pending_compaction_gb_start: first.engine.pending_compaction_bytes.map(|b| b as f64 / GB),
        lsm: lsm_since(&c.lsm),
        server: None,
        ib: None,
        durability: None,
        open_loop: cfg.pace.map(|p| open.summary(&p, c.backlog)),
        by_op: metrics::by_op(classes, &by_class),
        writer: (w_ops > 0).then(|| WriterSummary {
            ops: w_ops,
            mb_sec: if secs > 0.0 {
                w_bytes as f64 / secs / (1024.0 * 1024.0)
            } else {
                0.0
            },
            target_mb_sec: cfg.write_rate_mb,
            p50_us: w_hist.quantile_us(0.5).unwrap_or(0.0),
            p99_us: w_hist.quantile_us(0.99).unwrap_or(0.0),
        }),
    };
    StepOutcome {
        // The whole window's, for a rate search's exact quantile.
        histograms: Some(StepHistograms {
            intervals: Vec::new(),
            total,
        }),
        status,
        error,
        verification_failed: c.errors.is_empty() && c.verify.failed(),
        started,
        ended,
        summary,
        intervals,
        profile: c.profile,
    }
}

fn hw_per_op(ctx: &RunContext<'_>, first: &Snapshot, last: &Snapshot, ops: u64) -> HwCounters {
    match (&ctx.hw, first.hw, last.hw) {
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
    sampler: &Sampler<'_>,
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
    let a = sampler.snapshot();
    let lsm_a = ctx.target.lsm();
    let result = what.iter().try_for_each(|&m| ctx.target.maintenance(m));
    let b = sampler.snapshot();
    let lsm = lsm_since(&[lsm_a, ctx.target.lsm()]);
    ctx.progress.finish();
    let engine = sampler::engine_delta(&b.engine, &a.engine);
    let secs = (b.at - a.at).as_secs_f64();
    let noise = sampler::noise(&a, &b);
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
            secs,
            c_wgb: engine.compact_write_bytes.map(|b| b as f64 / GB),
            // A maintenance step ingests nothing: a ratio over the few bytes an
            // engine's lagging counters show here would be noise (its writes are in
            // c_wgb and in the next measured step's figures).
            w_amp_engine: None,
            db_gb: db_bytes.map(|b| b as f64 / GB),
            eng_used_gb: b.engine.used_bytes.map(|u| u as f64 / GB),
            rss_gb: b.rss.map(|r| r as f64 / GB),
            steal_pct: noise.steal_pct,
            outside_cpu_pct: noise.outside_cpu_pct,
            // The device's rates mean something without ops: what compaction cost it.
            device: metrics::device_io(b.disk.zip(a.disk).map(|(y, x)| y.delta(&x)).as_ref(), secs),
            lsm,
            hw: HwCounters {
                unsupported: Some("maintenance step: no ops".into()),
                ..HwCounters::default()
            },
            ..StepSummary::default()
        },
        intervals: Vec::new(),
        profile: None,
    }
}
