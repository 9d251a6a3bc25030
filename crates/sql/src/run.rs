//! Runs one SQL step: its client threads (one connection each) in a closed loop, a
//! sampler once a second for the intervals, and the costs per query on both sides:
//! plumb's own CPU (the client) and the server's processes' CPU, both from /proc, the
//! device's IO, and the server's counters read before the clients connect and after
//! they leave. Each thread keeps its own histogram and counters and hands them over
//! once a second; nothing is shared per query but a relaxed progress counter.

use crate::bench::{Outcome, Shape, ThreadPlan};
use crate::client::Endpoint;
use crate::counters::{per_query, CounterReader};
use crate::drivers::{self, Driver};
use crate::error::SqlError;
use plumb_core::{HwCounters, Interval, ServerCosts, StepStatus, StepSummary};
use plumb_probes::cpustat::{self, Reading};
use plumb_probes::diskstats::{DeviceStats, DiskCounters};
use plumb_probes::process::{self, ProcessCounters};
use plumb_probes::proctree;
use plumb_runner::{
    metrics, Arrival, LatencyHistogram, OpenTally, Pacer, Progress, StepHistograms, StepOutcome,
};
use plumb_workloads::{Distribution, Pace, SqlKind, SqlStepPlan};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant, SystemTime};

/// A step's parameters.
#[derive(Debug, Clone)]
pub struct SqlStepConfig {
    /// Position in the run (seeds differ per step).
    pub index: usize,
    /// What and under which name.
    pub plan: SqlStepPlan,
    /// Client threads (connections).
    pub threads: usize,
    /// Measured time (the load runs to its end).
    pub duration: Duration,
    /// Unmeasured time first, on the same connections.
    pub warmup: Duration,
    /// The run's seed.
    pub seed: u64,
    /// The tables.
    pub shape: Shape,
    /// Key distribution.
    pub distribution: Distribution,
    /// Open loop: the rate offered across the clients, each transaction timed from
    /// its intended start; `None` runs closed-loop.
    pub pace: Option<Pace>,
}

/// What YCSB's steps of a run carry from one to the next.
#[derive(Debug, Clone, Copy, Default)]
pub struct YcsbState {
    /// The first key no step has inserted yet (`None`: the record count), so inserts
    /// neither reuse nor skip keys.
    pub next: Option<i64>,
    /// `ycsb-load` ran to its end in this run: a read that misses a record is an error.
    pub loaded: bool,
}

/// What the step runs against.
pub struct SqlContext<'a> {
    /// Where clients connect.
    pub endpoint: &'a Endpoint,
    /// The server's root process, when plumb can see it (managed servers).
    pub server_pid: Option<u32>,
    /// The server's data directory, when plumb can see it.
    pub data_dir: Option<&'a Path>,
    /// The device under it.
    pub disk: Option<&'a DeviceStats>,
    /// The counters connection.
    pub counters: &'a mut CounterReader,
    /// Set by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Progress display.
    pub progress: &'a dyn Progress,
    /// Every loaded id exists (no delete has run); a step that deletes clears it.
    pub all_present: &'a mut bool,
    /// Record a CPU profile of plumb and the server during each measured window, with
    /// perf's data file in this directory.
    pub profile: Option<&'a Path>,
    /// What YCSB's steps carry from one to the next.
    pub ycsb: &'a mut YcsbState,
}

#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

struct Report {
    epoch: u64,
    ops: u64,
    txns: u64,
    queries: u64,
    rows: u64,
    retries: u64,
    hist: LatencyHistogram,
    /// Open loop: service times and lateness.
    open: Option<OpenTally>,
    /// Response times by kind of operation, for steps that mix kinds.
    by_class: Vec<LatencyHistogram>,
}

impl Report {
    fn new(epoch: u64, open: bool, classes: usize) -> Report {
        Report {
            by_class: (0..classes).map(|_| LatencyHistogram::new()).collect(),
            epoch,
            ops: 0,
            txns: 0,
            queries: 0,
            rows: 0,
            retries: 0,
            hist: LatencyHistogram::new(),
            open: open.then(OpenTally::default),
        }
    }
}

enum Msg {
    Interval(Report),
    Done {
        /// Queries over the connection's whole life, warm-up included (what the server
        /// counters cover).
        all_queries: u64,
        /// Open loop: transactions due and never started.
        backlog: u64,
        error: Option<SqlError>,
    },
}

#[derive(Clone)]
struct Mark {
    at: Instant,
    client: ProcessCounters,
    machine: Option<Reading>,
    server: Option<proctree::TreeSnapshot>,
    disk: Option<DiskCounters>,
}

impl Mark {
    /// The host's noise since `earlier`: what the machine did beside plumb and the
    /// server (whose CPU is known only between marks that read it).
    fn noise_since(&self, earlier: &Mark) -> metrics::HostNoise {
        let server = self
            .server
            .as_ref()
            .zip(earlier.server.as_ref())
            .map(|(b, a)| b.delta(a).cpu_us());
        metrics::host_noise(
            earlier.machine.as_ref(),
            self.machine.as_ref(),
            self.client.delta(&earlier.client).cpu_us(),
            server,
        )
    }
}

/// Counters now; the server's process tree (a walk of /proc, whose CPU would count as
/// the client's) only at the window's ends.
fn mark(ctx: &SqlContext<'_>, with_server: bool) -> Mark {
    Mark {
        at: Instant::now(),
        client: process::self_counters(),
        machine: cpustat::read().ok(),
        server: ctx
            .server_pid
            .filter(|_| with_server)
            .and_then(proctree::tree_snapshot),
        disk: ctx.disk.and_then(|d| d.read().ok()),
    }
}

/// One client's loop: closed (each transaction when the last ended) or, with a
/// `pacer`, open (each when due). Returns its queries, its backlog and its error.
fn thread_loop(
    st: &mut dyn Driver,
    classes: usize,
    epoch: &AtomicU64,
    stop: &AtomicBool,
    progress: &Padded,
    tx: &mpsc::Sender<Msg>,
    mut pacer: Option<Pacer>,
) -> (u64, u64, Option<SqlError>) {
    let open = pacer.is_some();
    let mut r = Report::new(epoch.load(Relaxed), open, classes);
    let (mut all, mut done) = (0u64, 0u64);
    let mut error = None;
    let stopped = || stop.load(Relaxed);
    while !stop.load(Relaxed) {
        let due = match pacer.as_mut() {
            Some(p) => match p.wait_next(&stopped) {
                Some(a) => a,
                None => break,
            },
            None => Arrival::at(Instant::now()),
        };
        let out: Outcome = match st.event() {
            Ok(o) => o,
            Err(e) => {
                error = Some(e);
                break;
            }
        };
        let end = Instant::now();
        let ns = end.saturating_duration_since(due.from).as_nanos() as u64;
        all += out.queries;
        let now = epoch.load(Relaxed);
        if now != r.epoch {
            let old = std::mem::replace(&mut r, Report::new(now, open, classes));
            if old.ops > 0 || old.queries > 0 {
                let _ = tx.send(Msg::Interval(old));
            }
        }
        if out.done {
            break;
        }
        r.hist.record_ns(ns);
        if let Some(o) = r.open.as_mut() {
            o.record(&due, end);
        }
        if let Some(h) = r.by_class.get_mut(usize::from(out.class)) {
            h.record_ns(ns);
        }
        r.ops += out.ops;
        r.txns += 1;
        r.queries += out.queries;
        r.rows += out.rows;
        r.retries += u64::from(out.retried);
        if r.epoch > 0 {
            done += out.ops;
            progress.0.store(done, Relaxed);
        }
        let pause = st.pause();
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    if r.ops > 0 || r.queries > 0 {
        let _ = tx.send(Msg::Interval(r));
    }
    let backlog = pacer.map_or(0, |mut p| p.backlog_at(Instant::now()));
    (all, backlog, error)
}

/// An opened window: its first mark, and the profile and the server's perf counters
/// being recorded over it (when asked for and possible).
type Window = (
    Mark,
    Option<Result<plumb_probes::profile::Recording, String>>,
    Option<Result<plumb_probes::perfstat::Counting, String>>,
);

/// Opens the measured window: the first mark, a profile and the server's perf counters
/// if asked for, then epoch 1.
fn open_window(ctx: &SqlContext<'_>, cfg: &SqlStepConfig, epoch: &AtomicU64) -> Window {
    let t0 = mark(ctx, true);
    // The client (plumb) and every server process alive now: the step's backends
    // connected before the window opened.
    let recording = ctx.profile.map(|dir| {
        let mut pids = vec![std::process::id()];
        if let Some(s) = &t0.server {
            pids.extend(s.procs.keys().copied());
        }
        plumb_probes::profile::start(&pids, dir, &format!("step{}", cfg.index))
    });
    // The server's own perf counters over the window.
    let counting = t0.server.as_ref().map(|s| {
        let pids: Vec<u32> = s.procs.keys().copied().collect();
        plumb_probes::perfstat::start(
            &pids,
            &std::env::temp_dir(),
            &format!("plumb-{}-step{}", std::process::id(), cfg.index),
        )
    });
    epoch.store(1, Relaxed);
    (t0, recording, counting)
}

/// Runs one step and returns what is stored.
pub fn run_sql_step(ctx: &mut SqlContext<'_>, cfg: &SqlStepConfig) -> StepOutcome {
    let started = SystemTime::now();
    let kind = cfg.plan.kind;
    let load = kind.is_load();
    let threads = drivers::threads_of(kind, &cfg.shape, cfg.threads);
    let classes = drivers::classes(kind);
    let fail = |e: SqlError| StepOutcome {
        histograms: None,
        status: StepStatus::Failed,
        error: Some(e.to_string()),
        verification_failed: false,
        started,
        ended: SystemTime::now(),
        summary: StepSummary::default(),
        intervals: Vec::new(),
        profile: None,
    };
    let max_id = if matches!(kind, SqlKind::Insert) {
        ctx.counters.max_id(cfg.shape.tables)
    } else {
        0
    };
    let shared = match drivers::before(ctx.endpoint, kind, &cfg.shape, ctx.ycsb.next) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let before = match ctx.counters.read() {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let epoch = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let progress: Vec<Padded> = (0..threads).map(|_| Padded::default()).collect();
    // Every client connected (`barrier`), then every client starts (`go`): without a
    // warm-up the window opens between the two, so no event falls outside it.
    let barrier = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let end = Barrier::new(threads + 1);
    let (tx, rx) = mpsc::channel::<Msg>();
    let warmup = if load { Duration::ZERO } else { cfg.warmup };
    ctx.progress.start(
        &cfg.plan.name,
        load.then_some(cfg.shape.table_size * u64::from(cfg.shape.tables)),
        (!load).then_some(cfg.duration),
    );
    // Whether every record the step's reads may ask for was loaded in this run.
    let all_present = match kind.tables() {
        plumb_workloads::SqlTables::Ycsb => ctx.ycsb.loaded,
        _ => *ctx.all_present,
    };

    let (marks, reports, dones, profile, perf) = std::thread::scope(|scope| {
        for (t, prog) in progress.iter().enumerate() {
            let plan = ThreadPlan {
                kind,
                shape: cfg.shape.clone(),
                distribution: cfg.distribution,
                seed: plumb_workloads::distribution::worker_seed(cfg.seed, cfg.index, t),
                run_seed: cfg.seed,
                thread: t,
                threads,
                max_id,
                all_present,
            };
            let pace = cfg.pace.filter(|_| !load);
            let (tx, epoch, stop, barrier, go, end, prog, ep, shared) = (
                tx.clone(),
                &epoch,
                &stop,
                &barrier,
                &go,
                &end,
                prog,
                ctx.endpoint,
                &shared,
            );
            std::thread::Builder::new()
                .name(format!("plumb-sql{t}"))
                .spawn_scoped(scope, move || {
                    let st = drivers::connect(ep, &plan, shared);
                    barrier.wait();
                    go.wait();
                    // Every client's schedule starts together, when they are released.
                    let pacer = pace.map(|p| {
                        let rate = p.ops_per_sec / threads as f64;
                        Pacer::with_arrivals(rate, Instant::now(), p.arrivals, plan.seed ^ 0x9ace)
                    });
                    let (kept, (all, backlog, error)) = match st {
                        Ok(mut st) => {
                            let n = classes.len();
                            let r = thread_loop(st.as_mut(), n, epoch, stop, prog, &tx, pacer);
                            (Some(st), r)
                        }
                        Err(e) => (None, (0, 0, Some(e))),
                    };
                    if error.is_some() {
                        stop.store(true, Relaxed);
                    }
                    let _ = tx.send(Msg::Done {
                        all_queries: all,
                        backlog,
                        error,
                    });
                    // The connection stays open until the closing mark is taken: a
                    // backend that exits takes its context switches with it.
                    end.wait();
                    drop(kept);
                })
                .expect("spawn client thread");
        }
        drop(tx);
        barrier.wait();
        let mut reports = Vec::new();
        let mut dones = Vec::new();
        type Done = (u64, u64, Option<SqlError>);
        let handle = |m: Msg, reports: &mut Vec<Report>, dones: &mut Vec<Done>| match m {
            Msg::Interval(r) => reports.push(r),
            Msg::Done {
                all_queries,
                backlog,
                error,
            } => dones.push((all_queries, backlog, error)),
        };
        let opened = warmup.is_zero().then(|| open_window(ctx, cfg, &epoch));
        go.wait();
        let warm_end = Instant::now() + warmup;
        while Instant::now() < warm_end && !ctx.interrupt.load(Relaxed) && !stop.load(Relaxed) {
            if let Ok(m) = rx.recv_timeout(Duration::from_millis(100)) {
                handle(m, &mut reports, &mut dones);
            }
        }
        let (t0, recording, counting) = opened.unwrap_or_else(|| open_window(ctx, cfg, &epoch));
        let mut marks = vec![t0.clone()];
        let deadline = (!load).then(|| t0.at + cfg.duration);
        let mut next_tick = t0.at + Duration::from_secs(1);
        loop {
            if dones.len() == threads {
                break;
            }
            let now = Instant::now();
            if ctx.interrupt.load(Relaxed)
                || deadline.is_some_and(|d| now >= d)
                || stop.load(Relaxed)
            {
                stop.store(true, Relaxed);
            }
            if now >= next_tick {
                marks.push(mark(ctx, false));
                epoch.fetch_add(1, Relaxed);
                next_tick += Duration::from_secs(1);
                let done: u64 = progress.iter().map(|p| p.0.load(Relaxed)).sum();
                ctx.progress.tick(done, now - t0.at);
                continue;
            }
            let mut wait = next_tick - now;
            if let Some(d) = deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            match rx.recv_timeout(wait.min(Duration::from_millis(100))) {
                Ok(m) => handle(m, &mut reports, &mut dones),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        marks.push(mark(ctx, true));
        let profile = recording.map(|r| r.and_then(|r| r.stop()));
        let perf = counting.map(|c| c.and_then(|c| c.stop()));
        end.wait();
        while let Ok(m) = rx.recv() {
            handle(m, &mut reports, &mut dones);
        }
        (marks, reports, dones, profile, perf)
    });
    ctx.progress.finish();
    let ended = SystemTime::now();
    let interrupted = ctx.interrupt.load(Relaxed);
    let all_queries: u64 = dones.iter().map(|d| d.0).sum();
    let backlog: u64 = dones.iter().map(|d| d.1).sum();
    let mut error = dones.into_iter().find_map(|d| d.2);
    if let Some(next) = shared.ycsb_next_insert() {
        ctx.ycsb.next = Some(next);
    }
    // A load finishes its tables (keys, statistics) before the server's counters are
    // read, as part of its work; a step's own check after them, so it costs nothing
    // per query.
    let finish = |error: &mut Option<SqlError>| {
        if error.is_none() && !interrupted {
            let done = ctx
                .endpoint
                .connect()
                .and_then(|mut c| drivers::after(c.as_mut(), kind, &cfg.shape));
            if let Err(e) = done {
                *error = Some(e);
            }
        }
    };
    if load {
        finish(&mut error);
    }
    // The server's counters once every client has gone.
    let after = ctx
        .counters
        .wait_for_clients_to_leave()
        .and_then(|_| ctx.counters.settled());
    if !load {
        finish(&mut error);
    }
    let db_bytes = ctx
        .data_dir
        .and_then(|d| plumb_probes::dirsize::dir_bytes(d).ok())
        .or_else(|| ctx.counters.db_bytes());
    if kind == SqlKind::Delete || kind == SqlKind::Load {
        *ctx.all_present = load && error.is_none() && !interrupted;
    }
    if kind == SqlKind::YcsbLoad {
        ctx.ycsb.loaded = error.is_none() && !interrupted;
    }

    // Intervals and totals.
    let first = marks[0].clone();
    let last = marks.last().expect("closing mark").clone();
    let epochs = marks.len() - 1;
    let mut per: Vec<(u64, LatencyHistogram)> =
        (0..epochs).map(|_| (0, LatencyHistogram::new())).collect();
    let mut total = LatencyHistogram::new();
    let mut open = OpenTally::default();
    let mut by_class: Vec<LatencyHistogram> =
        classes.iter().map(|_| LatencyHistogram::new()).collect();
    let (mut ops, mut txns, mut queries, mut rows, mut retries) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for r in &reports {
        if r.epoch == 0 {
            continue;
        }
        let slot = &mut per[(r.epoch as usize - 1).min(epochs.saturating_sub(1))];
        slot.0 += r.ops;
        slot.1.merge(&r.hist);
        total.merge(&r.hist);
        ops += r.ops;
        txns += r.txns;
        queries += r.queries;
        rows += r.rows;
        retries += r.retries;
        if let Some(o) = &r.open {
            open.merge(o);
        }
        for (all, h) in by_class.iter_mut().zip(&r.by_class) {
            all.merge(h);
        }
    }
    let mut intervals: Vec<Interval> = per
        .iter()
        .enumerate()
        .map(|(i, (n, h))| {
            let (a, b) = (&marks[i], &marks[i + 1]);
            let secs = (b.at - a.at).as_secs_f64();
            metrics::interval(
                (b.at - first.at).as_secs_f64(),
                secs,
                *n,
                h,
                b.client.delta(&a.client).cpu_us(),
                b.disk.zip(a.disk).map(|(x, y)| x.delta(&y)),
                b.noise_since(a),
            )
        })
        .collect();
    if metrics::empty_tail(&intervals) {
        intervals.pop();
    }
    let n_intervals = intervals.len();
    let secs = (last.at - first.at).as_secs_f64();
    let client = last.client.delta(&first.client);
    let server = last
        .server
        .as_ref()
        .zip(first.server.as_ref())
        .map(|(b, a)| b.delta(a));
    let disk = last.disk.zip(first.disk).map(|(b, a)| b.delta(&a));
    let noise = last.noise_since(&first);
    let [rd_op, rkb_op, wr_op, wkb_op] = metrics::disk_per_op(disk.as_ref(), ops);
    // Per op: per query, except for the load, whose ops are rows (a statement there
    // inserts a thousand).
    let per_q = |x: f64| metrics::per_op(Some(x), ops);
    let counters_query = match (&after, &before) {
        (Ok(b), a) => per_query(b, a, if load { ops } else { all_queries }),
        _ => Default::default(),
    };
    let status = if interrupted {
        StepStatus::Interrupted
    } else if error.is_some() {
        StepStatus::Failed
    } else {
        StepStatus::Ok
    };
    let verification_failed = matches!(error, Some(SqlError::Verify(_)));
    let summary = StepSummary {
        ops,
        secs,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        p50_us: total.quantile_us(0.5),
        p99_us: total.quantile_us(0.99),
        p999_us: total.quantile_us(0.999),
        p9999_us: total.quantile_us(0.9999),
        pmax_us: total.max_us(),
        by_op: metrics::by_op(classes, &by_class),
        open_loop: cfg
            .pace
            .filter(|_| !load)
            .map(|p| open.summary(&p, backlog)),
        cpu_us_op: per_q(client.cpu_us() as f64),
        usr_us_op: per_q(client.user_us as f64),
        sys_us_op: per_q(client.system_us as f64),
        csw_op: per_q(client.csw() as f64),
        rd_op,
        rkb_op,
        wr_op,
        wkb_op,
        device: metrics::device_io(disk.as_ref(), secs),
        db_gb: db_bytes.map(|b| b as f64 / metrics::GB),
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        qos: metrics::qos(&intervals),
        // The client's hardware counters are not read on SQL steps; the server's perf
        // counters are in `server.perf_query`, and what perf refused is said here.
        hw: HwCounters {
            unsupported: Some(match &perf {
                Some(Ok(c)) if c.missing.is_empty() => {
                    "the client's are not read on SQL steps (the server's: server.perf_query)"
                        .into()
                }
                Some(Ok(c)) => format!(
                    "the server's: {}",
                    c.missing
                        .iter()
                        .map(|(e, why)| format!("{e} {why}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(Err(why)) => format!("the server's: {why}"),
                None => "not read: an external server's processes are not visible".into(),
            }),
            ..HwCounters::default()
        },
        server: Some(ServerCosts {
            tps: if secs > 0.0 { txns as f64 / secs } else { 0.0 },
            rows_query: (queries > 0).then(|| rows as f64 / queries as f64),
            cpu_us_query: server.and_then(|s| per_q(s.cpu_us() as f64)),
            csw_query: server.and_then(|s| per_q(s.csw() as f64)),
            cpu_unavailable: ctx
                .server_pid
                .is_none()
                .then(|| "an external server: plumb cannot see its processes".to_string()),
            counters_query,
            retries,
            queries,
            perf_query: match &perf {
                Some(Ok(c)) => c
                    .values
                    .iter()
                    .filter_map(|(ev, v)| {
                        // task-clock comes in ms: µs per query reads beside srv_us_q.
                        let (name, v) = if ev == "task-clock" {
                            ("task-clock-us".to_string(), v * 1000.0)
                        } else {
                            (ev.clone(), *v)
                        };
                        Some((name, metrics::per_op(Some(v), ops)?))
                    })
                    .collect(),
                _ => Default::default(),
            },
            perf_unavailable: match &perf {
                Some(Ok(c)) => c
                    .missing
                    .iter()
                    .map(|(e, why)| format!("{e}: {why}"))
                    .collect(),
                Some(Err(why)) => vec![why.clone()],
                None => vec!["not counted: plumb cannot see an external server's processes".into()],
            },
        }),
        ..StepSummary::default()
    };
    StepOutcome {
        histograms: Some(StepHistograms {
            intervals: per.into_iter().map(|(_, h)| h).take(n_intervals).collect(),
            total,
        }),
        status,
        error: error.map(|e| e.to_string()),
        verification_failed,
        started,
        ended,
        summary,
        intervals,
        profile,
    }
}
