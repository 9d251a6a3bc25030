//! Runs one insert-benchmark step through the runner's measuring kernel
//! ([`plumb_runner::kernel`]), the same timed loop and sampler as every family. Each
//! client is an inserter (paced open-loop in the query steps, as fast as it goes in
//! l.i0/l.i1/l.i2) and, in the query steps, a querier (closed loop, or paced when
//! asked). The step's main ops are the kernel's measured threads: the inserters in the
//! load steps, the queriers in the query steps, where the inserters run beside them as
//! the kernel's writers, their commits tallied apart second by second. Per op nothing
//! is shared but one relaxed atomic per commit (the id range it takes).

use crate::error::IbError;
use crate::row::{Row, RowGen};
use crate::target::{IbConn, IbTarget, SecIndex};
use plumb_core::{
    IbSecond, IbSummary, Interval, OpLatency, PerfCounted, Qos, StepStatus, StepSummary,
};
use plumb_probes::diskstats::DeviceStats;
use plumb_probes::process;
use plumb_runner::kernel::{
    self, Counts, Gauge, Lane, Mark, Part, Run, ServerGauge, ServerTree, Sut, Tally, Timing,
};
use plumb_runner::{metrics, LatencyHistogram, Pacer, Progress, StepHistograms, StepOutcome};
use plumb_servers::waits::WatchedGauge;
use plumb_workloads::{IbKind, IbStepPlan};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, SystemTime};

/// A step's parameters.
#[derive(Debug, Clone)]
pub struct IbStepConfig {
    /// Position in the run (seeds differ per step).
    pub index: usize,
    /// What and under which name.
    pub plan: IbStepPlan,
    /// Clients: inserters, and as many queriers in the query steps.
    pub clients: u32,
    /// Rows to insert in l.i0, l.i1 or l.i2 (all clients together).
    pub rows: u64,
    /// Measured time of a query step.
    pub duration: Duration,
    /// Each insert commit deletes as many of the oldest rows (l.i1, l.i2, query steps).
    pub delete_per_insert: bool,
    /// Rows per query: the IN-list of a point query, the LIMIT of a range query.
    pub rows_per_query: u32,
    /// The run's seed.
    pub seed: u64,
    /// Open loop for the query clients of the query steps: the rate offered across
    /// them, each query timed from its intended start; `None`: as fast as they can,
    /// the insert benchmark's own way.
    pub query_pace: Option<plumb_workloads::Pace>,
    /// Seconds per group of perf events counted in turn over the step's window
    /// ([`plumb_probes::perfgroups`]); 0 counts them all at once (a server's always; an
    /// embedded engine's only in turn, as `plumb kv --perf-groups`).
    pub perf_groups: u32,
    /// Samples per second of a server's sessions' waits ([`plumb_servers::waits`]); 0
    /// samples none.
    pub wait_hz: f64,
}

/// What plumb knows of the table between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IbTally {
    /// The next primary key to hand out (ids start at 1, as auto-increment does).
    pub next_id: u64,
    /// The oldest primary key not yet deleted.
    pub oldest: u64,
    /// Rows the table should hold.
    pub rows: u64,
}

impl Default for IbTally {
    fn default() -> Self {
        IbTally {
            next_id: 1,
            oldest: 1,
            rows: 0,
        }
    }
}

/// What the step runs against.
pub struct IbContext<'a> {
    /// The table.
    pub target: &'a dyn IbTarget,
    /// The device under its data, when plumb can see it.
    pub disk: Option<&'a DeviceStats>,
    /// Set by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Progress display.
    pub progress: &'a dyn Progress,
    /// What plumb knows of the table; updated by the step.
    pub tally: &'a mut IbTally,
}

/// What one step produced: its stored outcome, and for the write-debt step what was
/// done (stored with the step's config).
pub struct IbStepResult {
    /// Stored like any step.
    pub outcome: StepOutcome,
    /// What the unmeasured step did.
    pub note: Option<String>,
}

/// Where an op's counts go among the kernel's [`Counts`]: the rows a commit deleted …
const DELETED: usize = 0;
/// … and the rows a query found.
const FOUND: usize = 1;

/// One commit or query as the kernel counts it: its ops are the rows a commit inserted
/// or the one query; the rows it deleted or found are the family's counts.
#[derive(Default)]
struct Op {
    ops: u64,
    deleted: u64,
    found: u64,
    /// The inserters have used the step's budget of rows.
    done: bool,
}

impl kernel::Outcome for Op {
    #[inline]
    fn ops(&self) -> u64 {
        self.ops
    }

    #[inline]
    fn bytes(&self) -> u64 {
        0
    }

    #[inline]
    fn finished(&self) -> bool {
        self.done
    }

    #[inline]
    fn count(&self, c: &mut Counts) {
        c[DELETED] += self.deleted;
        c[FOUND] += self.found;
    }
}

/// Shared by the threads of one step: relaxed counters touched once per commit.
struct Shared<'a> {
    /// Rows claimed by inserters so far (a budget for the unlimited steps).
    claimed: AtomicU64,
    /// The next primary key (embedded engines use it; a server's auto-increment
    /// hands out the same dense range).
    next_id: AtomicU64,
    /// The oldest id not yet claimed for deletion.
    oldest: AtomicU64,
    cfg: &'a IbStepConfig,
    target: &'a dyn IbTarget,
    /// Clients (inserters, and as many queriers in the query steps).
    clients: usize,
    /// The step has queriers (a query step): the inserters are the kernel's writers.
    queries: bool,
}

/// What a client thread leaves the step: its error's message when the error was a
/// verification failure (the kernel keeps errors as text).
#[derive(Default)]
struct Client {
    verify: Option<String>,
}

/// Where the system under test runs: a server's process tree, or plumb's own process.
fn sut(ctx: &IbContext<'_>) -> Sut {
    match ctx.target.server_pid() {
        Some(pid) => Sut::Server(Some(pid)),
        None => Sut::InProcess,
    }
}

fn unix_secs() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// One client thread: its connection (setup, outside the window), then its inserts or
/// its queries.
fn client(lane: &Lane<'_>, sh: &Shared<'_>) -> Result<(), IbError> {
    let mut conn = sh.target.connect()?;
    // Writer w's index is clients + w: its client is w.
    let client = lane.index() % sh.clients;
    if lane.writer() || !sh.queries {
        inserter(&mut *conn, sh, lane, client)
    } else {
        querier(&mut *conn, sh, lane, client)
    }
}

fn inserter(
    conn: &mut dyn IbConn,
    sh: &Shared<'_>,
    lane: &Lane<'_>,
    client: usize,
) -> Result<(), IbError> {
    let cfg = sh.cfg;
    let kind = cfg.plan.kind;
    let paced = kind.rate_limited();
    let rpc = if paced {
        cfg.plan.rows_per_commit.min(cfg.plan.rate).max(1)
    } else {
        cfg.plan.rows_per_commit.max(1)
    } as u64;
    let deletes = cfg.delete_per_insert && kind != IbKind::Load;
    // A commit due at or after the window's end is not the step's.
    let mut pacer = paced.then(|| {
        let start = lane.window_start();
        Pacer::new(f64::from(cfg.plan.rate) / rpc as f64, start).until(start + cfg.duration)
    });
    let mut gen = RowGen::new(plumb_workloads::distribution::worker_seed(
        cfg.seed, cfg.index, client,
    ));
    let mut rows: Vec<Row> = Vec::with_capacity(rpc as usize);
    lane.drive_counted(Timing::Head, u64::MAX, pacer.as_mut(), |clock| {
        let n = if paced {
            rpc
        } else {
            let before = sh.claimed.fetch_add(rpc, Relaxed);
            if before >= cfg.rows {
                return Ok(Op {
                    done: true,
                    ..Op::default()
                });
            }
            rpc.min(cfg.rows - before)
        };
        let first = sh.next_id.fetch_add(n, Relaxed);
        let when = unix_secs();
        rows.clear();
        rows.extend((0..n).map(|i| gen.row(first + i, when)));
        conn.insert(&rows)?;
        // The commit is timed to here: its deletes are the client's own work.
        clock.end();
        let mut deleted = 0;
        if deletes {
            // The oldest rows, as many as were inserted; never within reach of the rows
            // other clients may still be inserting.
            let lo = sh.oldest.load(Relaxed);
            let margin = 2 * rpc * u64::from(cfg.clients);
            if lo + n + margin <= sh.next_id.load(Relaxed) {
                let lo = sh.oldest.fetch_add(n, Relaxed);
                deleted = conn.delete_range(lo, lo + n)?;
            }
        }
        Ok(Op {
            ops: n,
            deleted,
            ..Op::default()
        })
    })
}

fn querier(
    conn: &mut dyn IbConn,
    sh: &Shared<'_>,
    lane: &Lane<'_>,
    client: usize,
) -> Result<(), IbError> {
    let cfg = sh.cfg;
    let mut gen = RowGen::new(plumb_workloads::distribution::worker_seed(
        cfg.seed ^ 0x9e1e_c7ed,
        cfg.index,
        client,
    ));
    let point = cfg.plan.kind == IbKind::PointQueries;
    let per = cfg.rows_per_query.max(1);
    let mut ids = vec![0u64; per as usize];
    let mut pacer = cfg.query_pace.as_ref().map(|p| {
        let seed = plumb_workloads::distribution::worker_seed(cfg.seed ^ 0x9ace, cfg.index, client);
        Pacer::share(p, cfg.clients as usize, lane.window_start(), seed)
    });
    lane.drive_counted(Timing::Loop, u64::MAX, pacer.as_mut(), |_| {
        let found = if point {
            let lo = sh.oldest.load(Relaxed);
            let hi = sh.next_id.load(Relaxed).max(lo + 1);
            for id in ids.iter_mut() {
                *id = lo + gen.below(hi - lo);
            }
            conn.point(&ids)?
        } else {
            let ix = SecIndex::ALL[gen.below(3) as usize];
            let from = gen.below(ix.first_column_values()) as i32;
            conn.range(ix, from, per)?
        };
        Ok(Op {
            ops: 1,
            found,
            ..Op::default()
        })
    })
}

fn latency(h: &LatencyHistogram) -> OpLatency {
    h.op_latency()
}

fn failed(started: SystemTime, e: &IbError) -> IbStepResult {
    IbStepResult {
        outcome: StepOutcome {
            histograms: None,
            status: StepStatus::Failed,
            error: Some(e.to_string()),
            verification_failed: matches!(e, IbError::Verify(_)),
            started,
            ended: SystemTime::now(),
            summary: StepSummary::default(),
            intervals: Vec::new(),
            profile: None,
        },
        note: None,
    }
}

/// Runs one step and returns what is stored.
pub fn run_ib_step(ctx: &mut IbContext<'_>, cfg: &IbStepConfig) -> IbStepResult {
    match cfg.plan.kind {
        IbKind::Index | IbKind::Debt => run_single(ctx, cfg),
        _ => run_clients(ctx, cfg),
    }
}

/// l.x and the write-debt step: one call, timed whole between two marks.
fn run_single(ctx: &mut IbContext<'_>, cfg: &IbStepConfig) -> IbStepResult {
    let started = SystemTime::now();
    ctx.progress.start(&cfg.plan.name, None, None);
    let mut gauge = WatchedGauge::new(
        ServerGauge::new(sut(ctx), cfg.index, cfg.perf_groups, None),
        ctx.target.endpoint(),
        cfg.wait_hz,
    );
    let a = Mark::read(ctx.disk, &mut gauge);
    gauge.opened();
    let (rows, note) = match cfg.plan.kind {
        IbKind::Index => match ctx.target.create_indexes() {
            Ok(n) => (n, None),
            Err(e) => {
                ctx.progress.finish();
                return failed(started, &e);
            }
        },
        _ => match ctx.target.reduce_debt() {
            Ok(what) => (0, Some(what)),
            Err(e) => {
                ctx.progress.finish();
                return failed(started, &e);
            }
        },
    };
    let b = Mark::read(ctx.disk, &mut gauge);
    gauge.closed();
    ctx.progress.finish();
    let secs = (b.at - a.at).as_secs_f64();
    let mut ib = IbSummary {
        clients: 1,
        rows_expected: ctx.tally.rows,
        ..IbSummary::default()
    };
    costs(ctx, &gauge.server.tree, &a, &b, rows, rows, &mut ib);
    let counted = count_check(ctx, &mut ib);
    // No op was timed on its own: no percentiles.
    let base = kernel::summary(&a, &b, rows, &LatencyHistogram::new());
    let whole = [Interval {
        t: secs,
        secs,
        ops: rows,
        ..Interval::default()
    }];
    let summary = summary_of(ctx, &mut gauge, (&a, &b), &whole, base, ib);
    let (device, steal_pct, outside_cpu_pct) =
        (summary.device, summary.steal_pct, summary.outside_cpu_pct);
    let (status, error, verification_failed) = match counted {
        Ok(()) => (StepStatus::Ok, None, false),
        Err(e) => (StepStatus::Failed, Some(e.to_string()), true),
    };
    IbStepResult {
        outcome: StepOutcome {
            histograms: None,
            status,
            error,
            verification_failed,
            started,
            ended: SystemTime::now(),
            summary,
            intervals: vec![Interval {
                t: secs,
                secs,
                ops: rows,
                ops_sec: if secs > 0.0 { rows as f64 / secs } else { 0.0 },
                device,
                steal_pct,
                outside_cpu_pct,
                ..Interval::default()
            }],
            profile: None,
        },
        note,
    }
}

/// What perf counted over the window per op, as stored (whose: the server's processes,
/// or plumb's own with an embedded engine counted in turn).
fn perf_of(gauge: &ServerGauge<'_>, intervals: &[Interval], total: u64) -> Option<PerfCounted> {
    kernel::perf_counted(&gauge.perf, gauge.perf_whose?, intervals, total)
}

/// The step's summary, built here for every step of the family: the kernel's figures of
/// the window from `a` to `b` (`base`: its ops are the step's main op, inserted rows or
/// queries; CPU and context switches are plumb's own) with the insert benchmark's:
/// perf's counts per main op and the server's waits over `intervals`, the database's
/// size, the system under test's memory, the host's noise beside a server, and `ib`.
fn summary_of(
    ctx: &IbContext<'_>,
    gauge: &mut WatchedGauge<'_>,
    (a, b): (&Mark<()>, &Mark<()>),
    intervals: &[Interval],
    base: StepSummary,
    ib: IbSummary,
) -> StepSummary {
    // perf's counts per main op: an inserted row, or a query in a query step.
    let perf = perf_of(&gauge.server, intervals, base.ops);
    StepSummary {
        perf,
        db_gb: db_gb(ctx),
        rss_gb: ib.rss_gb,
        ib: Some(ib),
        ..gauge.beside(base, (a, b), intervals)
    }
}

fn db_gb(ctx: &IbContext<'_>) -> Option<f64> {
    ctx.target
        .data_dir()
        .and_then(|d| plumb_probes::dirsize::dir_bytes(d).ok())
        .map(|b| b as f64 / metrics::GB)
}

/// The system under test's CPU, context switches, device IO and memory, per op.
fn costs(
    ctx: &IbContext<'_>,
    gauge: &ServerTree,
    a: &Mark<()>,
    b: &Mark<()>,
    ops: u64,
    inserted: u64,
    ib: &mut IbSummary,
) {
    let sut = match gauge.spent() {
        Some(s) => Some(s),
        None if ctx.target.server_pid().is_none() => Some(b.process.delta(&a.process)),
        None => None,
    };
    ib.cpu_us_op = sut.and_then(|s| metrics::per_op(Some(s.cpu_us() as f64), ops));
    ib.csw_op = sut.and_then(|s| metrics::per_op(Some(s.csw() as f64), ops));
    let disk = b.disk_since(a);
    ib.rd_op = disk.and_then(|d| metrics::per_op(Some(d.reads as f64), ops));
    ib.rkb_op = disk.and_then(|d| metrics::per_op(Some(d.read_kb()), ops));
    ib.wkb_ins = disk.and_then(|d| metrics::per_op(Some(d.written_kb()), inserted));
    ib.rss_gb = match (&gauge.ends[1], ctx.target.server_pid()) {
        (Some(s), _) => s.rss_bytes(),
        (None, None) => process::self_rss_bytes(),
        (None, Some(_)) => None,
    }
    .map(|x| x as f64 / metrics::GB);
}

/// The engine's own count of rows against plumb's.
fn count_check(ctx: &IbContext<'_>, ib: &mut IbSummary) -> Result<(), IbError> {
    let n = ctx.target.count_rows()?;
    ib.rows_counted = Some(n);
    if n != ib.rows_expected {
        return Err(IbError::Verify(format!(
            "{} counts {n} rows; plumb inserted and deleted to leave {}",
            ctx.target.describe(),
            ib.rows_expected
        )));
    }
    Ok(())
}

/// The load steps (l.i0, l.i1, l.i2) and the query steps: the clients through the
/// kernel's timed loop, then what they did.
fn run_clients(ctx: &mut IbContext<'_>, cfg: &IbStepConfig) -> IbStepResult {
    let started = SystemTime::now();
    let kind = cfg.plan.kind;
    let clients = cfg.clients.max(1) as usize;
    let queries = kind.rate_limited();
    if kind == IbKind::Load {
        if let Err(e) = ctx.target.create_table() {
            return failed(started, &e);
        }
        *ctx.tally = IbTally::default();
    }
    let sh = Shared {
        claimed: AtomicU64::new(0),
        next_id: AtomicU64::new(ctx.tally.next_id),
        oldest: AtomicU64::new(ctx.tally.oldest),
        cfg,
        target: ctx.target,
        clients,
        queries,
    };
    ctx.progress.start(
        &cfg.plan.name,
        (!queries).then_some(cfg.rows),
        queries.then_some(cfg.duration),
    );
    let spec = kernel::Spec {
        threads: clients,
        writers: if queries { clients } else { 0 },
        thread_name: "plumb-ib",
        classes: 0,
        warmup: Duration::ZERO,
        // An unlimited step ends when its inserters have used the budget.
        duration: queries.then_some(cfg.duration),
        disk: ctx.disk,
        interrupt: ctx.interrupt,
        progress: ctx.progress,
        clients: None,
        on_open: None,
        faults: None,
    };
    let mut gauge = WatchedGauge::new(
        ServerGauge::new(sut(ctx), cfg.index, cfg.perf_groups, None),
        ctx.target.endpoint(),
        cfg.wait_hz,
    );
    let run = kernel::run(&spec, &mut gauge, |lane: &Lane<'_>, out: &mut Client| {
        let r = client(lane, &sh);
        if let Err(e @ IbError::Verify(_)) = &r {
            out.verify = Some(e.to_string());
        }
        r
    });
    ctx.progress.finish();
    ctx.tally.next_id = sh.next_id.load(Relaxed);
    ctx.tally.oldest = sh.oldest.load(Relaxed);
    clients_outcome(ctx, cfg, &run, gauge, started)
}

/// What a client step stores, from what its run measured: the kernel's figures and the
/// insert benchmark's, the engine's count of rows checked against plumb's, the verdict.
fn clients_outcome(
    ctx: &mut IbContext<'_>,
    cfg: &IbStepConfig,
    run: &Run<Client, ()>,
    mut gauge: WatchedGauge<'_>,
    started: SystemTime,
) -> IbStepResult {
    let queries = cfg.plan.kind.rate_limited();
    let interrupted = ctx.interrupt.load(Relaxed);
    // The first error a client met, and whether it was a verification failure.
    let error: Option<(String, bool)> = run.errors.first().map(|e| {
        let verify = run.outputs.iter().any(|c| c.verify.as_ref() == Some(e));
        (e.clone(), verify)
    });
    let (first, last) = (run.first(), run.last());
    // A server's CPU is known over the whole window only.
    // Each interval's offered rate is the queries', in a query step.
    let (intervals, base) = run.figures(
        |a, b, iv| gauge.server.tree.beside((first, last), a, b, iv),
        &[],
        cfg.query_pace.as_ref().filter(|_| queries),
    );
    let mut ib = clients_figures(cfg, &run.tally, &intervals, base.secs, ctx.tally.rows);
    ctx.tally.rows = ib.rows_expected;
    costs(
        ctx,
        &gauge.server.tree,
        first,
        last,
        base.ops,
        ib.inserts,
        &mut ib,
    );
    // Every client is gone: the engine's own count must agree with plumb's.
    let counted = if error.is_none() && !interrupted {
        count_check(ctx, &mut ib)
    } else {
        Ok(())
    };
    let (status, err_text, verification_failed) = verdict(interrupted, error, &counted, &ib);
    let summary = summary_of(ctx, &mut gauge, (first, last), &intervals, base, ib);
    IbStepResult {
        outcome: StepOutcome {
            // The main op's, for a rate search's exact quantile.
            histograms: Some(StepHistograms {
                intervals: Vec::new(),
                total: run.tally.total.clone(),
            }),
            status,
            error: err_text,
            verification_failed,
            started,
            ended: SystemTime::now(),
            summary,
            intervals,
            profile: None,
        },
        note: None,
    }
}

/// The insert benchmark's figures of a client step from the kernel's tally and 1-second
/// `intervals` over `secs`: the inserts', deletes' and queries' totals, rates, latencies
/// and seconds, the 95% rule's verdict on the insert rate, and the rows the table should
/// now hold after `rows_before`.
fn clients_figures(
    cfg: &IbStepConfig,
    t: &Tally,
    intervals: &[Interval],
    secs: f64,
    rows_before: u64,
) -> IbSummary {
    let kind = cfg.plan.kind;
    let clients = cfg.clients.max(1) as usize;
    let queries = kind.rate_limited();
    // Totals and seconds: the inserts are the measured threads' in the load steps and
    // the writers' beside the queries in the query steps.
    let (ins, q): (&[Part], &[Part]) = if queries {
        (&t.writer_intervals, &t.intervals)
    } else {
        (&t.intervals, &[])
    };
    let sum = |parts: &[Part], f: fn(&Part) -> u64| parts.iter().map(f).sum::<u64>();
    let (inserted, deleted) = (sum(ins, |p| p.ops), sum(ins, |p| p.counts[DELETED]));
    let (nq, q_rows) = (sum(q, |p| p.ops), sum(q, |p| p.counts[FOUND]));
    let no_queries = LatencyHistogram::new();
    let (ins_h, q_h) = if queries {
        (&t.writer.hist, &t.total)
    } else {
        (&t.total, &no_queries)
    };
    let seconds: Vec<IbSecond> = intervals
        .iter()
        .zip(ins)
        .enumerate()
        .map(|(i, (iv, p))| IbSecond {
            t: iv.t,
            secs: iv.secs,
            ins: p.ops,
            del: p.counts[DELETED],
            queries: q.get(i).map_or(0, |q| q.ops),
            ins_max_us: p.hist.max_us(),
            q_p99_us: q.get(i).and_then(|q| q.hist.quantile_us(0.99)),
        })
        .collect();
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let target_ips = queries.then(|| f64::from(cfg.plan.rate) * clients as f64);
    // The rule asks whether the inserts kept up with their schedule: they were due only
    // until the deadline, so the time the clients took to stop after it (a query in
    // flight, on a busy machine tens of ms, 5% of a 1 s step) is not held against them.
    let due_secs = secs.min(cfg.duration.as_secs_f64());
    let ips = if due_secs > 0.0 {
        inserted as f64 / due_secs
    } else {
        0.0
    };
    let rate_ok = target_ips.map(|t| ips >= 0.95 * t);
    let ins_qos = Qos::of_series(seconds.iter().map(|s| {
        (
            s.secs,
            if s.secs > 0.0 {
                s.ins as f64 / s.secs
            } else {
                0.0
            },
        )
    }));
    IbSummary {
        clients: clients as u32,
        rows_per_commit: cfg.plan.rows_per_commit,
        target_ips,
        rate_ok,
        delete_per_insert: cfg.delete_per_insert && kind != IbKind::Load,
        inserts: inserted,
        deletes: deleted,
        queries: nq,
        ips,
        dps: rate(deleted),
        qps: rate(nq),
        rows_query: (nq > 0).then(|| q_rows as f64 / nq as f64),
        insert: latency(ins_h),
        query: latency(q_h),
        ins_qos,
        rows_expected: rows_before + inserted - deleted.min(rows_before + inserted),
        seconds,
        ..IbSummary::default()
    }
}

/// A client step's status, its error's text and whether it failed verification: Ctrl-C
/// first, then a client's `error` (and whether it was a verification failure), the
/// engine's count of rows, and the 95% rule on the insert rate.
fn verdict(
    interrupted: bool,
    error: Option<(String, bool)>,
    counted: &Result<(), IbError>,
    ib: &IbSummary,
) -> (StepStatus, Option<String>, bool) {
    let (ips, target_ips) = (ib.ips, ib.target_ips);
    if interrupted {
        (StepStatus::Interrupted, None, false)
    } else if let Some((e, verify)) = error {
        (StepStatus::Failed, Some(e), verify)
    } else if let Err(e) = counted {
        (StepStatus::Failed, Some(e.to_string()), true)
    } else if ib.rate_ok == Some(false) {
        (
            StepStatus::Failed,
            Some(format!(
                "inserts averaged {ips:.0}/s, below 95% of the {:.0}/s asked: the 95% rule \
                 fails the step and its {:.0} queries/s are not comparable",
                target_ips.unwrap_or(0.0),
                ib.qps
            )),
            // The engine works; it is too slow for the rate. Later steps still run.
            true,
        )
    } else {
        (StepStatus::Ok, None, false)
    }
}
