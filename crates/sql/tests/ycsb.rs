//! YCSB's core workload against real servers that plumb starts: the load writes exactly
//! YCSB's keys, workload A sends its read/update mix and E its scans, whose row counts
//! are checked against the keys known to exist.

mod common;
use common::start;

use plumb_servers::client::SqlClient;
use plumb_servers::Endpoint;
use plumb_sql::bench::Outcome;
use plumb_sql::ycsb::{
    create_table, finish_load, YcsbLastOp, YcsbPhase, YcsbSqlPlan, YcsbSqlThread,
};
use plumb_workloads::ycsb::{build_key_name, CoreParams, YcsbOp, YcsbShared};
use std::collections::BTreeSet;
use std::sync::Arc;

struct Server<'a> {
    ep: &'a Endpoint,
    postgres: bool,
    engine_clause: &'a str,
}

/// Runs one phase with `threads` threads to its end; every outcome with the thread's
/// last operation after it.
fn phase(
    s: &Server<'_>,
    shared: &Arc<YcsbShared>,
    phase: YcsbPhase,
    threads: usize,
    seed: u64,
) -> Vec<(Outcome, YcsbLastOp)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let plan = YcsbSqlPlan {
                    shared: shared.clone(),
                    phase,
                    thread: t,
                    threads,
                    seed: seed * 100 + t as u64,
                    engine_clause: s.engine_clause.to_string(),
                    postgres: s.postgres,
                    verify: phase == YcsbPhase::Run,
                };
                let ep = s.ep;
                scope.spawn(move || {
                    let mut th = YcsbSqlThread::new(ep, &plan).unwrap();
                    let mut seen = Vec::new();
                    loop {
                        let o = th.event().unwrap();
                        if o.done {
                            break;
                        }
                        seen.push((o, th.last_op().expect("an operation ran")));
                        assert!(seen.len() < 100_000, "the phase never ends");
                    }
                    seen
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

fn column(c: &mut dyn SqlClient, sql: &str) -> Vec<String> {
    c.rows(sql)
        .unwrap()
        .into_iter()
        .map(|r| r[0].1.clone().unwrap_or_default())
        .collect()
}

fn count(c: &mut dyn SqlClient, sql: &str) -> u64 {
    column(c, sql)[0].parse().unwrap()
}

fn ycsb_on(s: Server<'_>) {
    let mut admin = s.ep.connect().unwrap();
    let c = admin.as_mut();

    // Load: 1000 records from two threads.
    let mut p = CoreParams::preset('a').unwrap();
    p.set("recordcount", "1000").unwrap();
    create_table(c, s.engine_clause, &p).unwrap();
    let shared = Arc::new(YcsbShared::new(&p).unwrap());
    let load = phase(&s, &shared, YcsbPhase::Load, 2, 1);
    assert_eq!(load.iter().map(|(o, _)| o.ops).sum::<u64>(), 1000);
    assert!(load
        .iter()
        .all(|(o, l)| o.class == 2 && l.op == YcsbOp::Insert));
    finish_load(c, &p, s.postgres).unwrap();
    assert_eq!(count(c, "SELECT COUNT(*) FROM usertable"), 1000);
    let loaded: BTreeSet<String> = column(c, "SELECT YCSB_KEY FROM usertable")
        .into_iter()
        .collect();
    let want: BTreeSet<String> = (0..1000).map(|k| build_key_name(k, 1, false)).collect();
    assert_eq!(loaded, want);
    let full = (0..10)
        .map(|i| format!("LENGTH(FIELD{i}) = 100"))
        .collect::<Vec<_>>()
        .join(" AND ");
    assert_eq!(
        count(c, &format!("SELECT COUNT(*) FROM usertable WHERE {full}")),
        1000,
        "every field holds fieldlength bytes"
    );

    // Workload A: half reads, half updates, every key found.
    p.set("operationcount", "400").unwrap();
    let shared = Arc::new(YcsbShared::new(&p).unwrap());
    let a = phase(&s, &shared, YcsbPhase::Run, 2, 2);
    assert_eq!(a.len(), 400, "operationcount split over the threads");
    let reads = a.iter().filter(|(o, _)| o.class == 0).count();
    let updates = a.iter().filter(|(o, _)| o.class == 1).count();
    assert_eq!(reads + updates, 400);
    // Binomial(400, 0.5): 5 standard deviations is 50.
    assert!((150..=250).contains(&reads), "{reads} reads of 400");
    for (o, l) in &a {
        assert_eq!((o.queries, o.rows, o.ops), (1, 1, 1), "{l:?}");
        assert_eq!(YcsbOp::ALL[o.class as usize], l.op);
        assert!((0..1000).contains(&l.keynum));
    }
    assert_eq!(count(c, "SELECT COUNT(*) FROM usertable"), 1000);

    // Workload E: scans of 1..=100 rows from zipfian keys, 5% inserts.
    let mut e = CoreParams::preset('e').unwrap();
    e.set("recordcount", "1000").unwrap();
    e.set("operationcount", "300").unwrap();
    let shared = Arc::new(YcsbShared::new(&e).unwrap());
    let ops = phase(&s, &shared, YcsbPhase::Run, 2, 3);
    assert_eq!(ops.len(), 300);
    let inserted: BTreeSet<String> = ops
        .iter()
        .filter(|(_, l)| l.op == YcsbOp::Insert)
        .map(|(o, l)| {
            assert_eq!((o.class, o.rows), (2, 1));
            assert!(l.keynum >= 1000);
            build_key_name(l.keynum, 1, false)
        })
        .collect();
    let scans: Vec<&YcsbLastOp> = ops
        .iter()
        .filter(|(o, _)| o.class == 3)
        .map(|(_, l)| l)
        .collect();
    assert_eq!(scans.len() + inserted.len(), 300);
    // Binomial(300, 0.95): 5 standard deviations is about 19.
    assert!(scans.len() >= 266, "{} scans of 300", scans.len());
    assert!(!inserted.is_empty());
    let mut total_len = 0;
    for l in &scans {
        assert!((1..=100).contains(&l.len), "{l:?}");
        total_len += l.len;
        let from = build_key_name(l.keynum, 1, false);
        let at_least = loaded.range(from.clone()..).count() as u64;
        let at_most = at_least + inserted.range(from.clone()..).count() as u64;
        assert!(
            l.rows >= l.len.min(at_least) && l.rows <= l.len.min(at_most),
            "scan of {} from {from} returned {} rows; {at_least} loaded keys follow it",
            l.len,
            l.rows
        );
    }
    // Uniform 1..=100: mean 50.5, sd 28.9; 5 standard deviations of the mean.
    let mean = total_len as f64 / scans.len() as f64;
    let tol = 5.0 * 28.9 / (scans.len() as f64).sqrt();
    assert!((mean - 50.5).abs() < tol, "mean scan length {mean}");
    assert_eq!(
        shared.inserts().last_value(),
        999 + inserted.len() as i64,
        "every insert acknowledged"
    );
    let now: BTreeSet<String> = column(c, "SELECT YCSB_KEY FROM usertable")
        .into_iter()
        .collect();
    assert_eq!(now, loaded.union(&inserted).cloned().collect());
}

#[test]
fn ycsb_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let m = start("postgres", None, dir.path());
    ycsb_on(Server {
        ep: &m.endpoint,
        postgres: true,
        engine_clause: "",
    });
}

#[test]
fn ycsb_on_mariadb_innodb() {
    let dir = tempfile::tempdir().unwrap();
    let m = start("mariadb", Some("innodb"), dir.path());
    ycsb_on(Server {
        ep: &m.endpoint,
        postgres: false,
        engine_clause: " ENGINE = InnoDB",
    });
}
