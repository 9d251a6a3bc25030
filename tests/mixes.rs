//! The user's own key-value workload: an op-mix file (`--benchmarks mix --mix FILE`) and
//! db_bench's mixgraph, end to end through `plumb kv`. A mix with every operation runs
//! on every engine of this build (the conformance test); YCSB's workloads and db_bench's
//! written as mix files (examples/mixes/) run as such; op shares follow the weights
//! exactly for a fixed seed and op count; the file's text is kept for `plumb rerun`;
//! bad files are refused naming the line.

mod common;

use common::{json_of, plumb, stderr, step};
use serde_json::Value;
use std::path::{Path, PathBuf};

const EVERY_OP: &str = r#"
name = "every-op"
[keys]
distribution = "zipfian"
theta = 0.9

[[op]]
kind = "get"
weight = 3
[[op]]
kind = "put"
weight = 2
value_size = { dist = "uniform", min = 50, max = 300 }
[[op]]
kind = "insert"
weight = 1
[[op]]
kind = "delete"
weight = 1
[[op]]
kind = "seek"
weight = 1
scan_length = { dist = "uniform", min = 1, max = 20 }
[[op]]
kind = "multiget"
weight = 1
keys = 8
[[op]]
kind = "rmw"
weight = 1
"#;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mixes")
}

/// The mix step's ops by kind, checked to add up to the step's.
fn by_op(s: &Value) -> Vec<(String, u64)> {
    let by = s["summary"]["by_op"].as_object().expect("by_op");
    let v: Vec<(String, u64)> = by
        .iter()
        .map(|(k, l)| (k.clone(), l["ops"].as_u64().unwrap()))
        .collect();
    let sum: u64 = v.iter().map(|x| x.1).sum();
    assert_eq!(sum, s["summary"]["ops"].as_u64().unwrap(), "{by:?}");
    v
}

/// The share of `name` among the ops `by_op` counted.
fn share(ops: &[(String, u64)], name: &str) -> f64 {
    let total: u64 = ops.iter().map(|x| x.1).sum();
    ops.iter().find(|(n, _)| n == name).map_or(0, |x| x.1) as f64 / total as f64
}

#[test]
fn a_mix_with_every_operation_runs_on_every_engine() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let mix = d.path().join("every-op.toml");
    std::fs::write(&mix, EVERY_OP).unwrap();
    let engines = plumb_targets::engines();
    assert!(engines.len() >= 4, "{engines:?}");
    for engine in engines {
        let o = plumb(
            &store,
            &[
                "kv",
                "--engine",
                engine,
                "--num",
                "2000",
                "--benchmarks",
                "fillseq,mix",
                "--mix",
                mix.to_str().unwrap(),
                "--ops",
                "3000",
                "--json",
            ],
        );
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        let run = json_of(&o);
        let s = step(&run, "mix");
        assert_eq!(s["status"], "ok", "{engine}: {}", s["error"]);
        let ops = by_op(s);
        let names: Vec<&str> = ops.iter().map(|(n, _)| n.as_str()).collect();
        for want in ["delete", "get", "insert", "multiget", "put", "rmw", "seek"] {
            assert!(names.contains(&want), "{engine}: {names:?}");
        }
        assert_eq!(s["summary"]["verify"]["mismatches"], 0, "{engine}");
    }
}

#[test]
fn op_shares_follow_the_weights_and_the_examples_run_as_written() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    // 100000 ops on one thread with a fixed seed: the draw is the same every time, and
    // its shares sit within a point of the weights (a binomial sd is 0.15 point).
    for (file, want) in [
        ("ycsb-a.toml", vec![("get", 0.5), ("put", 0.5)]),
        ("ycsb-b.toml", vec![("get", 0.95), ("put", 0.05)]),
        ("ycsb-e.toml", vec![("insert", 0.05), ("seek", 0.95)]),
        (
            "readrandomwriterandom.toml",
            vec![("get", 0.9), ("put", 0.1)],
        ),
    ] {
        let path = examples().join(file);
        let o = plumb(
            &store,
            &[
                "kv",
                "--engine",
                "memory",
                "--num",
                "10000",
                "--benchmarks",
                "fillseq,mix",
                "--mix",
                path.to_str().unwrap(),
                "--ops",
                "100000",
                "--seed",
                "11",
                "--json",
            ],
        );
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let run = json_of(&o);
        let s = step(&run, "mix");
        assert_eq!(s["status"], "ok", "{file}: {}", s["error"]);
        let ops = by_op(s);
        let total: u64 = ops.iter().map(|x| x.1).sum();
        assert_eq!(total, 100_000, "{file}");
        for (name, want) in want {
            let got = share(&ops, name);
            assert!((got - want).abs() < 0.01, "{file}: {name} {got} vs {want}");
        }
    }
}

#[test]
fn mixgraph_runs_with_db_benchs_names_and_shares() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    // The mixgraph paper's mix (RocksDB PR 5953's parameters).
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "rocksdb",
            "--num",
            "20000",
            "--benchmarks",
            "fillrandom,mixgraph",
            "--mixgraph",
            "mix_get_ratio=0.85",
            "--mixgraph",
            "mix_put_ratio=0.14",
            "--mixgraph",
            "mix_seek_ratio=0.01",
            "--mixgraph",
            "key_dist_a=0.002312",
            "--mixgraph",
            "key_dist_b=0.3467",
            "--mixgraph",
            "keyrange_num=30",
            "--ops",
            "100000",
            "--seed",
            "3",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    let s = step(&run, "mixgraph");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    let ops = by_op(s);
    for (name, want) in [("get", 0.85), ("put", 0.14), ("seek", 0.01)] {
        let got = share(&ops, name);
        assert!((got - want).abs() < 0.01, "{name} {got} vs {want}: {ops:?}");
    }
    // db_bench's plain power model sends about half its keys past the loaded ones (a
    // signed remainder, see plumb_workloads::mix): its reads miss about half the time,
    // and so do plumb's, counted as not found, not as missing.
    let v = &s["summary"]["verify"];
    let missed = v["not_found"].as_f64().unwrap() / v["verified"].as_f64().unwrap();
    assert!((0.3..0.7).contains(&missed), "{v}");
    assert_eq!(v["missing"], 0, "{v}");
    // A name db_bench does not have is refused, naming the ones it has.
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--benchmarks",
            "mixgraph",
            "--mixgraph",
            "get_ratio=1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("get_ratio") && e.contains("mix_get_ratio"),
        "{e}"
    );
}

#[test]
fn the_mix_file_is_kept_for_rerun_and_bad_files_are_refused_by_line() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let mix = d.path().join("mine.toml");
    std::fs::write(&mix, EVERY_OP).unwrap();
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--num",
            "1000",
            "--benchmarks",
            "fillseq,mix",
            "--mix",
            mix.to_str().unwrap(),
            "--ops",
            "500",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    let kept = &step(&run, "mix")["config"]["mix"];
    assert_eq!(kept["text"], EVERY_OP, "{kept}");
    assert_eq!(kept["sha256"].as_str().unwrap().len(), 64);
    std::fs::remove_file(&mix).unwrap();
    let id = run["run"]["id"].to_string();
    let o = plumb(&store, &["rerun", &id, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(step(&json_of(&o), "mix")["status"], "ok");

    let bad = d.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[op]]\nkind = \"get\"\nweight = 1\n[[op]]\nkind = \"scan\"\nweight = 1\n",
    )
    .unwrap();
    let merge = d.path().join("merge.toml");
    std::fs::write(&merge, "[[op]]\nkind = \"merge\"\nweight = 1\n").unwrap();
    for (args, want) in [
        (vec!["--benchmarks", "mix"], "give it with --mix FILE"),
        (
            vec!["--benchmarks", "readrandom", "--mix", "x.toml"],
            "add `mix` to --benchmarks",
        ),
        (
            vec!["--benchmarks", "mix", "--mix", "/nonexistent/m.toml"],
            "/nonexistent/m.toml",
        ),
        (
            vec!["--benchmarks", "mix", "--mix", bad.to_str().unwrap()],
            "bad.toml:5",
        ),
        (
            vec!["--benchmarks", "mix", "--mix", merge.to_str().unwrap()],
            "merge operator",
        ),
    ] {
        let mut a = vec!["kv", "--engine", "memory"];
        a.extend(args.iter().copied());
        let o = plumb(&store, &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn a_mix_with_phases_draws_each_phases_weights_at_each_phases_load() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let file = d.path().join("phased.toml");
    // One second of gets on one thread, one of puts on two: the phases set the threads
    // and the step's length.
    std::fs::write(
        &file,
        "[[op]]\nkind = \"get\"\nweight = 1\n[[op]]\nkind = \"put\"\nweight = 1\n\
         [[phase]]\nsecs = 1\nweights = [1, 0]\nthreads = 1\n\
         [[phase]]\nsecs = 1\nweights = [0, 1]\nthreads = 2\n",
    )
    .unwrap();
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--num",
            "10000",
            "--benchmarks",
            "fillseq,mix",
            "--mix",
            file.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    let s = step(&run, "mix");
    assert_eq!(s["status"], "ok", "{}", s["error"]);
    assert_eq!(s["config"]["threads"], 2);
    assert_eq!(s["summary"]["threads_profile"], "hold:1/1s,hold:2/1s");
    let secs = s["summary"]["secs"].as_f64().unwrap();
    assert!((1.9..2.5).contains(&secs), "{secs}");
    // Every get in the first second, every put in the second: each op takes its
    // phase's weights when it starts, so the shares follow the seconds' ops.
    let ivs: Vec<(u64, f64)> = s["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["secs"].as_f64().unwrap() > 0.5)
        .map(|i| (i["ops"].as_u64().unwrap(), i["threads"].as_f64().unwrap()))
        .collect();
    assert_eq!(ivs.len(), 2, "{ivs:?}");
    assert!(
        (ivs[0].1 - 1.0).abs() < 0.1 && (ivs[1].1 - 2.0).abs() < 0.1,
        "{ivs:?}"
    );
    let ops = by_op(s);
    let (gets, puts) = (share(&ops, "get"), share(&ops, "put"));
    let first = ivs[0].0 as f64 / (ivs[0].0 + ivs[1].0) as f64;
    assert!(
        (gets - first).abs() < 0.1,
        "gets {gets} vs first second's {first}: {ops:?}"
    );
    assert!(gets > 0.0 && puts > 0.0, "{ops:?}");
    // A phase's load cannot be set twice: not by a threads profile, nor by a rate
    // search (whose probes would pace threads the phases park).
    for flag in [
        ["--threads-profile", "hold:2"],
        ["--rate-search", "p99:1ms"],
    ] {
        let mut a = vec![
            "kv",
            "--engine",
            "memory",
            "--benchmarks",
            "fillseq,mix",
            "--mix",
            file.to_str().unwrap(),
        ];
        a.extend(flag);
        let o = plumb(&store, &a);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("its phases set the threads: drop --rate"),
            "{}",
            stderr(&o)
        );
    }
}
