//! Faults inside a measured step, on real servers plumb starts (installed by
//! scripts/setup.sh): PostgreSQL and MariaDB (InnoDB) held at a fixed rate through a
//! clean restart and a kill in one step. The clients must reconnect and the step finish;
//! each fault's outage must be measured inside its window, with the server's recovery
//! phases read from its log. The shaded windows of the HTML report are checked in
//! headless Chromium. Nothing here asserts how long this machine took: only the shape
//! of what was stored and what the mechanism guarantees (a killed server breaks every
//! connection, so clients meet errors).

mod common;

use common::{html_report, json_of, plumb, step};
use headless_chrome::{Browser, LaunchOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";

/// A restart at 3 s and a kill at 7 s of a 12 s update-index step at 200 tx/s.
fn faulted(store: &Path, dir: &Path, server: &str, engine: Option<&str>) -> Value {
    let dir = dir.to_str().unwrap();
    let mut args = vec![
        "sql",
        "--server",
        server,
        "--steps",
        "load,update-index",
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--rate",
        "200",
        "--duration",
        "12",
        "--warmup",
        "1",
        "--cache-mb",
        "128",
        "--wait-hz",
        "0",
        "--fault",
        "at=3s,kind=restart",
        "--fault",
        "at=7s,kind=kill",
        "--json",
        "--dir",
        dir,
    ];
    if let Some(e) = engine {
        args.extend(["--engine", e]);
    }
    json_of(&plumb(store, &args))
}

/// The phases' names of one fault.
fn phase_names(f: &Value) -> Vec<String> {
    f["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

/// What every faulted step must hold, whatever the server.
fn check_shape(run: &Value) -> Vec<Value> {
    let s = step(run, "update-index");
    assert_eq!(s["status"], "ok", "{s}");
    let sum = &s["summary"];
    let report = &sum["faults"];
    assert_eq!(report["timeout_s"], 1.0);
    let faults = report["faults"].as_array().unwrap().clone();
    let kinds: Vec<&str> = faults.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["restart", "kill"]);
    let window_end = sum["secs"].as_f64().unwrap();
    for (f, (due, next)) in faults.iter().zip([(3.0, 7.0), (7.0, window_end)]) {
        let at = f["at_s"].as_f64().unwrap();
        assert!(at >= due && at < next, "{f}");
        assert!(f["error"].is_null(), "{f}");
        assert!(f["back_s"].as_f64().unwrap() > 0.0, "{f}");
        // A restart and a kill both end every session: the clients met errors,
        // reconnected, and an op came through before the step ended.
        assert!(f["errors"].as_u64().unwrap() >= 1, "{f}");
        let outage = f["outage_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("no outage: {f}"));
        let first = f["first_success_s"].as_f64().unwrap();
        assert!(outage > 0.0 && first <= outage, "{f}");
        // The outage is measured inside the fault's window.
        let w = f["window"].as_array().unwrap();
        let (w0, w1) = (w[0].as_f64().unwrap(), w[1].as_f64().unwrap());
        assert_eq!(w0, at);
        assert!(at + outage <= w1 + 1e-9 && w1 <= next + 1e-9, "{f}");
        assert!(f["p99_us"].as_f64().unwrap() > 0.0 && f["pmax_us"].as_f64().is_some());
        let names = phase_names(f);
        assert!(names.iter().any(|n| n == "ready"), "{names:?}");
    }
    let restart = phase_names(&faults[0]);
    assert!(restart.iter().any(|n| n == "shut down"), "{restart:?}");
    let steady = &report["steady"];
    assert!(steady["secs"].as_f64().unwrap() >= 1.0, "{steady}");
    assert!(steady["p99_us"].as_f64().is_some());
    // Every second of the window is stored, the faults' seconds too (and the closing
    // mark's few ms).
    assert!(s["intervals"].as_array().unwrap().len() >= 12, "{s}");
    // The server's counters go on each second after the restarts, from a new
    // connection: the last second has rates again.
    let seconds = sum["server_seconds"].as_array().unwrap();
    let last = &seconds[seconds.len() - 2]["rates"];
    assert!(
        last.as_object().is_some_and(|r| !r.is_empty()),
        "{seconds:?}"
    );
    // The step's config says what it was put through.
    let config = &s["config"];
    assert_eq!(config["faults"][1], "at=7s,kind=kill", "{config}");
    faults
}

#[test]
fn postgres_through_a_restart_and_a_kill_in_one_step() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let run = faulted(&store, d.path(), "postgres", None);
    let faults = check_shape(&run);
    // PostgreSQL logs its crash recovery after the kill, and its redo.
    let kill = phase_names(&faults[1]);
    for want in ["crash recovery", "redo done"] {
        assert!(kill.iter().any(|n| n == want), "{kill:?}");
    }
    // The terminal report has the faults table and the recovery under it.
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let show = plumb(&store, &["show", &id]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("faults: outage = "), "{text}");
    assert!(text.contains("update-index kill at "), "{text}");
    shaded_in_chromium(&store, &id);
}

#[test]
fn innodb_through_a_restart_and_a_kill_in_one_step() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let run = faulted(&store, d.path(), "mariadb", Some("innodb"));
    check_shape(&run);
}

#[test]
fn bad_faults_are_refused_before_a_server_starts() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    for (args, says) in [
        (vec!["--fault", "at=3s"], "no kind"),
        (vec!["--fault", "at=30s,kind=kill"], "inside the 5 s window"),
        (vec!["--fault", "at=1s,kind=disk-stall:2s"], "device-mapper"),
        (
            vec![
                "--fault",
                "at=1s,kind=kill",
                "--url",
                "postgres://u@127.0.0.1:1/db",
            ],
            "server plumb starts",
        ),
    ] {
        let mut all = vec!["sql", "--steps", "point-query"];
        if !args.contains(&"--url") {
            all.extend(["--server", "postgres"]);
        }
        all.extend(args);
        let o = plumb(&store, &all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{all:?}: {err}");
    }
}

/// The report's throughput chart shades both faults' windows, seen by a browser: two
/// bands of real width, in time order, each under its kind.
fn shaded_in_chromium(store: &Path, id: &str) {
    let html = html_report(store, &[id]);
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("report.html");
    std::fs::write(&file, html).unwrap();
    let browser = Browser::new(
        LaunchOptions::default_builder()
            .path(Some(PathBuf::from(CHROMIUM)))
            .sandbox(false)
            .headless(true)
            .window_size(Some((1366, 1500)))
            .build()
            .unwrap(),
    )
    .unwrap_or_else(|e| panic!("start {CHROMIUM} (apt-get install chromium): {e}"));
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(60));
    tab.navigate_to(&format!("file://{}", file.display()))
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    let js = r#"JSON.stringify([...document.querySelectorAll('svg[data-chart="throughput"][data-step="update-index"] rect[data-mark="fault"]')].map(r => { const b = r.getBoundingClientRect(); return {x: b.left, w: b.width, h: b.height, op: getComputedStyle(r).fillOpacity, label: r.textContent}; }))"#;
    let got = tab.evaluate(js, false).unwrap().value.unwrap();
    let bands: Vec<Value> = serde_json::from_str(got.as_str().unwrap()).unwrap();
    assert_eq!(bands.len(), 2, "{bands:?}");
    for b in &bands {
        assert!(
            b["w"].as_f64().unwrap() >= 1.0 && b["h"].as_f64().unwrap() > 50.0,
            "{b}"
        );
        assert_eq!(b["op"], "0.15");
    }
    assert!(bands[0]["x"].as_f64() < bands[1]["x"].as_f64(), "{bands:?}");
    assert!(bands[0]["label"].as_str().unwrap().starts_with("restart"));
    assert!(bands[1]["label"].as_str().unwrap().starts_with("kill"));
    // The faults table is there too, a row per fault.
    let rows = tab
        .evaluate(
            r#"document.querySelectorAll('table[data-table="faults"] tr[data-fault]').length"#,
            false,
        )
        .unwrap()
        .value
        .unwrap();
    assert_eq!(rows, 2);
}
