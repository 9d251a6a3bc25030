//! End-to-end tests of one plan for every family: suites whose targets are servers
//! (a PostgreSQL release series, MariaDB's InnoDB) and whose workloads are the sysbench
//! microbenchmarks and the insert benchmark, swept over clients and size, resumed after
//! a SIGKILL with no server left behind, rerun from their stored plans; and a memory
//! limit that makes an embedded engine IO-bound. The servers are Debian's PostgreSQL 15
//! and MariaDB, and PostgreSQL 16 from scripts/get-postgres.sh (scripts/test.sh
//! installs them all).

mod common;

use common::{ok_json, plumb, runs_json, stderr, step};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

fn show(store: &Path, id: &Value) -> Value {
    ok_json(&plumb(store, &["show", &id.to_string(), "--json"]))
}

/// Processes whose command line mentions `needle` (a server left running).
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .is_none()
        {
            continue;
        }
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(needle) {
                out.push(c);
            }
        }
    }
    out
}

fn series_suite(data: &Path) -> String {
    format!(
        r#"
name = "pg-series"
seed = 21
dir = "{}"

[sql]
duration = 0.6
warmup = 0.2

[[target]]
name = "pg"
server = "postgres"
versions = ["15", "16"]
cache_mb = 64

[[workload]]
name = "micro"
sql = ["load", "point-query", "read-only-10"]

[[size]]
name = "s2k"
num = 2000

[[size]]
name = "s8k"
num = 8000

[sweep]
clients = [1, 2]
"#,
        data.display()
    )
}

#[test]
fn a_release_series_suite_sweeps_clients_and_size_and_reports_both_per_release() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    let suite = write(dir.path(), "series.toml", &series_suite(&data));
    let o = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["plan", &suite])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("8 runs (8 variants × 1 repeats)"), "{text}");
    assert!(
        text.contains("pg@16/s8k/t2") && text.contains("postgres@16"),
        "{text}"
    );

    let o = plumb(&store, &["run", &suite]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 8);
    let mut releases = BTreeMap::new();
    for r in &runs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["engine"], "postgres");
        let target = r["options"]["target"].as_str().unwrap().to_string();
        let major = r["engine_version"]
            .as_str()
            .unwrap()
            .split('.')
            .next()
            .unwrap()
            .to_string();
        releases.insert(target, major);
        // The stored plan is the suite's: a server, the microbenchmarks, the sweep values.
        let p = &r["plan"];
        assert_eq!(p["target"]["server"]["cache_mb"], 64, "{p}");
        let threads = p["workload"]["sql"]["params"]["threads"].as_u64().unwrap();
        let rows = p["workload"]["sql"]["params"]["table_size"]
            .as_u64()
            .unwrap();
        assert_eq!(r["options"]["threads"], threads.to_string());
        assert_eq!(r["options"]["table_size"], rows.to_string());
        let run = show(&store, &r["id"]);
        let pq = step(&run, "point-query");
        assert!(pq["summary"]["ops_sec"].as_f64().unwrap() > 0.0);
        assert_eq!(pq["config"]["threads"], threads);
    }
    assert_eq!(releases["pg@15"], "15", "{releases:?}");
    assert_eq!(releases["pg@16"], "16", "{releases:?}");
    // No server outlives its run.
    assert!(processes_with(data.to_str().unwrap()).is_empty());

    let sel = format!("s{}", runs[0]["suite_id"]);
    let md = plumb(&store, &["report", &sel, "--format", "md"]);
    assert!(md.status.success(), "{}", stderr(&md));
    let md = String::from_utf8_lossy(&md.stdout);
    for release in ["pg@15", "pg@16"] {
        assert!(
            md.contains(&format!(
                "### point-query vs threads: {release} · micro · s8k"
            )),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "### read-only-10 vs size (keys or rows): {release} · micro · t2"
            )),
            "{md}"
        );
    }
    let page = common::html_report(&store, &[&sel]);
    assert!(page.contains(r#"data-axis="threads""#) && page.contains(r#"data-axis="size""#));
}

#[test]
fn an_insert_benchmark_suite_runs_on_two_servers_and_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let suite = write(
        dir.path(),
        "ib.toml",
        &format!(
            r#"
seed = 5
dir = "{}"

[ib]
rows = 3000
inserts = 600
duration = 1

[[target]]
name = "pg"
server = "postgres"
cache_mb = 64
memory_mb = 256
drop_caches = true

[[target]]
name = "innodb"
server = "mariadb"
engine = "innodb"
cache_mb = 64

[[target]]
name = "lmdb"
engine = "lmdb"

[[workload]]
name = "ib"
ib = ["l.i0", "l.x", "l.i1", "qp100"]
"#,
            dir.path().join("data").display()
        ),
    );
    let o = plumb(&store, &["run", &suite]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    let engines: Vec<&str> = runs.iter().map(|r| r["engine"].as_str().unwrap()).collect();
    assert_eq!(engines, ["postgres", "innodb", "lmdb"]);
    for r in &runs {
        assert_eq!(r["status"], "ok", "{r}");
        let run = show(&store, &r["id"]);
        let li1 = step(&run, "l.i1");
        assert_eq!(li1["status"], "ok");
        assert!(li1["summary"]["ops_sec"].as_f64().unwrap() > 0.0);
        // The host's noise over the step: a managed server's processes and an embedded
        // engine's are told from a neighbour's; each second's outside load is known for
        // the embedded engine, and for a server only over a window of one interval (its
        // processes are read at the window's ends, not each second).
        // Each only over a window long enough to count (common::noise_expected).
        let secs = |v: &serde_json::Value| v["secs"].as_f64().unwrap();
        if let Some(e) = common::noise_expected(secs(&li1["summary"])) {
            assert_eq!(li1["summary"]["steal_pct"].is_f64(), e, "{li1}");
            assert_eq!(li1["summary"]["outside_cpu_pct"].is_f64(), e, "{li1}");
        }
        let ivs = li1["intervals"].as_array().unwrap();
        let known = r["engine"] == "lmdb" || ivs.len() == 1;
        for i in ivs {
            if let Some(e) = common::noise_expected(secs(i)) {
                assert_eq!(i["steal_pct"].is_f64(), e, "{i}");
                assert_eq!(i["outside_cpu_pct"].is_f64(), e && known, "{i}");
            }
        }
        assert_eq!(step(&run, "qp100")["config"]["rate_per_client"], 100);
        assert_eq!(r["plan"]["workload"]["ib"]["params"]["rows"], 3000);
    }
    // The limited server ran in its cgroup, and says so; the others did not.
    assert_eq!(runs[0]["options"]["memory_limit_mb"], "256");
    assert_eq!(runs[0]["options"]["drop_caches"], "true");
    assert!(runs[1]["options"].get("memory_limit_mb").is_none());
}

#[test]
fn a_server_suite_killed_midway_resumes_with_no_run_missing_none_twice_and_no_server_left() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    let suite = write(
        dir.path(),
        "kill.toml",
        &format!(
            r#"
seed = 9
repeat = 2
dir = "{}"

[sql]
table_size = 2000
duration = 1.5
warmup = 0

[[target]]
name = "pg"
server = "postgres"
cache_mb = 64

[[workload]]
name = "micro"
sql = ["load", "point-query", "update-index"]

[sweep]
clients = [1, 2]
"#,
            data.display()
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["run", &suite, "--store", store.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it while its second run's server is up.
    common::wait_for_runs(&store, 2, 180);
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap(); // SIGKILL: the server runs on in its own session
    child.wait().unwrap();
    assert!(
        !processes_with(data.to_str().unwrap()).is_empty(),
        "the killed plumb's server is still running (the case resume must clean up)"
    );

    // Every planned run finished exactly once; the killed one is marked interrupted.
    common::resumed_once(&store, &suite, 4);
    let left = processes_with(data.to_str().unwrap());
    assert!(left.is_empty(), "servers left running: {left:?}");
}

#[test]
fn rerun_of_a_sql_run_and_of_an_ib_run_stores_the_plan_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    let d = data.to_str().unwrap();
    let sql = ok_json(&plumb(
        &store,
        &[
            "sql",
            "--server",
            "postgres",
            "--cache-mb",
            "64",
            "--table-size",
            "2000",
            "--steps",
            "load,point-query",
            "--duration",
            "0.5",
            "--warmup",
            "0",
            "--threads",
            "2",
            "--dir",
            d,
            "--json",
        ],
    ));
    let ib = ok_json(&plumb(
        &store,
        &[
            "ib",
            "--server",
            "mariadb",
            "--engine",
            "rocksdb",
            "--cache-mb",
            "64",
            "--rows",
            "2000",
            "--inserts",
            "300",
            "--duration",
            "1",
            "--steps",
            "l.i0,l.x,l.i1,qr100",
            "--dir",
            d,
            "--json",
        ],
    ));
    for first in [&sql, &ib] {
        let id = first["run"]["id"].to_string();
        let o = plumb(&store, &["rerun", &id, "--json", "--dir", d]);
        assert!(o.status.success(), "{}", stderr(&o));
        let again = ok_json(&o);
        assert_ne!(again["run"]["id"], first["run"]["id"]);
        let runs = runs_json(&store);
        let a = runs.iter().find(|r| r["id"] == first["run"]["id"]).unwrap();
        let b = runs.iter().find(|r| r["id"] == again["run"]["id"]).unwrap();
        assert!(a["plan"]["target"]["server"].is_object(), "{a}");
        assert_eq!(a["plan"], b["plan"], "the rerun's plan is the original's");
        assert_eq!(a["plan_hash"], b["plan_hash"]);
        assert_eq!(b["status"], "ok");
        assert_eq!(a["engine"], b["engine"]);
    }
    assert!(processes_with(d).is_empty());
}

#[test]
fn a_memory_limit_makes_lmdb_read_from_the_device() {
    // 300k × 1 KiB values (~310 MB) against a 64 MiB limit: most reads miss memory.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let store = dir.path().join("s.sqlite");
    let run = |limit: Option<&str>| {
        let mut args = vec![
            "kv",
            "--engine",
            "lmdb",
            "--num",
            "300000",
            "--value-size",
            "1024",
            "--benchmarks",
            "fillseq,readrandom",
            "--duration",
            "2",
            "--seed",
            "3",
            "--json",
        ];
        if let Some(l) = limit {
            args.extend(["--memory-mb", l]);
        }
        let v = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(&args)
            .arg("--store")
            .arg(&store)
            .env("TMPDIR", dir.path())
            .output()
            .unwrap();
        ok_json(&v)
    };
    let limited = run(Some("64"));
    let free = run(None);
    let rd = |r: &Value| step(r, "readrandom")["summary"]["rd_op"].as_f64().unwrap();
    assert_eq!(limited["run"]["options"]["memory_limit_mb"], "64");
    assert!(free["run"]["options"].get("memory_limit_mb").is_none());
    assert!(
        rd(&limited) >= 0.5,
        "limited to 64 MiB, readrandom did {} device reads per op",
        rd(&limited)
    );
    assert!(
        rd(&free) < 0.1,
        "unlimited (the data was just written, so cached), {} reads per op",
        rd(&free)
    );
    // Those reads as iostat shows them, for the step and for each second: requests of a
    // page or more, each with its wait, and the device busy.
    let rr = step(&limited, "readrandom");
    let dev = &rr["summary"]["device"];
    assert!(dev["r_s"].as_f64().unwrap() > 0.0, "{dev}");
    assert!(dev["rareq_kb"].as_f64().unwrap() >= 4.0, "{dev}");
    assert!(dev["r_await_ms"].as_f64().unwrap() >= 0.0, "{dev}");
    assert!(dev["util_pct"].as_f64().unwrap() > 0.0, "{dev}");
    let ivs = rr["intervals"].as_array().unwrap();
    assert!(
        ivs.iter().all(|i| i["device"]["r_s"].as_f64().is_some()),
        "{ivs:?}"
    );
    // `plumb show --intervals` prints them per second.
    let o = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "show",
            &limited["run"]["id"].to_string(),
            "--intervals",
            "--store",
        ])
        .arg(&store)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for col in [
        "step readrandom",
        "r/s",
        "r_await",
        "rareq-sz",
        "aqu-sz",
        "%util",
    ] {
        assert!(out.contains(col), "{col} missing:\n{out}");
    }
}

#[test]
fn a_suite_with_a_probe_measures_the_host_and_its_run_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let suite = write(
        dir.path(),
        "probe.toml",
        r#"
seed = 1

[probe]
quick = true
secs = 0.3

[[target]]
name = "box"
host = true

[[target]]
name = "mem"
engine = "memory"

[[workload]]
name = "ceilings"
probe = "cpu"

[[workload]]
name = "reads"
steps = ["fillseq", "readrandom"]

[params]
num = 2000
duration = 0.3
"#,
    );
    let o = plumb(&store, &["run", &suite]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["engine"], "probe");
    assert_eq!(runs[0]["options"]["probe"], "cpu");
    assert_eq!(runs[0]["plan"]["target"]["host"], serde_json::json!({}));
    assert_eq!(runs[1]["engine"], "memory");
    let probe = show(&store, &runs[0]["id"]);
    let steps = probe["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    assert!(steps.iter().all(|s| s["status"] == "ok"), "{steps:?}");
    // Its plan reruns as a new probe run.
    let o = plumb(&store, &["rerun", &runs[0]["id"].to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = runs_json(&store);
    assert_eq!(again.len(), 3);
    assert_eq!(again[2]["engine"], "probe");
    assert_eq!(again[2]["plan"], runs[0]["plan"]);
}
