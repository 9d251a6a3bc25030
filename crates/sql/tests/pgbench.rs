//! pgbench's built-in scripts against real servers that plumb's own code starts
//! (PostgreSQL and MariaDB InnoDB, from the packages scripts/setup.sh installs): the
//! load makes what `pgbench -i` makes (the same columns, keys, fillfactor and rows, on
//! a second database of the same server), and each script has pgbench's effect on the
//! tables, checked by the server's own sums, also on tables that pgbench itself made.

mod common;

use plumb_servers::client::{Endpoint, SqlClient, TextRows};
use plumb_servers::SqlError;
use plumb_sql::pgbench::{
    after_load, create_tables, scale_of, PgbenchConfig, PgbenchLoader, PgbenchScript,
    PgbenchThread, PgbenchThreadPlan,
};
use std::path::PathBuf;
use std::process::Command;

use common::{int, rows, start_fresh as start};

static NEXT_SEED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn plan(cfg: &PgbenchConfig, script: PgbenchScript, t: usize, threads: usize) -> PgbenchThreadPlan {
    PgbenchThreadPlan {
        cfg: cfg.clone(),
        script,
        // Each run its own seeds, as a step's are (the same seeds would draw the same
        // accounts and deltas again).
        seed: NEXT_SEED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) * 1000 + t as u64,
        thread: t,
        threads,
    }
}

/// Creates the tables, loads them on `threads` connections, adds the keys; returns the
/// rows the loaders said they inserted.
fn load(ep: &Endpoint, cfg: &PgbenchConfig, threads: usize) -> u64 {
    let mut c = ep.connect().unwrap();
    create_tables(c.as_mut(), cfg).unwrap();
    let loaded: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = plan(cfg, PgbenchScript::TpcbLike, t, threads);
                s.spawn(move || {
                    let mut l = PgbenchLoader::new(ep, &p).unwrap();
                    let mut rows = 0;
                    loop {
                        let o = l.event().unwrap();
                        if o.done {
                            assert_eq!(o.ops, 0, "a done outcome carries no rows");
                            return rows;
                        }
                        assert_eq!((o.queries, o.rows), (1, o.ops));
                        assert!(o.ops >= 1 && o.ops <= 1000, "{o:?}");
                        rows += o.ops;
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    after_load(c.as_mut(), cfg).unwrap();
    loaded
}

/// What a run of a script did, added over its threads.
#[derive(Debug, Default)]
struct Totals {
    txns: u64,
    queries: u64,
    rows: u64,
    retried: u64,
}

/// Runs `per_thread` transactions of `script` on each of `threads` connections.
fn run(
    ep: &Endpoint,
    cfg: &PgbenchConfig,
    script: PgbenchScript,
    threads: usize,
    per_thread: u64,
) -> Totals {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = plan(cfg, script, t, threads);
                s.spawn(move || {
                    let mut th = PgbenchThread::new(ep, &p).unwrap();
                    let mut tot = Totals::default();
                    for _ in 0..per_thread {
                        let o = th.event().unwrap_or_else(|e| panic!("{script}: {e}"));
                        assert!(!o.done && o.ops == 1, "{o:?}");
                        tot.txns += o.ops;
                        tot.queries += o.queries;
                        tot.rows += o.rows;
                        tot.retried += u64::from(o.retried);
                    }
                    tot
                })
            })
            .collect();
        let mut all = Totals::default();
        for h in hs {
            let t = h.join().unwrap();
            all.txns += t.txns;
            all.queries += t.queries;
            all.rows += t.rows;
            all.retried += t.retried;
        }
        all
    })
}

/// The tables' balances and history as the server adds them up.
#[derive(Debug, Clone, PartialEq)]
struct State {
    accounts: i64,
    tellers: i64,
    branches: i64,
    history_delta: i64,
    history_rows: i64,
    /// Σ aid × abalance: changes when any account's balance moves, even if the plain
    /// sum happens not to.
    accounts_weighted: i64,
    accounts_touched: i64,
}

fn state(c: &mut dyn SqlClient, postgres: bool) -> State {
    let weighted = if postgres {
        "select coalesce(sum(aid::bigint * abalance), 0) from pgbench_accounts"
    } else {
        "select coalesce(sum(aid * abalance), 0) from pgbench_accounts"
    };
    State {
        accounts: int(c, "select coalesce(sum(abalance), 0) from pgbench_accounts"),
        tellers: int(c, "select coalesce(sum(tbalance), 0) from pgbench_tellers"),
        branches: int(c, "select coalesce(sum(bbalance), 0) from pgbench_branches"),
        history_delta: int(c, "select coalesce(sum(delta), 0) from pgbench_history"),
        history_rows: int(c, "select count(*) from pgbench_history"),
        accounts_weighted: int(c, weighted),
        accounts_touched: int(
            c,
            "select count(*) from pgbench_accounts where abalance <> 0",
        ),
    }
}

/// tpcb-like moves every table by the same deltas and appends one history row per
/// transaction.
fn check_tpcb(before: &State, after: &State, t: &Totals) {
    let d = after.history_delta - before.history_delta;
    assert_eq!(
        after.history_rows - before.history_rows,
        t.txns as i64,
        "{after:?}"
    );
    assert_eq!(after.accounts - before.accounts, d, "{after:?}");
    assert_eq!(after.tellers - before.tellers, d, "{after:?}");
    assert_eq!(after.branches - before.branches, d, "{after:?}");
    assert_ne!(after.accounts_weighted, before.accounts_weighted);
    // BEGIN, five statements, END per transaction; 5 rows changed or read.
    assert_eq!(t.rows, 5 * t.txns, "{t:?}");
    if t.retried == 0 {
        assert_eq!(t.queries, 7 * t.txns, "{t:?}");
    } else {
        assert!(t.queries > 7 * t.txns, "{t:?}");
    }
}

fn pg_config(scale: u32) -> PgbenchConfig {
    PgbenchConfig {
        scale,
        postgres: true,
        engine_clause: String::new(),
    }
}

/// The pgbench beside the server plumb started (same major).
fn pgbench_binary(version: &str) -> PathBuf {
    let major = version.split('.').next().unwrap_or_default();
    let p = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin/pgbench"));
    assert!(
        p.exists(),
        "{}: missing; the postgresql package ships it (scripts/setup.sh)",
        p.display()
    );
    p
}

/// A database's pgbench tables as information_schema and pg_class describe them, and
/// a digest of the rows of the three filled tables.
fn describe(c: &mut dyn SqlClient) -> Vec<TextRows> {
    let mut out = vec![
        rows(
            c,
            "select table_name, column_name, ordinal_position, data_type, \
             character_maximum_length, is_nullable, column_default \
             from information_schema.columns \
             where table_schema = 'public' and table_name like 'pgbench%' \
             order by table_name, ordinal_position",
        ),
        rows(
            c,
            "select tc.table_name, k.column_name, k.ordinal_position \
             from information_schema.table_constraints tc \
             join information_schema.key_column_usage k \
               on k.constraint_name = tc.constraint_name and k.table_name = tc.table_name \
             where tc.constraint_type = 'PRIMARY KEY' and tc.table_name like 'pgbench%' \
             order by 1, 2",
        ),
        rows(
            c,
            "select relname, relkind, coalesce(array_to_string(reloptions, ','), '') \
             from pg_class where relname like 'pgbench%' order by relname",
        ),
    ];
    for (t, cols, key) in [
        ("pgbench_branches", "bid, bbalance, filler", "bid"),
        ("pgbench_tellers", "tid, bid, tbalance, filler", "tid"),
        ("pgbench_accounts", "aid, bid, abalance, filler", "aid"),
    ] {
        let list: Vec<String> = cols
            .split(", ")
            .map(|c| format!("coalesce({c}::text, '~')"))
            .collect();
        out.push(rows(
            c,
            &format!(
                "select count(*), md5(string_agg(concat_ws(',', {}), ';' order by {key})) \
                 from {t}",
                list.join(", ")
            ),
        ));
    }
    out
}

#[test]
fn postgres_scripts_match_pgbench() {
    let srv = start("postgres", None);
    let ep = srv.m.endpoint.clone();
    let cfg = pg_config(1);
    let mut c = ep.connect().unwrap();

    // No tables yet: the scale cannot be read, and the error says what to do.
    match scale_of(c.as_mut()) {
        Err(SqlError::Input(m)) => assert!(m.contains("pgbench -i"), "{m}"),
        other => panic!("scale_of without tables: {other:?}"),
    }

    let loaded = load(&ep, &cfg, 2);
    assert_eq!(loaded, 100_000 + 10 + 1);
    assert_eq!(
        int(c.as_mut(), "select count(*) from pgbench_accounts"),
        100_000
    );
    assert_eq!(int(c.as_mut(), "select count(*) from pgbench_tellers"), 10);
    assert_eq!(int(c.as_mut(), "select count(*) from pgbench_branches"), 1);
    assert_eq!(int(c.as_mut(), "select count(*) from pgbench_history"), 0);
    assert_eq!(scale_of(c.as_mut()).unwrap(), 1);

    // The same server, a second database, made by pgbench itself.
    c.batch("create database pgbref").unwrap();
    let pgbench = pgbench_binary(&srv.m.version);
    let sock = ep
        .socket
        .clone()
        .expect("a managed server listens on a socket");
    let out = Command::new(&pgbench)
        .args(["-i", "-q", "-s", "1", "-U", "postgres", "-h"])
        .arg(&sock)
        .args(["-p", &ep.port.to_string(), "pgbref"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pgbench -i: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ref_ep = Endpoint {
        database: "pgbref".into(),
        ..ep.clone()
    };
    let mut r = ref_ep.connect().unwrap();
    let ours = describe(c.as_mut());
    let theirs = describe(r.as_mut());
    assert_eq!(ours[0].len(), 6 + 4 + 4 + 3, "columns: {:?}", ours[0]);
    assert_eq!(ours[1].len(), 3, "primary keys: {:?}", ours[1]);
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            a, b,
            "plumb's load differs from pgbench -i -s 1 (query {i})"
        );
    }

    // tpcb-like: every balance moves by the history's deltas.
    let before = state(c.as_mut(), true);
    assert_eq!(before.accounts_touched, 0);
    let t = run(&ep, &cfg, PgbenchScript::TpcbLike, 2, 200);
    assert_eq!(t.txns, 400);
    let after = state(c.as_mut(), true);
    check_tpcb(&before, &after, &t);
    // Started from zero: the four sums are one number.
    assert_eq!(after.accounts, after.history_delta);
    assert!(after.accounts_touched > 300, "{after:?}");

    // simple-update: accounts and history move together, tellers and branches stay.
    let before = after;
    let t = run(&ep, &cfg, PgbenchScript::SimpleUpdate, 2, 150);
    let after = state(c.as_mut(), true);
    assert_eq!(after.history_rows - before.history_rows, 300);
    assert_eq!(
        after.accounts - before.accounts,
        after.history_delta - before.history_delta
    );
    assert_eq!(
        (after.tellers, after.branches),
        (before.tellers, before.branches)
    );
    assert_ne!(after.accounts_weighted, before.accounts_weighted);
    assert!(after.accounts_touched > before.accounts_touched);
    assert_eq!((t.rows, t.queries), (3 * 300, 5 * 300), "{t:?}");

    // select-only: one row read per transaction, nothing changes.
    let before = after;
    let t = run(&ep, &cfg, PgbenchScript::SelectOnly, 2, 300);
    assert_eq!((t.txns, t.queries, t.rows, t.retried), (600, 600, 600, 0));
    assert_eq!(state(c.as_mut(), true), before);

    // On the tables pgbench made: the scale is read from them, and tpcb-like holds.
    let plumb_before = state(c.as_mut(), true);
    let scale = scale_of(r.as_mut()).unwrap();
    assert_eq!(scale, 1);
    let before = state(r.as_mut(), true);
    assert_eq!(before.history_rows, 0);
    let t = run(&ref_ep, &pg_config(scale), PgbenchScript::TpcbLike, 2, 150);
    let after = state(r.as_mut(), true);
    check_tpcb(&before, &after, &t);
    assert_eq!(after.history_rows, 300);
    assert_eq!(after.tellers, after.history_delta);
    // plumb's database was not touched by that run.
    assert_eq!(state(c.as_mut(), true), plumb_before);
}

#[test]
fn a_script_on_a_larger_scale_draws_keys_from_the_whole_range() {
    let srv = start("postgres", None);
    let ep = srv.m.endpoint.clone();
    let cfg = pg_config(3);
    assert_eq!(load(&ep, &cfg, 2), 300_000 + 30 + 3);
    let mut c = ep.connect().unwrap();
    assert_eq!(scale_of(c.as_mut()).unwrap(), 3);
    let t = run(&ep, &cfg, PgbenchScript::TpcbLike, 2, 300);
    let s = state(c.as_mut(), true);
    assert_eq!(
        (s.accounts, s.tellers, s.branches),
        (s.history_delta, s.history_delta, s.history_delta)
    );
    assert_eq!(s.history_rows, t.txns as i64);
    // 600 uniform draws over 3 branches and 30 tellers reach all of them, and accounts
    // above the first scale unit's 100000.
    for (sql, want) in [
        ("select count(distinct bid) from pgbench_history", 3),
        ("select count(distinct tid) from pgbench_history", 30),
        ("select count(*) from pgbench_history where aid > 200000", 1),
    ] {
        let got = int(c.as_mut(), sql);
        assert!(got >= want, "{sql}: {got}");
    }
    assert!(int(c.as_mut(), "select max(aid) from pgbench_history") <= 300_000);
    assert!(int(c.as_mut(), "select min(delta) from pgbench_history") >= -5000);
    assert!(int(c.as_mut(), "select max(delta) from pgbench_history") <= 5000);
}

#[test]
fn mariadb_innodb_runs_tpcb_like() {
    let srv = start("mariadb", Some("innodb"));
    let ep = srv.m.endpoint.clone();
    let cfg = PgbenchConfig {
        scale: 1,
        postgres: false,
        engine_clause: " ENGINE = InnoDB".into(),
    };
    assert_eq!(load(&ep, &cfg, 2), 100_011);
    let mut c = ep.connect().unwrap();
    assert_eq!(scale_of(c.as_mut()).unwrap(), 1);
    assert_eq!(
        int(c.as_mut(), "select count(*) from pgbench_accounts"),
        100_000
    );
    let engines = rows(
        c.as_mut(),
        "select table_name, engine from information_schema.tables \
         where table_schema = 'plumb' and table_name like 'pgbench%' order by 1",
    );
    assert_eq!(engines.len(), 4);
    for r in &engines {
        assert_eq!(r[1].1.as_deref(), Some("InnoDB"), "{r:?}");
    }
    let keys = rows(
        c.as_mut(),
        "select table_name, column_name from information_schema.key_column_usage \
         where table_schema = 'plumb' and constraint_name = 'PRIMARY' order by 1",
    );
    let keys: Vec<(String, String)> = keys
        .into_iter()
        .map(|r| (r[0].1.clone().unwrap(), r[1].1.clone().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            ("pgbench_accounts".to_string(), "aid".to_string()),
            ("pgbench_branches".into(), "bid".into()),
            ("pgbench_tellers".into(), "tid".into()),
        ]
    );
    let before = state(c.as_mut(), false);
    let t = run(&ep, &cfg, PgbenchScript::TpcbLike, 2, 200);
    let after = state(c.as_mut(), false);
    check_tpcb(&before, &after, &t);
    assert_eq!(after.accounts, after.history_delta);
    assert_eq!(
        int(
            c.as_mut(),
            "select count(*) from pgbench_history where mtime is null"
        ),
        0
    );
}
