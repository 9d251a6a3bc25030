//! Faults inside a measured step: a thread of the kernel injects each fault on time
//! through the family's [`Injector`] (a server killed and restarted, stopped and
//! continued), while every measured thread keeps, beside its histograms, a timeline
//! of 10 ms buckets (ops completed, failed attempts, ops over the timeout) and, for the
//! fault under way, its first op started after it that succeeded and its first that
//! succeeded cleanly within the timeout. Nothing here allocates per op: the buckets are
//! made when the thread starts; an op adds to one bucket and compares two instants.
//! [`report`] turns them, with the step's 1-second histograms, into the
//! [`FaultReport`] stored with the step.

use crate::histogram::LatencyHistogram;
use plumb_core::{FaultFigures, FaultReport, RecoveryPhase, SteadyState};
use plumb_workloads::{Due, FaultKind};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The timeline's resolution: outages are measured to within this.
pub const BUCKET: Duration = Duration::from_millis(10);

/// What a family does to its system under test when a fault is due. Called on the
/// kernel's fault thread while the step's clients run; it returns once the system is
/// back (or could not be brought back), so a restart's length is its own.
pub trait Injector: Sync {
    /// Does `kind` now.
    fn inject(&self, kind: &FaultKind) -> Injection;
}

/// What an injection did, in the injector's own words.
#[derive(Debug, Default)]
pub struct Injection {
    /// When the system answered again (a restarted server accepted a connection).
    pub back: Option<Instant>,
    /// What went wrong, if anything: the step goes on, and the fault says so.
    pub error: Option<String>,
    /// The recovery's phases, as the system logged them (times from the injection).
    pub phases: Vec<RecoveryPhase>,
}

/// A step's faults as the kernel runs them ([`super::Spec::faults`]).
pub struct Faults<'a> {
    /// When each is due, seconds into the measured window, in order.
    pub due: &'a [Due],
    /// An op whose service time exceeds this counts against the outage.
    pub timeout: Duration,
    /// Who does them.
    pub injector: &'a dyn Injector,
}

/// What the fault thread and every measured thread share.
pub(super) struct FaultShared {
    /// When each fault was injected.
    pub(super) started: Vec<OnceLock<Instant>>,
    /// How many have been injected so far.
    pub(super) injected: AtomicUsize,
    pub(super) timeout: Duration,
    /// Buckets each thread keeps: the window's length and a margin.
    pub(super) buckets: usize,
}

impl FaultShared {
    pub(super) fn new(f: &Faults<'_>, window: Option<Duration>) -> FaultShared {
        let secs = window.map_or(3600.0, |w| w.as_secs_f64()) + 60.0;
        FaultShared {
            started: f.due.iter().map(|_| OnceLock::new()).collect(),
            injected: AtomicUsize::new(0),
            timeout: f.timeout,
            buckets: (secs / BUCKET.as_secs_f64()).ceil() as usize,
        }
    }
}

/// One 10 ms stretch of one thread's ops, by when they ended.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    /// Ops completed.
    pub done: u32,
    /// Failed attempts (retried) the ops that ended here met.
    pub errors: u32,
    /// Ops completed whose service time exceeded the timeout.
    pub slow: u32,
}

/// A measured thread's own fault records.
pub(super) struct FaultLane {
    pub(super) buckets: Vec<Bucket>,
    /// Per fault: the end of its first op started after it that succeeded, and the
    /// start of the first that succeeded cleanly within the timeout.
    pub(super) firsts: Vec<(Option<Instant>, Option<Instant>)>,
}

impl FaultLane {
    /// What a lane leaves behind once it has sent its records.
    pub(super) fn empty() -> FaultLane {
        FaultLane {
            buckets: Vec::new(),
            firsts: Vec::new(),
        }
    }

    pub(super) fn new(s: &FaultShared) -> FaultLane {
        FaultLane {
            buckets: vec![Bucket::default(); s.buckets],
            firsts: vec![(None, None); s.started.len()],
        }
    }
}

/// Records one measured op of the window (opened at `opened`): started at `started`,
/// ended at `end`, with `n` ops, `errors` failed attempts, clean when it succeeded at
/// its first try.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn record(
    lane: &RefCell<FaultLane>,
    shared: &FaultShared,
    opened: Instant,
    started: Instant,
    end: Instant,
    n: u64,
    errors: u64,
    clean: bool,
) {
    let mut l = lane.borrow_mut();
    let service = end.saturating_duration_since(started);
    let slow = service > shared.timeout;
    let b = (end.saturating_duration_since(opened).as_nanos() / BUCKET.as_nanos()) as usize;
    if let Some(b) = l.buckets.get_mut(b) {
        b.done += n as u32;
        b.errors += errors as u32;
        b.slow += u32::from(slow);
    }
    let k = shared.injected.load(Ordering::Acquire);
    if k == 0 {
        return;
    }
    let Some(&at) = shared.started[k - 1].get() else {
        return;
    };
    if started < at || n == 0 {
        return;
    }
    let f = &mut l.firsts[k - 1];
    if f.0.is_none() {
        f.0 = Some(end);
    }
    if f.1.is_none() && clean && !slow {
        f.1 = Some(started);
    }
}

/// A fault as it was injected.
#[derive(Debug)]
pub struct Injected {
    /// What was due.
    pub due: Due,
    /// Seconds into the window it was injected.
    pub at_s: f64,
    /// Seconds into the window the injector said it was back.
    pub back_s: Option<f64>,
    /// What went wrong injecting it.
    pub error: Option<String>,
    /// The recovery's phases.
    pub phases: Vec<RecoveryPhase>,
}

/// The fault thread: waits for the window to open, then injects each fault when due
/// (unless the step stopped first) and records what it did.
pub(super) fn inject_all(
    f: &Faults<'_>,
    shared: &FaultShared,
    opened: &OnceLock<Instant>,
    stop: &dyn Fn() -> bool,
) -> Vec<Injected> {
    let mut out = Vec::new();
    let t0 = loop {
        if let Some(t) = opened.get() {
            break *t;
        }
        if stop() {
            return out;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    for (k, due) in f.due.iter().enumerate() {
        let when = t0 + Duration::from_secs_f64(due.at);
        loop {
            let now = Instant::now();
            if now >= when || stop() {
                break;
            }
            std::thread::sleep((when - now).min(Duration::from_millis(5)));
        }
        if stop() {
            break;
        }
        let at = Instant::now();
        let _ = shared.started[k].set(at);
        shared.injected.store(k + 1, Ordering::Release);
        let done = f.injector.inject(&due.kind);
        let secs = |i: Instant| i.saturating_duration_since(t0).as_secs_f64();
        out.push(Injected {
            due: *due,
            at_s: secs(at),
            back_s: done.back.map(secs),
            error: done.error,
            phases: done.phases,
        });
    }
    out
}

/// Everything a step's faults left: the injections, the threads' timelines summed,
/// and each fault's firsts (seconds into the window, the earliest over the threads).
#[derive(Debug, Default)]
pub struct FaultsRun {
    /// The faults injected, in order.
    pub injected: Vec<Injected>,
    /// The measured threads' 10 ms buckets, summed.
    pub buckets: Vec<Bucket>,
    /// Per fault: its first success's end and its first clean op's start.
    pub firsts: Vec<(Option<f64>, Option<f64>)>,
    /// The timeout, seconds.
    pub timeout_s: f64,
}

impl FaultsRun {
    pub(super) fn gather(
        injected: Vec<Injected>,
        lanes: Vec<FaultLane>,
        shared: &FaultShared,
        opened: Instant,
    ) -> FaultsRun {
        let mut buckets = vec![Bucket::default(); shared.buckets];
        let mut firsts: Vec<(Option<Instant>, Option<Instant>)> =
            vec![(None, None); shared.started.len()];
        let earliest = |a: Option<Instant>, b: Option<Instant>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for l in lanes {
            for (all, b) in buckets.iter_mut().zip(&l.buckets) {
                all.done += b.done;
                all.errors += b.errors;
                all.slow += b.slow;
            }
            for (all, f) in firsts.iter_mut().zip(&l.firsts) {
                *all = (earliest(all.0, f.0), earliest(all.1, f.1));
            }
        }
        let secs = |i: Instant| i.saturating_duration_since(opened).as_secs_f64();
        FaultsRun {
            injected,
            buckets,
            firsts: firsts
                .into_iter()
                .map(|(a, b)| (a.map(secs), b.map(secs)))
                .collect(),
            timeout_s: shared.timeout.as_secs_f64(),
        }
    }
}

/// How far back the rate "before the fault" is read.
const BEFORE_S: f64 = 10.0;

/// Each fault's figures and the steady state, from what the step's faults left and
/// its 1-second response-time histograms (`seconds[i]` covers `[i, i+1)` s of the
/// window; `window_s` long).
pub fn report(run: &FaultsRun, seconds: &[&LatencyHistogram], window_s: f64) -> FaultReport {
    let bucket_s = BUCKET.as_secs_f64();
    let per_sec = (1.0 / bucket_s).round() as usize;
    let at_bucket = |t: f64| ((t / bucket_s).floor().max(0.0) as usize).min(run.buckets.len());
    let ops_between = |a: f64, b: f64| -> u64 {
        run.buckets[at_bucket(a)..at_bucket(b)]
            .iter()
            .map(|b| u64::from(b.done))
            .sum()
    };
    let end_of = window_s.min(run.buckets.len() as f64 * bucket_s);
    let mut faults = Vec::new();
    let mut prev_end = 0.0f64;
    for (k, inj) in run.injected.iter().enumerate() {
        let at = inj.at_s;
        let next = run.injected.get(k + 1).map_or(end_of, |n| n.at_s);
        let from = prev_end.max(at - BEFORE_S);
        let before = if at > from {
            ops_between(from, at) as f64 / (at - from)
        } else {
            0.0
        };
        let (first_ok, first_clean) = run.firsts.get(k).copied().unwrap_or((None, None));
        let first_ok = first_ok.filter(|&t| t < next);
        // The first second after the first success that carried 90% of the rate
        // before: scanned bucket by bucket, a second's sum at a time.
        let recovered = first_ok.and_then(|t1| {
            let (lo, hi) = (at_bucket(t1.max(at)), at_bucket(next));
            (lo..hi.saturating_sub(per_sec) + 1)
                .find(|&b| {
                    let got: u64 = run.buckets[b..b + per_sec]
                        .iter()
                        .map(|x| u64::from(x.done))
                        .sum();
                    got as f64 >= 0.9 * before && before > 0.0
                })
                .map(|b| b as f64 * bucket_s)
        });
        let window_end = recovered.map_or(next, |r| (r + 1.0).min(next));
        let (wa, wb) = (at_bucket(at), at_bucket(window_end));
        let slice = &run.buckets[wa..wb.max(wa)];
        let mut hist = LatencyHistogram::new();
        for s in seconds_covering(seconds, at, window_end) {
            hist.merge(s);
        }
        faults.push(FaultFigures {
            kind: inj.due.kind.to_string(),
            at_s: at,
            back_s: inj.back_s.map(|b| b - at),
            error: inj.error.clone(),
            outage_s: first_clean.filter(|&t| t < next).map(|t| (t - at).max(0.0)),
            first_success_s: first_ok.map(|t| (t - at).max(0.0)),
            recovered_90_s: recovered.map(|t| (t - at).max(0.0)),
            before_ops_sec: before,
            window: (at, window_end),
            p99_us: hist.quantile_us(0.99),
            pmax_us: hist.max_us(),
            errors: slice.iter().map(|b| u64::from(b.errors)).sum(),
            timeouts: slice.iter().map(|b| u64::from(b.slow)).sum(),
            phases: inj.phases.clone(),
        });
        prev_end = window_end;
    }
    // Steady: the whole seconds that overlap no fault's window.
    let mut steady = LatencyHistogram::new();
    let (mut secs, mut ops) = (0.0, 0u64);
    for (i, h) in seconds.iter().enumerate() {
        let (a, b) = (i as f64, i as f64 + 1.0);
        if b > end_of || faults.iter().any(|f| a < f.window.1 && b > f.window.0) {
            continue;
        }
        steady.merge(h);
        secs += 1.0;
        ops += ops_between(a, b);
    }
    FaultReport {
        timeout_s: run.timeout_s,
        steady: SteadyState {
            secs,
            ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
            p99_us: steady.quantile_us(0.99),
            pmax_us: steady.max_us(),
        },
        faults,
    }
}

/// The 1-second histograms that overlap `[a, b)`.
fn seconds_covering<'a>(
    seconds: &'a [&'a LatencyHistogram],
    a: f64,
    b: f64,
) -> impl Iterator<Item = &'a LatencyHistogram> {
    seconds
        .iter()
        .enumerate()
        .filter(move |(i, _)| (*i as f64) < b && (*i as f64 + 1.0) > a)
        .map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generated step of `secs` seconds at `rate` ops/s (spread evenly over the
    /// buckets), with no op completing in `[out_a, out_b)`, where every op takes 1 ms
    /// except those ending in the second after the outage, which took `slow_us`.
    fn generated(
        secs: usize,
        rate: u32,
        out: (f64, f64),
        slow_us: u64,
    ) -> (FaultsRun, Vec<LatencyHistogram>) {
        let per_bucket = rate / 100;
        let n = secs * 100;
        let mut buckets = vec![Bucket::default(); n + 6000];
        let mut seconds: Vec<LatencyHistogram> =
            (0..secs).map(|_| LatencyHistogram::new()).collect();
        for (b, bucket) in buckets.iter_mut().enumerate().take(n) {
            let t = b as f64 * 0.01;
            if t >= out.0 && t < out.1 {
                bucket.errors = 3;
                continue;
            }
            bucket.done = per_bucket;
            let ns = if t >= out.1 && t < out.1 + 0.2 {
                slow_us * 1000
            } else {
                1_000_000
            };
            for _ in 0..per_bucket {
                seconds[t as usize].record_ns(ns);
            }
        }
        let run = FaultsRun {
            injected: vec![Injected {
                due: Due {
                    at: out.0,
                    kind: FaultKind::Kill,
                },
                at_s: out.0,
                back_s: Some(out.1 - out.0),
                error: None,
                phases: Vec::new(),
            }],
            buckets,
            firsts: vec![(Some(out.1 + 0.002), Some(out.1))],
            timeout_s: 1.0,
        };
        (run, seconds)
    }

    #[test]
    fn an_outage_is_measured_inside_its_window() {
        // 20 s at 1000 ops/s, nothing completes from 8.0 s to 10.5 s.
        let (run, seconds) = generated(20, 1000, (8.0, 10.5), 2_500_000);
        let r = report(&run, &seconds.iter().collect::<Vec<_>>(), 20.0);
        let f = &r.faults[0];
        assert_eq!(f.kind, "kill");
        assert!((f.outage_s.unwrap() - 2.5).abs() < 1e-9, "{f:?}");
        assert!((f.first_success_s.unwrap() - 2.502).abs() < 1e-9);
        // The rate before is the 10 s before the fault at 1000/s.
        assert!(
            (f.before_ops_sec - 1000.0).abs() < 1.0,
            "{}",
            f.before_ops_sec
        );
        // Back to 90% as soon as the first full second after the outage begins.
        let rec = f.recovered_90_s.unwrap();
        assert!((rec - 2.51).abs() < 0.015, "{rec}");
        assert!(f.window.0 == 8.0 && (f.window.1 - (8.0 + rec + 1.0)).abs() < 1e-9);
        // The slow ops after the outage are in the window's p99 and max, not steady's.
        assert!(f.pmax_us.unwrap() >= 2_400_000.0, "{:?}", f.pmax_us);
        assert!(r.steady.pmax_us.unwrap() < 1100.0, "{:?}", r.steady.pmax_us);
        assert_eq!(f.errors, 250 * 3);
        // Steady leaves out the seconds 8..12 the window touches.
        assert_eq!(r.steady.secs, 16.0);
        assert!((r.steady.ops_sec - 1000.0).abs() < 1.0);
    }

    #[test]
    fn a_fault_never_recovered_from_says_so() {
        let (mut run, seconds) = generated(20, 1000, (15.0, 25.0), 1000);
        run.firsts = vec![(None, None)];
        let r = report(&run, &seconds.iter().collect::<Vec<_>>(), 20.0);
        let f = &r.faults[0];
        assert_eq!(
            (f.outage_s, f.first_success_s, f.recovered_90_s),
            (None, None, None)
        );
        assert_eq!(f.window, (15.0, 20.0));
        assert_eq!(r.steady.secs, 15.0);
    }

    #[test]
    fn firsts_are_the_earliest_of_the_threads_after_the_fault() {
        let due = [Due {
            at: 1.0,
            kind: FaultKind::Restart,
        }];
        struct Nop;
        impl Injector for Nop {
            fn inject(&self, _: &FaultKind) -> Injection {
                Injection::default()
            }
        }
        let f = Faults {
            due: &due,
            timeout: Duration::from_millis(100),
            injector: &Nop,
        };
        let shared = FaultShared::new(&f, Some(Duration::from_secs(5)));
        let opened = Instant::now();
        let at = opened + Duration::from_secs(1);
        shared.started[0].set(at).unwrap();
        let lanes: Vec<RefCell<FaultLane>> = (0..2)
            .map(|_| RefCell::new(FaultLane::new(&shared)))
            .collect();
        let ms = |m: u64| Duration::from_millis(m);
        let before = opened + ms(900);
        // Before the fault is injected: no first.
        record(
            &lanes[0],
            &shared,
            opened,
            before,
            before + ms(1),
            1,
            0,
            true,
        );
        shared.injected.store(1, Ordering::Release);
        // Started before it: no first either.
        record(&lanes[0], &shared, opened, before, at + ms(5), 1, 0, true);
        // Thread 0: a retried op ending at 1.8 s, then a clean one starting at 1.9 s.
        record(
            &lanes[0],
            &shared,
            opened,
            at + ms(10),
            at + ms(800),
            1,
            4,
            false,
        );
        record(
            &lanes[0],
            &shared,
            opened,
            at + ms(900),
            at + ms(901),
            1,
            0,
            true,
        );
        // Thread 1: a clean but slow op (over the timeout), then a clean one at 1.95 s.
        record(
            &lanes[1],
            &shared,
            opened,
            at + ms(20),
            at + ms(700),
            1,
            0,
            true,
        );
        record(
            &lanes[1],
            &shared,
            opened,
            at + ms(950),
            at + ms(951),
            1,
            0,
            true,
        );
        let injected = vec![Injected {
            due: due[0],
            at_s: 1.0,
            back_s: None,
            error: None,
            phases: Vec::new(),
        }];
        let run = FaultsRun::gather(
            injected,
            lanes.into_iter().map(RefCell::into_inner).collect(),
            &shared,
            opened,
        );
        let (ok, clean) = run.firsts[0];
        assert!((ok.unwrap() - 1.7).abs() < 1e-6, "{ok:?}");
        assert!((clean.unwrap() - 1.9).abs() < 1e-6, "{clean:?}");
        let errors: u32 = run.buckets.iter().map(|b| b.errors).sum();
        let slow: u32 = run.buckets.iter().map(|b| b.slow).sum();
        let done: u32 = run.buckets.iter().map(|b| b.done).sum();
        // Slow: the op across the fault (105 ms), the retried one and thread 1's first.
        assert_eq!((errors, slow, done), (4, 3, 6));
    }
}
