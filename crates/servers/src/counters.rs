//! The server's own counters, read over a separate connection before a step's clients
//! connect and after they have gone: PostgreSQL's pg_stat_* views (what the version
//! has), MariaDB's SHOW GLOBAL STATUS (InnoDB and MyRocks). Deltas per query are how the
//! seeds explain a regression.

use crate::client::{Endpoint, Protocol, SqlClient};
use crate::error::SqlError;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The status variables kept from SHOW GLOBAL STATUS (lower-cased), by prefix or name.
const MYSQL_KEEP: &[&str] = &[
    "com_select",
    "com_insert",
    "com_update",
    "com_delete",
    "com_begin",
    "com_commit",
    "com_rollback",
    "questions",
    "handler_read_key",
    "handler_read_next",
    "handler_read_rnd_next",
    "handler_write",
    "handler_update",
    "handler_delete",
    "innodb_buffer_pool_read_requests",
    "innodb_buffer_pool_reads",
    "innodb_buffer_pool_write_requests",
    "innodb_data_reads",
    "innodb_data_writes",
    "innodb_data_read",
    "innodb_data_written",
    "innodb_data_fsyncs",
    "innodb_os_log_written",
    "innodb_pages_written",
    "innodb_rows_read",
    "rocksdb_bytes_read",
    "rocksdb_bytes_written",
    "rocksdb_block_cache_hit",
    "rocksdb_block_cache_miss",
    "rocksdb_compact_read_bytes",
    "rocksdb_compact_write_bytes",
    "rocksdb_flush_write_bytes",
    "rocksdb_wal_bytes",
    "rocksdb_wal_synced",
    "rocksdb_rows_read",
    "rocksdb_number_keys_read",
];

/// A connection that reads counters.
pub struct CounterReader {
    client: Box<dyn SqlClient>,
    protocol: Protocol,
    /// PostgreSQL's server_version_num (150018 …); 0 for MySQL.
    pub pg_version: u32,
}

fn num(v: &Option<String>) -> Option<f64> {
    v.as_deref().and_then(|s| s.trim().parse::<f64>().ok())
}

impl CounterReader {
    /// Connects to the server plumb measures.
    pub fn connect(ep: &Endpoint) -> Result<CounterReader, SqlError> {
        let mut client = ep.connect()?;
        let pg_version = if ep.protocol == Protocol::Postgres {
            let r = client.rows("SHOW server_version_num")?;
            r.first()
                .and_then(|r| r.first())
                .and_then(|(_, v)| num(v))
                .unwrap_or(0.0) as u32
        } else {
            0
        };
        Ok(CounterReader {
            client,
            protocol: ep.protocol,
            pg_version,
        })
    }

    fn one_row(
        &mut self,
        sql: &str,
        prefix: &str,
        out: &mut BTreeMap<String, f64>,
    ) -> Result<(), SqlError> {
        for row in self.client.rows(sql)? {
            for (k, v) in row {
                if let Some(x) = num(&v) {
                    out.insert(format!("{prefix}{k}"), x);
                }
            }
        }
        Ok(())
    }

    /// Every counter now, by name (`db.blks_read`, `wal.wal_bytes`, `innodb_data_reads` …).
    pub fn read(&mut self) -> Result<BTreeMap<String, f64>, SqlError> {
        let mut out = BTreeMap::new();
        match self.protocol {
            Protocol::Postgres => {
                let _ = self.client.batch("SELECT pg_stat_clear_snapshot()");
                self.one_row(
                    "SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, \
                     tup_fetched, tup_inserted, tup_updated, tup_deleted, temp_bytes \
                     FROM pg_stat_database WHERE datname = current_database()",
                    "db.",
                    &mut out,
                )?;
                self.one_row(
                    "SELECT coalesce(sum(seq_scan),0) AS seq_scan, coalesce(sum(idx_scan),0) AS idx_scan, \
                     coalesce(sum(n_tup_hot_upd),0) AS n_tup_hot_upd FROM pg_stat_user_tables",
                    "tables.",
                    &mut out,
                )?;
                if self.pg_version >= 180000 {
                    // 18 moved the WAL's writes and syncs to pg_stat_io (object 'wal'):
                    // read there under the same names.
                    self.one_row(
                        "SELECT w.wal_records, w.wal_fpi, w.wal_bytes::float8 AS wal_bytes, \
                         coalesce(sum(io.writes),0)::float8 AS wal_write, \
                         coalesce(sum(io.fsyncs),0)::float8 AS wal_sync \
                         FROM pg_stat_wal w, pg_stat_io io WHERE io.object = 'wal' \
                         GROUP BY w.wal_records, w.wal_fpi, w.wal_bytes",
                        "wal.",
                        &mut out,
                    )?;
                } else if self.pg_version >= 140000 {
                    self.one_row(
                        "SELECT wal_records, wal_fpi, wal_bytes::float8 AS wal_bytes, wal_write, wal_sync \
                         FROM pg_stat_wal",
                        "wal.",
                        &mut out,
                    )?;
                }
                if self.pg_version >= 170000 {
                    self.one_row(
                        "SELECT buffers_written FROM pg_stat_checkpointer",
                        "checkpointer.",
                        &mut out,
                    )?;
                    self.one_row(
                        "SELECT buffers_clean, buffers_alloc FROM pg_stat_bgwriter",
                        "bgwriter.",
                        &mut out,
                    )?;
                } else {
                    self.one_row(
                        "SELECT buffers_checkpoint, buffers_clean, buffers_backend, buffers_alloc \
                         FROM pg_stat_bgwriter",
                        "bgwriter.",
                        &mut out,
                    )?;
                }
                if self.pg_version >= 160000 {
                    self.one_row(
                        "SELECT coalesce(sum(reads),0) AS reads, coalesce(sum(writes),0) AS writes, \
                         coalesce(sum(extends),0) AS extends, coalesce(sum(fsyncs),0) AS fsyncs FROM pg_stat_io",
                        "io.",
                        &mut out,
                    )?;
                }
            }
            Protocol::MySql => {
                for row in self.client.rows("SHOW GLOBAL STATUS")? {
                    let mut it = row.into_iter();
                    let (Some((_, Some(name))), Some((_, v))) = (it.next(), it.next()) else {
                        continue;
                    };
                    let name = name.to_ascii_lowercase();
                    if MYSQL_KEEP.contains(&name.as_str()) {
                        if let Some(x) = num(&v) {
                            out.insert(name, x);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// The counters once they stop moving (two reads 50 ms apart agree, within 2 s):
    /// a PostgreSQL backend leaves pg_stat_activity before it adds its statistics to
    /// the shared ones, so the first read after the clients left can miss the last.
    pub fn settled(&mut self) -> Result<BTreeMap<String, f64>, SqlError> {
        let until = Instant::now() + Duration::from_secs(2);
        let mut last = self.read()?;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let now = self.read()?;
            // The reads themselves move a few counters (their own commits, tuples
            // read from the catalog): compare the ones the clients move.
            let same = now.iter().all(|(k, v)| {
                k.starts_with("db.xact")
                    || k.starts_with("db.tup_returned")
                    || k.starts_with("db.tup_fetched")
                    || k.starts_with("db.blks_hit")
                    || k.starts_with("com_")
                    || k == "questions"
                    || k.starts_with("handler_read")
                    || k.starts_with("innodb_rows_read")
                    || k.starts_with("innodb_buffer_pool_read_requests")
                    || last.get(k) == Some(v)
            });
            if same || Instant::now() > until {
                return Ok(now);
            }
            last = now;
        }
    }

    /// Waits (up to 10 s) until no other client is connected, so the counters read
    /// next include every statement of the step's clients (a PostgreSQL backend adds
    /// its statistics to the shared ones as it exits).
    pub fn wait_for_clients_to_leave(&mut self) -> Result<(), SqlError> {
        let sql = match self.protocol {
            Protocol::Postgres => {
                "SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' \
                 AND pid <> pg_backend_pid()"
            }
            Protocol::MySql => {
                "SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() \
                 AND COMMAND <> 'Daemon' AND USER <> 'system user'"
            }
        };
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let n = self
                .client
                .rows(sql)?
                .first()
                .and_then(|r| r.first())
                .and_then(|(_, v)| num(v))
                .unwrap_or(0.0);
            if n == 0.0 || Instant::now() > until {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// This connection's id on the server (PostgreSQL's backend pid, MySQL's connection
    /// id), so a sampler of the server's sessions can leave it out.
    pub fn session_id(&mut self) -> Option<i64> {
        self.number(match self.protocol {
            Protocol::Postgres => "SELECT pg_backend_pid() AS id",
            Protocol::MySql => "SELECT CONNECTION_ID() AS id",
        })
        .map(|x| x as i64)
    }

    /// The first value of `sql`'s first row as a number; `None` when the query fails,
    /// returns nothing or not a number.
    fn number(&mut self, sql: &str) -> Option<f64> {
        let r = self.client.rows(sql).ok()?;
        r.first().and_then(|r| r.first()).and_then(|(_, v)| num(v))
    }

    /// The database's size by the server's count (external servers, where plumb cannot
    /// see the files).
    pub fn db_bytes(&mut self) -> Option<u64> {
        let sql = match self.protocol {
            Protocol::Postgres => "SELECT pg_database_size(current_database()) AS b",
            Protocol::MySql => {
                "SELECT coalesce(sum(data_length + index_length), 0) AS b FROM information_schema.TABLES \
                 WHERE table_schema = DATABASE()"
            }
        };
        self.number(sql).map(|b| b as u64)
    }

    /// The largest id of each table (inserts go above it), 0 for an empty or missing
    /// table.
    pub fn max_id(&mut self, tables: u32) -> i64 {
        (1..=tables)
            .filter_map(|t| {
                let r = self
                    .client
                    .rows(&format!("SELECT coalesce(max(id), 0) AS m FROM sbtest{t}"))
                    .ok()?;
                r.first()
                    .and_then(|r| r.first())
                    .and_then(|(_, v)| num(v))
                    .map(|x| x as i64)
            })
            .max()
            .unwrap_or(0)
    }

    /// How the server was compiled, where it says: PostgreSQL's pg_config view (the
    /// configure line, CC and CFLAGS; superusers only, so empty otherwise). A MySQL-protocol
    /// server's `version_compile_*` and `version_source_revision` are among its settings.
    pub fn build(&mut self) -> Vec<(String, String)> {
        match self.protocol {
            Protocol::Postgres => self.name_value(
                "SELECT name, setting FROM pg_config \
                 WHERE name IN ('CONFIGURE', 'CC', 'CFLAGS') ORDER BY name",
            ),
            Protocol::MySql => Vec::new(),
        }
    }

    /// The server's settings, as provenance (pg_settings, SHOW GLOBAL VARIABLES).
    pub fn settings(&mut self) -> Vec<(String, String)> {
        self.name_value(match self.protocol {
            Protocol::Postgres => "SELECT name, setting FROM pg_settings ORDER BY name",
            Protocol::MySql => "SHOW GLOBAL VARIABLES",
        })
    }

    /// The (name, value) rows of `sql`; none when it fails (a provenance query that the
    /// server refuses leaves its figures out, it does not stop the run).
    fn name_value(&mut self, sql: &str) -> Vec<(String, String)> {
        self.client
            .rows(sql)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                let (_, k) = it.next()?;
                let (_, v) = it.next()?;
                Some((k?, v.unwrap_or_default()))
            })
            .collect()
    }
}

/// `later - earlier` per counter, divided by `queries`; counters that went backwards
/// (a reset) are left out.
pub fn per_query(
    later: &BTreeMap<String, f64>,
    earlier: &BTreeMap<String, f64>,
    queries: u64,
) -> BTreeMap<String, f64> {
    if queries == 0 {
        return BTreeMap::new();
    }
    later
        .iter()
        .filter_map(|(k, b)| {
            let a = earlier.get(k)?;
            (b >= a).then(|| (k.clone(), (b - a) / queries as f64))
        })
        .collect()
}
