//! A fleet on one machine: a plan queued in a PostgreSQL store, three workers taking
//! its runs, one killed with SIGKILL while it holds a run. Every run of the plan must
//! end exactly once, the dead worker's run going to another after its lease.

mod common;

use common::{external_server, ok_json, plumb, stderr};
use plumb_store::{QueueStatus, Store};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SUITE: &str = r#"
name = "fleet"
repeat = 3
seed = 5

[params]
num = 2000
duration = 1.5

[[target]]
name = "mem"
engine = "memory"

[[workload]]
name = "reads"
steps = ["fillseq", "readrandom"]

[sweep]
threads = [1, 2]
"#;

/// `plumb worker` on `queue` (extra flags in `more`), its stderr into `log`.
fn worker(url: &str, queue: &str, more: &[&str], log: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["worker", "--queue", queue, "--store", url])
        .args(more)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Waits (5 minutes at most) for worker `i` to exit, and asserts it succeeded.
fn exits_ok(w: &mut Child, log: &Path, i: usize) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(st) = w.try_wait().unwrap() {
            let log = std::fs::read_to_string(log).unwrap();
            assert!(st.success(), "worker {i}: {log}");
            return;
        }
        assert!(Instant::now() < deadline, "worker {i} never finished");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn three_workers_one_killed_and_every_queued_run_ends_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = external_server(dir.path(), "postgres", None);
    let url = server.endpoint.redacted_url();
    let store = Path::new(&url);
    let suite = dir.path().join("fleet.toml");
    std::fs::write(&suite, SUITE).unwrap();

    // A password in the store's URL never reaches output (the server trusts local
    // users, so it is sent and ignored), nor does one for a database that is missing.
    let with_pw = url.replacen("@", ":pw-s3cret@", 1);
    let o = plumb(
        Path::new(&with_pw),
        &["run", suite.to_str().unwrap(), "--queue", "q"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let missing = with_pw.replacen(&format!("/{}", server.endpoint.database), "/nosuchdb", 1);
    let e = plumb(Path::new(&missing), &["runs"]);
    assert!(!e.status.success());
    for out in [&o, &e] {
        let all = format!("{}{}", stderr(out), String::from_utf8_lossy(&out.stdout));
        assert!(!all.contains("s3cret"), "{all}");
        assert!(all.contains(":***@"), "{all}");
    }
    assert!(stderr(&e).contains("nosuchdb"), "{}", stderr(&e));
    assert!(stderr(&o).contains("6 runs queued"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("plumb worker --queue q"),
        "{}",
        stderr(&o)
    );
    let s = Store::open(store).unwrap();
    assert_eq!(s.queue_items("q").unwrap().len(), 6);

    let logs: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("w{i}.log")))
        .collect();
    let mut workers: Vec<Child> = logs
        .iter()
        .map(|l| worker(&url, "q", &["--lease", "2"], l))
        .collect();
    // Kill worker 0 once it has held a run for half a second.
    let victim = format!(":{}", workers[0].id());
    let deadline = Instant::now() + Duration::from_secs(120);
    let held = loop {
        let items = s.queue_items("q").unwrap();
        if let Some(i) = items.iter().find(|i| {
            i.status == QueueStatus::Running
                && i.worker.as_deref().is_some_and(|w| w.ends_with(&victim))
        }) {
            break i.id;
        }
        assert!(Instant::now() < deadline, "worker 0 never took a run");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(500));
    workers[0].kill().unwrap();
    workers[0].wait().unwrap();
    for (i, w) in workers.iter_mut().enumerate().skip(1) {
        exits_ok(w, &logs[i], i);
    }

    let items = s.queue_items("q").unwrap();
    assert!(
        items.iter().all(|i| i.status == QueueStatus::Done),
        "{items:#?}"
    );
    let killed = items.iter().find(|i| i.id == held).unwrap();
    assert_eq!(killed.attempts, 2, "the dead worker's run went to another");
    assert!(!killed.worker.as_deref().unwrap().ends_with(&victim));
    let mut run_ids: Vec<i64> = items.iter().map(|i| i.run_id.unwrap()).collect();
    run_ids.sort_unstable();
    run_ids.dedup();
    assert_eq!(run_ids.len(), 6, "one run per item");

    // Seven runs are stored: the six that finished the items, all ok, and the one
    // the killed worker left, marked interrupted (its process is gone).
    let runs = ok_json(&plumb(store, &["runs", "--json", "--limit", "100"]));
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 7, "{runs:#?}");
    for r in runs {
        let id = r["id"].as_i64().unwrap();
        let want = if run_ids.contains(&id) {
            "ok"
        } else {
            "interrupted"
        };
        assert_eq!(r["status"], want, "run {id}");
        assert!(
            r["host"]["inventory"]["hostname"].is_string(),
            "every run keeps its host's inventory"
        );
        assert!(r["host"]["checks"].is_array(), "and its hygiene checks");
    }
    // `show` reads a run and its steps from PostgreSQL, the run as `runs` listed it.
    let shown = ok_json(&plumb(store, &["show", &run_ids[0].to_string(), "--json"]));
    let listed = runs.iter().find(|r| r["id"] == run_ids[0]).unwrap();
    assert_eq!(&shown["run"], listed);
    let steps: Vec<_> = shown["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["fillseq", "readrandom"]);
    // Repeats of a variant are grouped even when different workers ran them.
    let suite_id = items[0].suite_id.unwrap();
    let mut groups: std::collections::BTreeMap<String, Vec<(i64, i64)>> = Default::default();
    for r in s.suite_runs(suite_id).unwrap() {
        if r.status == plumb_core::RunStatus::Ok {
            groups
                .entry(r.options["variant"].clone())
                .or_default()
                .push((r.group_id.unwrap(), r.repeat_index.unwrap()));
        }
    }
    assert_eq!(groups.len(), 2, "{groups:?}");
    for (variant, mut runs) in groups {
        runs.sort_unstable_by_key(|&(_, repeat)| repeat);
        let group = runs[0].0;
        assert_eq!(
            runs,
            [(group, 0), (group, 1), (group, 2)],
            "variant {variant}: three repeats, one group"
        );
    }
    let sr = s.suite(suite_id).unwrap();
    assert_eq!(
        sr.status,
        plumb_core::RunStatus::Ok,
        "the suite ended with its last item"
    );
    let report = plumb(
        store,
        &["report", &format!("s{suite_id}"), "--format", "json"],
    );
    assert!(report.status.success(), "{}", stderr(&report));

    // The suite split by a dimension: by threads, two versions of three repeats each;
    // by host, one host here, which is said rather than compared with itself.
    let c = ok_json(&plumb(
        store,
        &[
            "compare",
            &format!("s{suite_id}"),
            "--by",
            "opt.threads",
            "--json",
        ],
    ));
    let versions = c["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{c:#}");
    assert!(
        versions[0].as_str().unwrap().contains("opt.threads="),
        "{c:#}"
    );
    assert_eq!(
        c["run_ids"][0].as_array().map(|a| a.len()),
        Some(3),
        "{c:#}"
    );
    let host = runs[0]["host"]["inventory"]["hostname"].as_str().unwrap();
    let o = plumb(store, &["compare", &format!("s{suite_id}"), "--by", "host"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&format!("host={host}")),
        "{}",
        stderr(&o)
    );
    // A suite narrowed to one host's runs.
    let one = format!("s{suite_id},host={host},opt.threads=1");
    let c = ok_json(&plumb(
        store,
        &[
            "compare",
            &one,
            &format!("s{suite_id},opt.threads=2"),
            "--json",
        ],
    ));
    assert_eq!(
        c["run_ids"][0].as_array().map(|a| a.len()),
        Some(3),
        "{c:#}"
    );
}

#[test]
fn a_worker_refuses_a_bad_lease_and_exits_on_an_empty_queue() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let o = plumb(&store, &["worker", "--queue", "none", "--lease", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--lease 0"), "{}", stderr(&o));
    // A store that exists, with nothing queued: the worker says so and exits 0.
    Store::open(&store).unwrap();
    let o = plumb(&store, &["worker", "--queue", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("0 runs"), "{}", stderr(&o));
}

#[test]
fn workers_run_a_suite_whose_target_is_a_server_they_start() {
    let dir = tempfile::tempdir().unwrap();
    let store_server = external_server(dir.path(), "postgres", None);
    let url = store_server.endpoint.redacted_url();
    let store = Path::new(&url);
    let data = dir.path().join("data");
    let suite = dir.path().join("servers.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
name = "fleet-servers"
seed = 8
dir = "{}"

[sql]
table_size = 2000
duration = 0.5
warmup = 0

[[target]]
name = "innodb"
server = "mariadb"
engine = "innodb"
cache_mb = 64

[[target]]
name = "pg"
server = "postgres"
cache_mb = 64

[[workload]]
name = "micro"
sql = ["load", "point-query"]
"#,
            data.display()
        ),
    )
    .unwrap();
    let o = plumb(store, &["run", suite.to_str().unwrap(), "--queue", "srv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let logs: Vec<_> = (0..2)
        .map(|i| dir.path().join(format!("s{i}.log")))
        .collect();
    let mut workers: Vec<Child> = logs.iter().map(|l| worker(&url, "srv", &[], l)).collect();
    for (i, w) in workers.iter_mut().enumerate() {
        exits_ok(w, &logs[i], i);
    }
    let s = Store::open(store).unwrap();
    let items = s.queue_items("srv").unwrap();
    assert_eq!(items.len(), 2);
    assert!(
        items.iter().all(|i| i.status == QueueStatus::Done),
        "{items:#?}"
    );
    let mut engines = Vec::new();
    for i in &items {
        let run = ok_json(&plumb(
            store,
            &["show", &i.run_id.unwrap().to_string(), "--json"],
        ));
        assert_eq!(run["run"]["status"], "ok");
        engines.push(run["run"]["engine"].as_str().unwrap().to_string());
        let pq = common::step(&run, "point-query");
        assert!(pq["summary"]["ops_sec"].as_f64().unwrap() > 0.0);
    }
    engines.sort();
    assert_eq!(engines, ["innodb", "postgres"]);
}
