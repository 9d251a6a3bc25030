//! The durability family in the one plan: `plumb durability`'s runs stored and shown,
//! a suite's durability workload over an embedded engine and a server (interrupted
//! with Ctrl-C after its first run is stored, then resumed without redoing it),
//! `plumb rerun` of a stored durability run, and a worker taking durability plans from
//! a queue. LMDB and PostgreSQL (Debian's, as scripts/setup.sh installs it).

mod common;

use common::{ok_json, plumb, runs_json, stderr, step};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

fn show(store: &Path, id: &Value) -> Value {
    ok_json(&plumb(store, &["show", &id.to_string(), "--json"]))
}

/// The durability figures of a stored run's step.
fn figures<'a>(run: &'a Value, name: &str) -> &'a Value {
    &step(run, name)["summary"]["durability"]
}

/// Asserts a stored step kept every acknowledged write over `kills` trials.
fn kept_all(run: &Value, name: &str, kills: u64) {
    let d = figures(run, name);
    assert_eq!(step(run, name)["status"], "ok", "{run:#}");
    assert_eq!(d["kills_planned"], kills, "{d}");
    assert_eq!(d["trials"], kills, "{d}");
    assert!(d["kills"].as_u64().unwrap() >= 1, "{d}");
    assert!(d["acknowledged"].as_u64().unwrap() > 0, "{d}");
    assert_eq!(
        (d["lost"].as_u64(), d["wrong"].as_u64()),
        (Some(0), Some(0)),
        "{d}"
    );
    assert!(d["verdict"].as_str().unwrap().starts_with("ok"), "{d}");
}

fn suite(data: &Path, kills: u32) -> String {
    format!(
        r#"
name = "crash"
seed = 3
dir = "{}"

[durability]
kills = {kills}
max_ms = 60

[[target]]
name = "lmdb"
engine = "lmdb"

[[target]]
name = "pg"
server = "postgres"
cache_mb = 64

[[workload]]
name = "crash"
durability = ["sync"]
"#,
        data.display()
    )
}

#[test]
fn a_durability_suite_over_lmdb_and_postgres_resumes_after_ctrl_c_without_redoing_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    // Eight crashes of PostgreSQL take many seconds (each a restart and a recovery):
    // Ctrl-C lands while its run is under way, not after it.
    let suite = write(dir.path(), "crash.toml", &suite(&data, 8));

    let plan = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["plan", &suite])
        .output()
        .unwrap();
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        text.contains("2 runs") && text.contains("sync.kill"),
        "{text}"
    );

    let log = dir.path().join("run.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["run", &suite, "--store", store.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // Ctrl-C once the LMDB run is stored and the PostgreSQL run has begun.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if store.exists() {
            let runs = runs_json(&store);
            if runs.len() == 2 && runs[0]["status"] == "ok" && runs[1]["status"] == "running" {
                break;
            }
            assert!(
                runs.len() < 2 || runs[1]["status"] == "running",
                "{runs:#?}"
            );
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the suite ended before its second run was interrupted: {}",
            std::fs::read_to_string(&log).unwrap()
        );
        assert!(Instant::now() < deadline, "the second run never began");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("--resume"), "{said}");
    let before = runs_json(&store);
    assert_eq!(before.len(), 2, "{before:#?}");
    assert_eq!(before[0]["status"], "ok");
    assert_eq!(before[1]["status"], "interrupted");
    let lmdb = show(&store, &before[0]["id"]);
    kept_all(&lmdb, "sync.kill", 8);
    assert_eq!(lmdb["run"]["engine"], "lmdb");
    // The interrupted run stored the trials that ran: fewer than asked, none lost.
    let pg = show(&store, &before[1]["id"]);
    assert_eq!(pg["run"]["engine"], "postgres");
    if let Some(steps) = pg["steps"].as_array().filter(|s| !s.is_empty()) {
        let d = &steps[0]["summary"]["durability"];
        assert!(d["trials"].as_u64().unwrap() < 8, "{d}");
        assert_eq!(d["lost"], 0, "{d}");
        assert_eq!(steps[0]["status"], "interrupted");
    }

    // Resumed: the PostgreSQL run again, the LMDB run not redone.
    let after = common::resumed_once(&store, &suite, 2);
    assert_eq!(after.len(), 3, "{after:#?}");
    assert_eq!(after[0]["id"], before[0]["id"]);
    let pg = show(&store, &after[2]["id"]);
    assert_eq!(pg["run"]["status"], "ok");
    kept_all(&pg, "sync.kill", 8);
    let target = figures(&pg, "sync.kill")["target"].as_str().unwrap();
    assert!(
        target.starts_with("pg "),
        "the target and its release: {target}"
    );
    // Every directory and mount is gone, and no server runs on.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);

    // The report of the suite holds the durability table of both targets.
    let o = plumb(&store, &["report", "s1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("acknowledged") && text.contains("verdict"),
        "{text}"
    );
    for target in ["lmdb", "pg "] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(target) && l.contains("every acknowledged")),
            "{target}: {text}"
        );
    }
}

#[test]
fn plumb_durability_stores_its_runs_and_rerun_runs_one_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let o = plumb(
        &store,
        &[
            "durability",
            "--kv",
            "lmdb,sqlite",
            "--modes",
            "sync,nosync",
            "--kills",
            "2",
            "--max-ms",
            "50",
            "--seed",
            "7",
            "--dir",
            data.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The terminal table as it always was: a row per engine and mode, and the note.
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("every acknowledged write survived"))
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].trim_start().starts_with("lmdb") && rows[0].contains("sync"));
    assert!(
        text.contains("acknowledged") && text.contains("cut power"),
        "{text}"
    );

    // One run per engine, each mode a step, the plan stored with it.
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let lmdb = show(&store, &runs[0]["id"]);
    assert_eq!(lmdb["run"]["engine"], "lmdb");
    assert_eq!(lmdb["run"]["seed"], "7");
    kept_all(&lmdb, "sync.kill", 2);
    kept_all(&lmdb, "nosync.kill", 2);
    assert_eq!(
        runs[0]["plan"]["workload"]["durability"]["modes"][1],
        "nosync"
    );
    // `plumb show` prints the same table from the store.
    let o = plumb(&store, &["show", &runs[1]["id"].to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(
        shown.contains("sqlite") && shown.contains("nosync") && shown.contains("verdict"),
        "{shown}"
    );

    // Rerun: the same plan, its trials run again as a new run.
    let o = plumb(
        &store,
        &[
            "rerun",
            &runs[0]["id"].to_string(),
            "--dir",
            data.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let again = runs_json(&store);
    assert_eq!(again.len(), 3);
    assert_eq!(again[2]["plan"], again[0]["plan"]);
    assert_eq!(again[2]["plan_hash"], again[0]["plan_hash"]);
    let rerun = show(&store, &again[2]["id"]);
    assert_eq!(rerun["run"]["engine"], "lmdb");
    kept_all(&rerun, "sync.kill", 2);
    kept_all(&rerun, "nosync.kill", 2);
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}

#[test]
fn a_worker_takes_durability_plans_from_a_queue() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    let suite = write(
        dir.path(),
        "queued.toml",
        &format!(
            r#"
name = "queued"
seed = 5
dir = "{}"

[durability]
kills = 2
max_ms = 50

[[target]]
name = "lmdb"
engine = "lmdb"

[[target]]
name = "sqlite"
engine = "sqlite"

[[workload]]
name = "crash"
durability = ["both"]
"#,
            data.display()
        ),
    );
    let o = plumb(&store, &["run", &suite, "--queue", "q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(runs_json(&store).is_empty(), "queued, not run");
    let o = plumb(&store, &["worker", "--queue", "q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = plumb_store::Store::open(&store).unwrap();
    let items = s.queue_items("q").unwrap();
    assert_eq!(items.len(), 2);
    let mut engines = Vec::new();
    for i in &items {
        assert_eq!(i.status, plumb_store::QueueStatus::Done, "{items:#?}");
        let run = show(&store, &Value::from(i.run_id.unwrap()));
        assert_eq!(run["run"]["status"], "ok");
        kept_all(&run, "sync.kill", 2);
        kept_all(&run, "nosync.kill", 2);
        engines.push(run["run"]["engine"].as_str().unwrap().to_string());
    }
    engines.sort();
    assert_eq!(engines, ["lmdb", "sqlite"]);
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}

#[test]
fn ctrl_c_ends_the_trial_under_way_prints_the_table_so_far_and_stores_the_run_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Ten thousand kills run for hours: Ctrl-C always lands while they run.
    let child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "durability",
            "--kv",
            "lmdb",
            "--modes",
            "sync",
            "--kills",
            "10000",
        ])
        .args([
            "--max-ms",
            "20",
            "--json",
            "--store",
            store.to_str().unwrap(),
            "--dir",
        ])
        .arg(&data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_runs(&store, 1, 120);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    let rows = common::json_of(&o);
    let r = &rows.as_array().unwrap()[0];
    assert_eq!(
        (r["engine"].as_str(), r["mode"].as_str()),
        (Some("lmdb"), Some("sync"))
    );
    let kills = r["kills"].as_u64().unwrap();
    assert!((1..10_000).contains(&kills), "{r}");
    assert_eq!(r["lost"], 0, "{r}");
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "interrupted");
    let run = show(&store, &runs[0]["id"]);
    assert_eq!(step(&run, "sync.kill")["status"], "interrupted");
    assert_eq!(figures(&run, "sync.kill")["kills"], kills);
    // The trial under way ended as usual: its directory is gone.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}
