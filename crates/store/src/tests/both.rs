//! The store's cases, each run on a SQLite file and on a PostgreSQL database (a real
//! server, started here): what works on one must work on the other.

use super::*;
use crate::queue::QueueStatus;

/// A case: given a way to open (and reopen) one fresh store, it asserts.
type Case = fn(&dyn Fn() -> Store);

const CASES: &[(&str, Case)] = &[
    ("round_trip", super::round_trip_of_run_steps_and_intervals),
    (
        "step_without_run",
        super::a_step_without_its_run_is_refused_whole,
    ),
    (
        "suites",
        super::suites_are_found_by_definition_until_they_finish,
    ),
    (
        "ceilings",
        super::ceilings_keep_the_newest_figure_per_host_and_name,
    ),
    (
        "add_options",
        super::options_added_after_the_start_merge_with_the_runs_own,
    ),
    (
        "orphans",
        super::a_run_left_running_by_a_dead_process_is_marked_interrupted_at_the_next_open,
    ),
    ("profiles", profiles_are_replaced_not_doubled),
    (
        "queue",
        queue_items_are_claimed_once_and_freed_when_the_lease_runs_out,
    ),
    (
        "queue_threads",
        concurrent_workers_never_claim_one_item_twice,
    ),
    ("reopen", reopening_keeps_runs_and_the_schema_version),
    ("barrier", clients_meet_at_a_barrier_once),
    ("histograms", client_runs_keep_their_histograms),
    ("repeats", repeats_run_by_many_workers_end_in_one_group),
    (
        "last_items",
        a_suite_ends_when_its_last_items_finish_at_once,
    ),
    ("triage", a_change_is_kept_once_and_its_triage_read_back),
    (
        "plan_keys",
        a_plans_runs_are_found_by_its_key_old_runs_keyed_on_open,
    ),
    (
        "bundle",
        runs_copied_into_another_store_read_back_equal_and_once,
    ),
    ("otava_sql", otava_queries_in_the_docs_read_this_store),
];

#[test]
fn every_case_on_sqlite() {
    for (name, case) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(format!("sub/{name}.sqlite"));
        case(&|| Store::open(&p).unwrap());
    }
}

/// One PostgreSQL server for every case, each case in a database of its own.
#[test]
fn every_case_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let server = plumb_servers::Managed::start(
        &plumb_servers::ServerChoice::parse("postgres", None, None).unwrap(),
        &plumb_servers::StartOptions {
            dir: Some(dir.path().to_path_buf()),
            keep: false,
            port: None,
            cache_mb: 64,
            config: None,
            waldir: None,
            ram_mb: None,
        },
    )
    .expect("PostgreSQL starts (the test command installs it)");
    let base = server.endpoint.redacted_url();
    let db = &server.endpoint.database;
    let mut admin = postgres::Client::connect(&base, postgres::NoTls).unwrap();
    for (name, case) in CASES {
        let case_db = format!("store_{name}");
        admin
            .batch_execute(&format!("CREATE DATABASE {case_db}"))
            .unwrap();
        let url = base.replacen(&format!("/{db}"), &format!("/{case_db}"), 1);
        case(&|| Store::open(Path::new(&url)).unwrap());
        let s = Store::open(Path::new(&url)).unwrap();
        assert!(s.is_shared(), "{name}");
        assert!(s.shown().starts_with("postgres://"), "{name}");
    }
    // A store from the future is refused, naming it.
    let url = base.replacen(&format!("/{db}"), "/store_round_trip", 1);
    Store::open(Path::new(&url))
        .unwrap()
        .exec("UPDATE plumb_schema SET version = 99", &[])
        .unwrap();
    let e = Store::open(Path::new(&url)).err().unwrap().to_string();
    assert!(e.contains("store_round_trip") && e.contains("99"), "{e}");
}

fn reopening_keeps_runs_and_the_schema_version(open: &dyn Fn() -> Store) {
    let s = open();
    assert_eq!(
        s.schema_version().unwrap(),
        migrations::MIGRATIONS.len() as i64
    );
    let id = s.begin_run(&new_run("x")).unwrap();
    drop(s);
    let s = open();
    assert_eq!(s.runs(5).unwrap()[0].id, id);
    assert_eq!(
        s.schema_version().unwrap(),
        migrations::MIGRATIONS.len() as i64
    );
}

fn profiles_are_replaced_not_doubled(open: &dyn Fn() -> Store) {
    let mut s = open();
    let run = s.begin_run(&new_run("p")).unwrap();
    let step_id = s.add_step(run, &step(0), &[]).unwrap();
    s.add_profile(step_id, "a;b 10").unwrap();
    s.add_profile(step_id, "a;c 20").unwrap();
    assert_eq!(
        s.profiles(run).unwrap(),
        vec![("readrandom".to_string(), "a;c 20".to_string())]
    );
}

fn queue_items_are_claimed_once_and_freed_when_the_lease_runs_out(open: &dyn Fn() -> Store) {
    let s = open();
    let suite = s
        .begin_suite(&NewSuite {
            name: "q".into(),
            file: None,
            definition_hash: "h".into(),
            plan: serde_json::json!({}),
            started_at: "t".into(),
        })
        .unwrap();
    let items: Vec<serde_json::Value> = (0..3).map(|i| serde_json::json!({ "n": i })).collect();
    let ids = s.enqueue("fleet", Some(suite), &items, "t0").unwrap();
    assert_eq!(ids.len(), 3);
    assert!(s.claim("other", "w", 60.0).unwrap().is_none());
    let a = s.claim("fleet", "a:1", 60.0).unwrap().unwrap();
    let b = s.claim("fleet", "b:2", 60.0).unwrap().unwrap();
    assert_eq!((a.id, b.id), (ids[0], ids[1]), "oldest first");
    assert_eq!(a.item, serde_json::json!({"n": 0}));
    assert!(s.heartbeat(&a).unwrap());
    // `a` dies: with a lease of 0 s its item is free again, claimed as a second attempt.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let a2 = s.claim("fleet", "c:3", 0.0).unwrap().unwrap();
    assert_eq!((a2.id, a2.attempt), (a.id, 2));
    // The dead claim can neither heartbeat nor finish the item.
    assert!(!s.heartbeat(&a).unwrap());
    assert!(!s
        .finish_item(&a, QueueStatus::Done, Some(7), None, "t1")
        .unwrap());
    assert!(s
        .finish_item(&a2, QueueStatus::Done, Some(8), None, "t1")
        .unwrap());
    assert!(
        !s.finish_item(&a2, QueueStatus::Done, Some(9), None, "t1")
            .unwrap(),
        "once"
    );
    assert!(s
        .finish_item(&b, QueueStatus::Failed, None, Some("boom"), "t2")
        .unwrap());
    assert_ne!(
        s.suite(suite).unwrap().status,
        RunStatus::Ok,
        "one item still queued"
    );
    let c = s.claim("fleet", "a:1", 60.0).unwrap().unwrap();
    assert!(s.claim("fleet", "a:1", 60.0).unwrap().is_none(), "drained");
    assert!(s
        .finish_item(&c, QueueStatus::Done, Some(10), None, "t3")
        .unwrap());
    let got = s.queue_items("fleet").unwrap();
    let by: Vec<_> = got
        .iter()
        .map(|i| (i.status, i.attempts, i.run_id, i.error.as_deref()))
        .collect();
    assert_eq!(
        by,
        vec![
            (QueueStatus::Done, 2, Some(8), None),
            (QueueStatus::Failed, 1, None, Some("boom")),
            (QueueStatus::Done, 1, Some(10), None),
        ]
    );
    // The suite ended with its last item, failed because one item failed.
    let suite = s.suite(suite).unwrap();
    assert_eq!(suite.status, RunStatus::Failed);
    assert_eq!(suite.ended_at.as_deref(), Some("t3"));
}

fn concurrent_workers_never_claim_one_item_twice(open: &dyn Fn() -> Store) {
    let s = open();
    let items: Vec<serde_json::Value> = (0..40).map(|i| serde_json::json!(i)).collect();
    s.enqueue("race", None, &items, "t").unwrap();
    let stores: Vec<Store> = (0..4).map(|_| open()).collect();
    let claimed: Vec<Vec<i64>> = std::thread::scope(|sc| {
        let hs: Vec<_> = stores
            .into_iter()
            .enumerate()
            .map(|(w, st)| {
                sc.spawn(move || {
                    let mut mine = Vec::new();
                    while let Some(c) = st.claim("race", &format!("w{w}"), 600.0).unwrap() {
                        assert!(st
                            .finish_item(&c, QueueStatus::Done, None, None, "t")
                            .unwrap());
                        mine.push(c.id);
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<i64> = claimed.concat();
    all.sort_unstable();
    let n = all.len();
    all.dedup();
    assert_eq!((n, all.len()), (40, 40), "each item claimed exactly once");
    assert!(s
        .queue_items("race")
        .unwrap()
        .iter()
        .all(|i| i.status == QueueStatus::Done && i.attempts == 1));
}

fn clients_meet_at_a_barrier_once(open: &dyn Fn() -> Store) {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;
    let no = AtomicBool::new(false);
    let stores: Vec<Store> = (0..3).map(|_| open()).collect();
    let mut places: Vec<i64> = std::thread::scope(|sc| {
        let hs: Vec<_> = stores
            .into_iter()
            .enumerate()
            .map(|(i, st)| {
                let no = &no;
                sc.spawn(move || {
                    // Arrive one after another: the first waits for the last.
                    std::thread::sleep(Duration::from_millis(100 * i as u64));
                    let t = std::time::Instant::now();
                    let place = st.barrier("g/0", 3, Duration::from_secs(30), no).unwrap();
                    (place, t.elapsed())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                let (place, waited) = h.join().unwrap();
                if place == 0 {
                    assert!(waited >= Duration::from_millis(150), "{waited:?}");
                }
                place
            })
            .collect()
    });
    places.sort_unstable();
    assert_eq!(places, vec![0, 1, 2]);
    let s = open();
    let e = s
        .barrier("g/0", 3, Duration::from_secs(1), &no)
        .unwrap_err()
        .to_string();
    assert!(e.contains("already passed"), "{e}");
    let e = s
        .barrier("g/1", 2, Duration::from_millis(50), &no)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 of 2 clients arrived"), "{e}");
    let e = s
        .barrier("g/1", 4, Duration::from_millis(50), &no)
        .unwrap_err()
        .to_string();
    assert!(e.contains("with 2 clients, this one with 4"), "{e}");
}

fn client_runs_keep_their_histograms(open: &dyn Fn() -> Store) {
    let mut s = open();
    let a = s.begin_run(&new_run("a")).unwrap();
    let b = s.begin_run(&new_run("b")).unwrap();
    s.begin_run(&new_run("other")).unwrap();
    s.set_client_group(a, "grp").unwrap();
    s.set_client_group(b, "grp").unwrap();
    let step_id = s.add_step(a, &step(0), &[]).unwrap();
    s.add_histograms(
        step_id,
        &[
            (crate::clients::WHOLE_STEP, "W".into()),
            (0, "I0".into()),
            (1, "I1".into()),
        ],
    )
    .unwrap();
    let ids: Vec<i64> = s.client_runs("grp").unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![a, b]);
    assert_eq!(
        s.histograms(a).unwrap(),
        vec![
            ("readrandom".to_string(), -1, "W".to_string()),
            ("readrandom".to_string(), 0, "I0".to_string()),
            ("readrandom".to_string(), 1, "I1".to_string()),
        ]
    );
    assert!(s.histograms(b).unwrap().is_empty());
}

/// Four workers each store a repeat of variant `a` as a group of its own, at once, then
/// join: every repeat of `a` ends in the group of its earliest run; `b` is left alone.
fn repeats_run_by_many_workers_end_in_one_group(open: &dyn Fn() -> Store) {
    let s = open();
    let suite = s
        .begin_suite(&NewSuite {
            name: "r".into(),
            file: None,
            definition_hash: "h".into(),
            plan: serde_json::json!({}),
            started_at: "t".into(),
        })
        .unwrap();
    let run = |st: &Store, variant: &str, repeat: i64| {
        let mut r = new_run(variant);
        r.suite_id = Some(suite);
        r.options = [("variant".to_string(), variant.to_string())].into();
        let id = st.begin_run(&r).unwrap();
        st.set_group(id, id, repeat).unwrap();
        id
    };
    let b = run(&s, "b", 0);
    let stores: Vec<Store> = (0..4).map(|_| open()).collect();
    let ids: Vec<i64> = std::thread::scope(|sc| {
        let hs: Vec<_> = stores
            .into_iter()
            .enumerate()
            .map(|(w, st)| {
                let run = &run;
                sc.spawn(move || {
                    let id = run(&st, "a", w as i64);
                    let g = st.join_repeats(suite, id).unwrap();
                    assert!(g.is_some_and(|g| g <= id), "{g:?} {id}");
                    id
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = *ids.iter().min().unwrap();
    let mut grouped = s.group(first).unwrap();
    grouped.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(grouped, want, "every repeat of a in one group");
    assert_eq!(s.group(b).unwrap(), vec![b], "b keeps its own group");
    assert_eq!(s.join_repeats(suite, b).unwrap(), Some(b));
    assert_eq!(
        s.join_repeats(suite + 1, b).unwrap(),
        None,
        "not that suite's run"
    );
}

/// Two workers finish a suite's last two items at the same moment: the suite ends (each
/// asks "was that the last?" and one of them must see the other's item done). Tried
/// twenty times, as the moment is a race.
fn a_suite_ends_when_its_last_items_finish_at_once(open: &dyn Fn() -> Store) {
    let s = open();
    for round in 0..20 {
        let suite = s
            .begin_suite(&NewSuite {
                name: format!("last{round}"),
                file: None,
                definition_hash: format!("h{round}"),
                plan: serde_json::json!({}),
                started_at: "t".into(),
            })
            .unwrap();
        let queue = format!("last{round}");
        let items = [serde_json::json!(1), serde_json::json!(2)];
        s.enqueue(&queue, Some(suite), &items, "t0").unwrap();
        let stores: Vec<Store> = (0..2).map(|_| open()).collect();
        let claims: Vec<_> = stores
            .iter()
            .map(|st| st.claim(&queue, "w", 600.0).unwrap().unwrap())
            .collect();
        let go = std::sync::Barrier::new(2);
        std::thread::scope(|sc| {
            for (st, c) in stores.into_iter().zip(claims) {
                let go = &go;
                sc.spawn(move || {
                    go.wait();
                    assert!(st
                        .finish_item(&c, QueueStatus::Done, None, None, "t1")
                        .unwrap());
                });
            }
        });
        assert_eq!(
            s.suite(suite).unwrap().status,
            RunStatus::Ok,
            "round {round}"
        );
    }
}

fn a_change_is_kept_once_and_its_triage_read_back(open: &dyn Fn() -> Store) {
    use crate::triage::{ChangeFilter, NewChange, TriageState};
    let s = open();
    let night = |at: i64, base_from: i64, seen_at: &str| NewChange {
        plan: "p1".into(),
        label: "readrandom on rocksdb".into(),
        step: "readrandom".into(),
        metric: "ops_sec".into(),
        direction: "regression".into(),
        at_run: at,
        before_run: Some(at - 1),
        last_run: at,
        base_from,
        ratio: 0.8,
        cause: Some("cpu/op +25%".into()),
        host: Some("db7".into()),
        reference: false,
        at_time: "2026-12-01T01:00:00Z".into(),
        seen_at: seen_at.into(),
    };
    let (a, new) = s
        .record_change(&night(10, 5, "2026-12-01T02:00:00Z"))
        .unwrap();
    assert!(new);
    // The next night finds it again against a base that still starts before it: kept once.
    let (b, new) = s
        .record_change(&night(11, 6, "2026-12-02T02:00:00Z"))
        .unwrap();
    assert_eq!((b, new), (a, false));
    let c = s.change(a).unwrap();
    assert_eq!((c.seen, c.last_run, c.at_run), (2, 11, 10));
    assert_eq!(c.state, TriageState::Untriaged);
    let set = s
        .set_triage(
            a,
            TriageState::Expected,
            Some("<b>new default</b>"),
            "ana",
            "2026-12-02T03:00:00Z",
        )
        .unwrap();
    assert_eq!(set.state, TriageState::Expected);
    assert_eq!(set.note.as_deref(), Some("<b>new default</b>"));
    // Reopened, the state is kept; the log says who set it.
    drop(s);
    let s = open();
    assert_eq!(s.change(a).unwrap().state, TriageState::Expected);
    assert_eq!(s.change_log(a).unwrap().len(), 1);
    assert_eq!(s.base_changes("p1").unwrap().len(), 1);
    // Found again against a base from before it: the same change. A base from after
    // it that still regresses is a new change.
    assert_eq!(s.record_change(&night(12, 9, "x")).unwrap(), (a, false));
    let (n, new) = s.record_change(&night(20, 10, "y")).unwrap();
    assert!(new && n != a);
    let listed = s
        .changes(&ChangeFilter {
            state: Some(TriageState::Untriaged),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(listed.iter().map(|c| c.id).collect::<Vec<_>>(), vec![n]);
    assert_eq!(s.count_changes(&ChangeFilter::default()).unwrap(), 2);
    // A reference run's change on the same host within a day flags the others.
    let mut r = night(30, 25, "z");
    r.plan = "reference-plan".into();
    r.reference = true;
    s.record_change(&r).unwrap();
    assert!(s.change(n).unwrap().host_wide);
    let e = s.change(999).unwrap_err().to_string();
    assert!(e.contains("no change 999"), "{e}");
}

/// Runs of two groups (one in a suite, with histograms, a profile and ceilings) copied
/// from a SQLite store into this one read back equal, ids mapped; a second import copies
/// nothing; a bundle written from this store holds the same runs, and importing it back
/// copies nothing either.
fn runs_copied_into_another_store_read_back_equal_and_once(open: &dyn Fn() -> Store) {
    use crate::bundle::{open_bundle, write_bundle, BundleError};
    let dir = tempfile::tempdir().unwrap();
    let mut src = Store::open(&dir.path().join("src.sqlite")).unwrap();
    let suite = src
        .begin_suite(&NewSuite {
            name: "nightly".into(),
            file: Some("nightly.toml".into()),
            definition_hash: "h1".into(),
            plan: serde_json::json!({"runs": 2}),
            started_at: "2026-11-22T00:00:00Z".into(),
        })
        .unwrap();
    src.finish_suite(suite, RunStatus::Ok, Some("2026-11-22T01:00:00Z"))
        .unwrap();
    let mut ids = Vec::new();
    for (i, (tag, in_suite)) in [("a", true), ("a", true), ("b", false)].iter().enumerate() {
        let mut r = new_run(tag);
        r.started_at = format!("2026-11-22T00:0{i}:00.123Z");
        r.suite_id = in_suite.then_some(suite);
        r.host = Some(plumb_host::HostSnapshot {
            taken_at_unix: 7,
            ..Default::default()
        });
        r.plan = Some(serde_json::json!({"repeat": i}));
        r.plan_hash = Some("ph".into());
        let id = src.begin_run(&r).unwrap();
        let iv = Interval {
            t: 1.0,
            secs: 1.0,
            ops: 10 + i as u64,
            ops_sec: 10.5,
            device: Some(device()),
            ..Interval::default()
        };
        let sid = src.add_step(id, &step(0), &[iv, iv]).unwrap();
        src.add_step(id, &step(1), &[]).unwrap();
        src.add_histograms(
            sid,
            &[
                (0, format!("h{i}")),
                (crate::clients::WHOLE_STEP, "w".into()),
            ],
        )
        .unwrap();
        src.add_profile(sid, "main;get 10").unwrap();
        src.add_ceilings(
            id,
            "db7",
            "2026-11-22T00:00:00Z",
            &[Ceiling {
                name: format!("disk.iops{i}"),
                value: 1e5,
                unit: "IOPS".into(),
            }],
        )
        .unwrap();
        src.finish_run(id, RunStatus::Ok, "2026-11-22T00:09:00Z")
            .unwrap();
        ids.push(id);
    }
    src.set_group(ids[0], ids[0], 0).unwrap();
    src.set_group(ids[1], ids[0], 1).unwrap();
    src.set_group(ids[2], ids[2], 0).unwrap();
    src.set_client_group(ids[2], "cg").unwrap();

    let mut dst = open();
    dst.begin_run(&new_run("already here")).unwrap();
    let got = dst.copy_runs_from(&src, &ids).unwrap();
    assert!(got.iter().all(|g| g.copied), "{got:?}");
    let target = |i: usize| got[i].target;
    // The same run, read back, once ids are mapped.
    let same = |a: &Store, ai: i64, b: &Store, bi: i64| {
        let (x, y) = (a.run(ai).unwrap(), b.run(bi).unwrap());
        let norm = |mut r: StoredRun| {
            r.run.id = 0;
            r.run.group_id = r.run.group_id.map(|_| 0);
            r.run.suite_id = r.run.suite_id.map(|_| 0);
            r
        };
        assert_eq!(norm(x), norm(y));
        assert_eq!(
            a.histograms(ai).unwrap(),
            b.histograms(bi).unwrap(),
            "histograms"
        );
        assert_eq!(a.profiles(ai).unwrap(), b.profiles(bi).unwrap());
    };
    for (i, id) in ids.iter().enumerate() {
        same(&src, *id, &dst, target(i));
    }
    // Groups remapped: a's two runs one group (the first's id), b its own.
    assert_eq!(dst.group(target(0)).unwrap(), vec![target(0), target(1)]);
    assert_eq!(dst.group(target(2)).unwrap(), vec![target(2)]);
    let s = dst.run(target(0)).unwrap().run.suite_id.unwrap();
    assert_eq!(dst.run(target(1)).unwrap().run.suite_id, Some(s));
    assert_eq!(dst.suite(s).unwrap().name, "nightly");
    assert_eq!(dst.suite(s).unwrap().status, RunStatus::Ok);
    assert_eq!(dst.suite_runs(s).unwrap().len(), 2);
    assert_eq!(dst.client_runs("cg").unwrap()[0].id, target(2));
    let mut c = dst.ceilings("db7").unwrap();
    c.iter_mut().for_each(|c| c.run_id = 0);
    let mut want = src.ceilings("db7").unwrap();
    want.iter_mut().for_each(|c| c.run_id = 0);
    assert_eq!(c, want);
    // Imported again: nothing copied, each found where it went.
    let n = dst.all_run_ids().unwrap().len();
    let again = dst.copy_runs_from(&src, &ids).unwrap();
    assert!(again.iter().all(|g| !g.copied), "{again:?}");
    assert_eq!(
        again.iter().map(|g| g.target).collect::<Vec<_>>(),
        got.iter().map(|g| g.target).collect::<Vec<_>>()
    );
    assert_eq!(dst.all_run_ids().unwrap().len(), n);
    // A later repeat of a's group joins the group already imported.
    let mut r = new_run("a");
    r.started_at = "2026-11-22T00:05:00Z".into();
    let late = src.begin_run(&r).unwrap();
    src.set_group(late, ids[0], 2).unwrap();
    src.finish_run(late, RunStatus::Ok, "t").unwrap();
    let l = dst.copy_run_from(&src, late).unwrap();
    assert!(l.copied);
    assert_eq!(
        dst.group(target(0)).unwrap(),
        vec![target(0), target(1), l.target]
    );

    // Out of this store into a bundle, and back in.
    let path = dir.path().join("b.plumb");
    let out: Vec<i64> = got.iter().map(|g| g.target).collect();
    let w = write_bundle(&dst, &out, &path, false).unwrap();
    assert!(w.iter().all(|g| g.copied));
    let sidecar = dir.path().join("b.plumb-wal");
    assert!(path.exists() && !sidecar.exists(), "one file");
    assert!(matches!(
        write_bundle(&dst, &out, &path, false),
        Err(BundleError::Exists(_))
    ));
    let b = open_bundle(&path).unwrap();
    assert_eq!(b.all_run_ids().unwrap().len(), 3);
    for (i, g) in w.iter().enumerate() {
        same(&dst, out[i], &b, g.target);
    }
    let back = dst.copy_runs_from(&b, &b.all_run_ids().unwrap()).unwrap();
    assert!(back.iter().all(|g| !g.copied), "{back:?}");
    assert_eq!(back.iter().map(|g| g.target).collect::<Vec<_>>(), out);
    drop(b);
    write_bundle(&dst, &out[..1], &path, true).unwrap();
    assert_eq!(open_bundle(&path).unwrap().all_run_ids().unwrap().len(), 1);
    // What is not a bundle is refused, naming the file, and left untouched.
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello").unwrap();
    let e = open_bundle(&junk).err().unwrap().to_string();
    assert!(
        e.contains("junk.txt") && e.contains("not a plumb store"),
        "{e}"
    );
    let foreign = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x);")
        .unwrap();
    let e = open_bundle(&foreign).err().unwrap().to_string();
    assert!(
        e.contains("other.sqlite") && e.contains("not a plumb store"),
        "{e}"
    );
    let e = open_bundle(&dir.path().join("nope.plumb"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("nope.plumb") && e.contains("no such file"),
        "{e}"
    );
}

/// The Otava test configuration of docs/otava.md: its `type: postgres` template's time
/// column, attributes and metrics, and each test's query.
/// The time column, attributes, metrics and (test name, query) pairs.
type OtavaDocs = (String, Vec<String>, Vec<String>, Vec<(String, String)>);

fn otava_docs() -> OtavaDocs {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/otava.md"))
        .unwrap();
    let yaml = doc
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.contains("type: postgres"))
        .expect("a type: postgres block");
    let value = |key: &str| {
        yaml.lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key}"))
            .trim()
            .to_string()
    };
    let time = value("time_column:");
    let attributes = value("attributes:")
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|a| a.trim().to_string())
        .collect();
    let lines: Vec<&str> = yaml.lines().collect();
    let at = lines.iter().position(|l| l.trim() == "metrics:").unwrap();
    let metrics = lines[at + 1..]
        .iter()
        .take_while(|l| l.starts_with("      "))
        .filter(|l| !l.starts_with("        "))
        .map(|l| l.trim().trim_end_matches(':').to_string())
        .collect();
    let mut queries = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() != "query: |" {
            continue;
        }
        let name = lines[..i]
            .iter()
            .rev()
            .find(|t| t.starts_with("  ") && !t.starts_with("   ") && t.trim_end().ends_with(':'))
            .unwrap()
            .trim()
            .trim_end_matches(':')
            .to_string();
        let sql: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|q| q.starts_with("      ") || q.trim().is_empty())
            .copied()
            .collect();
        queries.push((name, sql.join("\n")));
    }
    (time, attributes, metrics, queries)
}

/// docs/otava.md's queries, run on PostgreSQL over runs stored as plumb stores them:
/// every column Otava is told of is there, the time is a timestamp, every metric a
/// non-null double; a run without the figures is left out; repeats fold into one point.
/// (They are PostgreSQL's SQL: on SQLite there is nothing to run.)
fn otava_queries_in_the_docs_read_this_store(open: &dyn Fn() -> Store) {
    let (time, attributes, metrics, queries) = otava_docs();
    assert_eq!(metrics, ["ops_sec", "p99_us", "cpu_us_op"]);
    assert_eq!(queries.len(), 2, "{queries:?}");
    let mut s = open();
    if !s.is_shared() {
        return;
    }
    let mut ids = Vec::new();
    for (i, (ops, cpu)) in [
        (100.0, Some(2.0)),
        (110.0, Some(2.5)),
        (90.0, Some(3.0)),
        (95.0, None),
    ]
    .iter()
    .enumerate()
    {
        let mut r = new_run("nightly");
        r.engine = "rocksdb".into();
        r.started_at = format!("2026-01-0{}T10:00:00.123Z", i + 1);
        r.git_hash = Some(format!("c{i}"));
        r.host = Some(plumb_host::HostSnapshot {
            inventory: plumb_host::Inventory {
                hostname: Some("db7".into()),
                ..Default::default()
            },
            ..Default::default()
        });
        let id = s.begin_run(&r).unwrap();
        let mut st = step(0);
        st.summary.ops_sec = *ops;
        st.summary.cpu_us_op = *cpu;
        s.add_step(id, &st, &[]).unwrap();
        s.finish_run(id, RunStatus::Ok, "2026-01-09T00:00:00Z")
            .unwrap();
        ids.push(id);
    }
    // The first two are repeats of one group.
    s.set_group(ids[0], ids[0], 0).unwrap();
    s.set_group(ids[1], ids[0], 1).unwrap();
    s.set_group(ids[2], ids[2], 0).unwrap();
    let mut pg =
        postgres::Client::connect(&s.location().to_string_lossy(), postgres::NoTls).unwrap();
    for (name, sql) in &queries {
        let rows = pg
            .query(sql.as_str(), &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let cols: Vec<String> = rows[0]
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        for c in std::iter::once(&time).chain(&attributes).chain(&metrics) {
            assert!(cols.contains(c), "{name}: no column {c} in {cols:?}");
        }
        let mut last = None;
        let mut points = Vec::new();
        for r in &rows {
            let t: std::time::SystemTime = r.get(time.as_str());
            assert!(last.is_none_or(|l| l <= t), "{name}: in time order");
            last = Some(t);
            for m in &metrics {
                let v: Option<f64> = r.get(m.as_str());
                assert!(v.is_some_and(f64::is_finite), "{name}: {m} null");
            }
            for a in &attributes {
                let _: String = r.get(a.as_str());
            }
            points.push((
                r.get::<_, String>("run"),
                r.get::<_, f64>("ops_sec"),
                r.get::<_, String>("commit"),
                r.get::<_, String>("host"),
            ));
        }
        let want: Vec<(String, f64, String, String)> = if name.ends_with(".groups") {
            vec![
                (ids[0].to_string(), 105.0, "c0".into(), "db7".into()),
                (ids[2].to_string(), 90.0, "c2".into(), "db7".into()),
            ]
        } else {
            (0..3)
                .map(|i| {
                    (
                        ids[i].to_string(),
                        [100.0, 110.0, 90.0][i],
                        format!("c{i}"),
                        "db7".into(),
                    )
                })
                .collect()
        };
        assert_eq!(points, want, "{name}");
    }
}

fn a_plans_runs_are_found_by_its_key_old_runs_keyed_on_open(open: &dyn Fn() -> Store) {
    let s = open();
    let plan = |seed: u64, step: &str| serde_json::json!({"seed": seed, "repeat": 0, "step": step});
    let mut ids = Vec::new();
    for (seed, step) in [(1, "readrandom"), (2, "readrandom"), (3, "readseq")] {
        let mut r = super::new_run("t");
        r.plan = Some(plan(seed, step));
        ids.push(s.begin_run(&r).unwrap());
    }
    let key = crate::plan_key::plan_identity(&plan(9, "readrandom")).unwrap();
    let found: Vec<i64> = s
        .runs_of_plans(std::slice::from_ref(&key))
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        found,
        vec![ids[0], ids[1]],
        "same plan but for the seed; the readseq plan apart"
    );
    // A run stored by an older plumb has no key: it gets one when the store is opened.
    s.exec("UPDATE runs SET plan_key = NULL", &[]).unwrap();
    assert!(s
        .runs_of_plans(std::slice::from_ref(&key))
        .unwrap()
        .is_empty());
    drop(s);
    let s = open();
    assert_eq!(s.runs_of_plans(&[key]).unwrap().len(), 2);
    assert!(s.runs_of_plans(&[]).unwrap().is_empty());
}
