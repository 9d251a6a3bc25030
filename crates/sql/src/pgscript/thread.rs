//! One client running a [`ScriptSet`]: per event one script, chosen by weight as
//! pgbench chooses, run command by command on the client's connection in the chosen
//! query mode. Variables live in a vector indexed by the slots the parser gave them;
//! statement text and parameters are written into buffers the client keeps, so a
//! transaction allocates nothing but what `\gset` keeps of its rows.

use super::expr::{Cx, Value, Var};
use super::parse::{Amount, CommandKind, Piece, QueryMode, ScriptSet, Store};
use crate::bench::Outcome;
use plumb_servers::client::{Endpoint, Param, Protocol, SqlClient, Stmt, Values};
use plumb_servers::SqlError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// Tries of a script that hit a serialization failure or a deadlock before the step
/// fails (pgbench's `--max-tries`), as for the built-in pgbench steps.
pub const MAX_TRIES: u32 = 100;

/// Parameters passed on the stack; a command with more builds a vector.
const STACK_PARAMS: usize = 16;

/// What a step hands each script client.
#[derive(Debug, Clone)]
pub struct ScriptThreadPlan {
    /// The scripts.
    pub set: Arc<ScriptSet>,
    /// How SQL is sent.
    pub mode: QueryMode,
    /// `-D NAME=VALUE`, in order.
    pub defines: Vec<(String, String)>,
    /// pgbench's `:scale` unless a define sets it.
    pub scale: u32,
    /// This client's number from 0 (pgbench's `:client_id`).
    pub client_id: usize,
    /// This client's seed (its random draws).
    pub seed: u64,
    /// The run's seed: `:default_seed` and `:random_seed`, the same on every client so
    /// `hash()` and `permute()` agree across them, as in pgbench.
    pub run_seed: u64,
}

/// A prepared command: its statement and the slots of its parameters in order.
struct Prepared {
    stmt: Stmt,
    params: Vec<usize>,
}

/// A command's SQL with placeholders and its parameters' slots.
struct Bound {
    text: String,
    params: Vec<usize>,
}

/// One client running the scripts; see the module doc.
pub struct ScriptThread {
    client: Box<dyn SqlClient>,
    set: Arc<ScriptSet>,
    mode: QueryMode,
    vars: Vec<Var>,
    rng: SmallRng,
    /// Cumulative weights, for the pick.
    cumulative: Vec<u64>,
    /// Per script, per command: its placeholder form (extended and prepared modes).
    bound: Vec<Vec<Option<Bound>>>,
    /// Per script, per command: its statement once prepared (prepared mode, at the
    /// script's first run, as pgbench prepares a script's commands).
    prepared: Vec<Vec<Option<Prepared>>>,
    /// Per script, per command: the slots `\gset`/`\aset` write, by column, once known.
    stores: Vec<Vec<Option<Vec<Option<usize>>>>>,
    sql: String,
    ptext: String,
    spans: Vec<(usize, usize)>,
    values: Values,
}

/// A failure inside a script: the command it happened at, and the error.
type Failed = (usize, SqlError);

impl ScriptThread {
    /// Connects and sets the client's variables: pgbench's automatic ones, then the
    /// defines.
    pub fn new(ep: &Endpoint, plan: &ScriptThreadPlan) -> Result<ScriptThread, SqlError> {
        let set = plan.set.clone();
        if plan.mode == QueryMode::Extended && ep.protocol != Protocol::Postgres {
            return Err(SqlError::Input(
                "--query-mode extended is PostgreSQL's extended query protocol, which MySQL and \
                 MariaDB do not have; use simple or prepared"
                    .into(),
            ));
        }
        if set.scripts.len() > usize::from(u8::MAX) {
            return Err(SqlError::Input(format!(
                "{} scripts: plumb runs at most {} in one step",
                set.scripts.len(),
                u8::MAX
            )));
        }
        let client = ep.connect()?;
        let postgres = ep.protocol == Protocol::Postgres;
        let names = set.vars.names();
        let mut vars = vec![Var::Unset; names.len()];
        let slot = |n: &str| set.vars.get(n);
        let seed = plan.run_seed as i64;
        for (name, v) in [
            ("client_id", plan.client_id as i64),
            ("default_seed", seed),
            ("random_seed", seed),
        ] {
            if let Some(s) = slot(name) {
                vars[s] = Var::Num(Value::Int(v));
            }
        }
        let mut scale_defined = false;
        for (n, v) in &plan.defines {
            scale_defined |= n == "scale";
            if let Some(s) = slot(n) {
                vars[s] = Var::Text(v.clone());
            }
        }
        if !scale_defined {
            if let Some(s) = slot("scale") {
                vars[s] = Var::Num(Value::Int(i64::from(plan.scale)));
            }
        }
        let mut total = 0u64;
        let cumulative = set
            .scripts
            .iter()
            .map(|s| {
                total += u64::from(s.weight);
                total
            })
            .collect();
        let mut bound = Vec::new();
        for s in &set.scripts {
            bound.push(
                s.commands
                    .iter()
                    .map(|c| match &c.kind {
                        CommandKind::Sql { pieces, .. } if plan.mode != QueryMode::Simple => {
                            Some(placeholders(pieces, postgres))
                        }
                        _ => None,
                    })
                    .collect(),
            );
        }
        fn per_command<T>(set: &ScriptSet) -> Vec<Vec<Option<T>>> {
            set.scripts
                .iter()
                .map(|s| s.commands.iter().map(|_| None).collect())
                .collect()
        }
        Ok(ScriptThread {
            client,
            mode: plan.mode,
            vars,
            rng: SmallRng::seed_from_u64(plan.seed ^ 0x7067_7363_7269_7074),
            cumulative,
            bound,
            prepared: per_command(&set),
            stores: per_command(&set),
            set,
            sql: String::with_capacity(256),
            ptext: String::with_capacity(128),
            spans: Vec::with_capacity(STACK_PARAMS),
            values: Values::new(),
        })
    }

    /// Runs one script, chosen by weight: `ops` 1 (a transaction, pgbench's TPS),
    /// `queries` its SQL commands sent (and, after a conflict, the failed try's and its
    /// ROLLBACK), `rows` returned or changed, `class` the script's index. A
    /// serialization failure or deadlock rolls back and reruns the script with the same
    /// random draws (pgbench's `--max-tries`); any other error fails the step, naming
    /// the script, line and command.
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let total = *self.cumulative.last().unwrap_or(&0);
        let pick = self.rng.random_range(0..total.max(1));
        let k = self.cumulative.partition_point(|&c| c <= pick);
        let start = self.rng.clone();
        let (mut queries, mut rows, mut tries) = (0u64, 0u64, 0u32);
        loop {
            tries += 1;
            match self.run_script(k, &mut queries, &mut rows) {
                Ok(()) => {
                    return Ok(Outcome {
                        queries,
                        rows,
                        ops: 1,
                        retried: tries > 1,
                        done: false,
                        class: k as u8,
                    })
                }
                Err((_, e)) if crate::pgbench::is_conflict(&e) && tries < MAX_TRIES => {
                    self.client.batch("ROLLBACK")?;
                    queries += 1;
                    self.rng = start.clone();
                }
                Err((pc, e)) => {
                    let s = &self.set.scripts[k];
                    let c = &s.commands[pc];
                    let at = format!("{} line {} ({})", s.name, c.line, c.text);
                    return Err(match e {
                        SqlError::Query {
                            context: _,
                            message,
                            code,
                        } => SqlError::Query {
                            context: at,
                            message,
                            code,
                        },
                        SqlError::Input(m) => SqlError::Input(format!("{at}: {m}")),
                        SqlError::Verify(m) => SqlError::Verify(format!("{at}: {m}")),
                        e => e,
                    });
                }
            }
        }
    }

    fn run_script(&mut self, k: usize, queries: &mut u64, rows: &mut u64) -> Result<(), Failed> {
        let set = Arc::clone(&self.set);
        let cmds = &set.scripts[k].commands;
        if self.mode == QueryMode::Prepared && self.prepared[k].iter().all(Option::is_none) {
            self.prepare(k)?;
        }
        let names = set.vars.names();
        let mut pc = 0;
        while pc < cmds.len() {
            let fail = |e: SqlError| (pc, e);
            match &cmds[pc].kind {
                CommandKind::Sql { pieces, store } => {
                    *queries += 1;
                    *rows += self.sql(k, pc, pieces, store.as_ref()).map_err(fail)?;
                    pc += 1;
                }
                CommandKind::Set { var, expr } => {
                    let v = expr
                        .eval(&mut Cx {
                            vars: &self.vars,
                            names,
                            rng: &mut self.rng,
                        })
                        .map_err(|e| fail(SqlError::Input(e.to_string())))?;
                    self.vars[*var] = Var::Num(v);
                    pc += 1;
                }
                CommandKind::Sleep { amount, unit_us } => {
                    let n = match amount {
                        Amount::Fixed(n) => *n,
                        Amount::Var(s) => self
                            .number(*s, names)
                            .and_then(|v| v.to_int().map_err(|e| e.to_string()))
                            .map_err(|m| fail(SqlError::Input(m)))?,
                    };
                    if n > 0 {
                        std::thread::sleep(Duration::from_micros(
                            (n as u64).saturating_mul(*unit_us),
                        ));
                    }
                    pc += 1;
                }
                CommandKind::If { cond, next } => {
                    pc = if self.truth(cond, names).map_err(fail)? {
                        pc + 1
                    } else {
                        self.enter(cmds, *next, names)?
                    };
                }
                // Reached from a branch that ran: past the \endif.
                CommandKind::Elif { end, .. } | CommandKind::Else { end } => pc = end + 1,
                CommandKind::Endif => pc += 1,
            }
        }
        Ok(())
    }

    /// Goes to the branch command at `at` after the branches before it were false: an
    /// `\elif` tests its condition, an `\else` or `\endif` goes on past itself.
    fn enter(
        &mut self,
        cmds: &[super::parse::Command],
        mut at: usize,
        names: &[String],
    ) -> Result<usize, Failed> {
        loop {
            match &cmds[at].kind {
                CommandKind::Elif { cond, next, .. } => {
                    if self.truth(cond, names).map_err(|e| (at, e))? {
                        return Ok(at + 1);
                    }
                    at = *next;
                }
                _ => return Ok(at + 1),
            }
        }
    }

    fn truth(&mut self, cond: &super::expr::Expr, names: &[String]) -> Result<bool, SqlError> {
        cond.eval(&mut Cx {
            vars: &self.vars,
            names,
            rng: &mut self.rng,
        })
        .map(|v| v.truthy())
        .map_err(|e| SqlError::Input(e.to_string()))
    }

    /// A variable's value as a number (a text one converted as pgbench does).
    fn number(&mut self, slot: usize, names: &[String]) -> Result<Value, String> {
        // A one-variable expression would do the same; this avoids parsing one.
        match &self.vars[slot] {
            Var::Num(v) => Ok(*v),
            Var::Unset => Err(format!("undefined variable \"{}\"", names[slot])),
            Var::Text(t) => {
                let t = t.trim();
                t.parse::<i64>()
                    .map(Value::Int)
                    .or_else(|_| t.parse::<f64>().map(Value::Double))
                    .map_err(|_| format!("malformed variable \"{}\" value: \"{t}\"", names[slot]))
            }
        }
    }

    /// Prepares every SQL command of script `k` on this connection.
    fn prepare(&mut self, k: usize) -> Result<(), Failed> {
        for (pc, b) in self.bound[k].iter().enumerate() {
            if let Some(b) = b {
                let stmt = self.client.prepare_native(&b.text).map_err(|e| (pc, e))?;
                self.prepared[k][pc] = Some(Prepared {
                    stmt,
                    params: b.params.clone(),
                });
            }
        }
        Ok(())
    }

    /// Writes a variable's value as text into `out`, as pgbench substitutes it.
    fn write_var(vars: &[Var], slot: usize, out: &mut String) -> bool {
        match &vars[slot] {
            Var::Unset => false,
            Var::Num(v) => {
                v.write_text(out);
                true
            }
            Var::Text(t) => {
                out.push_str(t);
                true
            }
        }
    }

    /// Runs one SQL command; returns the rows it returned or changed.
    fn sql(
        &mut self,
        k: usize,
        pc: usize,
        pieces: &[Piece],
        store: Option<&Store>,
    ) -> Result<u64, SqlError> {
        let names = self.set.vars.names();
        let keep = store.is_some();
        let need_names = keep && self.stores[k][pc].is_none();
        self.values.keep_names(need_names);
        let out = keep.then_some(&mut self.values);
        let counted = match self.mode {
            QueryMode::Simple => {
                self.sql.clear();
                for p in pieces {
                    match p {
                        Piece::Text(t) => self.sql.push_str(t),
                        Piece::Var(slot, written) => {
                            if !Self::write_var(&self.vars, *slot, &mut self.sql) {
                                // pgbench leaves an unset variable as written.
                                self.sql.push_str(written);
                            }
                        }
                    }
                }
                self.client.run_text(&self.sql, out)?
            }
            QueryMode::Extended | QueryMode::Prepared => {
                let slots: &[usize] = match self.mode {
                    QueryMode::Prepared => match &self.prepared[k][pc] {
                        Some(p) => &p.params,
                        None => return Err(SqlError::Input("statement not prepared".into())),
                    },
                    _ => match &self.bound[k][pc] {
                        Some(b) => &b.params,
                        None => return Err(SqlError::Input("statement not bound".into())),
                    },
                };
                self.ptext.clear();
                self.spans.clear();
                for &s in slots {
                    let a = self.ptext.len();
                    if !Self::write_var(&self.vars, s, &mut self.ptext) {
                        return Err(SqlError::Input(format!(
                            "undefined variable \"{}\"",
                            names[s]
                        )));
                    }
                    self.spans.push((a, self.ptext.len()));
                }
                let text = &self.ptext;
                let mut stack = [Param::Int(0); STACK_PARAMS];
                let heap: Vec<Param<'_>>;
                let params: &[Param<'_>] = if self.spans.len() <= STACK_PARAMS {
                    for (i, &(a, b)) in self.spans.iter().enumerate() {
                        stack[i] = Param::Str(&text[a..b]);
                    }
                    &stack[..self.spans.len()]
                } else {
                    heap = self
                        .spans
                        .iter()
                        .map(|&(a, b)| Param::Str(&text[a..b]))
                        .collect();
                    &heap
                };
                match (self.mode, &self.prepared[k][pc], &self.bound[k][pc]) {
                    (QueryMode::Prepared, Some(p), _) => self.client.run(p.stmt, params, out)?,
                    (_, _, Some(b)) => self.client.run_extended(&b.text, params, out)?,
                    _ => return Err(SqlError::Input("statement not bound".into())),
                }
            }
        };
        if let Some(store) = store {
            self.keep(k, pc, store)?;
        }
        Ok(counted.rows.max(counted.affected))
    }

    /// `\gset` / `\aset`: the result's columns into variables.
    fn keep(&mut self, k: usize, pc: usize, store: &Store) -> Result<(), SqlError> {
        let (prefix, one) = match store {
            Store::Gset(p) => (p, true),
            Store::Aset(p) => (p, false),
        };
        let n = self.values.rows();
        if one && n != 1 {
            return Err(SqlError::Verify(format!(
                "\\gset: expected one row, got {n}"
            )));
        }
        if self.stores[k][pc].is_none() {
            let mut name = String::new();
            let slots = self
                .values
                .names()
                .iter()
                .map(|c| {
                    name.clear();
                    let _ = write!(name, "{prefix}{c}");
                    self.set.vars.get(&name)
                })
                .collect();
            self.stores[k][pc] = Some(slots);
        }
        let Some(slots) = &self.stores[k][pc] else {
            return Ok(());
        };
        for row in 0..n {
            for (col, slot) in slots.iter().enumerate() {
                let Some(s) = *slot else { continue };
                match self.values.bytes(row, col) {
                    None => self.vars[s] = Var::Num(Value::Null),
                    Some(b) => {
                        let t = String::from_utf8_lossy(b);
                        match &mut self.vars[s] {
                            Var::Text(old) => {
                                old.clear();
                                old.push_str(&t);
                            }
                            v => *v = Var::Text(t.into_owned()),
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A command's text with its variables as placeholders: `$1 …` on PostgreSQL (one
/// per occurrence, as pgbench numbers them), `?` on MySQL.
fn placeholders(pieces: &[Piece], postgres: bool) -> Bound {
    let mut text = String::new();
    let mut params = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => text.push_str(t),
            Piece::Var(slot, _) => {
                params.push(*slot);
                if postgres {
                    let _ = write!(text, "${}", params.len());
                } else {
                    text.push('?');
                }
            }
        }
    }
    Bound { text, params }
}
