//! The insert benchmark on a SQL server: the published schema and statements
//! (multi-row INSERT in autocommit, DELETE of the oldest id range, IN-list point
//! queries, LIMIT range queries with FORCE INDEX on MySQL), prepared once per
//! connection through plumb-servers' wire clients.

use crate::error::IbError;
use crate::row::{sql_datetime, Row};
use crate::target::{IbConn, IbTarget, SecIndex};
use plumb_servers::client::{Param, SqlClient, Stmt};
use plumb_servers::{Endpoint, Protocol};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The table plumb creates and drops (nothing else is touched on an external server).
pub const TABLE: &str = "ibench";

/// Which engine holds the table: the write-debt step differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlEngine {
    /// PostgreSQL's heap and B-trees.
    Postgres,
    /// InnoDB.
    InnoDb,
    /// MyRocks.
    MyRocks,
}

/// A server's table.
pub struct SqlTable {
    /// Where clients connect.
    pub endpoint: Endpoint,
    /// The engine.
    pub engine: SqlEngine,
    /// The server's root process, when plumb started it.
    pub pid: Option<u32>,
    /// Its data directory, when plumb started it.
    pub data_dir: Option<PathBuf>,
}

impl SqlTable {
    fn admin(&self) -> Result<Box<dyn SqlClient>, IbError> {
        Ok(self.endpoint.connect()?)
    }

    fn mysql(&self) -> bool {
        self.endpoint.protocol == Protocol::MySql
    }
}

fn scalar(c: &mut dyn SqlClient, sql: &str) -> Result<Option<String>, IbError> {
    Ok(c.rows(sql)?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(|(_, v)| v))
}

impl IbTarget for SqlTable {
    fn describe(&self) -> String {
        self.endpoint.redacted_url()
    }

    fn connect(&self) -> Result<Box<dyn IbConn + '_>, IbError> {
        Ok(Box::new(SqlConn {
            table: self,
            client: self.endpoint.connect()?,
            inserts: Vec::new(),
            points: Vec::new(),
            ranges: Vec::new(),
            delete: None,
            when: (i64::MIN, String::new()),
        }))
    }

    fn create_table(&self) -> Result<(), IbError> {
        let mut c = self.admin()?;
        c.batch(&format!("DROP TABLE IF EXISTS {TABLE}"))?;
        let ddl = match self.engine {
            SqlEngine::Postgres => format!(
                "CREATE TABLE {TABLE} (transactionid BIGSERIAL PRIMARY KEY, \
                 dateandtime TIMESTAMP WITHOUT TIME ZONE, cashregisterid INT NOT NULL, \
                 customerid INT NOT NULL, productid INT NOT NULL, price INT NOT NULL, \
                 data VARCHAR(4000))"
            ),
            e => format!(
                "CREATE TABLE {TABLE} (transactionid BIGINT NOT NULL AUTO_INCREMENT, \
                 dateandtime DATETIME, cashregisterid INT NOT NULL, customerid INT NOT NULL, \
                 productid INT NOT NULL, price INT NOT NULL, data VARCHAR(4000), \
                 PRIMARY KEY (transactionid)) ENGINE = {}",
                if e == SqlEngine::MyRocks {
                    "ROCKSDB"
                } else {
                    "InnoDB"
                }
            ),
        };
        c.batch(&ddl)?;
        Ok(())
    }

    fn create_indexes(&self) -> Result<u64, IbError> {
        let mut c = self.admin()?;
        for (ix, cols) in [
            (SecIndex::MarketSegment, "productid, customerid, price"),
            (
                SecIndex::RegisterSegment,
                "cashregisterid, customerid, price",
            ),
            (SecIndex::Pdc, "price, dateandtime, customerid"),
        ] {
            c.batch(&format!("CREATE INDEX {} ON {TABLE} ({cols})", ix.name()))?;
        }
        self.count_rows()
    }

    fn reduce_debt(&self) -> Result<String, IbError> {
        let mut c = self.admin()?;
        match self.engine {
            SqlEngine::Postgres => {
                c.batch(&format!("VACUUM (ANALYZE) {TABLE}"))?;
                c.batch("CHECKPOINT")?;
                Ok("VACUUM (ANALYZE), CHECKPOINT".into())
            }
            SqlEngine::InnoDb => {
                // Flush every dirty page: a zero dirty-page target, waited out, then the
                // server's own setting back.
                let was = scalar(&mut *c, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct")?
                    .unwrap_or_else(|| "90".into());
                c.batch("SET GLOBAL innodb_max_dirty_pages_pct = 0")?;
                let start = Instant::now();
                let mut dirty = u64::MAX;
                while start.elapsed() < Duration::from_secs(300) {
                    dirty = scalar(
                        &mut *c,
                        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
                         WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY'",
                    )?
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                    if dirty == 0 {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                c.batch(&format!("SET GLOBAL innodb_max_dirty_pages_pct = {was}"))?;
                Ok(format!(
                    "InnoDB dirty pages flushed in {:.1}s ({dirty} left)",
                    start.elapsed().as_secs_f64()
                ))
            }
            SqlEngine::MyRocks => {
                c.batch("SET GLOBAL rocksdb_force_flush_memtable_now = 1")?;
                c.batch("SET GLOBAL rocksdb_compact_cf = 'default'")?;
                Ok("MyRocks memtable flushed, default column family compacted".into())
            }
        }
    }

    fn count_rows(&self) -> Result<u64, IbError> {
        let mut c = self.admin()?;
        let n = scalar(&mut *c, &format!("SELECT COUNT(*) FROM {TABLE}"))?;
        n.as_deref()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| IbError::Verify(format!("SELECT COUNT(*) FROM {TABLE} gave {n:?}")))
    }

    fn server_pid(&self) -> Option<u32> {
        self.pid
    }

    fn endpoint(&self) -> Option<&plumb_servers::Endpoint> {
        Some(&self.endpoint)
    }

    fn data_dir(&self) -> Option<&std::path::Path> {
        self.data_dir.as_deref()
    }
}

struct SqlConn<'a> {
    table: &'a SqlTable,
    client: Box<dyn SqlClient>,
    /// Prepared INSERTs by rows per statement.
    inserts: Vec<(usize, Stmt)>,
    /// Prepared IN-list queries by list length.
    points: Vec<(usize, Stmt)>,
    /// Prepared range queries by (index, limit).
    ranges: Vec<(SecIndex, u32, Stmt)>,
    delete: Option<Stmt>,
    /// The commit's `dateandtime` as text, kept while the second lasts.
    when: (i64, String),
}

impl SqlConn<'_> {
    fn force(&self, ix: SecIndex) -> String {
        if self.table.mysql() {
            format!(" FORCE INDEX ({})", ix.name())
        } else {
            String::new()
        }
    }
}

impl IbConn for SqlConn<'_> {
    fn insert(&mut self, rows: &[Row]) -> Result<(), IbError> {
        let n = rows.len();
        let stmt = match self.inserts.iter().find(|(k, _)| *k == n) {
            Some((_, s)) => *s,
            None => {
                let values = vec!["(?, ?, ?, ?, ?, ?)"; n].join(", ");
                let s = self.client.prepare(&format!(
                    "INSERT INTO {TABLE} (dateandtime, cashregisterid, customerid, productid, \
                     price, data) VALUES {values}"
                ))?;
                self.inserts.push((n, s));
                s
            }
        };
        let secs = rows.first().map(|r| r.dateandtime).unwrap_or(0);
        if self.when.0 != secs {
            self.when.0 = secs;
            sql_datetime(secs, &mut self.when.1);
        }
        let when = self.when.1.as_str();
        let mut params = Vec::with_capacity(6 * n);
        for r in rows {
            params.extend_from_slice(&[
                Param::Str(when),
                Param::Int(r.cashregisterid),
                Param::Int(r.customerid),
                Param::Int(r.productid),
                Param::Int(r.price),
                Param::Str(r.data_str()),
            ]);
        }
        let changed = self.client.execute(stmt, &params)?;
        if changed != n as u64 {
            return Err(IbError::Verify(format!(
                "an INSERT of {n} rows reported {changed} rows inserted"
            )));
        }
        Ok(())
    }

    fn delete_range(&mut self, lo: u64, hi: u64) -> Result<u64, IbError> {
        let stmt = match self.delete {
            Some(s) => s,
            None => {
                let s = self.client.prepare(&format!(
                    "DELETE FROM {TABLE} WHERE transactionid >= ? AND transactionid < ?"
                ))?;
                self.delete = Some(s);
                s
            }
        };
        Ok(self
            .client
            .execute(stmt, &[Param::Int(lo as i32), Param::Int(hi as i32)])?)
    }

    fn point(&mut self, ids: &[u64]) -> Result<u64, IbError> {
        let n = ids.len();
        let stmt = match self.points.iter().find(|(k, _)| *k == n) {
            Some((_, s)) => *s,
            None => {
                let list = vec!["?"; n].join(", ");
                let s = self.client.prepare(&format!(
                    "SELECT transactionid, productid, data FROM {TABLE} \
                     WHERE transactionid IN ({list})"
                ))?;
                self.points.push((n, s));
                s
            }
        };
        let mut params = [Param::Int(0); 64];
        for (p, id) in params.iter_mut().zip(ids) {
            *p = Param::Int(*id as i32);
        }
        Ok(self.client.query(stmt, &params[..n.min(64)])?)
    }

    fn range(&mut self, ix: SecIndex, from: i32, limit: u32) -> Result<u64, IbError> {
        let stmt = match self.ranges.iter().find(|(i, l, _)| *i == ix && *l == limit) {
            Some((_, _, s)) => *s,
            None => {
                let force = self.force(ix);
                let sql = match ix {
                    SecIndex::MarketSegment => format!(
                        "SELECT productid, customerid, price FROM {TABLE}{force} \
                         WHERE productid >= ? ORDER BY productid, customerid, price LIMIT {limit}"
                    ),
                    SecIndex::RegisterSegment => format!(
                        "SELECT cashregisterid, customerid, price FROM {TABLE}{force} \
                         WHERE cashregisterid > ? ORDER BY cashregisterid, customerid, price \
                         LIMIT {limit}"
                    ),
                    SecIndex::Pdc => format!(
                        "SELECT price, dateandtime, customerid FROM {TABLE}{force} \
                         WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT {limit}"
                    ),
                };
                let s = self.client.prepare(&sql)?;
                self.ranges.push((ix, limit, s));
                s
            }
        };
        Ok(self.client.query(stmt, &[Param::Int(from)])?)
    }
}
