//! `plumb sql` against real servers, started by plumb from the packages the test command
//! installs (scripts/setup.sh: postgresql, mariadb-server, mariadb-plugin-rocksdb):
//! every microbenchmark runs briefly, and what plumb counted is checked against what the
//! server itself counted. Bad input and a server that dies get one clear error.
//! CPU profiles (`--profile`) are checked here too, on a server and on an embedded
//! engine, since both need perf from the same setup.

mod common;

use common::{external_server, html_report, json_of, plumb, stderr, step};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A server counter per query of a step.
fn counter(run: &Value, name: &str, key: &str) -> f64 {
    step(run, name)["summary"]["server"]["counters_query"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: no counter {key}"))
}

/// Each (step, counter, per query) is the server's count within 2%.
fn counts(run: &Value, want: &[(&str, &str, f64)]) {
    for (name, key, per_query) in want {
        close(
            &format!("{name} {key}"),
            counter(run, name, key),
            *per_query,
        );
    }
}

fn close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 0.02 * want.max(0.05),
        "{what}: {got} per query, want {want}"
    );
}

/// Runs every microbenchmark of the default order on a fresh managed server, with two
/// tables and two client threads, and returns the run's JSON.
fn default_order(server: &str, engine: Option<&str>) -> Value {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let mut args = vec![
        "sql",
        "--server",
        server,
        "--tables",
        "2",
        "--table-size",
        "3000",
        "--threads",
        "2",
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--cache-mb",
        "128",
        "--seed",
        "7",
        // The wait sampler's own statements (10 a second) are transactions of the same
        // database: over a 0.3 s step on a busy host (~300 queries a second) they were
        // 3% of xact_commit. These tests check the step's own counts; the sampler has
        // tests of its own.
        "--wait-hz",
        "0",
        "--json",
        "--dir",
    ];
    let dir = d.path().to_str().unwrap().to_string();
    args.push(&dir);
    if let Some(e) = engine {
        args.extend(["--engine", e]);
    }
    let o = plumb(&store, &args);
    let run = json_of(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // The managed server's directory is gone: only the store is left.
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("plumb-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    run
}

/// What every server's run must show.
fn check_common(run: &Value) {
    let steps = run["steps"].as_array().unwrap();
    // The default order is sysbench's; the standard workloads have tests/standard.rs.
    let sysbench = plumb_workloads::SqlKind::all()
        .filter(|k| k.tables() == plumb_workloads::SqlTables::Sysbench);
    for kind in sysbench {
        assert!(
            steps.iter().any(|s| s["kind"] == kind.name()),
            "{} did not run",
            kind.name()
        );
    }
    for s in steps {
        let name = s["name"].as_str().unwrap();
        assert_eq!(s["status"], "ok", "{name}: {}", s["error"]);
        let sum = &s["summary"];
        assert!(sum["ops"].as_u64().unwrap() > 0, "{name}: no ops");
        let srv = &sum["server"];
        assert!(
            srv["cpu_us_query"].as_f64().unwrap() > 0.0,
            "{name}: no server CPU"
        );
        assert!(
            sum["cpu_us_op"].as_f64().unwrap() > 0.0,
            "{name}: no client CPU"
        );
        if name != "load" {
            assert_eq!(srv["queries"], sum["ops"], "{name}: ops are queries");
        }
        // The client's CPU per query is its user and system parts.
        common::assert_cpu_split(name, sum);
        // The device under the server's data as iostat shows it, for the step and each
        // second, wherever the run has a device (not on tmpfs).
        if run["run"]["device"].is_string() {
            assert!(sum["device"]["r_s"].as_f64().is_some(), "{name}: {sum}");
            assert!(
                s["intervals"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|i| i["device"]["w_s"].as_f64().is_some()),
                "{name}: {}",
                s["intervals"]
            );
        }
    }
    // The release as compare labels it: 15.20, 10.11.19.
    let v = run["run"]["engine_version"].as_str().unwrap();
    assert!(
        !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "version {v:?}"
    );
    // perf counted the server's processes: software events at least, and every
    // hardware event it could not count is named with perf's reason.
    let srv = &step(run, "point-query.pre")["summary"]["server"];
    let tc = srv["perf_query"]["task-clock-us"].as_f64().unwrap_or(0.0);
    assert!(tc > 0.0, "no task-clock: {srv}");
    assert!(
        srv["perf_query"]["context-switches"]
            .as_f64()
            .unwrap_or(0.0)
            > 0.0
    );
    for ev in ["cycles", "instructions"] {
        let counted = srv["perf_query"].get(ev).is_some();
        let said = srv["perf_unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with(ev));
        assert!(
            counted != said,
            "{ev}: counted {counted}, explained {said}: {srv}"
        );
    }
    // Two tables of 3000 rows were loaded.
    assert_eq!(step(run, "load")["summary"]["ops"], 6000);
    let rows = |n: &str| {
        step(run, n)["summary"]["server"]["rows_query"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(rows("point-query.pre"), 1.0);
    assert_eq!(rows("hot-points.pre"), 100.0);
    assert_eq!(rows("range-covered-pk.pre"), 100.0);
    // oltp_read_only: 10 points of 1 row, 4 ranges (100, 1, 100, ≤100 rows) in 16 queries.
    let ro = rows("read-only-100.pre");
    assert!(
        ro > 300.0 / 16.0 && ro <= 311.0 / 16.0,
        "read-only-100 rows/query {ro}"
    );
}

#[test]
fn postgres_runs_every_microbenchmark_and_its_counts_match_pg_stat() {
    let run = default_order("postgres", None);
    check_common(&run);
    assert_eq!(run["run"]["engine"], "postgres");
    counts(
        &run,
        &[
            // Each point query is one primary-key index scan, one committed transaction.
            ("point-query.pre", "tables.idx_scan", 1.0),
            ("point-query.post", "db.xact_commit", 1.0),
            // oltp_read_only: 10 point + 4 range index scans in 16 queries (BEGIN, COMMIT).
            ("read-only-10.pre", "tables.idx_scan", 14.0 / 16.0),
            ("scan.pre", "tables.seq_scan", 1.0),
            ("update-index", "db.tup_updated", 1.0),
            ("insert", "db.tup_inserted", 1.0),
        ],
    );
    // What plumb counted deleted is what PostgreSQL counted.
    let deleted = step(&run, "delete")["summary"]["server"]["rows_query"]
        .as_f64()
        .unwrap();
    close(
        "tup_deleted",
        counter(&run, "delete", "db.tup_deleted"),
        deleted,
    );
    assert!(counter(&run, "update-nonindex", "wal.wal_bytes") > 100.0);
    // Which build ran: the server's binary, its GNU build id (Debian's postgres has
    // one) and, from pg_config, how it was compiled.
    let o = &run["run"]["options"];
    assert!(
        o["server.binary"].as_str().unwrap().ends_with("/postgres"),
        "{}",
        o["server.binary"]
    );
    let id = o["server.build_id"].as_str().unwrap();
    assert!(
        id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    assert!(
        o["server.build.CFLAGS"]
            .as_str()
            .is_some_and(|f| f.contains("-O")),
        "{o}"
    );
}

fn check_mysql(run: &Value) {
    counts(
        run,
        &[
            ("point-query.pre", "com_select", 1.0),
            ("point-query.post", "handler_read_key", 1.0),
            ("read-only-100.pre", "com_select", 14.0 / 16.0),
            ("write-only", "com_commit", 1.0 / 6.0),
            ("update-index", "com_update", 1.0),
            ("update-nonindex", "handler_update", 1.0),
            ("insert", "com_insert", 1.0),
        ],
    );
    let deleted = step(run, "delete")["summary"]["server"]["rows_query"]
        .as_f64()
        .unwrap();
    close(
        "handler_delete",
        counter(run, "delete", "handler_delete"),
        deleted,
    );
}

#[test]
fn innodb_runs_every_microbenchmark_and_its_counts_match_show_status() {
    let run = default_order("mariadb", Some("innodb"));
    check_common(&run);
    assert_eq!(run["run"]["engine"], "innodb");
    check_mysql(&run);
    assert!(counter(&run, "update-index", "innodb_os_log_written") > 100.0);
}

#[test]
fn myrocks_runs_every_microbenchmark_and_its_counts_match_show_status() {
    let run = default_order("mariadb", Some("rocksdb"));
    check_common(&run);
    assert_eq!(run["run"]["engine"], "myrocks");
    check_mysql(&run);
    assert!(counter(&run, "update-index", "rocksdb_bytes_written") > 100.0);
}

#[test]
fn bad_input_gets_one_clear_error_and_never_shows_a_password() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "sql",
            "--url",
            "postgres://bob:hunter2@127.0.0.1:1/db",
            "--steps",
            "point-query",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("connecting to postgres://bob:***@127.0.0.1:1/db"),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");

    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    for (args, want) in [
        (vec!["sql", "--port", port.as_str()], "--port"),
        (vec!["sql", "--server", "oracle"], "unknown server"),
        (
            vec!["sql", "--server", "postgres@9"],
            "bash scripts/get-postgres.sh",
        ),
        (vec!["sql", "--steps", "load,point-querry"], "point-querry"),
        (vec!["sql", "--url", "redis://x/y"], "--url"),
        (vec!["sql", "--duration", "0"], "--duration"),
    ] {
        let o = plumb(&store, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn a_config_the_server_rejects_shows_its_log_and_leaves_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let conf = d.path().join("bad.conf");
    std::fs::write(
        &conf,
        "shared_buffers = {cache_mb}MB\nno_such_setting_plumb = 1\n",
    )
    .unwrap();
    let servers = d.path().join("servers");
    let o = plumb(
        &store,
        &[
            "sql",
            "--config",
            conf.to_str().unwrap(),
            "--dir",
            servers.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("pg_ctl start failed"), "{e}");
    assert!(e.contains("last lines of the server log"), "{e}");
    assert!(e.contains("no_such_setting_plumb"), "{e}");
    assert_eq!(std::fs::read_dir(&servers).unwrap().count(), 0);

    let tpl = d.path().join("typo.conf");
    std::fs::write(&tpl, "shared_buffers = {cache}MB\n").unwrap();
    for server in ["postgres", "mariadb"] {
        let o = plumb(
            &store,
            &[
                "sql",
                "--server",
                server,
                "--config",
                tpl.to_str().unwrap(),
                "--dir",
                servers.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("line 1: unknown placeholder {cache}"),
            "{server}: {}",
            stderr(&o)
        );
        // A template that does not fill leaves no server directory behind either.
        assert_eq!(std::fs::read_dir(&servers).unwrap().count(), 0, "{server}");
    }
}

#[test]
fn ram_sized_sizes_postgresqls_memory_from_the_memory_limit() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "sql",
            "--ram-sized",
            "--memory-mb",
            "1024",
            "--table-size",
            "1000",
            "--steps",
            "load",
            "--json",
            "--dir",
            d.path().to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&o);
    let opts = &run["run"]["options"];
    // pg_settings in its own units: 8 kB pages for the buffers, kB for work_mem. A
    // quarter of the 1 GiB limit, three quarters for the OS's cache, work_mem at its
    // floor (768 MiB over 600 sorts is under 4 MiB).
    assert_eq!(opts["server.setting.shared_buffers"], "32768", "{opts}");
    assert_eq!(
        opts["server.setting.effective_cache_size"], "98304",
        "{opts}"
    );
    assert_eq!(opts["server.setting.work_mem"], "4096", "{opts}");
    // MariaDB's buffer pool is --cache-mb: one error naming the flag's key.
    let o = plumb(&store, &["sql", "--server", "mariadb", "--ram-sized"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ram_sized"), "{}", stderr(&o));
}

/// Starts `plumb sql` on a long step and returns it once the step runs, with the
/// server's pid and the lines printed so far.
fn start_long_run(store: &Path, dir: &Path) -> (std::process::Child, u32, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["sql", "--table-size", "2000", "--steps", "load,point-query"])
        .args(["--duration", "60", "--store"])
        .arg(store)
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut pid = None;
    for l in lines.by_ref() {
        let l = l.unwrap();
        if let Some(p) = l.split(" pid ").nth(1) {
            pid = p.split_whitespace().next().and_then(|x| x.parse().ok());
        }
        let started = l.starts_with("plumb: run ");
        seen.push(l);
        if started {
            break;
        }
    }
    // Drain the rest in the background so plumb never blocks on a full pipe.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rest: Vec<String> = lines.map_while(Result::ok).collect();
        let _ = tx.send(rest);
    });
    std::thread::sleep(Duration::from_secs(3)); // the load (2000 rows) is done by then
    seen.push(String::new());
    let pid = pid.unwrap_or_else(|| panic!("no server pid in {seen:?}"));
    STDERR_REST.with(|r| *r.borrow_mut() = Some(rx));
    (child, pid, seen)
}

thread_local! {
    static STDERR_REST: std::cell::RefCell<Option<std::sync::mpsc::Receiver<Vec<String>>>> =
        const { std::cell::RefCell::new(None) };
}

fn rest_of_stderr() -> String {
    STDERR_REST.with(|r| r.borrow_mut().take().unwrap().recv().unwrap().join("\n"))
}

#[test]
fn a_server_that_dies_mid_step_fails_the_run_with_its_log_and_keeps_finished_steps() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let servers = d.path().join("servers");
    let (child, pid, _) = start_long_run(&store, &servers);
    // SAFETY: kill has no memory preconditions; pid is the server plumb started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let o = child.wait_with_output().unwrap();
    let e = rest_of_stderr();
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("the server died during step point-query"), "{e}");
    assert!(e.contains("last lines of the server log"), "{e}");
    let shown = plumb(&store, &["runs", "--json"]);
    let runs = json_of(&shown);
    let run = &runs.as_array().unwrap()[0];
    assert_eq!(run["status"], "failed");
    let id = run["id"].as_i64().unwrap().to_string();
    let full = json_of(&plumb(&store, &["show", &id, "--json"]));
    assert_eq!(step(&full, "load")["status"], "ok");
    assert_eq!(step(&full, "point-query")["status"], "failed");
    assert_eq!(std::fs::read_dir(&servers).unwrap().count(), 0);
}

#[test]
fn ctrl_c_and_sigterm_stop_the_step_and_the_server_and_keep_what_ran() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("s.sqlite");
        let servers = d.path().join("servers");
        let (child, pid, _) = start_long_run(&store, &servers);
        // SAFETY: kill has no memory preconditions; the pid is plumb's own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let o = child.wait_with_output().unwrap();
        let e = rest_of_stderr();
        assert_eq!(o.status.code(), Some(130), "signal {signal}: {e}");
        assert!(
            !plumb_servers::running(pid),
            "signal {signal}: the server still runs"
        );
        assert_eq!(std::fs::read_dir(&servers).unwrap().count(), 0);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("point-query (interrupted)"), "{out}");
        let runs = json_of(&plumb(&store, &["runs", "--json"]));
        assert_eq!(runs[0]["status"], "interrupted", "signal {signal}");
    }
}

#[test]
fn a_server_left_running_by_a_killed_plumb_is_stopped_by_the_next_one() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let servers = d.path().join("servers");
    let (mut child, pid, _) = start_long_run(&store, &servers);
    child.kill().unwrap(); // SIGKILL: plumb cannot stop its server
    child.wait().unwrap();
    let _ = rest_of_stderr();
    assert!(plumb_servers::running(pid), "the server runs on, orphaned");
    let o = plumb(
        &store,
        &[
            "sql",
            "--table-size",
            "200",
            "--steps",
            "load",
            "--dir",
            servers.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("left by a plumb that was killed"),
        "{}",
        stderr(&o)
    );
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while plumb_servers::running(pid) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !plumb_servers::running(pid),
        "the orphaned server was stopped"
    );
    assert_eq!(std::fs::read_dir(&servers).unwrap().count(), 0);
    // The killed run is marked interrupted.
    let runs = json_of(&plumb(&store, &["runs", "--json"]));
    assert_eq!(runs[1]["status"], "interrupted");
}

#[test]
fn postgres_writes_its_wal_under_waldir_and_the_run_says_where() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    // The server runs as the postgres user: it must reach both directories.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (data, wal) = (d.path().join("data"), d.path().join("wal"));
    for p in [&data, &wal] {
        std::fs::create_dir(p).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let store = d.path().join("s.sqlite");
    let args = |keep: bool| {
        let mut a = vec![
            "sql",
            "--table-size",
            "500",
            "--steps",
            "load,point-query",
            "--duration",
            "0.2",
            "--warmup",
            "0",
            "--dir",
            data.to_str().unwrap(),
            "--waldir",
            wal.to_str().unwrap(),
        ];
        if keep {
            a.push("--keep");
        }
        a
    };
    let o = plumb(&store, &args(true));
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&plumb(&store, &["show", "1", "--json"]));
    let opts = &run["run"]["options"];
    let at = std::path::PathBuf::from(opts["server.waldir"].as_str().unwrap());
    assert_eq!(at.parent(), Some(wal.as_path()), "{opts}");
    assert!(!opts["server.waldir_device"].as_str().unwrap().is_empty());
    // initdb put the log there: the data directory's pg_wal points to it, and the
    // load's commits wrote segments into it.
    let root = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("plumb-postgres-")
        })
        .expect("the kept server's directory");
    assert_eq!(std::fs::read_link(root.join("data/pg_wal")).unwrap(), at);
    let segments = std::fs::read_dir(&at)
        .unwrap()
        .filter(|e| {
            let n = e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .into_owned();
            n.len() == 24 && n.chars().all(|c| c.is_ascii_hexdigit())
        })
        .count();
    assert!(segments >= 1, "no WAL segment in {}", at.display());
    // Without --keep the log's directory goes with the server.
    std::fs::remove_dir_all(&at).unwrap();
    let o = plumb(&store, &args(false));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&wal).unwrap().count(), 0);
    // The log's place is PostgreSQL's to choose, given as an absolute path.
    let o = plumb(
        &store,
        &["sql", "--server", "mariadb", "--waldir", "/var/tmp"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("innodb_log_group_home_dir"),
        "{}",
        stderr(&o)
    );
    let o = plumb(&store, &["sql", "--waldir", "relative/wal"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("absolute"), "{}", stderr(&o));
}

#[test]
fn perf_groups_count_the_servers_events_in_turn_each_over_its_own_seconds() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "sql",
            "--table-size",
            "1000",
            "--steps",
            "load,point-query",
            "--duration",
            "4",
            "--warmup",
            "0.5",
            "--perf-groups",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json_of(&plumb(&store, &["show", "1", "--json"]));
    let s = step(&run, "point-query");
    let server = &s["summary"]["server"];
    common::assert_counted_in_turn(
        "point-query",
        s["summary"]["secs"].as_f64().unwrap(),
        &server["perf_query"],
        &server["perf_counted_secs"],
        &server["perf_unavailable"],
    );
}

#[test]
fn repeats_run_on_fresh_servers_and_are_stored_as_one_group() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "sql",
            "--table-size",
            "500",
            "--steps",
            "load,point-query",
            "--duration",
            "0.2",
            "--warmup",
            "0",
            "--repeat",
            "2",
            "--seed",
            "5",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Two servers were started, each loaded afresh.
    assert_eq!(stderr(&o).matches("plumb: starting postgres").count(), 2);
    let runs = json_of(&plumb(&store, &["runs", "--json"]));
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["group_id"], runs[1]["group_id"]);
    assert_ne!(runs[0]["seed"], runs[1]["seed"]);
    let first = runs
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .min()
        .unwrap();
    let cmp = plumb(
        &store,
        &["compare", &format!("g{first}"), &first.to_string()],
    );
    assert!(cmp.status.success(), "{}", stderr(&cmp));
}

#[test]
fn an_external_server_by_url_runs_and_keeps_its_password_out_of_the_store() {
    for (server, engine) in [("postgres", None), ("mariadb", Some("rocksdb"))] {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("s.sqlite");
        let srv = external_server(d.path(), server, engine);
        let ep = &srv.endpoint;
        let socket = ep.socket.as_ref().unwrap().display().to_string();
        let url = match ep.protocol {
            plumb_servers::Protocol::Postgres => {
                // The server trusts local users: the password is sent nowhere, but
                // must still be kept out of what is stored and printed.
                format!(
                    "postgres://{}:sekrit@localhost:{}/plumb?host={socket}",
                    ep.user, ep.port
                )
            }
            plumb_servers::Protocol::MySql => {
                format!("mysql://{}@localhost/plumb?socket={socket}", ep.user)
            }
        };
        let mut args = vec!["sql", "--url", &url, "--table-size", "800", "--json"];
        args.extend([
            "--steps",
            "load,point-query,update-index",
            "--duration",
            "0.3",
        ]);
        if let Some(e) = engine {
            args.extend(["--engine", e]);
        }
        let o = plumb(&store, &args);
        let run = json_of(&o);
        assert!(o.status.success(), "{server}: {}", stderr(&o));
        let want = if engine.is_some() {
            "myrocks"
        } else {
            "postgres"
        };
        assert_eq!(run["run"]["engine"], want);
        let srv_costs = &step(&run, "point-query")["summary"]["server"];
        assert!(srv_costs["cpu_us_query"].is_null(), "{srv_costs}");
        assert!(srv_costs["cpu_unavailable"]
            .as_str()
            .unwrap()
            .contains("external"));
        // The server's own counters still come over SQL.
        assert!(srv_costs["counters_query"].as_object().unwrap().len() > 5);
        let stored_url = run["run"]["options"]["server.url"].as_str().unwrap();
        assert_eq!(
            stored_url.contains(":***@"),
            server == "postgres",
            "{stored_url}"
        );
        assert!(!String::from_utf8_lossy(&o.stdout).contains("sekrit"));
        assert!(!stderr(&o).contains("sekrit"));
        let bytes = std::fs::read(&store).unwrap();
        let wal = std::fs::read(d.path().join("s.sqlite-wal")).unwrap_or_default();
        for b in [&bytes, &wal] {
            assert!(
                !b.windows(6).any(|w| w == b"sekrit"),
                "the password reached the store"
            );
        }
        if ep.protocol == plumb_servers::Protocol::MySql {
            // root has no password here: a wrong one is refused, with the server's
            // words and without the password.
            let bad = format!("mysql://root:wr0ngpw@localhost/plumb?socket={socket}");
            let o = plumb(&store, &["sql", "--url", &bad, "--steps", "point-query"]);
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(stderr(&o).contains("Access denied"), "{}", stderr(&o));
            assert!(!stderr(&o).contains("wr0ngpw"), "{}", stderr(&o));
        }
        drop(srv);
    }
}

#[test]
fn profiles_are_stored_per_step_and_drawn_as_flame_graphs_against_the_base() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "sql",
            "--table-size",
            "2000",
            "--steps",
            "load,point-query",
            // Two seconds: a profile of a one-second window on a machine busy with the
            // other tests once came back without the step (no differential to draw).
            "--duration",
            "2",
            "--warmup",
            "0",
            "--threads",
            "2",
            "--repeat",
            "2",
            "--profile",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Why a step has no profile, if one has none (plumb says so on stderr).
    let why: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains("no profile"))
        .map(str::to_string)
        .collect();
    let runs = json_of(&plumb(&store, &["runs", "--json"]));
    let mut ids: Vec<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    let (a, b) = (ids[0].to_string(), ids[1].to_string());
    let page = html_report(&store, &[&a, &b]);
    assert!(page.contains("<h2 id=\"profiles\">Profiles</h2>"));
    // A differential graph per query against the base, and one graph per profiled step.
    assert!(
        page.contains(&format!("point-query: run {b} against run {a} (per query)")),
        "no differential; {why:?}"
    );
    assert!(page.matches("<iframe class=\"flame\"").count() >= 3);
    // Both sides were sampled: plumb's client threads and PostgreSQL's backends.
    assert!(page.contains("plumb-sql0"));
    assert!(page.contains("PostgresMain"));
}

#[test]
fn an_embedded_engine_is_profiled_the_same_way() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.sqlite");
    let o = plumb(
        &store,
        &[
            "kv",
            "--num",
            "20000",
            "--benchmarks",
            "fillseq,readrandom",
            "--duration",
            "1",
            "--profile",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let page = html_report(&store, &["1"]);
    assert!(
        page.contains("run 1 rocksdb"),
        "no flame graph of the readrandom step"
    );
    assert!(page.contains("readrandom") && page.contains("plumb-w0"));
}
