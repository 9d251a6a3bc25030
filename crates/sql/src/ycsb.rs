//! YCSB's core workload on SQL servers, sending what YCSB's JDBC binding
//! (`site.ycsb.db.JdbcDBClient` with its default flavor) sends: the `usertable` of its
//! README, and one prepared statement per operation, in autocommit. The decisions
//! (operation, key, scan length, fields, values) come from
//! [`plumb_workloads::ycsb`], so a plumb run of workload A–F touches the keys YCSB's
//! would. One client thread is one [`YcsbSqlThread`]: its own connection, its
//! statements prepared once, its generators and reused buffers.
//!
//! Latency per operation type: every [`Outcome`] carries the operation's class, its
//! index in [`YCSB_CLASSES`] (the order of [`YcsbOp::ALL`]).

use crate::bench::Outcome;
use plumb_servers::client::{Endpoint, Param, SqlClient, Stmt};
use plumb_servers::SqlError;
use plumb_workloads::ycsb::{
    load_keynums, split_count, CoreParams, FieldSet, YcsbError, YcsbOp, YcsbShared, YcsbThread,
};
use std::sync::Arc;

/// The operation classes an [`Outcome::class`] of a YCSB step indexes, in the order of
/// [`YcsbOp::ALL`] (YCSB's own order: READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE),
/// so a runner keeps one latency histogram per YCSB operation.
pub const YCSB_CLASSES: &[&str] = &["read", "update", "insert", "scan", "read-modify-write"];

/// The primary key column, as the JDBC binding names it.
pub const KEY_COLUMN: &str = "YCSB_KEY";

/// Parameters per statement a load stays under: PostgreSQL and MySQL both refuse more
/// than 65535 placeholders in one statement.
const MAX_PARAMS: usize = 60_000;

/// Rows per INSERT while loading (fewer when the rows have so many fields that the
/// placeholders would pass [`MAX_PARAMS`]).
pub const LOAD_ROWS: usize = 100;

/// Which YCSB phase a thread runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbPhase {
    /// `ycsb load`: insert this thread's part of the records.
    Load,
    /// `ycsb run`: the operation mix.
    Run,
}

/// What a YCSB step hands each of its threads.
#[derive(Debug, Clone)]
pub struct YcsbSqlPlan {
    /// The run's parameters (validated) and its insert counter, one for every thread of
    /// the phase: the counter must be shared, or threads insert the same keys and read
    /// keys not inserted yet.
    pub shared: Arc<YcsbShared>,
    /// Load or run.
    pub phase: YcsbPhase,
    /// This thread, `0..threads`.
    pub thread: usize,
    /// Threads in the phase (the load splits its keys among them, the run its
    /// `operationcount`).
    pub threads: usize,
    /// This thread's seed (different per thread and phase).
    pub seed: u64,
    /// `ENGINE = …` for MySQL-protocol servers (as [`crate::Shape::engine_clause`]),
    /// empty for PostgreSQL.
    pub engine_clause: String,
    /// The server speaks PostgreSQL.
    pub postgres: bool,
    /// Every loaded key exists (the load finished): a read that finds no row, or an
    /// update that changes none, is then an error of the server or of plumb.
    pub verify: bool,
}

/// What the last operation of a thread was, for checks (a test compares a scan's rows
/// with the keys it knows exist) and for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YcsbLastOp {
    /// The operation.
    pub op: YcsbOp,
    /// Its key number (the first of a scan or of a load batch).
    pub keynum: i64,
    /// Records asked for: the scan's length, a load batch's rows, else 1.
    pub len: u64,
    /// Rows returned or changed.
    pub rows: u64,
}

fn ycsb_err(e: YcsbError) -> SqlError {
    SqlError::Input(e.to_string())
}

/// `FIELD0, FIELD1, …`: the JDBC binding's value columns.
fn field_name(i: usize) -> String {
    format!("FIELD{i}")
}

/// The JDBC binding's INSERT for `rows` rows (it sends one row; more rows in one
/// statement is what its `db.batchsize` with a driver's rewriting of batches does).
pub fn insert_sql(table: &str, fieldcount: usize, rows: usize) -> String {
    let cols: Vec<String> = (0..fieldcount).map(field_name).collect();
    let row = format!("(?{})", ",?".repeat(fieldcount));
    let mut s = format!(
        "INSERT INTO {table} ({KEY_COLUMN},{}) VALUES",
        cols.join(",")
    );
    for r in 0..rows {
        if r > 0 {
            s.push(',');
        }
        s.push_str(&row);
    }
    s
}

/// The JDBC binding's read: every column, whatever fields the workload wants (its
/// statement has no field list; the binding picks the fields out of the row).
pub fn read_sql(table: &str) -> String {
    format!("SELECT * FROM {table} WHERE {KEY_COLUMN} = ?")
}

/// The JDBC binding's scan (LIMIT form): `len` rows from a key on, in key order.
pub fn scan_sql(table: &str) -> String {
    format!("SELECT * FROM {table} WHERE {KEY_COLUMN} >= ? ORDER BY {KEY_COLUMN} LIMIT ?")
}

/// The JDBC binding's update of the given fields: their values, then the key.
pub fn update_sql(table: &str, fields: &[usize]) -> String {
    let set: Vec<String> = fields
        .iter()
        .map(|i| format!("{}=?", field_name(*i)))
        .collect();
    format!(
        "UPDATE {table} SET {} WHERE {KEY_COLUMN} = ?",
        set.join(", ")
    )
}

/// Drops and creates the table as the JDBC binding's README gives it (`YCSB_KEY
/// VARCHAR(255) PRIMARY KEY`, `FIELD0 … FIELDn-1 TEXT`) with the engine clause: once,
/// before the load's threads start.
pub fn create_table(
    client: &mut dyn SqlClient,
    engine_clause: &str,
    params: &CoreParams,
) -> Result<(), SqlError> {
    let t = &params.table;
    client.batch(&format!("DROP TABLE IF EXISTS {t}"))?;
    let cols: Vec<String> = (0..params.fieldcount as usize)
        .map(|i| format!("{} TEXT", field_name(i)))
        .collect();
    client.batch(&format!(
        "CREATE TABLE {t} ({KEY_COLUMN} VARCHAR(255) PRIMARY KEY, {}){engine_clause}",
        cols.join(", ")
    ))
}

/// After every load thread has finished: statistics for the planner (and, on
/// PostgreSQL, the visibility map), as plumb's sysbench load ends. YCSB does not do
/// this; without it the first minutes of a run measure autovacuum and bad plans.
pub fn finish_load(
    client: &mut dyn SqlClient,
    params: &CoreParams,
    postgres: bool,
) -> Result<(), SqlError> {
    if postgres {
        client.batch(&format!("VACUUM ANALYZE {}", params.table))
    } else {
        client
            .rows(&format!("ANALYZE TABLE {}", params.table))
            .map(|_| ())
    }
}

/// Empties `slot` and returns its allocation as a parameter vector that may borrow
/// this operation's buffers (std collects an emptied vector into one of a same-sized
/// type in place), so binding parameters allocates nothing per operation.
fn take_params<'a>(slot: &mut Vec<Param<'static>>) -> Vec<Param<'a>> {
    let mut v = std::mem::take(slot);
    v.clear();
    v
}

/// Hands a parameter vector's allocation back to `slot`.
fn give_params(slot: &mut Vec<Param<'static>>, mut v: Vec<Param<'_>>) {
    v.clear();
    *slot = v
        .into_iter()
        .map(|_| -> Param<'static> { unreachable!("the vector is empty") })
        .collect();
}

/// The statements a run phase uses, prepared once.
struct RunStmts {
    read: Option<Stmt>,
    scan: Option<Stmt>,
    update_all: Option<Stmt>,
    update_one: Vec<Stmt>,
    insert: Option<Stmt>,
}

/// One client thread of a YCSB load or run on a SQL server.
pub struct YcsbSqlThread {
    client: Box<dyn SqlClient>,
    gen: YcsbThread,
    phase: YcsbPhase,
    postgres: bool,
    verify: bool,
    fieldcount: usize,
    table: String,
    run: Option<RunStmts>,
    /// Operations this thread still runs (`operationcount` split), None: no limit.
    ops_left: Option<u64>,
    load_next: i64,
    load_end: i64,
    load_rows: usize,
    load_full: Option<Stmt>,
    load_tail: Option<(usize, Stmt)>,
    key: String,
    keys: Vec<String>,
    values: Vec<String>,
    params: Vec<Param<'static>>,
    last: Option<YcsbLastOp>,
}

impl YcsbSqlThread {
    /// Connects and prepares what the phase needs.
    pub fn new(ep: &Endpoint, plan: &YcsbSqlPlan) -> Result<YcsbSqlThread, SqlError> {
        let p = plan.shared.params().clone();
        let gen = YcsbThread::new(plan.shared.clone(), plan.seed).map_err(ycsb_err)?;
        let mut client = ep.connect()?;
        let fieldcount = p.fieldcount as usize;
        let t = &p.table;
        let threads = plan.threads.max(1);
        let (mut run, mut ops_left) = (None, None);
        let (mut load_next, mut load_end, mut load_rows, mut load_full) = (0, 0, 0, None);
        match plan.phase {
            YcsbPhase::Run => {
                let reads = p.readproportion > 0.0 || p.readmodifywriteproportion > 0.0;
                let updates = p.updateproportion > 0.0 || p.readmodifywriteproportion > 0.0;
                let mut s = RunStmts {
                    read: None,
                    scan: None,
                    update_all: None,
                    update_one: Vec::new(),
                    insert: None,
                };
                if reads {
                    s.read = Some(client.prepare(&read_sql(t))?);
                }
                if p.scanproportion > 0.0 {
                    s.scan = Some(client.prepare(&scan_sql(t))?);
                }
                if updates && p.writeallfields {
                    let all: Vec<usize> = (0..fieldcount).collect();
                    s.update_all = Some(client.prepare(&update_sql(t, &all))?);
                }
                if updates && !p.writeallfields {
                    for i in 0..fieldcount {
                        s.update_one.push(client.prepare(&update_sql(t, &[i]))?);
                    }
                }
                if p.insertproportion > 0.0 {
                    s.insert = Some(client.prepare(&insert_sql(t, fieldcount, 1))?);
                }
                run = Some(s);
                if p.operationcount > 0 {
                    ops_left = Some(split_count(p.operationcount, plan.thread, threads).1);
                }
            }
            YcsbPhase::Load => {
                let r = load_keynums(&p, plan.thread, threads);
                (load_next, load_end) = (r.start, r.end);
                load_rows = LOAD_ROWS.min(MAX_PARAMS / (fieldcount + 1)).max(1);
                if (load_end - load_next) as usize >= load_rows {
                    load_full = Some(client.prepare(&insert_sql(t, fieldcount, load_rows))?);
                }
            }
        }
        let batch = if plan.phase == YcsbPhase::Load {
            load_rows
        } else {
            1
        };
        let value_cap = p.fieldlength as usize;
        Ok(YcsbSqlThread {
            client,
            gen,
            phase: plan.phase,
            postgres: plan.postgres,
            verify: plan.verify,
            fieldcount,
            table: p.table.clone(),
            run,
            ops_left,
            load_next,
            load_end,
            load_rows,
            load_full,
            load_tail: None,
            key: String::with_capacity(32),
            keys: (0..batch).map(|_| String::with_capacity(32)).collect(),
            values: (0..batch * fieldcount)
                .map(|_| String::with_capacity(value_cap))
                .collect(),
            params: Vec::with_capacity(batch * (fieldcount + 1) + 1),
            last: None,
        })
    }

    /// The last operation this thread ran.
    pub fn last_op(&self) -> Option<YcsbLastOp> {
        self.last
    }

    /// Runs one unit: a batch of the load, or one YCSB operation. `done` (with nothing
    /// done) once the load's part or the run's share of `operationcount` is over.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        match self.phase {
            YcsbPhase::Load => self.load_batch(),
            YcsbPhase::Run => {
                if let Some(left) = &mut self.ops_left {
                    if *left == 0 {
                        return Ok(done());
                    }
                    *left -= 1;
                }
                let op = self.gen.next_op();
                let r = match op {
                    YcsbOp::Read => self.read(),
                    YcsbOp::Update => self.update(),
                    YcsbOp::Insert => self.insert(),
                    YcsbOp::Scan => self.scan(),
                    YcsbOp::ReadModifyWrite => self.read_modify_write(),
                };
                match r {
                    Ok(o) => Ok(o),
                    // A conflict (deadlock, lock wait timeout, a duplicate key): the
                    // JDBC binding reports the operation failed and YCSB goes on;
                    // plumb counts it as retried. Autocommit: nothing to roll back.
                    Err(e) if e.retryable() => Ok(Outcome {
                        queries: 1,
                        ops: 1,
                        retried: true,
                        class: op.index() as u8,
                        ..Outcome::default()
                    }),
                    Err(e) => Err(e),
                }
            }
        }
    }

    fn stmts(&self) -> &RunStmts {
        self.run.as_ref().expect("a run phase has its statements")
    }

    /// The key of an existing record into `self.key`.
    fn existing_key(&mut self) -> i64 {
        let k = self.gen.next_keynum();
        self.gen.key_name(&mut self.key, k);
        k
    }

    fn outcome(&mut self, op: YcsbOp, keynum: i64, len: u64, queries: u64, rows: u64) -> Outcome {
        self.last = Some(YcsbLastOp {
            op,
            keynum,
            len,
            rows,
        });
        Outcome {
            queries,
            rows,
            ops: 1,
            class: op.index() as u8,
            ..Outcome::default()
        }
    }

    fn check_found(&self, what: &str, keynum: i64, rows: u64) -> Result<(), SqlError> {
        // MySQL reports rows changed, not matched: an update writing the value a field
        // already had changes none.
        let ok = rows == 1 || (what == "update" && !self.postgres && rows == 0);
        if self.verify && !ok {
            return Err(SqlError::Verify(format!(
                "YCSB {what} of key {} (keynum {keynum}) in {} touched {rows} rows, not 1",
                self.key, self.table
            )));
        }
        Ok(())
    }

    fn read(&mut self) -> Result<Outcome, SqlError> {
        let k = self.existing_key();
        // Drawn as YCSB draws it; the JDBC binding's statement reads every column.
        let _ = self.gen.read_fields();
        let stmt = self.stmts().read.expect("prepared for reads");
        let rows = self.client.query(stmt, &[Param::Str(&self.key)])?;
        self.check_found("read", k, rows)?;
        Ok(self.outcome(YcsbOp::Read, k, 1, 1, rows))
    }

    /// Binds the chosen fields' new values and the key, and runs the update.
    fn write_fields(&mut self, fields: FieldSet) -> Result<u64, SqlError> {
        let s = self.stmts();
        let (stmt, first, n) = match fields {
            FieldSet::All => (
                s.update_all.expect("prepared for updates"),
                0,
                self.fieldcount,
            ),
            FieldSet::One(i) => (s.update_one[i], i, 1),
        };
        for v in &mut self.values[first..first + n] {
            self.gen.fill_value(v);
        }
        let mut params = take_params(&mut self.params);
        params.extend(self.values[first..first + n].iter().map(|v| Param::Str(v)));
        params.push(Param::Str(&self.key));
        let r = self.client.execute(stmt, &params);
        give_params(&mut self.params, params);
        r
    }

    fn update(&mut self) -> Result<Outcome, SqlError> {
        let k = self.existing_key();
        let fields = self.gen.update_fields();
        let rows = self.write_fields(fields)?;
        self.check_found("update", k, rows)?;
        Ok(self.outcome(YcsbOp::Update, k, 1, 1, rows))
    }

    fn read_modify_write(&mut self) -> Result<Outcome, SqlError> {
        let k = self.existing_key();
        let _ = self.gen.read_fields();
        let fields = self.gen.update_fields();
        let stmt = self.stmts().read.expect("prepared for read-modify-writes");
        let read = self.client.query(stmt, &[Param::Str(&self.key)])?;
        self.check_found("read", k, read)?;
        let written = self.write_fields(fields)?;
        self.check_found("update", k, written)?;
        Ok(self.outcome(YcsbOp::ReadModifyWrite, k, 1, 2, read + written))
    }

    fn scan(&mut self) -> Result<Outcome, SqlError> {
        let k = self.existing_key();
        let len = self.gen.scan_len();
        let _ = self.gen.read_fields();
        let stmt = self.stmts().scan.expect("prepared for scans");
        let limit = i32::try_from(len).unwrap_or(i32::MAX);
        let rows = self
            .client
            .query(stmt, &[Param::Str(&self.key), Param::Int(limit)])?;
        if self.verify && (rows == 0 || rows > len) {
            return Err(SqlError::Verify(format!(
                "YCSB scan of {len} rows from key {} (keynum {k}) in {} returned {rows}",
                self.key, self.table
            )));
        }
        Ok(self.outcome(YcsbOp::Scan, k, len, 1, rows))
    }

    fn insert(&mut self) -> Result<Outcome, SqlError> {
        let k = self.gen.next_insert_keynum();
        let r = self.insert_row(k);
        // Acknowledged whether it worked or not, as YCSB does, so reads move on.
        self.gen.acknowledge(k).map_err(ycsb_err)?;
        let rows = r?;
        if self.verify && rows != 1 {
            return Err(SqlError::Verify(format!(
                "YCSB insert of key {} in {} inserted {rows} rows",
                self.key, self.table
            )));
        }
        Ok(self.outcome(YcsbOp::Insert, k, 1, 1, rows))
    }

    fn insert_row(&mut self, k: i64) -> Result<u64, SqlError> {
        self.gen.key_name(&mut self.key, k);
        for i in 0..self.fieldcount {
            self.gen.fill_value(&mut self.values[i]);
        }
        let stmt = self.stmts().insert.expect("prepared for inserts");
        let mut params = take_params(&mut self.params);
        params.push(Param::Str(&self.key));
        params.extend(self.values[..self.fieldcount].iter().map(|v| Param::Str(v)));
        let r = self.client.execute(stmt, &params);
        give_params(&mut self.params, params);
        r
    }

    /// The next batch of this thread's load: up to [`LOAD_ROWS`] rows in one INSERT.
    fn load_batch(&mut self) -> Result<Outcome, SqlError> {
        let left = (self.load_end - self.load_next).max(0) as usize;
        if left == 0 {
            return Ok(done());
        }
        let n = left.min(self.load_rows);
        let stmt = if n == self.load_rows {
            self.load_full.expect("prepared for full batches")
        } else {
            match self.load_tail {
                Some((m, s)) if m == n => s,
                _ => {
                    let s = self
                        .client
                        .prepare(&insert_sql(&self.table, self.fieldcount, n))?;
                    self.load_tail = Some((n, s));
                    s
                }
            }
        };
        let first = self.load_next;
        let fc = self.fieldcount;
        for r in 0..n {
            self.gen.key_name(&mut self.keys[r], first + r as i64);
            for v in &mut self.values[r * fc..(r + 1) * fc] {
                self.gen.fill_value(v);
            }
        }
        let mut params = take_params(&mut self.params);
        for r in 0..n {
            params.push(Param::Str(&self.keys[r]));
            params.extend(
                self.values[r * fc..(r + 1) * fc]
                    .iter()
                    .map(|v| Param::Str(v)),
            );
        }
        let res = self.client.execute(stmt, &params);
        give_params(&mut self.params, params);
        let rows = res?;
        if rows != n as u64 {
            return Err(SqlError::Verify(format!(
                "YCSB load: an INSERT of {n} rows from keynum {first} into {} inserted {rows}",
                self.table
            )));
        }
        self.load_next += n as i64;
        self.last = Some(YcsbLastOp {
            op: YcsbOp::Insert,
            keynum: first,
            len: n as u64,
            rows,
        });
        Ok(Outcome {
            queries: 1,
            rows,
            ops: rows,
            class: YcsbOp::Insert.index() as u8,
            ..Outcome::default()
        })
    }
}

fn done() -> Outcome {
    Outcome {
        done: true,
        ..Outcome::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_the_jdbc_binding_s_with_matching_placeholders() {
        assert_eq!(
            read_sql("usertable"),
            "SELECT * FROM usertable WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            scan_sql("usertable"),
            "SELECT * FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
        );
        assert_eq!(
            update_sql("usertable", &[3]),
            "UPDATE usertable SET FIELD3=? WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            update_sql("t", &[0, 1]),
            "UPDATE t SET FIELD0=?, FIELD1=? WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            insert_sql("t", 2, 1),
            "INSERT INTO t (YCSB_KEY,FIELD0,FIELD1) VALUES(?,?,?)"
        );
        let many = insert_sql("usertable", 10, LOAD_ROWS);
        assert_eq!(many.matches('?').count(), LOAD_ROWS * 11);
        assert_eq!(many.matches("),(").count(), LOAD_ROWS - 1);
    }

    #[test]
    fn classes_follow_ycsb_op_order() {
        assert_eq!(YCSB_CLASSES.len(), YcsbOp::ALL.len());
        for op in YcsbOp::ALL {
            assert_eq!(
                YCSB_CLASSES[op.index()],
                op.name().to_ascii_lowercase(),
                "{op:?}"
            );
        }
    }

    #[test]
    fn parameter_vectors_are_reused_without_reallocating() {
        let mut slot: Vec<Param<'static>> = Vec::with_capacity(64);
        let ptr = slot.as_ptr();
        let s = String::from("borrowed");
        let mut v = take_params(&mut slot);
        v.push(Param::Str(&s));
        v.push(Param::Int(3));
        give_params(&mut slot, v);
        assert!(slot.is_empty());
        assert_eq!(slot.capacity(), 64);
        assert_eq!(slot.as_ptr(), ptr);
    }
}
