//! Runs one insert-benchmark step. Each client is an inserter (paced open-loop in the
//! query steps, as fast as it goes in l.i0/l.i1/l.i2) and, in the query steps, a
//! querier in a closed loop. Every thread keeps its own histograms and counts and hands
//! them to the sampler once a second; per op nothing is shared but one relaxed atomic
//! per commit (the id range it takes).

use crate::error::IbError;
use crate::row::{Row, RowGen};
use crate::target::{IbConn, IbTarget, SecIndex};
use plumb_core::{IbSecond, IbSummary, Interval, OpLatency, Qos, StepStatus, StepSummary};
use plumb_probes::cpustat::{self, Reading};
use plumb_probes::diskstats::{DeviceStats, DiskCounters};
use plumb_probes::process::{self, ProcessCounters};
use plumb_probes::proctree::{self, TreeSnapshot};
use plumb_runner::{
    metrics, Arrival, LatencyHistogram, OpenTally, Pacer, Progress, StepHistograms, StepOutcome,
};
use plumb_workloads::{IbKind, IbStepPlan};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant, SystemTime};

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

#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// One thread's figures for one second.
struct Report {
    epoch: u64,
    ins_rows: u64,
    del_rows: u64,
    queries: u64,
    q_rows: u64,
    ins: LatencyHistogram,
    q: LatencyHistogram,
    /// Open-loop queries: service times and lateness.
    q_open: OpenTally,
}

impl Report {
    fn new(epoch: u64) -> Report {
        Report {
            epoch,
            ins_rows: 0,
            del_rows: 0,
            queries: 0,
            q_rows: 0,
            ins: LatencyHistogram::new(),
            q: LatencyHistogram::new(),
            q_open: OpenTally::default(),
        }
    }
    fn busy(&self) -> bool {
        self.ins_rows > 0 || self.queries > 0 || self.del_rows > 0 || self.ins.count() > 0
    }
}

enum Msg {
    /// Boxed: a second's report is several histograms, sent once a second.
    Interval(Box<Report>),
    /// A client ended: its error, and (open-loop queriers) the queries it left due.
    Done(Option<IbError>, u64),
}

/// Shared by the threads of one step: relaxed counters touched once per commit.
struct Shared<'a> {
    epoch: AtomicU64,
    stop: AtomicBool,
    /// Rows claimed by inserters so far (a budget for the unlimited steps).
    claimed: AtomicU64,
    /// The next primary key (embedded engines use it; a server's auto-increment
    /// hands out the same dense range).
    next_id: AtomicU64,
    /// The oldest id not yet claimed for deletion.
    oldest: AtomicU64,
    progress: Vec<Padded>,
    cfg: &'a IbStepConfig,
}

#[derive(Clone)]
struct Mark {
    at: Instant,
    client: ProcessCounters,
    machine: Option<Reading>,
    server: Option<TreeSnapshot>,
    disk: Option<DiskCounters>,
}

/// The host's noise from `a` to `b`: an embedded engine runs in plumb's process; a
/// server's CPU is known only between marks that read its processes.
fn noise(ctx: &IbContext<'_>, a: &Mark, b: &Mark) -> metrics::HostNoise {
    let server = match (&b.server, &a.server) {
        (Some(y), Some(x)) => Some(y.delta(x).cpu_us()),
        _ if ctx.target.server_pid().is_none() => Some(0),
        _ => None,
    };
    metrics::host_noise(
        a.machine.as_ref(),
        b.machine.as_ref(),
        b.client.delta(&a.client).cpu_us(),
        server,
    )
}

fn mark(ctx: &IbContext<'_>, with_server: bool) -> Mark {
    Mark {
        at: Instant::now(),
        client: process::self_counters(),
        machine: cpustat::read().ok(),
        server: ctx
            .target
            .server_pid()
            .filter(|_| with_server)
            .and_then(proctree::tree_snapshot),
        disk: ctx.disk.and_then(|d| d.read().ok()),
    }
}

fn unix_secs() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Sends the finished second's report when the sampler has moved on.
fn roll(r: &mut Report, epoch: &AtomicU64, tx: &mpsc::Sender<Msg>) {
    let now = epoch.load(Relaxed);
    if now != r.epoch {
        let old = std::mem::replace(r, Report::new(now));
        if old.busy() {
            let _ = tx.send(Msg::Interval(Box::new(old)));
        }
    }
}

fn inserter(
    conn: &mut dyn IbConn,
    sh: &Shared<'_>,
    client: usize,
    start: Instant,
    tx: &mpsc::Sender<Msg>,
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
    let mut pacer = paced.then(|| Pacer::new(f64::from(cfg.plan.rate) / rpc as f64, start));
    let mut gen = RowGen::new(plumb_workloads::distribution::worker_seed(
        cfg.seed, cfg.index, client,
    ));
    let mut rows: Vec<Row> = Vec::with_capacity(rpc as usize);
    let mut r = Report::new(sh.epoch.load(Relaxed));
    let mut done = 0u64;
    let stop = || sh.stop.load(Relaxed);
    loop {
        let began = match &mut pacer {
            // A commit due at or after the window's end is not the step's.
            Some(p) => match p.wait_next(&stop) {
                Some(s) if s.from < start + cfg.duration => s.from,
                _ => break,
            },
            None => {
                if stop() {
                    break;
                }
                Instant::now()
            }
        };
        let n = if paced {
            rpc
        } else {
            let before = sh.claimed.fetch_add(rpc, Relaxed);
            if before >= cfg.rows {
                break;
            }
            rpc.min(cfg.rows - before)
        };
        let first = sh.next_id.fetch_add(n, Relaxed);
        let when = unix_secs();
        rows.clear();
        rows.extend((0..n).map(|i| gen.row(first + i, when)));
        conn.insert(&rows)?;
        let ns = began.elapsed().as_nanos() as u64;
        roll(&mut r, &sh.epoch, tx);
        r.ins.record_ns(ns);
        r.ins_rows += n;
        if deletes {
            // The oldest rows, as many as were inserted; never within reach of the rows
            // other clients may still be inserting.
            let lo = sh.oldest.load(Relaxed);
            let margin = 2 * rpc * u64::from(cfg.clients);
            if lo + n + margin <= sh.next_id.load(Relaxed) {
                let lo = sh.oldest.fetch_add(n, Relaxed);
                r.del_rows += conn.delete_range(lo, lo + n)?;
            }
        }
        if r.epoch > 0 {
            done += n;
            sh.progress[client].0.store(done, Relaxed);
        }
    }
    if r.busy() {
        let _ = tx.send(Msg::Interval(Box::new(r)));
    }
    Ok(())
}

fn querier(
    conn: &mut dyn IbConn,
    sh: &Shared<'_>,
    client: usize,
    start: Instant,
    tx: &mpsc::Sender<Msg>,
) -> Result<u64, IbError> {
    let cfg = sh.cfg;
    let mut gen = RowGen::new(plumb_workloads::distribution::worker_seed(
        cfg.seed ^ 0x9e1e_c7ed,
        cfg.index,
        client,
    ));
    let point = cfg.plan.kind == IbKind::PointQueries;
    let per = cfg.rows_per_query.max(1);
    let mut ids = vec![0u64; per as usize];
    let mut r = Report::new(sh.epoch.load(Relaxed));
    let mut pacer = cfg.query_pace.map(|p| {
        let seed = plumb_workloads::distribution::worker_seed(cfg.seed ^ 0x9ace, cfg.index, client);
        Pacer::with_arrivals(
            p.ops_per_sec / f64::from(cfg.clients.max(1)),
            start,
            p.arrivals,
            seed,
        )
    });
    let stop = || sh.stop.load(Relaxed);
    while !stop() {
        let due = match &mut pacer {
            Some(p) => match p.wait_next(&stop) {
                Some(a) => a,
                None => break,
            },
            None => Arrival::at(Instant::now()),
        };
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
        let end = Instant::now();
        roll(&mut r, &sh.epoch, tx);
        r.q.record_ns(end.saturating_duration_since(due.from).as_nanos() as u64);
        if pacer.is_some() {
            r.q_open.record(&due, end);
        }
        r.queries += 1;
        r.q_rows += found;
    }
    if r.busy() {
        let _ = tx.send(Msg::Interval(Box::new(r)));
    }
    Ok(pacer.map_or(0, |mut p| p.backlog_at(Instant::now())))
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

/// l.x and the write-debt step: one call, timed whole.
fn run_single(ctx: &mut IbContext<'_>, cfg: &IbStepConfig) -> IbStepResult {
    let started = SystemTime::now();
    ctx.progress.start(&cfg.plan.name, None, None);
    let a = mark(ctx, true);
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
    let b = mark(ctx, true);
    ctx.progress.finish();
    let secs = (b.at - a.at).as_secs_f64();
    let mut ib = IbSummary {
        clients: 1,
        rows_expected: ctx.tally.rows,
        ..IbSummary::default()
    };
    costs(ctx, &a, &b, rows, rows, &mut ib);
    let counted = count_check(ctx, &mut ib);
    let summary = summary_of(ctx, &a, &b, rows, ib);
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

/// The figures every step has, over the window from `a` to `b`: `ops` is the step's
/// main op (inserted rows, or queries); CPU and context switches are plumb's own.
fn summary_of(ctx: &IbContext<'_>, a: &Mark, b: &Mark, ops: u64, ib: IbSummary) -> StepSummary {
    let secs = (b.at - a.at).as_secs_f64();
    let client = b.client.delta(&a.client);
    let disk = b.disk.zip(a.disk).map(|(y, x)| y.delta(&x));
    let [rd_op, rkb_op, wr_op, wkb_op] = metrics::disk_per_op(disk.as_ref(), ops);
    let [cpu_us_op, usr_us_op, sys_us_op] = metrics::cpu_per_op(&client, ops);
    let noise = noise(ctx, a, b);
    StepSummary {
        ops,
        secs,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        cpu_us_op,
        usr_us_op,
        sys_us_op,
        csw_op: metrics::per_op(Some(client.csw() as f64), ops),
        rd_op,
        rkb_op,
        wr_op,
        wkb_op,
        device: metrics::device_io(disk.as_ref(), secs),
        db_gb: db_gb(ctx),
        rss_gb: ib.rss_gb,
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        ib: Some(ib),
        ..StepSummary::default()
    }
}

fn db_gb(ctx: &IbContext<'_>) -> Option<f64> {
    ctx.target
        .data_dir()
        .and_then(|d| plumb_probes::dirsize::dir_bytes(d).ok())
        .map(|b| b as f64 / metrics::GB)
}

/// The system under test's CPU, context switches, device IO and memory, per op.
fn costs(ctx: &IbContext<'_>, a: &Mark, b: &Mark, ops: u64, inserted: u64, ib: &mut IbSummary) {
    let sut = match (&b.server, &a.server) {
        (Some(y), Some(x)) => Some(y.delta(x)),
        _ if ctx.target.server_pid().is_none() => Some(b.client.delta(&a.client)),
        _ => None,
    };
    ib.cpu_us_op = sut.and_then(|s| metrics::per_op(Some(s.cpu_us() as f64), ops));
    ib.csw_op = sut.and_then(|s| metrics::per_op(Some(s.csw() as f64), ops));
    let disk = b.disk.zip(a.disk).map(|(y, x)| y.delta(&x));
    ib.rd_op = disk.and_then(|d| metrics::per_op(Some(d.reads as f64), ops));
    ib.rkb_op = disk.and_then(|d| metrics::per_op(Some(d.read_kb()), ops));
    ib.wkb_ins = disk.and_then(|d| metrics::per_op(Some(d.written_kb()), inserted));
    ib.rss_gb = match (&b.server, ctx.target.server_pid()) {
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
        epoch: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        claimed: AtomicU64::new(0),
        next_id: AtomicU64::new(ctx.tally.next_id),
        oldest: AtomicU64::new(ctx.tally.oldest),
        progress: (0..clients).map(|_| Padded::default()).collect(),
        cfg,
    };
    let threads = clients * if queries { 2 } else { 1 };
    let ready = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let end = Barrier::new(threads + 1);
    let (tx, rx) = mpsc::channel::<Msg>();
    ctx.progress.start(
        &cfg.plan.name,
        (!queries).then_some(cfg.rows),
        queries.then_some(cfg.duration),
    );
    let start_at = std::sync::OnceLock::<Instant>::new();
    let (marks, reports, errors) = std::thread::scope(|scope| {
        for t in 0..threads {
            let (tx, sh, ready, go, end, start_at, target) =
                (tx.clone(), &sh, &ready, &go, &end, &start_at, ctx.target);
            let (client, is_querier) = (t % clients, t >= clients);
            std::thread::Builder::new()
                .name(format!("plumb-ib{t}"))
                .spawn_scoped(scope, move || {
                    let conn = target.connect();
                    ready.wait();
                    go.wait();
                    let result = conn.and_then(|mut c| {
                        let start = *start_at.get().unwrap_or(&Instant::now());
                        if is_querier {
                            querier(&mut *c, sh, client, start, &tx)
                        } else {
                            inserter(&mut *c, sh, client, start, &tx).map(|()| 0)
                        }
                    });
                    if result.is_err() {
                        sh.stop.store(true, Relaxed);
                    }
                    let (error, backlog) = match result {
                        Ok(b) => (None, b),
                        Err(e) => (Some(e), 0),
                    };
                    let _ = tx.send(Msg::Done(error, backlog));
                    end.wait();
                })
                .expect("spawn client thread");
        }
        drop(tx);
        // Every connection is open: the window starts now.
        ready.wait();
        let t0 = mark(ctx, true);
        let _ = start_at.set(t0.at);
        sh.epoch.store(1, Relaxed);
        go.wait();
        let mut reports = Vec::new();
        let mut errors = Vec::new();
        let mut marks = vec![t0.clone()];
        let deadline = queries.then(|| t0.at + cfg.duration);
        let mut next_tick = t0.at + Duration::from_secs(1);
        loop {
            if errors.len() == threads {
                break;
            }
            let now = Instant::now();
            if ctx.interrupt.load(Relaxed) || deadline.is_some_and(|d| now >= d) {
                sh.stop.store(true, Relaxed);
            }
            if now >= next_tick {
                marks.push(mark(ctx, false));
                sh.epoch.fetch_add(1, Relaxed);
                next_tick += Duration::from_secs(1);
                let done: u64 = sh.progress.iter().map(|p| p.0.load(Relaxed)).sum();
                ctx.progress.tick(done, now - t0.at);
                continue;
            }
            let mut wait = next_tick - now;
            if let Some(d) = deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            match rx.recv_timeout(wait.min(Duration::from_millis(50))) {
                Ok(Msg::Interval(r)) => reports.push(*r),
                // An unlimited step ends when its inserters have used the budget.
                Ok(Msg::Done(e, b)) => errors.push((e, b)),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        marks.push(mark(ctx, true));
        end.wait();
        while let Ok(m) = rx.recv() {
            match m {
                Msg::Interval(r) => reports.push(*r),
                Msg::Done(e, b) => errors.push((e, b)),
            }
        }
        (marks, reports, errors)
    });
    ctx.progress.finish();
    let interrupted = ctx.interrupt.load(Relaxed);
    let backlog: u64 = errors.iter().map(|(_, b)| b).sum();
    let error = errors.into_iter().find_map(|(e, _)| e);

    // Totals and seconds.
    let epochs = marks.len() - 1;
    let mut per: Vec<Report> = (1..=epochs as u64).map(Report::new).collect();
    let (mut ins_h, mut q_h) = (LatencyHistogram::new(), LatencyHistogram::new());
    let mut q_open = OpenTally::default();
    let (mut inserted, mut deleted, mut nq, mut q_rows) = (0u64, 0u64, 0u64, 0u64);
    for r in &reports {
        let slot = &mut per[(r.epoch.max(1) as usize - 1).min(epochs.saturating_sub(1))];
        slot.ins_rows += r.ins_rows;
        slot.del_rows += r.del_rows;
        slot.queries += r.queries;
        slot.ins.merge(&r.ins);
        slot.q.merge(&r.q);
        ins_h.merge(&r.ins);
        q_h.merge(&r.q);
        q_open.merge(&r.q_open);
        inserted += r.ins_rows;
        deleted += r.del_rows;
        nq += r.queries;
        q_rows += r.q_rows;
    }
    ctx.tally.next_id = sh.next_id.load(Relaxed);
    ctx.tally.oldest = sh.oldest.load(Relaxed);
    ctx.tally.rows = ctx.tally.rows + inserted - deleted.min(ctx.tally.rows + inserted);
    let first = &marks[0];
    let last = marks.last().expect("closing mark");
    let secs = (last.at - first.at).as_secs_f64();
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let main_ops = if queries { nq } else { inserted };
    let main_h = if queries { &q_h } else { &ins_h };
    let mut intervals: Vec<Interval> = Vec::with_capacity(epochs);
    let mut seconds: Vec<IbSecond> = Vec::with_capacity(epochs);
    for (i, p) in per.iter().enumerate() {
        let (a, b) = (&marks[i], &marks[i + 1]);
        let s = (b.at - a.at).as_secs_f64();
        let (n, h) = if queries {
            (p.queries, &p.q)
        } else {
            (p.ins_rows, &p.ins)
        };
        intervals.push(metrics::interval(
            (b.at - first.at).as_secs_f64(),
            s,
            n,
            h,
            b.client.delta(&a.client).cpu_us(),
            b.disk.zip(a.disk).map(|(x, y)| x.delta(&y)),
            noise(ctx, a, b),
        ));
        seconds.push(IbSecond {
            t: (b.at - first.at).as_secs_f64(),
            secs: s,
            ins: p.ins_rows,
            del: p.del_rows,
            queries: p.queries,
            ins_max_us: p.ins.max_us(),
            q_p99_us: p.q.quantile_us(0.99),
        });
    }
    if metrics::empty_tail(&intervals) {
        intervals.pop();
        seconds.pop();
    }
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
    let ins_qos = metrics::qos_of(seconds.iter().map(|s| {
        (
            s.secs,
            if s.secs > 0.0 {
                s.ins as f64 / s.secs
            } else {
                0.0
            },
        )
    }));
    let mut ib = IbSummary {
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
        insert: latency(&ins_h),
        query: latency(&q_h),
        ins_qos,
        rows_expected: ctx.tally.rows,
        seconds,
        ..IbSummary::default()
    };
    costs(ctx, first, last, main_ops, inserted, &mut ib);
    // Every client is gone: the engine's own count must agree with plumb's.
    let counted = if error.is_none() && !interrupted {
        count_check(ctx, &mut ib)
    } else {
        Ok(())
    };
    let qos: Option<Qos> = metrics::qos(&intervals);
    let (status, err_text, verification_failed) = if interrupted {
        (StepStatus::Interrupted, None, false)
    } else if let Some(e) = &error {
        (
            StepStatus::Failed,
            Some(e.to_string()),
            matches!(e, IbError::Verify(_)),
        )
    } else if let Err(e) = &counted {
        (StepStatus::Failed, Some(e.to_string()), true)
    } else if rate_ok == Some(false) {
        (
            StepStatus::Failed,
            Some(format!(
                "inserts averaged {ips:.0}/s, below 95% of the {:.0}/s asked: the 95% rule \
                 fails the step and its {:.0} queries/s are not comparable",
                target_ips.unwrap_or(0.0),
                rate(nq)
            )),
            // The engine works; it is too slow for the rate. Later steps still run.
            true,
        )
    } else {
        (StepStatus::Ok, None, false)
    };
    let summary = StepSummary {
        p50_us: main_h.quantile_us(0.5),
        p99_us: main_h.quantile_us(0.99),
        p999_us: main_h.quantile_us(0.999),
        p9999_us: main_h.quantile_us(0.9999),
        pmax_us: main_h.max_us(),
        qos,
        open_loop: cfg
            .query_pace
            .filter(|_| queries)
            .map(|p| q_open.summary(&p, backlog)),
        ..summary_of(ctx, first, last, main_ops, ib)
    };
    IbStepResult {
        outcome: StepOutcome {
            // The main op's, for a rate search's exact quantile.
            histograms: Some(StepHistograms {
                intervals: Vec::new(),
                total: main_h.clone(),
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
