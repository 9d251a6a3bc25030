//! `plumb icount`: instructions per op counted under callgrind (installed by
//! scripts/setup.sh), deterministic where wall time is not: two runs of one build agree
//! to well under 0.5%, and a CPU cost of ~2% injected as an exact number of rounds of
//! work (`PLUMB_TEST_MEMORY_OP_ROUNDS`) is a regression to `plumb check` with one run a
//! side. Nothing here depends on how busy the machine is: callgrind counts
//! instructions, not time.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{ok_json, plumb, stderr, step};

/// `plumb icount --json -- kv ARGS --store STORE`, with `rounds` of injected work per
/// memory-engine op (0: none).
fn icount(store: &Path, kv: &[&str], rounds: u64) -> Output {
    icount_with(store, &[], kv, rounds)
}

/// [`icount`] with `flags` of icount's own before the `--`.
fn icount_with(store: &Path, flags: &[&str], kv: &[&str], rounds: u64) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plumb"));
    c.arg("icount")
        .args(flags)
        .args(["--json", "--", "kv"])
        .args(kv)
        .arg("--store")
        .arg(store)
        .env_remove("PLUMB_TEST_MEMORY_OP_NS");
    if rounds > 0 {
        c.env("PLUMB_TEST_MEMORY_OP_ROUNDS", rounds.to_string());
    } else {
        c.env_remove("PLUMB_TEST_MEMORY_OP_ROUNDS");
    }
    c.output().expect("run plumb icount")
}

/// The step's instructions per op, which must have been counted.
fn per_op(run: &Value, name: &str) -> f64 {
    step(run, name)["summary"]["hw"]["instructions_op"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: no instructions_op in {}", step(run, name)))
}

const MEMORY: [&str; 10] = [
    "--engine",
    "memory",
    "--benchmarks",
    "fillseq,readrandom",
    "--num",
    "2000",
    "--ops",
    "20000",
    "--seed",
    "7",
];

#[test]
fn memory_counts_agree_run_to_run_and_two_percent_more_work_is_a_regression_with_one_run_a_side() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let a1 = ok_json(&icount(&store, &MEMORY, 0));
    let a2 = ok_json(&icount(&store, &MEMORY, 0));
    let (x, y) = (per_op(&a1, "readrandom"), per_op(&a2, "readrandom"));
    assert!(x > 100.0, "a read is more than 100 instructions: {x}");
    assert!(
        (y / x - 1.0).abs() < 0.005,
        "A/A counts differ: {x} and {y}"
    );
    // Every op of the step was counted, and only once: the fill covered --num keys.
    assert_eq!(step(&a1, "readrandom")["summary"]["ops"], 20000);
    assert!(per_op(&a1, "fillseq") > 100.0);
    // Marked as counted: its own history, never judged against native runs.
    assert_eq!(a1["run"]["plan"]["under"], "callgrind", "{}", a1["run"]);

    // About 2% of a read's instructions, as rounds of the memory engine's injected work
    // (a round is about 8 instructions, rounded up, plus the call into it: 2-3%).
    let rounds = ((0.02 * x) / 8.0).ceil() as u64;
    let b = ok_json(&icount(&store, &MEMORY, rounds));
    let z = per_op(&b, "readrandom");
    assert!(z / x > 1.01, "{rounds} rounds added too little: {x} -> {z}");
    let check = |new: &Value, base: &Value| {
        let (n, b) = (new["run"]["id"].to_string(), base["run"]["id"].to_string());
        plumb(
            &store,
            &[
                "check",
                &n,
                "--base",
                &b,
                "--metric",
                "instructions_op",
                "--step",
                "readrandom",
                "--threshold",
                "1",
                "--json",
            ],
        )
    };
    let slower = check(&b, &a1);
    assert_eq!(slower.status.code(), Some(1), "{}", stderr(&slower));
    let v: Value = serde_json::from_slice(&slower.stdout).unwrap();
    assert_eq!(v["results"][0]["verdict"], "regression", "{v}");
    let same = check(&a2, &a1);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));

    // A native run beside counted ones: check refuses to judge across them.
    let native: Vec<&str> = [&["kv"][..], &MEMORY[..], &["--json"][..]].concat();
    let native = plumb(&store, &native);
    let native = ok_json(&native);
    assert!(
        native["run"]["plan"].get("under").is_none(),
        "{}",
        native["run"]
    );
    let mixed = check(&native, &a1);
    assert!(!mixed.status.success(), "a mixed check must not pass");
    assert!(stderr(&mixed).contains("callgrind"), "{}", stderr(&mixed));
}

/// The names of a run's steps, in order.
fn step_names(run: &Value) -> Vec<&str> {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

/// The LSM's shape a step started from.
fn shape<'a>(run: &'a Value, name: &str) -> &'a Value {
    &step(run, name)["summary"]["lsm_start"]
}

#[test]
fn rocksdb_readrandom_counts_agree_run_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let kv = [
        "--engine",
        "rocksdb",
        "--benchmarks",
        "fillseq,readrandom",
        "--num",
        "5000",
        "--ops",
        "5000",
        "--seed",
        "11",
    ];
    let a1 = ok_json(&icount(&store, &kv, 0));
    let a2 = ok_json(&icount(&store, &kv, 0));
    let (x, y) = (per_op(&a1, "readrandom"), per_op(&a2, "readrandom"));
    assert!(
        x > 500.0,
        "a RocksDB read is more than 500 instructions: {x}"
    );
    assert!(
        (y / x - 1.0).abs() < 0.005,
        "A/A counts differ: {x} and {y}"
    );
    // The engine was settled before the read step, by steps inserted into the plan:
    // both runs' reads started from one tree, the memtable flushed, stored with the
    // count.
    let settled = [
        "fillseq",
        "settle.flush",
        "settle.waitforcompaction",
        "readrandom",
    ];
    for run in [&a1, &a2] {
        assert_eq!(step_names(run), settled);
        assert_eq!(step(run, "settle.flush")["kind"], "flush");
        assert!(run["run"]["command"]
            .as_str()
            .is_some_and(|c| c.contains("--settle")));
    }
    let files = |run: &Value| -> Vec<(u64, u64)> {
        let s = shape(run, "readrandom");
        assert_eq!(s["memtable_entries"], 0, "the memtable was flushed: {s}");
        s["levels"]
            .as_array()
            .unwrap_or_else(|| panic!("no levels in {s}"))
            .iter()
            .map(|l| (l["level"].as_u64().unwrap(), l["files"].as_u64().unwrap()))
            .collect()
    };
    assert!(!files(&a1).is_empty(), "the fill is in the tree's files");
    assert_eq!(files(&a1), files(&a2), "one tree under both counts");

    // --no-settle counts the plan as given: no inserted steps; the fill's 5000 keys are
    // still in the memtable when the reads start (far below its size).
    let unsettled = ok_json(&icount_with(&store, &["--no-settle"], &kv, 0));
    assert_eq!(step_names(&unsettled), ["fillseq", "readrandom"]);
    assert_eq!(shape(&unsettled, "readrandom")["memtable_entries"], 5000);
    assert!(per_op(&unsettled, "readrandom") > 500.0);
}

#[test]
fn what_icount_cannot_count_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(args)
            .output()
            .expect("run plumb")
    };
    let sql = run(&["icount", "--", "sql", "--server", "postgres"]);
    assert!(!sql.status.success());
    assert!(stderr(&sql).contains("own process"), "{}", stderr(&sql));
    let s = store.to_str().unwrap();
    let missing = run(&[
        "icount",
        "--valgrind",
        "/nonexistent/valgrind",
        "--",
        "kv",
        "--engine",
        "memory",
        "--store",
        s,
    ]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("/nonexistent/valgrind not found"),
        "{}",
        stderr(&missing)
    );
    assert!(!store.exists(), "nothing was stored");
    let repeat = run(&["icount", "--", "kv", "--engine", "memory", "--repeat", "3"]);
    assert!(!repeat.status.success());
    assert!(stderr(&repeat).contains("--repeat"), "{}", stderr(&repeat));
}
