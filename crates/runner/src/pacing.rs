//! Open-loop pacing: each op has an intended start time and its response time counts
//! from then, so a stalled engine cannot hide its stall by making the client send less
//! (no coordinated omission). Arrivals are evenly spaced or a Poisson process.

use crate::histogram::LatencyHistogram;
use plumb_core::{Interval, OpenLoop};
use plumb_workloads::{Arrivals, Pace, RateProfile};
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

    /// What is stored for a step that was offered `pace` over `intervals` and left
    /// `backlog` ops due and never started; each interval is marked with what it was
    /// offered.
    pub fn summary(&self, pace: &Pace, backlog: u64, intervals: &mut [Interval]) -> OpenLoop {
        let n = self.service.count();
        for iv in intervals.iter_mut() {
            iv.target_ops_sec = Some(pace.offered_between(iv.t - iv.secs, iv.t));
        }
        let secs = intervals.last().map_or(0.0, |iv| iv.t);
        OpenLoop {
            target_ops_sec: pace.offered_between(0.0, secs),
            profile: pace.profile.as_ref().map(|p| p.to_string()),
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

/// How a pacer's intended start times are laid out in time.
enum Schedule {
    /// One rate: op `w` (in ops offered so far) is due at `w × interval_ns`.
    Fixed { interval_ns: f64 },
    /// A rate that changes over time, shared by `threads` threads alike: op `w` of a
    /// thread is due when the profile has offered `w × threads` ops.
    Profile { profile: RateProfile, threads: f64 },
}

/// Hands out intended start times at a rate, or following a rate profile, evenly or as a
/// Poisson process. Both are one rule: each op is due when the ops offered since the
/// start (the integral of the rate) reach its place in the sequence, one apart for even
/// arrivals and unit exponential gaps apart for a Poisson process (a Poisson process of
/// varying rate is a unit one in the integrated rate's time).
pub struct Pacer {
    start: Instant,
    schedule: Schedule,
    /// The next op's place in the sequence: ops offered to this thread before it.
    work: f64,
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
        let interval_ns = 1e9 / ops_per_sec;
        Self::build(Schedule::Fixed { interval_ns }, start, arrivals, seed)
    }

    /// One of `threads` threads' share of `pace` (its rate, or its profile), from
    /// `start`: what every open-loop step's threads run.
    pub fn share(pace: &Pace, threads: usize, start: Instant, seed: u64) -> Self {
        let threads = threads.max(1) as f64;
        match &pace.profile {
            Some(profile) => Self::build(
                Schedule::Profile {
                    profile: profile.clone(),
                    threads,
                },
                start,
                pace.arrivals,
                seed,
            ),
            None => Self::with_arrivals(pace.ops_per_sec / threads, start, pace.arrivals, seed),
        }
    }

    fn build(schedule: Schedule, start: Instant, arrivals: Arrivals, seed: u64) -> Self {
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only this thread.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        }
        let mut p = Pacer {
            start,
            schedule,
            work: 0.0,
            poisson: (arrivals == Arrivals::Poisson).then(|| SmallRng::seed_from_u64(seed)),
            end: None,
        };
        // A Poisson process's first arrival is one gap in, as every other.
        if p.poisson.is_some() {
            p.work = p.gap();
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

    /// The gap to the next op, in ops offered.
    fn gap(&mut self) -> f64 {
        match &mut self.poisson {
            Some(rng) => Exp1.sample(rng),
            None => 1.0,
        }
    }

    /// Ns from the start to when op `work` is due; infinite when the rate has ended at
    /// zero before it.
    fn due_ns(&self, work: f64) -> f64 {
        match &self.schedule {
            Schedule::Fixed { interval_ns } => work * interval_ns,
            Schedule::Profile { profile, threads } => profile.time_of(work * threads) * 1e9,
        }
    }

    /// Waits for the next op's intended start; `None` if stopped first, or when the op
    /// would start at or after the pacer's end (or never: a profile ended at rate 0).
    pub fn wait_next(&mut self, stop: &dyn Fn() -> bool) -> Option<Arrival> {
        let a = self.next(stop)?;
        match self.end {
            Some(end) if a.from >= end => None,
            _ => Some(a),
        }
    }

    fn next(&mut self, stop: &dyn Fn() -> bool) -> Option<Arrival> {
        let due_ns = self.due_ns(self.work);
        // Past any run's length (and past what an Instant can hold): never due.
        if due_ns.is_nan() || due_ns >= 1e18 {
            return None;
        }
        let due = self.start + Duration::from_nanos(due_ns as u64);
        self.work += self.gap();
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
        while self.due_ns(self.work) <= end_ns {
            n += 1;
            self.work += self.gap();
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
        let mut last = p.due_ns(p.work);
        for _ in 0..20_000 {
            p.work += p.gap();
            let due = p.due_ns(p.work);
            gaps.push(due - last);
            last = due;
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

    /// The intended starts `pacer` hands out before `secs` seconds, seconds from
    /// `start` (in the past, so none is slept for).
    fn due_secs(pacer: Pacer, start: Instant, secs: f64) -> Vec<f64> {
        let mut p = pacer.until(start + Duration::from_secs_f64(secs));
        std::iter::from_fn(|| p.wait_next(&|| false))
            .map(|a| (a.from - start).as_secs_f64())
            .collect()
    }

    /// Ops due in each whole second of `due`.
    fn per_second(due: &[f64], secs: usize) -> Vec<usize> {
        let mut n = vec![0; secs];
        for &d in due {
            n[d as usize] += 1;
        }
        n
    }

    #[test]
    fn a_profiles_intended_starts_follow_its_integrated_rate_on_every_thread() {
        let profile: RateProfile =
            "hold:1k/1s,ramp:1k..3k/1s,hold:0/1s,sine:mean=2k,amp=2k,period=2s"
                .parse()
                .unwrap();
        let start = Instant::now() - Duration::from_secs(30);
        for arrivals in [Arrivals::Constant, Arrivals::Poisson] {
            let pace = Pace::profiled(profile.clone(), arrivals);
            assert_eq!(pace.ops_per_sec, 4000.0, "the peak");
            // Two threads, each its half of the profile.
            let mut due = Vec::new();
            for t in 0..2 {
                due.extend(due_secs(Pacer::share(&pace, 2, start, t), start, 6.0));
            }
            let got = per_second(&due, 6);
            // Offered per second: 1000, 2000 (the ramp's mean), 0, then the sine to the
            // end, its half periods of 1 s each offering 2000 ± 2000·2/π in turn.
            let sine_half = 2000.0 * 2.0 / std::f64::consts::PI;
            let (up, down) = (2000.0 + sine_half, 2000.0 - sine_half);
            let want = [1000.0, 2000.0, 0.0, up, down, up];
            for (s, (&g, &w)) in got.iter().zip(&want).enumerate() {
                // Even arrivals: exact but for the op on each second's edge; a Poisson
                // process (seeded, so this is always the same draw): within 5 standard
                // deviations of its mean.
                let tol = match arrivals {
                    Arrivals::Constant => 2.0,
                    Arrivals::Poisson => 5.0 * w.sqrt() + 1.0,
                };
                assert!(
                    (g as f64 - w).abs() <= tol,
                    "{arrivals} second {s}: {g} ops due, offered {w}"
                );
            }
        }
        // Even arrivals: op k of a thread is due exactly when the profile has offered
        // k ops per thread, so a thread's starts are the profile's own.
        let pace = Pace::profiled(profile.clone(), Arrivals::Constant);
        let due = due_secs(Pacer::share(&pace, 2, start, 0), start, 6.0);
        for (k, &d) in due.iter().enumerate() {
            let want = profile.time_of(k as f64 * 2.0);
            assert!((d - want).abs() < 2e-9, "op {k}: {d} vs {want}");
        }
        // None due in the pause.
        assert!(due.iter().all(|&d| !(2.0001..3.0).contains(&d)));
    }

    #[test]
    fn a_profile_that_ends_at_zero_hands_out_nothing_more_and_leaves_no_backlog() {
        let pace = Pace::profiled("ramp:100..0/2s".parse().unwrap(), Arrivals::Constant);
        let start = Instant::now() - Duration::from_secs(30);
        let mut p = Pacer::share(&pace, 1, start, 0);
        let n = std::iter::from_fn(|| p.wait_next(&|| false)).count();
        // 100 ops offered over the ramp (its mean 50/s for 2 s), the first at 0.
        assert!((100..=101).contains(&n), "{n}");
        assert_eq!(p.backlog_at(Instant::now()), 0);
    }
}
