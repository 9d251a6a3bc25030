//! One conformance suite, the same body for every engine this build has: an engine does
//! not land without passing it. Each check is something a benchmark step relies on
//! (a wrong answer here would be measured as a fast one there).

use plumb_core::value::{self, Verdict};
use plumb_core::{Maintenance, Session, Target};
use plumb_targets::{Durability, EngineSpec};
use std::path::Path;

/// Fixed-width big-endian keys, as plumb's key format makes them (order = number order).
fn key(n: u64) -> Vec<u8> {
    let mut k = n.to_be_bytes().to_vec();
    k.resize(16, b'k');
    k
}

/// A value in plumb's format with a payload that names its key.
fn val(n: u64, generation: u8) -> Vec<u8> {
    let k = key(n);
    let payload: Vec<u8> = format!("payload-{n}-gen{generation}-")
        .bytes()
        .cycle()
        .take(120)
        .collect();
    let mut v = vec![0u8; 100];
    value::encode(&k, &payload, &mut v);
    v
}

/// Every engine built into this binary that stores data (null stores nothing).
fn engines() -> Vec<EngineSpec> {
    plumb_targets::engines()
        .into_iter()
        .map(|n| EngineSpec::default_for(n).unwrap())
        .filter(|s| s.capabilities().stores_data)
        .collect()
}

fn get(s: &mut dyn Session, n: u64) -> Option<Vec<u8>> {
    let mut out = None;
    let found = s.get(&key(n), &mut |v| out = Some(v.to_vec())).unwrap();
    assert_eq!(found, out.is_some(), "get's answer and its visit disagree");
    out
}

fn scan(s: &mut dyn Session, start: &[u8], nexts: usize, reverse: bool) -> Vec<u64> {
    let mut keys = Vec::new();
    let n = s
        .scan(start, nexts, reverse, &mut |k, v| {
            let num = u64::from_be_bytes(k[..8].try_into().unwrap());
            assert_eq!(
                value::verify(k, v),
                Verdict::Ok,
                "scan returned a wrong value for {num}"
            );
            keys.push(num);
        })
        .unwrap();
    assert_eq!(n, keys.len(), "scan's count and its visits disagree");
    keys
}

/// The body every engine runs: keys 0, 2, 4, … 198 written, then read every way.
fn conformance(spec: &EngineSpec, t: &dyn Target) {
    let name = spec.name();
    let caps = spec.capabilities();
    let mut s = t.session().unwrap();
    let s = s.as_mut();
    for n in (0..200).step_by(2) {
        s.put(&key(n), &val(n, 0)).unwrap();
    }
    // Point reads: present keys return their own value, missing keys nothing.
    for n in (0..200).step_by(2) {
        assert_eq!(get(s, n), Some(val(n, 0)), "{name}: get {n}");
        assert_eq!(get(s, n + 1), None, "{name}: get of missing {}", n + 1);
    }
    // Overwrite replaces.
    s.put(&key(10), &val(10, 1)).unwrap();
    assert_eq!(get(s, 10), Some(val(10, 1)), "{name}: overwrite");
    // Forward scans: from a present key, from between keys, running off the end.
    assert_eq!(scan(s, &key(20), 3, false), [20, 22, 24, 26], "{name}: fwd");
    assert_eq!(
        scan(s, &key(21), 2, false),
        [22, 24, 26],
        "{name}: fwd between"
    );
    assert_eq!(
        scan(s, &key(196), 5, false),
        [196, 198],
        "{name}: fwd off the end"
    );
    assert!(
        scan(s, &key(199), 5, false).is_empty(),
        "{name}: fwd past the last"
    );
    // Reverse scans, when the engine has them: the last key <= start, then down.
    if caps.reverse_scan {
        assert_eq!(scan(s, &key(20), 3, true), [20, 18, 16, 14], "{name}: rev");
        assert_eq!(
            scan(s, &key(21), 2, true),
            [20, 18, 16],
            "{name}: rev between"
        );
        assert_eq!(
            scan(s, &key(3), 5, true),
            [2, 0],
            "{name}: rev off the start"
        );
        assert_eq!(
            scan(s, &key(1000), 0, true),
            [198],
            "{name}: rev from past the end"
        );
    }
    // A batch read keeps the order of its keys, present and missing.
    let batch: Vec<Vec<u8>> = [4u64, 5, 198, 199, 0].iter().map(|&n| key(n)).collect();
    let mut got = vec![None; batch.len()];
    s.multi_get(&batch, &mut |i, v| got[i] = Some(v.map(<[u8]>::to_vec)))
        .unwrap();
    assert_eq!(
        got,
        vec![
            Some(Some(val(4, 0))),
            Some(None),
            Some(Some(val(198, 0))),
            Some(None),
            Some(Some(val(0, 0)))
        ],
        "{name}: multi_get"
    );
    // Deletes, when the engine has them: gone from reads and from scans.
    if caps.delete {
        s.delete(&key(22)).unwrap();
        assert_eq!(get(s, 22), None, "{name}: get after delete");
        assert_eq!(
            scan(s, &key(20), 2, false),
            [20, 24, 26],
            "{name}: scan after delete"
        );
        if caps.reverse_scan {
            assert_eq!(
                scan(s, &key(24), 2, true),
                [24, 20, 18],
                "{name}: rev after delete"
            );
        }
    }
    // A readseq pass visits every key once, in order.
    let mut seen = Vec::new();
    let mut next = 0u64;
    loop {
        let mut last = None;
        let more = s
            .next_in_order(&key(next), &mut |k, _| {
                last = Some(u64::from_be_bytes(k[..8].try_into().unwrap()))
            })
            .unwrap();
        if !more {
            break;
        }
        let k = last.expect("a visit for each true");
        seen.push(k);
        next = k + 1;
    }
    let mut want: Vec<u64> = (0..200).step_by(2).collect();
    if caps.delete {
        want.retain(|&n| n != 22);
    }
    assert_eq!(seen, want, "{name}: readseq");
    for m in [
        Maintenance::Flush,
        Maintenance::WaitForCompaction,
        Maintenance::Compact,
        Maintenance::CompactLevel(0),
        Maintenance::CompactLevel(1),
    ] {
        t.maintenance(m).unwrap();
    }
    assert_eq!(
        get(s, 198),
        Some(val(198, 0)),
        "{name}: read after maintenance"
    );
    // Engine-own figures where the engine keeps them.
    let st = t.stats();
    if ["lmdb", "sqlite"].contains(&name) {
        let used = st.used_bytes.unwrap_or(0);
        assert!(
            used >= 100 * 100,
            "{name}: {used} bytes in use for 100 values"
        );
    }
    if caps.compaction_stats && name != "leveldb" {
        assert!(
            st.ingest_bytes.is_some(),
            "{name}: compaction stats declared, none given"
        );
    }
    if name == "leveldb" {
        assert!(
            st.compact_write_bytes.is_some(),
            "leveldb: leveldb.stats not read"
        );
    }
}

#[test]
fn every_engine_passes_the_same_body() {
    let specs = engines();
    let names: Vec<&str> = specs.iter().map(|s| s.name()).collect();
    // Every engine whose feature this build has is here: none is skipped quietly.
    let mut must = vec!["memory"];
    for (on, name) in [
        (cfg!(feature = "rocksdb"), "rocksdb"),
        (cfg!(feature = "speedb"), "speedb"),
        (cfg!(feature = "lmdb"), "lmdb"),
        (cfg!(feature = "sqlite"), "sqlite"),
        (cfg!(feature = "leveldb"), "leveldb"),
        (cfg!(feature = "wiredtiger"), "wiredtiger"),
        (cfg!(feature = "splinterdb"), "splinterdb"),
        (cfg!(feature = "redb"), "redb"),
        (cfg!(feature = "fjall"), "fjall"),
    ] {
        if on {
            must.push(name);
        }
    }
    for m in must {
        assert!(names.contains(&m), "{m} missing from {names:?}");
    }
    for spec in specs {
        let dir = tempfile::tempdir().unwrap();
        let t = spec.open(Some(dir.path())).unwrap();
        conformance(&spec, t.as_ref());
    }
}

/// Flips one byte inside every copy of `needle` in the files under `dir`; returns how
/// many were flipped.
fn corrupt_files(dir: &Path, needle: &[u8]) -> usize {
    let mut flipped = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            flipped += corrupt_files(&p, needle);
            continue;
        }
        let mut bytes = std::fs::read(&p).unwrap();
        let mut i = 0;
        let mut changed = false;
        while let Some(at) = bytes[i..].windows(needle.len()).position(|w| w == needle) {
            let pos = i + at + needle.len() / 2;
            bytes[pos] ^= 0x20;
            flipped += 1;
            changed = true;
            i = i + at + needle.len();
        }
        if changed {
            std::fs::write(&p, &bytes).unwrap();
        }
    }
    flipped
}

#[test]
fn synced_data_survives_a_reopen_and_corruption_on_disk_is_caught() {
    for spec in engines()
        .into_iter()
        .filter(|s| s.capabilities().keeps_files)
    {
        let name = spec.name();
        // Synced where the engine can sync; otherwise (SplinterDB) what a clean close
        // keeps.
        let mut synced = spec.clone();
        if spec.capabilities().can_sync {
            synced
                .apply_common(&plumb_targets::EngineCommon {
                    sync: true,
                    cache_size: None,
                })
                .unwrap_or_else(|e| panic!("{name}: --sync refused: {e}"));
            assert_eq!(synced.durability(), Durability::Synced, "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        {
            let t = synced.open(Some(dir.path())).unwrap();
            let mut s = t.session().unwrap();
            for n in 0..50 {
                s.put(&key(n), &val(n, 0)).unwrap();
            }
        }
        // Reopened: every synced write is there with its value.
        {
            let t = synced.open(Some(dir.path())).unwrap();
            let mut s = t.session().unwrap();
            for n in 0..50 {
                assert_eq!(
                    get(s.as_mut(), n),
                    Some(val(n, 0)),
                    "{name}: key {n} after reopen"
                );
            }
            t.maintenance(Maintenance::Flush).unwrap();
            t.maintenance(Maintenance::Compact).unwrap();
        }
        // Corrupt key 7's payload where the engine stored it, reopen, read it back: an
        // engine error (RocksDB's block checksum) or plumb's check must catch it.
        let flipped = corrupt_files(dir.path(), b"payload-7-gen0-payload-7-gen0");
        assert!(
            flipped > 0,
            "{name}: key 7's payload not found in its files"
        );
        let caught = match synced.open(Some(dir.path())) {
            Err(_) => true,
            Ok(t) => {
                let mut s = t.session().unwrap();
                let mut verdict = None;
                match s.get(&key(7), &mut |v| verdict = Some(value::verify(&key(7), v))) {
                    Err(_) => true,
                    Ok(_) => verdict != Some(Verdict::Ok),
                }
            }
        };
        assert!(caught, "{name}: a corrupted value read back as good");
    }
}

#[test]
fn each_engine_states_its_durability_and_refuses_what_it_lacks() {
    for spec in engines() {
        let caps = spec.capabilities();
        assert_eq!(
            spec.durability() == Durability::Volatile,
            !caps.keeps_files,
            "{}",
            spec.name()
        );
        if caps.keeps_files {
            // Unsynced by default: handed to the OS, or (redb, whose unsynced commit
            // never reaches its file's header; engines that cannot sync) kept in memory.
            let want = if caps.can_sync && spec.name() != "redb" {
                Durability::OsBuffered
            } else {
                Durability::Unlogged
            };
            assert_eq!(spec.durability(), want, "{} default", spec.name());
        }
        // An engine that cannot sync refuses --sync rather than pretend.
        let mut s = spec.clone();
        let asked = s.apply_common(&plumb_targets::EngineCommon {
            sync: true,
            cache_size: None,
        });
        assert_eq!(asked.is_ok(), caps.can_sync, "{}: {asked:?}", spec.name());
    }
    let mut splinter = EngineSpec::default_for("splinterdb").unwrap();
    assert_eq!(splinter.durability(), Durability::Unlogged);
    let e = splinter
        .apply_common(&plumb_targets::EngineCommon {
            sync: true,
            cache_size: None,
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("sync") && e.contains("fsync"), "{e}");
    let mut lmdb = EngineSpec::default_for("lmdb").unwrap();
    let e = lmdb
        .apply_common(&plumb_targets::EngineCommon {
            sync: false,
            cache_size: Some(1 << 20),
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("cache_size") && e.contains("page cache"), "{e}");
}
