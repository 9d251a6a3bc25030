//! Versioned schema migrations, tracked in SQLite's `user_version` or PostgreSQL's
//! `plumb_schema` table. Each entry moves the schema from version i to i + 1; they only
//! ever append, and are written once, in SQLite's words ([`pg_ddl`] translates).

use crate::db::{pg_ddl, Db, DbError};
use crate::StoreError;

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
    // 6: a fleet: a work queue of planned runs claimed by workers on many hosts; a
    // barrier where the clients of one multi-client step meet; each client's HDR
    // histograms (V2 compressed, base64) per interval and per step, merged exactly.
    "CREATE TABLE queue_items (
        id INTEGER PRIMARY KEY,
        queue TEXT NOT NULL,
        suite_id INTEGER REFERENCES suites(id),
        seq INTEGER NOT NULL,
        item TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        worker TEXT,
        heartbeat REAL,
        run_id INTEGER,
        error TEXT,
        enqueued_at TEXT NOT NULL,
        finished_at TEXT
     );
     CREATE INDEX queue_items_claim ON queue_items(queue, status, id);
     CREATE TABLE barriers (
        name TEXT PRIMARY KEY,
        parties INTEGER NOT NULL,
        arrived INTEGER NOT NULL,
        created REAL NOT NULL
     );
     CREATE TABLE histograms (
        step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        hdr TEXT NOT NULL,
        PRIMARY KEY (step_id, idx)
     );
     ALTER TABLE runs ADD COLUMN clients TEXT;",
    // 7: each interval's device as `iostat -x` shows it (r/s, r_await, %util …), one
    // JSON object (plumb_core::DeviceIo) or NULL.
    "ALTER TABLE intervals ADD COLUMN device TEXT;",
    // 8: the host's noise in each interval: steal and other processes' CPU, percent
    // of the machine's CPU time (plumb_core::Interval::steal_pct, outside_cpu_pct).
    "ALTER TABLE intervals ADD COLUMN steal_pct REAL;
     ALTER TABLE intervals ADD COLUMN outside_cpu_pct REAL;",
    // 9: the ops per second an open-loop interval was offered (a rate profile's mean
    // over it; plumb_core::Interval::target_ops_sec).
    "ALTER TABLE intervals ADD COLUMN target_ops_sec REAL;",
    // 10: the threads an interval ran with under a threads profile (its mean over the
    // interval; plumb_core::Interval::threads).
    "ALTER TABLE intervals ADD COLUMN threads REAL;",
    // 11: the changes plumb found and their triage (crate::triage), with a log of every
    // state set; indexes for the served pages (runs by engine, steps by name).
    "CREATE TABLE changes (
        id INTEGER PRIMARY KEY,
        plan TEXT NOT NULL,
        label TEXT NOT NULL,
        step TEXT NOT NULL,
        metric TEXT NOT NULL,
        direction TEXT NOT NULL,
        at_run INTEGER NOT NULL,
        before_run INTEGER,
        last_run INTEGER NOT NULL,
        ratio REAL NOT NULL,
        cause TEXT,
        host TEXT,
        on_reference INTEGER NOT NULL,
        at_time TEXT NOT NULL,
        seen INTEGER NOT NULL,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        state TEXT NOT NULL,
        note TEXT,
        set_by TEXT,
        set_at TEXT
     );
     CREATE INDEX changes_key ON changes(plan, step, metric, direction);
     CREATE INDEX changes_state ON changes(state, id);
     CREATE TABLE change_log (
        id INTEGER PRIMARY KEY,
        change_id INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
        state TEXT NOT NULL,
        note TEXT,
        set_by TEXT NOT NULL,
        set_at TEXT NOT NULL
     );
     CREATE INDEX change_log_change ON change_log(change_id);
     CREATE INDEX runs_engine ON runs(engine, id);
     CREATE INDEX steps_name ON steps(name);",
    // 12: each run's plan identity (crate::plan_key), so the runs of one plan are found
    // by an index; runs stored before it are given theirs when the store is opened.
    "ALTER TABLE runs ADD COLUMN plan_key TEXT;
     CREATE INDEX runs_plan_key ON runs(plan_key, id);",
    // 13: bisects (crate::bisects): a search from a good to a bad commit, its whole
    // state (range, builds, each midpoint's verdict and runs) one JSON document saved
    // after every step, so `plumb bisect --resume ID` continues where it stopped.
    "CREATE TABLE bisects (
        id INTEGER PRIMARY KEY,
        repo TEXT NOT NULL,
        good TEXT NOT NULL,
        bad TEXT NOT NULL,
        status TEXT NOT NULL,
        state TEXT NOT NULL,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
     );",
    // 14: the change a bisect searches for (`plumb bisect --change ID`), so the
    // Changes page links a change point to its bisects.
    "ALTER TABLE bisects ADD COLUMN change_id INTEGER;
     CREATE INDEX bisects_change ON bisects(change_id);",
];

/// The advisory lock key two plumbs migrating one PostgreSQL store at once take
/// ("plumb" in ASCII), so one applies each migration and the other waits.
const PG_LOCK: i64 = 0x706c756d62;

/// The schema version of the store: SQLite's `user_version`, or the row of
/// `plumb_schema` in PostgreSQL (0 before the first migration).
pub(crate) fn version(db: &mut Db) -> Result<i64, DbError> {
    if db.is_postgres() {
        db.batch("CREATE TABLE IF NOT EXISTS plumb_schema (version BIGINT NOT NULL)")?;
        Ok(
            match db.one("SELECT max(version) FROM plumb_schema", &[])? {
                Some(r) => r.opt_int(0)?.unwrap_or(0),
                None => 0,
            },
        )
    } else {
        db.one("PRAGMA user_version", &[])?
            .map_or(Ok(0), |r| r.int(0))
    }
}

fn set_version(db: &mut Db, v: i64) -> Result<(), DbError> {
    if db.is_postgres() {
        db.exec("DELETE FROM plumb_schema", &[])?;
        db.exec(
            "INSERT INTO plumb_schema (version) VALUES (?1)",
            &[v.into()],
        )?;
        Ok(())
    } else {
        db.batch(&format!("PRAGMA user_version = {v}"))
    }
}

/// Brings the schema up to date, one transaction per migration. Two plumbs opening a
/// new store at once apply each migration once: SQLite's IMMEDIATE transaction, and
/// PostgreSQL's advisory lock, are taken before the version is read again.
pub(crate) fn migrate(db: &mut Db, store: &str) -> Result<(), StoreError> {
    let e = |source| StoreError::Db {
        store: store.to_string(),
        source,
    };
    let pg = db.is_postgres();
    if pg {
        db.exec("SELECT pg_advisory_lock(?1)", &[PG_LOCK.into()])
            .map_err(e)?;
    }
    let out = apply(db, store);
    if pg {
        db.exec("SELECT pg_advisory_unlock(?1)", &[PG_LOCK.into()])
            .map_err(e)?;
    }
    out
}

fn apply(db: &mut Db, store: &str) -> Result<(), StoreError> {
    let e = |source| StoreError::Db {
        store: store.to_string(),
        source,
    };
    let known = MIGRATIONS.len() as i64;
    let found = version(db).map_err(e)?;
    if found > known {
        return Err(StoreError::TooNew {
            store: store.to_string(),
            found,
            known,
        });
    }
    let pg = db.is_postgres();
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        db.write(|db| {
            if version(db)? > i as i64 {
                return Ok(());
            }
            if pg {
                db.batch(&pg_ddl(sql))?;
            } else {
                db.batch(sql)?;
            }
            set_version(db, i as i64 + 1)
        })
        .map_err(e)?;
    }
    Ok(())
}
