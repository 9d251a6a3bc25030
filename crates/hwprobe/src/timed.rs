//! The measuring loop shared by the CPU and disk probes: N worker threads run ops until a
//! deadline while this thread samples op counts, process CPU and disk counters once a
//! second, as the runner does for workload steps.

use plumb_core::{Interval, StepStatus, StepSummary};
use plumb_probes::cpustat::{self, Reading};
use plumb_probes::diskstats::{DeviceStats, DiskCounters};
use plumb_probes::process::{self_counters, ProcessCounters};
use plumb_runner::metrics::{host_noise, HostNoise};
use plumb_runner::LatencyHistogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// A per-worker op count on its own cache lines, so publishing it costs one store and no
/// sharing with other workers.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Publishes the worker's running total.
    #[inline]
    pub(crate) fn set(&self, ops: u64) {
        self.0.store(ops, Ordering::Relaxed)
    }
    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What one worker measured.
#[derive(Default)]
pub(crate) struct WorkerOut {
    /// Ops completed.
    pub ops: u64,
    /// Bytes moved by them.
    pub bytes: u64,
    /// Their latencies (empty when the op is not timed individually).
    pub hist: LatencyHistogram,
}

/// A finished timed step.
pub(crate) struct Measured {
    pub status: StepStatus,
    pub error: Option<String>,
    pub started: SystemTime,
    pub ended: SystemTime,
    pub summary: StepSummary,
    pub intervals: Vec<Interval>,
}

#[derive(Clone, Copy)]
struct Sample {
    at: Instant,
    ops: u64,
    cpu: ProcessCounters,
    machine: Option<Reading>,
    disk: Option<DiskCounters>,
}

impl Sample {
    /// The host's noise since `earlier`: a probe runs in plumb's process.
    fn noise_since(&self, earlier: &Sample) -> HostNoise {
        host_noise(
            earlier.machine.as_ref(),
            self.machine.as_ref(),
            self.cpu.delta(&earlier.cpu).cpu_us(),
            Some(0),
        )
    }
}

fn sample(counters: &[Counter], disk: Option<&DeviceStats>) -> Sample {
    Sample {
        at: Instant::now(),
        ops: counters.iter().map(Counter::get).sum(),
        cpu: self_counters(),
        machine: cpustat::read().ok(),
        disk: disk.and_then(|d| d.read().ok()),
    }
}

fn interval(t0: Instant, a: &Sample, b: &Sample) -> Interval {
    let secs = b.at.duration_since(a.at).as_secs_f64();
    let ops = b.ops.saturating_sub(a.ops);
    let noise = b.noise_since(a);
    let d = match (&a.disk, &b.disk) {
        (Some(x), Some(y)) => Some(y.delta(x)),
        _ => None,
    };
    Interval {
        t: b.at.duration_since(t0).as_secs_f64(),
        secs,
        ops,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        cpu_us: Some(b.cpu.delta(&a.cpu).cpu_us() as f64),
        rd: d.map(|d| d.reads),
        rkb: d.map(|d| d.read_kb()),
        wr: d.map(|d| d.writes),
        wkb: d.map(|d| d.written_kb()),
        device: d.and_then(|d| d.device_io(secs)),
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        ..Interval::default()
    }
}

/// Runs `threads` workers for `duration` (or until Ctrl-C). Each worker first builds its
/// state with `setup` (buffers, rings: not timed), then all start together; `work` runs
/// ops until `stop` is set, publishing its op count through the [`Counter`]. A worker
/// that sets `stop` itself should unpark the calling thread, which then ends the step at
/// once.
pub(crate) fn run_timed<S, Setup, Work>(
    threads: usize,
    duration: Duration,
    disk: Option<&DeviceStats>,
    setup: Setup,
    work: Work,
) -> Measured
where
    Setup: Fn(usize) -> Result<S, String> + Sync,
    Work: Fn(&mut S, &Counter, &AtomicBool) -> Result<WorkerOut, String> + Sync,
{
    let counters: Vec<Counter> = (0..threads).map(|_| Counter::default()).collect();
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    let fail = |e: String| {
        let mut g = first_error.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert(e);
    };
    let mut intervals = Vec::new();
    let mut outs: Vec<WorkerOut> = Vec::new();
    let (started, t0, s0, last) = std::thread::scope(|sc| {
        let mut handles = Vec::with_capacity(threads);
        for (i, c) in counters.iter().enumerate() {
            let (setup, work, stop, barrier, fail) = (&setup, &work, &stop, &barrier, &fail);
            handles.push(sc.spawn(move || {
                let st = setup(i);
                barrier.wait();
                let out = st.and_then(|mut s| work(&mut s, c, stop));
                match out {
                    Ok(o) => Some(o),
                    Err(e) => {
                        fail(e);
                        stop.store(true, Ordering::Relaxed);
                        None
                    }
                }
            }));
        }
        // Counters are all zero until the barrier releases the workers: sampling first
        // makes the intervals add up exactly to the workers' op counts.
        let mut s0 = sample(&counters, disk);
        barrier.wait();
        let started = SystemTime::now();
        s0.at = Instant::now();
        let t0 = s0.at;
        let deadline = t0 + duration;
        let mut prev = s0;
        loop {
            let now = Instant::now();
            if now >= deadline || stop.load(Ordering::Relaxed) || crate::interrupted() {
                break;
            }
            let next = (prev.at + Duration::from_secs(1)).min(deadline);
            // Parked rather than asleep: a worker that ends its own step (a zcav slice read
            // once) unparks this thread, so the step's time is the worker's, not rounded
            // up to this loop's 50 ms.
            std::thread::park_timeout(
                next.saturating_duration_since(now)
                    .min(Duration::from_millis(50)),
            );
            if Instant::now() >= prev.at + Duration::from_secs(1) {
                let s = sample(&counters, disk);
                intervals.push(interval(t0, &prev, &s));
                prev = s;
            }
        }
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            match h.join() {
                Ok(Some(o)) => outs.push(o),
                Ok(None) => {}
                Err(_) => fail("a probe worker panicked".into()),
            }
        }
        (started, t0, s0, prev)
    });
    let end = sample(&counters, disk);
    if end.ops > last.ops || end.at.duration_since(last.at).as_secs_f64() > 0.001 {
        intervals.push(interval(t0, &last, &end));
    }
    let secs = end.at.duration_since(t0).as_secs_f64();
    let mut hist = LatencyHistogram::new();
    let (mut ops, mut bytes) = (0u64, 0u64);
    for o in &outs {
        hist.merge(&o.hist);
        ops += o.ops;
        bytes += o.bytes;
    }
    let cpu = end.cpu.delta(&s0.cpu);
    let dd = match (&s0.disk, &end.disk) {
        (Some(a), Some(b)) => Some(b.delta(a)),
        _ => None,
    };
    let per_op = |x: f64| (ops > 0).then(|| x / ops as f64);
    let noise = end.noise_since(&s0);
    let summary = StepSummary {
        ops,
        secs,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        mb_sec: (bytes > 0 && secs > 0.0).then(|| bytes as f64 / secs / 1e6),
        p50_us: hist.quantile_us(0.5),
        p99_us: hist.quantile_us(0.99),
        p999_us: hist.quantile_us(0.999),
        p9999_us: hist.quantile_us(0.9999),
        pmax_us: hist.max_us(),
        cpu_us_op: per_op(cpu.cpu_us() as f64),
        usr_us_op: per_op(cpu.user_us as f64),
        sys_us_op: per_op(cpu.system_us as f64),
        csw_op: per_op(cpu.csw() as f64),
        rd_op: dd.and_then(|d| per_op(d.reads as f64)),
        rkb_op: dd.and_then(|d| per_op(d.read_kb())),
        wr_op: dd.and_then(|d| per_op(d.writes as f64)),
        wkb_op: dd.and_then(|d| per_op(d.written_kb())),
        device: dd.and_then(|d| d.device_io(secs)),
        rss_gb: plumb_probes::process::self_peak_rss_bytes().map(|b| b as f64 / 1e9),
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        ..StepSummary::default()
    };
    let error = first_error.into_inner().unwrap_or_else(|p| p.into_inner());
    let status = if error.is_some() {
        StepStatus::Failed
    } else if crate::interrupted() {
        StepStatus::Interrupted
    } else {
        StepStatus::Ok
    };
    Measured {
        status,
        error,
        started,
        ended: SystemTime::now(),
        summary,
        intervals,
    }
}

impl Measured {
    /// Turns it into a stored step.
    pub(crate) fn into_step(
        self,
        name: String,
        kind: plumb_workloads::ProbeKind,
        config: serde_json::Value,
    ) -> crate::ProbeStep {
        crate::ProbeStep {
            name,
            kind,
            status: self.status,
            error: self.error,
            started: self.started,
            ended: self.ended,
            config,
            summary: self.summary,
            intervals: self.intervals,
        }
    }
}

/// xorshift64*: a per-thread random stream, a few ns per draw, no allocation.
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded from the thread index and the clock; never zero.
    pub(crate) fn new(seed: u64) -> Rng {
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9);
        Rng((seed.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ t) | 1)
    }
    /// The next draw.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0), by multiply-shift: no division per draw.
    #[inline]
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}
