use super::*;
use plumb_core::{DeviceIo, Qos};

/// A device as a 1-second interval of random 4 KiB reads shows it.
fn device() -> DeviceIo {
    DeviceIo {
        r_s: 2000.0,
        rmb_s: 7.8125,
        r_await_ms: Some(0.25),
        rareq_kb: Some(4.0),
        w_s: 0.0,
        wmb_s: 0.0,
        w_await_ms: None,
        wareq_kb: None,
        f_s: None,
        aqu_sz: Some(0.5),
        util_pct: Some(49.5),
    }
}

mod both;

fn new_run(tag: &str) -> NewRun {
    NewRun {
        tag: Some(tag.into()),
        command: "plumb kv --num 10".into(),
        workload: "fillseq,readrandom".into(),
        engine: "memory".into(),
        engine_version: "0.1.0".into(),
        plumb_version: "0.1.0".into(),
        options: [("num".to_string(), "10".to_string())].into(),
        seed: u64::MAX,
        started_at: "2026-11-22T00:00:00Z".into(),
        ..NewRun::default()
    }
}

fn step(seq: i64) -> StepRecord {
    StepRecord {
        seq,
        name: "readrandom".into(),
        kind: plumb_workloads::StepKind::ReadRandom.into(),
        status: plumb_core::StepStatus::Ok,
        error: None,
        started_at: "a".into(),
        ended_at: "b".into(),
        config: serde_json::json!({"threads": 2}),
        summary: StepSummary {
            ops: 30,
            secs: 2.5,
            ops_sec: 12.0,
            p99_us: Some(7.5),
            rkb_op: None,
            usr_us_op: Some(1.25),
            sys_us_op: Some(0.5),
            device: Some(device()),
            qos: Some(Qos {
                min: 1.0,
                cv: 0.5,
                intervals: 2,
                ..Qos::default()
            }),
            ..StepSummary::default()
        },
    }
}

fn round_trip_of_run_steps_and_intervals(open: &dyn Fn() -> Store) {
    let mut s = open();
    let id = s.begin_run(&new_run("<b>t</b>")).unwrap();
    let ivs = vec![
        Interval {
            t: 1.0,
            secs: 1.0,
            ops: 10,
            ops_sec: 10.0,
            rd: Some(3),
            device: Some(device()),
            steal_pct: Some(12.5),
            outside_cpu_pct: Some(48.25),
            target_ops_sec: Some(1250.5),
            threads: Some(2.5),
            ..Interval::default()
        },
        Interval {
            t: 2.5,
            secs: 1.5,
            ops: 20,
            ops_sec: 13.3,
            ..Interval::default()
        },
    ];
    s.add_step(id, &step(0), &ivs).unwrap();
    s.finish_run(id, RunStatus::Ok, "2026-11-22T00:01:00Z")
        .unwrap();
    let got = s.run(id).unwrap();
    assert_eq!(got.run.status, RunStatus::Ok);
    assert_eq!(got.run.tag.as_deref(), Some("<b>t</b>"));
    assert_eq!(got.run.seed, u64::MAX.to_string());
    assert_eq!(got.run.options["num"], "10");
    assert_eq!(got.steps.len(), 1);
    assert_eq!(got.steps[0].0, step(0));
    assert_eq!(got.steps[0].1, ivs);
    assert_eq!(s.runs(10).unwrap().len(), 1);
    assert!(matches!(s.run(99), Err(StoreError::NoRun { run: 99, .. })));
    // Summaries of many runs: each run's steps in order, no interval rows, in id order,
    // an unknown id left out.
    let two = s.begin_run(&new_run("two")).unwrap();
    s.add_step(two, &step(0), &ivs).unwrap();
    s.add_step(two, &step(1), &ivs).unwrap();
    let sums = s.runs_summaries(&[two, 99, id]).unwrap();
    assert_eq!(
        sums.iter().map(|r| r.run.id).collect::<Vec<_>>(),
        vec![id, two]
    );
    assert_eq!(sums[0].run, got.run);
    let steps = |r: &StoredRun| r.steps.iter().map(|(st, _)| st.clone()).collect::<Vec<_>>();
    assert_eq!(steps(&sums[0]), vec![step(0)]);
    assert_eq!(steps(&sums[1]), vec![step(0), step(1)]);
    assert!(sums
        .iter()
        .all(|r| r.steps.iter().all(|(_, iv)| iv.is_empty())));
    assert_eq!(s.run_summaries(two).unwrap(), sums[1]);
    assert!(matches!(
        s.run_summaries(99),
        Err(StoreError::NoRun { run: 99, .. })
    ));
}

fn a_step_without_its_run_is_refused_whole(open: &dyn Fn() -> Store) {
    let mut s = open();
    assert!(s.add_step(42, &step(0), &[Interval::default()]).is_err());
    let n = s.query("SELECT count(*) FROM intervals", &[]).unwrap()[0]
        .int(0)
        .unwrap();
    assert_eq!(n, 0, "no half-written step");
    // The failed transaction left the connection usable.
    assert!(s.begin_run(&new_run("after")).is_ok());
}

#[test]
fn migrations_bring_any_older_store_up_and_refuse_newer() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.sqlite");
    {
        let s = Store::open(&p).unwrap();
        assert_eq!(
            s.schema_version().unwrap(),
            migrations::MIGRATIONS.len() as i64
        );
    }
    // Re-opening is a no-op and keeps data.
    {
        let s = Store::open(&p).unwrap();
        s.begin_run(&new_run("x")).unwrap();
    }
    assert_eq!(Store::open(&p).unwrap().runs(5).unwrap().len(), 1);
    // A version-0 file (empty database) is migrated from scratch.
    let p0 = dir.path().join("old.sqlite");
    rusqlite::Connection::open(&p0)
        .unwrap()
        .execute_batch("CREATE TABLE unrelated (x);")
        .unwrap();
    assert_eq!(
        Store::open(&p0).unwrap().schema_version().unwrap(),
        migrations::MIGRATIONS.len() as i64
    );
    // A store from the future is refused with a message naming the file.
    let conn = rusqlite::Connection::open(&p).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let e = Store::open(&p).err().unwrap().to_string();
    assert!(e.contains("p.sqlite") && e.contains("99"), "{e}");
}

#[test]
fn a_version_1_store_with_runs_is_migrated_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v1.sqlite");
    {
        let mut conn = rusqlite::Connection::open(&p).unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(migrations::MIGRATIONS[0]).unwrap();
        tx.pragma_update(None, "user_version", 1).unwrap();
        tx.execute(
            "INSERT INTO runs (status, command, workload, engine, engine_version, plumb_version,
               options, seed, started_at) VALUES ('ok', 'c', 'w', 'e', 'v', 'p', '{}', '1', 't')",
            [],
        )
        .unwrap();
        tx.commit().unwrap();
    }
    let s = Store::open(&p).unwrap();
    let runs = s.runs(10).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].group_id, None);
    s.set_group(runs[0].id, runs[0].id, 0).unwrap();
    assert_eq!(s.group(runs[0].id).unwrap(), vec![runs[0].id]);
}

/// A store written by the previous schema (version 2: runs, steps, intervals, groups,
/// ceilings), filled the way that plumb filled it, is migrated and every run reads back.
#[test]
fn a_version_2_store_is_migrated_and_every_run_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v2.sqlite");
    {
        let mut conn = rusqlite::Connection::open(&p).unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(migrations::MIGRATIONS[0]).unwrap();
        tx.execute_batch(migrations::MIGRATIONS[1]).unwrap();
        tx.pragma_update(None, "user_version", 2).unwrap();
        tx.execute(
            "INSERT INTO runs (status, command, workload, engine, engine_version, plumb_version,
               options, seed, started_at, ended_at, group_id, repeat_index, host)
             VALUES ('ok', 'plumb kv', 'fillseq', 'rocksdb', '11.8.1', '0.1.0',
               '{\"num\":\"10\"}', '18446744073709551615', 't0', 't1', 1, 0,
               '{\"inventory\":{\"hostname\":\"h\"}}')",
            [],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO runs (status, command, workload, engine, engine_version, plumb_version,
               options, seed, started_at) VALUES ('running', 'c', 'w', 'e', 'v', 'p', '{}', '1', 't')",
            [],
        )
        .unwrap();
        let summary = serde_json::to_string(&step(0).summary).unwrap();
        tx.execute(
            "INSERT INTO steps (run_id, seq, name, kind, status, error, started_at, ended_at,
               config, ops, secs, ops_sec, summary)
             VALUES (1, 0, 'fillseq', 'fillseq', 'ok', NULL, 'a', 'b', '{}', 30, 2.5, 12.0, ?1)",
            [summary],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO intervals (step_id, idx, t, secs, ops, ops_sec) VALUES (1, 0, 1, 1, 30, 30)",
            [],
        )
        .unwrap();
        tx.commit().unwrap();
    }
    let s = Store::open(&p).unwrap();
    assert_eq!(
        s.schema_version().unwrap(),
        migrations::MIGRATIONS.len() as i64
    );
    let old = s.run(1).unwrap();
    assert_eq!(old.run.status, RunStatus::Ok);
    assert_eq!(old.run.seed, "18446744073709551615");
    assert_eq!(old.run.options["num"], "10");
    assert_eq!((old.run.plan.as_ref(), old.run.suite_id), (None, None));
    assert_eq!(old.steps.len(), 1);
    assert_eq!(old.steps[0].0.status, plumb_core::StepStatus::Ok);
    assert_eq!(
        old.steps[0].0.kind,
        plumb_workloads::StepKind::FillSeq.into()
    );
    assert_eq!(old.steps[0].1.len(), 1);
    assert_eq!(
        old.steps[0].1[0].device, None,
        "an old interval has no device"
    );
    // An older, partial host snapshot reads back typed, its missing fields defaulted.
    let host = old.run.host.as_ref().expect("the stored snapshot");
    assert_eq!(host.inventory.hostname.as_deref(), Some("h"));
    assert!(host.checks.is_empty());
    assert_eq!(s.run(2).unwrap().run.status, RunStatus::Running);
    assert_eq!(s.runs(10).unwrap().len(), 2);

    // A step kind this plumb does not know is an error naming it, not a panic.
    rusqlite::Connection::open(&p)
        .unwrap()
        .execute(
            "INSERT INTO steps (run_id, seq, name, kind, status, started_at, ended_at, config,
               ops, secs, ops_sec, summary)
             VALUES (2, 0, 'x', 'nosuchkind', 'ok', 'a', 'b', '{}', 0, 0, 0, '{}')",
            [],
        )
        .unwrap();
    let e = s.run(2).unwrap_err().to_string();
    assert!(e.contains("nosuchkind"), "{e}");
}

fn suites_are_found_by_definition_until_they_finish(open: &dyn Fn() -> Store) {
    let s = open();
    let new = NewSuite {
        name: "sweep".into(),
        file: Some("sweep.toml".into()),
        definition_hash: "abc".into(),
        plan: serde_json::json!({"runs": []}),
        started_at: "t".into(),
    };
    let id = s.begin_suite(&new).unwrap();
    let run = s
        .begin_run(&NewRun {
            suite_id: Some(id),
            plan: Some(serde_json::json!({"seed": 1})),
            plan_hash: Some("h1".into()),
            ..new_run("x")
        })
        .unwrap();
    assert_eq!(s.unfinished_suite("abc").unwrap().unwrap().id, id);
    assert!(s.unfinished_suite("other").unwrap().is_none());
    // A run left running by a killed process is marked interrupted on resume.
    assert_eq!(s.interrupt_stale_runs(id, "t2").unwrap(), 1);
    let runs = s.suite_runs(id).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, run);
    assert_eq!(runs[0].status, RunStatus::Interrupted);
    assert_eq!(runs[0].plan_hash.as_deref(), Some("h1"));
    assert_eq!(runs[0].plan, Some(serde_json::json!({"seed": 1})));
    s.finish_suite(id, RunStatus::Ok, Some("t3")).unwrap();
    assert!(s.unfinished_suite("abc").unwrap().is_none());
    assert_eq!(s.suite(id).unwrap().status, RunStatus::Ok);
}

fn ceilings_keep_the_newest_figure_per_host_and_name(open: &dyn Fn() -> Store) {
    let mut s = open();
    let id = s.begin_run(&new_run("probe")).unwrap();
    let c = |name: &str, value: f64| Ceiling {
        name: name.into(),
        value,
        unit: "IOPS".into(),
    };
    s.add_ceilings(id, "h1", "t1", &[c("disk.a", 1.0), c("disk.b", 2.0)])
        .unwrap();
    s.add_ceilings(id, "h1", "t2", &[c("disk.a", 3.0)]).unwrap();
    s.add_ceilings(id, "h2", "t3", &[c("disk.a", 9.0)]).unwrap();
    let got = s.ceilings("h1").unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].ceiling.value, got[0].measured_at.as_str()),
        (3.0, "t2")
    );
    assert_eq!(got[1].ceiling.value, 2.0);
}

fn options_added_after_the_start_merge_with_the_runs_own(open: &dyn Fn() -> Store) {
    let s = open();
    let id = s.begin_run(&new_run("probe")).unwrap();
    let other = s.begin_run(&new_run("other")).unwrap();
    let extra: std::collections::BTreeMap<String, String> = [
        ("rated.randread_iops.ratio".to_string(), "0.56".to_string()),
        ("num".to_string(), "11".to_string()),
    ]
    .into();
    s.add_options(id, &extra).unwrap();
    let o = s.run(id).unwrap().run.options;
    assert_eq!(o["rated.randread_iops.ratio"], "0.56");
    assert_eq!(o["num"], "11");
    assert_eq!(s.run(other).unwrap().run.options["num"], "10");
}

fn a_run_left_running_by_a_dead_process_is_marked_interrupted_at_the_next_open(
    open: &dyn Fn() -> Store,
) {
    let mut s = open();
    let live = s.begin_run(&new_run("live")).unwrap();
    let dead = s.begin_run(&new_run("dead")).unwrap();
    s.add_step(dead, &step(0), &[]).unwrap();
    let elsewhere = s.begin_run(&new_run("elsewhere")).unwrap();
    // `dead` belongs to a process with this pid but another start time (gone), and
    // `elsewhere` to a process on another host (never judged).
    let me = crate::owner::Owner::current().unwrap().encode();
    let mut f: Vec<&str> = me.split(' ').collect();
    let later = (f[3].parse::<u64>().unwrap() + 1).to_string();
    f[3] = &later;
    let gone = f.join(" ");
    s.exec(
        "UPDATE runs SET owner = ?1 WHERE id = ?2",
        &[gone.into(), dead.into()],
    )
    .unwrap();
    s.exec(
        "UPDATE runs SET owner = 'otherhost b 1 1' WHERE id = ?1",
        &[elsewhere.into()],
    )
    .unwrap();
    drop(s);
    let s = open();
    let r = s.run(dead).unwrap().run;
    assert_eq!(r.status, RunStatus::Interrupted);
    // It ended when its last stored step did.
    assert_eq!(r.ended_at.as_deref(), Some(step(0).ended_at.as_str()));
    assert_eq!(
        s.run(dead).unwrap().steps.len(),
        1,
        "its finished step is kept"
    );
    assert_eq!(s.run(live).unwrap().run.status, RunStatus::Running);
    assert_eq!(s.run(elsewhere).unwrap().run.status, RunStatus::Running);
}

/// Fuzzing by property: a store whose rows hold anything (a summary, options or host
/// that is not what plumb wrote, a kind or status it does not know) reads back or gives
/// an error, never a panic; a file of random bytes is refused and left as it was.
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn junk() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            Just("{}".to_string()),
            Just("null".to_string()),
            r#"\{"[a-z_]{1,8}":(-?[0-9]{1,5}|"[a-z]*"|\[\]|null)\}"#,
        ]
    }

    proptest! {
        #[test]
        fn rows_holding_anything_read_back_or_fail_cleanly(
            summary in junk(), options in junk(), host in junk(), config in junk(),
            kind in "[a-z.]{0,12}", status in "[a-z]{0,10}", seed in "[0-9a-z]{0,22}",
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut s = Store::open(&dir.path().join("s.sqlite")).unwrap();
            let id = s.begin_run(&new_run("t")).unwrap();
            s.add_step(id, &step(0), &[]).unwrap();
            s.exec(
                "UPDATE runs SET options = ?1, host = ?2, seed = ?3, status = ?4 WHERE id = ?5",
                &[options.into(), host.into(), seed.into(), status.into(), id.into()],
            ).unwrap();
            s.exec(
                "UPDATE steps SET summary = ?1, config = ?2, kind = ?3 WHERE run_id = ?4",
                &[summary.into(), config.into(), kind.into(), id.into()],
            ).unwrap();
            let _ = s.run(id);
            let _ = s.runs(10);
        }

        #[test]
        fn a_file_of_random_bytes_is_refused_and_left_alone(bytes in proptest::collection::vec(any::<u8>(), 1..4096)) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("s.sqlite");
            std::fs::write(&p, &bytes).unwrap();
            if Store::open(&p).is_err() {
                prop_assert_eq!(std::fs::read(&p).unwrap(), bytes);
            }
        }
    }
}

#[test]
fn a_url_is_refused_as_a_store_without_its_password_and_without_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("mysql://bench:s3cret@db1:3306/plumb");
    // (joined under the temp dir, so a wrongly made directory would land there)
    let e = Store::open(Path::new("mysql://bench:s3cret@db1:3306/plumb"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("mysql://bench:***@db1:3306/plumb"), "{e}");
    assert!(e.contains("postgres://"), "says what is taken: {e}");
    assert!(!e.contains("s3cret"), "{e}");
    assert!(!Path::new("mysql:").exists());
    assert!(Store::open(&url).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(Store::check_path(Path::new("/var/tmp/plumb.sqlite")).is_ok());
    assert!(Store::check_path(Path::new("postgres://u:pw@h/db")).is_ok());
}

#[test]
fn a_postgres_store_that_cannot_be_reached_is_one_error_without_its_password() {
    // Port 1 on this host: refused at once.
    let e = Store::open(Path::new("postgres://bench:s3cret@127.0.0.1:1/plumb"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with("store postgres://bench:***@127.0.0.1:1/plumb: cannot connect"),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "{e}");
    assert!(!Path::new("postgres:").exists());
}

/// A summary and an interval stored before the device and the CPU split existed read
/// back with them unset; new ones with no device leave the keys out.
#[test]
fn summaries_and_intervals_without_device_or_cpu_split_still_parse() {
    let old = r#"{"ops": 10, "secs": 1.0, "ops_sec": 10.0, "mb_sec": null, "p50_us": 1.0,
        "p99_us": 2.0, "p999_us": null, "p9999_us": null, "pmax_us": 3.0, "cpu_us_op": 4.0,
        "harness_us_op": null, "csw_op": null, "rd_op": 0.5, "rkb_op": 2.0, "wr_op": 0.0,
        "wkb_op": 0.0, "w_amp": null, "w_amp_engine": null, "c_wgb": null, "stall_pct": null,
        "db_gb": null, "space_amp": null, "rss_gb": null, "qos": null,
        "verify": {"mismatches": 0, "missing": 0, "not_found": 0, "verified": 0},
        "hw": {"instructions_op": null, "cycles_op": null, "ipc": null,
               "cache_misses_op": null, "branch_misses_op": null, "unsupported": null},
        "writer": null}"#;
    let s: StepSummary = serde_json::from_str(old).unwrap();
    assert_eq!(s.cpu_us_op, Some(4.0));
    assert_eq!((s.usr_us_op, s.sys_us_op, s.device), (None, None, None));
    assert_eq!((s.steal_pct, s.outside_cpu_pct), (None, None));
    let i: Interval = serde_json::from_str(
        r#"{"t": 1.0, "secs": 1.0, "ops": 5, "ops_sec": 5.0, "p50_us": null, "p99_us": null,
            "pmax_us": null, "cpu_us": 9.0, "rd": 1, "rkb": 4.0, "wr": 0, "wkb": 0.0,
            "stall_us": null, "rss_gb": null}"#,
    )
    .unwrap();
    assert_eq!((i.rd, i.device), (Some(1), None));
    assert_eq!((i.steal_pct, i.outside_cpu_pct), (None, None));
    let json = serde_json::to_value(Interval::default()).unwrap();
    assert!(json.get("device").is_none(), "{json}");
    // A device object missing a figure (a later plumb may add some) still parses.
    let d: DeviceIo = serde_json::from_str(r#"{"r_s": 1.0, "util_pct": 2.0}"#).unwrap();
    assert_eq!((d.r_s, d.util_pct, d.r_await_ms), (1.0, Some(2.0), None));
}
