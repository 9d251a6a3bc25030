//! TPROC-C against real servers that plumb starts itself (PostgreSQL, MariaDB with
//! InnoDB): the value-returning prepared query both wire clients gained for it, the
//! schema, the spec's population of one warehouse by two loading threads, a few hundred
//! transactions of the mix on two connections, and the consistency conditions, which
//! must hold after the load and after the run, and must catch one corrupted row.
//! Needs the servers (scripts/setup.sh installs them); without them it fails.

mod common;
use common::start;

use plumb_servers::client::{Param, Protocol, Values};
use plumb_servers::Endpoint;
use plumb_sql::tpcc::{
    self, check, CheckResult, TpccConfig, TpccLoader, TpccStats, TpccThread, TpccThreadPlan,
    SYLLABLES, TPCC_CLASSES,
};
use std::time::{Duration, Instant};

/// Transactions per client thread.
const TXNS: usize = 300;

/// One number from a one-value query.
fn number(ep: &Endpoint, sql: &str) -> i64 {
    let rows = ep.connect().unwrap().rows(sql).unwrap();
    let v = rows[0][0]
        .1
        .clone()
        .unwrap_or_else(|| panic!("{sql}: NULL"));
    v.parse()
        .unwrap_or_else(|_| panic!("{sql}: {v:?} is not a number"))
}

/// fetch(): values of every type TPC-C reads come back as the text the server shows,
/// NULL as None, several rows in order, and an empty result empties the buffer.
fn fetch_returns_values(ep: &Endpoint) {
    let mut c = ep.connect().unwrap();
    let ts = if ep.protocol == Protocol::Postgres {
        "TIMESTAMP"
    } else {
        "DATETIME"
    };
    c.batch("DROP TABLE IF EXISTS fetch_probe").unwrap();
    c.batch(&format!(
        "CREATE TABLE fetch_probe (i INT NOT NULL, b BIGINT NOT NULL, d DECIMAL(12,2) NOT NULL, \
         r DECIMAL(4,4) NOT NULL, s VARCHAR(20) NOT NULL, t {ts} NULL, n INT NULL)"
    ))
    .unwrap();
    let ins = c
        .prepare(
            "INSERT INTO fetch_probe (i, b, d, r, s, t, n) \
             VALUES (?, 9000000000, ?, 0.0525, ?, CURRENT_TIMESTAMP, NULL)",
        )
        .unwrap();
    for (i, cents, s) in [
        (3, -1005i64, "three"),
        (1, 30_000_000, "one"),
        (2, 5, "two"),
    ] {
        let n = c
            .execute(ins, &[Param::Int(i), Param::Cents(cents), Param::Str(s)])
            .unwrap();
        assert_eq!(n, 1);
    }
    let sel = c
        .prepare("SELECT i, b, d, r, s, t, n FROM fetch_probe WHERE i >= ? ORDER BY i")
        .unwrap();
    let mut v = Values::new();
    assert_eq!(c.fetch(sel, &[Param::Int(1)], &mut v).unwrap(), 3);
    assert_eq!((v.rows(), v.cols()), (3, 7));
    for (row, (i, cents, s)) in [(1, 30_000_000, "one"), (2, 5, "two"), (3, -1005, "three")]
        .into_iter()
        .enumerate()
    {
        assert_eq!(v.int(row, 0).unwrap(), i);
        assert_eq!(v.int(row, 1).unwrap(), 9_000_000_000);
        assert_eq!(v.fixed(row, 2, 2).unwrap(), cents);
        assert_eq!(v.fixed(row, 3, 4).unwrap(), 525);
        assert_eq!(v.get(row, 4), Some(s));
        let t = v.get(row, 5).expect("a timestamp");
        assert!(
            t.len() >= 19 && &t[4..5] == "-" && &t[10..11] == " " && &t[13..14] == ":",
            "{t}"
        );
        assert_eq!(v.get(row, 6), None);
        assert!(v.int(row, 6).is_err());
    }
    // The amounts went in exactly: the server's own sum to the cent.
    let sum = c
        .prepare("SELECT SUM(d), COUNT(*) FROM fetch_probe")
        .unwrap();
    assert_eq!(c.fetch(sum, &[], &mut v).unwrap(), 1);
    assert_eq!(v.fixed(0, 0, 2).unwrap(), 30_000_000 + 5 - 1005);
    assert_eq!(v.int(0, 1).unwrap(), 3);
    assert_eq!(c.fetch(sel, &[Param::Int(99)], &mut v).unwrap(), 0);
    assert!(v.is_empty() && v.rows() == 0);
    // query() still counts the same rows without keeping them.
    assert_eq!(c.query(sel, &[Param::Int(2)]).unwrap(), 2);
    // An error while executing (a scalar subquery of three rows) leaves the
    // connection usable.
    let bad = c
        .prepare("SELECT (SELECT i FROM fetch_probe WHERE i >= ?)")
        .unwrap();
    assert!(c.fetch(bad, &[Param::Int(1)], &mut v).is_err());
    assert_eq!(c.fetch(sel, &[Param::Int(3)], &mut v).unwrap(), 1);
    assert_eq!(v.get(0, 4), Some("three"));
    c.batch("DROP TABLE fetch_probe").unwrap();
}

fn plan(cfg: &TpccConfig, thread: usize, threads: usize) -> TpccThreadPlan {
    TpccThreadPlan {
        cfg: cfg.clone(),
        thread,
        threads,
        seed: 42,
    }
}

/// Loads with `threads` loaders side by side; returns the rows they said they inserted.
fn load(ep: &Endpoint, cfg: &TpccConfig, threads: usize) -> u64 {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = plan(cfg, t, threads);
                s.spawn(move || {
                    let mut l = TpccLoader::new(ep, &p).unwrap();
                    let mut rows = 0;
                    loop {
                        let o = l.event().unwrap();
                        if o.done {
                            assert_eq!(o.ops, 0);
                            return rows;
                        }
                        assert_eq!(o.ops, o.rows);
                        rows += o.ops;
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// Every table holds what clause 4.3.3.1 populates for one warehouse.
fn population_follows_the_spec(ep: &Endpoint, loaded: u64) {
    let count = |t: &str| number(ep, &format!("SELECT COUNT(*) FROM {t}"));
    for (t, n) in [
        ("item", 100_000),
        ("warehouse", 1),
        ("stock", 100_000),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("orders", 30_000),
        ("new_order", 9_000),
    ] {
        assert_eq!(count(t), n, "{t}");
    }
    let lines = count("order_line");
    assert_eq!(lines, number(ep, "SELECT SUM(o_ol_cnt) FROM orders"));
    // 5..=15 lines per order, 10 on average.
    assert!((290_000..=310_000).contains(&lines), "{lines}");
    let fixed: i64 = 100_000 + 1 + 100_000 + 10 + 30_000 * 3 + 9_000;
    assert_eq!(loaded as i64, fixed + lines, "rows the loaders reported");
    assert_eq!(number(ep, "SELECT MIN(o_ol_cnt) FROM orders"), 5);
    assert_eq!(number(ep, "SELECT MAX(o_ol_cnt) FROM orders"), 15);
    // Orders 2101..3000 are undelivered, the rest have a carrier in 1..=10.
    assert_eq!(
        number(ep, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"),
        9_000
    );
    assert_eq!(
        number(ep, "SELECT MIN(no_o_id) FROM new_order"),
        tpcc::FIRST_NEW_ORDER as i64
    );
    assert_eq!(number(ep, "SELECT MAX(o_carrier_id) FROM orders"), 10);
    // Each district's orders go to a permutation of its customers: one order each.
    assert_eq!(
        number(
            ep,
            "SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, o_c_id FROM orders \
             GROUP BY o_w_id, o_d_id, o_c_id) x"
        ),
        30_000
    );
    // The first 1000 customers of a district carry the names of 0..999 in order.
    let rows = ep
        .connect()
        .unwrap()
        .rows("SELECT c_id, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 4 AND c_id <= 1000")
        .unwrap();
    assert_eq!(rows.len(), 1000);
    for r in &rows {
        let id: usize = r[0].1.as_deref().unwrap().parse().unwrap();
        let n = id - 1;
        let want = format!(
            "{}{}{}",
            SYLLABLES[n / 100],
            SYLLABLES[n / 10 % 10],
            SYLLABLES[n % 10]
        );
        assert_eq!(r[1].1.as_deref(), Some(want.as_str()), "customer {id}");
    }
    // About 10% bad credit and 10% "ORIGINAL" items and stock.
    for (sql, n) in [
        (
            "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'",
            30_000,
        ),
        (
            "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'",
            100_000,
        ),
        (
            "SELECT COUNT(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'",
            100_000,
        ),
    ] {
        let got = number(ep, sql);
        assert!(
            (n / 10 - n / 50..=n / 10 + n / 50).contains(&got),
            "{sql}: {got} of {n}"
        );
    }
    assert_eq!(number(ep, "SELECT MIN(s_quantity) FROM stock"), 10);
    assert_eq!(number(ep, "SELECT MAX(s_quantity) FROM stock"), 100);
}

fn all_pass(results: &[CheckResult], when: &str) {
    assert!(results.len() >= 12, "{when}: {} conditions", results.len());
    for r in results {
        assert!(r.passed && r.failure.is_none(), "{when}: {r}");
    }
}

/// Two client threads run `TXNS` transactions each; returns their stats, the classes
/// their outcomes named, and the time taken.
fn run(ep: &Endpoint, cfg: &TpccConfig) -> (Vec<TpccStats>, [u64; 5], Duration) {
    run_on(ep, cfg, &[1, 1])
}

/// As [`run`], one thread per entry of `homes`, each checked to be bound to it.
fn run_on(ep: &Endpoint, cfg: &TpccConfig, homes: &[i32]) -> (Vec<TpccStats>, [u64; 5], Duration) {
    let t0 = Instant::now();
    let per: Vec<(TpccStats, [u64; 5])> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..homes.len())
            .map(|t| {
                let p = plan(cfg, t, homes.len());
                let home = homes[t];
                s.spawn(move || {
                    let mut th = TpccThread::new(ep, &p).unwrap();
                    assert_eq!(th.warehouse(), home);
                    let mut classes = [0u64; 5];
                    for _ in 0..TXNS {
                        assert_eq!(th.pause(), Duration::ZERO);
                        let o = th.event().unwrap();
                        assert!(!o.done && o.ops == 1 && o.queries >= 4, "{o:?}");
                        classes[o.class as usize] += 1;
                    }
                    (*th.stats(), classes)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut classes = [0u64; 5];
    for (_, c) in &per {
        for k in 0..5 {
            classes[k] += c[k];
        }
    }
    (
        per.into_iter().map(|(s, _)| s).collect(),
        classes,
        t0.elapsed(),
    )
}

/// A connection holding the warehouse's and its districts' rows makes New-Order and
/// Payment wait past a short lock timeout: the transaction rolls back, runs again, and
/// commits once the holder lets go, counted as retried.
fn conflicts_are_rolled_back_and_retried(ep: &Endpoint, cfg: &TpccConfig) {
    let mut admin = ep.connect().unwrap();
    let postgres = ep.protocol == Protocol::Postgres;
    // New connections get the short timeout.
    if postgres {
        admin
            .batch(&format!(
                "ALTER DATABASE {} SET lock_timeout = '100ms'",
                ep.database
            ))
            .unwrap();
    } else {
        admin
            .batch("SET GLOBAL innodb_lock_wait_timeout = 1")
            .unwrap();
    }
    let mut th = TpccThread::new(ep, &plan(cfg, 0, 1)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let holder = {
        let ep = ep.clone();
        std::thread::spawn(move || {
            let mut c = ep.connect().unwrap();
            c.batch("BEGIN").unwrap();
            c.rows("SELECT w_id FROM warehouse WHERE w_id = 1 FOR UPDATE")
                .unwrap();
            c.rows("SELECT d_id FROM district WHERE d_w_id = 1 FOR UPDATE")
                .unwrap();
            tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(2500));
            c.batch("ROLLBACK").unwrap();
        })
    };
    rx.recv().unwrap();
    let mut retried = None;
    for _ in 0..50 {
        let o = th.event().unwrap();
        if o.retried {
            retried = Some(o);
            break;
        }
    }
    holder.join().unwrap();
    let o = retried.expect("no transaction waited on the held rows");
    assert!(o.class <= 1, "{o:?}");
    let s = th.stats();
    assert!(s.retries[o.class as usize] >= 1, "{s:?}");
    assert!(s.committed[o.class as usize] + s.rolled_back >= 1, "{s:?}");
    eprintln!(
        "{:?}: a held lock cost retries {:?}",
        ep.protocol, s.retries
    );
    drop(th);
    if postgres {
        admin
            .batch(&format!(
                "ALTER DATABASE {} RESET lock_timeout",
                ep.database
            ))
            .unwrap();
    } else {
        admin
            .batch("SET GLOBAL innodb_lock_wait_timeout = 50")
            .unwrap();
    }
}

fn scenario(server: &str, engine: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let mut m = start(server, engine, dir.path());
    let ep = m.endpoint.clone();
    let postgres = ep.protocol == Protocol::Postgres;
    fetch_returns_values(&ep);

    let cfg = TpccConfig {
        warehouses: 1,
        engine_clause: if postgres {
            String::new()
        } else {
            " ENGINE = InnoDB".into()
        },
        postgres,
        spec_timing: false,
    };
    let mut admin = ep.connect().unwrap();
    tpcc::create_schema(admin.as_mut(), &cfg).unwrap();
    let t0 = Instant::now();
    let loaded = load(&ep, &cfg, 2);
    let rows_done = t0.elapsed();
    tpcc::after_load(admin.as_mut(), &cfg).unwrap();
    let load_time = t0.elapsed();
    eprintln!(
        "{server}: loaded {loaded} rows of 1 warehouse in {:.1} s ({:.1} s rows, then \
         indexes and statistics)",
        load_time.as_secs_f64(),
        rows_done.as_secs_f64()
    );
    population_follows_the_spec(&ep, loaded);
    let t = Instant::now();
    all_pass(&check(admin.as_mut(), &cfg).unwrap(), "after the load");
    eprintln!("{server}: checks took {:.1} s", t.elapsed().as_secs_f64());

    let next_before = number(&ep, "SELECT SUM(d_next_o_id) FROM district");
    let (stats, classes, took) = run(&ep, &cfg);
    let total = (2 * TXNS) as u64;
    eprintln!(
        "{server}: {total} transactions in {:.1} s ({:.0}/s), by class {classes:?}, {:?}",
        took.as_secs_f64(),
        total as f64 / took.as_secs_f64(),
        stats
    );
    assert_eq!(classes.iter().sum::<u64>(), total);
    let mut committed = [0u64; 5];
    let (mut rolled_back, mut retries) = (0, 0);
    for s in &stats {
        for (sum, n) in committed.iter_mut().zip(s.committed) {
            *sum += n;
        }
        retries += s.retries.iter().sum::<u64>();
        rolled_back += s.rolled_back;
    }
    // The deck deals exactly 45/43/4/4/4 of every 100 per thread.
    assert_eq!(classes, [270, 258, 24, 24, 24], "{TPCC_CLASSES:?}");
    assert_eq!(committed[0] + rolled_back, classes[0]);
    assert_eq!(committed[1..], classes[1..]);
    assert!(
        rolled_back < 20,
        "{rolled_back} of {} new-orders",
        classes[0]
    );
    eprintln!("{server}: {retries} retries, {rolled_back} new-orders rolled back on purpose");
    // Every committed New-Order took one order id, and no rolled-back one kept its:
    // the NOPM-like count is what the server's districts say.
    let nopm_like = committed[0] as i64;
    assert!(nopm_like > 0);
    assert_eq!(
        number(&ep, "SELECT SUM(d_next_o_id) FROM district") - next_before,
        nopm_like
    );
    assert_eq!(
        number(&ep, "SELECT COUNT(*) FROM orders"),
        30_000 + nopm_like
    );
    // 24 Deliveries of 10 districts each, all with undelivered orders.
    assert_eq!(
        number(&ep, "SELECT COUNT(*) FROM new_order"),
        9_000 + nopm_like - 240
    );
    assert_eq!(stats.iter().map(|s| s.skipped_deliveries).sum::<u64>(), 0);
    all_pass(&check(admin.as_mut(), &cfg).unwrap(), "after the run");

    conflicts_are_rolled_back_and_retried(&ep, &cfg);
    all_pass(&check(admin.as_mut(), &cfg).unwrap(), "after the retries");

    // Spec timing: a keying time before the first transaction, then think + keying.
    let mut timed_cfg = cfg.clone();
    timed_cfg.spec_timing = true;
    let mut th = TpccThread::new(&ep, &plan(&timed_cfg, 0, 1)).unwrap();
    let first = th.pause();
    assert!(
        [2.0, 3.0, 18.0].contains(&first.as_secs_f64()),
        "first keying time {first:?}"
    );
    assert_eq!(th.pause(), Duration::ZERO, "each pause is owed once");
    th.event().unwrap();
    let after = th.pause();
    assert!(
        after >= Duration::from_secs(2) && after <= Duration::from_secs(18 + 120),
        "{after:?}"
    );
    drop(th);

    // One corrupted district: condition 2 fails there, every other still holds.
    admin
        .batch("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 3")
        .unwrap();
    let results = check(admin.as_mut(), &cfg).unwrap();
    let failed: Vec<&CheckResult> = results.iter().filter(|r| !r.passed).collect();
    assert_eq!(failed.len(), 1, "{results:#?}");
    let f = failed[0];
    assert_eq!(f.clause, "3.3.2.2", "{f}");
    let x = f.failure.as_ref().unwrap();
    assert_eq!((x.warehouse, x.district), (1, Some(3)), "{f}");
    let max_o = number(
        &ep,
        "SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 3",
    );
    assert_eq!(x.left, format!("D_NEXT_O_ID - 1 = {}", max_o + 1), "{f}");
    assert!(x.right.starts_with(&format!("max(O_ID) = {max_o}")), "{f}");
    eprintln!("{server}: corrupted: {f}");

    // And one W_YTD: conditions 1 and 8, which both compare it, fail.
    admin
        .batch("UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_w_id = 1 AND d_id = 3")
        .unwrap();
    admin
        .batch("UPDATE warehouse SET w_ytd = w_ytd + 0.01 WHERE w_id = 1")
        .unwrap();
    let failed: Vec<&str> = check(admin.as_mut(), &cfg)
        .unwrap()
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.clause)
        .collect();
    assert_eq!(failed, ["3.3.2.1", "3.3.2.8"]);
    drop(admin);
    m.stop().unwrap();
}

#[test]
fn tpcc_on_postgres() {
    scenario("postgres", None);
}

#[test]
fn tpcc_on_innodb() {
    scenario("mariadb", Some("innodb"));
}

/// Two warehouses on InnoDB: the 15% remote Payments and 1% remote order lines reach the
/// other warehouse, and every condition still holds.
#[test]
fn tpcc_remote_warehouses_on_innodb() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = start("mariadb", Some("innodb"), dir.path());
    let ep = m.endpoint.clone();
    let cfg = TpccConfig {
        warehouses: 2,
        engine_clause: " ENGINE = InnoDB".into(),
        postgres: false,
        spec_timing: false,
    };
    let mut admin = ep.connect().unwrap();
    tpcc::create_schema(admin.as_mut(), &cfg).unwrap();
    let t0 = Instant::now();
    load(&ep, &cfg, 2);
    tpcc::after_load(admin.as_mut(), &cfg).unwrap();
    eprintln!(
        "innodb: 2 warehouses loaded in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    for (t, n) in [
        ("warehouse", 2),
        ("stock", 200_000),
        ("customer", 60_000),
        ("new_order", 18_000),
    ] {
        assert_eq!(number(&ep, &format!("SELECT COUNT(*) FROM {t}")), n, "{t}");
    }
    all_pass(
        &check(admin.as_mut(), &cfg).unwrap(),
        "after loading 2 warehouses",
    );
    let homes: Vec<i32> = (0..2)
        .map(|t| TpccThread::new(&ep, &plan(&cfg, t, 2)).unwrap().warehouse())
        .collect();
    assert_eq!(homes, [1, 2]);
    let (stats, classes, took) = run_on(&ep, &cfg, &[1, 2]);
    eprintln!(
        "innodb, 2 warehouses: {} transactions in {:.1} s, {classes:?}, {stats:?}",
        2 * TXNS,
        took.as_secs_f64()
    );
    // About 15% of 258 Payments pay a customer of the other warehouse.
    let remote_payments = number(&ep, "SELECT COUNT(*) FROM history WHERE h_c_w_id <> h_w_id");
    assert!((15..=70).contains(&remote_payments), "{remote_payments}");
    // About 1% of ~2700 order lines come from the other warehouse.
    let remote_lines = number(
        &ep,
        "SELECT COUNT(*) FROM order_line WHERE ol_supply_w_id <> ol_w_id",
    );
    assert!((5..=70).contains(&remote_lines), "{remote_lines}");
    assert_eq!(
        number(&ep, "SELECT SUM(s_remote_cnt) FROM stock"),
        remote_lines
    );
    assert_eq!(
        number(
            &ep,
            "SELECT COUNT(*) FROM orders WHERE o_all_local = 0 AND o_id > 3000"
        ),
        number(
            &ep,
            "SELECT COUNT(DISTINCT ol_w_id, ol_d_id, ol_o_id) FROM order_line \
             WHERE ol_supply_w_id <> ol_w_id"
        )
    );
    all_pass(
        &check(admin.as_mut(), &cfg).unwrap(),
        "after remote transactions",
    );
    drop(admin);
    m.stop().unwrap();
}
