//! Runs one SQL step through the runner's measuring kernel ([`plumb_runner::kernel`]),
//! the same timed loop and sampler as every family: one client thread (one connection)
//! per lane, each of its events one op of the kernel's loop, closed or paced open-loop.
//! What is the SQL family's here: each thread's client ([`drivers`]), the counts of its
//! events per interval (transactions, queries, rows, retries), the server's processes'
//! CPU read at the window's ends with a profile and the server's perf counters over it
//! ([`ServerGauge`]), and the server's own counters, read before the clients connect and
//! after they leave. Together they give the costs per query on both sides: plumb's own
//! CPU (the client) and the server's, the device's IO, and the server's counters.

use crate::bench::{Outcome, Shape, ThreadPlan};
use crate::drivers::{self, Driver, StepShared};
use plumb_core::{HwCounters, PerfCounted, ServerCosts, StepStatus, StepSummary};
use plumb_probes::diskstats::DeviceStats;
use plumb_probes::process::ProcessCounters;
use plumb_runner::kernel::{self, Counts, Injector, Lane, Run, ServerGauge, Sut, Timing};
use plumb_runner::{metrics, Pacer, Progress, StepHistograms, StepOutcome};
use plumb_servers::client::Endpoint;
use plumb_servers::counters::{per_query, CounterReader};
use plumb_servers::waits::WatchedGauge;
use plumb_servers::SqlError;
use plumb_workloads::{Distribution, Pace, SqlKind, SqlStepPlan};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, SystemTime};

/// A step's parameters.
#[derive(Debug, Clone)]
pub struct SqlStepConfig {
    /// Position in the run (seeds differ per step).
    pub index: usize,
    /// What and under which name.
    pub plan: SqlStepPlan,
    /// Client threads (connections): a threads profile's peak.
    pub threads: usize,
    /// Closed loop whose running clients follow this profile; `None` runs all
    /// `threads` throughout.
    pub clients: Option<plumb_workloads::ThreadsProfile>,
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
    /// Seconds per group of the server's perf events counted in turn
    /// ([`plumb_probes::perfgroups`]); 0 counts them all at once, multiplexed.
    pub perf_groups: u32,
    /// Samples per second of the sessions' waits ([`plumb_servers::waits`]); 0 samples none
    /// (the server's counters are still read every second).
    pub wait_hz: f64,
    /// Faults injected inside the step (not a load's), with the clients reconnecting
    /// and retrying through them; `None` runs none.
    pub faults: Option<plumb_workloads::FaultPlan>,
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
    pub profile: Option<plumb_probes::profile::Profiling<'a>>,
    /// What YCSB's steps carry from one to the next.
    pub ycsb: &'a mut YcsbState,
    /// Who does the step's faults ([`SqlStepConfig::faults`]): a server plumb started.
    pub faults: Option<&'a dyn Injector>,
}

/// Where an event's counts go among the kernel's [`Counts`]: its transaction …
const TXNS: usize = 0;
/// … its statements, BEGIN and COMMIT included …
const QUERIES: usize = 1;
/// … the rows they returned or changed …
const ROWS: usize = 2;
/// … and whether it hit a conflict, rolled back and counts as a retry.
const RETRIES: usize = 3;

/// One event as the kernel counts it: its ops for the step's rate, its transaction,
/// queries, rows and retry among the family's counts, and the client's pause after it
/// (TPC-C's keying and think times) as the kernel's rest, outside every event's time.
struct Event {
    out: Outcome,
    pause: Duration,
    /// Failed attempts before it succeeded (a client reconnecting through a fault).
    errors: u64,
}

impl kernel::Outcome for Event {
    #[inline]
    fn ops(&self) -> u64 {
        self.out.ops
    }

    #[inline]
    fn bytes(&self) -> u64 {
        0
    }

    /// The thread has nothing left to do (a load's share is in): the event is not
    /// counted, though its queries are the connection's.
    #[inline]
    fn finished(&self) -> bool {
        self.out.done
    }

    #[inline]
    fn count(&self, c: &mut Counts) {
        c[TXNS] += 1;
        c[QUERIES] += self.out.queries;
        c[ROWS] += self.out.rows;
        c[RETRIES] += u64::from(self.out.retried);
    }

    #[inline]
    fn rest(&self) -> Duration {
        self.pause
    }

    #[inline]
    fn errors(&self) -> u64 {
        self.errors
    }
}

/// What a client thread leaves the step, read once the window has closed.
#[derive(Default)]
struct Client {
    /// Its connection, kept open until the closing mark is taken: a backend that exits
    /// takes its context switches with it.
    conn: Option<Box<dyn Driver>>,
    /// Queries over the connection's whole life, warm-up included (what the server's
    /// counters cover).
    queries: u64,
    /// Its error's message when the error was a verification failure (the kernel keeps
    /// errors as text; whether the step failed verifying is the family's to say).
    verify: Option<String>,
}

/// What every client thread of a step shares.
struct Clients<'a> {
    endpoint: &'a Endpoint,
    shared: &'a StepShared,
    cfg: &'a SqlStepConfig,
    threads: usize,
    max_id: i64,
    all_present: bool,
    /// Open loop: the rate offered across the clients.
    pace: Option<Pace>,
    /// Through faults: a failed event is retried on a new connection, its failures
    /// counted, until it succeeds (or [`GIVE_UP`] passes).
    retry: bool,
}

/// How long a client keeps reconnecting through a fault before the step fails.
const GIVE_UP: Duration = Duration::from_secs(300);

/// How long a client waits between attempts to reconnect.
const RECONNECT_EVERY: Duration = Duration::from_millis(10);

impl Clients<'_> {
    /// A new connection for a client whose connection broke: tried every
    /// [`RECONNECT_EVERY`] until the server answers, each refusal one more failure.
    fn reconnect(
        &self,
        plan: &ThreadPlan,
        since: std::time::Instant,
        errors: &mut u64,
        last: SqlError,
    ) -> Result<Box<dyn Driver>, SqlError> {
        let mut last = last;
        loop {
            if since.elapsed() > GIVE_UP {
                return Err(SqlError::Input(format!(
                    "no connection {} s after a fault: {last}",
                    GIVE_UP.as_secs()
                )));
            }
            std::thread::sleep(RECONNECT_EVERY);
            match drivers::connect(self.endpoint, plan, self.shared) {
                Ok(d) => return Ok(d),
                Err(e) => {
                    *errors += 1;
                    last = e;
                }
            }
        }
    }

    /// One client thread: its connection (setup, outside the window), then its events
    /// through the kernel's loop, closed or open at its share of the rate (every
    /// client's schedule starting together).
    fn run(&self, lane: &Lane<'_>, out: &mut Client) -> Result<(), SqlError> {
        let cfg = self.cfg;
        let t = lane.index();
        let plan = ThreadPlan {
            kind: cfg.plan.kind,
            shape: cfg.shape.clone(),
            distribution: cfg.distribution,
            seed: plumb_workloads::distribution::worker_seed(cfg.seed, cfg.index, t),
            run_seed: cfg.seed,
            thread: t,
            threads: self.threads,
            max_id: self.max_id,
            all_present: self.all_present,
        };
        let st = out
            .conn
            .insert(drivers::connect(self.endpoint, &plan, self.shared)?);
        let mut pacer = self
            .pace
            .as_ref()
            .map(|p| Pacer::share(p, self.threads, lane.window_start(), plan.seed ^ 0x9ace));
        let queries = &mut out.queries;
        let retry = self.retry;
        let driven = lane.drive_counted(Timing::Loop, u64::MAX, pacer.as_mut(), |clock| {
            let mut errors = 0u64;
            // When this event first failed: read only then, so a step without faults
            // reads no clock of its own per event.
            let mut since = None;
            let out = loop {
                match st.event() {
                    Ok(out) => break out,
                    Err(e) if retry && !matches!(e, SqlError::Verify(_)) => {
                        errors += 1;
                        let first = *since.get_or_insert_with(std::time::Instant::now);
                        *st = self.reconnect(&plan, first, &mut errors, e)?;
                    }
                    Err(e) => return Err(e),
                }
            };
            *queries += out.queries;
            clock.set_class(out.class);
            st.parts(&mut |class, ns| clock.part(class, ns));
            let pause = if out.done { Duration::ZERO } else { st.pause() };
            Ok(Event { out, pause, errors })
        });
        let finished = st.finish();
        driven?;
        finished
    }
}

/// Runs one step and returns what is stored.
pub fn run_sql_step(ctx: &mut SqlContext<'_>, cfg: &SqlStepConfig) -> StepOutcome {
    let started = SystemTime::now();
    let kind = cfg.plan.kind;
    let load = kind.is_load();
    let threads = drivers::threads_of(kind, &cfg.shape, cfg.threads);
    let classes = drivers::classes(kind, &cfg.shape);
    let classes: Vec<&str> = classes.iter().map(String::as_str).collect();
    // Faults run inside measured steps only, on a server plumb can fault.
    let due = match (&cfg.faults, ctx.faults) {
        (Some(plan), Some(_)) if !load => match plan.schedule(cfg.duration.as_secs_f64()) {
            Ok(d) => Some(d),
            Err(e) => return failed(started, SqlError::Input(e)),
        },
        _ => None,
    };
    let faulted = due.is_some();
    let faults = match (&due, &cfg.faults, ctx.faults) {
        (Some(due), Some(plan), Some(injector)) => Some(kernel::Faults {
            due,
            timeout: Duration::from_secs_f64(plan.timeout),
            injector,
        }),
        _ => None,
    };
    let (max_id, shared, before) = match prepare(ctx, cfg) {
        Ok(p) => p,
        Err(e) => return failed(started, e),
    };
    ctx.progress.start(
        &cfg.plan.name,
        load.then_some(cfg.shape.table_size * u64::from(cfg.shape.tables)),
        (!load).then_some(cfg.duration),
    );
    let clients = Clients {
        endpoint: ctx.endpoint,
        shared: &shared,
        cfg,
        threads,
        max_id,
        // Whether every record the step's reads may ask for was loaded in this run.
        all_present: match kind.tables() {
            plumb_workloads::SqlTables::Ycsb => ctx.ycsb.loaded,
            _ => *ctx.all_present,
        },
        pace: cfg.pace.clone().filter(|_| !load),
        retry: faulted,
    };
    let spec = kernel::Spec {
        threads,
        writers: 0,
        thread_name: "plumb-sql",
        classes: classes.len(),
        warmup: if load { Duration::ZERO } else { cfg.warmup },
        // A load runs to its end.
        duration: (!load).then_some(cfg.duration),
        disk: ctx.disk,
        interrupt: ctx.interrupt,
        progress: ctx.progress,
        clients: cfg.clients.as_ref().filter(|_| !load),
        on_open: None,
        faults: faults.as_ref(),
    };
    let mut gauge = WatchedGauge::new(
        ServerGauge::new(
            // A server killed inside the step takes its processes' counters with it.
            Sut::Server(ctx.server_pid.filter(|_| !faulted)),
            cfg.index,
            cfg.perf_groups,
            ctx.profile,
        ),
        Some(ctx.endpoint),
        if faulted { 0.0 } else { cfg.wait_hz },
    );
    let mut run = kernel::run(&spec, &mut gauge, |lane: &Lane<'_>, out: &mut Client| {
        let r = clients.run(lane, out);
        if let Err(e @ SqlError::Verify(_)) = &r {
            out.verify = Some(e.to_string());
        }
        r
    });
    ctx.progress.finish();
    let ended = SystemTime::now();
    // The window is closed: the connections may go.
    let all_queries: u64 = run.outputs.iter().map(|c| c.queries).sum();
    for c in &mut run.outputs {
        c.conn = None;
    }
    let closing = close(ctx, cfg, &run, &shared);
    let measured = Measured {
        run,
        gauge,
        classes: &classes,
        pace: clients.pace.as_ref(),
        before,
        all_queries,
        closing,
        started,
        ended,
    };
    let mut out = report(measured, load, ctx.server_pid.filter(|_| !faulted));
    if faulted {
        const WHY: &str =
            "not read across faults: a killed server's processes take their counters with them";
        if let Some(server) = out.summary.server.as_mut() {
            server.cpu_unavailable = Some(WHY.into());
            server.perf_unavailable = vec![WHY.into()];
            server.counters_query.clear();
        }
        out.summary.hw.unsupported = Some(format!("the server's: {WHY}"));
    }
    out
}

/// What a step reads before its clients connect: the highest id an insert step starts
/// above, what its threads share, and the server's counters.
fn prepare(
    ctx: &mut SqlContext<'_>,
    cfg: &SqlStepConfig,
) -> Result<(i64, StepShared, BTreeMap<String, f64>), SqlError> {
    let kind = cfg.plan.kind;
    let max_id = if matches!(kind, SqlKind::Insert) {
        ctx.counters.max_id(cfg.shape.tables)
    } else {
        0
    };
    let shared = drivers::before(ctx.endpoint, kind, &cfg.shape, ctx.ycsb.next)?;
    let before = ctx.counters.read()?;
    Ok((max_id, shared, before))
}

/// The outcome of a step that failed before it ran.
fn failed(started: SystemTime, e: SqlError) -> StepOutcome {
    StepOutcome {
        histograms: None,
        status: StepStatus::Failed,
        error: Some(e.to_string()),
        verification_failed: false,
        started,
        ended: SystemTime::now(),
        summary: StepSummary::default(),
        intervals: Vec::new(),
        profile: None,
    }
}

/// What the end of a step found once its window closed.
struct Closing {
    /// The first error a client met or the step's own check found, and whether it was
    /// a verification failure.
    error: Option<(String, bool)>,
    /// The server's counters once every client had gone.
    after: Result<BTreeMap<String, f64>, SqlError>,
    /// The database's size on disk.
    db_bytes: Option<u64>,
    /// Ctrl-C ended it.
    interrupted: bool,
}

/// The step's end: a load's tables finished or the step's own check made, the server's
/// counters read once the clients have gone, and what the next steps of the run are
/// told (YCSB's next key, whether every loaded record is there).
fn close(
    ctx: &mut SqlContext<'_>,
    cfg: &SqlStepConfig,
    run: &Run<Client, ()>,
    shared: &StepShared,
) -> Closing {
    let kind = cfg.plan.kind;
    let load = kind.is_load();
    let interrupted = ctx.interrupt.load(Relaxed);
    // The first error a client met, and whether it was a verification failure.
    let mut error: Option<(String, bool)> = run.errors.first().map(|e| {
        let verify = run.outputs.iter().any(|c| c.verify.as_ref() == Some(e));
        (e.clone(), verify)
    });
    if let Some(next) = shared.ycsb_next_insert() {
        ctx.ycsb.next = Some(next);
    }
    // A load finishes its tables (keys, statistics) before the server's counters are
    // read, as part of its work; a step's own check after them, so it costs nothing
    // per query.
    let finish = |error: &mut Option<(String, bool)>| {
        if error.is_none() && !interrupted {
            let done = ctx
                .endpoint
                .connect()
                .and_then(|mut c| drivers::after(c.as_mut(), kind, &cfg.shape));
            if let Err(e) = done {
                *error = Some((e.to_string(), matches!(e, SqlError::Verify(_))));
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
    let failed = error.is_some();
    if kind == SqlKind::Delete || kind == SqlKind::Load {
        *ctx.all_present = load && !failed && !interrupted;
    }
    if kind == SqlKind::YcsbLoad {
        ctx.ycsb.loaded = !failed && !interrupted;
    }
    Closing {
        error,
        after,
        db_bytes,
        interrupted,
    }
}

/// What a step measured and found, for its report.
struct Measured<'g, 'c> {
    run: Run<Client, ()>,
    gauge: WatchedGauge<'g>,
    classes: &'c [&'c str],
    /// Open loop: the rate offered across the clients.
    pace: Option<&'c Pace>,
    /// The server's counters before the clients connected.
    before: BTreeMap<String, f64>,
    /// Queries over the connections' whole lives, warm-up included.
    all_queries: u64,
    closing: Closing,
    started: SystemTime,
    ended: SystemTime,
}

/// The step's stored outcome: the kernel's figures with the server's costs per query.
fn report(m: Measured<'_, '_>, load: bool, server_pid: Option<u32>) -> StepOutcome {
    let Measured {
        run,
        mut gauge,
        classes,
        pace,
        before,
        all_queries,
        closing,
        started,
        ended,
    } = m;
    // The kernel's figures; the server's CPU is known over the whole window only.
    let (first, last) = (run.first(), run.last());
    let (intervals, base) = run.figures(
        |a, b, iv| gauge.server.tree.beside((first, last), a, b, iv),
        classes,
        pace,
    );
    let n_intervals = intervals.len();
    let ops = base.ops;
    let server = gauge.server.tree.spent();
    let counters_query = match (&closing.after, &before) {
        (Ok(b), a) => per_query(b, a, if load { ops } else { all_queries }),
        _ => Default::default(),
    };
    let status = if closing.interrupted {
        StepStatus::Interrupted
    } else if closing.error.is_some() {
        StepStatus::Failed
    } else {
        StepStatus::Ok
    };
    let verification_failed = closing.error.as_ref().is_some_and(|e| e.1);
    // The server's perf counts per query, what perf could not count, and (counted in
    // turn) the seconds each event was counted; `None` when its processes are not
    // visible.
    let perf = kernel::perf_counted(&gauge.server.perf, "server", &intervals, ops);
    let faults = run.fault_report();
    let base = gauge.beside(base, (first, last), &intervals);
    let summary = StepSummary {
        db_gb: closing.db_bytes.map(|b| b as f64 / metrics::GB),
        faults,
        hw: client_hw(&perf),
        server: Some(server_costs(
            &base,
            &run.tally.counts(),
            server,
            counters_query,
            server_pid,
            perf,
        )),
        ..base
    };
    StepOutcome {
        histograms: Some(StepHistograms {
            intervals: run
                .tally
                .intervals
                .into_iter()
                .map(|p| p.hist)
                .take(n_intervals)
                .collect(),
            total: run.tally.total,
        }),
        status,
        error: closing.error.map(|e| e.0),
        verification_failed,
        started,
        ended,
        summary,
        intervals,
        profile: gauge.server.profiled,
    }
}

/// The client's hardware counters are not read on SQL steps; the server's perf counters
/// are in `server.perf_query`, and what perf refused is said here.
fn client_hw(perf: &Option<PerfCounted>) -> HwCounters {
    HwCounters {
        unsupported: Some(match perf {
            Some(p) if p.unavailable.is_empty() => {
                "the client's are not read on SQL steps (the server's: server.perf_query)".into()
            }
            Some(p) => format!("the server's: {}", p.unavailable.join(", ")),
            None => "not read: an external server's processes are not visible".into(),
        }),
        ..HwCounters::default()
    }
}

/// The server's side of the step: its rate, and its CPU, counters and perf counts per
/// op (per query, except for the load, whose ops are rows: a statement there inserts a
/// thousand).
fn server_costs(
    base: &StepSummary,
    counts: &Counts,
    server: Option<ProcessCounters>,
    counters_query: BTreeMap<String, f64>,
    server_pid: Option<u32>,
    perf: Option<PerfCounted>,
) -> ServerCosts {
    let (ops, secs) = (base.ops, base.secs);
    let (txns, queries, rows, retries) =
        (counts[TXNS], counts[QUERIES], counts[ROWS], counts[RETRIES]);
    let per_q = |x: f64| metrics::per_op(Some(x), ops);
    ServerCosts {
        tps: if secs > 0.0 { txns as f64 / secs } else { 0.0 },
        rows_query: (queries > 0).then(|| rows as f64 / queries as f64),
        cpu_us_query: server.and_then(|s| per_q(s.cpu_us() as f64)),
        csw_query: server.and_then(|s| per_q(s.csw() as f64)),
        cpu_unavailable: server_pid
            .is_none()
            .then(|| "an external server: plumb cannot see its processes".to_string()),
        counters_query,
        retries,
        queries,
        perf_unavailable: match &perf {
            Some(p) => p.unavailable.clone(),
            None => vec!["not counted: plumb cannot see an external server's processes".into()],
        },
        perf_query: perf.as_ref().map(|p| p.per_op.clone()).unwrap_or_default(),
        perf_counted_secs: perf.map(|p| p.counted_secs).unwrap_or_default(),
    }
}
