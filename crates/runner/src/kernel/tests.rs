//! The kernel on clients that are neither key-value steps nor probes: what every family
//! relies on (intervals adding up, a thread ending its own work, an error or a panic
//! stopping the step, Ctrl-C before the start, op-timed and untimed ops).

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn spec<'a>(threads: usize, secs: f64, interrupt: &'a AtomicBool) -> Spec<'a> {
    Spec {
        threads,
        writers: 0,
        thread_name: "plumb-w",
        classes: 0,
        warmup: Duration::ZERO,
        duration: Some(Duration::from_secs_f64(secs)),
        disk: None,
        interrupt,
        progress: &NoProgress,
        clients: None,
        on_open: None,
        faults: None,
    }
}

/// Ops counted by each thread itself, to check the kernel's tally against.
#[derive(Default)]
struct Counted(u64);

#[test]
fn intervals_add_up_to_the_ops_every_thread_did() {
    let stop = AtomicBool::new(false);
    let run = run(
        &spec(2, 1.6, &stop),
        &mut (),
        |lane: &Lane<'_>, n: &mut Counted| {
            // A probe-like client: untimed blocks of 64 ops, 8 bytes each.
            lane.drive_timed(Timing::Untimed, u64::MAX, None, |_| {
                n.0 += 64;
                std::hint::black_box((0..200u64).sum::<u64>());
                Ok::<_, String>((64, 512))
            })
        },
    );
    assert!(
        run.errors.is_empty() && !run.interrupted,
        "{:?}",
        run.errors
    );
    let did: u64 = run.outputs.iter().map(|c| c.0).sum();
    assert!(did > 0);
    assert_eq!(run.tally.ops(), did, "every op done lands in one interval");
    assert_eq!(run.tally.bytes(), did * 8);
    let intervals = run.intervals(|_, _, iv| iv);
    assert!(intervals.len() >= 2, "{intervals:?}");
    assert_eq!(intervals.iter().map(|i| i.ops).sum::<u64>(), did);
    let s = run.summary();
    assert_eq!(s.ops, did);
    assert!((intervals.last().unwrap().t - s.secs).abs() < 0.01);
    assert!((1.55..2.5).contains(&s.secs), "{}", s.secs);
    // Untimed ops leave no percentiles, anywhere.
    assert_eq!((s.p50_us, s.pmax_us), (None, None));
    assert!(intervals.iter().all(|i| i.p99_us.is_none()));
    assert!(s.cpu_us_op.is_some() && s.steal_pct.is_some());
}

#[test]
fn threads_with_nothing_left_to_do_end_the_step_early() {
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let run = run(
        &spec(3, 30.0, &stop),
        &mut (),
        |lane: &Lane<'_>, _: &mut ()| {
            let mut left = 1000 * (lane.index() as u64 + 1);
            lane.drive(u64::MAX, None, |_| {
                if left == 0 {
                    return Ok::<_, String>((0, 0));
                }
                left -= 1;
                Ok((1, 0))
            })
        },
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(run.errors.is_empty() && !run.interrupted);
    assert_eq!(run.tally.ops(), 1000 + 2000 + 3000);
    assert_eq!(run.tally.total.count(), 6000, "each op timed by the loop");
}

#[test]
fn an_error_stops_every_thread_and_is_reported() {
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let run = run(
        &spec(3, 30.0, &stop),
        &mut (),
        |lane: &Lane<'_>, n: &mut Counted| {
            if lane.index() == 2 {
                return Err("no ring for thread 2".to_string()); // fails in setup
            }
            lane.drive(u64::MAX, None, |_| {
                n.0 += 1;
                Ok((1, 0))
            })
        },
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(run.errors, vec!["no ring for thread 2".to_string()]);
    assert_eq!(run.outputs.len(), 3);
    assert_eq!(
        run.tally.ops(),
        run.outputs.iter().map(|c| c.0).sum::<u64>()
    );
}

#[test]
fn a_panicking_thread_fails_the_step_instead_of_hanging_it() {
    let stop = AtomicBool::new(false);
    let run = run(
        &spec(2, 30.0, &stop),
        &mut (),
        |lane: &Lane<'_>, _: &mut ()| {
            let mut n = 0u64;
            lane.drive(u64::MAX, None, |_| {
                n += 1;
                if lane.index() == 1 && n == 100 {
                    panic!("op 100 went wrong");
                }
                Ok::<_, String>((1, 0))
            })
        },
    );
    assert_eq!(run.errors.len(), 1);
    assert!(
        run.errors[0].contains("op 100 went wrong"),
        "{:?}",
        run.errors
    );
}

#[test]
fn interrupted_before_the_start_runs_no_op_but_finishes_what_is_in_flight() {
    let stop = AtomicBool::new(true);
    let run = run(
        &spec(1, 30.0, &stop),
        &mut (),
        |lane: &Lane<'_>, _: &mut ()| {
            lane.drive(u64::MAX, None, |_| Ok::<_, String>((1, 0)))?;
            let mut in_flight = 5;
            lane.finish(Timing::Loop, |_| {
                if in_flight == 0 {
                    return Ok::<_, String>((0, 0));
                }
                in_flight -= 1;
                Ok((1, 0))
            })
        },
    );
    assert!(run.interrupted);
    assert_eq!(run.tally.ops(), 5);
}

#[test]
fn an_op_that_times_itself_is_recorded_with_its_own_latency() {
    let stop = AtomicBool::new(false);
    let mut spec = spec(1, 30.0, &stop);
    spec.classes = 2;
    let run = run(&spec, &mut (), |lane: &Lane<'_>, _: &mut ()| {
        let mut n = 0u64;
        lane.drive_timed(Timing::ByOp, 1000, None, |c| {
            n += 1;
            c.set_class((n % 2) as u8);
            c.set_latency_ns(5_000_000); // 5 ms, as a completion submitted long ago
            Ok::<_, String>((1, 0))
        })
    });
    assert_eq!(run.tally.ops(), 1000, "the quota ends the thread");
    let p50 = run.tally.total.quantile_us(0.5).unwrap();
    assert!((p50 - 5000.0).abs() < 5.0, "{p50}");
    let kinds: Vec<u64> = run.tally.by_class.iter().map(|h| h.count()).collect();
    assert_eq!(kinds, vec![500, 500]);
}

/// A gauge's reading is taken at every mark, and its hooks bracket the window.
#[test]
fn a_gauge_is_read_at_every_mark_and_told_when_the_window_opens_and_closes() {
    #[derive(Default)]
    struct Count {
        reads: u64,
        opened_at: Option<u64>,
        closed_at: Option<u64>,
    }
    impl Gauge for Count {
        type Reading = u64;
        fn read(&mut self) -> u64 {
            self.reads += 1;
            self.reads
        }
        fn opened(&mut self) {
            self.opened_at = Some(self.reads);
        }
        fn closed(&mut self) {
            self.closed_at = Some(self.reads);
        }
    }
    let stop = AtomicBool::new(false);
    let mut g = Count::default();
    let run = run(
        &spec(1, 1.2, &stop),
        &mut g,
        |lane: &Lane<'_>, _: &mut ()| {
            lane.drive(u64::MAX, None, |_| {
                std::thread::sleep(Duration::from_millis(1));
                Ok::<_, String>((1, 0))
            })
        },
    );
    let seen: Vec<u64> = run.marks.iter().map(|m| m.extra).collect();
    assert_eq!(seen, (1..=run.marks.len() as u64).collect::<Vec<_>>());
    assert!(seen.len() >= 3, "{seen:?}");
    assert_eq!(g.opened_at, Some(1));
    assert_eq!(g.closed_at, Some(seen.len() as u64));
    assert!(!stop.load(Ordering::Relaxed));
}

/// A family's own outcome: a transaction of `queries` queries, or the thread's end.
struct Txn {
    queries: u64,
    done: bool,
    rest: Duration,
}

impl Outcome for Txn {
    fn ops(&self) -> u64 {
        self.queries
    }
    fn bytes(&self) -> u64 {
        0
    }
    fn finished(&self) -> bool {
        self.done
    }
    fn count(&self, c: &mut Counts) {
        c[0] += 1;
        c[1] += self.queries * 10;
    }
    fn rest(&self) -> Duration {
        self.rest
    }
}

#[test]
fn a_familys_counts_are_kept_per_interval_and_its_rest_is_outside_every_op() {
    let stop = AtomicBool::new(false);
    let run = run(
        &spec(2, 30.0, &stop),
        &mut (),
        |lane: &Lane<'_>, _: &mut ()| {
            let mut n = 0u64;
            lane.drive_counted(Timing::Loop, u64::MAX, None, |_| {
                n += 1;
                // Every tenth transaction is all table work and no counted op; each
                // rests 4 ms after, which no latency may show.
                Ok::<_, String>(Txn {
                    queries: u64::from(!n.is_multiple_of(10)),
                    done: n > 300,
                    rest: Duration::from_millis(4),
                })
            })
        },
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    // 300 transactions per thread, 270 of them with a query.
    assert_eq!(run.tally.ops(), 2 * 270);
    let counts = run.tally.counts();
    assert_eq!((counts[0], counts[1], counts[2]), (600, 5400, 0));
    let per_interval: u64 = run.tally.intervals.iter().map(|p| p.counts[0]).sum();
    assert_eq!(per_interval, 600);
    assert!(run.tally.intervals.len() >= 2, "300 × 4 ms of rest");
    // Every transaction is timed, the finished call is not.
    assert_eq!(run.tally.total.count(), 600);
    let max = run.tally.total.max_us().unwrap();
    assert!(max < 3000.0, "a rest counted in a latency: {max} µs");
}

#[test]
fn a_head_timed_op_is_timed_to_its_end_and_its_tail_to_nobody() {
    let stop = AtomicBool::new(false);
    let run = run(
        &spec(1, 30.0, &stop),
        &mut (),
        |lane: &Lane<'_>, _: &mut ()| {
            lane.drive_counted(Timing::Head, 50, None, |c| {
                c.end();
                std::thread::sleep(Duration::from_millis(10));
                Ok::<_, String>((1, 0))
            })
        },
    );
    assert_eq!(run.tally.ops(), 50);
    let max = run.tally.total.max_us().unwrap();
    assert!(max < 5000.0, "the tail counted: {max} µs");
}

#[test]
fn writers_run_beside_the_measured_threads_and_are_tallied_apart_per_interval() {
    let stop = AtomicBool::new(false);
    let mut s = spec(1, 1.5, &stop);
    s.writers = 2;
    let run = run(&s, &mut (), |lane: &Lane<'_>, n: &mut Counted| {
        if lane.writer() {
            assert!(lane.index() >= 1);
            let mut p = crate::Pacer::new(200.0, lane.window_start());
            return lane.drive(u64::MAX, Some(&mut p), |_| {
                n.0 += 1;
                Ok::<_, String>((1, 100))
            });
        }
        lane.drive(u64::MAX, None, |_| {
            n.0 += 1;
            std::thread::sleep(Duration::from_micros(200));
            Ok::<_, String>((1, 0))
        })
    });
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.outputs.len(), 3);
    let writers: u64 = run.outputs[1..].iter().map(|c| c.0).sum();
    assert_eq!(run.tally.ops(), run.outputs[0].0);
    assert_eq!(run.tally.writer.ops, writers);
    assert_eq!(run.tally.writer.bytes, writers * 100);
    // 2 × 200/s over 1.5 s, give or take an op at each end.
    assert!((590..=606).contains(&writers), "{writers}");
    assert_eq!(run.tally.writer_intervals.len(), run.tally.intervals.len());
    let per: u64 = run.tally.writer_intervals.iter().map(|p| p.ops).sum();
    assert_eq!(per, writers);
    assert!(run.tally.writer_intervals.iter().all(|p| p.ops > 0));
}

#[test]
fn the_window_opens_once_every_thread_has_set_up() {
    let stop = AtomicBool::new(false);
    let run = run(
        &spec(2, 0.5, &stop),
        &mut (),
        |lane: &Lane<'_>, _: &mut ()| {
            // A slow connection: setup, not the step's.
            std::thread::sleep(Duration::from_millis(300 * lane.index() as u64 + 300));
            lane.drive(u64::MAX, None, |_| {
                std::thread::sleep(Duration::from_millis(1));
                Ok::<_, String>((1, 0))
            })
        },
    );
    let s = run.summary();
    assert!((0.5..0.7).contains(&s.secs), "{}", s.secs);
    // Both threads ran in the window: neither was still setting up in it.
    assert!(s.ops > 300, "{}", s.ops);
}

/// The per-op costs every family shares are the process's counters over the window
/// divided by its ops: CPU, context switches and major faults alike.
#[test]
fn the_summary_divides_the_windows_counters_by_its_ops() {
    use plumb_probes::process::ProcessCounters;
    let t0 = Instant::now();
    let mark = |at: Instant, p: ProcessCounters| Mark {
        at,
        process: p,
        machine: None,
        disk: None,
        extra: (),
    };
    let a = mark(
        t0,
        ProcessCounters {
            user_us: 1_000,
            system_us: 500,
            voluntary_csw: 10,
            involuntary_csw: 5,
            major_faults: 7,
        },
    );
    let b = mark(
        t0 + Duration::from_secs(2),
        ProcessCounters {
            user_us: 5_000,
            system_us: 2_500,
            voluntary_csw: 60,
            involuntary_csw: 15,
            major_faults: 207,
        },
    );
    let s = summary(&a, &b, 1_000, &crate::LatencyHistogram::new());
    assert_eq!(s.ops_sec, 500.0);
    assert_eq!(s.cpu_us_op, Some(6.0));
    assert_eq!(s.csw_op, Some(0.06));
    assert_eq!(s.majflt_op, Some(0.2));
    // No ops: no per-op figure rather than a division by zero.
    let none = summary(&a, &b, 0, &crate::LatencyHistogram::new());
    assert_eq!(none.majflt_op, None);
}

/// When each op of a thread started, seconds from the window's start.
#[derive(Default)]
struct Starts(Vec<f64>);

#[test]
fn under_a_threads_profile_a_thread_runs_only_once_the_profile_counts_it_in() {
    let stop = AtomicBool::new(false);
    let profile: plumb_workloads::ThreadsProfile =
        "hold:1/400ms,hold:3/400ms,hold:2/400ms".parse().unwrap();
    let mut s = spec(profile.peak(), 1.2, &stop);
    s.clients = Some(&profile);
    let run = run(&s, &mut (), |lane: &Lane<'_>, starts: &mut Starts| {
        let opened = lane.window_start();
        lane.drive(u64::MAX, None, |_| {
            starts.0.push(opened.elapsed().as_secs_f64());
            std::thread::sleep(Duration::from_micros(200));
            Ok::<_, String>((1, 0))
        })
    });
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.outputs.len(), 3, "the profile's peak of threads");
    // A thread asks the profile before it starts an op, so none starts before its turn
    // (threads 1 and 2 at 0.4 s), whatever the machine's load.
    for (t, starts) in run.outputs.iter().enumerate().skip(1) {
        assert!(!starts.0.is_empty(), "thread {t} ran in its phase");
        let first = starts.0[0];
        assert!(
            first >= 0.4,
            "thread {t} started at {first} s, before its turn"
        );
    }
    assert!(!run.outputs[0].0.is_empty());
    // Each interval says how many threads the profile ran in it: the mean of the count
    // over the interval, here worked out by hand from the three holds.
    let by_hand = |a: f64, b: f64| {
        let held = |from: f64, to: f64, n: f64| (b.min(to) - a.max(from)).max(0.0) * n;
        (held(0.0, 0.4, 1.0) + held(0.4, 0.8, 3.0) + held(0.8, f64::INFINITY, 2.0)) / (b - a)
    };
    let intervals = run.intervals(|_, _, iv| iv);
    assert!(!intervals.is_empty());
    for iv in &intervals {
        let want = by_hand(iv.t - iv.secs, iv.t);
        let got = iv.threads.expect("threads stored");
        assert!((got - want).abs() < 0.01, "{iv:?}: {got} vs {want}");
    }
    assert_eq!(
        run.summary().threads_profile.as_deref(),
        Some("hold:1/400ms,hold:3/400ms,hold:2/400ms")
    );
}
