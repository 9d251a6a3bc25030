//! The pages over a small real store (SQLite in a temporary directory): what they show,
//! what they refuse, and that nothing a run or a person wrote renders as markup.

use crate::app::{listen_addr, rfc3339, App, Request};
use crate::{open_store, ServeError, ServeOptions, Server};
use plumb_core::{RunStatus, StepStatus, StepSummary};
use plumb_store::{NewChange, NewRun, StepRecord, Store, TriageState};

const EVIL: &str = "<script>alert(1)</script>";
const TOKEN: &str = "t0ken-for-tests";

fn step(name: &str, ops_sec: f64) -> StepRecord {
    StepRecord {
        seq: 0,
        name: name.into(),
        kind: "readrandom".parse().expect("readrandom is a step kind"),
        status: StepStatus::Ok,
        error: None,
        started_at: "2026-01-05T00:00:00Z".into(),
        ended_at: "2026-01-05T00:00:10Z".into(),
        config: serde_json::json!({"threads": 1}),
        summary: StepSummary {
            ops: (ops_sec * 10.0) as u64,
            secs: 10.0,
            ops_sec,
            usr_us_op: Some(1e6 / ops_sec * 0.9),
            sys_us_op: Some(1e6 / ops_sec * 0.1),
            ..StepSummary::default()
        },
    }
}

/// A store of three finished runs (the second tagged with a script) and one running.
fn store(dir: &std::path::Path) -> Store {
    let mut s = Store::open(&dir.join("plumb.sqlite")).expect("a new store opens");
    for (i, tag) in ["base", EVIL, "new"].iter().enumerate() {
        let id = s
            .begin_run(&NewRun {
                tag: Some(tag.to_string()),
                command: "plumb kv".into(),
                workload: "readrandom".into(),
                engine: "memory".into(),
                engine_version: "0.1.0".into(),
                plumb_version: "0.1.0".into(),
                started_at: format!("2026-01-0{}T00:00:00Z", i + 1),
                plan: Some(serde_json::json!({"steps": ["readrandom"], "seed": i, "repeat": 0})),
                ..NewRun::default()
            })
            .expect("a run begins");
        s.add_step(id, &step("readrandom", 1000.0 + i as f64), &[])
            .expect("a step is stored");
        s.finish_run(id, RunStatus::Ok, "2026-01-05T00:00:10Z")
            .expect("a run ends");
    }
    s.begin_run(&NewRun {
        tag: Some("live".into()),
        command: "plumb kv".into(),
        workload: "readrandom".into(),
        engine: "memory".into(),
        engine_version: "0.1.0".into(),
        plumb_version: "0.1.0".into(),
        started_at: "2026-01-09T00:00:00Z".into(),
        ..NewRun::default()
    })
    .expect("a running run begins");
    s
}

fn change(s: &Store) -> i64 {
    s.record_change(&NewChange {
        plan: "p1".into(),
        label: format!("readrandom on memory {EVIL}"),
        step: "readrandom".into(),
        metric: "ops_sec".into(),
        direction: "regression".into(),
        at_run: 3,
        before_run: Some(2),
        last_run: 3,
        base_from: 1,
        ratio: 0.8,
        cause: Some(format!("usr_us_op 1 → 1.25 {EVIL}")),
        host: Some("db7".into()),
        reference: false,
        at_time: "2026-01-03T00:00:00Z".into(),
        seen_at: "2026-01-03T01:00:00Z".into(),
    })
    .expect("a change is kept")
    .0
}

fn app(dir: &std::path::Path, token: Option<&str>) -> App {
    App::new(store(dir), token.map(str::to_string))
}

#[test]
fn the_runs_page_lists_runs_newest_first_with_a_hostile_tag_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    let r = a.handle(&Request::get("/"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.content_type.starts_with("text/html"));
    let (i4, i1) = (r.body.find("id=\"run-4\""), r.body.find("id=\"run-1\""));
    assert!(i4.is_some() && i1.is_some() && i4 < i1, "newest first");
    assert!(
        r.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the tag shows as text"
    );
    assert!(!r.body.contains(EVIL), "the tag never renders as a script");
    // A running run is shown live and the page reloads itself.
    assert!(r.body.contains("class=\"live\""));
    assert!(r.body.contains("location.reload"));
    // Filtered in SQL: a tag names one run.
    let r = a.handle(&Request::get("/runs?tag=new&format=json"));
    let v: serde_json::Value = serde_json::from_str(&r.body).expect("JSON");
    assert_eq!(v["total"], 1);
    assert_eq!(v["runs"][0]["id"], 3);
    let r = a.handle(&Request::get(
        "/runs?status=ok&since=2026-01-02&until=2026-01-02&format=json",
    ));
    let v: serde_json::Value = serde_json::from_str(&r.body).expect("JSON");
    assert_eq!(v["total"], 1, "{v}");
    assert_eq!(v["runs"][0]["id"], 2);
}

#[test]
fn a_malformed_query_is_a_400_naming_the_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    for url in [
        "/runs?page=abc",
        "/runs?page=0",
        "/changes?page=x",
        "/runs?since=yesterday",
        "/runs?status=done",
        "/runs?tag=%zz",
    ] {
        let r = a.handle(&Request::get(url));
        assert_eq!(r.status, 400, "{url}: {}", r.body);
        assert!(r.body.contains("id=\"error\""), "{url}");
    }
    let r = a.handle(&Request::get("/runs?page=abc"));
    assert!(r.body.contains("parameter `page`"), "{}", r.body);
    assert!(r.body.contains("from 1"), "says what to give");
    let r = a.handle(&Request::get("/runs?page=abc&format=json"));
    let v: serde_json::Value = serde_json::from_str(&r.body).expect("a JSON error");
    assert_eq!(v["status"], 400);
}

#[test]
fn unknown_paths_and_runs_are_404s_and_a_wrong_method_a_405() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    assert_eq!(a.handle(&Request::get("/nope")).status, 404);
    assert_eq!(a.handle(&Request::get("/run/999")).status, 404);
    assert_eq!(a.handle(&Request::get("/run/abc")).status, 404);
    assert_eq!(a.handle(&Request::get("/host/nowhere")).status, 404);
    assert_eq!(a.handle(&Request::post("/runs", "")).status, 405);
}

#[test]
fn the_run_page_embeds_the_report_and_links_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    let r = a.handle(&Request::get("/run/2"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body.contains("plumb report: run 2"),
        "the report's content"
    );
    assert!(r.body.contains("href=\"/run/2/plan\""));
    assert!(!r.body.contains(EVIL));
    let plan = a.handle(&Request::get("/run/2/plan"));
    assert_eq!(plan.content_type, "application/json");
    let v: serde_json::Value = serde_json::from_str(&plan.body).expect("the plan as JSON");
    assert_eq!(v["seed"], 1);
    // The running run reloads itself.
    let r = a.handle(&Request::get("/run/4"));
    assert!(r.body.contains("http-equiv=\"refresh\""), "{}", r.body);
}

#[test]
fn a_write_without_the_right_token_is_refused_and_sets_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), Some(TOKEN));
    let id = change(a.store());
    for form in [
        format!("id={id}&state=expected"),
        format!("id={id}&state=expected&token=wrong"),
        format!("id={id}&state=expected&token="),
    ] {
        let r = a.handle(&Request::post("/changes", &form));
        assert_eq!(r.status, 403, "{form}: {}", r.body);
    }
    assert_eq!(a.store().change(id).unwrap().state, TriageState::Untriaged);
    // A server started without a token takes no write at all.
    let dir2 = tempfile::tempdir().unwrap();
    let ro = app(dir2.path(), None);
    let id2 = change(ro.store());
    let r = ro.handle(&Request::post(
        "/changes",
        &format!("id={id2}&state=fixed&token=anything"),
    ));
    assert_eq!(r.status, 403);
    assert!(r.body.contains("read-only"), "{}", r.body);
}

#[test]
fn a_state_set_with_the_token_is_kept_and_a_hostile_note_renders_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), Some(TOKEN));
    let id = change(a.store());
    let page = a.handle(&Request::get("/changes"));
    assert_eq!(page.status, 200, "{}", page.body);
    for name in [
        format!("id=\"change-{id}\""),
        "select name=\"state\"".to_string(),
        "textarea name=\"note\"".to_string(),
        "name=\"token\"".to_string(),
        format!("id=\"set-{id}\""),
        "id=\"bulk\"".to_string(),
    ] {
        assert!(page.body.contains(&name), "{name} in the page");
    }
    let form = format!(
        "id={id}&state=expected&note={}&by=ann&token={TOKEN}&back=state%3Duntriaged",
        crate::query::encode(EVIL)
    );
    let r = a.handle(&Request::post("/changes", &form));
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(
        r.location.as_deref(),
        Some(format!("/changes?state=untriaged#change-{id}").as_str())
    );
    let kept = a.store().change(id).unwrap();
    assert_eq!(kept.state, TriageState::Expected);
    assert_eq!(kept.note.as_deref(), Some(EVIL));
    assert_eq!(kept.set_by.as_deref(), Some("ann"));
    let page = a.handle(&Request::get("/changes"));
    assert!(
        !page.body.contains(EVIL),
        "neither note, label nor cause renders as markup"
    );
    assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.body.contains("data-state=\"expected\""));
    // A bad id sets nothing.
    let r = a.handle(&Request::post(
        "/changes",
        &format!("id={id}&id=99&state=fixed&token={TOKEN}"),
    ));
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(a.store().change(id).unwrap().state, TriageState::Expected);
    let r = a.handle(&Request::post(
        "/changes",
        &format!("id={id}&state=done&token={TOKEN}"),
    ));
    assert_eq!(r.status, 400);
}

#[test]
fn a_postgres_store_s_password_never_reaches_a_message() {
    let e = match open_store(std::path::Path::new(
        "postgres://bench:s3cret-pw@127.0.0.1:1/plumb",
    )) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("nothing listens on port 1"),
    };
    assert!(!e.contains("s3cret-pw"), "{e}");
    assert!(e.contains("bench:***@127.0.0.1:1/plumb"), "{e}");
    let e = match open_store(std::path::Path::new("/nonexistent/dir/plumb.sqlite")) {
        Err(e) => e,
        Ok(_) => panic!("no such file"),
    };
    assert!(matches!(e, ServeError::NoStore { .. }), "{e}");
}

#[test]
fn every_page_shows_the_store_as_shown_and_answers_json() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    change(a.store());
    let shown = a.store().shown().to_string();
    for url in [
        "/runs", "/run/1", "/compare", "/history", "/changes", "/hosts",
    ] {
        let r = a.handle(&Request::get(url));
        assert_eq!(r.status, 200, "{url}: {}", r.body);
        assert!(r.body.contains(&shown), "{url} names its store");
        assert!(!r.body.contains(EVIL), "{url}");
        let j = a.handle(&Request::get(&format!("{url}?format=json")));
        if url == "/compare" {
            assert_eq!(j.status, 400, "compare needs new=");
            continue;
        }
        assert_eq!(j.status, 200, "{url} as JSON: {}", j.body);
        serde_json::from_str::<serde_json::Value>(&j.body).expect("parses");
    }
}

#[test]
fn the_history_page_lists_the_plan_and_compare_judges_against_a_named_base() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    let r = a.handle(&Request::get("/history?format=json"));
    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    let plans = v.as_array().expect("a list of plans");
    assert_eq!(plans.len(), 1, "one plan but for seed: {v}");
    assert_eq!(plans[0]["runs"], 3);
    let plan = plans[0]["plan"].as_str().unwrap().to_string();
    let r = a.handle(&Request::get(&format!("/history?plan={plan}")));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("id=\"stable-readrandom\""));
    assert_eq!(
        a.handle(&Request::get(&format!("/history?plan={plan}&step=nope")))
            .status,
        400
    );
    assert_eq!(
        a.handle(&Request::get(&format!("/history?plan={plan}&metric=p99")))
            .status,
        400
    );
    let r = a.handle(&Request::get("/compare?base=1&new=3"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("id=\"verdict-readrandom\""), "{}", r.body);
    let r = a.handle(&Request::get("/compare?base=1&new=3&format=json"));
    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["report"]["results"][0]["step"], "readrandom");
    let r = a.handle(&Request::get("/compare?new=tag=nothing"));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("parameter `new`"));
}

#[test]
fn a_non_loopback_listen_needs_a_token() {
    let e = listen_addr(&ServeOptions {
        listen: "0.0.0.0:0".into(),
        token: None,
    })
    .unwrap_err();
    assert!(matches!(e, ServeError::NoToken { .. }), "{e}");
    assert!(e.to_string().contains("--token"));
    assert!(listen_addr(&ServeOptions {
        listen: "0.0.0.0:0".into(),
        token: Some(TOKEN.into()),
    })
    .is_ok());
    assert!(matches!(
        listen_addr(&ServeOptions {
            listen: "nonsense".into(),
            token: None
        }),
        Err(ServeError::BadListen { .. })
    ));
}

#[test]
fn the_server_answers_over_http_and_a_port_in_use_is_one_error() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let opts = ServeOptions {
        listen: "127.0.0.1:0".into(),
        token: None,
    };
    let server = Server::bind(store(dir.path()), &opts).expect("binds a free port");
    let addr = server.addr();
    assert_ne!(addr.port(), 0);
    let taken = Server::bind(
        Store::open(&dir.path().join("other.sqlite")).unwrap(),
        &ServeOptions {
            listen: addr.to_string(),
            token: None,
        },
    );
    assert!(
        matches!(taken, Err(ServeError::InUse { .. })),
        "{:?}",
        taken.err().map(|e| e.to_string())
    );
    let stop = server.stopper();
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || server.run(|e| tx.send(e.clone()).unwrap()));
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.write_all(b"GET /runs?page=abc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = String::new();
    c.read_to_string(&mut got).unwrap();
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    assert!(got.contains("X-Frame-Options: DENY"), "{got}");
    stop.stop();
    t.join()
        .expect("the server thread ends")
        .expect("and ends well");
    let logged: Vec<String> = rx.try_iter().map(|e| e.to_string()).collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(
        logged[0].starts_with("GET /runs?page=abc 400 "),
        "{logged:?}"
    );
}

#[test]
fn times_read_as_rfc3339() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(86400 + 3661), "1970-01-02T01:01:01Z");
    assert_eq!(rfc3339(1_767_225_600), "2026-01-01T00:00:00Z");
}

/// A found bisect's state: two ends counted, one midpoint judged bad, the subject
/// hostile.
fn bisect_state(change: Option<i64>) -> String {
    use plumb_bisect::judge::CountEnds;
    use plumb_bisect::search::Verdict;
    use plumb_bisect::state::{Asked, Commit, Ends, Metric, State, Step};
    let commit = |h: char, subject: &str| Commit {
        hash: h.to_string().repeat(40),
        subject: subject.into(),
    };
    let s = State {
        asked: Asked {
            repo: "/src/rocksdb".into(),
            good: "v1".into(),
            bad: "v2".into(),
            command: vec!["kv".into(), "--engine".into(), "rocksdb".into()],
            build: "make".into(),
            step: None,
            metric: None,
            rounds: 20,
            cache: "/var/tmp/b".into(),
            work: "/var/tmp/w".into(),
            jobs: 2,
            valgrind: "valgrind".into(),
            change,
        },
        commits: vec![commit('a', "good"), commit('b', EVIL), commit('c', "bad")],
        ends: Some(Ends {
            metric: Metric::Instructions,
            step: "readrandom".into(),
            count: Some(CountEnds {
                good: 12759.3,
                bad: 12720.9,
                floor: 3.2,
            }),
            ratio: None,
            ci: None,
            target: None,
            build_secs: [918.8, 737.3],
            runs: vec![1, 2, 3],
            why: "the ends count 12759.3 and 12720.9".into(),
        }),
        steps: vec![Step {
            index: 1,
            verdict: Verdict::Bad,
            build_secs: 121.7,
            reused: false,
            count: Some(12720.7),
            vs_good: None,
            vs_bad: None,
            runs: vec![3],
            note: "12720.7 instructions per op, 101% of the way".into(),
        }],
        status: "found".into(),
        result: Some(format!("first bad commit: {} {EVIL}", "b".repeat(40))),
        moved: vec!["instructions_op 1.28e4 → 1.27e4 ×1.00".into()],
    };
    serde_json::to_string(&s).unwrap()
}

#[test]
fn a_change_links_to_its_bisect_and_the_bisect_page_shows_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let a = app(dir.path(), None);
    let id = change(a.store());
    let other = a
        .store()
        .begin_bisect("/src/x", "a", "c", None, &bisect_state(None), "t0")
        .unwrap();
    let b = a
        .store()
        .begin_bisect(
            "/src/rocksdb",
            "a",
            "c",
            Some(id),
            &bisect_state(Some(id)),
            "t1",
        )
        .unwrap();
    a.store()
        .save_bisect(b, "found", &bisect_state(Some(id)), "t2")
        .unwrap();
    let r = a.handle(&Request::get("/changes"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body
            .contains(&format!("href=\"/bisect/{b}\" id=\"bisect-{id}-{b}\"")),
        "{}",
        r.body
    );
    assert!(
        !r.body.contains(&format!("/bisect/{other}\"")),
        "not this change's"
    );
    let v: serde_json::Value =
        serde_json::from_str(&a.handle(&Request::get("/changes?format=json")).body).unwrap();
    assert_eq!(v["bisects"][0]["id"], b);
    assert_eq!(v["bisects"][0]["status"], "found");

    let r = a.handle(&Request::get(&format!("/bisect/{b}")));
    assert_eq!(r.status, 200, "{}", r.body);
    for want in [
        "first bad commit",
        "12720.7 instr/op",
        "918.8",
        "good end",
        "data-verdict=\"bad\"",
        "href=\"/run/3\"",
        &format!("href=\"/changes#change-{id}\""),
        "plumb kv --engine rocksdb",
        "instructions_op 1.28e4",
    ] {
        assert!(r.body.contains(want), "{want}: {}", r.body);
    }
    assert!(!r.body.contains(EVIL), "a subject renders as text");
    assert!(
        !r.body.contains("http-equiv=\"refresh\""),
        "a found bisect stays"
    );
    let v: serde_json::Value = serde_json::from_str(
        &a.handle(&Request::get(&format!("/bisect/{b}?format=json")))
            .body,
    )
    .unwrap();
    assert_eq!(v["steps"][0]["verdict"], "bad");
    assert_eq!(a.handle(&Request::get("/bisect/99")).status, 404);
    assert_eq!(a.handle(&Request::get("/bisect/x")).status, 404);
    assert_eq!(
        a.handle(&Request::post(&format!("/bisect/{b}"), "")).status,
        405
    );
}
