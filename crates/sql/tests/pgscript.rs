//! pgbench script files on real servers plumb starts (PostgreSQL and MariaDB InnoDB from
//! the packages scripts/setup.sh installs): pgbench's built-ins as files are the text
//! `pgbench --show-script` prints and have the built-ins' effect on the tables in every
//! query mode, the same per-table row changes and commits as plumb's built-in step
//! (the server's own counters); a custom script with `random_zipfian`, `\if` and
//! `\gset` runs and its branches follow the distribution; errors name the line.

mod common;

use plumb_servers::client::{Endpoint, SqlClient};
use plumb_sql::pgbench::{
    after_load, create_tables, PgbenchConfig, PgbenchLoader, PgbenchScript, PgbenchThread,
    PgbenchThreadPlan,
};
use plumb_sql::pgscript::{builtin, ScriptSource, ScriptStep, ScriptThread, ScriptThreadPlan};
use std::process::Command;

use common::{int, start_fresh as start};

fn load(ep: &Endpoint, postgres: bool, engine: &str) -> PgbenchConfig {
    let cfg = PgbenchConfig {
        scale: 1,
        postgres,
        engine_clause: engine.into(),
    };
    create_tables(ep.connect().unwrap().as_mut(), &cfg).unwrap();
    let p = PgbenchThreadPlan {
        cfg: cfg.clone(),
        script: PgbenchScript::TpcbLike,
        seed: 1,
        thread: 0,
        threads: 1,
    };
    let mut l = PgbenchLoader::new(ep, &p).unwrap();
    while !l.event().unwrap().done {}
    after_load(ep.connect().unwrap().as_mut(), &cfg).unwrap();
    cfg
}

/// Runs `n` events of `step` on one client; returns (transactions, queries, rows).
fn run(ep: &Endpoint, step: &ScriptStep, n: u64, seed: u64) -> (u64, u64, u64) {
    let mut t = ScriptThread::new(
        ep,
        &ScriptThreadPlan {
            set: step.set.clone(),
            mode: step.mode,
            defines: step.defines.clone(),
            scale: 1,
            client_id: 0,
            seed,
            run_seed: seed,
        },
    )
    .unwrap();
    let (mut q, mut r) = (0, 0);
    for _ in 0..n {
        let o = t.event().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.ops, 1);
        q += o.queries;
        r += o.rows;
    }
    (n, q, r)
}

/// What PostgreSQL counted for the pgbench tables: rows updated per table, rows
/// inserted into history, and commits.
fn pg_counts(c: &mut dyn SqlClient) -> Vec<i64> {
    // The statistics collector's view of this backend's own work is flushed at the
    // end of each transaction; force the snapshot to be read fresh.
    let _ = c.batch("select pg_stat_clear_snapshot()");
    let mut v: Vec<i64> = ["pgbench_accounts", "pgbench_tellers", "pgbench_branches"]
        .iter()
        .map(|t| {
            int(
                c,
                &format!("select n_tup_upd from pg_stat_user_tables where relname = '{t}'"),
            )
        })
        .collect();
    v.push(int(
        c,
        "select n_tup_ins from pg_stat_user_tables where relname = 'pgbench_history'",
    ));
    v
}

fn diff(a: &[i64], b: &[i64]) -> Vec<i64> {
    a.iter().zip(b).map(|(x, y)| y - x).collect()
}

/// Waits until PostgreSQL's statistics show at least `want` more of every count than
/// `base` (each backend flushes them as it goes idle, within a second, and a table's
/// entry whose lock is busy waits for a later flush: the history's count can arrive
/// before the accounts').
fn settled(c: &mut dyn SqlClient, base: &[i64], want: i64) -> Vec<i64> {
    for _ in 0..100 {
        let now = pg_counts(c);
        if now.iter().zip(base).all(|(n, b)| n - b >= want) {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    pg_counts(c)
}

#[test]
fn builtin_files_are_the_text_pgbench_shows() {
    for (name, text) in builtin::BUILTINS {
        let out = Command::new("pgbench")
            .arg(format!("--show-script={name}"))
            .output()
            .expect("pgbench: the postgresql-client package ships it (scripts/setup.sh)");
        let shown = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let lines = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect()
        };
        assert_eq!(lines(text), lines(&shown), "{name}");
    }
}

#[test]
fn postgres_builtins_as_files_change_what_the_builtin_step_changes_in_every_mode() {
    let srv = start("postgres", None);
    let ep = srv.m.endpoint.clone();
    load(&ep, true, "");
    let mut c = ep.connect().unwrap();
    let n = 200;
    // plumb's built-in step: the reference.
    let before = pg_counts(c.as_mut());
    let mut t = PgbenchThread::new(
        &ep,
        &PgbenchThreadPlan {
            cfg: PgbenchConfig {
                scale: 1,
                postgres: true,
                engine_clause: String::new(),
            },
            script: PgbenchScript::TpcbLike,
            seed: 7,
            thread: 0,
            threads: 1,
        },
    )
    .unwrap();
    let mut builtin_queries = 0;
    for _ in 0..n {
        builtin_queries += t.event().unwrap().queries;
    }
    drop(t);
    let after = settled(c.as_mut(), &before, n as i64);
    let reference = diff(&before, &after);
    assert_eq!(
        reference, [n as i64; 4],
        "accounts, tellers, branches, history"
    );
    for mode in ["simple", "extended", "prepared"] {
        let step = ScriptStep::new(&[], &["tpcb-like".into()], &[], mode).unwrap();
        let before = pg_counts(c.as_mut());
        let sum_before = int(c.as_mut(), "select sum(abalance) from pgbench_accounts");
        let hist_before = int(
            c.as_mut(),
            "select coalesce(sum(delta), 0) from pgbench_history",
        );
        let (txns, queries, rows_seen) = run(&ep, &step, n, 11);
        let after = settled(c.as_mut(), &before, n as i64);
        assert_eq!(diff(&before, &after), reference, "-M {mode}");
        assert_eq!(
            queries, builtin_queries,
            "-M {mode}: 7 statements per transaction"
        );
        assert_eq!(
            rows_seen,
            5 * txns,
            "-M {mode}: 4 rows changed and 1 read each"
        );
        // The deltas the script drew went to the accounts it drew.
        let moved = int(c.as_mut(), "select sum(abalance) from pgbench_accounts") - sum_before;
        let logged = int(
            c.as_mut(),
            "select coalesce(sum(delta), 0) from pgbench_history",
        ) - hist_before;
        assert_eq!(moved, logged, "-M {mode}");
    }
}

/// P(X ≤ k) for pgbench's random_zipfian on 1..=n with parameter s.
fn zipf_mass(n: u64, s: f64, k: u64) -> f64 {
    let h = |m: u64| (1..=m).map(|i| (i as f64).powf(-s)).sum::<f64>();
    h(k) / h(n)
}

const CUSTOM: &str = "\
-- a customer's mix: hot keys to one table, the rest to another
\\set n 1000
\\set k random_zipfian(1, :n, 1.5)
SELECT :k AS got, :k * 2 AS twice \\gset
\\if :got <= 10
  INSERT INTO hot VALUES (:k, :twice);
\\elif :got > :n
  SELECT 1/0;
\\else
  INSERT INTO cold VALUES (:k, :twice);
\\endif
";

fn custom_runs(server: &str, engine: Option<&str>, modes: &[&str]) {
    let srv = start(server, engine);
    let ep = srv.m.endpoint.clone();
    let mut c = ep.connect().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("custom.sql");
    std::fs::write(&file, CUSTOM).unwrap();
    let src = ScriptSource::read(&format!("{}@1", file.display()), None).unwrap();
    assert_eq!(src.text, CUSTOM);
    let n = 1000u64;
    for mode in modes {
        for t in ["hot", "cold"] {
            c.batch(&format!("drop table if exists {t}")).unwrap();
            c.batch(&format!("create table {t} (k int, twice int)"))
                .unwrap();
        }
        let step = ScriptStep::new(std::slice::from_ref(&src), &[], &[], mode).unwrap();
        let (_, queries, _) = run(&ep, &step, n, 5);
        // One SELECT and one INSERT per transaction.
        assert_eq!(queries, 2 * n, "{server} -M {mode}");
        let hot = int(c.as_mut(), "select count(*) from hot");
        let cold = int(c.as_mut(), "select count(*) from cold");
        assert_eq!(hot + cold, n as i64, "{server} -M {mode}");
        // \gset carried the drawn key into the insert, unchanged.
        assert_eq!(
            int(
                c.as_mut(),
                "select count(*) from cold where twice <> 2 * k or k <= 10 or k > 1000"
            ),
            0
        );
        assert_eq!(
            int(
                c.as_mut(),
                "select count(*) from hot where twice <> 2 * k or k > 10"
            ),
            0
        );
        // The \if followed the distribution: P(k ≤ 10) for s = 1.5 on 1..=1000 is
        // 0.77; a binomial's sd over 1000 draws is 0.013, the bound 6 sd.
        let p = zipf_mass(1000, 1.5, 10);
        let share = hot as f64 / n as f64;
        assert!(
            (share - p).abs() < 0.08,
            "{server} -M {mode}: {share} vs {p}"
        );
    }
}

#[test]
fn postgres_custom_script_with_zipfian_if_and_gset() {
    custom_runs("postgres", None, &["simple", "extended", "prepared"]);
}

#[test]
fn mariadb_custom_script_with_zipfian_if_and_gset() {
    custom_runs("mariadb", Some("innodb"), &["simple", "prepared"]);
}

#[test]
fn errors_name_the_script_and_line() {
    let srv = start("postgres", None);
    let ep = srv.m.endpoint.clone();
    let src = ScriptSource::new(
        "broken.sql".into(),
        1,
        "\\set a 1\n\nSELECT * FROM no_such_table WHERE x = :a;\n".into(),
    );
    for mode in ["simple", "prepared"] {
        let step = ScriptStep::new(std::slice::from_ref(&src), &[], &[], mode).unwrap();
        let mut t = ScriptThread::new(
            &ep,
            &ScriptThreadPlan {
                set: step.set.clone(),
                mode: step.mode,
                defines: vec![],
                scale: 1,
                client_id: 0,
                seed: 1,
                run_seed: 1,
            },
        )
        .unwrap();
        let e = t.event().unwrap_err().to_string();
        assert!(
            e.contains("broken.sql line 3") && e.contains("no_such_table"),
            "-M {mode}: {e}"
        );
    }
    // An undefined variable in prepared mode, a runtime expression error in any.
    let src = ScriptSource::new(
        "vars.sql".into(),
        1,
        "\\set d 1 / (:z - :z)\nSELECT 1;\n".into(),
    );
    let step = ScriptStep::new(std::slice::from_ref(&src), &[], &["z=3".into()], "simple").unwrap();
    let (.., e) = (0, {
        let mut t = ScriptThread::new(
            &ep,
            &ScriptThreadPlan {
                set: step.set.clone(),
                mode: step.mode,
                defines: step.defines.clone(),
                scale: 1,
                client_id: 0,
                seed: 1,
                run_seed: 1,
            },
        )
        .unwrap();
        t.event().unwrap_err().to_string()
    });
    assert!(
        e.contains("vars.sql line 1") && e.contains("division by zero"),
        "{e}"
    );
}
