//! `plumb ib`, the insert benchmark, end to end: the whole sequence on PostgreSQL,
//! MariaDB with InnoDB and with MyRocks (servers plumb starts from the packages the test
//! command installs) and on RocksDB, at a tiny size. After every step the engine's own
//! count of rows (SELECT COUNT(*), a key walk) must equal plumb's, and plumb's must be
//! the arithmetic of what the steps were asked to do. The 95% rule and latency from the
//! intended start are tested against a fixture engine in crates/ibench.

mod common;

use common::{html_report, json_of, plumb, stderr, step};
use serde_json::Value;

const ROWS: u64 = 4000;
const INSERTS: u64 = 1000;

/// The published sequence's eleven steps at insert rates any machine keeps while it is
/// busy (the published 500 and 1000 rows/s failed the 95% rule, rightly, on a 2-vCPU VM
/// beside a busy loop: 750/s against PostgreSQL's synced commits). What is tested here
/// is the counting, not the machine's speed; the 95% rule itself is tested against a
/// fixture engine in crates/ibench.
const STEPS: &str = "l.i0,l.x,l.i1,l.i2,reduce-debt,qr100,qp100,qr150,qp150,qr200,qp200";

/// Runs the published sequence with short query steps and returns the run's JSON.
fn sequence(target: &[&str], delete: bool, store: &std::path::Path, dir: &str) -> Value {
    let (rows, inserts) = (ROWS.to_string(), INSERTS.to_string());
    let mut args = vec!["ib"];
    args.extend_from_slice(target);
    args.extend([
        "--rows",
        &rows,
        "--inserts",
        &inserts,
        "--duration",
        "1",
        "--cache-mb",
        "128",
        "--seed",
        "3",
        "--steps",
        STEPS,
        "--json",
        "--dir",
        dir,
    ]);
    if delete {
        args.push("--delete-per-insert");
    }
    let o = plumb(store, &args);
    let run = json_of(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    run
}

/// Every step's engine count equals plumb's, and plumb's follows from the steps.
fn check_counts(run: &Value, delete: bool) {
    let mut expect = 0u64;
    let mut after_l_i2 = 0u64;
    for s in run["steps"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        assert_eq!(s["status"], "ok", "{name}: {}", s["error"]);
        let ib = &s["summary"]["ib"];
        let inserted = ib["inserts"].as_u64().unwrap();
        let deleted = ib["deletes"].as_u64().unwrap();
        match name {
            "l.i0" => assert_eq!(inserted, ROWS),
            "l.i1" => assert_eq!(inserted, INSERTS),
            "l.i2" => assert_eq!(inserted, INSERTS / 5),
            _ => {}
        }
        if delete && name != "l.i0" {
            assert_eq!(deleted, inserted, "{name}: one delete per insert");
        } else {
            assert_eq!(deleted, 0, "{name}");
        }
        expect = expect + inserted - deleted;
        assert_eq!(ib["rows_expected"].as_u64(), Some(expect), "{name}");
        assert_eq!(ib["rows_counted"].as_u64(), Some(expect), "{name}");
        if name == "l.i2" {
            after_l_i2 = expect;
        }
        if name.starts_with('q') {
            assert_eq!(ib["rate_ok"], true, "{name}: {}", ib["ips"]);
            assert!(ib["queries"].as_u64().unwrap() > 0, "{name}");
            let buckets: u64 = ib["query"]["buckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap())
                .sum();
            assert_eq!(Some(buckets), ib["query"]["ops"].as_u64(), "{name}");
            assert!(ib["rows_query"].as_f64().unwrap() > 0.0, "{name}");
        }
    }
    let want = if delete {
        ROWS
    } else {
        ROWS + INSERTS + INSERTS / 5
    };
    assert_eq!(after_l_i2, want);
}

#[test]
fn the_sequence_on_postgres_counts_what_the_server_counts() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let run = sequence(
        &["--server", "postgres"],
        true,
        &store,
        d.path().to_str().unwrap(),
    );
    assert_eq!(run["steps"].as_array().unwrap().len(), 11);
    check_counts(&run, true);
    // plumb's config flushes the WAL at every commit; compare's durability check
    // reads it from the stored settings.
    assert_eq!(run["run"]["options"]["durability"], "synced");
    let debt = step(&run, "reduce-debt");
    assert!(debt["config"]["did"].as_str().unwrap().contains("VACUUM"));
    // The server's CPU per query and its resident memory are measured.
    let q = &step(&run, "qp100")["summary"]["ib"];
    assert!(q["cpu_us_op"].as_f64().unwrap() > 0.0);
    assert!(q["rss_gb"].as_f64().unwrap() > 0.0);
    // plumb's own CPU per op in its user and system parts, and the device under the
    // server's data as iostat shows it, for each step and each of its seconds.
    for name in ["l.i0", "l.i1", "qp100"] {
        let s = step(&run, name);
        let sum = &s["summary"];
        common::assert_cpu_split(name, sum);
        if run["run"]["device"].is_string() {
            assert!(sum["device"]["w_s"].as_f64().is_some(), "{name}: {sum}");
            let ivs = s["intervals"].as_array().unwrap();
            assert!(
                ivs.iter().all(|i| i["device"]["util_pct"].is_number()),
                "{name}: {ivs:?}"
            );
        }
    }
    // The report: the summary table, buckets, and a per-second chart of each step.
    let text = plumb(&store, &["show", "1"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("rows/q") && out.contains("qp200") && out.contains("≤256us"));
    let html = html_report(&store, &["1"]);
    assert!(html.contains(r#"data-table="ib-summary""#));
    assert!(html.contains(r#"data-chart="ib-seconds" data-step="qr150""#));
}

#[test]
fn the_sequence_on_innodb_and_myrocks_counts_what_the_server_counts() {
    for engine in ["innodb", "rocksdb"] {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("s.sqlite");
        let run = sequence(
            &["--server", "mariadb", "--engine", engine],
            engine == "rocksdb",
            &store,
            d.path().to_str().unwrap(),
        );
        check_counts(&run, engine == "rocksdb");
        let did = step(&run, "reduce-debt")["config"]["did"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            did.contains(if engine == "innodb" {
                "dirty pages"
            } else {
                "compacted"
            }),
            "{did}"
        );
    }
}

#[test]
fn the_sequence_on_embedded_rocksdb_writes_the_indexes_with_each_row() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let run = sequence(
        &["--kv", "rocksdb"],
        false,
        &store,
        d.path().to_str().unwrap(),
    );
    check_counts(&run, false);
    assert_eq!(run["run"]["engine"], "rocksdb");
    assert_eq!(run["run"]["options"]["durability"], "os-buffered");
    assert_eq!(
        step(&run, "reduce-debt")["config"]["did"],
        "flush, wait for compaction"
    );
    // The engine's directory is removed after the run (no --keep).
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("plumb-ib-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn bad_input_gets_one_clear_error_and_stores_nothing() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    for (args, want) in [
        (vec!["--kv", "memory", "--steps", "l.i0,qr0"], "qr0"),
        (
            vec!["--kv", "memory", "--steps", "l.x,qr100"],
            "start with l.i0",
        ),
        (
            vec!["--kv", "memory", "--steps", "l.i0,l.i0"],
            "named twice",
        ),
        (vec!["--kv", "nosuch"], "--kv \"nosuch\""),
        (vec!["--kv", "null"], "stores data"),
        (
            vec!["--kv", "memory", "--server", "postgres"],
            "cannot be used with",
        ),
        (
            vec!["--kv", "memory", "--rows-per-query", "100"],
            "at most 64",
        ),
        (vec!["--kv", "memory", "--duration", "0"], "--duration"),
    ] {
        let mut a = vec!["ib"];
        a.extend(args.iter().copied());
        let o = plumb(&store, &a);
        assert!(!o.status.success(), "{args:?} succeeded");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    // Every check runs before the store is opened: not even the file is made.
    assert!(!store.exists(), "bad input created the store");
}

/// Seed 002's counting on a step's `summary.perf`, whose processes `whose` says.
fn check_counted_in_turn(name: &str, s: &Value, whose: &str) {
    let perf = &s["summary"]["perf"];
    assert_eq!(perf["whose"], whose, "{name}: {perf}");
    common::assert_counted_in_turn(
        name,
        s["summary"]["secs"].as_f64().unwrap(),
        &perf["per_op"],
        &perf["counted_secs"],
        &perf["unavailable"],
    );
}

#[test]
fn perf_groups_count_the_servers_events_per_insert_and_per_query() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "ib",
            "--server",
            "postgres",
            "--rows",
            "20000",
            "--duration",
            "4",
            "--cache-mb",
            "128",
            "--steps",
            "l.i0,qr100",
            "--perf-groups",
            "1",
            "--json",
            "--dir",
            d.path().to_str().unwrap(),
        ],
    );
    let run = json_of(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // The query step's events per query, counted in turn over its seconds.
    check_counted_in_turn("qr100", step(&run, "qr100"), "server");
    // Compare reads them as seed 002's table (here against itself).
    let c = plumb(&store, &["compare", "1", "1", "--json"]);
    let cmp = json_of(&c);
    let tables = cmp["perf"].as_array().unwrap();
    assert!(
        tables
            .iter()
            .any(|t| t["step"] == "qr100" && t["whose"] == "server" && t["in_turn"] == true),
        "{tables:?}"
    );
}

#[test]
fn perf_groups_count_plumbs_own_process_on_a_kv_step() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--num",
            "20000",
            "--benchmarks",
            "fillseq,readrandom",
            "--duration",
            "4",
            "--perf-groups",
            "1",
            "--json",
        ],
    );
    let run = json_of(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    check_counted_in_turn("readrandom", step(&run, "readrandom"), "plumb");
    // Without the flag a kv step counts no perf stat events (its four counters only).
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--num",
            "20000",
            "--benchmarks",
            "fillseq,readrandom",
            "--duration",
            "1",
            "--json",
        ],
    );
    let run = json_of(&o);
    assert!(step(&run, "readrandom")["summary"]["perf"].is_null());
}
