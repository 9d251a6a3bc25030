//! pgbench's built-in scripts (`tpcb-like`, `simple-update`, `select-only`) and the
//! four tables `pgbench -i` makes, so plumb can be judged against pgbench itself on the
//! same server and the same tables (bench/compare-pgbench.sh), and run PostgreSQL's own
//! benchmark with plumb's costs per query. Facts taken from PostgreSQL's
//! src/bin/pgbench/pgbench.c: the statements and random ranges of its built-in
//! scripts, the columns, filler widths and fillfactor of `-i`, its fill (balances 0,
//! filler NULL in branches and tellers, blank in accounts) and its order: tables, data,
//! VACUUM ANALYZE, then the primary keys.
//!
//! One client thread is one [`PgbenchThread`] (its connection, its statements prepared
//! once as `pgbench -M prepared` prepares them, its random state), one transaction per
//! [`PgbenchThread::event`]. Loading is [`create_tables`], then one [`PgbenchLoader`]
//! per thread, then [`after_load`].

use crate::bench::Outcome;
use plumb_servers::client::{Endpoint, Param, Protocol, SqlClient, Stmt};
use plumb_servers::SqlError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;

/// Branches per unit of scale (pgbench's `nbranches`): the scale is the branch count.
pub const BRANCHES: u32 = 1;
/// Tellers per unit of scale (pgbench's `ntellers`).
pub const TELLERS: u32 = 10;
/// Accounts per unit of scale (pgbench's `naccounts`).
pub const ACCOUNTS: u32 = 100_000;
/// The largest scale plumb runs: statement parameters are 32-bit ([`Param::Int`]), and
/// aid goes up to 100000 × scale.
pub const MAX_SCALE: u32 = (i32::MAX as u32) / ACCOUNTS;
/// The scale from which `pgbench -i` declares aid as bigint (its SCALE_32BIT_THRESHOLD),
/// so tables plumb creates at such a scale have the types pgbench's would.
pub const BIGINT_SCALE: u32 = 20_000;
/// Rows per INSERT while loading: one statement per 1000 rows keeps the load's client
/// cost per row small without one huge statement per thread.
pub const LOAD_ROWS: u32 = 1000;
/// Tries of one transaction that hit a serialization failure or a deadlock before the
/// step fails (pgbench's `--max-tries`; see [`PgbenchThread`] for why plumb retries).
pub const MAX_TRIES: u32 = 100;

const UPDATE_ACCOUNTS: &str = "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?";
const SELECT_ACCOUNT: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = ?";
const UPDATE_TELLERS: &str = "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?";
const UPDATE_BRANCHES: &str = "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?";
const INSERT_HISTORY: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
                              VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)";

/// The four tables, in the order `pgbench -i` drops them.
pub const TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// What the tables are and where they live: the same on every thread of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgbenchConfig {
    /// pgbench's scale factor: `scale` branches, 10 × scale tellers, 100000 × scale
    /// accounts; the scripts draw their keys from these ranges.
    pub scale: u32,
    /// The server speaks PostgreSQL: pgbench's own DDL and VACUUM; otherwise the
    /// MySQL translation (see [`create_tables`]). Must match the endpoint's protocol.
    pub postgres: bool,
    /// ` ENGINE = …` appended to each CREATE TABLE on MySQL-protocol servers (InnoDB,
    /// MyRocks), empty for PostgreSQL: the engine is what such a run compares.
    pub engine_clause: String,
}

impl PgbenchConfig {
    /// A scale the scripts can run at: 1..=[`MAX_SCALE`], as an input error otherwise,
    /// since a 0 would make every random range empty and a larger one overflow aid.
    pub fn check(&self) -> Result<(), SqlError> {
        if self.scale == 0 || self.scale > MAX_SCALE {
            return Err(SqlError::Input(format!(
                "pgbench scale {}: use 1..={MAX_SCALE} (aid = 100000 × scale must fit a \
                 32-bit integer)",
                self.scale
            )));
        }
        Ok(())
    }
}

/// The CREATE TABLE statements, in `pgbench -i`'s order (history, tellers, accounts,
/// branches). PostgreSQL: pgbench's text, `fillfactor=100` (its default `-F`) on all but
/// history, aid bigint from [`BIGINT_SCALE`] on. MySQL protocol: the same columns and
/// widths with two differences — no fillfactor (InnoDB and MyRocks have none; InnoDB
/// fills pages to 15/16 on sequential inserts), and `mtime` is DATETIME, MySQL's type
/// for PostgreSQL's `timestamp` (without time zone): MySQL's TIMESTAMP is stored as UTC
/// and limited to 1970-2038 — then the engine clause.
fn ddl(cfg: &PgbenchConfig) -> [String; 4] {
    let aid = if cfg.scale >= BIGINT_SCALE {
        "bigint"
    } else {
        "int"
    };
    let (mtime, ff, tail) = if cfg.postgres {
        ("timestamp", " with (fillfactor=100)", "")
    } else {
        ("datetime", "", cfg.engine_clause.as_str())
    };
    [
        format!(
            "create table pgbench_history(tid int,bid int,aid {aid},delta int,\
             mtime {mtime},filler char(22)){tail}"
        ),
        format!(
            "create table pgbench_tellers(tid int not null,bid int,tbalance int,\
             filler char(84)){ff}{tail}"
        ),
        format!(
            "create table pgbench_accounts(aid {aid} not null,bid int,abalance int,\
             filler char(84)){ff}{tail}"
        ),
        format!(
            "create table pgbench_branches(bid int not null,bbalance int,\
             filler char(88)){ff}{tail}"
        ),
    ]
}

/// Drops the four tables and creates them as `pgbench -i` does (its `d` and `t` steps),
/// without primary keys: [`after_load`] adds them once the rows are in, as pgbench
/// does, because building an index once is cheaper than maintaining it per row. On
/// MySQL-protocol servers the DDL is translated (see `ddl`: no fillfactor, DATETIME
/// for `timestamp`, the engine clause).
pub fn create_tables(client: &mut dyn SqlClient, cfg: &PgbenchConfig) -> Result<(), SqlError> {
    cfg.check()?;
    client.batch(&format!("drop table if exists {}", TABLES.join(", ")))?;
    for sql in ddl(cfg) {
        client.batch(&sql)?;
    }
    Ok(())
}

/// What `pgbench -i` does after the data, so a plumb-loaded database is the one pgbench
/// would have made. PostgreSQL: VACUUM ANALYZE of each table (the visibility map and
/// statistics), then the primary keys, in pgbench's order. MySQL protocol: the primary
/// keys first, then ANALYZE TABLE, because adding a primary key rebuilds an InnoDB
/// table (its clustered index) and statistics taken before would describe the old one.
pub fn after_load(client: &mut dyn SqlClient, cfg: &PgbenchConfig) -> Result<(), SqlError> {
    let keys = [
        "alter table pgbench_branches add primary key (bid)",
        "alter table pgbench_tellers add primary key (tid)",
        "alter table pgbench_accounts add primary key (aid)",
    ];
    let order = [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ];
    if cfg.postgres {
        for t in order {
            client.batch(&format!("vacuum analyze {t}"))?;
        }
        for k in keys {
            client.batch(k)?;
        }
    } else {
        for k in keys {
            client.batch(k)?;
        }
        for t in order {
            // ANALYZE TABLE returns a result set: read it, not a batch.
            client.rows(&format!("analyze table {t}"))?;
        }
    }
    Ok(())
}

/// The scale of existing tables, as pgbench reads it: the row count of
/// pgbench_branches. It lets plumb run on tables made by `pgbench -i -s N` without
/// being told N, and refuses tables with no branches (an unfinished load).
pub fn scale_of(client: &mut dyn SqlClient) -> Result<u32, SqlError> {
    let rows = client
        .rows("select count(*) from pgbench_branches")
        .map_err(|e| match e {
            SqlError::Query { code: Some(c), .. } if c == "42P01" || c == "1146" => {
                SqlError::Input(
                    "no pgbench_branches table: make the tables with `pgbench -i -s SCALE` or \
                 plumb's pgbench load first"
                        .into(),
                )
            }
            e => e,
        })?;
    let n: u64 = rows
        .first()
        .and_then(|r| r.first())
        .and_then(|(_, v)| v.as_deref())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| SqlError::Verify("count(*) from pgbench_branches gave no number".into()))?;
    if n == 0 || n > u64::from(MAX_SCALE) {
        return Err(SqlError::Input(format!(
            "pgbench_branches has {n} rows: the scale must be 1..={MAX_SCALE}; make the \
             tables again with `pgbench -i -s SCALE`"
        )));
    }
    Ok(n as u32)
}

/// One of pgbench's built-in scripts (`pgbench -b NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PgbenchScript {
    /// `tpcb-like`, pgbench's default: update an account, read it back, update its
    /// teller and branch, append to history, in one transaction.
    TpcbLike,
    /// `simple-update` (`-N`): tpcb-like without the teller and branch updates, so
    /// clients do not queue on the few branch rows.
    SimpleUpdate,
    /// `select-only` (`-S`): one primary-key read of an account, no transaction block.
    SelectOnly,
}

impl PgbenchScript {
    /// Every script, in pgbench's order.
    pub const ALL: [PgbenchScript; 3] = [
        PgbenchScript::TpcbLike,
        PgbenchScript::SimpleUpdate,
        PgbenchScript::SelectOnly,
    ];

    /// The name pgbench's `-b` takes and plumb's `--steps` uses, so both tools' command
    /// lines name the same thing.
    pub fn name(self) -> &'static str {
        match self {
            PgbenchScript::TpcbLike => "tpcb-like",
            PgbenchScript::SimpleUpdate => "simple-update",
            PgbenchScript::SelectOnly => "select-only",
        }
    }

    /// The script of that name, if it is one of pgbench's built-in three.
    pub fn from_name(name: &str) -> Option<PgbenchScript> {
        PgbenchScript::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The SQL statements of one transaction in the order they are sent, BEGIN and the
    /// end included, with `?` where pgbench has its variables: what a reader checks
    /// against `pgbench --show-script NAME`. The end is `END` on PostgreSQL, as
    /// pgbench writes it, and `COMMIT` on MySQL, which has no END.
    pub fn statements(self, postgres: bool) -> Vec<&'static str> {
        let end = if postgres { "END" } else { "COMMIT" };
        match self {
            PgbenchScript::TpcbLike => vec![
                "BEGIN",
                UPDATE_ACCOUNTS,
                SELECT_ACCOUNT,
                UPDATE_TELLERS,
                UPDATE_BRANCHES,
                INSERT_HISTORY,
                end,
            ],
            PgbenchScript::SimpleUpdate => vec![
                "BEGIN",
                UPDATE_ACCOUNTS,
                SELECT_ACCOUNT,
                INSERT_HISTORY,
                end,
            ],
            PgbenchScript::SelectOnly => vec![SELECT_ACCOUNT],
        }
    }
}

impl std::fmt::Display for PgbenchScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PgbenchScript {
    type Err = SqlError;

    fn from_str(s: &str) -> Result<Self, SqlError> {
        PgbenchScript::from_name(s).ok_or_else(|| {
            SqlError::Input(format!(
                "{s:?} is not a pgbench built-in script; use tpcb-like, simple-update or \
                 select-only"
            ))
        })
    }
}

/// What a step hands each pgbench thread (loader or client).
#[derive(Debug, Clone)]
pub struct PgbenchThreadPlan {
    /// The tables.
    pub cfg: PgbenchConfig,
    /// The script a [`PgbenchThread`] runs (a loader ignores it).
    pub script: PgbenchScript,
    /// This thread's seed: threads draw different keys, and a run can be repeated.
    pub seed: u64,
    /// This thread's index, 0-based: which share of the rows a loader inserts.
    pub thread: usize,
    /// Threads in the step.
    pub threads: usize,
}

/// The ids of `n` rows that thread `t` of `threads` loads: contiguous shares that
/// together cover 1..=n once.
fn share(n: u64, t: usize, threads: usize) -> (u64, u64) {
    let (t, k) = (t as u64, threads.max(1) as u64);
    (n * t / k + 1, n * (t + 1) / k)
}

/// The three tables a loader fills, in pgbench's order (branches before tellers before
/// accounts, so foreign keys, if a user adds them, hold at every point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Branches,
    Tellers,
    Accounts,
}

/// One loading thread: inserts its share of the branches, tellers and accounts, 1000
/// rows per multi-row INSERT, one statement per [`PgbenchLoader::event`]. pgbench itself
/// loads with COPY (FREEZE from PostgreSQL 14) in one transaction on one connection
/// after a TRUNCATE; plumb inserts in autocommit on several connections, one protocol
/// for both servers and the MySQL-protocol ones have no COPY. The rows are pgbench's:
/// balances 0, the filler NULL in branches and tellers and blank in accounts, bid =
/// (tid − 1) / 10 + 1 and (aid − 1) / 100000 + 1. The tables must exist
/// ([`create_tables`]) and be empty.
pub struct PgbenchLoader {
    client: Box<dyn SqlClient>,
    part: Option<Part>,
    next: u64,
    last: u64,
    plan: PgbenchThreadPlan,
    /// The statement text, reused: a chunk allocates nothing once it has grown.
    text: String,
}

impl PgbenchLoader {
    /// Connects; the first call to [`event`](Self::event) inserts the first chunk.
    pub fn new(ep: &Endpoint, plan: &PgbenchThreadPlan) -> Result<PgbenchLoader, SqlError> {
        plan.cfg.check()?;
        check_protocol(ep, &plan.cfg)?;
        let client = ep.connect()?;
        let mut l = PgbenchLoader {
            client,
            part: None,
            next: 1,
            last: 0,
            plan: plan.clone(),
            text: String::with_capacity(64 * LOAD_ROWS as usize),
        };
        l.enter(Some(Part::Branches));
        Ok(l)
    }

    /// Rows per unit of scale of a part.
    fn per_scale(p: Part) -> u64 {
        u64::from(match p {
            Part::Branches => BRANCHES,
            Part::Tellers => TELLERS,
            Part::Accounts => ACCOUNTS,
        })
    }

    /// Starts this thread's share of `part`.
    fn enter(&mut self, part: Option<Part>) {
        self.part = part;
        if let Some(p) = part {
            let n = Self::per_scale(p) * u64::from(self.plan.cfg.scale);
            (self.next, self.last) = share(n, self.plan.thread, self.plan.threads);
        }
    }

    /// Inserts the next chunk of up to 1000 rows: `Outcome { queries: 1, rows, ops:
    /// rows }`. Once the thread's share is in, it returns `done: true` with no rows, on
    /// a call of its own, because the step's loop does not count a done outcome.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        loop {
            let Some(part) = self.part else {
                return Ok(Outcome {
                    done: true,
                    ..Outcome::default()
                });
            };
            if self.next > self.last {
                self.enter(match part {
                    Part::Branches => Some(Part::Tellers),
                    Part::Tellers => Some(Part::Accounts),
                    Part::Accounts => None,
                });
                continue;
            }
            let from = self.next;
            let to = (from + u64::from(LOAD_ROWS) - 1).min(self.last);
            let t = &mut self.text;
            t.clear();
            t.push_str(match part {
                Part::Branches => "insert into pgbench_branches(bid,bbalance) values ",
                Part::Tellers => "insert into pgbench_tellers(tid,bid,tbalance) values ",
                Part::Accounts => "insert into pgbench_accounts(aid,bid,abalance,filler) values ",
            });
            for id in from..=to {
                if id > from {
                    t.push(',');
                }
                // Writing into a String cannot fail.
                let _ = match part {
                    Part::Branches => write!(t, "({id},0)"),
                    Part::Tellers => write!(t, "({id},{},0)", (id - 1) / u64::from(TELLERS) + 1),
                    Part::Accounts => {
                        write!(t, "({id},{},0,'')", (id - 1) / u64::from(ACCOUNTS) + 1)
                    }
                };
            }
            self.client.batch(&self.text)?;
            self.next = to + 1;
            let n = to - from + 1;
            return Ok(Outcome {
                queries: 1,
                rows: n,
                ops: n,
                ..Outcome::default()
            });
        }
    }
}

fn check_protocol(ep: &Endpoint, cfg: &PgbenchConfig) -> Result<(), SqlError> {
    if cfg.postgres != (ep.protocol == Protocol::Postgres) {
        return Err(SqlError::Input(format!(
            "pgbench tables for {} but the endpoint {} speaks the other protocol",
            if cfg.postgres { "PostgreSQL" } else { "MySQL" },
            ep.redacted_url()
        )));
    }
    Ok(())
}

/// A serialization failure or a deadlock, the errors pgbench retries under
/// `--max-tries`: SQLSTATE 40001 and 40P01 on PostgreSQL; on MySQL and MariaDB a
/// deadlock (1213, SQLSTATE 40001) and a snapshot-isolation conflict (1020, "record has
/// changed since last read"). Not a lock wait timeout, which is not a conflict but a
/// server too slow, nor a duplicate key, which pgbench's scripts cannot cause.
pub(crate) fn is_conflict(e: &SqlError) -> bool {
    matches!(e, SqlError::Query { code: Some(c), .. }
        if matches!(c.as_str(), "40001" | "40P01" | "1213" | "1020"))
}

/// The prepared statements a script uses; BEGIN and END are prepared on PostgreSQL
/// only (see [`PgbenchThread`]).
struct Prepared {
    begin: Option<Stmt>,
    end: Option<Stmt>,
    update_accounts: Stmt,
    select: Stmt,
    update_tellers: Stmt,
    update_branches: Stmt,
    insert_history: Stmt,
}

/// One client thread running one of pgbench's built-in scripts, one transaction per
/// [`event`](Self::event), with pgbench's statements and random ranges: aid uniform in
/// 1..=100000 × scale, bid in 1..=scale, tid in 1..=10 × scale, delta in −5000..=5000,
/// drawn fresh per transaction (select-only draws aid only).
///
/// Statements are prepared once per connection, as `pgbench -M prepared` prepares every
/// SQL command of its script, BEGIN and END included: on PostgreSQL plumb prepares
/// those two as well, so both tools send the same messages (Bind/Execute/Sync per
/// statement). On MySQL-protocol servers BEGIN and COMMIT go as plain queries, as
/// sysbench sends them, and COMMIT stands for END.
///
/// Every statement's effect is checked (each UPDATE and the INSERT change one row, the
/// SELECT finds one), so a benchmark on tables that are not pgbench's fails instead of
/// measuring nothing; on MySQL an UPDATE by delta 0 changes no row and counts as found.
///
/// Conflicts: pgbench's default (`--max-tries=1`) counts a transaction that hit a
/// serialization failure or a deadlock as failed and goes on. plumb retries it instead,
/// from BEGIN with the same keys and delta after a ROLLBACK, as `pgbench --max-tries`
/// does, up to [`MAX_TRIES`] tries, because a step's rate counts committed
/// transactions only and a failed one would be work the server did for nothing
/// counted; the outcome says `retried`. The built-in scripts lock accounts, then
/// tellers, then branches in every transaction, so under read committed they do not
/// deadlock and this path stays cold; at repeatable read or above (or a server that
/// detects conflicts differently) it keeps the run going. Any other error fails the
/// step.
pub struct PgbenchThread {
    client: Box<dyn SqlClient>,
    script: PgbenchScript,
    postgres: bool,
    stmts: Prepared,
    rng: SmallRng,
    accounts: i32,
    branches: i32,
    tellers: i32,
}

impl PgbenchThread {
    /// Connects and prepares the script's statements once.
    pub fn new(ep: &Endpoint, plan: &PgbenchThreadPlan) -> Result<PgbenchThread, SqlError> {
        plan.cfg.check()?;
        check_protocol(ep, &plan.cfg)?;
        let mut client = ep.connect()?;
        let postgres = plan.cfg.postgres;
        let script = plan.script;
        let used = script.statements(postgres);
        // Every script reads the account. A statement the script does not use is never
        // executed: its slot holds the SELECT's handle, so the hot path has no Option
        // per statement.
        let select = client.prepare(SELECT_ACCOUNT)?;
        let mut prep = |sql: &str| -> Result<Stmt, SqlError> {
            if used.contains(&sql) {
                client.prepare(sql)
            } else {
                Ok(select)
            }
        };
        let mut stmts = Prepared {
            begin: None,
            end: None,
            update_accounts: prep(UPDATE_ACCOUNTS)?,
            select,
            update_tellers: prep(UPDATE_TELLERS)?,
            update_branches: prep(UPDATE_BRANCHES)?,
            insert_history: prep(INSERT_HISTORY)?,
        };
        if postgres && used.contains(&"BEGIN") {
            stmts.begin = Some(client.prepare("BEGIN")?);
            stmts.end = Some(client.prepare("END")?);
        }
        let scale = plan.cfg.scale as i32;
        Ok(PgbenchThread {
            client,
            script,
            postgres,
            stmts,
            rng: SmallRng::seed_from_u64(plan.seed ^ 0x7067_6265_6e63_6800),
            accounts: ACCOUNTS as i32 * scale,
            branches: BRANCHES as i32 * scale,
            tellers: TELLERS as i32 * scale,
        })
    }

    /// Runs one transaction of the script (retried on a conflict, see the type's doc):
    /// `queries` = statements sent, BEGIN and END included (7 for tpcb-like, 5 for
    /// simple-update, 1 for select-only, plus every statement of a failed try and its
    /// ROLLBACK), `rows` = rows read or changed, `ops` = 1, so the step's rate is
    /// pgbench's TPS.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let aid = self.rng.random_range(1..=self.accounts);
        let (bid, tid, delta) = if self.script == PgbenchScript::SelectOnly {
            (0, 0, 0)
        } else {
            (
                self.rng.random_range(1..=self.branches),
                self.rng.random_range(1..=self.tellers),
                self.rng.random_range(-5000..=5000),
            )
        };
        let (mut tries, mut queries) = (0u32, 0u64);
        loop {
            tries += 1;
            match self.attempt(aid, bid, tid, delta, &mut queries) {
                Ok(rows) => {
                    return Ok(Outcome {
                        queries,
                        rows,
                        ops: 1,
                        retried: tries > 1,
                        ..Outcome::default()
                    })
                }
                Err(e) if is_conflict(&e) && tries < MAX_TRIES => {
                    self.client.batch("ROLLBACK")?;
                    queries += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn begin(&mut self) -> Result<(), SqlError> {
        match self.stmts.begin {
            Some(s) => self.client.execute(s, &[]).map(|_| ()),
            None => self.client.batch("BEGIN"),
        }
    }

    fn end(&mut self) -> Result<(), SqlError> {
        match self.stmts.end {
            Some(s) => self.client.execute(s, &[]).map(|_| ()),
            None => self.client.batch("COMMIT"),
        }
    }

    /// An UPDATE by `delta` changed its one row (or, on MySQL, found it unchanged).
    fn updated(&self, what: &str, key: i32, delta: i32, n: u64) -> Result<u64, SqlError> {
        let want = if !self.postgres && delta == 0 { 0 } else { 1 };
        if n != want {
            return Err(SqlError::Verify(format!(
                "{}: the update of {what} {key} changed {n} rows, not {want}; are these \
                 tables pgbench's at this scale?",
                self.script
            )));
        }
        Ok(1)
    }

    fn one(&self, what: &str, n: u64) -> Result<u64, SqlError> {
        if n != 1 {
            return Err(SqlError::Verify(format!(
                "{}: {what} gave {n} rows, not 1; are these tables pgbench's at this scale?",
                self.script
            )));
        }
        Ok(1)
    }

    /// One try of the transaction; `queries` counts each statement as it is sent.
    fn attempt(
        &mut self,
        aid: i32,
        bid: i32,
        tid: i32,
        delta: i32,
        queries: &mut u64,
    ) -> Result<u64, SqlError> {
        let s = self.stmts.select;
        if self.script == PgbenchScript::SelectOnly {
            *queries += 1;
            let n = self.client.query(s, &[Param::Int(aid)])?;
            return self.one("the select of account", n);
        }
        let mut rows = 0;
        *queries += 1;
        self.begin()?;
        *queries += 1;
        let n = self.client.execute(
            self.stmts.update_accounts,
            &[Param::Int(delta), Param::Int(aid)],
        )?;
        rows += self.updated("account", aid, delta, n)?;
        *queries += 1;
        let n = self.client.query(s, &[Param::Int(aid)])?;
        rows += self.one("the select of account", n)?;
        if self.script == PgbenchScript::TpcbLike {
            *queries += 1;
            let n = self.client.execute(
                self.stmts.update_tellers,
                &[Param::Int(delta), Param::Int(tid)],
            )?;
            rows += self.updated("teller", tid, delta, n)?;
            *queries += 1;
            let n = self.client.execute(
                self.stmts.update_branches,
                &[Param::Int(delta), Param::Int(bid)],
            )?;
            rows += self.updated("branch", bid, delta, n)?;
        }
        *queries += 1;
        let n = self.client.execute(
            self.stmts.insert_history,
            &[
                Param::Int(tid),
                Param::Int(bid),
                Param::Int(aid),
                Param::Int(delta),
            ],
        )?;
        rows += self.one("the insert into history", n)?;
        *queries += 1;
        self.end()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_row_once() {
        for (n, threads) in [(1u64, 2usize), (10, 3), (100_000, 2), (7, 7), (5, 8)] {
            let mut next = 1;
            for t in 0..threads {
                let (a, b) = share(n, t, threads);
                assert_eq!(a, next, "n {n} threads {threads} t {t}");
                assert!(b + 1 >= a);
                next = b + 1;
            }
            assert_eq!(next, n + 1, "n {n} threads {threads}");
        }
    }

    #[test]
    fn scripts_name_round_trip_and_count_pgbenchs_statements() {
        for s in PgbenchScript::ALL {
            assert_eq!(s.name().parse::<PgbenchScript>().unwrap(), s);
        }
        assert!("tpcb".parse::<PgbenchScript>().is_err());
        assert_eq!(PgbenchScript::TpcbLike.statements(true).len(), 7);
        assert_eq!(PgbenchScript::SimpleUpdate.statements(true).len(), 5);
        assert_eq!(PgbenchScript::SelectOnly.statements(true), [SELECT_ACCOUNT]);
        assert_eq!(PgbenchScript::TpcbLike.statements(false)[6], "COMMIT");
        let simple = PgbenchScript::SimpleUpdate.statements(true);
        assert!(!simple.contains(&UPDATE_TELLERS) && !simple.contains(&UPDATE_BRANCHES));
        // Parameters in the order event() binds them.
        assert_eq!(INSERT_HISTORY.matches('?').count(), 4);
    }

    #[test]
    fn ddl_follows_pgbench_and_translates_for_mysql() {
        let pg = PgbenchConfig {
            scale: 1,
            postgres: true,
            engine_clause: String::new(),
        };
        let d = ddl(&pg);
        assert!(d[0].starts_with("create table pgbench_history("));
        assert!(!d[0].contains("fillfactor") && d[0].contains("mtime timestamp"));
        for t in &d[1..] {
            assert!(t.ends_with(" with (fillfactor=100)"), "{t}");
        }
        assert!(d[2].contains("aid int not null") && d[2].contains("filler char(84)"));
        assert!(d[3].contains("filler char(88)"));
        let big = ddl(&PgbenchConfig {
            scale: BIGINT_SCALE,
            ..pg.clone()
        });
        assert!(big[0].contains("aid bigint") && big[2].contains("aid bigint not null"));
        let my = ddl(&PgbenchConfig {
            scale: 1,
            postgres: false,
            engine_clause: " ENGINE = InnoDB".into(),
        });
        for t in &my {
            assert!(
                t.ends_with(" ENGINE = InnoDB") && !t.contains("fillfactor"),
                "{t}"
            );
        }
        assert!(my[0].contains("mtime datetime"));
    }

    #[test]
    fn scale_bounds_are_refused() {
        for (scale, ok) in [
            (0, false),
            (1, true),
            (MAX_SCALE, true),
            (MAX_SCALE + 1, false),
        ] {
            let c = PgbenchConfig {
                scale,
                postgres: true,
                engine_clause: String::new(),
            };
            assert_eq!(c.check().is_ok(), ok, "scale {scale}");
        }
        // aid at the largest scale still fits the 32-bit parameter.
        assert!(i64::from(ACCOUNTS) * i64::from(MAX_SCALE) <= i64::from(i32::MAX));
    }

    #[test]
    fn only_serialization_failures_and_deadlocks_are_retried() {
        let e = |c: &str| SqlError::Query {
            context: String::new(),
            message: String::new(),
            code: Some(c.into()),
        };
        for c in ["40001", "40P01", "1213", "1020"] {
            assert!(is_conflict(&e(c)), "{c}");
        }
        for c in ["23505", "1062", "1205", "42P01"] {
            assert!(!is_conflict(&e(c)), "{c}");
        }
    }
}
