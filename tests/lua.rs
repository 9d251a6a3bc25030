//! sysbench Lua scripts through `plumb sql --lua`, end to end on a PostgreSQL plumb
//! starts: the script's prepare command as the lua-prepare step, its events through
//! the one timed loop with each kind of statement timed apart, the script and the
//! module it requires stored with the run so `plumb rerun` runs them after the files
//! are gone, a suite that names a script beside it, and bad input refused before a
//! server starts, naming the file and line or the option.

mod common;

use common::{json_of, plumb, stderr, step};

/// A copy of sysbench's oltp_point_select.lua and the module it requires, in `dir`.
fn copy_point_select(dir: &std::path::Path) -> std::path::PathBuf {
    for f in ["oltp_point_select.lua", "oltp_common.lua"] {
        std::fs::copy(format!("/usr/share/sysbench/{f}"), dir.join(f))
            .unwrap_or_else(|e| panic!("/usr/share/sysbench/{f} (Debian's sysbench): {e}"));
    }
    dir.join("oltp_point_select.lua")
}

#[test]
fn a_script_and_its_module_are_stored_timed_by_statement_and_rerun() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let file = copy_point_select(d.path());
    let data = d.path().join("data");
    let o = plumb(
        &store,
        &[
            "sql",
            "--server",
            "postgres",
            "--lua",
            file.to_str().unwrap(),
            "--lua-opt",
            "table-size=5000",
            "--lua-opt",
            "rand_type=uniform",
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
    let prep = step(&run, "lua-prepare");
    assert_eq!(prep["status"], "ok", "{}", prep["error"]);
    let s = step(&run, "lua");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    let by = s["summary"]["by_op"].as_object().unwrap();
    let txns = by["transaction"]["ops"].as_u64().unwrap();
    let selects = by["select"]["ops"].as_u64().unwrap();
    assert!(txns > 100, "{by:?}");
    // oltp_point_select: one SELECT per event, no BEGIN/COMMIT. An event in flight
    // when the window closes may have sent its statement without being counted.
    assert!(selects.abs_diff(txns) <= 2, "{by:?}");
    assert!(by.get("begin").is_none_or(|b| b["ops"] == 0), "{by:?}");
    let config = &s["config"];
    let lua = config["lua"].as_array().unwrap();
    let names: Vec<&str> = lua.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, [file.to_str().unwrap(), "oltp_common"], "{config}");
    assert!(lua
        .iter()
        .all(|l| l["sha256"].as_str().unwrap().len() == 64));

    // The files go; the rerun runs the texts the run kept.
    std::fs::remove_file(&file).unwrap();
    std::fs::remove_file(d.path().join("oltp_common.lua")).unwrap();
    let id = run["run"]["id"].to_string();
    let o = plumb(&store, &["rerun", &id, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = json_of(&o);
    let s2 = step(&again, "lua");
    assert_eq!(s2["status"], "ok", "{}", s2["error"]);
    assert_eq!(s2["config"]["lua"], s["config"]["lua"]);
}

#[test]
fn a_suite_names_a_lua_script_beside_it() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    copy_point_select(d.path());
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
lua = "oltp_point_select.lua"
lua_opt = ["table_size=1000"]

[[target]]
name = "pg"
server = "postgres"

[[workload]]
name = "mine"
sql = ["lua-prepare", "lua"]
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
    let s = step(&run, "lua");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    assert_eq!(s["config"]["lua_opt"][0], "table_size=1000");
    assert!(s["summary"]["by_op"]["select"]["ops"].as_u64().unwrap() > 0);
}

#[test]
fn bad_lua_input_is_refused_before_a_server_starts() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let file = d.path().join("bad.lua");
    std::fs::write(&file, "function event()\n  if then\nend\n").unwrap();
    let run = |args: &[&str]| {
        let mut a = vec!["sql", "--server", "postgres"];
        a.extend_from_slice(args);
        let o = plumb(&store, &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        stderr(&o)
    };
    let e = run(&["--lua", file.to_str().unwrap()]);
    assert!(e.contains("bad.lua:2:"), "{e}");
    let e = run(&["--lua", "/nonexistent/x.lua"]);
    assert!(
        e.contains("/nonexistent/x.lua") && e.contains("cannot read"),
        "{e}"
    );
    let e = run(&[
        "--lua",
        "/usr/share/sysbench/oltp_read_write.lua",
        "--lua-opt",
        "point_select=3",
    ]);
    assert!(
        e.contains("point_select") && e.contains("point_selects"),
        "{e}"
    );
    let e = run(&["--lua-opt", "tables=2"]);
    assert!(e.contains("--lua FILE"), "{e}");
    // No store was written: nothing ran.
    assert!(!store.exists() || common::runs_json(&store).is_empty());
}
