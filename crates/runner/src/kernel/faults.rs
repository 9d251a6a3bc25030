//! Faults inside a measured step: a thread of the kernel injects each fault on time
//! through the family's [`Injector`] (a server killed and restarted, stopped and
//! continued), while every measured thread keeps, beside its histograms, a timeline
//! of 10 ms buckets: ops completed, failed attempts and ops over the timeout by when
//! they ended, ops that succeeded cleanly by when they started. Nothing here allocates
//! or synchronises per op: the buckets are made when the thread starts, and an op adds
//! to two of them. An outage is read off the summed timeline: from the fault until the
//! first clean op that started once the last trouble it caused was over.
//! [`report`] turns them, with the step's 1-second histograms, into the
//! [`FaultReport`] stored with the step.

use crate::histogram::LatencyHistogram;
use plumb_core::{FaultFigures, FaultReport, RecoveryPhase, SteadyState};
use plumb_workloads::{Due, FaultKind};
use std::cell::RefCell;
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

/// What every measured thread reads of the step's faults.
pub(super) struct FaultShared {
    pub(super) timeout: Duration,
    /// Buckets each thread keeps: the window's length and a margin.
    pub(super) buckets: usize,
}

impl FaultShared {
    pub(super) fn new(f: &Faults<'_>, window: Option<Duration>) -> FaultShared {
        let secs = window.map_or(3600.0, |w| w.as_secs_f64()) + 60.0;
        FaultShared {
            timeout: f.timeout,
            buckets: (secs / BUCKET.as_secs_f64()).ceil() as usize,
        }
    }
}

/// One 10 ms stretch of one thread's ops.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    /// Ops that ended in it.
    pub done: u32,
    /// Failed attempts (retried) of the ops that ended in it.
    pub errors: u32,
    /// Ops that ended in it whose service time exceeded the timeout.
    pub slow: u32,
    /// Ops that started in it and succeeded at their first try within the timeout.
    pub clean: u32,
}

impl Bucket {
    /// Something went wrong here: an op failed an attempt or took too long.
    fn trouble(&self) -> bool {
        self.errors > 0 || self.slow > 0
    }
}

/// A measured thread's own fault timeline.
pub(super) struct FaultLane {
    pub(super) buckets: Vec<Bucket>,
}

impl FaultLane {
    /// What a lane leaves behind once it has sent its timeline.
    pub(super) fn empty() -> FaultLane {
        FaultLane {
            buckets: Vec::new(),
        }
    }

    pub(super) fn new(s: &FaultShared) -> FaultLane {
        FaultLane {
            buckets: vec![Bucket::default(); s.buckets],
        }
    }
}

/// Records one measured op of the window (opened at `opened`): started at `started`,
/// ended at `end`, with `n` ops and `errors` failed attempts, clean when it succeeded
/// at its first try.
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
    let slow = end.saturating_duration_since(started) > shared.timeout;
    let at =
        |i: Instant| (i.saturating_duration_since(opened).as_nanos() / BUCKET.as_nanos()) as usize;
    if let Some(b) = l.buckets.get_mut(at(end)) {
        b.done += n as u32;
        b.errors += errors as u32;
        b.slow += u32::from(slow);
    }
    if clean && !slow && n > 0 {
        if let Some(b) = l.buckets.get_mut(at(started)) {
            b.clean += 1;
        }
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
    for due in f.due {
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

/// Everything a step's faults left: the injections and the threads' timelines summed.
#[derive(Debug, Default)]
pub struct FaultsRun {
    /// The faults injected, in order.
    pub injected: Vec<Injected>,
    /// The measured threads' 10 ms buckets, summed.
    pub buckets: Vec<Bucket>,
    /// The timeout, seconds.
    pub timeout_s: f64,
}

impl FaultsRun {
    pub(super) fn gather(
        injected: Vec<Injected>,
        lanes: Vec<FaultLane>,
        shared: &FaultShared,
    ) -> FaultsRun {
        let mut buckets = vec![Bucket::default(); shared.buckets];
        for l in lanes {
            for (all, b) in buckets.iter_mut().zip(&l.buckets) {
                all.done += b.done;
                all.errors += b.errors;
                all.slow += b.slow;
                all.clean += b.clean;
            }
        }
        FaultsRun {
            injected,
            buckets,
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
        // The trouble the fault made: the buckets of its stretch where an op failed an
        // attempt or took over the timeout (a retried op counts where it finally ended).
        let (lo, hi) = (at_bucket(at), at_bucket(next));
        let trouble: Vec<usize> = (lo..hi).filter(|&b| run.buckets[b].trouble()).collect();
        let time = |b: usize| (b as f64 * bucket_s - at).max(0.0) + at;
        let (first_ok, outage_end) = match (trouble.first(), trouble.last()) {
            // The first op through the trouble, and the first clean op that started
            // once the last trouble was over.
            (Some(&f), Some(&l)) => (
                Some(time(f)),
                (l..hi).find(|&b| run.buckets[b].clean > 0).map(time),
            ),
            // No op noticed: nothing was out, unless no op came through at all.
            _ => {
                let first = (lo..hi).find(|&b| run.buckets[b].done > 0).map(time);
                (first, first.map(|_| at))
            }
        };
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
            outage_s: outage_end.map(|t| (t - at).max(0.0)),
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
    /// buckets), every op 1 ms and clean, except that nothing completes in
    /// `[out.0, out.1)`; the ops retried through it end in the bucket at `out.1`
    /// (`retried` of them, 5 failed attempts, each `slow_us` long).
    fn generated(
        secs: usize,
        rate: u32,
        out: (f64, f64),
        slow_us: u64,
        retried: u32,
    ) -> (FaultsRun, Vec<LatencyHistogram>) {
        let per_bucket = rate / 100;
        let n = secs * 100;
        let mut buckets = vec![Bucket::default(); n + 6000];
        let mut seconds: Vec<LatencyHistogram> =
            (0..secs).map(|_| LatencyHistogram::new()).collect();
        let (a, b) = (
            (out.0 * 100.0).round() as usize,
            (out.1 * 100.0).round() as usize,
        );
        for (i, bucket) in buckets.iter_mut().enumerate().take(n) {
            if i >= a && i < b {
                continue;
            }
            bucket.done = per_bucket;
            bucket.clean = per_bucket;
            for _ in 0..per_bucket {
                seconds[i / 100].record_ns(1_000_000);
            }
            if i == b {
                bucket.done += retried;
                bucket.errors = 5;
                bucket.slow = retried;
                for _ in 0..retried {
                    seconds[i / 100].record_ns(slow_us * 1000);
                }
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
            timeout_s: 1.0,
        };
        (run, seconds)
    }

    fn refs(v: &[LatencyHistogram]) -> Vec<&LatencyHistogram> {
        v.iter().collect()
    }

    #[test]
    fn an_outage_is_measured_inside_its_window() {
        // 20 s at 1000 ops/s, nothing completes from 8.0 s to 10.5 s.
        let (run, seconds) = generated(20, 1000, (8.0, 10.5), 2_500_000, 2);
        let r = report(&run, &refs(&seconds), 20.0);
        let f = &r.faults[0];
        assert_eq!(f.kind, "kill");
        assert!((f.outage_s.unwrap() - 2.5).abs() < 1e-9, "{f:?}");
        assert!((f.first_success_s.unwrap() - 2.5).abs() < 1e-9);
        // The rate before is the 10 s before the fault at 1000/s.
        assert!(
            (f.before_ops_sec - 1000.0).abs() < 1.0,
            "{}",
            f.before_ops_sec
        );
        // Back to 90% as soon as the first full second after the outage begins.
        let rec = f.recovered_90_s.unwrap();
        assert!((rec - 2.5).abs() < 1e-9, "{rec}");
        assert!(f.window.0 == 8.0 && (f.window.1 - (8.0 + rec + 1.0)).abs() < 1e-9);
        // The slow ops after the outage are in the window's p99 and max, not steady's.
        assert!(f.pmax_us.unwrap() >= 2_400_000.0, "{:?}", f.pmax_us);
        assert!(r.steady.pmax_us.unwrap() < 1100.0, "{:?}", r.steady.pmax_us);
        assert_eq!((f.errors, f.timeouts), (5, 2));
        // Steady leaves out the seconds 8..12 the window touches.
        assert_eq!(r.steady.secs, 16.0);
        assert!((r.steady.ops_sec - 1000.0).abs() < 1.0);
    }

    #[test]
    fn ops_that_slip_through_as_the_fault_begins_do_not_end_the_outage() {
        // A restart: the ops of the first 20 ms still succeed, then nothing until 2 s.
        let (mut run, seconds) = generated(10, 1000, (5.02, 7.0), 1_900_000, 2);
        run.injected[0].at_s = 5.0;
        let f = &report(&run, &refs(&seconds), 10.0).faults[0];
        assert!((f.outage_s.unwrap() - 2.0).abs() < 1e-9, "{f:?}");
        assert!((f.first_success_s.unwrap() - 2.0).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn a_fault_no_op_noticed_has_no_outage_and_one_never_recovered_from_says_so() {
        let (run, seconds) = generated(20, 1000, (15.0, 15.0), 1000, 0);
        let f = &report(&run, &refs(&seconds), 20.0).faults[0];
        assert_eq!(f.outage_s, Some(0.0));
        let (run, seconds) = generated(20, 1000, (15.0, 25.0), 1000, 2);
        let r = report(&run, &refs(&seconds), 20.0);
        let f = &r.faults[0];
        assert_eq!(
            (f.outage_s, f.first_success_s, f.recovered_90_s),
            (None, None, None)
        );
        assert_eq!(f.window, (15.0, 20.0));
        assert_eq!(r.steady.secs, 15.0);
    }

    #[test]
    fn the_threads_timelines_sum_and_clean_ops_count_where_they_started() {
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
        let lanes: Vec<RefCell<FaultLane>> = (0..2)
            .map(|_| RefCell::new(FaultLane::new(&shared)))
            .collect();
        let t = |m: u64| opened + Duration::from_millis(m);
        // Thread 0: a clean op at 0.5 s; an op retried 4 times from 1.01 s to 1.8 s.
        record(&lanes[0], &shared, opened, t(500), t(501), 1, 0, true);
        record(&lanes[0], &shared, opened, t(1010), t(1800), 1, 4, false);
        // Thread 1: a clean but slow op (over the timeout), then a clean one at 1.95 s.
        record(&lanes[1], &shared, opened, t(1020), t(1700), 1, 0, true);
        record(&lanes[1], &shared, opened, t(1950), t(1951), 1, 0, true);
        let run = FaultsRun::gather(
            Vec::new(),
            lanes.into_iter().map(RefCell::into_inner).collect(),
            &shared,
        );
        let b = &run.buckets;
        assert_eq!((b[50].done, b[50].clean), (1, 1));
        assert_eq!((b[180].done, b[180].errors, b[180].slow), (1, 4, 1));
        assert_eq!((b[170].slow, b[102].clean), (1, 0));
        assert_eq!((b[195].clean, b[195].done), (1, 1));
        let total = |f: fn(&Bucket) -> u32| b.iter().map(f).sum::<u32>();
        assert_eq!(
            (total(|x| x.done), total(|x| x.clean), total(|x| x.errors)),
            (4, 2, 4)
        );
    }
}
