//! SQLite as a key-value table through `rusqlite` (SQLite bundled and compiled in):
//! `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`, one connection per worker thread,
//! prepared statements, each write its own transaction (autocommit), as db_bench's batch
//! of one. The seeds' B-tree baseline next to the LSMs.

use crate::sqlite_options::SqliteOptions;
use plumb_core::{EngineStats, Maintenance, Result, Session, Target, TargetError, Visit};
use rusqlite::{params, Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

pub(crate) const ENGINE: &str = "sqlite";

use crate::sqlite_options::DB_FILE;

const GET: &str = "SELECT v FROM kv WHERE k = ?1";
const PUT: &str = "INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)";
const DELETE: &str = "DELETE FROM kv WHERE k = ?1";
const FORWARD: &str = "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k LIMIT ?2";
const REVERSE: &str = "SELECT k, v FROM kv WHERE k <= ?1 ORDER BY k DESC LIMIT ?2";

/// Writers wait for each other instead of failing: SQLite has one writer at a time, and
/// waiting for it is the engine's cost with several writing threads.
const BUSY_TIMEOUT: Duration = Duration::from_secs(600);

fn eng(e: rusqlite::Error) -> TargetError {
    TargetError::engine(ENGINE, e)
}

/// An SQLite database file with plumb's key-value table.
pub struct SqliteTarget {
    /// The connection maintenance and statistics use; workers open their own.
    admin: Mutex<Connection>,
    file: PathBuf,
    dir: PathBuf,
    settings: SqliteOptions,
}

impl SqliteTarget {
    /// Opens (creating if missing) `DB_FILE` in directory `dir` and its table.
    pub fn open(dir: &Path, settings: SqliteOptions) -> Result<Self> {
        settings.validate()?;
        crate::engine::make_dir(ENGINE, dir)?;
        let file = dir.join(DB_FILE);
        let admin = connect(&file, &settings)?;
        admin
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID",
            )
            .map_err(eng)?;
        Ok(SqliteTarget {
            admin: Mutex::new(admin),
            file,
            dir: dir.to_path_buf(),
            settings,
        })
    }

    fn admin(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.admin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Pages in the database file that hold data (not on the freelist) and the page
    /// size, SQLite's own figures.
    pub fn pages(&self) -> Result<(u64, u32)> {
        let c = self.admin();
        let pages: i64 = c
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(eng)?;
        let free: i64 = c
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .map_err(eng)?;
        let pages = pages - free;
        let size: i64 = c
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(eng)?;
        Ok((pages as u64, size as u32))
    }
}

/// One connection with every pragma applied and checked: SQLite ignores a pragma it
/// cannot honour, so the journal mode it really took is read back.
fn connect(file: &Path, o: &SqliteOptions) -> Result<Connection> {
    let c = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| TargetError::engine(ENGINE, format!("{}: {e}", file.display())))?;
    c.busy_timeout(BUSY_TIMEOUT).map_err(eng)?;
    for p in o.pragmas() {
        // journal_mode answers with a row; the others with none.
        let mut st = c.prepare(&p).map_err(eng)?;
        let mut rows = st.query([]).map_err(eng)?;
        if p.starts_with("PRAGMA journal_mode") {
            let got: String = match rows.next().map_err(eng)? {
                Some(r) => r.get(0).map_err(eng)?,
                None => String::new(),
            };
            if !got.eq_ignore_ascii_case(&o.journal_mode.to_string()) {
                return Err(TargetError::engine(
                    ENGINE,
                    format!(
                        "{}: asked for journal_mode {}, SQLite kept {got:?}",
                        file.display(),
                        o.journal_mode
                    ),
                ));
            }
        } else {
            while rows.next().map_err(eng)?.is_some() {}
        }
    }
    Ok(c)
}

struct SqliteSession {
    conn: Connection,
}

impl Target for SqliteTarget {
    fn name(&self) -> &'static str {
        ENGINE
    }
    fn integrity_check(&self) -> Option<(&'static str, Result<()>)> {
        let check = || -> Result<()> {
            let c = self.admin();
            let mut st = c.prepare("PRAGMA integrity_check").map_err(eng)?;
            let rows: Vec<String> = st
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(eng)?
                .collect::<std::result::Result<_, _>>()
                .map_err(eng)?;
            if rows == ["ok"] {
                Ok(())
            } else {
                Err(TargetError::engine(
                    ENGINE,
                    format!("PRAGMA integrity_check: {}", rows.join("; ")),
                ))
            }
        };
        Some(("PRAGMA integrity_check", check()))
    }
    fn version(&self) -> String {
        rusqlite::version().to_string()
    }
    fn session(&self) -> Result<Box<dyn Session + '_>> {
        let conn = connect(&self.file, &self.settings)?;
        // Prepare once so a bad statement fails here, before timing starts.
        for sql in [GET, PUT, DELETE, FORWARD, REVERSE] {
            conn.prepare_cached(sql).map_err(eng)?;
        }
        Ok(Box::new(SqliteSession { conn }))
    }
    fn maintenance(&self, what: Maintenance) -> Result<()> {
        let c = self.admin();
        let sql = match what {
            // Copy the WAL into the database file, as a flush moves a memtable to
            // tables; compact also truncates the WAL so reads stop consulting it.
            Maintenance::Flush => "PRAGMA wal_checkpoint(FULL)",
            Maintenance::Compact => "PRAGMA wal_checkpoint(TRUNCATE)",
            Maintenance::WaitForCompaction | Maintenance::CompactLevel(_) => return Ok(()),
        };
        let mut st = c.prepare(sql).map_err(eng)?;
        let mut rows = st.query([]).map_err(eng)?;
        while rows.next().map_err(eng)?.is_some() {}
        Ok(())
    }
    fn data_dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }
    fn stats(&self) -> EngineStats {
        crate::engine::used_pages(self.pages())
    }
    fn options(&self) -> Vec<(String, String)> {
        let mut v = self.settings.describe();
        if let Ok((pages, size)) = self.pages() {
            v.push(("pages_at_open".into(), pages.to_string()));
            v.push(("page_size_in_file".into(), size.to_string()));
        }
        v
    }
}

impl SqliteSession {
    fn range(&mut self, sql: &str, start: &[u8], limit: usize, visit: Visit) -> Result<usize> {
        let mut st = self.conn.prepare_cached(sql).map_err(eng)?;
        let mut rows = st.query(params![start, limit as i64]).map_err(eng)?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(eng)? {
            let k = r.get_ref(0).and_then(|v| Ok(v.as_blob()?)).map_err(eng)?;
            let v = r.get_ref(1).and_then(|v| Ok(v.as_blob()?)).map_err(eng)?;
            visit(k, v);
            n += 1;
        }
        Ok(n)
    }
}

impl Session for SqliteSession {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut st = self.conn.prepare_cached(PUT).map_err(eng)?;
        st.execute(params![key, value]).map_err(eng)?;
        Ok(())
    }
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let mut st = self.conn.prepare_cached(GET).map_err(eng)?;
        let mut rows = st.query(params![key]).map_err(eng)?;
        match rows.next().map_err(eng)? {
            Some(r) => {
                let v = r.get_ref(0).and_then(|v| Ok(v.as_blob()?)).map_err(eng)?;
                visit(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn scan(&mut self, start: &[u8], nexts: usize, reverse: bool, visit: Visit) -> Result<usize> {
        self.range(
            if reverse { REVERSE } else { FORWARD },
            start,
            nexts + 1,
            visit,
        )
    }
    fn delete(&mut self, key: &[u8]) -> Result<()> {
        let mut st = self.conn.prepare_cached(DELETE).map_err(eng)?;
        st.execute(params![key]).map_err(eng)?;
        Ok(())
    }
}
