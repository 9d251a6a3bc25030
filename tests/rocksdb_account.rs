//! RocksDB as the seeds investigate it: any option through RocksDB's own parser (and a
//! misspelt one refused by name before anything is written), the options in force as
//! RocksDB wrote them stored with the run and compared, the LSM's own account per step,
//! benchmark.sh's flush_mt_l0 state, and a release that is not built refused with the
//! command that builds it.

#![cfg(any(feature = "rocksdb", feature = "speedb"))]

mod common;

use common::{ok_json, plumb, stderr, step};
use serde_json::Value;

/// The LSM engine of this build: RocksDB, or Speedb in its place.
fn lsm() -> &'static str {
    if cfg!(feature = "speedb") {
        "speedb"
    } else {
        "rocksdb"
    }
}

/// The stored run's options, by key.
fn option<'a>(run: &'a Value, key: &str) -> Option<&'a str> {
    run["run"]["options"][key].as_str()
}

#[test]
fn an_option_only_a_string_reaches_is_in_force_stored_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let db = dir.path().join("db");
    let e = lsm();
    // compaction_readahead_size and level0_slowdown_writes_trigger have no plumb flag;
    // the block size goes through the nested table options.
    let opts = "compaction_readahead_size=3145728;level0_slowdown_writes_trigger=13;\
                block_based_table_factory={block_size=16384}";
    let out = plumb(
        &store,
        &[
            "kv",
            "--engine",
            e,
            "--db",
            db.to_str().unwrap(),
            "--num",
            "30000",
            "--write-buffer-size",
            "1048576",
            "--benchmarks",
            "fillrandom,flush_mt_l0,readrandom",
            "--duration",
            "1",
            "--rocksdb-options",
            opts,
            "--json",
        ],
    );
    let run = ok_json(&out);
    // RocksDB itself wrote them in the OPTIONS file of the database it opened.
    let file = plumb_targets::rocks_account::newest_options_file(&db).expect("an OPTIONS file");
    let text = std::fs::read_to_string(file).unwrap();
    for want in [
        "compaction_readahead_size=3145728",
        "level0_slowdown_writes_trigger=13",
        "block_size=16384",
    ] {
        assert!(text.contains(want), "OPTIONS lacks {want}");
    }
    // The stored run holds what was asked and what was in force.
    assert_eq!(option(&run, &format!("{e}.option_string")), Some(opts));
    assert_eq!(
        option(&run, &format!("{e}.effective.db.compaction_readahead_size")),
        Some("3145728")
    );
    assert_eq!(
        option(&run, &format!("{e}.effective.table.block_size")),
        Some("16384")
    );

    // The LSM's own account, per step: the load wrote into the tree, and after
    // flush_mt_l0 the memtable and L0 are empty (L0 compacted into the level below).
    let fill = &step(&run, "fillrandom")["summary"]["lsm"];
    let written: u64 = fill["levels"]
        .as_array()
        .expect("levels after the load")
        .iter()
        .map(|l| l["write_bytes"].as_u64().unwrap())
        .sum();
    assert!(written > 0, "{fill}");
    let state = &step(&run, "flush_mt_l0")["summary"]["lsm"];
    let levels = state["levels"]
        .as_array()
        .expect("levels after flush_mt_l0");
    assert!(
        levels.iter().any(|l| l["level"].as_u64() > Some(0)),
        "data below L0: {state}"
    );
    assert!(
        levels
            .iter()
            .all(|l| l["level"] != 0 || l["files"].as_u64() == Some(0)),
        "L0 is empty after flush_mt_l0: {state}"
    );
    let reads = &step(&run, "readrandom")["summary"]["lsm"]["cache"];
    let lookups = ["data_hit", "data_miss", "index_hit", "index_miss"]
        .iter()
        .map(|k| reads[k].as_u64().unwrap())
        .sum::<u64>();
    assert!(lookups > 0, "block cache lookups by type: {reads}");

    // show prints the account; compare lists the options that differ.
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let shown = plumb(&store, &["show", &id]);
    let shown_text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown_text.contains("LSM shape"), "{shown_text}");
    let other = plumb(
        &store,
        &[
            "kv",
            "--engine",
            e,
            "--num",
            "30000",
            "--benchmarks",
            "fillrandom,readrandom",
            "--duration",
            "1",
            "--json",
        ],
    );
    let other_id = ok_json(&other)["run"]["id"].as_i64().unwrap().to_string();
    let cmp = plumb(&store, &["compare", &id, &other_id]);
    assert!(cmp.status.success(), "{}", stderr(&cmp));
    let cmp = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp.contains("options that differ"), "{cmp}");
    let line = cmp
        .lines()
        .find(|l| l.contains("effective.db.compaction_readahead_size"))
        .unwrap_or_else(|| panic!("compaction_readahead_size not listed: {cmp}"));
    assert!(line.contains("3145728"), "{line}");
}

#[test]
fn a_misspelt_option_is_refused_by_name_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let out = plumb(
        &store,
        &[
            "kv",
            "--engine",
            lsm(),
            "--rocksdb-options",
            "compaction_readahed_size=2097152",
            "--benchmarks",
            "fillseq",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("compaction_readahed_size"), "{err}");
    assert!(err.contains("--rocksdb-options"), "{err}");
    // Nothing ran, so nothing is stored.
    if store.exists() {
        let runs = plumb(&store, &["runs", "--json"]);
        let listed: Vec<Value> = serde_json::from_slice(&runs.stdout).unwrap();
        assert!(listed.is_empty(), "{listed:?}");
    }
    // An OPTIONS file that is not there names the path.
    let out = plumb(
        &store,
        &[
            "kv",
            "--engine",
            lsm(),
            "--options-file",
            "/nonexistent/OPTIONS-000007",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("/nonexistent/OPTIONS-000007"));
}

#[test]
#[cfg(feature = "rocksdb")]
fn a_release_that_is_not_built_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("releases.toml");
    std::fs::write(
        &suite,
        r#"
name = "releases"
[[target]]
name = "rocksdb"
engine = "rocksdb"
versions = ["6.0.0"]
[[workload]]
name = "w"
steps = ["fillseq"]
"#,
    )
    .unwrap();
    let store = dir.path().join("s.sqlite");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["run", suite.to_str().unwrap(), "--store"])
        .arg(&store)
        .env("PLUMB_BUILDS", dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("rocksdb@6.0.0") && err.contains("build-rocksdb-release.sh 6.0.0"),
        "{err}"
    );
    assert!(err.contains("minutes"), "{err}");
}

#[test]
#[cfg(feature = "rocksdb")]
fn the_linked_release_runs_here_and_another_is_handed_to_its_build() {
    let dir = tempfile::tempdir().unwrap();
    let linked = plumb_targets::rocks::ROCKSDB_VERSION
        .split_whitespace()
        .next()
        .unwrap();
    let suite = dir.path().join("series.toml");
    let write = |versions: &str| {
        std::fs::write(
            &suite,
            format!(
                "name = \"series\"\n[params]\nnum = 2000\n[[target]]\nname = \"rocksdb\"\n\
                 engine = \"rocksdb\"\nversions = [{versions}]\n[[workload]]\nname = \"w\"\n\
                 steps = [\"fillseq\"]\n"
            ),
        )
        .unwrap();
    };
    let run = |store: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["run", suite.to_str().unwrap(), "--store"])
            .arg(store)
            .env("PLUMB_BUILDS", dir.path())
            .output()
            .unwrap()
    };
    // The release this plumb links runs in this process, under its versioned name.
    write(&format!("\"{linked}\""));
    let store = dir.path().join("a.sqlite");
    let out = run(&store);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("runs in"), "{}", stderr(&out));
    let runs = common::runs_json(&store);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["options"]["target"], format!("rocksdb@{linked}"));
    assert_eq!(runs[0]["engine_version"].as_str(), Some(linked));

    // Another release goes to the binary named for it: here a plumb that links the
    // wrong release, which refuses to run it, and says so through the hand-over.
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_plumb"),
        dir.path().join("plumb-rocksdb-9.9.9"),
    )
    .unwrap();
    write("\"9.9.9\"");
    let out = run(&dir.path().join("b.sqlite"));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("rocksdb@9.9.9 runs in"), "{err}");
    assert!(err.contains("cannot hand the run on"), "{err}");
}
