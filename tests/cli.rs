//! The `plumb` binary end to end: tiny workloads on RocksDB and the null target, the
//! store round trip, corruption detection, and bad input refused before anything is
//! written.

use serde_json::Value;

use std::process::Command;

mod common;
use common::{json_of, ok_json, plumb, stderr};

/// Every measured step stored intervals whose ops add up to the step's ops.
fn assert_steps_consistent(doc: &Value) {
    for s in doc["steps"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let ops = s["summary"]["ops"].as_u64().unwrap();
        let ivs = s["intervals"].as_array().unwrap();
        if ["flush", "waitforcompaction", "compact"].contains(&name) {
            assert!(ivs.is_empty(), "{name}");
            continue;
        }
        assert!(ops > 0, "{name} did nothing");
        assert!(!ivs.is_empty(), "{name} stored no intervals");
        let sum: u64 = ivs.iter().map(|i| i["ops"].as_u64().unwrap()).sum();
        assert_eq!(
            sum, ops,
            "{name}: interval ops must add up to the step's ops"
        );
        assert_eq!(s["status"], "ok", "{name}: {}", s["error"]);
    }
}

#[test]
fn rocksdb_tiny_workload_reports_every_metric_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let db = dir.path().join("db");
    let o = plumb(
        &store,
        &[
            "kv", "--db", db.to_str().unwrap(), "--num", "20000", "--duration", "1.2",
            "--benchmarks",
            "fillseq,readseq,readrandom,multireadrandom,fwdrange,revrange,overwrite,flush,waitforcompaction,readwhilewriting,fwdrangewhilewriting,deleterandom,compact",
            "--tag", "tiny", "--json",
        ],
    );
    let doc = ok_json(&o);
    assert_eq!(doc["run"]["status"], "ok");
    assert_eq!(doc["run"]["engine"], "rocksdb");
    assert_eq!(doc["run"]["engine_version"], "11.8.1");
    assert_eq!(doc["run"]["options"]["rocksdb.block_size"], "8192");
    assert_eq!(
        doc["run"]["options"]["verify"], "sample",
        "the default, stored"
    );
    assert_eq!(doc["run"]["tag"], "tiny");
    assert_steps_consistent(&doc);
    let steps = doc["steps"].as_array().unwrap();
    let by = |n: &str| steps.iter().find(|s| s["name"] == n).unwrap()["summary"].clone();

    let fill = by("fillseq");
    assert_eq!(fill["ops"], 20000);
    for k in [
        "harness_us_op",
        "p50_us",
        "p99_us",
        "pmax_us",
        "cpu_us_op",
        "db_gb",
        "space_amp",
        "rss_gb",
        "mb_sec",
    ] {
        assert!(
            fill[k].as_f64().is_some_and(|v| v > 0.0),
            "fillseq {k} = {}",
            fill[k]
        );
    }
    // The device under a temp dir is known on this machine, so disk figures exist.
    assert!(doc["run"]["device"].is_string(), "{}", doc["run"]["device"]);
    assert!(fill["wkb_op"].is_number() && fill["w_amp"].is_number());
    // readseq walks every key once, checking each value.
    assert_eq!(by("readseq")["ops"], 20000);
    assert_eq!(by("readseq")["verify"]["verified"], 20000);
    let rr = by("readrandom");
    assert!(rr["verify"]["verified"].as_u64().unwrap() > 0);
    assert_eq!(rr["verify"]["missing"], 0);
    assert_eq!(rr["w_amp"], Value::Null, "a read step has no user writes");
    let ow = by("overwrite");
    assert!(ow["w_amp_engine"].is_number() || ow["w_amp"].is_number());
    assert!(ow["stall_pct"].is_number());
    let rww = by("readwhilewriting");
    assert!(
        rww["writer"]["ops"].as_u64().unwrap() > 0,
        "{}",
        rww["writer"]
    );
    let fr = by("fwdrange");
    // The default checks the first value of every range (each range finds one here).
    assert_eq!(fr["verify"]["verified"], fr["ops"]);
    assert!(db.join("CURRENT").exists(), "--db is kept");

    // The store holds what was printed.
    let runs = plumb(&store, &["runs", "--json"]);
    let list = json_of(&runs);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let id = list[0]["id"].to_string();
    let show = json_of(&plumb(&store, &["show", &id, "--json"]));
    assert_eq!(show, doc);
    let text = plumb(&store, &["show", &id]);
    let text = String::from_utf8_lossy(&text.stdout);
    for col in [
        "ops_sec",
        "p99.99",
        "w_amp",
        "c_wgb",
        "stall%",
        "cpu_us_op",
        "db_gb",
        "readwhilewriting",
    ] {
        assert!(text.contains(col), "text report lacks {col}:\n{text}");
    }
}

#[test]
fn null_target_intervals_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "null",
            "--benchmarks",
            "fillseq,readrandom",
            "--num",
            "1000",
            "--duration",
            "2.2",
            "--threads",
            "2",
            "--json",
        ],
    );
    let doc = ok_json(&o);
    assert_steps_consistent(&doc);
    let rr = &doc["steps"][1];
    assert!(rr["intervals"].as_array().unwrap().len() >= 3);
    assert_eq!(
        rr["summary"]["rkb_op"],
        Value::Null,
        "null keeps no files: no disk figures"
    );
    assert!(
        rr["summary"]["hw"]["unsupported"].is_string()
            || rr["summary"]["hw"]["instructions_op"].is_number()
    );
}

/// fillseq, filluniquerandom and readseq cover every key even when --duration is far
/// shorter than that takes, as in db_bench: a cut load or a cut cache warm-up would
/// skew every step after it.
#[test]
fn full_pass_steps_ignore_a_short_duration() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "kv",
            "--engine",
            "memory",
            "--num",
            "200000",
            "--duration",
            "0.001",
            "--benchmarks",
            "fillseq,filluniquerandom,readseq",
            "--threads",
            "2",
            "--json",
        ],
    );
    let doc = ok_json(&o);
    assert_steps_consistent(&doc);
    for s in doc["steps"].as_array().unwrap() {
        assert_eq!(s["summary"]["ops"], 200000, "{}", s["name"]);
    }
    assert_eq!(doc["steps"][2]["summary"]["verify"]["verified"], 200000);
}

#[test]
fn a_corrupted_rocksdb_value_is_detected_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let db = dir.path().join("db");
    let dbs = db.to_str().unwrap();
    let o = plumb(
        &store,
        &[
            "kv",
            "--db",
            dbs,
            "--num",
            "50",
            "--benchmarks",
            "fillseq",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    {
        // Reach past plumb: overwrite key 7 with a value whose checksum is wrong.
        use plumb_core::Target;
        let rdb =
            plumb_targets::RocksTarget::open(&db, plumb_targets::RocksOptions::default()).unwrap();
        let mut s = rdb.session().unwrap();
        let f = plumb_workloads::KeyFormat { size: 20 };
        let mut key = f.buffer();
        f.encode(7, &mut key);
        let mut v = Vec::new();
        assert!(
            s.get(&key, &mut |got| v = got.to_vec()).unwrap(),
            "key 7 was loaded"
        );
        let last = v.len() - 1;
        v[last] ^= 0x55;
        s.put(&key, &v).unwrap();
    }
    let o = plumb(
        &store,
        &[
            "kv",
            "--db",
            dbs,
            "--use-existing-db",
            "--num",
            "50",
            "--benchmarks",
            "readrandom",
            // The default checksums 1 value in 256: 200k reads of 50 keys give key 7
            // about 16 full checks (a miss has odds of about 1e-7).
            "--ops",
            "200000",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("checksum mismatches"), "{}", stderr(&o));
    let doc = json_of(&o);
    assert_eq!(doc["run"]["status"], "failed");
    assert!(
        doc["steps"][0]["summary"]["verify"]["mismatches"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// `--version` names each engine built in with the release it runs, so a binary from
/// scripts/build-rocksdb-release.sh or build-speedb.sh says what it holds.
#[test]
fn version_lists_the_engines_and_their_releases() {
    let dir = tempfile::tempdir().unwrap();
    let o = plumb(&dir.path().join("s.sqlite"), &["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let want = format!("rocksdb {}", plumb_targets::rocks::ROCKSDB_VERSION);
    assert!(out.contains(&want), "{out}");
    assert!(!out.contains("speedb"), "{out}");
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let cases: &[(&[&str], &str)] = &[
        (&["kv", "--value-size", "2"], "--value-size"),
        (&["kv", "--benchmarks", "fillseq,readrandmo"], "readrandmo"),
        (&["kv", "--sync", "--disable-wal"], "--disable-wal"),
        (
            &["kv", "--distribution", "hotset:999999999"],
            "--distribution",
        ),
        (&["kv", "--compression", "snappy"], "--compression"),
        (&["kv", "--engine", "bogusdb"], "--engine"),
        (&["kv", "--use-existing-db"], "--db"),
        (&["kv", "--threads", "0"], "--threads"),
        // Speedb has a binary of its own; this one says how to build it.
        (&["kv", "--engine", "speedb"], "build-speedb.sh"),
    ];
    for (args, needle) in cases {
        let o = plumb(&store, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    assert!(!store.exists(), "no store written for bad input");

    // A non-empty directory is never written into.
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("precious.txt"), b"keep me").unwrap();
    let o = plumb(
        &store,
        &[
            "kv",
            "--db",
            full.to_str().unwrap(),
            "--benchmarks",
            "fillseq",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
    let names: Vec<_> = std::fs::read_dir(&full)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("precious.txt")]);
}

#[test]
fn plumb_host_describes_this_machine_and_its_storage() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["host", "--json", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let h = json_of(&o);
    let inv = &h["inventory"];
    assert!(
        inv["cpu"]["model"].as_str().is_some_and(|m| !m.is_empty()),
        "{}",
        inv["cpu"]
    );
    assert!(inv["cpu"]["threads"].as_u64().unwrap() >= 1);
    assert!(
        inv["memory"]["total_bytes"].as_u64().is_some_and(|m| m > 0),
        "{}",
        inv["memory"]
    );
    assert!(
        inv["clocksource"]["current"].is_string(),
        "{}",
        inv["clocksource"]
    );
    assert!(inv["kernel"].is_string());
    let st = &h["storage"];
    assert!(
        st["fs_type"].is_string() && st["mount_options"].is_array(),
        "{st}"
    );
    let devs = st["devices"].as_array().unwrap();
    assert!(!devs.is_empty());
    assert!(
        devs[0]["queue"]["max_sectors_kb"].is_number(),
        "{}",
        devs[0]
    );
    let checks = h["checks"].as_array().unwrap();
    for id in [
        "cpu.turbo",
        "cpu.governor",
        "clock.source",
        "mem.thp",
        "mem.swap",
        "host.virt",
        "fs.noatime",
        "disk.write_cache",
    ] {
        let c = checks
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no check {id}"));
        assert!(["ok", "info", "warn", "fail"].contains(&c["verdict"].as_str().unwrap()));
        assert!(
            !c["reason"].as_str().unwrap().is_empty(),
            "{id} has no reason"
        );
    }
    let text = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["host", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for needle in ["clock.source", "MAXSEC", "WCACHE", "host.virt"] {
        assert!(
            text.contains(needle),
            "plumb host output lacks {needle}:\n{text}"
        );
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["host", "--dir", "/no/such/dir"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("/no/such/dir"));
}

/// With disk ceilings stored for this host (as `plumb probe disk` keeps them), the text
/// report of a kv run, and `plumb show`, read each step's device IO against them.
#[test]
fn kv_text_report_reads_steps_against_this_hosts_disk_ceilings() {
    use plumb_store::{Ceiling, NewRun, Store};
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let db = dir.path().join("db");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let probe_id = {
        let mut st = Store::open(&store).unwrap();
        let id = st
            .begin_run(&NewRun {
                tag: None,
                command: "plumb probe disk".into(),
                workload: "probe disk".into(),
                engine: "probe".into(),
                engine_version: "0".into(),
                plumb_version: "0".into(),
                git_hash: None,
                options: Default::default(),
                seed: 0,
                started_at: "2026-11-22T00:00:00Z".into(),
                data_dir: None,
                device: None,
                host: None,
                ..NewRun::default()
            })
            .unwrap();
        let c = |name: &str, value: f64, unit: &str| Ceiling {
            name: name.into(),
            value,
            unit: unit.into(),
        };
        st.add_ceilings(
            id,
            host.trim(),
            "2026-11-22T00:00:10Z",
            &[
                c("disk.randread_4k_iops.qd1", 1000.0, "IOPS"),
                c("disk.seqread_1m_mbs", 2000.0, "MB/s"),
                c("disk.seqwrite_1m_mbs", 1000.0, "MB/s"),
            ],
        )
        .unwrap();
        st.finish_run(id, plumb_core::RunStatus::Ok, "2026-11-22T00:00:10Z")
            .unwrap();
        id
    };
    let o = plumb(
        &store,
        &[
            "kv",
            "--db",
            db.to_str().unwrap(),
            "--num",
            "5000",
            "--duration",
            "0.3",
            "--benchmarks",
            "fillseq,readrandom",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let head = format!("bottom-up, against the disk ceilings of probe run {probe_id}");
    assert!(text.contains(&head), "{text}");
    for step in ["fillseq", "readrandom"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  {step}: reads ")))
            .unwrap_or_else(|| panic!("no {step} line in {text}"));
        assert!(
            line.contains("of the 4 KiB random-read ceiling at 1 in flight (1000 IOPS, j1×qd1")
                && line.ends_with("of sequential write (1000 MB/s)"),
            "{line}"
        );
    }
    let kv_id = (probe_id + 1).to_string();
    let shown = plumb(&store, &["show", &kv_id]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(String::from_utf8_lossy(&shown.stdout).contains(&head));
}
