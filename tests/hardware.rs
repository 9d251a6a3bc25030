//! The deck's hardware truths end to end through `plumb`: durable commits against
//! concurrent committers beside the disk's fsync ceiling, on RocksDB (synced writes) and
//! on a PostgreSQL plumb starts.

mod common;

use common::{plumb, runs_json, stderr, step};
use serde_json::Value;

/// The block device's write cache mode under `dir` (`write back` or `write through`):
/// the kernel counts flushes only where the cache takes them.
fn write_cache_of(dir: &std::path::Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).unwrap().dev();
    let (maj, min) = (libc_major(dev), libc_minor(dev));
    let sys = format!("/sys/dev/block/{maj}:{min}");
    let whole = std::fs::canonicalize(&sys).unwrap();
    // A partition's queue is its parent's.
    let queue = if whole.join("queue").exists() {
        whole.join("queue/write_cache")
    } else {
        whole.parent().unwrap().join("queue/write_cache")
    };
    std::fs::read_to_string(&queue)
        .unwrap_or_else(|e| panic!("{}: {e}", queue.display()))
        .trim()
        .to_string()
}

fn libc_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
}

fn libc_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
}

fn flush_per_commit(s: &Value) -> f64 {
    let sum = &s["summary"];
    let f = sum["device"]["f_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no f/s: {sum}"));
    let commits = sum["server"]["tps"]
        .as_f64()
        .unwrap_or_else(|| sum["ops_sec"].as_f64().unwrap());
    f / commits
}

#[test]
fn commit_scaling_on_rocksdb_and_postgres_is_read_against_the_fsync_ceiling() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let data = d.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    assert_eq!(
        write_cache_of(&data),
        "write back",
        "this test reads device flushes, which a write-through device is never sent"
    );
    let suite = d.path().join("commits.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
seed = 5
dir = "{}"

[probe]
quick = true
tests = "commit"

[params]
num = 1000000
duration = 1
warmup = 0

[sql]
tables = 1
table_size = 100
duration = 1
warmup = 0

[[target]]
name = "host"
host = true

[[target]]
name = "rocksdb-sync"
engine = "rocksdb"
[target.options]
sync = true

[[target]]
name = "pg"
server = "postgres"
cache_mb = 64

[[workload]]
name = "fsync"
probe = "disk"

[[workload]]
name = "commits"
steps = ["fillrandom"]

[[workload]]
name = "insert"
sql = ["load", "insert"]

[sweep]
threads = [1, 4]
"#,
            data.display()
        ),
    )
    .unwrap();
    let o = plumb(&store, &["run", suite.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    let show = |id: &Value| common::ok_json(&plumb(&store, &["show", &id.to_string(), "--json"]));
    let mut seen = 0;
    for r in &runs {
        let run = show(&r["id"]);
        let (name, commit_step) = match r["engine"].as_str().unwrap() {
            "rocksdb" => ("rocksdb", "fillrandom"),
            "postgres" => ("postgres", "insert"),
            _ => continue,
        };
        let s = step(&run, commit_step);
        assert_eq!(s["status"], "ok", "{name}: {s}");
        let per = flush_per_commit(s);
        // A synced commit reaches the device: one committer flushes at least once a
        // commit (nothing to group with); a write left to the OS would not flush.
        if s["config"]["threads"] == 1 {
            assert!(per >= 0.5, "{name} at 1 committer: {per} flushes/commit");
        }
        seen += 1;
    }
    assert_eq!(
        seen, 4,
        "rocksdb and postgres at 1 and 4 committers: {runs:?}"
    );
    let sel = format!("s{}", runs[0]["suite_id"]);
    let o = plumb(&store, &["report", &sel]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let part = text
        .split("durable commits vs committers")
        .nth(1)
        .unwrap_or_else(|| panic!("no commit table:\n{text}"));
    assert!(
        part.contains("fsync ceiling: ") && part.contains("(probe run "),
        "{part}"
    );
    for (step, series) in [("fillrandom", "rocksdb-sync"), ("insert", "pg")] {
        assert!(
            part.contains(&format!("{step}: {series}")),
            "no {step} curve for {series}:\n{part}"
        );
    }
    assert!(part.contains("commits/flush"), "{part}");
    let md = plumb(&store, &["report", &sel, "--format", "md"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("## Durable commits vs committers"));
    // The HTML page draws each commit curve beside the fsync ceiling's level line.
    let page = common::html_report(&store, &[&sel]);
    assert_eq!(
        page.matches(r#"data-chart="commits""#).count(),
        2,
        "one chart per curve"
    );
    assert!(
        page.contains("fsync ceiling (1 committer"),
        "no ceiling line in the chart"
    );
}

#[test]
fn the_cached_select_ceiling_is_measured_on_postgres_and_read_in_a_later_run() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let dir = d.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let o = plumb(
        &store,
        &[
            "sql",
            "--steps",
            "cached-select",
            "--duration",
            "1",
            "--warmup",
            "0",
            "--dir",
            dir,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("cached-SELECT ceiling of postgres"), "{err}");
    let runs = runs_json(&store);
    let run = common::ok_json(&plumb(
        &store,
        &["show", &runs[0]["id"].to_string(), "--json"],
    ));
    // One step per client count: 1, 2, 4 … up to twice the hardware threads.
    let hw = std::thread::available_parallelism().unwrap().get();
    let mut want = vec![];
    let mut c = 1;
    while c < 2 * hw {
        want.push(c);
        c *= 2;
    }
    want.push(2 * hw);
    let steps: Vec<&str> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let names: Vec<String> = want.iter().map(|c| format!("cached-select.c{c}")).collect();
    assert_eq!(steps, names);
    for (n, c) in names.iter().zip(&want) {
        let s = step(&run, n);
        assert_eq!(s["status"], "ok", "{s}");
        assert_eq!(s["config"]["threads"], *c as u64, "{s}");
        // Each SELECT found its row: one row per query, none missing.
        assert_eq!(s["summary"]["server"]["rows_query"], 1.0, "{s}");
    }
    // A later run on the same host is read against it.
    let o = plumb(
        &store,
        &[
            "sql",
            "--steps",
            "load,point-query",
            "--table-size",
            "1000",
            "--threads",
            "2",
            "--duration",
            "1",
            "--warmup",
            "0",
            "--dir",
            dir,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("against the cached-SELECT ceiling of postgres"),
        "{out}"
    );
    // The ceiling's section (the report's first lines are where each step's time
    // went, one per step, the load's too): its lines up to the next blank one.
    let section: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("against the cached-SELECT ceiling of postgres"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let line = section
        .iter()
        .find(|l| l.trim_start().starts_with("point-query:"))
        .unwrap_or_else(|| panic!("no attribution line for point-query:\n{out}"));
    assert!(
        line.contains("of the cached-SELECT ceiling at 2 client(s)")
            && line.contains("× a trivial SELECT's"),
        "{line}"
    );
    assert!(
        !section.iter().any(|l| l.trim_start().starts_with("load:")),
        "a load is not read against a query ceiling:\n{out}"
    );
}
