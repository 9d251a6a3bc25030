//! `--threads-profile`: a closed-loop step whose running threads (KV workers, SQL
//! connections) follow phases over time, stored per second and read phase by phase.

mod common;

use common::{json_of, phase_row, plumb, stderr, step};
use serde_json::Value;

/// Each interval's stored thread count.
fn threads(s: &Value) -> Vec<f64> {
    s["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["secs"].as_f64().unwrap() > 0.5)
        .map(|i| i["threads"].as_f64().expect("threads per interval"))
        .collect()
}

#[test]
fn a_kv_step_runs_the_profiles_threads_second_by_second_and_shows_them_phase_by_phase() {
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
            "--threads-profile",
            "hold:1/1s,hold:2/1s,hold:0/1s,hold:2/1s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    // The fill runs --threads (1) throughout; the read step the profile's peak.
    let fill = step(&run, "fillseq");
    assert!(fill["summary"]["threads_profile"].is_null());
    assert_eq!(fill["config"]["threads"], 1);
    let rr = step(&run, "readrandom");
    assert_eq!(rr["config"]["threads"], 2);
    assert_eq!(
        rr["summary"]["threads_profile"],
        "hold:1/1s,hold:2/1s,hold:0/1s,hold:2/1s"
    );
    // The timed profile set the step's length.
    let secs = rr["summary"]["secs"].as_f64().unwrap();
    assert!((3.9..4.5).contains(&secs), "{secs}");
    let got = threads(rr);
    assert_eq!(got.len(), 4, "{got:?}");
    for (g, want) in got.iter().zip([1.0, 2.0, 0.0, 2.0]) {
        assert!((g - want).abs() < 0.1, "{got:?}");
    }
    // The pause served (next to) nothing: a thread stops within a millisecond of the
    // count dropping, and the seconds around it ran at full speed.
    let ops: Vec<f64> = rr["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["ops"].as_f64().unwrap())
        .collect();
    assert!(ops[2] < 0.25 * ops[1].min(ops[3]), "{ops:?}");
    // Shown: each second's count, and a phase table with the clients beside what the
    // step served.
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let o = plumb(&store, &["show", &id, "--intervals"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("threads"), "{text}");
    let o = plumb(&store, &["show", &id]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("readrandom: clients hold:1/1s,hold:2/1s,hold:0/1s,hold:2/1s"),
        "{text}"
    );
    assert_eq!(
        phase_row(&text, "readrandom", "phase")[2],
        "threads",
        "{text}"
    );
    let row = phase_row(&text, "readrandom", "hold:2/1s");
    let clients: f64 = row[2].parse().unwrap();
    assert!((clients - 2.0).abs() < 0.1, "{row:?}");
}

#[test]
fn a_lua_script_runs_its_connections_as_the_profile_counts_them() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let data = d.path().join("data");
    let o = plumb(
        &store,
        &[
            "sql",
            "--server",
            "postgres",
            "--lua",
            "/usr/share/sysbench/oltp_point_select.lua",
            "--lua-opt",
            "table-size=2000",
            "--threads-profile",
            "hold:1/1s,hold:3/1s,hold:2/1s",
            "--warmup",
            "0",
            "--json",
            "--dir",
            data.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    // The script's prepare runs on --threads (1); the measured step on the peak.
    let prep = step(&run, "lua-prepare");
    assert_eq!(prep["status"], "ok", "{}", prep["error"]);
    assert!(prep["summary"]["threads_profile"].is_null());
    let s = step(&run, "lua");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    assert_eq!(s["config"]["threads"], 3, "{}", s["config"]);
    let got = threads(s);
    assert_eq!(got.len(), 3, "{got:?}");
    for (g, want) in got.iter().zip([1.0, 3.0, 2.0]) {
        assert!((g - want).abs() < 0.1, "{got:?}");
    }
    assert!(
        s["summary"]["by_op"]["transaction"]["ops"]
            .as_u64()
            .unwrap()
            > 100
    );
}

#[test]
fn a_bad_threads_profile_gets_one_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    for (args, want) in [
        (
            vec!["--threads-profile", "hold:1/1s,jump:3"],
            "threads profile phase 2 (\"jump:3\")",
        ),
        (
            vec!["--threads-profile", "hold:0/2s"],
            "never runs a thread",
        ),
        (
            vec!["--threads-profile", "hold:2/2s", "--rate", "100"],
            "runs closed-loop clients",
        ),
        (
            vec!["--threads-profile", "hold:2k/2s"],
            "asks for 2000 threads, more than 1024",
        ),
    ] {
        let mut a = vec!["kv", "--engine", "memory"];
        a.extend(args.iter().copied());
        let o = plumb(&store, &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("--threads-profile") && e.contains(want), "{e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
}
