//! Every engine behind one client: the default sequence runs and is stored on each, the
//! same seed writes the same keys on each (one key generator, not one per engine), and
//! compare warns when engines that differ in durability stand side by side.

mod common;

use common::{ok_json, plumb, stderr};
use plumb_targets::EngineSpec;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The file engines of this build, by its features (null and memory keep nothing to
/// reopen); RocksDB's place is Speedb's in a build made by scripts/build-speedb.sh.
fn file_engines() -> Vec<&'static str> {
    [
        (cfg!(feature = "rocksdb"), "rocksdb"),
        (cfg!(feature = "speedb"), "speedb"),
        (cfg!(feature = "lmdb"), "lmdb"),
        (cfg!(feature = "sqlite"), "sqlite"),
        (cfg!(feature = "leveldb"), "leveldb"),
        (cfg!(feature = "wiredtiger"), "wiredtiger"),
        (cfg!(feature = "splinterdb"), "splinterdb"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// The LSM engine of this build: RocksDB, or Speedb in its place.
fn lsm() -> &'static str {
    if cfg!(feature = "speedb") {
        "speedb"
    } else {
        "rocksdb"
    }
}

/// Every key number in the database `engine` keeps in `dir`, in order.
fn keys_in(engine: &str, dir: &Path) -> Vec<u64> {
    let spec = EngineSpec::default_for(engine).unwrap();
    let t = spec.open(Some(dir)).unwrap();
    let mut s = t.session().unwrap();
    let mut keys = Vec::new();
    let mut next = 0u64;
    loop {
        let mut last = None;
        let mut start = [0u8; 20];
        start[..8].copy_from_slice(&next.to_be_bytes());
        let more = s
            .next_in_order(&start, &mut |k, _| {
                last = Some(u64::from_be_bytes(k[..8].try_into().unwrap()))
            })
            .unwrap();
        if !more {
            break;
        }
        let k = last.unwrap();
        keys.push(k);
        next = k + 1;
    }
    keys
}

#[test]
fn the_same_seed_writes_the_same_keys_on_every_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.sqlite");
    let mut sets: Vec<(&str, Vec<u64>)> = Vec::new();
    for engine in file_engines() {
        let dir = tmp.path().join(engine);
        let o = plumb(
            &store,
            &[
                "kv",
                "--engine",
                engine,
                "--db",
                dir.to_str().unwrap(),
                "--num",
                "3000",
                "--benchmarks",
                "fillrandom",
                "--seed",
                "11",
                "--json",
            ],
        );
        let doc = ok_json(&o);
        assert_eq!(doc["run"]["engine"], engine, "{doc}");
        sets.push((engine, keys_in(engine, &dir)));
    }
    let (first, keys) = &sets[0];
    // fillrandom draws with replacement: a strict subset of the key space, so the set
    // depends on the sequence drawn.
    assert!(
        keys.len() > 1500 && keys.len() < 3000,
        "{first}: {} keys",
        keys.len()
    );
    for (engine, other) in &sets[1..] {
        assert_eq!(other, keys, "{engine} holds other keys than {first}");
    }
    // A different seed draws another sequence.
    let dir = tmp.path().join("reseeded");
    ok_json(&plumb(
        &store,
        &[
            "kv",
            "--engine",
            "lmdb",
            "--db",
            dir.to_str().unwrap(),
            "--num",
            "3000",
            "--benchmarks",
            "fillrandom",
            "--seed",
            "12",
            "--json",
        ],
    ));
    assert_ne!(&keys_in("lmdb", &dir), keys);
}

#[test]
fn every_engine_runs_the_default_sequence_and_stores_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.sqlite");
    let mut first_count = None;
    for engine in file_engines() {
        let o = plumb(
            &store,
            &[
                "kv",
                "--engine",
                engine,
                "--num",
                "5000",
                "--duration",
                "1",
                "--json",
            ],
        );
        let doc = ok_json(&o);
        assert_eq!(doc["run"]["engine"], engine);
        assert_eq!(doc["run"]["status"], "ok", "{engine}: {}", stderr(&o));
        let steps = doc["steps"].as_array().unwrap();
        let measured: Vec<&Value> = steps
            .iter()
            .filter(|s| s["summary"]["ops"].as_u64().is_some_and(|n| n > 0))
            .collect();
        // Every engine runs every measured step of the sequence RocksDB runs.
        let count = *first_count.get_or_insert(measured.len());
        assert!(count >= 6, "{engine}: only {count} measured steps");
        assert_eq!(measured.len(), count, "{engine}: measured steps");
        for s in measured {
            let v = &s["summary"]["verify"];
            for bad in ["mismatches", "missing"] {
                assert_eq!(v[bad], 0, "{engine} {}: {v}", s["name"]);
            }
        }
        assert_eq!(
            doc["run"]["options"]["durability"],
            if engine == "splinterdb" {
                "unlogged"
            } else {
                "os-buffered"
            },
            "{engine}"
        );
    }
    let o = plumb(&store, &["runs", "--json"]);
    let runs = ok_json(&o);
    let stored: BTreeSet<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["engine"].as_str().unwrap().to_string())
        .collect();
    for engine in file_engines() {
        assert!(stored.contains(engine), "{engine} not stored: {stored:?}");
    }
}

#[test]
fn compare_warns_when_engines_differ_in_durability() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.sqlite");
    // SplinterDB never syncs; without it in this build, LMDB with --sync stands in as
    // the engine whose durability differs from RocksDB's (or Speedb's) default.
    let (other, extra): (&str, &[&str]) = if cfg!(feature = "splinterdb") {
        ("splinterdb", &[])
    } else {
        ("lmdb", &["--sync"])
    };
    for (engine, flags) in [(lsm(), &[][..]), (other, extra)] {
        let mut args = vec![
            "kv",
            "--engine",
            engine,
            "--num",
            "2000",
            "--benchmarks",
            "fillrandom,readrandom",
            "--duration",
            "1",
            "--tag",
            engine,
            "--json",
        ];
        args.extend_from_slice(flags);
        ok_json(&plumb(&store, &args));
    }
    let base = format!("tag={}", lsm());
    let o = plumb(&store, &["compare", &base, &format!("tag={other}")]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("durability differs") && text.contains(&format!("{} os-buffered", lsm())),
        "{text}"
    );
}
