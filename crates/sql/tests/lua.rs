//! sysbench's own Lua scripts (the ones Debian's sysbench package installs in
//! /usr/share/sysbench, installed by scripts/setup.sh) run unchanged by plumb on real
//! servers plumb starts (MariaDB InnoDB and PostgreSQL): the statements each
//! transaction sends, as the server's own counters count them, are sysbench's when
//! sysbench itself runs the same script against the same tables; errors name the
//! script's file and line.

mod common;

use plumb_plan::SqlParams;
use plumb_servers::client::{Endpoint, Protocol, SqlClient};
use plumb_sql::lua::{LuaPrepare, LuaStep, LuaThread, LuaThreadPlan};
use std::process::Command;

use common::{int, rows, start_fresh as start};

const SCRIPTS: &str = "/usr/share/sysbench";

/// The script and the modules it requires, as `plumb sql --lua` reads them.
fn sources(file: &str) -> Vec<plumb_plan::ScriptSource> {
    let mut p = SqlParams {
        lua: Some(file.to_string()),
        ..SqlParams::default()
    };
    p.read_lua(None)
        .unwrap_or_else(|e| panic!("{file}: {}", e.message));
    p.lua_sources
}

fn step(file: &str, opts: &[&str]) -> LuaStep {
    let opts: Vec<String> = opts.iter().map(|s| s.to_string()).collect();
    LuaStep::new(&sources(file), &opts, 1, 5.0).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn plan(step: &LuaStep, tid: usize) -> LuaThreadPlan {
    LuaThreadPlan {
        step: step.clone(),
        tid,
        seed: 42 + tid as u64,
    }
}

/// plumb's prepare command, as the lua-prepare step runs it on one thread.
fn plumb_prepare(ep: &Endpoint, step: &LuaStep) {
    let mut p = LuaPrepare::new(ep, &plan(step, 0)).unwrap();
    while !p.event().unwrap_or_else(|e| panic!("prepare: {e}")).done {}
}

/// `n` events of plumb's lua step on one client, its thread_done after.
fn plumb_run(ep: &Endpoint, step: &LuaStep, n: u64) -> u64 {
    let mut t = LuaThread::new(ep, &plan(step, 0)).unwrap_or_else(|e| panic!("{e}"));
    let mut queries = 0;
    for _ in 0..n {
        let o = t.event().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.ops, 1);
        assert!(!o.done);
        queries += o.queries;
    }
    t.finish().unwrap_or_else(|e| panic!("{e}"));
    queries
}

/// sysbench's own connection options for `ep`.
fn sysbench_args(ep: &Endpoint) -> Vec<String> {
    let sock = ep.socket.as_ref().unwrap().display().to_string();
    match ep.protocol {
        Protocol::MySql => vec![
            "--db-driver=mysql".into(),
            format!("--mysql-socket={sock}"),
            format!("--mysql-user={}", ep.user),
            format!("--mysql-db={}", ep.database),
        ],
        Protocol::Postgres => vec![
            "--db-driver=pgsql".into(),
            format!("--pgsql-host={sock}"),
            format!("--pgsql-port={}", ep.port),
            format!("--pgsql-user={}", ep.user),
            format!("--pgsql-db={}", ep.database),
        ],
    }
}

/// Runs the real sysbench: `sysbench SCRIPT [opts] --events N COMMAND`.
fn sysbench(ep: &Endpoint, script: &str, opts: &[&str], events: u64, command: &str) {
    let out = Command::new("sysbench")
        .arg(format!("{SCRIPTS}/{script}"))
        .args(sysbench_args(ep))
        .args(opts.iter().map(|o| format!("--{o}")))
        .args([
            "--threads=1",
            &format!("--events={events}"),
            "--time=0",
            command,
        ])
        .output()
        .expect("sysbench (scripts/setup.sh installs Debian's sysbench)");
    assert!(
        out.status.success(),
        "sysbench {script} {command}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The server's own counts of statements and row changes, by name.
fn counters(c: &mut dyn SqlClient, postgres: bool) -> Vec<(String, i64)> {
    if postgres {
        // Backends flush their statistics when they go idle or exit: wait until two
        // reads a moment apart agree.
        let read = |c: &mut dyn SqlClient| {
            let _ = c.batch("select pg_stat_clear_snapshot()");
            let r = rows(
                c,
                "select coalesce(sum(idx_scan), 0), coalesce(sum(seq_scan), 0), \
                 coalesce(sum(n_tup_ins), 0), coalesce(sum(n_tup_upd), 0), \
                 coalesce(sum(n_tup_del), 0) from pg_stat_user_tables where relname like 'sbtest%'",
            );
            // (Not pg_stat_database's commits: they count this reader's own reads, a
            // number that varies with how long the counters take to settle. MariaDB's
            // Com_begin and Com_commit check the transactions.)
            ["idx_scan", "seq_scan", "ins", "upd", "del"]
                .iter()
                .zip(&r[0])
                .map(|(n, (_, x))| (n.to_string(), x.as_deref().unwrap().parse().unwrap()))
                .collect::<Vec<(String, i64)>>()
        };
        // A tool's backends flush at exit: wait until none is left but this reader.
        for _ in 0..100 {
            let others = int(
                c,
                "select count(*) from pg_stat_activity where datname = current_database() \
                 and pid <> pg_backend_pid()",
            );
            if others == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let mut last = read(c);
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let now = read(c);
            if now == last {
                return now;
            }
            last = now;
        }
        last
    } else {
        let r = rows(
            c,
            "show global status where variable_name in ('Com_select', 'Com_insert', \
             'Com_update', 'Com_delete', 'Com_begin', 'Com_commit', 'Com_stmt_execute')",
        );
        r.into_iter()
            .map(|row| {
                (
                    row[0].1.clone().unwrap(),
                    row[1].1.as_deref().unwrap().parse().unwrap(),
                )
            })
            .collect()
    }
}

fn delta(a: &[(String, i64)], b: &[(String, i64)]) -> Vec<(String, i64)> {
    a.iter()
        .zip(b)
        .map(|((n, x), (_, y))| (n.clone(), y - x))
        .collect()
}

/// The counters' change over `small` events subtracted from that over `large`: what
/// `large - small` events cost, without what connecting and preparing cost.
fn per_events(
    c: &mut dyn SqlClient,
    postgres: bool,
    mut run: impl FnMut(u64),
    small: u64,
    large: u64,
) -> Vec<(String, i64)> {
    // The counter reads themselves are statements too (SHOW, SELECT): they count alike
    // in both runs, and cancel.
    let a = counters(c, postgres);
    run(small);
    let b = counters(c, postgres);
    run(large);
    let d = counters(c, postgres);
    let first = delta(&a, &b);
    let second = delta(&b, &d);
    first
        .iter()
        .zip(&second)
        .map(|((n, x), (_, y))| (n.clone(), y - x))
        .collect()
}

/// Each script's statements per transaction, plumb's against sysbench's own, on one
/// server: both prepare with the script's prepare command (sysbench's, then plumb's on
/// fresh tables), then run 40 and 240 events each on one thread.
fn same_statements_as_sysbench(server: &str, engine: Option<&str>) {
    let s = start(server, engine);
    let ep = s.m.endpoint.clone();
    let postgres = ep.protocol == Protocol::Postgres;
    let mut c = ep.connect().unwrap();
    let common = ["table-size=2000", "rand-type=uniform"];
    for (script, extra) in [
        ("oltp_read_write.lua", &[][..]),
        ("oltp_point_select.lua", &[]),
        ("oltp_update_index.lua", &[]),
        ("select_random_ranges.lua", &[]),
    ] {
        let opts: Vec<&str> = common.iter().chain(extra).copied().collect();
        let lua = step(&format!("{SCRIPTS}/{script}"), &opts);
        sysbench(&ep, script, &opts, 0, "prepare");
        let theirs = per_events(
            c.as_mut(),
            postgres,
            |n| sysbench(&ep, script, &opts, n, "run"),
            40,
            240,
        );
        sysbench(&ep, script, &opts, 0, "cleanup");
        plumb_prepare(&ep, &lua);
        let ours = per_events(
            c.as_mut(),
            postgres,
            |n| {
                plumb_run(&ep, &lua, n);
            },
            40,
            240,
        );
        // Read after the counters: a scan of sbtest1 is one of the counters.
        let rows_made = int(c.as_mut(), "select count(*) from sbtest1");
        assert_eq!(
            rows_made, 2000,
            "{server} {script}: plumb's prepare made the table"
        );
        c.batch("DROP TABLE sbtest1").unwrap();
        eprintln!("{server} {script}: sysbench {theirs:?}\n  plumb {ours:?}");
        let busy = theirs.iter().any(|(_, v)| *v > 0);
        assert!(busy, "{server} {script}: sysbench's run moved no counter");
        assert_eq!(
            ours, theirs,
            "{server} {script}: per 200 transactions, plumb's statements (left) differ from \
             sysbench's (right)"
        );
    }
    // bulk_insert.lua: its prepare makes one table per thread, and each event adds a
    // row to a multi-row INSERT sent when sysbench's buffer fills and at thread_done.
    let lua = step(&format!("{SCRIPTS}/bulk_insert.lua"), &[]);
    sysbench(&ep, "bulk_insert.lua", &[], 0, "prepare");
    let a = counters(c.as_mut(), postgres);
    sysbench(&ep, "bulk_insert.lua", &[], 30_000, "run");
    let b = counters(c.as_mut(), postgres);
    let theirs = delta(&a, &b);
    assert_eq!(int(c.as_mut(), "select count(*) from sbtest1"), 30_000);
    sysbench(&ep, "bulk_insert.lua", &[], 0, "cleanup");
    plumb_prepare(&ep, &lua);
    let a = counters(c.as_mut(), postgres);
    plumb_run(&ep, &lua, 30_000);
    let b = counters(c.as_mut(), postgres);
    let ours = delta(&a, &b);
    assert_eq!(int(c.as_mut(), "select count(*) from sbtest1"), 30_000);
    eprintln!("{server} bulk_insert.lua: sysbench {theirs:?}\n  plumb {ours:?}");
    // The counter reads are outside both windows; the INSERTs (MariaDB: statements;
    // PostgreSQL: rows) are the script's.
    let keep = |v: &[(String, i64)]| -> Vec<(String, i64)> {
        v.iter()
            .filter(|(n, _)| matches!(n.as_str(), "Com_insert" | "ins"))
            .cloned()
            .collect()
    };
    assert_eq!(keep(&ours), keep(&theirs), "{server} bulk_insert.lua");
    assert!(keep(&ours).iter().all(|(_, v)| *v >= 1), "{ours:?}");
}

#[test]
fn mariadb_runs_sysbench_scripts_with_sysbenchs_statements() {
    same_statements_as_sysbench("mariadb", Some("innodb"));
}

#[test]
fn postgres_runs_sysbench_scripts_with_sysbenchs_statements() {
    same_statements_as_sysbench("postgres", None);
}

#[test]
fn script_errors_name_the_file_and_line_and_bad_options_name_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.lua");
    std::fs::write(
        &file,
        "function thread_init()\n  con = sysbench.sql.driver():connect()\nend\n\
         function event()\n  con:query('SELEKT 1')\nend\n",
    )
    .unwrap();
    let s = start("postgres", None);
    let l = step(file.to_str().unwrap(), &[]);
    let mut t = LuaThread::new(&s.m.endpoint, &plan(&l, 0)).unwrap();
    let e = t.event().unwrap_err().to_string();
    assert!(e.contains("bad.lua:5:"), "{e}");
    assert!(e.contains("SQL error") && e.contains("42601"), "{e}");

    std::fs::write(&file, "function event()\n  local x = nil + 1\nend\n").unwrap();
    let l = step(file.to_str().unwrap(), &[]);
    let mut t = LuaThread::new(&s.m.endpoint, &plan(&l, 0)).unwrap();
    let e = t.event().unwrap_err().to_string();
    assert!(e.contains("bad.lua:2:"), "{e}");

    std::fs::write(&file, "function event()\n  if then\nend\n").unwrap();
    let e = LuaStep::new(&sources(file.to_str().unwrap()), &[], 1, 5.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.lua:2:"), "{e}");

    std::fs::write(&file, "x = 1\n").unwrap();
    let e = LuaStep::new(&sources(file.to_str().unwrap()), &[], 1, 5.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no event() function"), "{e}");

    let e = LuaStep::new(
        &sources(&format!("{SCRIPTS}/oltp_read_write.lua")),
        &["tabel_size=5".into()],
        1,
        5.0,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("tabel_size") && e.contains("table_size"), "{e}");
}

#[test]
fn a_deadlock_restarts_the_event_and_the_scripts_hook_runs() {
    // The script's first event fails with an error the driver ignores (a unique
    // violation on PostgreSQL, as a deadlock would): sysbench's protocol runs
    // before_restart_event and event() again, and the event counts as retried.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("retry.lua");
    std::fs::write(
        &file,
        "function thread_init()\n  con = sysbench.sql.driver():connect()\n\
           con:query('CREATE TABLE IF NOT EXISTS r (id INT PRIMARY KEY)')\n\
           con:query('DELETE FROM r')\n  n = 0\n  hooked = 0\nend\n\
         function sysbench.hooks.before_restart_event(err)\n  hooked = hooked + 1\n\
           assert(err.sql_state == '23505', err.sql_state)\nend\n\
         function event()\n  n = n + 1\n  con:query('INSERT INTO r VALUES (' .. (n == 1 and 1 or 2) .. ')')\n\
           if n == 1 then con:query('INSERT INTO r VALUES (1)') end\n\
           local rs = con:query('SELECT count(*) FROM r')\n\
           assert(rs.nrows == 1 and rs.nfields == 1)\n\
           local row = rs:fetch_row()\n  assert(row[1] == '2', row[1])\n\
           assert(hooked == 1)\nend\n",
    )
    .unwrap();
    let s = start("postgres", None);
    let l = step(file.to_str().unwrap(), &[]);
    let mut t = LuaThread::new(&s.m.endpoint, &plan(&l, 0)).unwrap();
    let o = t.event().unwrap_or_else(|e| panic!("{e}"));
    assert!(o.retried);
    assert_eq!(
        o.queries, 4,
        "insert, the failed insert, insert, select: each as sent"
    );
}
