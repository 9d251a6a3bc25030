//! RocksDB's own per-op breakdown (its PerfContext, `--perf-level`): stored for every
//! key-value step at the level asked for, counted from the window's start on each
//! measured thread (warm-up left out), and an engine without one says so.

mod common;

use common::{json_of, plumb, stderr, step};
use serde_json::Value;

fn kv(store: &std::path::Path, engine: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "kv",
        "--engine",
        engine,
        "--num",
        "20000",
        "--benchmarks",
        "fillrandom,readrandom",
        "--duration",
        "1",
        "--json",
    ];
    args.extend(extra);
    let o = plumb(store, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    json_of(&o)
}

#[test]
fn rocksdb_perf_context_is_stored_per_op_at_the_level_asked_for() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    // Level 4 times the parts; a second of warm-up before the window must not count:
    // every get looks in the memtable once, so with warm-up counted a get would seem
    // to look twice.
    let r = kv(&store, "rocksdb", &["--perf-level", "4", "--warmup", "1"]);
    let p = &step(&r, "readrandom")["summary"]["engine_perf"];
    assert_eq!(p["level"], 4, "{p}");
    let per_op = |k: &str| p["per_op"][k].as_f64().unwrap_or(0.0);
    let lookups = per_op("get_from_memtable_count");
    assert!(
        (0.95..1.3).contains(&lookups),
        "memtable lookups per get {lookups}: {p}"
    );
    assert!(per_op("get_from_memtable_time") > 0.0, "{p}");
    assert!(per_op("user_key_comparison_count") > 1.0, "{p}");
    let fill = &step(&r, "fillrandom")["summary"]["engine_perf"];
    assert!(
        fill["per_op"]["write_memtable_time"]
            .as_f64()
            .unwrap_or(0.0)
            > 0.0,
        "{fill}"
    );

    // The report leads with a line per step, the engine's own parts in it, before the
    // tables; the counters follow them.
    let id = r["run"]["id"].to_string();
    let text = String::from_utf8_lossy(&plumb(&store, &["show", &id]).stdout).to_string();
    let line = text
        .lines()
        .position(|l| l.starts_with("readrandom: ") && l.contains("inside the engine"))
        .unwrap_or_else(|| panic!("no line for readrandom: {text}"));
    let table = text
        .lines()
        .position(|l| l.trim_start().starts_with("ops_sec"))
        .unwrap_or_else(|| panic!("no table: {text}"));
    assert!(line < table, "the line comes before the tables: {text}");
    assert!(
        text.contains("inside the engine per op (RocksDB's PerfContext, level 4"),
        "{text}"
    );

    // Level 2 (RocksDB's own default) counts, and times nothing.
    let r = kv(&store, "rocksdb", &[]);
    let p = &step(&r, "readrandom")["summary"]["engine_perf"];
    assert_eq!(p["level"], 2, "{p}");
    let per_op = p["per_op"].as_object().unwrap();
    assert!(per_op.contains_key("get_from_memtable_count"), "{p}");
    assert!(
        !per_op.keys().any(|k| k.ends_with("_time")),
        "level 2 times nothing: {p}"
    );
    // Level 1 (db_bench's default) counts nothing and stores nothing.
    let r = kv(&store, "rocksdb", &["--perf-level", "1"]);
    assert!(step(&r, "readrandom")["summary"]["engine_perf"].is_null());
}

#[test]
fn an_engine_without_a_breakdown_says_so() {
    let d = tempfile::tempdir().unwrap();
    let r = kv(&d.path().join("s.sqlite"), "memory", &[]);
    let p = &step(&r, "readrandom")["summary"]["engine_perf"];
    assert!(
        p["unavailable"]
            .as_str()
            .is_some_and(|w| w.contains("memory keeps no per-op breakdown")),
        "{p}"
    );
}
