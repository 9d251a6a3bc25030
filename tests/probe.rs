//! `plumb probe` end to end: a --quick run of every probe on a temp dir stores every
//! figure as steps and ceilings and leaves no file behind; bad directories and sizes are
//! refused before anything is written; Ctrl-C removes the probe file.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{json_of, plumb, stderr};

#[test]
fn quick_probe_all_stores_every_figure_and_removes_its_file() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("disk");
    std::fs::create_dir(&dir).unwrap();
    let store = t.path().join("store.sqlite");
    let started = Instant::now();
    let o = plumb(
        &store,
        &[
            "probe",
            "all",
            "--quick",
            "--dir",
            dir.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // How long --quick took is worth seeing, not asserting: a shared machine varies.
    eprintln!("probe all --quick took {:?}", started.elapsed());
    let doc = json_of(&o);
    assert_eq!(doc["run"]["engine"], "probe");
    assert_eq!(doc["run"]["workload"], "probe all");
    assert_eq!(doc["run"]["status"], "ok");
    let steps = doc["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    let has_direct = names.iter().any(|n| n.contains("direct")); // not on tmpfs
    for want in [
        "triad.t1",
        "chase",
        "cpuops.t1",
        "seqwrite.buffered",
        "seqread.buffered",
        "randread.buffered.j1.qd1",
        "randread.buffered.j1.qd32",
        "randwrite.buffered.j1.qd1",
        "randwrite.buffered.j1.qd32",
        "commit.buffered.t1",
        "commit.buffered.t2",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    if has_direct {
        for want in [
            "seqwrite.direct",
            "randread.direct.j1.qd32",
            "commit.direct.t1",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
    }
    for s in steps {
        let name = s["name"].as_str().unwrap();
        assert_eq!(s["status"], "ok", "{name}: {}", s["error"]);
        let sum = &s["summary"];
        assert!(sum["ops"].as_u64().unwrap() > 0, "{name}");
        assert!(sum["ops_sec"].as_f64().unwrap() > 0.0, "{name}");
        if s["config"]["probe"] == "disk" {
            for f in [
                "mb_sec",
                "p50_us",
                "p99_us",
                "p999_us",
                "pmax_us",
                "cpu_us_op",
            ] {
                assert!(
                    sum[f].as_f64().is_some_and(|v| v >= 0.0),
                    "{name} {f}: {sum}"
                );
            }
            assert!(sum["p50_us"].as_f64() <= sum["p99_us"].as_f64(), "{name}");
            let ivs = s["intervals"].as_array().unwrap();
            assert!(!ivs.is_empty(), "{name}");
            let iv_ops: u64 = ivs.iter().map(|i| i["ops"].as_u64().unwrap()).sum();
            assert_eq!(iv_ops, sum["ops"].as_u64().unwrap(), "{name}");
            // On a block device (not tmpfs), the device as iostat shows it: for the step
            // and for each second; direct IO reaches it, so its requests are counted.
            if has_direct {
                let dev = &sum["device"];
                assert!(dev["r_s"].as_f64().is_some(), "{name}: {sum}");
                assert!(ivs.iter().all(|i| i["device"].is_object()), "{name}");
                if name.starts_with("randread.direct") {
                    assert!(dev["r_s"].as_f64().unwrap() > 0.0, "{name}: {dev}");
                    assert!(dev["rareq_kb"].as_f64().unwrap() >= 4.0, "{name}: {dev}");
                    assert!(dev["r_await_ms"].as_f64().is_some(), "{name}: {dev}");
                }
                if name.starts_with("seqwrite.direct") {
                    assert!(dev["w_s"].as_f64().unwrap() > 0.0, "{name}: {dev}");
                }
            }
            // cpu_us_op's user and system parts.
            common::assert_cpu_split(name, sum);
        }
        if s["kind"] == "triad" {
            assert!(sum["mb_sec"].as_f64().unwrap() > 100.0, "{name}: {sum}");
        }
    }
    // Ceilings: printed and stored for this host.
    let ceilings = doc["ceilings"].as_array().unwrap();
    let cnames: Vec<&str> = ceilings
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let suffix = if has_direct { "" } else { ".buffered" };
    for want in [
        "mem.triad_gbs.t1".to_string(),
        "mem.load_latency_ns".into(),
        "cpu.ops_sec_per_core.t1".into(),
        format!("disk.seqwrite_1m_mbs{suffix}"),
        format!("disk.seqread_1m_mbs{suffix}"),
        format!("disk.randread_4k_iops{suffix}.qd1"),
        format!("disk.randread_4k_iops{suffix}.qd32"),
        format!("disk.commit_per_sec{suffix}.t1"),
    ] {
        assert!(
            cnames.contains(&want.as_str()),
            "{want} missing from {cnames:?}"
        );
    }
    assert!(
        ceilings.iter().all(|c| c["value"].as_f64().unwrap() > 0.0),
        "{ceilings:?}"
    );
    let host = doc["host"].as_str().unwrap();
    let st = plumb_store::Store::open(&store).unwrap();
    let stored = st.ceilings(host).unwrap();
    assert_eq!(stored.len(), ceilings.len());
    let run_id = doc["run"]["id"].as_i64().unwrap();
    assert!(stored.iter().all(|c| c.run_id == run_id));
    // The run reads back through `plumb show` like any other.
    let show = plumb(&store, &["show", &run_id.to_string(), "--json"]);
    assert!(show.status.success(), "{}", stderr(&show));
    assert_eq!(
        json_of(&show)["steps"].as_array().unwrap().len(),
        steps.len()
    );
    // The probe file is gone.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn refuses_devices_files_missing_dirs_and_huge_sizes_before_writing() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store.sqlite");
    let file = t.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["probe", "disk", "--dir", "/dev/null"], "is a device"),
        (
            vec!["probe", "disk", "--dir", file.to_str().unwrap()],
            "not a directory",
        ),
        (
            vec!["probe", "disk", "--dir", "/nonexistent/x"],
            "cannot be read",
        ),
        (
            vec![
                "probe",
                "disk",
                "--dir",
                dir.to_str().unwrap(),
                "--size",
                "1000T",
            ],
            "would leave less than",
        ),
        (
            vec![
                "probe",
                "disk",
                "--dir",
                dir.to_str().unwrap(),
                "--size",
                "1M",
            ],
            "--size",
        ),
        (
            vec![
                "probe",
                "disk",
                "--dir",
                dir.to_str().unwrap(),
                "--depths",
                "0",
            ],
            "--depths",
        ),
        (
            vec![
                "probe",
                "disk",
                "--dir",
                dir.to_str().unwrap(),
                "--tests",
                "nope",
            ],
            "--tests",
        ),
        (vec!["probe", "disk"], "--dir"),
        (
            vec!["probe", "mem", "--dir", dir.to_str().unwrap()],
            "only applies",
        ),
    ];
    for (args, want) in cases {
        let o = plumb(&store, &args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    assert!(!store.exists(), "a refused probe must not record a run");
}

#[test]
fn ctrl_c_stops_the_disk_probe_and_removes_its_file() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let store = t.path().join("store.sqlite");
    let child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "probe", "disk", "--quick", "--tests", "randread", "--io", "buffered",
        ])
        .args(["--secs", "30", "--dir"])
        .arg(&dir)
        .arg("--store")
        .arg(&store)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A guard against hanging forever, not a measurement.
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_dir(&dir).unwrap().count() == 0 {
        assert!(Instant::now() < deadline, "probe file never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let k = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    let out = child.wait_with_output().unwrap();
    // 130 only comes from the interrupt path (a run left to finish exits 0).
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "probe file left behind"
    );
}

/// The deck's example datasheet (Greg Smith's "vendors lie"): a PM983.
const PM983: &str = r#"
[device]
model = "Samsung PM983"
class = "nvme"
power_loss_protection = true
[rated]
randread_iops = 540000
randread_qd = 32
seqread_mbps = 3000
endurance_tbw = 1366
"#;

#[test]
fn rated_figures_beside_a_quick_probe_give_the_ratio_table_kept_with_the_run() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let store = t.path().join("store.sqlite");
    let rated = t.path().join("pm983.toml");
    std::fs::write(&rated, PM983).unwrap();
    let o = plumb(
        &store,
        &[
            "probe",
            "disk",
            "--quick",
            "--dir",
            dir.to_str().unwrap(),
            "--tests",
            "seqread,randread,commit,zcav",
            "--bs",
            "4k,8k",
            "--secs",
            "0.3",
            "--rated",
            rated.to_str().unwrap(),
            // A flag over the file's figure.
            "--rated-set",
            "rated.seqread_mbps=1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    for want in [
        "rated against measured (Samsung PM983",
        "4k random read IOPS at qd32",
        "measured/rated",
        "sequential read",
        "endurance 1366 TBW rated",
        "commit durability:",
        "read speed by position (zcav)",
        "randread8k.",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    let run_id: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next()?.parse().ok())
        .expect("run id in the output");
    // Stored with the run: the rated figures, each ratio, the cache verdict.
    let show = plumb(&store, &["show", &run_id.to_string(), "--json"]);
    assert!(show.status.success(), "{}", stderr(&show));
    let doc = json_of(&show);
    let opts = &doc["run"]["options"];
    assert_eq!(opts["rated.randread_iops"], "540000.0", "{opts}");
    assert_eq!(opts["rated.class"], "nvme");
    assert_eq!(opts["rated.seqread_mbps"], "1.0", "{opts}");
    assert!(opts["rated.seqread_mbps.ratio"]
        .as_str()
        .unwrap()
        .contains("above rated"));
    for key in ["rated.randread_iops.ratio", "rated.seqread_mbps.ratio"] {
        let v = opts[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {opts}"));
        // "0.14 far below rated (74200 IOPS)": a ratio, then a verdict.
        let ratio: f64 = v.split(' ').next().unwrap().parse().unwrap();
        assert!(ratio > 0.0, "{key}: {v}");
    }
    // PLP declared: the commit rate cannot be a lying cache.
    let cache = opts["durability.write_cache"].as_str().unwrap();
    assert!(
        cache.starts_with("ok:") && cache.contains("power-loss protection"),
        "{cache}"
    );
    let steps = doc["steps"].as_array().unwrap();
    let zcav: Vec<&serde_json::Value> = steps
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("zcav."))
        .collect();
    assert_eq!(zcav.len(), 8, "--quick scans 8 slices");
    assert_eq!(zcav[0]["name"], "zcav.000");
    assert_eq!(zcav[7]["config"]["offset"], 7 * (32u64 << 20));
    // `plumb show` prints the table again, rebuilt from the stored steps.
    let show = plumb(&store, &["show", &run_id.to_string()]);
    let shown = String::from_utf8_lossy(&show.stdout).to_string();
    assert!(
        shown.contains("4k random read IOPS at qd32") && shown.contains("commit durability: ok"),
        "{shown}"
    );
    assert!(shown.contains("read speed by position (zcav)"), "{shown}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn bad_rated_files_and_device_misuse_are_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store.sqlite");
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let file = t.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let bad = t.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[device]\nclass = \"nvme\"\n[rated]\nrandread_iosp = 5\n",
    )
    .unwrap();
    let ok = t.path().join("ok.toml");
    std::fs::write(&ok, PM983).unwrap();
    let neg = t.path().join("neg.toml");
    std::fs::write(&neg, "[rated]\nseqread_mbps = -1\n").unwrap();
    let d = dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![
                "probe",
                "disk",
                "--dir",
                d,
                "--rated",
                bad.to_str().unwrap(),
            ],
            format!("{}:4: rated.randread_iosp: unknown field", bad.display()),
        ),
        (
            vec![
                "probe",
                "disk",
                "--dir",
                d,
                "--rated",
                neg.to_str().unwrap(),
            ],
            format!(
                "{}:2: rated.seqread_mbps: -1 is not a positive number",
                neg.display()
            ),
        ),
        (
            vec!["probe", "disk", "--dir", d, "--rated-set", "rated.x=1"],
            "--rated-set:1: rated.x: unknown field".into(),
        ),
        (
            vec!["probe", "disk", "--device", "/dev/null"],
            "--device /dev/null: is not a block device".into(),
        ),
        (
            vec!["probe", "disk", "--device", file.to_str().unwrap()],
            "is not a block device".into(),
        ),
        (
            vec!["probe", "disk", "--device", "/dev/null", "--dir", d],
            "give one".into(),
        ),
        (
            vec!["probe", "disk", "--dir", d, "--bs", "1000"],
            "--bs".into(),
        ),
        (
            vec!["probe", "mem", "--rated", ok.to_str().unwrap()],
            "only applies".into(),
        ),
    ];
    for (args, want) in cases {
        let o = plumb(&store, &args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    assert!(!store.exists(), "a refused probe must not record a run");
}
