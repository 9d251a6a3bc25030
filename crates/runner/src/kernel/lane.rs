//! One thread's part of a step and the timed loop all its ops go through. Per op the
//! loop touches only the thread's own memory, one relaxed load of the shared epoch and
//! one relaxed store of its progress counter; once per second (when the sampler bumps
//! the epoch) it hands its interval to the sampler over a channel.

use super::callgrind;
use super::clock::{HarnessTime, OpClock, Timing};
use super::faults::{self, FaultLane, FaultShared};
use super::outcome::{Counts, Outcome, COUNTS};
use crate::histogram::LatencyHistogram;
use crate::pacing::{Arrival, OpenTally, Pacer};
use plumb_workloads::ThreadsProfile;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

/// How often a thread under a threads profile asks whether it should still run, between
/// its ops: a count that drops is followed within this (a few dozen ns per ask).
const GATE_EVERY: Duration = Duration::from_millis(1);

/// The longest a thread out of the count sleeps before it looks again (it wakes at its
/// turn, found to [`GATE_EVERY`], when that comes sooner), so a resting thread wakes a
/// few times a second, not a thousand.
const GATE_REST: Duration = Duration::from_millis(100);

/// A counter on its own cache line, so threads never share a line.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Padded(pub(super) AtomicU64);

/// State every thread reads and the sampler writes.
pub(super) struct Shared {
    /// 0 during warm-up, then 1, 2, … one per second of the measured window.
    pub(super) epoch: AtomicU64,
    /// Set by the sampler at the deadline, on Ctrl-C, on error, or when readers finish.
    pub(super) stop: AtomicBool,
    /// Measured ops done per measured thread, for the progress bar.
    pub(super) progress: Vec<Padded>,
    /// When the measured window opened (set before epoch becomes 1), or when the first
    /// paced thread started, whichever came first: every pacer's start.
    pub(super) window_start: OnceLock<Instant>,
    /// When the measured window opened: set with epoch 1, never by a pacer.
    pub(super) opened: OnceLock<Instant>,
    /// The step's faults, when it has any.
    pub(super) faults: Option<FaultShared>,
}

/// What a thread sends the sampler: a handful of messages per thread and second, so
/// the size of the larger one is not worth a box.
#[allow(clippy::large_enum_variant)]
pub(super) enum Msg {
    /// One thread's ops that completed during one epoch.
    Interval(Report),
    /// The thread stopped: its harness time, the open-loop ops it left due and never
    /// started, and its error, if any.
    Done {
        writer: bool,
        harness: HarnessTime,
        backlog: u64,
        error: Option<String>,
        faults: Option<FaultLane>,
    },
}

/// One thread's contribution to one interval, gathered as its ops finish.
pub(super) struct Report {
    pub(super) writer: bool,
    pub(super) epoch: u64,
    pub(super) ops: u64,
    pub(super) bytes: u64,
    /// The family's own counts ([`Outcome::count`]).
    pub(super) counts: Counts,
    /// Response times (closed loop: each op from its start).
    pub(super) hist: LatencyHistogram,
    /// An open-loop step's service times and lateness.
    pub(super) open: Option<OpenTally>,
    /// Response times by kind of operation (empty unless the step has kinds).
    pub(super) by_class: Vec<LatencyHistogram>,
}

impl Report {
    fn new(writer: bool, epoch: u64, open: bool, classes: usize) -> Report {
        Report {
            writer,
            epoch,
            ops: 0,
            bytes: 0,
            counts: [0; COUNTS],
            hist: LatencyHistogram::new(),
            open: open.then(OpenTally::default),
            by_class: (0..classes).map(|_| LatencyHistogram::new()).collect(),
        }
    }
}

/// A thread's handle on the kernel, given to the step's per-thread body by
/// [`super::run`]: which thread it is, and [`Lane::drive`], the only way its ops get
/// timed. What the body does before its first drive (sessions, buffers, rings) is
/// setup, outside the window: every thread and the sampler meet at the first drive,
/// and the window opens only once every thread has set up.
pub struct Lane<'s> {
    pub(super) shared: &'s Shared,
    pub(super) barrier: &'s Barrier,
    pub(super) tx: &'s Sender<Msg>,
    pub(super) index: usize,
    pub(super) writer: bool,
    pub(super) classes: usize,
    /// The threads profile this measured thread follows, if any.
    pub(super) gate: Option<&'s ThreadsProfile>,
    pub(super) released: Cell<bool>,
    /// Called on a measured thread, once, as its first op of the window is counted
    /// ([`super::Spec::on_open`]); `None` when the step has nothing to start there.
    pub(super) on_open: Option<&'s (dyn Fn() + Sync)>,
    /// The hook has run on this thread.
    pub(super) hooked: Cell<bool>,
    pub(super) harness: Cell<HarnessTime>,
    pub(super) backlog: Cell<u64>,
    /// A measured thread's fault timeline, on a step with faults.
    pub(super) faults: Option<RefCell<FaultLane>>,
}

impl Lane<'_> {
    /// The window opened for this thread: runs the step's hook once (an engine's
    /// thread-local counters start from zero here, after warm-up).
    #[cold]
    fn window_opened(&self) {
        if let Some(f) = self.on_open.filter(|_| !self.hooked.replace(true)) {
            f();
        }
    }

    /// The thread's index for seeding and slicing: 0..threads for measured threads,
    /// `threads + w` for writer `w`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Whether this is one of the step's unmeasured paced writers
    /// ([`super::Spec::writers`]).
    pub fn writer(&self) -> bool {
        self.writer
    }

    /// Seconds since the measured window opened (or the first paced thread started);
    /// 0 before (in warm-up): where a step that changes over time is in its phases.
    pub fn since_open(&self) -> f64 {
        self.shared
            .window_start
            .get()
            .map_or(0.0, |s| s.elapsed().as_secs_f64())
    }

    /// Waits for the step to start (as the first drive does), then gives the instant
    /// every paced thread of the step counts its arrivals from: the measured window's
    /// start, or the first asker's now if it has not opened yet (during warm-up).
    pub fn window_start(&self) -> Instant {
        self.release();
        *self.shared.window_start.get_or_init(Instant::now)
    }

    /// Runs `op` until `quota` measured ops, the step's end or an error, each op timed
    /// by the loop ([`Timing::Loop`]): closed-loop, or open-loop from each op's
    /// intended start with a `pacer`. `op` returns (ops counted, bytes); zero ops means
    /// this thread has nothing left to do.
    #[inline(always)]
    pub fn drive<F, E>(&self, quota: u64, pacer: Option<&mut Pacer>, op: F) -> Result<(), E>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), E>,
    {
        self.drive_timed(Timing::Loop, quota, pacer, op)
    }

    /// [`Lane::drive`] with the ops timed as `timing` says.
    #[inline(always)]
    pub fn drive_timed<F, E>(
        &self,
        timing: Timing,
        quota: u64,
        pacer: Option<&mut Pacer>,
        op: F,
    ) -> Result<(), E>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), E>,
    {
        self.drive_counted(timing, quota, pacer, op)
    }

    /// [`Lane::drive_timed`] for ops that return an [`Outcome`] of their family's own:
    /// its counts are kept per interval beside ops and bytes, and it may finish the
    /// thread or rest it after a call whatever its ops.
    #[inline(always)]
    pub fn drive_counted<O, F, E>(
        &self,
        timing: Timing,
        quota: u64,
        mut pacer: Option<&mut Pacer>,
        op: F,
    ) -> Result<(), E>
    where
        O: Outcome,
        F: FnMut(&OpClock) -> Result<O, E>,
    {
        self.release();
        let mut h = self.harness.get();
        let r = drive(self, timing, true, quota, pacer.as_deref_mut(), op, &mut h);
        self.harness.set(h);
        if let Some(p) = pacer.filter(|_| !self.writer) {
            self.backlog
                .set(self.backlog.get() + p.backlog_at(Instant::now()));
        }
        r
    }

    /// Runs `op` until it returns zero ops, ignoring the step's stop and quota: the
    /// tail of work started inside the window (IOs still in flight at the stop), whose
    /// ops complete inside it and count in it. Called after a [`Lane::drive`].
    #[inline(always)]
    pub fn finish<F, E>(&self, timing: Timing, op: F) -> Result<(), E>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), E>,
    {
        self.release();
        let mut h = self.harness.get();
        let r = drive(self, timing, false, u64::MAX, None, op, &mut h);
        self.harness.set(h);
        r
    }

    /// Sleeps while the threads profile counts this thread out, until its turn (looked
    /// for [`GATE_EVERY`] apart up to [`GATE_REST`] ahead); false when the step stopped
    /// meanwhile. Before the window opens (warm-up) the profile's first count holds.
    fn wait_for_turn(&self, profile: &ThreadsProfile, stop: &dyn Fn() -> bool) -> bool {
        let step = GATE_EVERY.as_secs_f64();
        let ahead = (GATE_REST.as_secs_f64() / step) as u32;
        loop {
            let opened = self.shared.window_start.get().is_some();
            let t = self.since_open();
            if profile.runs(self.index, t) {
                return true;
            }
            if stop() {
                return false;
            }
            // In warm-up the count cannot change before the window opens.
            let turn = (1..=ahead)
                .find(|&k| opened && profile.runs(self.index, t + f64::from(k) * step))
                .unwrap_or(ahead);
            std::thread::sleep(GATE_EVERY * turn);
        }
    }

    /// Waits for the step to start: every thread and the sampler meet once when all
    /// have set up, the sampler opens the window if there is no warm-up, and they meet
    /// again to start together.
    pub(super) fn release(&self) {
        if !self.released.replace(true) {
            self.barrier.wait();
            self.barrier.wait();
        }
    }
}

/// The timed loop shared by every family. `op` returns what it did (ops counted, bytes,
/// the family's counts); a finished outcome means the thread has nothing left to do.
/// With `stoppable` false it runs until then, whatever the quota or the step's stop
/// say.
#[inline(always)]
fn drive<O, F, E>(
    lane: &Lane<'_>,
    timing: Timing,
    stoppable: bool,
    quota: u64,
    mut pacer: Option<&mut Pacer>,
    mut op: F,
    harness: &mut HarnessTime,
) -> Result<(), E>
where
    O: Outcome,
    F: FnMut(&OpClock) -> Result<O, E>,
{
    let (shared, t, writer) = (lane.shared, lane.index, lane.writer);
    let clock = OpClock::default();
    let mut calls = 0u64;
    let epoch = shared.epoch.load(Relaxed);
    // An open-loop step's measured threads keep service time beside response time.
    let open = pacer.is_some() && !writer;
    let classes = if writer { 0 } else { lane.classes };
    let mut r = Report::new(writer, epoch, open, classes);
    let mut done = 0u64;
    // A lane that drives twice (a drive, then its finish) keeps counting its progress.
    let progressed = if writer {
        0
    } else {
        shared.progress[t].0.load(Relaxed)
    };
    let stop = || shared.stop.load(Relaxed);
    // Under `plumb icount`, the measured threads' instructions count while the window
    // is open (from its first op, or from the first op to end after warm-up).
    let mut counting = !writer && epoch > 0;
    if counting {
        callgrind::toggle();
    }
    // The window is open already (no warm-up, or a second drive): the thread's own
    // counters start before its first measured op.
    if !writer && epoch > 0 {
        lane.window_opened();
    }
    let mut last_end = Instant::now();
    // Under a threads profile: when to ask next whether this thread is in the count
    // (now, before the first op). A finish runs its tail whatever the profile says.
    let gate = lane.gate.filter(|_| stoppable);
    let mut ask_at = last_end;
    let result = loop {
        if stoppable && (done >= quota || stop()) {
            break Ok(());
        }
        if let Some(profile) = gate {
            if last_end >= ask_at {
                if !lane.wait_for_turn(profile, &stop) {
                    break Ok(());
                }
                last_end = Instant::now();
                ask_at = last_end + GATE_EVERY;
            }
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
        let sampling = clock.start(calls);
        calls += 1;
        if timing == Timing::ByOp {
            clock.own_ns.set(0);
        }
        if timing == Timing::Head {
            clock.end.set(None);
        }
        let out = match op(&clock) {
            // Nothing left to do (a scan past the last key).
            Ok(o) if o.finished() => break Ok(()),
            Ok(o) => o,
            Err(e) => break Err(e),
        };
        let (n, b) = (out.ops(), out.bytes());
        let returned = Instant::now();
        last_end = returned;
        // The op's timed part: the whole call, or its head.
        let end = match timing {
            Timing::Head => clock.end.get().unwrap_or(returned),
            _ => returned,
        };
        let ns = end.saturating_duration_since(slot.from).as_nanos() as u64;
        let now_epoch = shared.epoch.load(Relaxed);
        if now_epoch != r.epoch {
            next_second(lane, &mut r, (now_epoch, open, classes), &mut counting);
        }
        record_latency(&mut r, &clock, timing, ns);
        if let (Some(fl), Some(fs)) = (&lane.faults, &shared.faults) {
            if r.epoch > 0 {
                if let Some(&opened) = shared.opened.get() {
                    faults::record(
                        fl,
                        fs,
                        opened,
                        slot.started,
                        end,
                        n,
                        out.errors(),
                        out.clean(),
                    );
                }
            }
        }
        if let Some(o) = r.open.as_mut() {
            o.record(&slot, end);
        }
        r.ops += n;
        r.bytes += b;
        out.count(&mut r.counts);
        if r.epoch > 0 {
            done += n;
            if !writer {
                shared.progress[t].0.store(progressed + done, Relaxed);
            }
            if sampling {
                // From the op's actual start: an open-loop op's wait in the queue is
                // neither the engine's nor plumb's work.
                let worked = end.saturating_duration_since(slot.started).as_nanos() as u64;
                harness.ops += n;
                harness.ns += clock.harness_ns(worked);
            }
        }
        let rest = out.rest();
        if !rest.is_zero() {
            std::thread::sleep(rest);
            last_end = Instant::now();
        }
    };
    if counting {
        callgrind::toggle();
    }
    flush(lane, r);
    result
}

/// Sends a finished interval's report to the sampler, unless nothing happened in it.
fn flush(lane: &Lane<'_>, r: Report) {
    if r.ops > 0 || r.counts.iter().any(|&c| c > 0) {
        let _ = lane.tx.send(Msg::Interval(r));
    }
}

/// A new second began (`epoch`, with the interval's open-loop and class layout): the
/// finished interval's report goes to the sampler and a fresh one starts. Once a second
/// whatever the ops, so out of the timed loop's body, and not counted under `plumb
/// icount` (the count would vary with how many seconds the run took).
#[cold]
#[inline(never)]
fn next_second(
    lane: &Lane<'_>,
    r: &mut Report,
    (epoch, open, classes): (u64, bool, usize),
    counting: &mut bool,
) {
    if *counting {
        callgrind::toggle();
    }
    let next = Report::new(lane.writer, epoch, open, classes);
    flush(lane, std::mem::replace(r, next));
    if !lane.writer && epoch > 0 {
        *counting = true;
        callgrind::toggle();
        lane.window_opened();
    }
}

/// Records one op's latency as `timing` takes it (`ns` from its start to the end of
/// its timed part), in the step's histogram and its kind's, and the parts it timed
/// for other kinds.
#[inline(always)]
fn record_latency(r: &mut Report, clock: &OpClock, timing: Timing, ns: u64) {
    let latency = match timing {
        Timing::Loop | Timing::Head => Some(ns),
        Timing::ByOp => Some(clock.own_ns.get()),
        Timing::Untimed => None,
    };
    if let Some(ns) = latency {
        r.hist.record_ns(ns);
        if let Some(h) = r.by_class.get_mut(usize::from(clock.class.get())) {
            h.record_ns(ns);
        }
    }
    for (class, ns) in clock.parts.borrow_mut().drain(..) {
        if let Some(h) = r.by_class.get_mut(usize::from(class)) {
            h.record_ns(ns);
        }
    }
}
