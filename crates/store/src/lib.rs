//! The run store. Every run is written as it goes: the run row when it starts, each
//! step (summary and 1-second intervals, in one transaction) when it ends, the run's
//! end status last. A run killed midway keeps every finished step.
//!
//! A store is a SQLite file (one person, one host) or a PostgreSQL database given as
//! `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (a team and a fleet writing at once);
//! both hold the same schema, brought up by the same migrations.

pub mod bisects;
pub mod bundle;
pub mod clients;
mod db;
mod migrations;
mod model;
pub mod owner;
pub mod pages;
pub mod plan_key;
pub mod queue;
pub mod triage;

pub use db::DbError;
pub use model::{
    Ceiling, CeilingRecord, HostSnapshot, Kind, NewRun, NewSuite, RunRecord, StepRecord, StoredRun,
    SuiteRecord,
};
pub use queue::{Claim, QueueItem, QueueStatus};
pub use triage::{ChangeFilter, ChangeRecord, NewChange, TriageState};

use db::{Db, Row, Val};
use plumb_core::{Interval, RunStatus, StepSummary};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A store that could not be opened, read or written; every variant names the store
/// (its file, or its URL with the password hidden).
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database failed.
    #[error("store {store}: {source}")]
    Db {
        /// The store, as shown.
        store: String,
        /// The database's error.
        source: DbError,
    },
    /// The store's schema is newer than this plumb knows.
    #[error("store {store}: schema version {found} is newer than this plumb understands ({known}); use a newer plumb or another --store")]
    TooNew {
        /// The store, as shown.
        store: String,
        /// Version in the store.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
    /// `--store` (or PLUMB_STORE) is a URL of a database plumb cannot keep runs in.
    #[error("store {shown}: not a store plumb can use; give a file path (SQLite) or postgres://USER[:PASSWORD]@HOST[:PORT]/DB")]
    Url {
        /// The URL with its password replaced.
        shown: String,
    },
    /// The PostgreSQL store could not be reached.
    #[error("store {store}: cannot connect: {source}; is the server up, the database created (createdb) and the user allowed in?")]
    Connect {
        /// The store, as shown.
        store: String,
        /// The connection error.
        source: DbError,
    },
    /// A store the command reads is not there (a file path that does not exist).
    #[error("store {}: no such file; run `plumb kv` first, or pass --store PATH", .path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// The parent directory could not be created.
    #[error("store {store}: cannot create its directory: {source}")]
    Dir {
        /// The store, as shown.
        store: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A stored JSON column did not parse.
    #[error("store {store}: run {run}: stored {what} is unreadable: {source}")]
    Json {
        /// The store, as shown.
        store: String,
        /// Which run.
        run: i64,
        /// Which column.
        what: &'static str,
        /// The parse error.
        source: serde_json::Error,
    },
    /// No suite has that id.
    #[error("store {store}: no suite {suite}; `plumb runs` shows each run's suite")]
    NoSuite {
        /// The store, as shown.
        store: String,
        /// The id asked for.
        suite: i64,
    },
    /// The clients of a multi-client step could not meet.
    #[error("store {store}: barrier {name}: {why}")]
    Barrier {
        /// The store, as shown.
        store: String,
        /// The barrier (client group and step).
        name: String,
        /// What went wrong.
        why: String,
    },
    /// No change has that id.
    #[error("store {store}: no change {change}; `plumb changes` lists the changes it holds")]
    NoChange {
        /// The store, as shown.
        store: String,
        /// The id asked for.
        change: i64,
    },
    /// No bisect has that id.
    #[error("store {store}: no bisect {bisect}; `plumb bisect --list` shows the bisects it holds")]
    NoBisect {
        /// The store, as shown.
        store: String,
        /// The id asked for.
        bisect: i64,
    },
    /// No run has that id.
    #[error("store {store}: no run {run}; `plumb runs` lists the runs it holds")]
    NoRun {
        /// The store, as shown.
        store: String,
        /// The id asked for.
        run: i64,
    },
}

/// An open store.
pub struct Store {
    db: RefCell<Db>,
    shown: String,
    /// The path or URL it was opened with (a URL may hold a password: never shown).
    location: std::path::PathBuf,
}

/// Puts the file in WAL mode. Switching needs the file to itself, and SQLite answers
/// SQLITE_BUSY at once (without waiting out the busy timeout) while another plumb opens
/// or migrates a new store: retry for as long as the busy timeout allows.
fn wal_mode(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < until =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Where a store lives, as `--store` names it.
enum Location {
    File,
    Postgres,
}

/// Reads `--store`: a PostgreSQL URL, another URL (refused), or a file path. The
/// second value is how the store is shown: the URL with its password replaced.
fn locate(path: &Path) -> Result<(Location, String), StoreError> {
    let text = path.to_string_lossy();
    let Some(at) = text.find("://") else {
        return Ok((Location::File, path.display().to_string()));
    };
    let (scheme, rest) = (&text[..at], &text[at + 3..]);
    let authority = rest.split('/').next().unwrap_or("");
    let shown = match authority.rfind('@') {
        Some(i) if authority[..i].contains(':') => {
            let user = &authority[..authority.find(':').unwrap_or(0)];
            format!("{scheme}://{user}:***{}", &rest[i..])
        }
        _ => text.to_string(),
    };
    // A URL inside a path (dir/postgres://…) is a path by mistake, never a file.
    if matches!(scheme, "postgres" | "postgresql") {
        return Ok((Location::Postgres, shown));
    }
    Err(StoreError::Url { shown })
}

impl Store {
    /// Where runs go unless `--store` or `PLUMB_STORE` says otherwise:
    /// `$XDG_DATA_HOME/plumb/plumb.sqlite`, else `~/.local/share/plumb/plumb.sqlite`.
    pub fn default_path() -> std::path::PathBuf {
        if let Some(p) = std::env::var_os("PLUMB_STORE") {
            return std::path::PathBuf::from(p);
        }
        let base = std::env::var_os("XDG_DATA_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share"))
            })
            .unwrap_or_else(|| std::path::PathBuf::from("."));
        base.join("plumb").join("plumb.sqlite")
    }

    /// Checks `--store` before anything runs: a file path or a PostgreSQL URL pass, any
    /// other URL is refused with its password hidden (taken as a relative path it would
    /// create directories named after it, password included).
    pub fn check_path(path: &Path) -> Result<(), StoreError> {
        locate(path).map(|_| ())
    }

    /// Opens a store that must already hold runs (for the commands that read them): a
    /// missing file is an error rather than a new empty store.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        Self::check_path(path)?;
        if !path.to_string_lossy().contains("://") && !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Self::open(path)
    }

    /// Opens (creating if needed) and migrates the store at `path`: a SQLite file, or
    /// a PostgreSQL database when `path` is a `postgres://` URL.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let (loc, shown) = locate(path)?;
        let db = match loc {
            Location::File => Self::open_file(path, &shown)?,
            Location::Postgres => Self::open_postgres(&path.to_string_lossy(), &shown)?,
        };
        let store = Store {
            db: RefCell::new(db),
            shown,
            location: path.to_path_buf(),
        };
        migrations::migrate(&mut store.db.borrow_mut(), &store.shown)?;
        store.key_plans()?;
        store.interrupt_orphans()?;
        Ok(store)
    }

    fn open_file(path: &Path, shown: &str) -> Result<Db, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                store: shown.to_string(),
                source,
            })?;
        }
        let sq = |e: rusqlite::Error| StoreError::Db {
            store: shown.to_string(),
            source: e.into(),
        };
        let conn = rusqlite::Connection::open(path).map_err(sq)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(sq)?;
        wal_mode(&conn).map_err(sq)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sq)?;
        Ok(Db::Sqlite(conn))
    }

    fn open_postgres(url: &str, shown: &str) -> Result<Db, StoreError> {
        let bad = |e: postgres::Error| StoreError::Connect {
            store: shown.to_string(),
            source: e.into(),
        };
        let mut config: postgres::Config = url.parse().map_err(bad)?;
        // As libpq: a password not in the URL may come from PGPASSWORD, which keeps it
        // out of the process list and shell history.
        if config.get_password().is_none() {
            if let Some(pw) = std::env::var_os("PGPASSWORD") {
                config.password(pw.as_encoded_bytes());
            }
        }
        if config.get_application_name().is_none() {
            config.application_name("plumb");
        }
        config.connect_timeout(std::time::Duration::from_secs(10));
        let client = config.connect(postgres::NoTls).map_err(bad)?;
        Ok(Db::Postgres(Box::new(client)))
    }

    /// The store as shown in messages: its file, or its URL with the password hidden.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The path or URL the store was opened with, for handing the same store to another
    /// plumb process (a plumb of another engine release). It may hold a password:
    /// pass it through the environment, never print it (`shown` is for messages).
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// Whether the store is a PostgreSQL database (shared by many hosts).
    pub fn is_shared(&self) -> bool {
        self.db.borrow().is_postgres()
    }

    /// The schema version of the store.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        migrations::version(&mut self.db.borrow_mut()).map_err(|e| self.err(e))
    }

    fn err(&self, source: DbError) -> StoreError {
        StoreError::Db {
            store: self.shown.clone(),
            source,
        }
    }

    /// Runs a statement; errors name the store.
    fn exec(&self, sql: &str, args: &[Val]) -> Result<u64, StoreError> {
        self.db
            .borrow_mut()
            .exec(sql, args)
            .map_err(|e| self.err(e))
    }

    /// Runs a query; errors name the store.
    fn query(&self, sql: &str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        self.db
            .borrow_mut()
            .query(sql, args)
            .map_err(|e| self.err(e))
    }

    /// Runs `f` in one write transaction.
    fn write<T>(&self, f: impl FnOnce(&mut Db) -> Result<T, DbError>) -> Result<T, StoreError> {
        self.db.borrow_mut().write(f).map_err(|e| self.err(e))
    }

    /// Rows mapped one by one; a column that is not what was stored is an error.
    fn rows<T>(
        &self,
        sql: &str,
        args: &[Val],
        f: impl Fn(&Row) -> Result<T, DbError>,
    ) -> Result<Vec<T>, StoreError> {
        self.query(sql, args)?
            .iter()
            .map(|r| f(r).map_err(|e| self.err(e)))
            .collect()
    }

    fn json_err(
        &self,
        run: i64,
        what: &'static str,
    ) -> impl Fn(serde_json::Error) -> StoreError + '_ {
        move |source| StoreError::Json {
            store: self.shown.clone(),
            run,
            what,
            source,
        }
    }

    /// Marks runs left `running` by a process of this host that is gone (killed with
    /// SIGKILL, or the machine rebooted) as interrupted, ending when their last stored
    /// step ended. Runs of live processes, and of other hosts, are left alone.
    pub fn interrupt_orphans(&self) -> Result<Vec<i64>, StoreError> {
        let Some(here) = owner::Owner::current() else {
            return Ok(Vec::new());
        };
        let gone: Vec<i64> = self
            .rows(
                "SELECT id, owner FROM runs WHERE status = 'running' AND owner IS NOT NULL",
                &[],
                |r| Ok((r.int(0)?, r.text(1)?)),
            )?
            .into_iter()
            .filter(|(_, o)| owner::Owner::decode(o).is_some_and(|o| o.gone(&here)))
            .map(|(id, _)| id)
            .collect();
        for id in &gone {
            self.exec(
                "UPDATE runs SET status = 'interrupted', ended_at = COALESCE(
                   (SELECT MAX(ended_at) FROM steps WHERE run_id = ?1), started_at)
                 WHERE id = ?1 AND status = 'running'",
                &[Val::Int(*id)],
            )?;
        }
        Ok(gone)
    }

    /// Records a run as started; returns its id.
    pub fn begin_run(&self, r: &NewRun) -> Result<i64, StoreError> {
        let options = serde_json::to_string(&r.options).expect("options serialise");
        let args: Vec<Val> = vec![
            r.tag.as_ref().into(),
            (&r.command).into(),
            (&r.workload).into(),
            (&r.engine).into(),
            (&r.engine_version).into(),
            (&r.plumb_version).into(),
            r.git_hash.as_ref().into(),
            options.into(),
            r.seed.to_string().into(),
            (&r.started_at).into(),
            r.data_dir.as_ref().into(),
            r.device.as_ref().into(),
            r.host
                .as_ref()
                .map(|h| serde_json::to_string(h).expect("host snapshot serialises"))
                .into(),
            r.group_id.into(),
            r.repeat_index.into(),
            r.suite_id.into(),
            r.plan.as_ref().map(|p| p.to_string()).into(),
            r.plan_hash.as_ref().into(),
            owner::Owner::current().map(|o| o.encode()).into(),
            r.plan.as_ref().and_then(plan_key::plan_identity).into(),
        ];
        self.db
            .borrow_mut()
            .insert(
                "INSERT INTO runs (status, tag, command, workload, engine, engine_version,
                   plumb_version, git_hash, options, seed, started_at, data_dir, device, host,
                   group_id, repeat_index, suite_id, plan, plan_hash, owner, plan_key)
                 VALUES ('running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                   ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
                &args,
            )
            .map_err(|e| self.err(e))
    }

    /// Stores one finished step with its intervals, atomically.
    pub fn add_step(
        &mut self,
        run_id: i64,
        step: &StepRecord,
        intervals: &[Interval],
    ) -> Result<i64, StoreError> {
        let summary = serde_json::to_string(&step.summary).expect("summary serialises");
        self.write(|db| {
            let step_id = db.insert(
                "INSERT INTO steps (run_id, seq, name, kind, status, error, started_at, ended_at,
                   config, ops, secs, ops_sec, summary)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                &[
                    run_id.into(),
                    step.seq.into(),
                    (&step.name).into(),
                    step.kind.name().into(),
                    step.status.as_str().into(),
                    step.error.as_ref().into(),
                    (&step.started_at).into(),
                    (&step.ended_at).into(),
                    step.config.to_string().into(),
                    (step.summary.ops as i64).into(),
                    step.summary.secs.into(),
                    step.summary.ops_sec.into(),
                    summary.into(),
                ],
            )?;
            for (i, iv) in intervals.iter().enumerate() {
                db.exec(
                    "INSERT INTO intervals (step_id, idx, t, secs, ops, ops_sec, p50_us, p99_us,
                       pmax_us, cpu_us, rd, rkb, wr, wkb, stall_us, rss_gb, device, steal_pct,
                       outside_cpu_pct, target_ops_sec, threads)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                       ?17, ?18, ?19, ?20, ?21)",
                    &[
                        step_id.into(),
                        (i as i64).into(),
                        iv.t.into(),
                        iv.secs.into(),
                        (iv.ops as i64).into(),
                        iv.ops_sec.into(),
                        iv.p50_us.into(),
                        iv.p99_us.into(),
                        iv.pmax_us.into(),
                        iv.cpu_us.into(),
                        iv.rd.map(|x| x as i64).into(),
                        iv.rkb.into(),
                        iv.wr.map(|x| x as i64).into(),
                        iv.wkb.into(),
                        iv.stall_us.map(|x| x as i64).into(),
                        iv.rss_gb.into(),
                        iv.device
                            .map(|d| serde_json::to_string(&d).expect("device serialises"))
                            .into(),
                        iv.steal_pct.into(),
                        iv.outside_cpu_pct.into(),
                        iv.target_ops_sec.into(),
                        iv.threads.into(),
                    ],
                )?;
            }
            Ok(step_id)
        })
    }

    /// Keeps a step's CPU profile (folded stacks, one `frames ns` line each).
    pub fn add_profile(&self, step_id: i64, folded: &str) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO profiles (step_id, folded) VALUES (?1, ?2)
             ON CONFLICT (step_id) DO UPDATE SET folded = excluded.folded",
            &[step_id.into(), folded.into()],
        )?;
        Ok(())
    }

    /// The CPU profiles of a run's steps, by step name, in step order.
    pub fn profiles(&self, run_id: i64) -> Result<Vec<(String, String)>, StoreError> {
        self.rows(
            "SELECT s.name, p.folded FROM profiles p JOIN steps s ON s.id = p.step_id
             WHERE s.run_id = ?1 ORDER BY s.seq",
            &[run_id.into()],
            |r| Ok((r.text(0)?, r.text(1)?)),
        )
    }

    /// Marks a run ended.
    pub fn finish_run(
        &self,
        run_id: i64,
        status: RunStatus,
        ended_at: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "UPDATE runs SET status = ?1, ended_at = ?2 WHERE id = ?3",
            &[status.as_str().into(), ended_at.into(), run_id.into()],
        )?;
        Ok(())
    }

    /// Adds options to a run after it started (figures derived from its own steps, such
    /// as a probe's measured/rated ratios), so `compare` shows them beside other hosts'
    /// like any option; a key already there is replaced.
    pub fn add_options(
        &self,
        run_id: i64,
        extra: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), StoreError> {
        self.write(|db| {
            let mut rows = db.query("SELECT options FROM runs WHERE id = ?1", &[run_id.into()])?;
            let text = match rows.pop() {
                Some(r) => r.text(0)?,
                None => return Ok(()),
            };
            let mut opts: std::collections::BTreeMap<String, String> =
                serde_json::from_str(&text).unwrap_or_default();
            opts.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            let json = serde_json::to_string(&opts).expect("options serialise");
            db.exec(
                "UPDATE runs SET options = ?1 WHERE id = ?2",
                &[json.into(), run_id.into()],
            )?;
            Ok(())
        })
    }

    /// Puts a run into a group of repeats (the group id is its first run's id).
    pub fn set_group(
        &self,
        run_id: i64,
        group_id: i64,
        repeat_index: i64,
    ) -> Result<(), StoreError> {
        self.exec(
            "UPDATE runs SET group_id = ?1, repeat_index = ?2 WHERE id = ?3",
            &[group_id.into(), repeat_index.into(), run_id.into()],
        )?;
        Ok(())
    }

    /// Ids of the runs in a group, in repeat order.
    pub fn group(&self, group_id: i64) -> Result<Vec<i64>, StoreError> {
        self.rows(
            "SELECT id FROM runs WHERE group_id = ?1 ORDER BY repeat_index, id",
            &[group_id.into()],
            |r| r.int(0),
        )
    }

    /// Makes the repeats of `run_id`'s variant in its suite one group again (the group
    /// of the earliest run). Workers on several hosts that run a variant's first repeats
    /// at once each start a group of their own, and a fleet of identical hosts running
    /// one variant would otherwise end as groups of one run, with no noise to show. Each
    /// worker joins after storing its run, one suite at a time, so the last join sees
    /// every group. Returns the variant's group, `None` when the run has none.
    pub fn join_repeats(&self, suite_id: i64, run_id: i64) -> Result<Option<i64>, StoreError> {
        self.write(|db| {
            db.lock_suite(suite_id)?;
            let rows = db.query(
                "SELECT id, group_id, options FROM runs WHERE suite_id = ?1 AND group_id IS NOT NULL",
                &[suite_id.into()],
            )?;
            let mut runs = Vec::with_capacity(rows.len());
            for r in &rows {
                let id = r.int(0)?;
                let options: BTreeMap<String, String> = serde_json::from_str(&r.text(2)?)
                    .map_err(|e| DbError::Column(format!("run {id}: options: {e}")))?;
                runs.push((id, r.int(1)?, options.get("variant").cloned()));
            }
            let Some((_, _, variant)) = runs.iter().find(|(id, _, _)| *id == run_id) else {
                return Ok(None);
            };
            let groups: BTreeSet<i64> = runs
                .iter()
                .filter(|(_, _, v)| v == variant)
                .map(|(_, g, _)| *g)
                .collect();
            let Some(&first) = groups.first() else {
                return Ok(None);
            };
            for g in groups.iter().skip(1) {
                db.exec(
                    "UPDATE runs SET group_id = ?1 WHERE suite_id = ?2 AND group_id = ?3",
                    &[first.into(), suite_id.into(), (*g).into()],
                )?;
            }
            Ok(Some(first))
        })
    }

    /// Records the ceilings a probe run measured on `host`.
    pub fn add_ceilings(
        &mut self,
        run_id: i64,
        host: &str,
        measured_at: &str,
        ceilings: &[Ceiling],
    ) -> Result<(), StoreError> {
        self.write(|db| {
            for c in ceilings {
                db.exec(
                    "INSERT INTO ceilings (run_id, host, name, value, unit, measured_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    &[
                        run_id.into(),
                        host.into(),
                        (&c.name).into(),
                        c.value.into(),
                        (&c.unit).into(),
                        measured_at.into(),
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// The newest figure of every ceiling measured on `host`, by name.
    pub fn ceilings(&self, host: &str) -> Result<Vec<CeilingRecord>, StoreError> {
        self.rows(
            "SELECT name, value, unit, host, run_id, measured_at FROM ceilings c
             WHERE host = ?1 AND id = (SELECT max(id) FROM ceilings d
                                       WHERE d.host = c.host AND d.name = c.name)
             ORDER BY name",
            &[host.into()],
            |r| {
                Ok(CeilingRecord {
                    ceiling: Ceiling {
                        name: r.text(0)?,
                        value: r.real(1)?,
                        unit: r.text(2)?,
                    },
                    host: r.text(3)?,
                    run_id: r.int(4)?,
                    measured_at: r.text(5)?,
                })
            },
        )
    }

    /// Gives every run stored before plan keys were kept (or by an older plumb) its
    /// plan's identity, in one transaction; a store with none missing costs one query.
    fn key_plans(&self) -> Result<(), StoreError> {
        let missing = self.rows(
            "SELECT id, plan FROM runs WHERE plan_key IS NULL AND plan IS NOT NULL",
            &[],
            |r| Ok((r.int(0)?, r.text(1)?)),
        )?;
        if missing.is_empty() {
            return Ok(());
        }
        let keys: Vec<(i64, Option<String>)> = missing
            .into_iter()
            .map(|(id, plan)| {
                let key = serde_json::from_str(&plan)
                    .ok()
                    .and_then(|p| plan_key::plan_identity(&p));
                (id, key)
            })
            .collect();
        self.write(|db| {
            for (id, key) in &keys {
                // A plan that does not parse gets an empty key, so it is not read again.
                db.exec(
                    "UPDATE runs SET plan_key = ?1 WHERE id = ?2",
                    &[key.clone().unwrap_or_default().into(), (*id).into()],
                )?;
            }
            Ok(())
        })
    }

    /// The runs of the plans with these identities ([`plan_key::plan_identity`]),
    /// oldest first: a plan's history without reading every run.
    pub fn runs_of_plans(&self, keys: &[String]) -> Result<Vec<RunRecord>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (1..=keys.len()).map(|i| format!("?{i}")).collect();
        let args: Vec<Val> = keys.iter().map(Val::from).collect();
        self.rows(
            &format!(
                "{} WHERE r.plan_key IN ({}) ORDER BY r.id",
                model::RUN_SELECT,
                marks.join(", ")
            ),
            &args,
            model::run_from_row,
        )?
        .into_iter()
        .map(|r| r.finish(&self.shown))
        .collect()
    }

    /// The newest runs first, at most `limit`.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.rows(
            &format!("{} ORDER BY r.id DESC LIMIT ?1", model::RUN_SELECT),
            &[(limit as i64).into()],
            model::run_from_row,
        )?
        .into_iter()
        .map(|r| r.finish(&self.shown))
        .collect()
    }

    /// One run with its steps and their intervals.
    pub fn run(&self, id: i64) -> Result<StoredRun, StoreError> {
        let raw = self
            .rows(
                &format!("{} WHERE r.id = ?1", model::RUN_SELECT),
                &[id.into()],
                model::run_from_row,
            )?
            .pop()
            .ok_or_else(|| StoreError::NoRun {
                store: self.shown.clone(),
                run: id,
            })?;
        let run = raw.finish(&self.shown)?;
        let mut out = Vec::new();
        for (sid, step) in self.step_records(id)? {
            out.push((step, self.intervals(sid)?));
        }
        Ok(StoredRun { run, steps: out })
    }

    /// A run's steps as stored, each with its row id (for its intervals), in order.
    pub(crate) fn step_records(&self, id: i64) -> Result<Vec<(i64, StepRecord)>, StoreError> {
        Ok(self
            .steps_of(&[id])?
            .into_iter()
            .map(|(_, sid, step)| (sid, step))
            .collect())
    }

    /// The steps of `ids` as stored: (run id, step row id, step), by run then order, in
    /// one query per 500 runs (a page of summaries costs two queries, not one per run).
    pub(crate) fn steps_of(&self, ids: &[i64]) -> Result<Vec<(i64, i64, StepRecord)>, StoreError> {
        let mut out = Vec::new();
        for chunk in ids.chunks(500) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
            let args: Vec<Val> = chunk.iter().map(|i| (*i).into()).collect();
            let rows = self.rows(
                &format!(
                    "SELECT run_id, id, seq, name, kind, status, error, started_at, ended_at, \
                     config, summary FROM steps WHERE run_id IN ({}) ORDER BY run_id, seq",
                    marks.join(", ")
                ),
                &args,
                |r| {
                    Ok((
                        r.int(0)?,
                        r.int(1)?,
                        r.int(2)?,
                        r.text(3)?,
                        r.parsed::<plumb_workloads::Kind>(4)?,
                        r.parsed::<plumb_core::StepStatus>(5)?,
                        r.opt_text(6)?,
                        r.text(7)?,
                        r.text(8)?,
                        r.text(9)?,
                        r.text(10)?,
                    ))
                },
            )?;
            for (run, sid, seq, name, kind, status, error, started_at, ended_at, config, summary) in
                rows
            {
                let summary: StepSummary =
                    serde_json::from_str(&summary).map_err(self.json_err(run, "summary"))?;
                out.push((
                    run,
                    sid,
                    StepRecord {
                        seq,
                        name,
                        kind,
                        status,
                        error,
                        started_at,
                        ended_at,
                        config: serde_json::from_str(&config)
                            .map_err(self.json_err(run, "config"))?,
                        summary,
                    },
                ));
            }
        }
        Ok(out)
    }

    /// Records a suite as started; returns its id.
    pub fn begin_suite(&self, s: &NewSuite) -> Result<i64, StoreError> {
        self.db
            .borrow_mut()
            .insert(
                "INSERT INTO suites (name, file, definition_hash, plan, status, started_at)
                 VALUES (?1, ?2, ?3, ?4, 'running', ?5)",
                &[
                    (&s.name).into(),
                    s.file.as_ref().into(),
                    (&s.definition_hash).into(),
                    s.plan.to_string().into(),
                    (&s.started_at).into(),
                ],
            )
            .map_err(|e| self.err(e))
    }

    /// Marks a suite ended (or interrupted, to be resumed).
    pub fn finish_suite(
        &self,
        id: i64,
        status: RunStatus,
        ended_at: Option<&str>,
    ) -> Result<(), StoreError> {
        self.exec(
            "UPDATE suites SET status = ?1, ended_at = ?2 WHERE id = ?3",
            &[status.as_str().into(), ended_at.into(), id.into()],
        )?;
        Ok(())
    }

    fn suites_where(&self, cond: &str, arg: Val) -> Result<Vec<SuiteRecord>, StoreError> {
        let rows = self.rows(
            &format!(
                "SELECT id, name, file, definition_hash, plan, status, started_at, ended_at
                 FROM suites WHERE {cond} ORDER BY id DESC"
            ),
            &[arg],
            |r| {
                Ok((
                    SuiteRecord {
                        id: r.int(0)?,
                        name: r.text(1)?,
                        file: r.opt_text(2)?,
                        definition_hash: r.text(3)?,
                        plan: serde_json::Value::Null,
                        status: r.parsed(5)?,
                        started_at: r.text(6)?,
                        ended_at: r.opt_text(7)?,
                    },
                    r.text(4)?,
                ))
            },
        )?;
        rows.into_iter()
            .map(|(mut rec, plan)| {
                rec.plan =
                    serde_json::from_str(&plan).map_err(self.json_err(rec.id, "suite plan"))?;
                Ok(rec)
            })
            .collect()
    }

    /// One suite.
    pub fn suite(&self, id: i64) -> Result<SuiteRecord, StoreError> {
        self.suites_where("id = ?1", id.into())?
            .pop()
            .ok_or_else(|| StoreError::NoSuite {
                store: self.shown.clone(),
                suite: id,
            })
    }

    /// The newest suite of this definition that did not finish, to resume.
    pub fn unfinished_suite(
        &self,
        definition_hash: &str,
    ) -> Result<Option<SuiteRecord>, StoreError> {
        Ok(self
            .suites_where("definition_hash = ?1", definition_hash.into())?
            .into_iter()
            .find(|s| s.status != RunStatus::Ok))
    }

    /// The runs of a suite, in id order.
    pub fn suite_runs(&self, suite_id: i64) -> Result<Vec<RunRecord>, StoreError> {
        self.runs_where("r.suite_id = ?1", suite_id.into())
    }

    /// The runs matching `cond` (on `runs r`, with one parameter), in id order.
    fn runs_where(&self, cond: &str, arg: Val) -> Result<Vec<RunRecord>, StoreError> {
        self.rows(
            &format!("{} WHERE {cond} ORDER BY r.id", model::RUN_SELECT),
            &[arg],
            model::run_from_row,
        )?
        .into_iter()
        .map(|r| r.finish(&self.shown))
        .collect()
    }

    /// Marks runs of a suite left `running` by a killed process as interrupted, so they
    /// are not taken for finished (or for running) by anyone reading the store.
    pub fn interrupt_stale_runs(&self, suite_id: i64, ended_at: &str) -> Result<usize, StoreError> {
        Ok(self.exec(
            "UPDATE runs SET status = 'interrupted', ended_at = ?1
             WHERE suite_id = ?2 AND status = 'running'",
            &[ended_at.into(), suite_id.into()],
        )? as usize)
    }

    fn intervals(&self, step_id: i64) -> Result<Vec<Interval>, StoreError> {
        let u = |v: Option<i64>| v.map(|x| x as u64);
        self.rows(
            "SELECT t, secs, ops, ops_sec, p50_us, p99_us, pmax_us, cpu_us, rd, rkb, wr, wkb,
               stall_us, rss_gb, device, steal_pct, outside_cpu_pct, target_ops_sec,
               threads
             FROM intervals WHERE step_id = ?1 ORDER BY idx",
            &[step_id.into()],
            |r| {
                Ok(Interval {
                    t: r.real(0)?,
                    secs: r.real(1)?,
                    ops: r.int(2)? as u64,
                    ops_sec: r.real(3)?,
                    p50_us: r.opt_real(4)?,
                    p99_us: r.opt_real(5)?,
                    pmax_us: r.opt_real(6)?,
                    cpu_us: r.opt_real(7)?,
                    rd: u(r.opt_int(8)?),
                    rkb: r.opt_real(9)?,
                    wr: u(r.opt_int(10)?),
                    wkb: r.opt_real(11)?,
                    stall_us: u(r.opt_int(12)?),
                    rss_gb: r.opt_real(13)?,
                    device: r
                        .opt_text(14)?
                        .map(|j| serde_json::from_str(&j))
                        .transpose()
                        .map_err(|e| {
                            DbError::Column(format!("an interval's device does not parse: {e}"))
                        })?,
                    steal_pct: r.opt_real(15)?,
                    outside_cpu_pct: r.opt_real(16)?,
                    target_ops_sec: r.opt_real(17)?,
                    threads: r.opt_real(18)?,
                })
            },
        )
    }
}

#[cfg(test)]
mod tests;
