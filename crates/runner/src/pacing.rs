//! Open-loop pacing: each op has an intended start time and its response time counts
//! from then, so a stalled engine cannot hide its stall by making the client send less
//! (no coordinated omission). Arrivals are evenly spaced or a Poisson process.

use crate::histogram::LatencyHistogram;
use plumb_core::OpenLoop;
use plumb_workloads::{Arrivals, Pace};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use std::time::{Duration, Instant};

/// When an op was due and when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Where its response time counts from: the intended start when the op was
    /// already due (the engine made it wait), else its actual start (the pacer slept,
    /// and any lateness of the wake-up is the harness's, not the engine's).
    pub from: Instant,
    /// When it actually started: its service time counts from here.
    pub started: Instant,
    /// How long after its intended start it started, ns (0 when on time).
    pub lag_ns: u64,
}

impl Arrival {
    /// A closed-loop op's: due when it started.
    #[inline]
    pub fn at(t: Instant) -> Arrival {
        Arrival {
            from: t,
            started: t,
            lag_ns: 0,
        }
    }
}

/// An open-loop op that starts later than this after it was due counts as late.
pub const LATE_NS: u64 = 1_000_000;

/// What open-loop ops add up to beside their response times: service times (from each
/// op's actual start), the longest wait to start and how many started late. Every
/// family's loop keeps one per thread and interval; the sampler merges them.
#[derive(Debug, Clone, Default)]
pub struct OpenTally {
    /// Service times.
    pub service: LatencyHistogram,
    /// The longest an op started after it was due, ns.
    pub lag_max_ns: u64,
    /// Ops that started more than [`LATE_NS`] after they were due.
    pub late: u64,
}

impl OpenTally {
    /// Counts one op of `slot` that ended at `end`.
    #[inline]
    pub fn record(&mut self, slot: &Arrival, end: Instant) {
        self.service
            .record_ns(end.saturating_duration_since(slot.started).as_nanos() as u64);
        self.lag_max_ns = self.lag_max_ns.max(slot.lag_ns);
        self.late += u64::from(slot.lag_ns > LATE_NS);
    }

    /// Adds another thread's or interval's.
    pub fn merge(&mut self, o: &OpenTally) {
        self.service.merge(&o.service);
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
        self.late += o.late;
    }

    /// What is stored for a step that was offered `pace` and left `backlog` ops due
    /// and never started.
    pub fn summary(&self, pace: &Pace, backlog: u64) -> OpenLoop {
        let n = self.service.count();
        OpenLoop {
            target_ops_sec: pace.ops_per_sec,
            arrivals: pace.arrivals.to_string(),
            service: self.service.op_latency(),
            lag_max_ms: self.lag_max_ns as f64 / 1e6,
            late_pct: if n > 0 {
                self.late as f64 * 100.0 / n as f64
            } else {
                0.0
            },
            backlog_ops: backlog,
        }
    }
}

/// Hands out intended start times at a rate, evenly or as a Poisson process.
pub struct Pacer {
    start: Instant,
    interval_ns: f64,
    /// Ns from `start` to the next op's intended start.
    next_ns: f64,
    poisson: Option<SmallRng>,
    /// No op due at or after this is handed out ([`Pacer::until`]).
    end: Option<Instant>,
}

impl Pacer {
    /// Evenly spaced arrivals at `ops_per_sec` (> 0). Call it on the thread that will
    /// wait: it narrows that thread's timer slack from the default 50 µs to 1 µs, so
    /// sleeping to an intended start does not itself add tens of µs to every op.
    pub fn new(ops_per_sec: f64, start: Instant) -> Self {
        Self::with_arrivals(ops_per_sec, start, Arrivals::Constant, 0)
    }

    /// Arrivals at `ops_per_sec` (> 0) spaced as `arrivals` says; a Poisson process
    /// draws its gaps from a generator seeded with `seed`, so a run replays.
    pub fn with_arrivals(ops_per_sec: f64, start: Instant, arrivals: Arrivals, seed: u64) -> Self {
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only this thread.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        }
        let mut p = Pacer {
            start,
            interval_ns: 1e9 / ops_per_sec,
            next_ns: 0.0,
            poisson: (arrivals == Arrivals::Poisson).then(|| SmallRng::seed_from_u64(seed)),
            end: None,
        };
        // A Poisson process's first arrival is one gap in, as every other.
        if p.poisson.is_some() {
            p.next_ns = p.gap();
        }
        p
    }

    /// Hands out no op that would start at or after `end`: a step's ops due after its
    /// window are not the step's (the insert benchmark's paced inserts, whose rate is
    /// judged over the window), so the pacer stops there rather than when the sampler
    /// gets round to saying so.
    pub fn until(mut self, end: Instant) -> Self {
        self.end = Some(end);
        self
    }

    fn gap(&mut self) -> f64 {
        match &mut self.poisson {
            Some(rng) => {
                let e: f64 = Exp1.sample(rng);
                e * self.interval_ns
            }
            None => self.interval_ns,
        }
    }

    fn due(&self) -> Instant {
        self.start + Duration::from_nanos(self.next_ns as u64)
    }

    /// Waits for the next op's intended start; `None` if stopped first, or when the op
    /// would start at or after the pacer's end.
    pub fn wait_next(&mut self, stop: &dyn Fn() -> bool) -> Option<Arrival> {
        let a = self.next(stop)?;
        match self.end {
            Some(end) if a.from >= end => None,
            _ => Some(a),
        }
    }

    fn next(&mut self, stop: &dyn Fn() -> bool) -> Option<Arrival> {
        let due = self.due();
        self.next_ns += self.gap();
        if stop() || self.end.is_some_and(|end| due >= end) {
            return None;
        }
        let now = Instant::now();
        if now >= due {
            let lag_ns = (now - due).as_nanos() as u64;
            return Some(Arrival {
                from: due,
                started: now,
                lag_ns,
            });
        }
        loop {
            // Sleep in short slices so a stop is noticed promptly.
            std::thread::sleep((due - Instant::now().min(due)).min(Duration::from_millis(50)));
            if stop() {
                return None;
            }
            let now = Instant::now();
            if now >= due {
                return Some(Arrival {
                    from: now,
                    started: now,
                    lag_ns: 0,
                });
            }
        }
    }

    /// Ops due before `at` that were never handed out: the backlog a stopped step
    /// leaves behind.
    pub fn backlog_at(&mut self, at: Instant) -> u64 {
        let end_ns = at.saturating_duration_since(self.start).as_nanos() as f64;
        let mut n = 0;
        while self.next_ns <= end_ns {
            n += 1;
            self.next_ns += self.gap();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_schedule_counts_from_intended_start_idle_counts_from_wake() {
        let t0 = Instant::now() - Duration::from_millis(10);
        let mut p = Pacer::new(1000.0, t0);
        // 10 ms behind: the first ops are due in the past, so they count from `due`.
        let s = p.wait_next(&|| false).unwrap();
        assert_eq!(s.from, t0);
        assert!(s.started >= t0 + Duration::from_millis(10) && s.lag_ns >= 10_000_000);
        assert_eq!(
            p.wait_next(&|| false).unwrap().from,
            t0 + Duration::from_millis(1)
        );
        // Eight more were due by now and not handed out (10 ms at 1000/s, less the two).
        let b = p.backlog_at(t0 + Duration::from_micros(9_500));
        assert_eq!(b, 8);
        // Ahead of schedule: the pacer sleeps and the op counts from its real start,
        // which is never before its due time.
        let mut q = Pacer::new(1000.0, Instant::now() + Duration::from_millis(5));
        let due = Instant::now() + Duration::from_millis(5);
        let s = q.wait_next(&|| false).unwrap();
        assert!(s.from + Duration::from_micros(100) >= due);
        assert_eq!((s.from, s.lag_ns), (s.started, 0));
        assert!(q.wait_next(&|| true).is_none());
        // An end: the ops due before it, then none.
        let t0 = Instant::now() - Duration::from_millis(10);
        let mut e = Pacer::new(1000.0, t0).until(t0 + Duration::from_micros(2_500));
        let due: Vec<_> = std::iter::from_fn(|| e.wait_next(&|| false).map(|a| a.from)).collect();
        assert_eq!(
            due,
            (0..3)
                .map(|i| t0 + Duration::from_millis(i))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn poisson_gaps_have_the_rate_and_the_spread_of_an_exponential() {
        let t0 = Instant::now();
        let mut p = Pacer::with_arrivals(1000.0, t0, Arrivals::Poisson, 9);
        let mut gaps = Vec::new();
        let mut last = p.next_ns;
        for _ in 0..20_000 {
            p.next_ns += p.gap();
            gaps.push(p.next_ns - last);
            last = p.next_ns;
        }
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
        // Exponential: mean 1 ms and standard deviation equal to the mean.
        assert!((mean / 1e6 - 1.0).abs() < 0.03, "mean {mean}");
        assert!((sd / mean - 1.0).abs() < 0.05, "sd/mean {}", sd / mean);
        // Constant arrivals have no spread.
        let mut c = Pacer::new(1000.0, t0);
        assert_eq!(c.gap(), c.gap());
    }
}
