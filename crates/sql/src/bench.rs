//! What each microbenchmark sends, after sysbench 1.0.20's oltp_* scripts (their
//! statements, parameters and transaction shapes) and the seeds' variants of them, and
//! the sbtest tables they run on. One client thread is one [`ThreadState`]: its own
//! connection, its statements prepared once per table, its key chooser and buffers.

use plumb_servers::client::{Endpoint, Param, SqlClient, Stmt};
use plumb_servers::SqlError;
use plumb_workloads::{Distribution, KeyChooser, SqlKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The tables a run works on.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// sbtest1 … sbtestN.
    pub tables: u32,
    /// Rows loaded per table (ids 1..=table_size).
    pub table_size: u64,
    /// Rows per range query (sysbench's --range_size); read-only-N and read-write-N
    /// use N instead.
    pub range_size: u64,
    /// `ENGINE = …` for MySQL-protocol servers, empty for PostgreSQL.
    pub engine_clause: String,
    /// The server speaks PostgreSQL (VACUUM ANALYZE after the load).
    pub postgres: bool,
    /// pgbench's scale factor: 100000 accounts, 10 tellers and 1 branch per unit.
    pub scale: u32,
    /// TPC-C's warehouses.
    pub warehouses: u32,
    /// TPC-C with the spec's keying and think times (off: TPROC-C, none).
    pub spec_timing: bool,
    /// YCSB's recordcount.
    pub ycsb_records: u64,
    /// YCSB properties given by the user (`name=value`), applied over each workload's
    /// preset.
    pub ycsb_props: Vec<(String, String)>,
    /// The `script` step's scripts and how they run (`None` without scripts).
    pub scripts: Option<crate::pgscript::ScriptStep>,
    /// The `lua` step's script and options (`None` without `--lua`).
    pub lua: Option<crate::lua::LuaStep>,
}

/// Values per IN-list in the points-*, hot-points and update-inlist steps.
pub const INLIST: usize = 100;
/// Rows per INSERT statement while loading.
pub const LOAD_BATCH: u64 = 1000;

const POINT: &str = "SELECT c FROM sbtest{t} WHERE id=?";
const SIMPLE: &str = "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?";
const SUM: &str = "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?";
const ORDER: &str = "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c";
const DISTINCT: &str = "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c";
const COUNT: &str = "SELECT COUNT(*) FROM sbtest{t} WHERE id BETWEEN ? AND ?";
const UPD_INDEX: &str = "UPDATE sbtest{t} SET k=k+1 WHERE id=?";
const UPD_NONINDEX: &str = "UPDATE sbtest{t} SET c=? WHERE id=?";
const DELETE: &str = "DELETE FROM sbtest{t} WHERE id=?";
const INSERT: &str = "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)";

fn in_list(n: usize) -> String {
    let mut s = "?, ".repeat(n - 1);
    s.push('?');
    s
}

/// The statements `kind` prepares for table `t`, in the order its event uses them.
pub fn statements(kind: SqlKind, t: u32) -> Vec<String> {
    use SqlKind::*;
    let list = |sel: &str, col: &str, n: usize| {
        format!(
            "SELECT {sel} FROM sbtest{{t}} WHERE {col} IN ({})",
            in_list(n)
        )
    };
    let v: Vec<String> = match kind {
        Load => vec![],
        PointQuery => vec![POINT.into()],
        RandomPoints10 => vec![list("id, k, c, pad", "k", 10)],
        RandomPoints100 => vec![list("id, k, c, pad", "k", 100)],
        RandomPoints1000 => vec![list("id, k, c, pad", "k", 1000)],
        HotPoints => vec![list("id, k, c, pad", "id", INLIST)],
        PointsCoveredPk => vec![list("id", "id", INLIST)],
        PointsNotcoveredPk => vec![list("c", "id", INLIST)],
        PointsCoveredSi => vec![list("k", "k", INLIST)],
        PointsNotcoveredSi => vec![list("c", "k", INLIST)],
        RangeCoveredPk => vec!["SELECT id FROM sbtest{t} WHERE id BETWEEN ? AND ?".into()],
        RangeNotcoveredPk => vec![SIMPLE.into()],
        RangeCoveredSi => vec!["SELECT k FROM sbtest{t} WHERE k BETWEEN ? AND ?".into()],
        RangeNotcoveredSi => vec!["SELECT c FROM sbtest{t} WHERE k BETWEEN ? AND ?".into()],
        // No row's pad is empty and pad has no index: every row is read, none returned.
        Scan => vec!["SELECT COUNT(*) FROM sbtest{t} WHERE pad = ''".into()],
        ReadOnly10 | ReadOnly100 | ReadOnly10000 => {
            vec![
                POINT.into(),
                SIMPLE.into(),
                SUM.into(),
                ORDER.into(),
                DISTINCT.into(),
            ]
        }
        ReadOnlySimple => vec![SIMPLE.into()],
        ReadOnlySum => vec![SUM.into()],
        ReadOnlyOrder => vec![ORDER.into()],
        ReadOnlyDistinct => vec![DISTINCT.into()],
        ReadOnlyCount => vec![COUNT.into()],
        ReadWrite10 | ReadWrite100 => vec![
            POINT.into(),
            SIMPLE.into(),
            SUM.into(),
            ORDER.into(),
            DISTINCT.into(),
            UPD_INDEX.into(),
            UPD_NONINDEX.into(),
            DELETE.into(),
            INSERT.into(),
        ],
        WriteOnly => vec![
            UPD_INDEX.into(),
            UPD_NONINDEX.into(),
            DELETE.into(),
            INSERT.into(),
        ],
        UpdateIndex => vec![UPD_INDEX.into()],
        UpdateNonindex | UpdateOne | UpdateZipf => vec![UPD_NONINDEX.into()],
        UpdateInlist => vec![format!(
            "UPDATE sbtest{{t}} SET k=k+1 WHERE id IN ({})",
            in_list(INLIST)
        )],
        Delete => vec![DELETE.into()],
        Insert => vec![INSERT.into()],
        // Other families' steps: their statements live in their own modules.
        PgbenchLoad | TpcbLike | SimpleUpdate | SelectOnly | TpccLoad | TprocC | YcsbLoad
        | YcsbA | YcsbB | YcsbC | YcsbD | YcsbE | YcsbF | CachedSelect | Script | Lua
        | LuaPrepare => vec![],
    };
    v.into_iter()
        .map(|s| s.replace("{t}", &t.to_string()))
        .collect()
}

/// The range size a kind uses.
fn range_of(kind: SqlKind, shape: &Shape) -> u64 {
    match kind {
        SqlKind::ReadOnly10 | SqlKind::ReadWrite10 => 10,
        SqlKind::ReadOnly100 | SqlKind::ReadWrite100 => 100,
        SqlKind::ReadOnly10000 => 10_000,
        _ => shape.range_size,
    }
    .min(shape.table_size.max(1))
}

/// What one event (a transaction, or one statement in autocommit) did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Outcome {
    /// Statements sent, BEGIN and COMMIT included (sysbench's queries).
    pub queries: u64,
    /// Rows returned or changed.
    pub rows: u64,
    /// Ops it counts for the step's rate: its queries, or rows for the load.
    pub ops: u64,
    /// It hit a conflict sysbench retries (deadlock, duplicate key) and rolled back.
    pub retried: bool,
    /// The thread has nothing left to do (the load finished its tables).
    pub done: bool,
    /// Which kind of operation it was, for steps whose operations differ enough that
    /// one latency histogram would hide them: an index into the step's class names
    /// (YCSB's [`crate::ycsb::YCSB_CLASSES`], TPC-C's [`crate::tpcc::TPCC_CLASSES`]);
    /// 0 where a step has one kind.
    pub class: u8,
}

/// Where a loading thread is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LoadAt {
    Create(u32),
    Rows(u32, u64),
    Index(u32),
    Analyze(u32),
    Finished,
}

/// One client thread of a step.
pub struct ThreadState {
    client: Box<dyn SqlClient>,
    kind: SqlKind,
    shape: Shape,
    stmts: Vec<Vec<Stmt>>,
    keys: KeyChooser,
    rng: SmallRng,
    range: u64,
    c: String,
    pad: String,
    inlist: Vec<i32>,
    /// `inlist` as statement parameters, reused so an IN-list query allocates nothing.
    list_params: Vec<Param<'static>>,
    scratch: Vec<i32>,
    next_insert: i64,
    insert_stride: i64,
    /// Every id in 1..=table_size exists (no delete step has run): a point query that
    /// finds nothing is an error.
    pub all_present: bool,
    load: LoadAt,
    load_tables: Vec<u32>,
    load_text: String,
}

/// What a step hands each thread.
#[derive(Debug, Clone)]
pub struct ThreadPlan {
    /// The microbenchmark.
    pub kind: SqlKind,
    /// The tables.
    pub shape: Shape,
    /// Key distribution.
    pub distribution: Distribution,
    /// This thread's seed.
    pub seed: u64,
    /// The run's seed, for what every thread must agree on (TPC-C's NURand constants).
    pub run_seed: u64,
    /// This thread and the step's thread count.
    pub thread: usize,
    /// Threads in the step.
    pub threads: usize,
    /// The largest id before the step (inserts go above it).
    pub max_id: i64,
    /// Every loaded id exists.
    pub all_present: bool,
}

impl ThreadState {
    /// Connects and prepares what the step needs.
    pub fn new(ep: &Endpoint, p: &ThreadPlan) -> Result<ThreadState, SqlError> {
        let mut client = ep.connect()?;
        let mut stmts = Vec::with_capacity(p.shape.tables as usize);
        if p.kind != SqlKind::Load {
            for t in 1..=p.shape.tables {
                let mut v = Vec::new();
                for sql in statements(p.kind, t) {
                    v.push(client.prepare(&sql)?);
                }
                stmts.push(v);
            }
        }
        let dist = if p.kind == SqlKind::UpdateZipf {
            Distribution::Zipfian { theta: 0.99 }
        } else {
            p.distribution
        };
        let keys = KeyChooser::new(dist, p.shape.table_size.max(1), p.seed)
            .map_err(|e| SqlError::Input(e.to_string()))?;
        let load_tables: Vec<u32> = (1..=p.shape.tables)
            .filter(|t| (*t as usize - 1) % p.threads == p.thread)
            .collect();
        let load = match load_tables.first() {
            Some(t) if p.kind == SqlKind::Load => LoadAt::Create(*t),
            _ => LoadAt::Finished,
        };
        Ok(ThreadState {
            client,
            kind: p.kind,
            range: range_of(p.kind, &p.shape),
            shape: p.shape.clone(),
            stmts,
            keys,
            rng: SmallRng::seed_from_u64(p.seed ^ 0x5157_4c00),
            c: String::with_capacity(120),
            pad: String::with_capacity(60),
            inlist: Vec::with_capacity(1000),
            list_params: Vec::with_capacity(1000),
            scratch: Vec::with_capacity(1000),
            next_insert: p.max_id + 1 + p.thread as i64,
            insert_stride: p.threads as i64,
            all_present: p.all_present,
            load,
            load_tables,
            load_text: String::new(),
        })
    }

    fn table(&mut self) -> usize {
        if self.shape.tables <= 1 {
            0
        } else {
            self.rng.random_range(0..self.shape.tables as usize)
        }
    }

    fn id(&mut self) -> i32 {
        (self.keys.next_key() + 1) as i32
    }

    /// The first id of a range of `self.range` rows that ends inside the table.
    fn range_start(&mut self) -> i32 {
        let last_start = self.shape.table_size.saturating_sub(self.range) + 1;
        let k = self.keys.next_key();
        (k.min(last_start - 1) + 1) as i32
    }

    /// sysbench's c and pad values: groups of 11 random digits joined by '-'.
    fn fill_strings(&mut self) {
        fill_digits(&mut self.rng, &mut self.c, 10);
        fill_digits(&mut self.rng, &mut self.pad, 5);
    }

    /// Runs one event of the step's microbenchmark.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        use SqlKind::*;
        match self.kind {
            Load => self.load_step(),
            PgbenchLoad | TpcbLike | SimpleUpdate | SelectOnly | TpccLoad | TprocC | YcsbLoad
            | YcsbA | YcsbB | YcsbC | YcsbD | YcsbE | YcsbF | CachedSelect | Script | Lua
            | LuaPrepare => Err(SqlError::Input(format!(
                "{}: not a sysbench microbenchmark (crate::drivers picks its client)",
                self.kind
            ))),
            PointQuery => {
                let t = self.table();
                let id = self.id();
                let rows = self.client.query(self.stmts[t][0], &[Param::Int(id)])?;
                if self.all_present && rows != 1 {
                    return Err(SqlError::Verify(format!(
                        "point-query of id {id} in sbtest{} returned {rows} rows, not 1",
                        t + 1
                    )));
                }
                Ok(one(rows))
            }
            RandomPoints10 | RandomPoints100 | RandomPoints1000 => {
                let n = match self.kind {
                    RandomPoints10 => 10,
                    RandomPoints100 => 100,
                    _ => 1000,
                };
                let t = self.table();
                self.random_ids(n);
                let rows = self.query_list(t, 0)?;
                Ok(one(rows))
            }
            HotPoints => {
                let t = self.table();
                self.inlist.clear();
                let hot = (INLIST as i32).min(self.shape.table_size as i32);
                self.inlist.extend((0..INLIST as i32).map(|i| i % hot + 1));
                let rows = self.query_list(t, 0)?;
                self.check_ids(rows, t)?;
                Ok(one(rows))
            }
            PointsCoveredPk | PointsNotcoveredPk | PointsCoveredSi | PointsNotcoveredSi => {
                let t = self.table();
                self.random_ids(INLIST);
                let rows = self.query_list(t, 0)?;
                if matches!(self.kind, PointsCoveredPk | PointsNotcoveredPk) {
                    self.check_ids(rows, t)?;
                }
                Ok(one(rows))
            }
            RangeCoveredPk | RangeNotcoveredPk | RangeCoveredSi | RangeNotcoveredSi
            | ReadOnlySimple | ReadOnlySum | ReadOnlyOrder | ReadOnlyDistinct | ReadOnlyCount => {
                let t = self.table();
                let rows = self.range_query(t, 0)?;
                if matches!(
                    self.kind,
                    RangeCoveredPk | RangeNotcoveredPk | ReadOnlySimple | ReadOnlyOrder
                ) && self.all_present
                    && rows != self.range
                {
                    return Err(SqlError::Verify(format!(
                        "{} over {} ids of sbtest{} returned {rows} rows",
                        self.kind,
                        self.range,
                        t + 1
                    )));
                }
                Ok(one(rows))
            }
            Scan => {
                let t = self.table();
                let rows = self.client.query(self.stmts[t][0], &[])?;
                Ok(one(rows))
            }
            ReadOnly10 | ReadOnly100 | ReadOnly10000 => self.transaction(false),
            ReadWrite10 | ReadWrite100 => self.transaction(true),
            WriteOnly => self.retrying(|s| {
                let t = s.table();
                s.client.batch("BEGIN")?;
                let rows = s.writes(t, 0)?;
                s.client.batch("COMMIT")?;
                Ok(Outcome {
                    queries: 6,
                    rows,
                    ops: 6,
                    ..Outcome::default()
                })
            }),
            UpdateIndex => self.retrying(|s| {
                let t = s.table();
                let id = s.id();
                let rows = s.client.execute(s.stmts[t][0], &[Param::Int(id)])?;
                Ok(one(rows))
            }),
            UpdateNonindex | UpdateOne | UpdateZipf => self.retrying(|s| {
                let t = s.table();
                let id = if s.kind == UpdateOne { 1 } else { s.id() };
                fill_digits(&mut s.rng, &mut s.c, 10);
                let rows = s
                    .client
                    .execute(s.stmts[t][0], &[Param::Str(&s.c), Param::Int(id)])?;
                Ok(one(rows))
            }),
            UpdateInlist => self.retrying(|s| {
                let t = s.table();
                s.random_ids(INLIST);
                s.bind_list();
                let rows = s.client.execute(s.stmts[t][0], &s.list_params)?;
                Ok(one(rows))
            }),
            Delete => self.retrying(|s| {
                let t = s.table();
                let id = s.id();
                let rows = s.client.execute(s.stmts[t][0], &[Param::Int(id)])?;
                Ok(one(rows))
            }),
            Insert => self.retrying(|s| {
                let t = s.table();
                let id = s.next_insert as i32;
                s.next_insert += s.insert_stride;
                let k = s.id();
                s.fill_strings();
                let rows = s.client.execute(
                    s.stmts[t][0],
                    &[
                        Param::Int(id),
                        Param::Int(k),
                        Param::Str(&s.c),
                        Param::Str(&s.pad),
                    ],
                )?;
                Ok(one(rows))
            }),
        }
    }

    /// `n` ids from the key distribution into `inlist`.
    fn random_ids(&mut self, n: usize) {
        self.inlist.clear();
        for _ in 0..n {
            let k = self.id();
            self.inlist.push(k);
        }
    }

    fn bind_list(&mut self) {
        self.list_params.clear();
        self.list_params
            .extend(self.inlist.iter().map(|v| Param::Int(*v)));
    }

    fn query_list(&mut self, t: usize, i: usize) -> Result<u64, SqlError> {
        self.bind_list();
        self.client.query(self.stmts[t][i], &self.list_params)
    }

    /// A primary-key IN-list finds each distinct id once while every id exists.
    fn check_ids(&mut self, rows: u64, t: usize) -> Result<(), SqlError> {
        if !self.all_present {
            return Ok(());
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.inlist);
        self.scratch.sort_unstable();
        self.scratch.dedup();
        if rows != self.scratch.len() as u64 {
            return Err(SqlError::Verify(format!(
                "{} with {} distinct ids of sbtest{} returned {rows} rows",
                self.kind,
                self.scratch.len(),
                t + 1
            )));
        }
        Ok(())
    }

    fn range_query(&mut self, t: usize, i: usize) -> Result<u64, SqlError> {
        let a = self.range_start();
        let b = a + self.range as i32 - 1;
        self.client
            .query(self.stmts[t][i], &[Param::Int(a), Param::Int(b)])
    }

    /// oltp_read_only / oltp_read_write: BEGIN, 10 point selects, the four ranges,
    /// (the writes,) COMMIT.
    fn transaction(&mut self, write: bool) -> Result<Outcome, SqlError> {
        self.retrying(|s| {
            let t = s.table();
            s.client.batch("BEGIN")?;
            let mut rows = 0;
            for _ in 0..10 {
                let id = s.id();
                rows += s.client.query(s.stmts[t][0], &[Param::Int(id)])?;
            }
            for i in 1..=4 {
                rows += s.range_query(t, i)?;
            }
            let mut queries = 16;
            if write {
                rows += s.writes(t, 5)?;
                queries += 4;
            }
            s.client.batch("COMMIT")?;
            Ok(Outcome {
                queries,
                rows,
                ops: queries,
                ..Outcome::default()
            })
        })
    }

    /// oltp_write_only's writes: update k, update c, delete a row and insert it again.
    fn writes(&mut self, t: usize, first: usize) -> Result<u64, SqlError> {
        let mut rows = 0;
        let id = self.id();
        rows += self
            .client
            .execute(self.stmts[t][first], &[Param::Int(id)])?;
        let id = self.id();
        fill_digits(&mut self.rng, &mut self.c, 10);
        rows += self.client.execute(
            self.stmts[t][first + 1],
            &[Param::Str(&self.c), Param::Int(id)],
        )?;
        let id = self.id();
        let k = self.id();
        rows += self
            .client
            .execute(self.stmts[t][first + 2], &[Param::Int(id)])?;
        self.fill_strings();
        rows += self.client.execute(
            self.stmts[t][first + 3],
            &[
                Param::Int(id),
                Param::Int(k),
                Param::Str(&self.c),
                Param::Str(&self.pad),
            ],
        )?;
        Ok(rows)
    }

    /// Runs `f`; a conflict sysbench ignores (deadlock, duplicate key) rolls back and
    /// counts as a retry instead of failing the step.
    fn retrying(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<Outcome, SqlError>,
    ) -> Result<Outcome, SqlError> {
        match f(self) {
            Err(e) if e.retryable() => {
                self.client.batch("ROLLBACK")?;
                Ok(Outcome {
                    queries: 1,
                    ops: 1,
                    retried: true,
                    ..Outcome::default()
                })
            }
            other => other,
        }
    }

    /// One unit of the load: create a table, insert a batch, index, analyze.
    fn load_step(&mut self) -> Result<Outcome, SqlError> {
        let next_table = |tables: &[u32], t: u32| {
            tables
                .iter()
                .position(|x| *x == t)
                .and_then(|i| tables.get(i + 1))
                .map(|n| LoadAt::Create(*n))
                .unwrap_or(LoadAt::Finished)
        };
        match self.load {
            LoadAt::Finished => Ok(Outcome {
                done: true,
                ..Outcome::default()
            }),
            LoadAt::Create(t) => {
                self.client
                    .batch(&format!("DROP TABLE IF EXISTS sbtest{t}"))?;
                self.client.batch(&format!(
                    "CREATE TABLE sbtest{t} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, \
                     c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, \
                     PRIMARY KEY (id)){}",
                    self.shape.engine_clause
                ))?;
                self.load = LoadAt::Rows(t, 1);
                Ok(Outcome {
                    queries: 2,
                    ..Outcome::default()
                })
            }
            LoadAt::Rows(t, from) => {
                let to = (from + LOAD_BATCH - 1).min(self.shape.table_size);
                if from > to {
                    self.load = LoadAt::Index(t);
                    return Ok(Outcome::default());
                }
                let mut text = std::mem::take(&mut self.load_text);
                text.clear();
                text.push_str(&format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES "));
                for id in from..=to {
                    let k = self.id();
                    self.fill_strings();
                    if id > from {
                        text.push(',');
                    }
                    text.push_str(&format!("({id},{k},'{}','{}')", self.c, self.pad));
                }
                let r = self.client.batch(&text);
                self.load_text = text;
                r?;
                let n = to - from + 1;
                self.load = LoadAt::Rows(t, to + 1);
                Ok(Outcome {
                    queries: 1,
                    rows: n,
                    ops: n,
                    ..Outcome::default()
                })
            }
            LoadAt::Index(t) => {
                self.client
                    .batch(&format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))?;
                self.load = LoadAt::Analyze(t);
                Ok(Outcome {
                    queries: 1,
                    ..Outcome::default()
                })
            }
            LoadAt::Analyze(t) => {
                // PostgreSQL: VACUUM sets the visibility map, so covered queries can be
                // index-only from the first step, as the seeds' runs do after loading.
                if self.shape.postgres {
                    self.client.batch(&format!("VACUUM ANALYZE sbtest{t}"))?;
                } else {
                    self.client.rows(&format!("ANALYZE TABLE sbtest{t}"))?;
                }
                self.load = next_table(&self.load_tables, t);
                Ok(Outcome {
                    queries: 1,
                    ..Outcome::default()
                })
            }
        }
    }
}

fn one(rows: u64) -> Outcome {
    Outcome {
        queries: 1,
        rows,
        ops: 1,
        ..Outcome::default()
    }
}

/// `groups` groups of 11 random digits joined by '-' (sysbench's value templates).
fn fill_digits(rng: &mut SmallRng, out: &mut String, groups: usize) {
    out.clear();
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        for _ in 0..11 {
            out.push(char::from(b'0' + rng.random_range(0..10u8)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_statements_with_its_table_and_matching_placeholders() {
        let sysbench =
            SqlKind::all().filter(|k| k.tables() == plumb_workloads::SqlTables::Sysbench);
        for k in sysbench {
            let s = statements(k, 3);
            assert_eq!(s.is_empty(), k == SqlKind::Load, "{k}");
            for q in &s {
                assert!(q.contains("sbtest3") && !q.contains("{t}"), "{k}: {q}");
            }
        }
        let q = &statements(SqlKind::RandomPoints1000, 1)[0];
        assert_eq!(q.matches('?').count(), 1000);
        assert_eq!(statements(SqlKind::ReadWrite10, 1).len(), 9);
    }

    #[test]
    fn values_follow_sysbench_templates() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut s = String::new();
        fill_digits(&mut rng, &mut s, 10);
        assert_eq!(s.len(), 119);
        assert_eq!(s.matches('-').count(), 9);
        fill_digits(&mut rng, &mut s, 5);
        assert_eq!(s.len(), 59);
    }
}
