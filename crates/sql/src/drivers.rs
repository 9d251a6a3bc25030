//! Which client object runs a SQL step, by the tables it works on: sysbench's
//! microbenchmarks ([`ThreadState`]), pgbench's scripts, TPROC-C and YCSB's core
//! workloads. The step ([`crate::run`]) drives any of them the same way, one event per
//! op of the runner's timed loop; what differs per family is here: the client of
//! each thread, what a load does before its threads start and after they end, what a
//! step checks when it is over, and the names of the kinds of operation it times apart.
//! A new family is one module and one arm in each function below.

use crate::bench::{Outcome, Shape, ThreadPlan, ThreadState};
use crate::ceiling::{self, CachedSelectThread};
use crate::lua::{LuaPrepare, LuaThread, LuaThreadPlan};
use crate::pgbench::{self, PgbenchConfig, PgbenchLoader, PgbenchScript, PgbenchThread};
use crate::pgscript::{ScriptThread, ScriptThreadPlan};
use crate::tpcc::{self, TpccConfig, TpccLoader, TpccThread, TpccThreadPlan};
use crate::ycsb::{self, YcsbPhase, YcsbSqlPlan, YcsbSqlThread};
use plumb_servers::client::{Endpoint, SqlClient};
use plumb_servers::SqlError;
use plumb_workloads::ycsb::{CoreParams, YcsbShared};
use plumb_workloads::{SqlKind, SqlTables};
use std::sync::Arc;
use std::time::Duration;

/// One client thread of a step, whatever its family.
pub trait Driver: Send {
    /// Runs one event: a transaction, one statement, or a chunk of a load.
    fn event(&mut self) -> Result<Outcome, SqlError>;
    /// Time to wait after the event, outside its timing (TPC-C's keying and think
    /// times when the spec's timing is asked for).
    fn pause(&mut self) -> Duration {
        Duration::ZERO
    }
    /// After the thread's last event, before its connection closes (a Lua script's
    /// thread_done); an error fails the step.
    fn finish(&mut self) -> Result<(), SqlError> {
        Ok(())
    }
    /// Hands the last event's parts to `f` (a Lua script's statements: kind, latency
    /// in ns), for steps that time statements within a transaction.
    fn parts(&mut self, f: &mut dyn FnMut(u8, u64)) {
        let _ = f;
    }
}

impl Driver for LuaThread {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        LuaThread::event(self)
    }
    fn finish(&mut self) -> Result<(), SqlError> {
        LuaThread::finish(self)
    }
    fn parts(&mut self, f: &mut dyn FnMut(u8, u64)) {
        LuaThread::parts(self, f)
    }
}

impl Driver for LuaPrepare {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        LuaPrepare::event(self)
    }
}

impl Driver for ThreadState {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        ThreadState::event(self)
    }
}

impl Driver for PgbenchThread {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        PgbenchThread::event(self)
    }
}

impl Driver for ScriptThread {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        ScriptThread::event(self)
    }
}

impl Driver for PgbenchLoader {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        PgbenchLoader::event(self)
    }
}

impl Driver for TpccLoader {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        TpccLoader::event(self)
    }
}

impl Driver for TpccThread {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        TpccThread::event(self)
    }
    fn pause(&mut self) -> Duration {
        TpccThread::pause(self)
    }
}

impl Driver for CachedSelectThread {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        CachedSelectThread::event(self)
    }
}

impl Driver for YcsbSqlThread {
    fn event(&mut self) -> Result<Outcome, SqlError> {
        YcsbSqlThread::event(self)
    }
}

/// State a step's threads share, made once before they start (YCSB's insert counter).
#[derive(Clone, Default)]
pub struct StepShared {
    ycsb: Option<Arc<YcsbShared>>,
}

impl StepShared {
    /// The next YCSB insert key after this step (its inserts acknowledged or not).
    pub fn ycsb_next_insert(&self) -> Option<i64> {
        self.ycsb.as_ref().map(|s| s.inserts().peek_next())
    }
}

/// YCSB's parameters for `kind`: its workload file's preset (the load uses A's, whose
/// load is every workload's), the shape's record count, no operation count (a run phase
/// lasts the step's duration, as YCSB's maxexecutiontime; the workload files' 1000 ops
/// would end it in a fraction of a second), then the user's properties, which may set
/// one.
pub fn ycsb_params(kind: SqlKind, shape: &Shape) -> Result<CoreParams, SqlError> {
    let bad = |e: plumb_workloads::ycsb::YcsbError| SqlError::Input(format!("ycsb: {e}"));
    let mut p = CoreParams::preset(kind.ycsb_letter().unwrap_or('a')).map_err(bad)?;
    let count = shape.ycsb_records.to_string();
    p.set("recordcount", &count).map_err(bad)?;
    p.set("operationcount", "0").map_err(bad)?;
    p.set_all(
        shape
            .ycsb_props
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .map_err(bad)?;
    Ok(p)
}

fn pgbench_cfg(shape: &Shape) -> PgbenchConfig {
    PgbenchConfig {
        scale: shape.scale,
        postgres: shape.postgres,
        engine_clause: shape.engine_clause.clone(),
    }
}

fn tpcc_cfg(shape: &Shape) -> TpccConfig {
    TpccConfig {
        warehouses: shape.warehouses,
        engine_clause: shape.engine_clause.clone(),
        postgres: shape.postgres,
        spec_timing: shape.spec_timing,
    }
}

fn script(kind: SqlKind) -> PgbenchScript {
    match kind {
        SqlKind::SimpleUpdate => PgbenchScript::SimpleUpdate,
        SqlKind::SelectOnly => PgbenchScript::SelectOnly,
        _ => PgbenchScript::TpcbLike,
    }
}

/// Client threads a step runs: a load runs at most one per unit it can split (a
/// sysbench table, a TPC-C warehouse); the others as many as asked.
pub fn threads_of(kind: SqlKind, shape: &Shape, asked: usize) -> usize {
    let n = match (kind, kind.tables()) {
        (SqlKind::Load, _) => asked.min(shape.tables as usize),
        (SqlKind::TpccLoad, _) => asked.min(shape.warehouses as usize),
        // sysbench runs a prepare command on every thread only when the script marks
        // it parallel.
        (SqlKind::LuaPrepare, _) => match &shape.lua {
            Some(l) if l.parallel_prepare => asked,
            _ => 1,
        },
        _ => asked,
    };
    n.max(1)
}

/// Before a step's threads start: what one connection does first (a load makes its
/// tables; a YCSB run makes the insert counter its threads share, starting at `next`,
/// the first key no earlier step inserted).
pub fn before(
    ep: &Endpoint,
    kind: SqlKind,
    shape: &Shape,
    next_ycsb_insert: Option<i64>,
) -> Result<StepShared, SqlError> {
    let mut shared = StepShared::default();
    match kind.tables() {
        SqlTables::Sysbench => {}
        SqlTables::Pgbench => {
            if kind.is_load() {
                let cfg = pgbench_cfg(shape);
                cfg.check()?;
                pgbench::create_tables(ep.connect()?.as_mut(), &cfg)?;
            }
        }
        SqlTables::Tpcc => {
            if kind.is_load() {
                tpcc::create_schema(ep.connect()?.as_mut(), &tpcc_cfg(shape))?;
            }
        }
        SqlTables::Ycsb => {
            let p = ycsb_params(kind, shape)?;
            if kind.is_load() {
                ycsb::create_table(ep.connect()?.as_mut(), &shape.engine_clause, &p)?;
            }
            let first = next_ycsb_insert.unwrap_or(p.recordcount as i64);
            let s = YcsbShared::with_first_insert(&p, first.max(p.recordcount as i64))
                .map_err(|e| SqlError::Input(format!("ycsb: {e}")))?;
            shared.ycsb = Some(Arc::new(s));
        }
        SqlTables::Ceiling => {
            ceiling::create_table(ep.connect()?.as_mut(), &shape.engine_clause, shape.postgres)?
        }
        SqlTables::Lua => {
            if shape.lua.is_none() {
                return Err(SqlError::Input(
                    "the lua step has no script: give --lua FILE (e.g. \
                     /usr/share/sysbench/oltp_read_write.lua)"
                        .into(),
                ));
            }
        }
        SqlTables::Own => {
            if shape.scripts.is_none() {
                return Err(SqlError::Input(
                    "the script step has no scripts: give --script FILE[@WEIGHT] or --builtin \
                     NAME[@WEIGHT]"
                        .into(),
                ));
            }
        }
    }
    Ok(shared)
}

/// One thread's client for `plan`.
pub fn connect(
    ep: &Endpoint,
    plan: &ThreadPlan,
    shared: &StepShared,
) -> Result<Box<dyn Driver>, SqlError> {
    let kind = plan.kind;
    Ok(match kind.tables() {
        SqlTables::Sysbench => Box::new(ThreadState::new(ep, plan)?),
        SqlTables::Pgbench => {
            let p = pgbench::PgbenchThreadPlan {
                cfg: pgbench_cfg(&plan.shape),
                script: script(kind),
                seed: plan.seed,
                thread: plan.thread,
                threads: plan.threads,
            };
            if kind.is_load() {
                Box::new(PgbenchLoader::new(ep, &p)?)
            } else {
                Box::new(PgbenchThread::new(ep, &p)?)
            }
        }
        SqlTables::Tpcc => {
            // The run's seed, not the thread's: TPC-C's NURand constants of the load and
            // the run come from it (clause 2.1.6.1), and each thread draws its own
            // stream from it and its index.
            let p = TpccThreadPlan {
                cfg: tpcc_cfg(&plan.shape),
                thread: plan.thread,
                threads: plan.threads,
                seed: plan.run_seed,
            };
            if kind.is_load() {
                Box::new(TpccLoader::new(ep, &p)?)
            } else {
                Box::new(TpccThread::new(ep, &p)?)
            }
        }
        SqlTables::Ycsb => {
            let shared = shared
                .ycsb
                .clone()
                .ok_or_else(|| SqlError::Input("ycsb: no shared state made".into()))?;
            let p = YcsbSqlPlan {
                shared,
                phase: if kind.is_load() {
                    YcsbPhase::Load
                } else {
                    YcsbPhase::Run
                },
                thread: plan.thread,
                threads: plan.threads,
                seed: plan.seed,
                engine_clause: plan.shape.engine_clause.clone(),
                postgres: plan.shape.postgres,
                verify: plan.all_present,
            };
            Box::new(YcsbSqlThread::new(ep, &p)?)
        }
        SqlTables::Ceiling => Box::new(CachedSelectThread::new(ep, plan.seed, plan.thread)?),
        SqlTables::Lua => {
            let step = plan
                .shape
                .lua
                .clone()
                .ok_or_else(|| SqlError::Input("the lua step has no script (--lua)".into()))?;
            let p = LuaThreadPlan {
                step,
                tid: plan.thread,
                seed: plan.seed,
            };
            if kind.is_load() {
                Box::new(LuaPrepare::new(ep, &p)?)
            } else {
                Box::new(LuaThread::new(ep, &p)?)
            }
        }
        SqlTables::Own => {
            let s = plan.shape.scripts.as_ref().ok_or_else(|| {
                SqlError::Input("the script step has no scripts (--script, --builtin)".into())
            })?;
            Box::new(ScriptThread::new(
                ep,
                &ScriptThreadPlan {
                    set: s.set.clone(),
                    mode: s.mode,
                    defines: s.defines.clone(),
                    scale: plan.shape.scale,
                    client_id: plan.thread,
                    seed: plan.seed,
                    run_seed: plan.run_seed,
                },
            )?)
        }
    })
}

/// After a step's threads have ended, on one connection: a load finishes its tables
/// (keys, statistics); TPROC-C checks the spec's consistency conditions. An error
/// fails the step.
pub fn after(client: &mut dyn SqlClient, kind: SqlKind, shape: &Shape) -> Result<(), SqlError> {
    match (kind.tables(), kind.is_load()) {
        (SqlTables::Pgbench, true) => pgbench::after_load(client, &pgbench_cfg(shape)),
        (SqlTables::Ycsb, true) => {
            ycsb::finish_load(client, &ycsb_params(kind, shape)?, shape.postgres)
        }
        (SqlTables::Tpcc, true) => tpcc::after_load(client, &tpcc_cfg(shape)),
        // The spec's consistency conditions after every run (clause 3.3.2): one that
        // does not hold fails the step, naming where.
        (SqlTables::Tpcc, false) => {
            let failed: Vec<String> = tpcc::check(client, &tpcc_cfg(shape))?
                .into_iter()
                .filter(|c| !c.passed)
                .map(|c| c.to_string())
                .collect();
            if failed.is_empty() {
                Ok(())
            } else {
                Err(SqlError::Verify(format!(
                    "TPC-C consistency: {}",
                    failed.join("; ")
                )))
            }
        }
        _ => Ok(()),
    }
}

/// The names of the kinds of operation a step times apart (its events' `class`
/// indexes them); empty when it has one kind. A script step's are its scripts, each
/// timed apart as pgbench reports each script's latency.
pub fn classes(kind: SqlKind, shape: &Shape) -> Vec<String> {
    let fixed: &[&str] = match kind.tables() {
        SqlTables::Ycsb if !kind.is_load() => ycsb::YCSB_CLASSES,
        SqlTables::Tpcc if !kind.is_load() => &tpcc::TPCC_CLASSES,
        SqlTables::Lua if !kind.is_load() => &crate::lua::LUA_CLASSES,
        SqlTables::Own => {
            return match &shape.scripts {
                Some(s) if s.set.scripts.len() > 1 => {
                    s.set.scripts.iter().map(|s| s.name.clone()).collect()
                }
                _ => Vec::new(),
            }
        }
        _ => &[],
    };
    fixed.iter().map(|s| s.to_string()).collect()
}
