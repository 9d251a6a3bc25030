//! Versioned schema migrations, tracked in SQLite's `user_version`. Each entry moves
//! the schema from version i to i + 1; they only ever append.

use crate::StoreError;
use rusqlite::Connection;
use std::path::Path;

/// Migration i takes the schema from version i to i + 1.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: runs, steps, 1-second intervals.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        status TEXT NOT NULL,
        tag TEXT,
        command TEXT NOT NULL,
        workload TEXT NOT NULL,
        engine TEXT NOT NULL,
        engine_version TEXT NOT NULL,
        plumb_version TEXT NOT NULL,
        git_hash TEXT,
        options TEXT NOT NULL,
        seed TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        data_dir TEXT,
        device TEXT,
        host TEXT
     );
     CREATE TABLE steps (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL,
        config TEXT NOT NULL,
        ops INTEGER NOT NULL,
        secs REAL NOT NULL,
        ops_sec REAL NOT NULL,
        summary TEXT NOT NULL,
        UNIQUE (run_id, seq)
     );
     CREATE TABLE intervals (
        step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        t REAL NOT NULL,
        secs REAL NOT NULL,
        ops INTEGER NOT NULL,
        ops_sec REAL NOT NULL,
        p50_us REAL, p99_us REAL, pmax_us REAL,
        cpu_us REAL,
        rd INTEGER, rkb REAL, wr INTEGER, wkb REAL,
        stall_us INTEGER,
        rss_gb REAL,
        PRIMARY KEY (step_id, idx)
     );",
    // 2: repeats grouped; hardware ceilings measured by probes, per host.
    "ALTER TABLE runs ADD COLUMN group_id INTEGER;
     ALTER TABLE runs ADD COLUMN repeat_index INTEGER;
     CREATE INDEX runs_group ON runs(group_id);
     CREATE TABLE ceilings (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        host TEXT NOT NULL,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL,
        measured_at TEXT NOT NULL
     );
     CREATE INDEX ceilings_host_name ON ceilings(host, name);",
    // 3: suites (a matrix of runs, resumable); each run keeps the plan that made it.
    "CREATE TABLE suites (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        file TEXT,
        definition_hash TEXT NOT NULL,
        plan TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT
     );
     CREATE INDEX suites_definition ON suites(definition_hash);
     ALTER TABLE runs ADD COLUMN suite_id INTEGER REFERENCES suites(id);
     ALTER TABLE runs ADD COLUMN plan TEXT;
     ALTER TABLE runs ADD COLUMN plan_hash TEXT;
     CREATE INDEX runs_suite ON runs(suite_id);",
    // 4: CPU profiles of steps (plumb sql --profile), folded stacks weighted by ns.
    "CREATE TABLE profiles (
        step_id INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
        folded TEXT NOT NULL
     );",
    // 5: the process that runs a run (host, boot, pid, start time), so a run left
    // `running` by a killed process can be told from one still running.
    "ALTER TABLE runs ADD COLUMN owner TEXT;",
];

/// Brings the schema up to date, one transaction per migration.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let sq = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let known = MIGRATIONS.len() as i64;
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(sq)?;
    if found > known {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        // IMMEDIATE takes the write lock before reading the version again: two plumbs
        // opening a new store at once must not both apply a migration.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sq)?;
        let now: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sq)?;
        if now > i as i64 {
            continue;
        }
        tx.execute_batch(sql).map_err(sq)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)
            .map_err(sq)?;
        tx.commit().map_err(sq)?;
    }
    Ok(())
}
