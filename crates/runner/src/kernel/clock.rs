//! What an op sees of the timed loop: [`OpClock`] splits an op's time between the thing
//! measured and plumb, names the op's kind, and lets an op that completes out of call
//! order (an io_uring completion) hand in its own latency.

use plumb_core::HARNESS_SAMPLE_EVERY;
use std::cell::Cell;
use std::time::Instant;

/// How the loop times a lane's ops: chosen once per [`super::Lane::drive_timed`] call,
/// so the choice costs nothing per op once the loop is inlined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// The loop times each call: closed loop from the previous op's end, open loop from
    /// the op's intended start. What every key-value and disk-sync op uses.
    Loop,
    /// The op times itself and reports it with [`OpClock::set_latency_ns`]: its latency
    /// is not its call's (one io_uring completion reaped per call, submitted earlier).
    ByOp,
    /// Ops are not timed one by one (a block of CPU work): no latency percentiles.
    Untimed,
    /// The loop times each call as with [`Timing::Loop`], but only up to where the op
    /// calls [`OpClock::end`] (to the call's return if it does not): what the op does
    /// after (the insert benchmark's deletes after its commit) is neither in its
    /// latency nor in the next op's.
    Head,
}

/// The harness's share of the measured ops that were split (one in
/// [`HARNESS_SAMPLE_EVERY`] calls).
#[derive(Debug, Clone, Copy, Default)]
pub struct HarnessTime {
    /// Ops counted by the split calls.
    pub ops: u64,
    /// Their time outside the engine, ns.
    pub ns: u64,
}

impl HarnessTime {
    /// Adds another thread's.
    pub fn merge(&mut self, o: &HarnessTime) {
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
    pub(super) class: Cell<u8>,
    /// The latency the op measured itself ([`Timing::ByOp`]), ns.
    pub(super) own_ns: Cell<u64>,
    /// Where the op's timed part ended ([`Timing::Head`]).
    pub(super) end: Cell<Option<Instant>>,
    /// Latencies of the op's parts, each kept with its kind's ([`OpClock::part`]): a
    /// sysbench script's statements within its transaction. Emptied, never freed.
    pub(super) parts: std::cell::RefCell<Vec<(u8, u64)>>,
}

/// The cost of one `Instant::now()` on this machine, measured once per process: every
/// timed region's figure includes about one, and the harness time subtracts them.
pub(super) fn clock_read_ns() -> u64 {
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
            own_ns: Cell::new(0),
            end: Cell::new(None),
            parts: std::cell::RefCell::new(Vec::new()),
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

    /// Says which kind of operation this op is (an index into the workload's classes,
    /// see [`super::Spec::classes`]), so its latency is also kept with its kind's.
    #[inline(always)]
    pub fn set_class(&self, class: u8) {
        self.class.set(class);
    }

    /// Hands in the latency of a part of this op (one statement of a transaction),
    /// kept with its kind's (`class`) beside the op's own: a kind's count is then its
    /// parts', not ops.
    #[inline]
    pub fn part(&self, class: u8, ns: u64) {
        self.parts.borrow_mut().push((class, ns));
    }

    /// Hands in this op's latency, measured by the op itself: what a lane driven with
    /// [`Timing::ByOp`] records instead of the call's time.
    #[inline(always)]
    pub fn set_latency_ns(&self, ns: u64) {
        self.own_ns.set(ns);
    }

    /// Ends this op's timed part now, in a lane driven with [`Timing::Head`]: the rest
    /// of the call is the thread's own work, outside every op's latency.
    #[inline(always)]
    pub fn end(&self) {
        self.end.set(Some(Instant::now()));
    }

    /// Whether this op's time is split ([`OpClock::engine`] and [`OpClock::harness`]
    /// are timed): not the first call of a thread, which pays for first touches.
    #[inline(always)]
    pub(super) fn start(&self, calls: u64) -> bool {
        let sampling = calls % HARNESS_SAMPLE_EVERY == HARNESS_SAMPLE_EVERY / 2;
        self.sampling.set(sampling);
        if sampling {
            self.engine_ns.set(0);
            self.inner_ns.set(0);
            self.regions.set(0);
        }
        sampling
    }

    /// The part of an op of `ns` that was not the engine's, less the clock reads the
    /// split itself added (about one per timed region, once the engine's share has had
    /// its nested regions taken out).
    pub(super) fn harness_ns(&self, ns: u64) -> u64 {
        let engine = self.engine_ns.get().saturating_sub(self.inner_ns.get());
        ns.saturating_sub(engine)
            .saturating_sub(self.regions.get() * self.read_ns)
    }
}
