//! One worker thread and the timed loop every workload's ops go through. A workload
//! (see [`crate::workload`]) owns what an op does; the loop here owns when it starts,
//! its clock reads, its histogram and its hand-over to the sampler. Per op it touches
//! only its own memory, one relaxed load of the shared epoch and one relaxed store of
//! its progress counter; once per second (when the sampler bumps the epoch) it hands its
//! interval to the sampler over a channel.

use crate::config::StepConfig;
use crate::histogram::LatencyHistogram;
use crate::pacing::{Arrival, OpenTally, Pacer};
use crate::workload::Workload;
use plumb_core::{Target, TargetError, Verification, HARNESS_SAMPLE_EVERY};
use plumb_workloads::Permutation;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::sync::Barrier;
use std::time::Instant;

/// A counter on its own cache line, so workers never share a line.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Padded(pub(crate) AtomicU64);

/// State every worker reads and the sampler writes.
pub(crate) struct Shared {
    /// 0 during warm-up, then 1, 2, … one per second of the measured window.
    pub(crate) epoch: AtomicU64,
    /// Set by the sampler at the deadline, on Ctrl-C, on error, or when readers finish.
    pub(crate) stop: AtomicBool,
    /// Measured ops done per worker, for the progress bar.
    pub(crate) progress: Vec<Padded>,
    /// When the measured window opened (set before epoch becomes 1).
    pub(crate) writer_start: std::sync::OnceLock<Instant>,
}

/// What a worker sends the sampler.
pub(crate) enum Msg {
    /// One worker's ops that completed during one epoch.
    Interval(Report),
    /// The worker stopped; its verification counts, its harness time, the open-loop
    /// ops it left due and never started, and its error, if any.
    Done {
        writer: bool,
        verify: Verification,
        harness: HarnessTime,
        backlog: u64,
        error: Option<String>,
    },
}

/// The harness's share of the measured ops that were split (one in
/// [`HARNESS_SAMPLE_EVERY`] calls).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HarnessTime {
    /// Ops counted by the split calls.
    pub(crate) ops: u64,
    /// Their time outside the engine, ns.
    pub(crate) ns: u64,
}

impl HarnessTime {
    pub(crate) fn merge(&mut self, o: &HarnessTime) {
        self.ops += o.ops;
        self.ns += o.ns;
    }
}

/// Splits an op's time between the engine and plumb, on one call in
/// [`HARNESS_SAMPLE_EVERY`]: a workload wraps its engine call in [`OpClock::engine`] and
/// any check it makes inside an engine callback in [`OpClock::harness`]. On the other
/// calls both are a branch on a flag.
pub struct OpClock {
    sampling: Cell<bool>,
    engine_ns: Cell<u64>,
    inner_ns: Cell<u64>,
    /// Timed regions in this op: each adds about one clock read to what it measures.
    regions: Cell<u64>,
    /// What one clock read costs, ns.
    read_ns: u64,
    /// The kind of operation this op was, for workloads that time kinds apart.
    class: Cell<u8>,
}

/// The cost of one `Instant::now()` on this machine, measured once per process: every
/// timed region's figure includes about one, and the harness time subtracts them.
fn clock_read_ns() -> u64 {
    static NS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *NS.get_or_init(|| {
        const READS: u32 = 20_000;
        // The cheapest of a few tries: the others were interrupted.
        (0..5)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..READS {
                    std::hint::black_box(Instant::now());
                }
                t.elapsed().as_nanos() as u64 / u64::from(READS)
            })
            .min()
            .unwrap_or(0)
    })
}

impl Default for OpClock {
    fn default() -> Self {
        OpClock {
            sampling: Cell::new(false),
            engine_ns: Cell::new(0),
            inner_ns: Cell::new(0),
            regions: Cell::new(0),
            read_ns: clock_read_ns(),
            class: Cell::new(0),
        }
    }
}

impl OpClock {
    /// Runs the engine call `f`, timed when this op is sampled.
    #[inline(always)]
    pub fn engine<R>(&self, f: impl FnOnce() -> R) -> R {
        if !self.sampling.get() {
            return f();
        }
        let t = Instant::now();
        let r = f();
        self.engine_ns
            .set(self.engine_ns.get() + t.elapsed().as_nanos() as u64);
        self.regions.set(self.regions.get() + 1);
        r
    }

    /// Runs the harness's own work `f` inside an engine call (checking a value in a
    /// callback), so it counts as plumb's, not the engine's.
    #[inline(always)]
    pub fn harness<R>(&self, f: impl FnOnce() -> R) -> R {
        if !self.sampling.get() {
            return f();
        }
        let t = Instant::now();
        let r = f();
        self.inner_ns
            .set(self.inner_ns.get() + t.elapsed().as_nanos() as u64);
        self.regions.set(self.regions.get() + 1);
        r
    }

    /// Says which kind of operation this op is (an index into the workload's
    /// [`Workload::classes`]), so its latency is also kept with its kind's.
    #[inline(always)]
    pub fn set_class(&self, class: u8) {
        self.class.set(class);
    }

    fn start(&self, sampling: bool) {
        self.sampling.set(sampling);
        if sampling {
            self.engine_ns.set(0);
            self.inner_ns.set(0);
            self.regions.set(0);
        }
    }

    /// The part of an op of `ns` that was not the engine's, less the clock reads the
    /// split itself added (about one per timed region, once the engine's share has had
    /// its nested regions taken out).
    fn harness_ns(&self, ns: u64) -> u64 {
        let engine = self.engine_ns.get().saturating_sub(self.inner_ns.get());
        ns.saturating_sub(engine)
            .saturating_sub(self.regions.get() * self.read_ns)
    }
}

/// One worker's contribution to one interval, gathered as its ops finish.
pub(crate) struct Report {
    pub(crate) writer: bool,
    pub(crate) epoch: u64,
    pub(crate) ops: u64,
    pub(crate) bytes: u64,
    /// Response times (closed loop: each op from its start).
    pub(crate) hist: LatencyHistogram,
    /// An open-loop step's service times and lateness.
    pub(crate) open: Option<OpenTally>,
    /// Response times by kind of operation (empty unless the workload has kinds).
    pub(crate) by_class: Vec<LatencyHistogram>,
}

impl Report {
    fn new(writer: bool, epoch: u64, open: bool, classes: usize) -> Report {
        Report {
            writer,
            epoch,
            ops: 0,
            bytes: 0,
            hist: LatencyHistogram::new(),
            open: open.then(OpenTally::default),
            by_class: (0..classes).map(|_| LatencyHistogram::new()).collect(),
        }
    }
}

/// Which part a worker plays in its step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A measured worker with index `t` among `cfg.threads`.
    Measured(usize),
    /// The rate-limited writer beside the readers of a *whilewriting step.
    Writer,
}

/// Read-only inputs shared by a step's workers.
pub(crate) struct WorkerEnv<'a> {
    pub(crate) cfg: &'a StepConfig,
    pub(crate) target: &'a dyn Target,
    pub(crate) shared: &'a Shared,
    pub(crate) payload: &'a [u8],
    pub(crate) perm: &'a Permutation,
    pub(crate) all_present: bool,
    pub(crate) barrier: &'a Barrier,
    /// How many kinds of operation the workload times apart.
    pub(crate) classes: usize,
}

/// A worker thread's handle on the runner, given to [`Workload::run`]: what the step
/// asks of this thread, and [`Worker::drive`], the only way its ops get timed.
pub struct Worker<'a> {
    env: &'a WorkerEnv<'a>,
    role: Role,
    tx: &'a Sender<Msg>,
    released: bool,
    harness: HarnessTime,
    backlog: u64,
}

impl<'a> Worker<'a> {
    /// This thread's part: a measured worker (and its index) or the paced writer.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The thread's index for seeding and slicing: 0..threads for measured workers,
    /// `threads` for the writer.
    pub fn index(&self) -> usize {
        match self.role {
            Role::Measured(t) => t,
            Role::Writer => self.env.cfg.threads,
        }
    }

    /// The step's parameters.
    pub fn cfg(&self) -> &'a StepConfig {
        self.env.cfg
    }

    /// The engine the step runs against.
    pub fn target(&self) -> &'a dyn Target {
        self.env.target
    }

    /// The step's shared value payload (compressible as db_bench's).
    pub fn payload(&self) -> &'a [u8] {
        self.env.payload
    }

    /// The step's bijection of 0..num (for filluniquerandom).
    pub fn permutation(&self) -> &'a Permutation {
        self.env.perm
    }

    /// Every key in 0..num is known to exist, so a read that misses is an error.
    pub fn all_present(&self) -> bool {
        self.env.all_present
    }

    /// Runs `op` until `quota` measured ops, the step's end or an error: closed-loop
    /// (each op starts when the previous ended), or open-loop when the step has a
    /// [`StepConfig::pace`], this thread taking its share of the rate. `op` returns
    /// (ops counted, user bytes); zero ops means this thread has nothing left to do.
    #[inline]
    pub fn drive<F>(&mut self, quota: u64, op: F) -> Result<(), TargetError>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), TargetError>,
    {
        self.release();
        let (t, writer) = (self.index(), self.role == Role::Writer);
        let cfg = self.env.cfg;
        match cfg.pace.filter(|_| !writer) {
            Some(p) => {
                let start = *self.env.shared.writer_start.get_or_init(Instant::now);
                let seed = plumb_workloads::distribution::worker_seed(cfg.seed, cfg.index, t);
                let rate = p.ops_per_sec / cfg.threads.max(1) as f64;
                let mut pacer = Pacer::with_arrivals(rate, start, p.arrivals, seed ^ 0x9ace);
                let h = &mut self.harness;
                let r = drive(self.env, t, writer, quota, Some(&mut pacer), op, self.tx, h);
                self.backlog = pacer.backlog_at(Instant::now());
                r
            }
            None => {
                let h = &mut self.harness;
                drive(self.env, t, writer, quota, None, op, self.tx, h)
            }
        }
    }

    /// Runs `op` open-loop at `ops_per_sec` (> 0) until the step ends: latency counts
    /// from each op's intended start, so a stall is not hidden by sending less. Every
    /// paced thread of a step shares one start instant.
    #[inline]
    pub fn drive_paced<F>(&mut self, ops_per_sec: f64, op: F) -> Result<(), TargetError>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), TargetError>,
    {
        self.release();
        let start = *self.env.shared.writer_start.get_or_init(Instant::now);
        let mut pacer = Pacer::new(ops_per_sec, start);
        let writer = self.role == Role::Writer;
        let (t, h) = (self.index(), &mut self.harness);
        drive(
            self.env,
            t,
            writer,
            u64::MAX,
            Some(&mut pacer),
            op,
            self.tx,
            h,
        )
    }

    /// Waits for the step to start (every worker and the sampler meet once).
    fn release(&mut self) {
        if !self.released {
            self.released = true;
            self.env.barrier.wait();
        }
    }
}

/// Runs one worker to completion and reports to `tx`.
pub(crate) fn run_worker(
    env: &WorkerEnv<'_>,
    workload: &dyn Workload,
    role: Role,
    tx: Sender<Msg>,
) {
    let mut w = Worker {
        env,
        role,
        tx: &tx,
        released: false,
        harness: HarnessTime::default(),
        backlog: 0,
    };
    let mut verify = Verification::default();
    clock_read_ns(); // measured once, before any step's window opens
    let result = workload.run(&mut w, &mut verify);
    // Everyone meets at the start, even a worker that failed before its first op, so
    // the sampler cannot hang.
    w.release();
    if result.is_err() {
        env.shared.stop.store(true, Relaxed);
    }
    let _ = tx.send(Msg::Done {
        writer: role == Role::Writer,
        verify,
        harness: w.harness,
        backlog: w.backlog,
        error: result.err().map(|e| e.to_string()),
    });
}

/// The timed loop shared by every workload. `op` returns (ops counted, user bytes);
/// zero ops means the worker has nothing left to do.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn drive<F>(
    env: &WorkerEnv<'_>,
    t: usize,
    writer: bool,
    quota: u64,
    mut pacer: Option<&mut Pacer>,
    mut op: F,
    tx: &Sender<Msg>,
    harness: &mut HarnessTime,
) -> Result<(), TargetError>
where
    F: FnMut(&OpClock) -> Result<(u64, u64), TargetError>,
{
    let shared = env.shared;
    let clock = OpClock::default();
    let mut calls = 0u64;
    let epoch = shared.epoch.load(Relaxed);
    // An open-loop step's measured threads keep service time beside response time.
    let open = pacer.is_some() && !writer;
    let classes = if writer { 0 } else { env.classes };
    let mut r = Report::new(writer, epoch, open, classes);
    let mut done = 0u64;
    let stop = || shared.stop.load(Relaxed);
    let flush = |r: Report| {
        if r.ops > 0 {
            let _ = tx.send(Msg::Interval(r));
        }
    };
    let mut last_end = Instant::now();
    let result = loop {
        if done >= quota || stop() {
            break Ok(());
        }
        // Closed loop: an op starts when the previous one ended (one clock read per op,
        // as db_bench's FinishedOps does; the few ns of key choice in between count as
        // the op's). Open loop: from the intended start.
        let slot = match pacer.as_deref_mut() {
            Some(p) => match p.wait_next(&stop) {
                Some(slot) => slot,
                None => break Ok(()),
            },
            None => Arrival::at(last_end),
        };
        // Not the first call of a thread: it pays for first touches.
        let sampling = calls % HARNESS_SAMPLE_EVERY == HARNESS_SAMPLE_EVERY / 2;
        calls += 1;
        clock.start(sampling);
        let (n, b) = match op(&clock) {
            Ok((0, _)) => break Ok(()), // nothing left to do (a scan past the last key)
            Ok(x) => x,
            Err(e) => break Err(e),
        };
        let end = Instant::now();
        let ns = end.saturating_duration_since(slot.from).as_nanos() as u64;
        last_end = end;
        let now_epoch = shared.epoch.load(Relaxed);
        if now_epoch != r.epoch {
            let next = Report::new(writer, now_epoch, open, classes);
            flush(std::mem::replace(&mut r, next));
        }
        r.hist.record_ns(ns);
        if let Some(o) = r.open.as_mut() {
            o.record(&slot, end);
        }
        if let Some(h) = r.by_class.get_mut(usize::from(clock.class.get())) {
            h.record_ns(ns);
        }
        r.ops += n;
        r.bytes += b;
        if r.epoch > 0 {
            done += n;
            if !writer {
                shared.progress[t].0.store(done, Relaxed);
            }
            if sampling {
                // From the op's actual start: an open-loop op's wait in the queue is
                // neither the engine's nor plumb's work.
                let worked = end.saturating_duration_since(slot.started).as_nanos() as u64;
                harness.ops += n;
                harness.ns += clock.harness_ns(worked);
            }
        }
    };
    flush(r);
    result
}
