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
    let server = plumb_sql::Managed::start(
        &plumb_sql::ServerChoice::parse("postgres", None, None).unwrap(),
        &plumb_sql::StartOptions {
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
