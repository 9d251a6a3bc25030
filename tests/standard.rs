//! The workloads the rest of the field publishes, end to end through `plumb`: YCSB's
//! core workloads A-F on embedded engines and on PostgreSQL, TPROC-C on PostgreSQL and
//! InnoDB (its consistency conditions checked after the run), pgbench's built-in scripts
//! on PostgreSQL. Each runs on a real engine or a server plumb starts.

mod common;

use common::{json_of, plumb, stderr, step};
use serde_json::Value;

const YCSB: [&str; 6] = ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"];

/// The operations each YCSB workload mixes (its workload file's non-zero proportions).
fn ycsb_ops(step: &str) -> &'static [&'static str] {
    match step {
        "ycsb-a" | "ycsb-b" => &["read", "update"],
        "ycsb-c" => &["read"],
        "ycsb-d" => &["insert", "read"],
        "ycsb-e" => &["insert", "scan"],
        _ => &["read", "read-modify-write"],
    }
}

fn check_ycsb(run: &Value, records: u64) {
    let load = step(run, "ycsb-load");
    assert_eq!(load["status"], "ok", "{load}");
    assert_eq!(load["summary"]["ops"].as_u64(), Some(records));
    for name in YCSB {
        let s = step(run, name);
        assert_eq!(s["status"], "ok", "{name}: {}", s["error"]);
        let by = s["summary"]["by_op"].as_object().unwrap();
        let mut ops: Vec<&str> = by.keys().map(String::as_str).collect();
        ops.sort();
        assert_eq!(ops, ycsb_ops(name), "{name}");
        let sum: u64 = by.values().map(|l| l["ops"].as_u64().unwrap()).sum();
        assert_eq!(sum, s["summary"]["ops"].as_u64().unwrap(), "{name}");
        assert_eq!(s["summary"]["verify"]["missing"], 0, "{name}");
    }
}

fn ycsb_steps() -> String {
    let mut v = vec!["ycsb-load"];
    v.extend(YCSB);
    v.join(",")
}

#[test]
fn ycsb_a_to_f_run_on_rocksdb_lmdb_and_sqlite() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let steps = ycsb_steps();
    for engine in ["rocksdb", "lmdb", "sqlite"] {
        let o = plumb(
            &store,
            &[
                "kv",
                "--engine",
                engine,
                "--num",
                "3000",
                "--threads",
                "2",
                "--benchmarks",
                &steps,
                "--duration",
                "0.5",
                "--json",
            ],
        );
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        check_ycsb(&json_of(&o), 3000);
    }
}

#[test]
fn ycsb_a_to_f_run_on_postgres() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let dir = d.path().to_str().unwrap();
    let steps = ycsb_steps();
    let o = plumb(
        &store,
        &[
            "sql",
            "--server",
            "postgres",
            "--cache-mb",
            "64",
            "--recordcount",
            "3000",
            "--threads",
            "2",
            "--steps",
            &steps,
            "--duration",
            "0.5",
            "--warmup",
            "0",
            "--json",
            "--dir",
            dir,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    check_ycsb(&run, 3000);
    // Stored as SQL steps: the server's cost per query is there.
    let a = step(&run, "ycsb-a");
    assert!(a["summary"]["server"]["cpu_us_query"].as_f64().unwrap() > 0.0);
}

fn tproc_c(server: &str, engine: Option<&str>) {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let dir = d.path().to_str().unwrap();
    let mut args = vec![
        "sql",
        "--server",
        server,
        "--cache-mb",
        "128",
        "--warehouses",
        "2",
        "--threads",
        "2",
        "--steps",
        "tpcc-load,tproc-c",
        "--duration",
        "3",
        "--warmup",
        "0",
        "--json",
        "--dir",
        dir,
    ];
    if let Some(e) = engine {
        args.extend(["--engine", e]);
    }
    let o = plumb(&store, &args);
    assert!(o.status.success(), "{server}: {}", stderr(&o));
    let run = json_of(&o);
    assert_eq!(step(&run, "tpcc-load")["status"], "ok");
    let t = step(&run, "tproc-c");
    // Passing the consistency conditions is what makes the step ok.
    assert_eq!(t["status"], "ok", "{server}: {}", t["error"]);
    let by = t["summary"]["by_op"].as_object().unwrap();
    for tx in [
        "new-order",
        "payment",
        "order-status",
        "delivery",
        "stock-level",
    ] {
        assert!(by[tx]["ops"].as_u64().unwrap() > 0, "{server}: no {tx}");
    }
    // The mix: new-order and payment dominate (45% and 43%).
    let n = |tx: &str| by[tx]["ops"].as_f64().unwrap();
    let all: f64 = by.values().map(|l| l["ops"].as_f64().unwrap()).sum();
    assert!((n("new-order") / all - 0.45).abs() < 0.08, "{by:?}");
    assert!((n("payment") / all - 0.43).abs() < 0.08, "{by:?}");
    // NOPM is new-orders per minute of the window.
    let nopm = n("new-order") * 60.0 / t["summary"]["secs"].as_f64().unwrap();
    let id = run["run"]["id"].to_string();
    let text = common::ok_json(&plumb(&store, &["show", &id, "--json"]));
    assert_eq!(
        step(&text, "tproc-c")["summary"]["by_op"],
        t["summary"]["by_op"]
    );
    let page = common::html_report(&store, &[&id]);
    assert!(page.contains(r#"data-table="by-op""#) && page.contains("new-order"));
    assert!(nopm > 0.0);
}

#[test]
fn tproc_c_runs_on_postgres_and_keeps_the_specs_consistency() {
    tproc_c("postgres", None);
}

#[test]
fn tproc_c_runs_on_innodb_and_keeps_the_specs_consistency() {
    tproc_c("mariadb", Some("innodb"));
}

#[test]
fn pgbench_scripts_run_on_postgres_at_pgbench_scale() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let dir = d.path().to_str().unwrap();
    let o = plumb(
        &store,
        &[
            "sql",
            "--server",
            "postgres",
            "--cache-mb",
            "64",
            "--scale",
            "2",
            "--threads",
            "2",
            "--steps",
            "pgbench-load,tpcb-like,simple-update,select-only",
            "--duration",
            "1",
            "--warmup",
            "0",
            "--json",
            "--dir",
            dir,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    let load = step(&run, "pgbench-load");
    // 2 × (100000 accounts + 10 tellers + 1 branch).
    assert_eq!(load["summary"]["ops"].as_u64(), Some(200_022), "{load}");
    for (script, queries) in [
        ("tpcb-like", 7.0),
        ("simple-update", 5.0),
        ("select-only", 1.0),
    ] {
        let s = step(&run, script);
        assert_eq!(s["status"], "ok", "{script}: {}", s["error"]);
        let srv = &s["summary"]["server"];
        let per_txn = srv["queries"].as_f64().unwrap()
            / (srv["tps"].as_f64().unwrap() * s["summary"]["secs"].as_f64().unwrap());
        assert!(
            (per_txn - queries).abs() < 0.1,
            "{script}: {per_txn} queries per transaction"
        );
    }
}

/// The runs of a store on `engine`, each as `plumb show ID --json` gives it.
fn runs_on(store: &std::path::Path, engine: &str) -> Vec<Value> {
    common::runs_json(store)
        .iter()
        .filter(|r| r["engine"] == engine)
        .map(|r| common::ok_json(&plumb(store, &["show", &r["id"].to_string(), "--json"])))
        .collect()
}

#[test]
fn a_suite_sweeps_pgbenchs_scale_and_runs_ycsb_open_loop_beside_it() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let suite = d.path().join("std.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
seed = 3
dir = "{}"

[params]
num = 2000
duration = 1
rate = 1500
arrivals = "poisson"

[sql]
duration = 1
warmup = 0
rate = 400

[[target]]
name = "pg"
server = "postgres"
cache_mb = 64

[[target]]
name = "lmdb"
engine = "lmdb"

[[workload]]
name = "pgbench"
sql = ["pgbench-load", "select-only"]

[[workload]]
name = "ycsb"
steps = ["ycsb-load", "ycsb-b"]

[[size]]
name = "s1"
num = 1

[[size]]
name = "s2"
num = 2
"#,
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let o = plumb(&store, &["run", suite.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pg = runs_on(&store, "postgres");
    assert_eq!(pg.len(), 2, "one pgbench run per size");
    // The size sweep sets pgbench's scale: 100000 accounts + 10 tellers + 1 branch each.
    let mut loaded: Vec<u64> = pg
        .iter()
        .map(|r| step(r, "pgbench-load")["summary"]["ops"].as_u64().unwrap())
        .collect();
    loaded.sort();
    assert_eq!(loaded, [100_011, 200_022]);
    for r in &pg {
        let s = &step(r, "select-only")["summary"];
        assert_eq!(s["open_loop"]["target_ops_sec"], 400.0, "{s}");
        // The schedule, not this machine's speed, fixes what was offered: the ops that
        // started plus the backlog left unstarted are the arrivals due in the 1-s window
        // (Poisson, mean 400, sd 20; a busy machine moves ops into the backlog, it does
        // not change their sum). The pacing caps what runs: never far above 400.
        let (done, backlog) = (
            s["ops"].as_f64().unwrap(),
            s["open_loop"]["backlog_ops"].as_f64().unwrap(),
        );
        assert!(
            ((done + backlog) / 400.0 - 1.0).abs() < 0.25,
            "select-only: {done} ops + {backlog} left, 400 offered: {s}"
        );
        let tps = s["server"]["tps"].as_f64().unwrap();
        assert!(tps < 400.0 * 1.25, "select-only at {tps} tps, 400 offered");
    }
    let page = common::html_report(&store, &[&common::runs_json(&store)[0]["id"].to_string()]);
    assert!(
        page.contains(r#"data-table="open-loop""#),
        "no open-loop table"
    );
    let y = runs_on(&store, "lmdb");
    assert!(!y.is_empty());
    for r in &y {
        let b = &step(r, "ycsb-b")["summary"];
        assert_eq!(b["open_loop"]["arrivals"], "poisson", "{b}");
        assert!(b["by_op"]["read"]["ops"].as_u64().unwrap() > 0);
        // The load is a quota, not an offered rate.
        assert!(step(r, "ycsb-load")["summary"]["open_loop"].is_null());
    }
}
