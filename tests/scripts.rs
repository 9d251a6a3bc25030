//! The user's own pgbench scripts through `plumb sql`, end to end on a PostgreSQL plumb
//! starts: files and built-ins mixed by weight, each script timed apart, the texts
//! stored with the run so `plumb rerun` runs them after the file is gone, a suite that
//! names a script beside it, and bad scripts refused before a server starts, naming
//! the file and line.

mod common;

use common::{json_of, plumb, stderr, step};

const MINE: &str = "\
\\set aid random_zipfian(1, 100000 * :scale, 1.2)
\\set delta random(-5000, 5000)
SELECT abalance AS bal FROM pgbench_accounts WHERE aid = :aid \\gset
\\if :bal IS NOT NULL
  UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
\\endif
";

#[test]
fn scripts_and_builtins_mix_by_weight_are_stored_and_rerun() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let file = d.path().join("mine.sql");
    std::fs::write(&file, MINE).unwrap();
    let spec = format!("{}@3", file.display());
    let data = d.path().join("data");
    let o = plumb(
        &store,
        &[
            "sql",
            "--server",
            "postgres",
            "--steps",
            "pgbench-load,script",
            "--script",
            &spec,
            "-b",
            "select-only@1",
            "-M",
            "prepared",
            "--threads",
            "2",
            "--duration",
            "2",
            "--warmup",
            "0",
            "--json",
            "--dir",
            data.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    let s = step(&run, "script");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    let by = s["summary"]["by_op"].as_object().unwrap();
    let name = file.display().to_string();
    let mine = by[&name]["ops"].as_u64().unwrap() as f64;
    let select = by["builtin:select-only"]["ops"].as_u64().unwrap() as f64;
    // Weights 3:1: the share of mine.sql is 0.75, with a binomial sd under 0.01 for
    // the thousands of transactions two seconds give; 0.1 is more than 10 sd.
    let share = mine / (mine + select);
    assert!((share - 0.75).abs() < 0.1, "{share}: {by:?}");
    let config = &s["config"];
    assert_eq!(config["query_mode"], "prepared", "{config}");
    let scripts = config["scripts"].as_array().unwrap();
    assert_eq!(scripts.len(), 2);
    assert_eq!(scripts[0]["weight"], 3);
    assert_eq!(scripts[0]["sha256"].as_str().unwrap().len(), 64);

    // The file goes; the rerun runs the text the run kept.
    std::fs::remove_file(&file).unwrap();
    let id = run["run"]["id"].to_string();
    let o = plumb(&store, &["rerun", &id, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = json_of(&o);
    let s2 = step(&again, "script");
    assert_eq!(s2["status"], "ok", "{}", s2["error"]);
    assert_eq!(s2["config"]["scripts"], s["config"]["scripts"]);
}

#[test]
fn a_suite_names_a_script_beside_it() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    std::fs::write(d.path().join("mine.sql"), MINE).unwrap();
    let suite = d.path().join("mine.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
seed = 5
dir = "{}"

[sql]
duration = 1
warmup = 0
script = ["mine.sql@2"]
builtin = ["tpcb-like"]
define = ["unused=1"]

[[target]]
name = "pg"
server = "postgres"

[[workload]]
name = "mine"
sql = ["pgbench-load", "script"]
"#,
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let o = plumb(&store, &["run", suite.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = common::runs_json(&store);
    assert_eq!(runs.len(), 1);
    let run = common::ok_json(&plumb(
        &store,
        &["show", &runs[0]["id"].to_string(), "--json"],
    ));
    let s = step(&run, "script");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    let by = s["summary"]["by_op"].as_object().unwrap();
    assert!(
        by.contains_key("mine.sql") && by.contains_key("builtin:tpcb-like"),
        "{by:?}"
    );
}

#[test]
fn bad_scripts_are_refused_before_a_server_starts() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let bad = d.path().join("bad.sql");
    std::fs::write(&bad, "\\set aid random(1, 10\nSELECT :aid;\n").unwrap();
    let shell = d.path().join("shell.sql");
    std::fs::write(&shell, "SELECT 1;\n\\shell date\n").unwrap();
    for (args, want) in [
        (
            vec!["--script", bad.to_str().unwrap()],
            "bad.sql:1: \\set aid:",
        ),
        (
            vec!["--script", shell.to_str().unwrap()],
            "shell.sql:2: \\shell is not supported",
        ),
        (
            vec!["--script", "/nonexistent/x.sql@2"],
            "/nonexistent/x.sql: cannot read the script",
        ),
        (vec!["-b", "tpcc"], "no such built-in script"),
        (
            vec!["-b", "select-only", "-M", "fast"],
            "use simple, extended or prepared",
        ),
        (
            vec!["-b", "select-only", "-D", "novalue"],
            "write NAME=VALUE",
        ),
        (
            vec!["-b", "select-only", "--steps", "pgbench-load"],
            "--steps has no `script`",
        ),
    ] {
        let mut a = vec!["sql", "--server", "postgres"];
        a.extend(args.iter().copied());
        let o = plumb(&store, &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    assert!(
        !store.exists() || common::runs_json(&store).is_empty(),
        "nothing stored"
    );
}
