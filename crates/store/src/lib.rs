//! The run store. Every run is written as it goes: the run row when it starts, each
//! step (summary and 1-second intervals, in one transaction) when it ends, the run's
//! end status last. A run killed midway keeps every finished step.

mod migrations;
mod model;
pub mod owner;

pub use model::{
    Ceiling, CeilingRecord, HostSnapshot, Kind, NewRun, NewSuite, RunRecord, StepRecord, StoredRun,
    SuiteRecord,
};

use plumb_core::{Interval, RunStatus, StepSummary};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A store that could not be opened, read or written; every variant names the file.
#[derive(Debug, Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("store {path}: {source}")]
    Sqlite {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The store's schema is newer than this plumb knows.
    #[error("store {path}: schema version {found} is newer than this plumb understands ({known}); use a newer plumb or another --store")]
    TooNew {
        /// The store file.
        path: PathBuf,
        /// Version in the file.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
    /// `--store` (or PLUMB_STORE) is a URL, not a file.
    #[error("store {shown}: a database URL, not a file; plumb's store is a SQLite file for now (a PostgreSQL store is issue 17): give a file path")]
    Url {
        /// The URL with its password replaced.
        shown: String,
    },
    /// The parent directory could not be created.
    #[error("store {path}: cannot create its directory: {source}")]
    Dir {
        /// The store file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A stored JSON column did not parse.
    #[error("store {path}: run {run}: stored {what} is unreadable: {source}")]
    Json {
        /// The store file.
        path: PathBuf,
        /// Which run.
        run: i64,
        /// Which column.
        what: &'static str,
        /// The parse error.
        source: serde_json::Error,
    },
    /// No suite has that id.
    #[error("store {path}: no suite {suite}; `plumb runs` shows each run's suite")]
    NoSuite {
        /// The store file.
        path: PathBuf,
        /// The id asked for.
        suite: i64,
    },
    /// No run has that id.
    #[error("store {path}: no run {run}; `plumb runs` lists the runs it holds")]
    NoRun {
        /// The store file.
        path: PathBuf,
        /// The id asked for.
        run: i64,
    },
}

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Puts the file in WAL mode. Switching needs the file to itself, and SQLite answers
/// SQLITE_BUSY at once (without waiting out the busy timeout) while another plumb opens
/// or migrates a new store: retry for as long as the busy timeout allows.
fn wal_mode(conn: &Connection) -> rusqlite::Result<()> {
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

impl Store {
    /// Where runs go unless `--store` or `PLUMB_STORE` says otherwise:
    /// `$XDG_DATA_HOME/plumb/plumb.sqlite`, else `~/.local/share/plumb/plumb.sqlite`.
    pub fn default_path() -> PathBuf {
        if let Some(p) = std::env::var_os("PLUMB_STORE") {
            return PathBuf::from(p);
        }
        let base = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from("."));
        base.join("plumb").join("plumb.sqlite")
    }

    /// Refuses a store path that is a URL (`postgres://user:pw@host/db`): taken as a
    /// relative path it would create directories named after it, password included.
    pub fn check_path(path: &Path) -> Result<(), StoreError> {
        let text = path.to_string_lossy();
        let Some(at) = text.find("://") else {
            return Ok(());
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
        Err(StoreError::Url { shown })
    }

    /// Opens (creating if needed) and migrates the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Self::check_path(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let sq = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(sq)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(sq)?;
        wal_mode(&conn).map_err(sq)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sq)?;
        migrations::migrate(&mut conn, path)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.interrupt_orphans()?;
        Ok(store)
    }

    /// Marks runs left `running` by a process of this host that is gone (killed with
    /// SIGKILL, or the machine rebooted) as interrupted, ending when their last stored
    /// step ended. Runs of live processes, and of other hosts, are left alone.
    pub fn interrupt_orphans(&self) -> Result<Vec<i64>, StoreError> {
        let Some(here) = owner::Owner::current() else {
            return Ok(Vec::new());
        };
        let mut q = self
            .conn
            .prepare("SELECT id, owner FROM runs WHERE status = 'running' AND owner IS NOT NULL")
            .map_err(|e| self.err(e))?;
        let gone: Vec<i64> = q
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?
            .filter_map(Result::ok)
            .filter(|(_, o)| owner::Owner::decode(o).is_some_and(|o| o.gone(&here)))
            .map(|(id, _)| id)
            .collect();
        for id in &gone {
            self.conn
                .execute(
                    "UPDATE runs SET status = 'interrupted', ended_at = COALESCE(
                       (SELECT MAX(ended_at) FROM steps WHERE run_id = ?1), started_at)
                     WHERE id = ?1 AND status = 'running'",
                    [id],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(gone)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version in the file.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Records a run as started; returns its id.
    pub fn begin_run(&self, r: &NewRun) -> Result<i64, StoreError> {
        let options = serde_json::to_string(&r.options).expect("options serialise");
        self.conn
            .execute(
                "INSERT INTO runs (status, tag, command, workload, engine, engine_version,
                   plumb_version, git_hash, options, seed, started_at, data_dir, device, host,
                   group_id, repeat_index, suite_id, plan, plan_hash, owner)
                 VALUES ('running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                   ?14, ?15, ?16, ?17, ?18, ?19)",
                params![
                    r.tag,
                    r.command,
                    r.workload,
                    r.engine,
                    r.engine_version,
                    r.plumb_version,
                    r.git_hash,
                    options,
                    r.seed.to_string(),
                    r.started_at,
                    r.data_dir,
                    r.device,
                    r.host
                        .as_ref()
                        .map(|h| serde_json::to_string(h).expect("host snapshot serialises")),
                    r.group_id,
                    r.repeat_index,
                    r.suite_id,
                    r.plan.as_ref().map(|p| p.to_string()),
                    r.plan_hash,
                    owner::Owner::current().map(|o| o.encode()),
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores one finished step with its intervals, atomically.
    pub fn add_step(
        &mut self,
        run_id: i64,
        step: &StepRecord,
        intervals: &[Interval],
    ) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let sq = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        // IMMEDIATE: take the write lock first. A deferred transaction that reads and
        // then writes fails at once (SQLITE_BUSY) when another plumb wrote in between.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sq)?;
        let summary = serde_json::to_string(&step.summary).expect("summary serialises");
        tx.execute(
            "INSERT INTO steps (run_id, seq, name, kind, status, error, started_at, ended_at,
               config, ops, secs, ops_sec, summary)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                run_id,
                step.seq,
                step.name,
                step.kind.name(),
                step.status.as_str(),
                step.error,
                step.started_at,
                step.ended_at,
                step.config.to_string(),
                step.summary.ops as i64,
                step.summary.secs,
                step.summary.ops_sec,
                summary,
            ],
        )
        .map_err(sq)?;
        let step_id = tx.last_insert_rowid();
        {
            let mut ins = tx
                .prepare(
                    "INSERT INTO intervals (step_id, idx, t, secs, ops, ops_sec, p50_us, p99_us,
                       pmax_us, cpu_us, rd, rkb, wr, wkb, stall_us, rss_gb)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                )
                .map_err(sq)?;
            for (i, iv) in intervals.iter().enumerate() {
                ins.execute(params![
                    step_id,
                    i as i64,
                    iv.t,
                    iv.secs,
                    iv.ops as i64,
                    iv.ops_sec,
                    iv.p50_us,
                    iv.p99_us,
                    iv.pmax_us,
                    iv.cpu_us,
                    iv.rd.map(|x| x as i64),
                    iv.rkb,
                    iv.wr.map(|x| x as i64),
                    iv.wkb,
                    iv.stall_us.map(|x| x as i64),
                    iv.rss_gb,
                ])
                .map_err(sq)?;
            }
        }
        tx.commit().map_err(sq)?;
        Ok(step_id)
    }

    /// Keeps a step's CPU profile (folded stacks, one `frames ns` line each).
    pub fn add_profile(&self, step_id: i64, folded: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO profiles (step_id, folded) VALUES (?1, ?2)",
                params![step_id, folded],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The CPU profiles of a run's steps, by step name, in step order.
    pub fn profiles(&self, run_id: i64) -> Result<Vec<(String, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT s.name, p.folded FROM profiles p JOIN steps s ON s.id = p.step_id
                 WHERE s.run_id = ?1 ORDER BY s.seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![run_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Marks a run ended.
    pub fn finish_run(
        &self,
        run_id: i64,
        status: RunStatus,
        ended_at: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET status = ?1, ended_at = ?2 WHERE id = ?3",
                params![status.as_str(), ended_at, run_id],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Puts a run into a group of repeats (the group id is its first run's id).
    pub fn set_group(
        &self,
        run_id: i64,
        group_id: i64,
        repeat_index: i64,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET group_id = ?1, repeat_index = ?2 WHERE id = ?3",
                params![group_id, repeat_index, run_id],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Ids of the runs in a group, in repeat order.
    pub fn group(&self, group_id: i64) -> Result<Vec<i64>, StoreError> {
        let mut q = self
            .conn
            .prepare("SELECT id FROM runs WHERE group_id = ?1 ORDER BY repeat_index, id")
            .map_err(|e| self.err(e))?;
        let ids = q
            .query_map([group_id], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Records the ceilings a probe run measured on `host`.
    pub fn add_ceilings(
        &mut self,
        run_id: i64,
        host: &str,
        measured_at: &str,
        ceilings: &[Ceiling],
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sq = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        // IMMEDIATE: take the write lock first. A deferred transaction that reads and
        // then writes fails at once (SQLITE_BUSY) when another plumb wrote in between.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sq)?;
        for c in ceilings {
            tx.execute(
                "INSERT INTO ceilings (run_id, host, name, value, unit, measured_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![run_id, host, c.name, c.value, c.unit, measured_at],
            )
            .map_err(sq)?;
        }
        tx.commit().map_err(sq)?;
        Ok(())
    }

    /// The newest figure of every ceiling measured on `host`, by name.
    pub fn ceilings(&self, host: &str) -> Result<Vec<CeilingRecord>, StoreError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT name, value, unit, host, run_id, measured_at FROM ceilings c
                 WHERE host = ?1 AND id = (SELECT max(id) FROM ceilings d
                                           WHERE d.host = c.host AND d.name = c.name)
                 ORDER BY name",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map([host], |r| {
                Ok(CeilingRecord {
                    ceiling: Ceiling {
                        name: r.get(0)?,
                        value: r.get(1)?,
                        unit: r.get(2)?,
                    },
                    host: r.get(3)?,
                    run_id: r.get(4)?,
                    measured_at: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// The newest runs first, at most `limit`.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let mut q = self
            .conn
            .prepare(&format!(
                "{} ORDER BY r.id DESC LIMIT ?1",
                model::RUN_SELECT
            ))
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map([limit as i64], model::run_from_row)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|r| r.finish(&self.path)).collect()
    }

    /// One run with its steps and their intervals.
    pub fn run(&self, id: i64) -> Result<StoredRun, StoreError> {
        let raw = self
            .conn
            .query_row(
                &format!("{} WHERE r.id = ?1", model::RUN_SELECT),
                [id],
                model::run_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::NoRun {
                path: self.path.clone(),
                run: id,
            })?;
        let run = raw.finish(&self.path)?;
        let mut q = self
            .conn
            .prepare(
                "SELECT id, seq, name, kind, status, error, started_at, ended_at, config, summary
                 FROM steps WHERE run_id = ?1 ORDER BY seq",
            )
            .map_err(|e| self.err(e))?;
        let steps = q
            .query_map([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    model::parse_col::<plumb_workloads::Kind>(r, 3)?,
                    model::parse_col::<plumb_core::StepStatus>(r, 4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, String>(8)?,
                    r.get::<_, String>(9)?,
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        let json = |what, s: &str| -> Result<serde_json::Value, StoreError> {
            serde_json::from_str(s).map_err(|source| StoreError::Json {
                path: self.path.clone(),
                run: id,
                what,
                source,
            })
        };
        let mut out = Vec::new();
        for (sid, seq, name, kind, status, error, started_at, ended_at, config, summary) in steps {
            let summary: StepSummary =
                serde_json::from_value(json("summary", &summary)?).map_err(|source| {
                    StoreError::Json {
                        path: self.path.clone(),
                        run: id,
                        what: "summary",
                        source,
                    }
                })?;
            out.push((
                StepRecord {
                    seq,
                    name,
                    kind,
                    status,
                    error,
                    started_at,
                    ended_at,
                    config: json("config", &config)?,
                    summary,
                },
                self.intervals(sid)?,
            ));
        }
        Ok(StoredRun { run, steps: out })
    }

    /// Records a suite as started; returns its id.
    pub fn begin_suite(&self, s: &NewSuite) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO suites (name, file, definition_hash, plan, status, started_at)
                 VALUES (?1, ?2, ?3, ?4, 'running', ?5)",
                params![
                    s.name,
                    s.file,
                    s.definition_hash,
                    s.plan.to_string(),
                    s.started_at
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Marks a suite ended (or interrupted, to be resumed).
    pub fn finish_suite(
        &self,
        id: i64,
        status: RunStatus,
        ended_at: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE suites SET status = ?1, ended_at = ?2 WHERE id = ?3",
                params![status.as_str(), ended_at, id],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn suites_where(
        &self,
        cond: &str,
        arg: &dyn rusqlite::ToSql,
    ) -> Result<Vec<SuiteRecord>, StoreError> {
        let mut q = self
            .conn
            .prepare(&format!(
                "SELECT id, name, file, definition_hash, plan, status, started_at, ended_at
                 FROM suites WHERE {cond} ORDER BY id DESC"
            ))
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map([arg], |r| {
                Ok((
                    SuiteRecord {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        file: r.get(2)?,
                        definition_hash: r.get(3)?,
                        plan: serde_json::Value::Null,
                        status: model::parse_col(r, 5)?,
                        started_at: r.get(6)?,
                        ended_at: r.get(7)?,
                    },
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|(mut rec, plan)| {
                rec.plan = serde_json::from_str(&plan).map_err(|source| StoreError::Json {
                    path: self.path.clone(),
                    run: rec.id,
                    what: "suite plan",
                    source,
                })?;
                Ok(rec)
            })
            .collect()
    }

    /// One suite.
    pub fn suite(&self, id: i64) -> Result<SuiteRecord, StoreError> {
        self.suites_where("id = ?1", &id)?
            .pop()
            .ok_or_else(|| StoreError::NoSuite {
                path: self.path.clone(),
                suite: id,
            })
    }

    /// The newest suite of this definition that did not finish, to resume.
    pub fn unfinished_suite(
        &self,
        definition_hash: &str,
    ) -> Result<Option<SuiteRecord>, StoreError> {
        Ok(self
            .suites_where("definition_hash = ?1", &definition_hash)?
            .into_iter()
            .find(|s| s.status != RunStatus::Ok))
    }

    /// The runs of a suite, in id order.
    pub fn suite_runs(&self, suite_id: i64) -> Result<Vec<RunRecord>, StoreError> {
        let mut q = self
            .conn
            .prepare(&format!(
                "{} WHERE r.suite_id = ?1 ORDER BY r.id",
                model::RUN_SELECT
            ))
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map([suite_id], model::run_from_row)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|r| r.finish(&self.path)).collect()
    }

    /// Marks runs of a suite left `running` by a killed process as interrupted, so they
    /// are not taken for finished (or for running) by anyone reading the store.
    pub fn interrupt_stale_runs(&self, suite_id: i64, ended_at: &str) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET status = 'interrupted', ended_at = ?1
                 WHERE suite_id = ?2 AND status = 'running'",
                params![ended_at, suite_id],
            )
            .map_err(|e| self.err(e))
    }

    fn intervals(&self, step_id: i64) -> Result<Vec<Interval>, StoreError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT t, secs, ops, ops_sec, p50_us, p99_us, pmax_us, cpu_us, rd, rkb, wr, wkb,
                   stall_us, rss_gb FROM intervals WHERE step_id = ?1 ORDER BY idx",
            )
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map([step_id], |r| {
                Ok(Interval {
                    t: r.get(0)?,
                    secs: r.get(1)?,
                    ops: r.get::<_, i64>(2)? as u64,
                    ops_sec: r.get(3)?,
                    p50_us: r.get(4)?,
                    p99_us: r.get(5)?,
                    pmax_us: r.get(6)?,
                    cpu_us: r.get(7)?,
                    rd: r.get::<_, Option<i64>>(8)?.map(|x| x as u64),
                    rkb: r.get(9)?,
                    wr: r.get::<_, Option<i64>>(10)?.map(|x| x as u64),
                    wkb: r.get(11)?,
                    stall_us: r.get::<_, Option<i64>>(12)?.map(|x| x as u64),
                    rss_gb: r.get(13)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests;
