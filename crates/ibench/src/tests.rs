//! The runner against a fixture engine whose speed and stalls the test sets, and the
//! key-space layout against plumb's in-memory engine.

use crate::error::IbError;
use crate::kv::KvTable;
use crate::row::Row;
use crate::run::{run_ib_step, IbContext, IbStepConfig, IbTally};
use crate::target::{IbConn, IbTarget, SecIndex};
use plumb_core::{StepStatus, IB_BUCKETS_US};
use plumb_runner::NoProgress;
use plumb_workloads::IbStepPlan;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// An in-memory table whose commits take `commit` each, that stalls every commit
/// begun inside `stall` (from its creation) until the stall ends, and that can be told
/// to lose one row per delete (to show the count check failing).
struct Fixture {
    rows: Mutex<BTreeMap<u64, Row>>,
    commit: Duration,
    born: Instant,
    stall: Option<(Duration, Duration)>,
    lose_rows: bool,
}

impl Fixture {
    fn new(commit: Duration) -> Fixture {
        Fixture {
            rows: Mutex::new(BTreeMap::new()),
            commit,
            born: Instant::now(),
            stall: None,
            lose_rows: false,
        }
    }
}

struct FixtureConn<'a>(&'a Fixture);

impl IbTarget for Fixture {
    fn describe(&self) -> String {
        "fixture".into()
    }
    fn connect(&self) -> Result<Box<dyn IbConn + '_>, IbError> {
        Ok(Box::new(FixtureConn(self)))
    }
    fn create_table(&self) -> Result<(), IbError> {
        self.rows.lock().unwrap().clear();
        Ok(())
    }
    fn create_indexes(&self) -> Result<u64, IbError> {
        Ok(self.rows.lock().unwrap().len() as u64)
    }
    fn reduce_debt(&self) -> Result<String, IbError> {
        Ok("nothing".into())
    }
    fn count_rows(&self) -> Result<u64, IbError> {
        Ok(self.rows.lock().unwrap().len() as u64)
    }
}

impl IbConn for FixtureConn<'_> {
    fn insert(&mut self, rows: &[Row]) -> Result<(), IbError> {
        let f = self.0;
        if let Some((at, len)) = f.stall {
            let since = f.born.elapsed();
            if since >= at && since < at + len {
                std::thread::sleep(at + len - since);
            }
        }
        std::thread::sleep(f.commit);
        let mut m = f.rows.lock().unwrap();
        for r in rows {
            m.insert(r.id, *r);
        }
        Ok(())
    }
    fn delete_range(&mut self, lo: u64, hi: u64) -> Result<u64, IbError> {
        let mut m = self.0.rows.lock().unwrap();
        let mut n = 0;
        for id in lo..hi {
            n += u64::from(m.remove(&id).is_some());
        }
        if self.0.lose_rows {
            // Removes one more row than it says.
            if let Some(k) = m.keys().next().copied() {
                m.remove(&k);
            }
        }
        Ok(n)
    }
    fn point(&mut self, ids: &[u64]) -> Result<u64, IbError> {
        let m = self.0.rows.lock().unwrap();
        Ok(ids.iter().filter(|i| m.contains_key(i)).count() as u64)
    }
    fn range(&mut self, _: SecIndex, _: i32, limit: u32) -> Result<u64, IbError> {
        let m = self.0.rows.lock().unwrap();
        Ok((m.len() as u64).min(u64::from(limit)))
    }
}

fn cfg(step: &str, rows: u64, secs: f64, delete: bool) -> IbStepConfig {
    IbStepConfig {
        index: 0,
        plan: IbStepPlan::parse(step).unwrap(),
        clients: 1,
        rows,
        duration: Duration::from_secs_f64(secs),
        delete_per_insert: delete,
        rows_per_query: 10,
        seed: 42,
        query_pace: None,
        perf_groups: 0,
        wait_hz: 10.0,
    }
}

fn step(t: &dyn IbTarget, tally: &mut IbTally, c: &IbStepConfig) -> crate::run::IbStepResult {
    let stop = AtomicBool::new(false);
    let mut ctx = IbContext {
        target: t,
        disk: None,
        interrupt: &stop,
        progress: &NoProgress,
        tally,
    };
    run_ib_step(&mut ctx, c)
}

#[test]
fn a_rate_the_engine_cannot_reach_fails_the_step_by_the_95_percent_rule() {
    // Each commit of 50 rows takes 100 ms: at most 500 rows/s, and qr1000 asks 1000.
    let slow = Fixture::new(Duration::from_millis(100));
    let mut tally = IbTally::default();
    let load = step(&slow, &mut tally, &cfg("l.i0", 1000, 0.0, false));
    assert_eq!(
        load.outcome.status,
        StepStatus::Ok,
        "{:?}",
        load.outcome.error
    );
    let r = step(&slow, &mut tally, &cfg("qr1000", 0, 2.0, false)).outcome;
    let ib = r.summary.ib.as_ref().unwrap();
    assert_eq!(ib.target_ips, Some(1000.0));
    assert!(ib.ips < 600.0, "{}", ib.ips);
    assert_eq!(ib.rate_ok, Some(false));
    assert_eq!(r.status, StepStatus::Failed);
    assert!(
        r.verification_failed,
        "the engine works: later steps may run"
    );
    assert!(r.error.as_deref().unwrap().contains("95%"), "{:?}", r.error);
    assert!(ib.queries > 0, "queries ran beside the inserts");

    // The same step at a rate it can keep passes.
    let fast = Fixture::new(Duration::from_millis(1));
    let mut tally = IbTally::default();
    step(&fast, &mut tally, &cfg("l.i0", 1000, 0.0, false));
    let r = step(&fast, &mut tally, &cfg("qr100", 0, 2.0, false)).outcome;
    let ib = r.summary.ib.as_ref().unwrap();
    assert_eq!(ib.rate_ok, Some(true), "{} ips", ib.ips);
    assert_eq!(r.status, StepStatus::Ok, "{:?}", r.error);
    // An embedded engine runs in plumb's process: the host's noise is known for the
    // step and each of its seconds.
    assert!(r.summary.steal_pct.is_some() && r.summary.outside_cpu_pct.is_some());
    // Each second's too, over a window long enough to count (a closing sliver is not).
    let cpus = f64::from(plumb_probes::cpustat::read().unwrap().cpus);
    for i in &r.intervals {
        let m = i.secs * cpus / plumb_core::NOISE_MIN_CPU_SECS;
        if m >= 1.05 {
            assert!(i.outside_cpu_pct.is_some(), "{i:?}");
        } else if m < 0.95 {
            assert!(i.outside_cpu_pct.is_none(), "{i:?}");
        }
    }
    // Open-loop pacing: 100 rows/s is two commits of 50 a second.
    assert!((150..=250).contains(&ib.inserts), "{}", ib.inserts);
}

#[test]
fn a_stall_shows_in_the_latency_of_every_insert_that_waited_for_it() {
    // 20 commits/s of 50 rows; the engine stops for 1 s from 1 s in. Every commit due
    // in that second waits, and counts its wait: from its intended start.
    let mut f = Fixture::new(Duration::from_millis(1));
    let mut tally = IbTally::default();
    step(&f, &mut tally, &cfg("l.i0", 500, 0.0, false));
    f.born = Instant::now();
    f.stall = Some((Duration::from_millis(1000), Duration::from_millis(1000)));
    let r = step(&f, &mut tally, &cfg("qp1000", 0, 3.0, false)).outcome;
    let ib = r.summary.ib.as_ref().unwrap();
    let b = &ib.insert.buckets;
    assert_eq!(b.len(), IB_BUCKETS_US.len() + 1);
    assert_eq!(b.iter().sum::<u64>(), ib.insert.ops);
    // Above 256 ms: the stalled commit and the ~19 due behind it (measured from their
    // own start, only the first would be).
    let slow: u64 = b[6..].iter().sum();
    assert!(slow >= 10, "{b:?}");
    assert!(
        ib.insert.max_us.unwrap() >= 900_000.0,
        "{:?}",
        ib.insert.max_us
    );
    // Most commits are not late, and the pacer caught up: the rate was kept.
    assert!(
        ib.insert.p50_us.unwrap() < 256_000.0,
        "{:?}",
        ib.insert.p50_us
    );
    assert_eq!(ib.rate_ok, Some(true), "{} ips", ib.ips);
    // The second with the stall shows a late insert.
    assert!(ib
        .seconds
        .iter()
        .any(|s| s.ins_max_us.is_some_and(|m| m >= 500_000.0)));
}

#[test]
fn counts_follow_inserts_and_deletes_and_a_lost_row_fails_the_check() {
    let mut f = Fixture::new(Duration::ZERO);
    let mut tally = IbTally::default();
    for (name, rows) in [("l.i0", 2000), ("l.x", 0), ("l.i1", 500)] {
        let r = step(&f, &mut tally, &cfg(name, rows, 0.0, true)).outcome;
        assert_eq!(r.status, StepStatus::Ok, "{name}: {:?}", r.error);
        let ib = r.summary.ib.unwrap();
        assert_eq!(ib.rows_counted, Some(ib.rows_expected), "{name}");
    }
    // l.i1 deleted as many rows as it inserted: the table kept its size.
    assert_eq!(tally.rows, 2000);
    assert_eq!(tally.next_id, 2501);
    f.lose_rows = true;
    let r = step(&f, &mut tally, &cfg("l.i2", 100, 0.0, true)).outcome;
    assert_eq!(r.status, StepStatus::Failed);
    assert!(r.verification_failed);
    assert!(r.error.unwrap().contains("counts"));
}

#[test]
fn the_key_space_layout_keeps_every_index_in_step_with_the_rows() {
    let engine = plumb_targets::EngineSpec::default_for("memory")
        .unwrap()
        .open(None)
        .unwrap();
    let t = KvTable::new(engine);
    let mut tally = IbTally::default();
    for (name, rows) in [("l.i0", 3000), ("l.x", 0), ("l.i1", 1000), ("l.i2", 200)] {
        let r = step(&t, &mut tally, &cfg(name, rows, 0.0, true)).outcome;
        assert_eq!(r.status, StepStatus::Ok, "{name}: {:?}", r.error);
    }
    assert_eq!(t.count_rows().unwrap(), 3000);
    for ix in SecIndex::ALL {
        assert_eq!(t.count_index(ix).unwrap(), 3000, "{ix:?}");
    }
    let r = step(&t, &mut tally, &cfg("qr100", 0, 1.5, true)).outcome;
    let ib = r.summary.ib.unwrap();
    // A range returns its LIMIT, but near the top of an index there are fewer rows
    // (cashregisterid > 999 matches none, on a server too).
    let per = ib.rows_query.unwrap();
    assert!(per > 9.0 && per <= 10.0, "{per}");
    let r = step(&t, &mut tally, &cfg("qp100", 0, 1.5, true)).outcome;
    let ib = r.summary.ib.unwrap();
    assert!(ib.rows_query.unwrap() > 9.0, "{:?}", ib.rows_query);
    assert_eq!(
        t.count_index(SecIndex::Pdc).unwrap(),
        t.count_rows().unwrap()
    );
    // A second load into the same engine is refused rather than mixed in.
    let again = step(&t, &mut tally, &cfg("l.i0", 10, 0.0, false)).outcome;
    assert_eq!(again.status, StepStatus::Failed);
    assert!(again.error.unwrap().contains("empty engine"));
}

#[test]
fn open_loop_queries_keep_their_rate_and_report_service_time_beside_response_time() {
    let f = Fixture::new(Duration::from_millis(1));
    let mut tally = IbTally::default();
    step(&f, &mut tally, &cfg("l.i0", 1000, 0.0, false));
    let mut c = cfg("qp100", 0, 2.0, false);
    c.query_pace = Some(plumb_workloads::Pace::constant(
        400.0,
        plumb_workloads::Arrivals::Poisson,
    ));
    let r = step(&f, &mut tally, &c).outcome;
    assert_eq!(r.status, StepStatus::Ok, "{:?}", r.error);
    let ib = r.summary.ib.as_ref().unwrap();
    // 400 queries/s offered for 2 s, not as many as the client could send.
    assert!((680..=880).contains(&ib.queries), "{} queries", ib.queries);
    let ol = r.summary.open_loop.as_ref().expect("open-loop figures");
    assert_eq!(
        (ol.target_ops_sec, ol.arrivals.as_str()),
        (400.0, "poisson")
    );
    assert_eq!(ol.service.ops, ib.queries);
    // Response time counts from the intended start: never below the service time.
    assert!(r.summary.p99_us.unwrap() >= ol.service.p99_us.unwrap() * 0.99);
    // Closed loop (the insert benchmark's own way) reports none.
    let r = step(&f, &mut tally, &cfg("qp100", 0, 1.0, false)).outcome;
    assert!(r.summary.open_loop.is_none());
}

#[test]
fn each_second_adds_up_to_the_steps_inserts_deletes_and_queries() {
    let f = Fixture::new(Duration::from_millis(1));
    let mut tally = IbTally::default();
    let load = step(&f, &mut tally, &cfg("l.i1", 3000, 0.0, true)).outcome;
    assert_eq!(load.status, StepStatus::Ok, "{:?}", load.error);
    let ib = load.summary.ib.as_ref().unwrap();
    // A load step's ops are its inserted rows, second by second.
    assert_eq!(load.summary.ops, 3000);
    assert_eq!(ib.inserts, 3000);
    assert_eq!(ib.seconds.iter().map(|s| s.ins).sum::<u64>(), 3000);
    assert_eq!(load.intervals.iter().map(|i| i.ops).sum::<u64>(), 3000);
    assert_eq!(ib.seconds.iter().map(|s| s.queries).sum::<u64>(), 0);
    assert!(ib.seconds.iter().all(|s| s.q_p99_us.is_none()));

    let r = step(&f, &mut tally, &cfg("qp200", 0, 2.2, true)).outcome;
    assert_eq!(r.status, StepStatus::Ok, "{:?}", r.error);
    let ib = r.summary.ib.as_ref().unwrap();
    // A query step's ops are its queries; its inserts and deletes run beside them.
    assert_eq!(r.summary.ops, ib.queries);
    assert_eq!(r.intervals.len(), ib.seconds.len());
    for (i, s) in r.intervals.iter().zip(&ib.seconds) {
        assert_eq!((i.t, i.secs, i.ops), (s.t, s.secs, s.queries));
    }
    let sum = |f: fn(&plumb_core::IbSecond) -> u64| ib.seconds.iter().map(f).sum::<u64>();
    assert_eq!(sum(|s| s.ins), ib.inserts);
    assert_eq!(sum(|s| s.del), ib.deletes);
    assert!(ib.deletes > 0 && ib.deletes <= ib.inserts, "{ib:?}");
    // 200 rows/s in commits of 50 for 2.2 s: the commits due before the window's end.
    assert!((400..=450).contains(&ib.inserts), "{}", ib.inserts);
    assert_eq!(ib.insert.ops * 50, ib.inserts);
    assert!(ib.seconds.iter().all(|s| s.q_p99_us.is_some()));
    assert_eq!(r.summary.p99_us, Some(ib.query.p99_us.unwrap()));
    assert_eq!(ib.rows_counted, Some(ib.rows_expected));
}
