//! End-to-end tests of suites: `plumb plan`, `plumb run` (order, groups, resume after a
//! SIGKILL), `plumb rerun` and `plumb report` on a suite. Most use the in-memory and
//! null engines so they take seconds; one runs a small RocksDB size sweep.

mod common;

use common::{ok_json, plumb, runs_json, stderr};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `plumb ARGS` without `--store` (for `plan`, which reads no store).
fn plumb_bare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

const MEM_SWEEP: &str = r#"
name = "mem-sweep"
repeat = 2
seed = 11

[params]
num = 2000
duration = 0.3

[[target]]
name = "mem"
engine = "memory"

[[target]]
name = "nul"
engine = "null"

[[workload]]
name = "reads"
steps = ["fillseq", "readrandom"]

[sweep]
threads = [1, 2]
"#;

#[test]
fn a_suite_runs_its_matrix_interleaved_and_reports_its_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let suite = write(dir.path(), "mem.toml", MEM_SWEEP);

    let plan = plumb_bare(&["plan", &suite]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(text.contains("8 runs (4 variants × 2 repeats)"), "{text}");
    assert!(text.contains("estimated time"), "{text}");
    assert!(!store.exists(), "plan writes nothing");

    let o = plumb(&store, &["run", &suite]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 8);
    // A B C D A B C D: repeats interleave, and repeat r uses seed + r.
    let order: Vec<(String, String)> = runs
        .iter()
        .map(|r| {
            (
                r["options"]["variant"].as_str().unwrap().to_string(),
                r["seed"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let variants: Vec<&str> = order.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(
        variants,
        ["mem/t1", "mem/t2", "nul/t1", "nul/t2", "mem/t1", "mem/t2", "nul/t1", "nul/t2"]
    );
    assert!(order[..4].iter().all(|(_, s)| s == "11"));
    assert!(order[4..].iter().all(|(_, s)| s == "12"));
    // Every run belongs to the suite, keeps its plan, and repeats form one group.
    let suite_id = runs[0]["suite_id"].as_i64().unwrap();
    let mut groups: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for r in &runs {
        assert_eq!(r["suite_id"].as_i64(), Some(suite_id));
        assert_eq!(r["status"], "ok");
        assert!(r["plan"]["params"]["threads"].as_u64().is_some());
        groups
            .entry(r["options"]["variant"].as_str().unwrap())
            .or_default()
            .push(r["group_id"].as_i64().unwrap());
    }
    for (v, g) in &groups {
        assert_eq!(g.len(), 2, "{v}");
        assert_eq!(g[0], g[1], "{v}: repeats share a group");
    }

    let sel = format!("s{suite_id}");
    let md = plumb(&store, &["report", &sel, "--format", "md"]);
    assert!(md.status.success(), "{}", stderr(&md));
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("### readrandom vs threads: mem · reads"),
        "{md}"
    );
    assert!(md.contains("| threads | ops/s |"), "{md}");
    assert!(md.contains("scaling"), "{md}");
    let html = dir.path().join("r.html");
    let o = plumb(
        &store,
        &[
            "report",
            &sel,
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(r#"data-chart="sweep""#) && page.contains(r#"data-axis="threads""#));
}

#[test]
fn a_suite_killed_midway_resumes_with_no_run_missing_and_none_run_twice() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let suite = write(
        dir.path(),
        "slow.toml",
        &MEM_SWEEP.replace("duration = 0.3", "duration = 0.5"),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["run", &suite, "--store", store.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once three runs exist: two finished and one in progress.
    common::wait_for_runs(&store, 3, 120);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = runs_json(&store);
    assert!(before.len() < 8, "killed before the end");
    // The killed run is not left `running`: the next plumb to open the store saw its
    // process gone and marked it interrupted.
    assert!(
        before.iter().all(|r| r["status"] != "running"),
        "a run left running by the kill: {before:?}"
    );
    assert_eq!(
        before
            .iter()
            .filter(|r| r["status"] == "interrupted")
            .count(),
        1
    );

    // Every planned run finished exactly once; the killed one is marked interrupted.
    let after = common::resumed_once(&store, &suite, 8);
    // Runs finished before the kill were kept, not run again.
    for r in before.iter().filter(|r| r["status"] == "ok") {
        assert!(after
            .iter()
            .any(|a| a["id"] == r["id"] && a["status"] == "ok"));
    }
    // Nothing left to resume now.
    let o = plumb(&store, &["run", &suite, "--resume"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no unfinished run"), "{}", stderr(&o));
}

#[test]
fn rerun_stores_a_plan_identical_to_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let first = ok_json(&plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--num",
            "3000",
            "--duration",
            "0.3",
            "--threads",
            "2",
            "--benchmarks",
            "fillrandom,readrandom",
            "--distribution",
            "zipfian:0.9",
            "--json",
        ],
    ));
    let id = first["run"]["id"].as_i64().unwrap().to_string();
    let o = plumb(&store, &["rerun", &id, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0]["id"], runs[1]["id"]);
    assert!(runs[0]["plan"].is_object());
    assert_eq!(
        runs[0]["plan"], runs[1]["plan"],
        "the rerun's plan is the original's"
    );
    assert_eq!(runs[0]["plan_hash"], runs[1]["plan_hash"]);
    assert_eq!(runs[0]["seed"], runs[1]["seed"]);
    // A run without a stored plan (an older store) is refused with its command.
    let o = plumb(&store, &["rerun", "999"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn suite_errors_name_file_line_and_column_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let cases: &[(&str, &str, &str)] = &[
        (
            "duration = 0.3",
            "duraton = 0.3",
            ":8:1: unknown field `duraton`",
        ),
        ("num = 2000", "num = \"lots\"", ":7:7: invalid type"),
        (
            "engine = \"memory\"",
            "engine = \"memory\"\noptions = { cache_size = 1 }",
            "unknown field `cache_size`",
        ),
        (
            "engine = \"null\"",
            "engine = \"nul\"",
            ":16:10: target \"nul\": engine \"nul\" is unknown",
        ),
        (
            "threads = [1, 2]",
            "threads = []",
            ":23:11: sweep.threads is empty",
        ),
        (
            "name = \"nul\"",
            "name = \"mem\"",
            "used twice (first on line 11)",
        ),
        (
            "\"readrandom\"",
            "\"readrandmo\"",
            ":20:21: workload \"reads\": unknown step",
        ),
    ];
    for (from, to, needle) in cases {
        let suite = write(dir.path(), "bad.toml", &MEM_SWEEP.replace(from, to));
        for o in [
            plumb_bare(&["plan", &suite]),
            plumb(&store, &["run", &suite]),
        ] {
            assert_eq!(o.status.code(), Some(2), "{to}: {}", stderr(&o));
            let e = stderr(&o);
            assert!(e.contains("bad.toml:") && e.contains(needle), "{to}: {e}");
        }
    }
    assert!(!store.exists(), "no store written for a bad suite");

    // More space than the filesystem has is refused up front.
    let huge = write(
        dir.path(),
        "huge.toml",
        "[params]\nnum = 1000000000000\n[[target]]\nname = \"r\"\nengine = \"rocksdb\"\n\
         [[workload]]\nname = \"w\"\nsteps = [\"fillseq\"]\n",
    );
    let o = plumb(&store, &["run", &huge]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("free"), "{}", stderr(&o));
    assert!(
        !store.exists(),
        "a suite too big for the disk writes nothing"
    );
}

#[test]
fn a_rocksdb_size_sweep_is_read_as_measured() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let suite = write(
        dir.path(),
        "size.toml",
        &format!(
            r#"
dir = "{}"
[params]
duration = 0.5
[[target]]
name = "rocks"
engine = "rocksdb"
[target.options]
cache_size = 1048576
write_buffer_size = 1048576
use_direct_reads = true
[[workload]]
name = "reads"
steps = ["fillseq", "flush", "readrandom"]
[[size]]
name = "small"
num = 2000
[[size]]
name = "big"
num = 40000
"#,
            dir.path().join("data").display()
        ),
    );
    let o = plumb(&store, &["run", &suite]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_json(&store);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["options"]["rocksdb.cache_size"], "1048576");
    // Each run's data dir was fresh and is gone.
    for r in &runs {
        assert!(!Path::new(r["data_dir"].as_str().unwrap()).exists());
    }
    let o = plumb(&store, &["report", "s1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("readrandom vs size (keys or rows)"), "{text}");
    assert!(text.contains("small") && text.contains("big"), "{text}");
}

#[test]
fn the_suite_reference_names_every_engine_kv_knows() {
    let o = plumb_bare(&["kv", "--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
    let list = help
        .split("Engine: one of ")
        .nth(1)
        .and_then(|rest| rest.split(" (null").next())
        .expect("kv --help names its engines");
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/suite.md")).unwrap();
    let engines: Vec<&str> = list.split(", ").map(str::trim).collect();
    assert!(engines.len() >= 3 && engines.contains(&"rocksdb"), "{list}");
    for e in engines {
        let e = e.split_whitespace().last().unwrap_or(e);
        assert!(
            doc.contains(e),
            "docs/suite.md's engine list lacks {e}, which plumb kv --engine takes"
        );
    }
}

#[test]
fn the_option_reference_is_generated_from_the_definitions() {
    let o = plumb_bare(&["options"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let generated = String::from_utf8_lossy(&o.stdout);
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/options.md")).unwrap();
    assert_eq!(
        generated, committed,
        "docs/options.md is stale: regenerate it with `plumb options > docs/options.md`"
    );
    for key in [
        "compaction_style",
        "fill_threads",
        "--cache-size",
        "--depths",
    ] {
        assert!(generated.contains(key), "{key}");
    }
}

/// Writes `suite` (and the files it names) into a fresh directory, then asserts that
/// `plumb plan` and `plumb run` both refuse it naming `want` before anything runs.
fn refused_when_planned(files: &[(&str, &str)], suite: &str, want: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    for (name, body) in files {
        write(dir.path(), name, body);
    }
    let body = suite.replace("DATA", &dir.path().join("data").display().to_string());
    let suite = write(dir.path(), "suite.toml", &body);
    for o in [
        plumb_bare(&["plan", &suite]),
        plumb(&store, &["run", &suite]),
    ] {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for w in want {
            assert!(err.contains(w), "{w:?} not in: {err}");
        }
    }
    assert!(!store.exists(), "a refused suite writes no store");
    assert!(!dir.path().join("data").exists(), "nothing was started");
}

#[test]
fn a_suites_own_files_are_checked_when_planned() {
    // A misspelt key in a mix file: the fillseq before the mix step never runs.
    refused_when_planned(
        &[(
            "m.toml",
            "[keys]\nbogus = 1\n\n[[op]]\nkind = \"get\"\nweight = 1\n",
        )],
        r#"
dir = "DATA"
[params]
num = 100
mix = "m.toml"
[[target]]
name = "mem"
engine = "memory"
[[workload]]
name = "mixed"
steps = ["fillseq", "mix"]
"#,
        &["m.toml:2:", "keys.bogus"],
    );
    // A pgbench script that does not parse, named by its file and line.
    refused_when_planned(
        &[("bad.sql", "\\set aid random(1, 100\nSELECT :aid;\n")],
        r#"
dir = "DATA"
[sql]
duration = 1
script = ["bad.sql"]
[[target]]
name = "pg"
server = "postgres"
[[workload]]
name = "mine"
sql = ["pgbench-load", "script"]
"#,
        &["bad.sql:1"],
    );
    // A Lua script with a syntax error.
    refused_when_planned(
        &[("bad.lua", "function event(\n  nope nope\nend\n")],
        r#"
dir = "DATA"
[sql]
duration = 1
lua = "bad.lua"
[[target]]
name = "pg"
server = "postgres"
[[workload]]
name = "mine"
sql = ["lua-prepare", "lua"]
"#,
        &["bad.lua"],
    );
}
