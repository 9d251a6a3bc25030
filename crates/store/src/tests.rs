use super::*;
use plumb_core::Qos;

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
        kind: "readrandom".into(),
        status: "ok".into(),
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

#[test]
fn round_trip_of_run_steps_and_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("sub/plumb.sqlite")).unwrap();
    let id = s.begin_run(&new_run("<b>t</b>")).unwrap();
    let ivs = vec![
        Interval {
            t: 1.0,
            secs: 1.0,
            ops: 10,
            ops_sec: 10.0,
            rd: Some(3),
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
    s.finish_run(id, "ok", "2026-11-22T00:01:00Z").unwrap();
    let got = s.run(id).unwrap();
    assert_eq!(got.run.status, "ok");
    assert_eq!(got.run.tag.as_deref(), Some("<b>t</b>"));
    assert_eq!(got.run.seed, u64::MAX.to_string());
    assert_eq!(got.run.options["num"], "10");
    assert_eq!(got.steps.len(), 1);
    assert_eq!(got.steps[0].0, step(0));
    assert_eq!(got.steps[0].1, ivs);
    assert_eq!(s.runs(10).unwrap().len(), 1);
    assert!(matches!(s.run(99), Err(StoreError::NoRun { run: 99, .. })));
}

#[test]
fn a_step_without_its_run_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("p.sqlite")).unwrap();
    assert!(s.add_step(42, &step(0), &[Interval::default()]).is_err());
    let n: i64 = s
        .conn
        .query_row("SELECT count(*) FROM intervals", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0, "no half-written step");
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

#[test]
fn ceilings_keep_the_newest_figure_per_host_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
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
