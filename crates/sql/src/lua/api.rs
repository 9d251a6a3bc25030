//! The part of sysbench's API a script reaches through Rust: a Lua state set up as
//! sysbench sets up each thread's (the `sysbench` table, the options, the stored
//! modules behind `require`), the wire clients behind the connection and statement
//! objects of prelude.lua, and sysbench's random generators.

use super::options::{OptKind, OptValue, ScriptOption};
use mlua::{
    AnyUserData, Function, IntoLuaMulti, Lua, Table, UserData, UserDataMethods, Value, Variadic,
};
use plumb_plan::ScriptSource;
use plumb_servers::client::{Counted, Endpoint, Param, Protocol, SqlClient, Stmt, Values};
use plumb_servers::SqlError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::ffi::c_int;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// The sysbench release whose API plumb gives a script.
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// sysbench's bulk insert buffer: a multi-row INSERT is sent when the next row would
/// make it longer.
const BULK_PACKET: usize = 512 * 1024;

/// What one Lua state's callbacks share: where to connect, the counts of what was sent,
/// the generators, and how errors are judged.
pub(crate) struct Ctx {
    endpoint: Option<Endpoint>,
    /// What was sent, shared with every connection (which count into it without a
    /// look at the state's app data).
    tally: Rc<RefCell<Tally>>,
    rand: Rand,
    /// Server-side prepared statements (`db_ps_mode=auto`), or text.
    prepared: bool,
}

/// What a Lua state's connections sent, and how their errors are judged.
pub(crate) struct Tally {
    /// Statements sent (queries and executions, bulk inserts' flushes).
    pub queries: u64,
    /// Rows returned or changed.
    pub rows: u64,
    /// Each statement's kind ([`super::LUA_CLASSES`]) and latency in this event.
    pub parts: Vec<(u8, u64)>,
    /// Error codes that restart the event (MySQL errnos or PostgreSQL SQLSTATEs).
    ignore: Vec<String>,
    ignore_all: bool,
}

fn ctx(lua: &Lua) -> mlua::AppDataRefMut<'_, Ctx> {
    lua.app_data_mut::<Ctx>()
        .expect("every plumb Lua state has its context")
}

/// What of sysbench's generators runs in Rust: strings (a CHAR value of 120
/// characters per call), zipfian, and the unique sequence every thread shares. The
/// numbers a script draws per statement (uniform, default, gaussian, special, pareto)
/// are prelude.lua's, in Lua, with no call into Rust.
pub(crate) struct Rand {
    rng: SmallRng,
    zipf_exp: f64,
    unique: Arc<AtomicU32>,
    unique_offset: u32,
}

fn permute(x: u32) -> u32 {
    const PRIME: u32 = 4294967291;
    if x >= PRIME {
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

impl Rand {
    fn new(seed: u64, options: &[(String, OptValue)], unique: Arc<AtomicU32>) -> Rand {
        let zipf_exp = match options.iter().find(|(k, _)| k == "rand_zipfian_exp") {
            Some((_, OptValue::Num(v))) => *v,
            _ => 0.8,
        };
        // One offset for every thread (sysbench's is one per process), so the
        // threads' unique numbers never meet.
        let unique_offset = permute(permute(0x2545_f491).wrapping_add(0x4679_0905));
        Rand {
            rng: SmallRng::seed_from_u64(seed),
            zipf_exp,
            unique,
            unique_offset,
        }
    }

    fn double(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let span = f64::from(b) - f64::from(a) + 1.0;
        (f64::from(a) + self.double() * span) as u32
    }

    fn zipfian(&mut self, a: u32, b: u32) -> u32 {
        let n = f64::from(b) - f64::from(a) + 1.0;
        match rand_distr::Zipf::new(n, self.zipf_exp) {
            Ok(z) => a.wrapping_add(self.rng.sample(z) as u32 - 1),
            Err(_) => a,
        }
    }

    fn unique(&mut self) -> u32 {
        let index = self.unique.fetch_add(1, Relaxed);
        permute(permute(index).wrapping_add(self.unique_offset) ^ 0x5bf03635)
    }

    /// sysbench's string template: `#` a digit, `@` a lowercase letter, the rest kept;
    /// at most `max` bytes.
    fn string_into(&mut self, fmt: &[u8], max: usize, out: &mut String) {
        out.clear();
        for &c in fmt.iter().take(max) {
            let ch = match c {
                b'#' => self.uniform(u32::from(b'0'), u32::from(b'9')) as u8,
                b'@' => self.uniform(u32::from(b'a'), u32::from(b'z')) as u8,
                other => other,
            };
            out.push(char::from(ch));
        }
    }
}

/// How a bound parameter is sent: prelude.lua's parameters are Lua tables (their
/// `set` runs in Lua, with no call into Rust); `stmt:bind_param` tells Rust each one's
/// kind once, and `execute` hands over the values.
#[derive(Clone, Copy, PartialEq, Debug)]
enum ParamKind {
    Int,
    Double,
    Text,
}

/// A statement made by `con:prepare`: server-side (`handle`) or sent as text with its
/// parameters written in (`db_ps_mode=disable`, or a statement the server will not
/// prepare, as sysbench falls back).
struct StmtUd {
    sql: String,
    /// Its kind, an index into [`super::LUA_CLASSES`].
    class: u8,
    handle: Option<Stmt>,
    params: Vec<ParamKind>,
    /// The connection's life it was prepared in (a reconnect ends it).
    life: u32,
}

/// A statement as Lua holds it: boxed, so the address `execute` is handed (a light
/// userdata beside it) stays put for the statement's life.
struct StmtBox(Box<StmtUd>);

impl UserData for StmtBox {}

/// A connection made by `drv:connect()`.
pub(crate) struct ConnUd {
    /// The state's counts, shared.
    tally: Rc<RefCell<Tally>>,
    client: Option<Box<dyn SqlClient>>,
    postgres: bool,
    values: Values,
    /// The next row `fetch_row` returns.
    row: usize,
    /// The multi-row INSERT being filled: its text, where its values start, rows in it.
    bulk: Option<(String, usize, u32)>,
    life: u32,
    /// Text of an emulated statement, reused.
    text: String,
}

/// A statement's outcome as prelude.lua takes it: rows and fields, or (nil, errno,
/// state, message, ignorable); five values on the stack, no table or list made.
type Reply = (Value, Value, Value, Value, Value);

/// A reply of one value (a statement object, `true`).
fn one(v: Value) -> Reply {
    (v, Value::Nil, Value::Nil, Value::Nil, Value::Nil)
}

fn reply(lua: &Lua, conn: &ConnUd, r: Result<(u64, usize), SqlError>) -> mlua::Result<Reply> {
    match r {
        Ok((n, f)) => Ok((
            Value::Number(n as f64),
            Value::Number(f as f64),
            Value::Nil,
            Value::Nil,
            Value::Nil,
        )),
        Err(e) => {
            let (errno, state, msg, ignorable) = conn.failure(&e);
            Ok((
                Value::Nil,
                Value::Number(errno as f64),
                Value::String(lua.create_string(&state)?),
                Value::String(lua.create_string(&msg)?),
                Value::Boolean(ignorable),
            ))
        }
    }
}

impl ConnUd {
    fn client(&mut self) -> Result<&mut Box<dyn SqlClient>, SqlError> {
        self.client.as_mut().ok_or_else(closed)
    }

    /// An error as sysbench's driver reports it to the script: errno, SQLSTATE,
    /// message, and whether the driver ignores it (restarting the event).
    fn failure(&self, e: &SqlError) -> (i64, String, String, bool) {
        let (errno, state, msg) = match e {
            SqlError::Query { message, code, .. } => {
                let code = code.clone().unwrap_or_default();
                if self.postgres {
                    (0i64, code, message.clone())
                } else {
                    (code.parse().unwrap_or(0), String::new(), message.clone())
                }
            }
            // The connection is gone: MySQL's CR_SERVER_LOST, PostgreSQL's
            // connection_failure.
            other if self.postgres => (0, "08006".into(), other.to_string()),
            other => (2013, String::new(), other.to_string()),
        };
        let t = self.tally.borrow();
        let ignorable = t.ignore_all
            || if self.postgres {
                t.ignore.contains(&state)
            } else {
                t.ignore.contains(&errno.to_string())
            };
        (errno, state, msg, ignorable)
    }

    /// Runs SQL text, keeping its rows for `fetch_row`.
    fn text(&mut self, sql: &str, class: u8) -> Result<(u64, usize), SqlError> {
        let client = self.client.as_mut().ok_or_else(closed)?;
        self.row = 0;
        let t = Instant::now();
        let r = client.run_text(sql, Some(&mut self.values));
        self.tally(class, t, r)
    }

    /// Counts a statement sent at `t` (its kind and latency among the event's parts)
    /// and reads its reply as sysbench's result: rows returned, or rows changed by a
    /// statement with no columns, and the columns.
    fn tally(
        &self,
        class: u8,
        t: Instant,
        r: Result<Counted, SqlError>,
    ) -> Result<(u64, usize), SqlError> {
        let ns = t.elapsed().as_nanos() as u64;
        let mut c = self.tally.borrow_mut();
        c.queries += 1;
        c.parts.push((class, ns));
        let counted = r?;
        c.rows += counted.rows + counted.affected;
        let f = self.values.cols();
        Ok((
            if f > 0 {
                counted.rows
            } else {
                counted.affected
            },
            f,
        ))
    }

    /// Executes `st` with `params` (their values, in order), as `stmt:execute()`.
    fn execute(&mut self, st: &StmtUd, params: &[Param<'_>]) -> Result<(u64, usize), SqlError> {
        if st.life != self.life {
            return Err(SqlError::Query {
                context: "lua".into(),
                message: "the statement was prepared before con:reconnect(); prepare it again"
                    .into(),
                code: None,
            });
        }
        if params.len() != st.params.len() {
            return Err(SqlError::Input(format!(
                "stmt:execute(): {} parameters bound (stmt:bind_param), {} given",
                st.params.len(),
                params.len()
            )));
        }
        match st.handle {
            Some(h) => {
                let client = self.client.as_mut().ok_or_else(closed)?;
                self.row = 0;
                let t = Instant::now();
                let r = client.run(h, params, Some(&mut self.values));
                self.tally(st.class, t, r)
            }
            None => {
                let mut text = std::mem::take(&mut self.text);
                substitute(&st.sql, params, self.postgres, &mut text)?;
                let r = self.text(&text, st.class);
                self.text = text;
                r
            }
        }
    }

    fn flush(&mut self) -> Result<(), SqlError> {
        let Some((mut buf, head, rows)) = self.bulk.take() else {
            return Ok(());
        };
        let r = if rows > 0 {
            self.text(&buf, INSERT).map(|_| ())
        } else {
            Ok(())
        };
        buf.truncate(head);
        self.bulk = Some((buf, head, 0));
        r
    }
}

/// `P.exec(con_ptr, stmt_ptr, v1, …)`, prelude.lua's `stmt:execute()`: the statement
/// with its values, replying as the connection's methods do (rows and fields, or nil,
/// errno, SQLSTATE, message and whether the driver ignores it). A plain C function on
/// the Lua stack, with no conversion layer between: the one call per statement of
/// every event, and what a sysbench client spends beside the server's work (mlua's
/// method call cost plumb ~0.35 µs per statement over sysbench's FFI call).
///
/// # Safety
/// Called by Lua only, as a C function. Its first two arguments are the light
/// userdata `ConnBox`'s `ptr` and `prepare` gave for objects prelude.lua keeps beside
/// them (so they are alive, and boxed where they were); nothing else in the state
/// touches them while it runs (one thread per state, and `exec` calls no Lua).
unsafe extern "C-unwind" fn exec(l: *mut mlua::ffi::lua_State) -> c_int {
    // A panic must not unwind into LuaJIT's frames: it becomes the statement's error.
    match std::panic::catch_unwind(|| exec_values(l)) {
        Ok(n) => n,
        Err(_) => {
            let msg = "stmt:execute(): plumb's statement call panicked";
            mlua::ffi::lua_pushnil(l);
            mlua::ffi::lua_pushnumber(l, 0.0);
            mlua::ffi::lua_pushlstring(l, "".as_ptr().cast(), 0);
            mlua::ffi::lua_pushlstring(l, msg.as_ptr().cast(), msg.len());
            mlua::ffi::lua_pushboolean(l, 0);
            5
        }
    }
}

/// [`exec`]'s work: its arguments from the stack, the statement, its reply pushed.
///
/// # Safety
/// As [`exec`].
unsafe fn exec_values(l: *mut mlua::ffi::lua_State) -> c_int {
    use mlua::ffi;
    let conn = ffi::lua_touserdata(l, 1) as *mut ConnUd;
    let st = ffi::lua_touserdata(l, 2) as *const StmtUd;
    let push_str = |s: &str| {
        ffi::lua_pushlstring(l, s.as_ptr().cast(), s.len());
    };
    if conn.is_null() || st.is_null() {
        ffi::lua_pushnil(l);
        ffi::lua_pushnumber(l, 0.0);
        push_str("");
        push_str("stmt:execute(): not a statement of a connection");
        ffi::lua_pushboolean(l, 0);
        return 5;
    }
    let (conn, st) = (&mut *conn, &*st);
    let n = ffi::lua_gettop(l);
    let mut params: SmallVec<[Param<'_>; 16]> = SmallVec::new();
    let mut bad = None;
    for i in 3..=n {
        let kind = st.params.get((i - 3) as usize).copied();
        params.push(match ffi::lua_type(l, i) {
            ffi::LUA_TNIL => Param::Null,
            ffi::LUA_TNUMBER => {
                let x = ffi::lua_tonumber(l, i);
                if kind == Some(ParamKind::Double) {
                    Param::Double(x)
                } else {
                    Param::Big(x as i64)
                }
            }
            ffi::LUA_TSTRING => {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, i, &mut len);
                // The string stays on the stack, so alive, until `exec` returns.
                match std::str::from_utf8(std::slice::from_raw_parts(p.cast::<u8>(), len)) {
                    Ok(s) => Param::Str(s),
                    Err(e) => {
                        bad = Some(format!("parameter {}: {e}", i - 2));
                        break;
                    }
                }
            }
            _ => {
                bad = Some(format!(
                    "parameter {}: a table or function is not a value",
                    i - 2
                ));
                break;
            }
        });
    }
    let r = match bad {
        Some(why) => Err(SqlError::Input(format!("stmt:execute(): {why}"))),
        None => conn.execute(st, &params),
    };
    match r {
        Ok((rows, fields)) => {
            ffi::lua_pushnumber(l, rows as f64);
            ffi::lua_pushnumber(l, fields as f64);
            2
        }
        Err(e) => {
            let (errno, state, msg, ignorable) = conn.failure(&e);
            ffi::lua_pushnil(l);
            ffi::lua_pushnumber(l, errno as f64);
            push_str(&state);
            push_str(&msg);
            ffi::lua_pushboolean(l, c_int::from(ignorable));
            5
        }
    }
}

/// [`super::LUA_CLASSES`]' index of an INSERT.
const INSERT: u8 = 2;

/// A statement's kind by its first keyword (past comments and parentheses): the index
/// of its row in [`super::LUA_CLASSES`].
pub(crate) fn statement_class(sql: &str) -> u8 {
    let mut rest = sql.trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r
                .split_once("*/")
                .map(|(_, t)| t)
                .unwrap_or("")
                .trim_start();
        } else if let Some(r) = rest.strip_prefix("--") {
            rest = r
                .split_once('\n')
                .map(|(_, t)| t)
                .unwrap_or("")
                .trim_start();
        } else if let Some(r) = rest.strip_prefix('(') {
            rest = r.trim_start();
        } else {
            break;
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match word.as_str() {
        "select" | "with" | "show" | "values" => 1,
        "insert" | "replace" | "copy" => INSERT,
        "update" => 3,
        "delete" => 4,
        "begin" | "start" => 5,
        "commit" | "end" => 6,
        _ => 7,
    }
}

fn closed() -> SqlError {
    SqlError::Query {
        context: "lua".into(),
        message: "the connection was closed (con:disconnect())".into(),
        code: None,
    }
}

/// Writes `sql` with each `?` outside quotes replaced by its parameter as a literal.
fn substitute(
    sql: &str,
    params: &[Param<'_>],
    postgres: bool,
    out: &mut String,
) -> Result<(), SqlError> {
    use std::fmt::Write as _;
    out.clear();
    let mut next = params.iter();
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"' | '`') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                let p = next.next().ok_or_else(|| {
                    SqlError::Input(format!(
                        "{sql:?}: more ? placeholders than bound parameters"
                    ))
                })?;
                match p {
                    Param::Int(i) => write!(out, "{i}").unwrap(),
                    Param::Big(i) => write!(out, "{i}").unwrap(),
                    Param::Double(d) => write!(out, "{d}").unwrap(),
                    Param::Cents(c) => write!(out, "{}.{:02}", c / 100, (c % 100).abs()).unwrap(),
                    Param::Null => out.push_str("NULL"),
                    Param::Str(s) => {
                        out.push('\'');
                        for ch in s.chars() {
                            match ch {
                                '\'' => out.push_str("''"),
                                '\\' if !postgres => out.push_str("\\\\"),
                                ch => out.push(ch),
                            }
                        }
                        out.push('\'');
                    }
                }
            }
            (None, c) => out.push(c),
        }
    }
    Ok(())
}

/// A connection as Lua holds it: boxed, so the address `execute` is handed (a light
/// userdata beside it) stays put for the connection's life.
struct ConnBox(Box<ConnUd>);

impl Deref for ConnBox {
    type Target = ConnUd;
    fn deref(&self) -> &ConnUd {
        &self.0
    }
}

impl DerefMut for ConnBox {
    fn deref_mut(&mut self) -> &mut ConnUd {
        &mut self.0
    }
}

impl UserData for ConnBox {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        // The address `P.exec` takes for this connection.
        m.add_method_mut("ptr", |_, this, ()| {
            let p: *mut ConnUd = &mut *this.0;
            Ok(Value::LightUserData(mlua::LightUserData(p.cast())))
        });
        m.add_method_mut("query", |lua, this, sql: mlua::String| {
            let sql = sql.to_str()?;
            let r = this.text(&sql, statement_class(&sql));
            reply(lua, this, r)
        });
        m.add_method_mut("prepare", |lua, this, sql: mlua::String| {
            let sql = sql.to_str()?.to_string();
            let server = ctx(lua).prepared;
            let handle = if server {
                match this.client() {
                    Ok(c) => match c.prepare(&sql) {
                        Ok(h) => Some(h),
                        // A statement the server will not prepare (MySQL's
                        // ER_UNSUPPORTED_PS: BEGIN, some DDL) is sent as text, as sysbench
                        // falls back.
                        Err(SqlError::Query { code: Some(c), .. }) if c == "1295" => None,
                        Err(e) => return reply(lua, this, Err(e)),
                    },
                    Err(e) => return reply(lua, this, Err(e)),
                }
            } else {
                None
            };
            let mut st = StmtBox(Box::new(StmtUd {
                class: statement_class(&sql),
                sql,
                handle,
                params: Vec::new(),
                life: this.life,
            }));
            // The statement, and the address `P.exec` takes for it.
            let p: *mut StmtUd = &mut *st.0;
            Ok((
                Value::UserData(lua.create_userdata(st)?),
                Value::LightUserData(mlua::LightUserData(p.cast())),
                Value::Nil,
                Value::Nil,
                Value::Nil,
            ))
        });
        m.add_method_mut(
            "bind",
            |_, _this, (stmt, kinds): (AnyUserData, Variadic<i64>)| {
                let mut st = stmt.borrow_mut::<StmtBox>()?;
                st.0.params = kinds
                    .iter()
                    .map(|k| match k {
                        1 => ParamKind::Int,
                        2 => ParamKind::Double,
                        _ => ParamKind::Text,
                    })
                    .collect();
                Ok(0)
            },
        );
        m.add_method_mut("close", |_, _this, stmt: AnyUserData| {
            let mut st = stmt.borrow_mut::<StmtBox>()?;
            st.0.params.clear();
            Ok(())
        });
        m.add_method_mut("fetch_row", |lua, this, ()| {
            if this.row >= this.values.rows() {
                return Ok(Value::Nil);
            }
            let t = lua.create_table_with_capacity(this.values.cols(), 0)?;
            for c in 0..this.values.cols() {
                if let Some(b) = this.values.bytes(this.row, c) {
                    t.raw_set(c + 1, lua.create_string(b)?)?;
                }
            }
            this.row += 1;
            Ok(Value::Table(t))
        });
        m.add_method_mut("bulk_init", |_, this, q: mlua::String| {
            let q = q.to_str()?.to_string();
            if q.len() + 1 > BULK_PACKET {
                return Err(mlua::Error::runtime(format!(
                    "bulk_insert_init(): the query is longer than sysbench's {BULK_PACKET}-byte buffer"
                )));
            }
            let head = q.len();
            let mut buf = String::with_capacity(BULK_PACKET);
            buf.push_str(&q);
            this.bulk = Some((buf, head, 0));
            Ok(())
        });
        m.add_method_mut("bulk_next", |lua, this, v: mlua::String| {
            let v = v.as_bytes();
            let v = String::from_utf8_lossy(&v);
            let full = match &this.bulk {
                None => {
                    return Err(mlua::Error::runtime(
                        "bulk_insert_next() before bulk_insert_init()",
                    ))
                }
                Some((buf, _, rows)) => *rows > 0 && buf.len() + v.len() + 1 > BULK_PACKET,
            };
            if full {
                if let Err(e) = this.flush() {
                    return reply(lua, this, Err(e));
                }
            }
            if let Some((buf, _, rows)) = this.bulk.as_mut() {
                if *rows > 0 {
                    buf.push(',');
                }
                buf.push_str(&v);
                *rows += 1;
            }
            Ok(one(Value::Boolean(true)))
        });
        m.add_method_mut("bulk_done", |lua, this, ()| {
            let r = this.flush();
            this.bulk = None;
            match r {
                Ok(()) => Ok(one(Value::Boolean(true))),
                Err(e) => reply(lua, this, Err(e)),
            }
        });
        m.add_method_mut("disconnect", |_, this, ()| {
            this.client = None;
            Ok(())
        });
        m.add_method_mut("reconnect", |lua, this, ()| {
            this.client = None;
            let ep = ctx(lua).endpoint.clone();
            let Some(ep) = ep else {
                return (false, "no server").into_lua_multi(lua);
            };
            match ep.connect() {
                Ok(c) => {
                    this.client = Some(c);
                    this.life += 1;
                    true.into_lua_multi(lua)
                }
                Err(e) => (false, e.to_string()).into_lua_multi(lua),
            }
        });
    }
}

/// A script option as its table declares it: `{description, default[, type]}`.
fn script_option(name: String, def: &Table) -> Result<ScriptOption, String> {
    let default: Value = def.raw_get(2).map_err(|e| e.to_string())?;
    let declared: Option<i64> = def.raw_get(3).map_err(|e| e.to_string())?;
    let kind = match declared {
        Some(n) => {
            OptKind::from_arg(n).ok_or_else(|| format!("option {name}: unknown type {n}"))?
        }
        None => match &default {
            Value::Boolean(_) => OptKind::Bool,
            Value::Number(_) | Value::Integer(_) => OptKind::Double,
            Value::Table(_) => OptKind::List,
            _ => OptKind::Str,
        },
    };
    let value = match (&default, kind) {
        (Value::Nil, OptKind::List) => OptValue::List(Vec::new()),
        (Value::Nil, OptKind::Bool) => OptValue::Bool(false),
        (Value::Nil, _) => OptValue::Str(String::new()),
        (Value::Boolean(b), _) => OptValue::Bool(*b),
        (Value::Number(n), _) => OptValue::Num(*n),
        (Value::Integer(n), _) => OptValue::Num(*n as f64),
        (Value::Table(t), _) => OptValue::List(
            t.clone()
                .sequence_values::<mlua::String>()
                .map(|s| s.map(|s| s.to_string_lossy()))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("option {name}: {e}"))?,
        ),
        (Value::String(s), k) => {
            let text = s.to_string_lossy();
            super::options::parse(k, &text)
                .map_err(|why| format!("option {name}'s default {text:?}: {why}"))?
        }
        (other, _) => return Err(format!("option {name}: a {} default", other.type_name())),
    };
    Ok(ScriptOption {
        name,
        default: value,
        kind,
    })
}

/// What planning learns from loading a script once.
pub(crate) struct ScriptShape {
    pub options: Vec<ScriptOption>,
    pub parallel_prepare: bool,
    pub has_prepare: bool,
}

/// The first lines of a Lua error (its message, without mlua's traceback).
pub(crate) fn lua_message(e: &mlua::Error) -> String {
    let full = match e {
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::WithContext { cause, context } => {
            return format!("{context}: {}", lua_message(cause))
        }
        mlua::Error::ExternalError(e) => e.to_string(),
        other => other.to_string(),
    };
    full.split("\nstack traceback:")
        .next()
        .unwrap_or(&full)
        .trim_start_matches("runtime error: ")
        .trim()
        .to_string()
}

/// Loads the script with no server behind it, as sysbench's main state reads the
/// options before it parses the command line.
pub(crate) fn read_script(sources: &[ScriptSource]) -> Result<ScriptShape, SqlError> {
    let s = State::new(
        &Arc::new(sources.to_vec()),
        &[],
        Role::Plan,
        Arc::new(AtomicU32::new(0)),
    )?;
    let g = s.lua.globals();
    let bad = |what: String| SqlError::Input(format!("{}: {what}", sources[0].name));
    let sb: Table = g.get("sysbench").map_err(|e| bad(lua_message(&e)))?;
    let cmdline: Table = sb.get("cmdline").map_err(|e| bad(lua_message(&e)))?;
    let mut options = Vec::new();
    match cmdline
        .get::<Value>("options")
        .map_err(|e| bad(lua_message(&e)))?
    {
        Value::Nil => {}
        Value::Table(t) => {
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair.map_err(|e| bad(lua_message(&e)))?;
                let (Value::String(name), Value::Table(def)) = (k, v) else {
                    return Err(bad(
                        "sysbench.cmdline.options: each entry is name = {description, default}"
                            .into(),
                    ));
                };
                options.push(script_option(name.to_string_lossy(), &def).map_err(bad)?);
            }
        }
        other => {
            return Err(bad(format!(
                "sysbench.cmdline.options is a {}, not a table",
                other.type_name()
            )))
        }
    }
    options.sort_by(|a, b| a.name.cmp(&b.name));
    if !matches!(g.get::<Value>("event"), Ok(Value::Function(_))) {
        return Err(bad(
            "the script defines no event() function; sysbench calls event() once per \
             transaction (is this a sysbench 1.0 script, or a module it requires?)"
                .into(),
        ));
    }
    let defined: bool = s
        .lua
        .load("return sysbench.cmdline.command_defined('prepare')")
        .eval()
        .unwrap_or(false);
    let parallel: bool = s
        .lua
        .load("return sysbench.cmdline.command_parallel('prepare')")
        .eval()
        .unwrap_or(false);
    let prepare_fn = matches!(g.get::<Value>("prepare"), Ok(Value::Function(_)));
    Ok(ScriptShape {
        options,
        parallel_prepare: defined && parallel,
        has_prepare: defined || prepare_fn,
    })
}

/// Who a state is for.
pub(crate) enum Role<'a> {
    /// Reading the script's options when the run is planned: no server.
    Plan,
    /// A client thread: its server, its number, its seed and sysbench's command.
    Thread {
        endpoint: &'a Endpoint,
        tid: usize,
        seed: u64,
        command: &'static str,
    },
}

/// One Lua state running a script, with what plumb calls in it.
pub(crate) struct State {
    pub lua: Lua,
    pub run_event: Function,
    pub run_prepare: Function,
}

// SAFETY: mlua's handles are not Send because they share the state through
// reference counts without atomics. A `State` owns its Lua state and every handle into
// it (the functions above; the script's objects live inside the state, and the Rust
// values the state holds are Send: the endpoint, counters, an Arc of the sources), so
// moving a `State` moves all of them together, and one thread at a time uses it: the
// client thread that made it, then whichever thread drops it. (mlua's `send` feature
// would make this safe by locking a mutex around every call into Lua, several per
// statement; this is plumb's hot path.)
unsafe impl Send for State {}

fn opt_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
    Ok(match v {
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Num(n) => Value::Number(*n),
        OptValue::Str(s) => Value::String(lua.create_string(s)?),
        OptValue::List(l) => Value::Table(lua.create_sequence_from(l.iter().map(String::as_str))?),
    })
}

/// The chunk name Lua's messages give a stored source: its file name, so an error says
/// `oltp_common.lua:270: …`.
fn chunk_name(s: &ScriptSource, main: bool) -> String {
    if main {
        let base = std::path::Path::new(&s.name)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| s.name.clone());
        format!("@{base}")
    } else {
        format!("@{}.lua", s.name.replace('.', "/"))
    }
}

/// What a thread's state is set up with beside the script and its options.
struct Who {
    tid: usize,
    seed: u64,
    /// sysbench's command (`run`, `prepare`, `cleanup`).
    command: &'static str,
    /// The server speaks PostgreSQL's protocol (sysbench's pgsql driver), else MySQL's.
    postgres: bool,
}

impl Ctx {
    /// The context of a state connecting to `endpoint` (none while planning), its
    /// errors judged and its statements sent as the options say.
    fn new(
        endpoint: Option<Endpoint>,
        seed: u64,
        options: &[(String, OptValue)],
        unique: Arc<AtomicU32>,
    ) -> Ctx {
        let postgres = endpoint
            .as_ref()
            .is_some_and(|e| e.protocol == Protocol::Postgres);
        let list = |n: &str| match options.iter().find(|(k, _)| k == n) {
            Some((_, OptValue::List(l))) => l.clone(),
            _ => Vec::new(),
        };
        let ignore = if postgres {
            list("pgsql_ignore_errors")
        } else {
            list("mysql_ignore_errors")
        };
        let prepared = !matches!(
            options.iter().find(|(k, _)| k == "db_ps_mode"),
            Some((_, OptValue::Str(m))) if m == "disable"
        );
        Ctx {
            endpoint,
            tally: Rc::new(RefCell::new(Tally {
                queries: 0,
                rows: 0,
                parts: Vec::with_capacity(64),
                ignore_all: ignore.iter().any(|i| i == "all"),
                ignore,
            })),
            rand: Rand::new(seed, options, unique),
            prepared,
        }
    }
}

/// sysbench's API set up in `lua` as sysbench sets up a thread's, and prelude.lua run
/// over it: the functions plumb calls for an event and for `prepare`.
fn set_up(
    lua: &Lua,
    sources: &Arc<Vec<ScriptSource>>,
    options: &[(String, OptValue)],
    who: &Who,
) -> mlua::Result<(Function, Function)> {
    let g = lua.globals();
    g.set(
        "sysbench",
        sysbench_table(lua, &sources[0].name, options, who)?,
    )?;
    stored_modules(lua, &g, sources)?;
    let entry: Table = lua
        .load(include_str!("prelude.lua"))
        .set_name("@plumb-sysbench.lua")
        .call(platform(lua, who)?)?;
    Ok((entry.get("run_event")?, entry.get("run_prepare")?))
}

/// The `sysbench` table: its version, the thread's number, the options and the command
/// line, and its random generators.
fn sysbench_table(
    lua: &Lua,
    script: &str,
    options: &[(String, OptValue)],
    who: &Who,
) -> mlua::Result<Table> {
    let sb = lua.create_table()?;
    sb.set("version", SYSBENCH_VERSION)?;
    sb.set(
        "version_string",
        format!("sysbench {SYSBENCH_VERSION} (plumb)"),
    )?;
    sb.set("tid", who.tid as f64)?;
    let opt = lua.create_table()?;
    for (k, v) in options {
        opt.set(k.as_str(), opt_value(lua, v)?)?;
    }
    sb.set("opt", opt)?;
    let cmdline = lua.create_table()?;
    cmdline.set("command", who.command)?;
    cmdline.set("script_path", script)?;
    sb.set("cmdline", cmdline)?;
    sb.set("rand", rand_table(lua)?)?;
    Ok(sb)
}

/// `require` finds the modules the run stored, never the disk's; a module that is not
/// stored (or LuaJIT's ffi) is refused with why.
fn stored_modules(lua: &Lua, g: &Table, sources: &Arc<Vec<ScriptSource>>) -> mlua::Result<()> {
    let package: Table = g.get("package")?;
    package.set("path", "")?;
    package.set("cpath", "")?;
    let stored = sources.clone();
    let loader = lua.create_function(move |lua, module: String| {
        if let Some(s) = stored.iter().skip(1).find(|s| s.name == module) {
            let f = lua
                .load(s.text.as_str())
                .set_name(chunk_name(s, false))
                .into_function()?;
            return Ok(Value::Function(f));
        }
        let why = if module == "ffi" {
            "\n\tplumb runs sysbench scripts without LuaJIT's ffi (sysbench's C \
             internals are not there)"
                .to_string()
        } else {
            format!(
                "\n\tno module '{module}' stored with the run (plumb stores the modules \
                 a script requires by a literal name, found beside it or in \
                 /usr/share/sysbench)"
            )
        };
        Ok(Value::String(lua.create_string(why)?))
    })?;
    let loaders: Table = package.get("loaders")?;
    loaders.raw_insert(2, loader)?;
    Ok(())
}

/// What prelude.lua is given of Rust's: the driver's name, the Lua generator's seed,
/// and the functions that execute, connect and print.
fn platform(lua: &Lua, who: &Who) -> mlua::Result<Table> {
    let p = lua.create_table()?;
    p.set("driver_name", if who.postgres { "pgsql" } else { "mysql" })?;
    // The Lua generator's state: four nonzero 32-bit words from the thread's seed.
    let mut seeder = SmallRng::seed_from_u64(who.seed ^ 0x5eed_1a7e);
    let words: Vec<f64> = (0..4)
        .map(|_| f64::from(seeder.random::<u32>() | 1))
        .collect();
    p.set("seed", lua.create_sequence_from(words)?)?;
    // SAFETY: `exec` reads only its own arguments and pushes only its results.
    p.set("exec", unsafe { lua.create_c_function(exec)? })?;
    p.set("connect", lua.create_function(connect)?)?;
    p.set("print", lua.create_function(print)?)?;
    Ok(p)
}

/// sysbench's `connect()`: a connection to the thread's server, or nil and why.
fn connect(lua: &Lua, (): ()) -> mlua::Result<mlua::MultiValue> {
    let ep = ctx(lua).endpoint.clone();
    let Some(ep) = ep else {
        return (
            Value::Nil,
            "no server while plumb reads the script's options (does it connect \
             at its top level?)",
        )
            .into_lua_multi(lua);
    };
    match ep.connect() {
        Ok(client) => {
            let c = ConnBox(Box::new(ConnUd {
                tally: ctx(lua).tally.clone(),
                client: Some(client),
                postgres: ep.protocol == Protocol::Postgres,
                values: Values::new(),
                row: 0,
                bulk: None,
                life: 0,
                text: String::new(),
            }));
            lua.create_userdata(c)?.into_lua_multi(lua)
        }
        Err(e) => (Value::Nil, e.to_string()).into_lua_multi(lua),
    }
}

/// Lua's `print` as sysbench's: its arguments tab-separated, one line of the
/// script's output (on stderr from the binary).
fn print(lua: &Lua, args: Variadic<Value>) -> mlua::Result<()> {
    let mut line = String::new();
    for (i, v) in args.iter().enumerate() {
        if i > 0 {
            line.push('\t');
        }
        match lua.coerce_string(v.clone())? {
            Some(s) => line.push_str(&s.to_string_lossy()),
            None => line.push_str(&format!("{v:?}")),
        }
    }
    crate::script_output::say(&line);
    Ok(())
}

impl State {
    /// A state with sysbench's API, the stored modules behind `require`, the options
    /// in `sysbench.opt` (and as globals when the script declares none, as sysbench
    /// 1.0 does for legacy scripts), and the script loaded.
    pub fn new(
        sources: &Arc<Vec<ScriptSource>>,
        options: &[(String, OptValue)],
        role: Role<'_>,
        unique: Arc<AtomicU32>,
    ) -> Result<State, SqlError> {
        let lua = Lua::new();
        let name = sources[0].name.clone();
        let fail = |e: mlua::Error| SqlError::Input(format!("{name}: {}", lua_message(&e)));
        let (endpoint, tid, seed, command) = match role {
            Role::Plan => (None, 0, 0, "run"),
            Role::Thread {
                endpoint,
                tid,
                seed,
                command,
            } => (Some(endpoint.clone()), tid, seed, command),
        };
        let who = Who {
            tid,
            seed,
            command,
            postgres: endpoint
                .as_ref()
                .is_some_and(|e| e.protocol == Protocol::Postgres),
        };
        lua.set_app_data(Ctx::new(endpoint, seed, options, unique));
        let (run_event, run_prepare) = set_up(&lua, sources, options, &who).map_err(fail)?;
        let declares = sources[0].text.contains("sysbench.cmdline.options")
            || sources
                .iter()
                .skip(1)
                .any(|s| s.text.contains("sysbench.cmdline.options"));
        if !declares {
            let g = lua.globals();
            for (k, v) in options {
                if !matches!(g.get::<Value>(k.as_str()), Ok(Value::Function(_))) {
                    let v = opt_value(&lua, v).map_err(fail)?;
                    g.set(k.as_str(), v).map_err(fail)?;
                }
            }
        }
        lua.load(sources[0].text.as_str())
            .set_name(chunk_name(&sources[0], true))
            .exec()
            .map_err(fail)?;
        Ok(State {
            lua,
            run_event,
            run_prepare,
        })
    }

    /// Statements sent and rows returned or changed so far.
    pub fn counts(&self) -> (u64, u64) {
        let c = ctx(&self.lua);
        let t = c.tally.borrow();
        (t.queries, t.rows)
    }

    /// What was sent since the last call: statements and rows (counted from zero
    /// again), and each statement's kind and latency, swapped into `parts` (emptied
    /// first): one look at the state's context per event.
    pub fn take(&self, parts: &mut Vec<(u8, u64)>) -> (u64, u64) {
        let c = ctx(&self.lua);
        let mut t = c.tally.borrow_mut();
        parts.clear();
        std::mem::swap(parts, &mut t.parts);
        (std::mem::take(&mut t.queries), std::mem::take(&mut t.rows))
    }

    /// A global function of the script, if it defines one.
    pub fn function(&self, name: &str) -> Option<Function> {
        match self.lua.globals().get::<Value>(name) {
            Ok(Value::Function(f)) => Some(f),
            _ => None,
        }
    }
}

/// `sysbench.rand`'s functions in Rust; prelude.lua adds the rest.
fn rand_table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "zipfian",
        lua.create_function(|lua, (a, b): (f64, f64)| {
            Ok(f64::from(ctx(lua).rand.zipfian(a as u32, b as u32)))
        })?,
    )?;
    t.set(
        "unique",
        lua.create_function(|lua, ()| Ok(f64::from(ctx(lua).rand.unique())))?,
    )?;
    t.set(
        "string",
        lua.create_function(|lua, fmt: mlua::String| {
            let mut out = String::new();
            let b = fmt.as_bytes();
            ctx(lua).rand.string_into(&b, usize::MAX, &mut out);
            Ok(out)
        })?,
    )?;
    t.set(
        "varstring",
        lua.create_function(|lua, (min, max): (f64, f64)| {
            if min > max || max <= 0.0 {
                return Err(mlua::Error::runtime(
                    "sysbench.rand.varstring(min, max): give 0 < min <= max",
                ));
            }
            let mut c = ctx(lua);
            let n = c.rand.uniform(min as u32, max as u32);
            let s: String = (0..n)
                .map(|_| char::from(c.rand.uniform(u32::from(b'0'), u32::from(b'z')) as u8))
                .collect();
            Ok(s)
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_statements_write_parameters_as_literals_outside_quotes() {
        let mut out = String::new();
        substitute(
            "UPDATE t SET c=? WHERE id=? AND d='?'",
            &[Param::Str("it's"), Param::Big(7)],
            true,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, "UPDATE t SET c='it''s' WHERE id=7 AND d='?'");
        substitute("SELECT ?", &[Param::Str("a\\b")], false, &mut out).unwrap();
        assert_eq!(out, "SELECT 'a\\\\b'");
        assert!(substitute("SELECT ?, ?", &[Param::Null], false, &mut out).is_err());
    }

    fn plan_state(options: &[(String, OptValue)]) -> State {
        let src = ScriptSource {
            name: "t.lua".into(),
            weight: 1,
            text: "function event() end".into(),
            sha256: String::new(),
        };
        State::new(
            &Arc::new(vec![src]),
            options,
            Role::Plan,
            Arc::new(AtomicU32::new(0)),
        )
        .unwrap()
    }

    #[test]
    fn sysbench_distributions_stay_in_range_and_special_favours_the_middle() {
        let s = plan_state(&[]);
        let draw = |f: &str, a: u32, b: u32| -> Vec<f64> {
            s.lua
                .load(format!(
                    "local t = {{}} for i = 1, 20000 do t[i] = sysbench.rand.{f}({a}, {b}) end \
                     return t"
                ))
                .eval::<Vec<f64>>()
                .unwrap()
        };
        for f in [
            "uniform", "gaussian", "pareto", "zipfian", "special", "default",
        ] {
            for v in draw(f, 10, 20) {
                assert!((10.0..=20.0).contains(&v) && v.fract() == 0.0, "{f}: {v}");
            }
        }
        // 75% of draws land in the middle 1% (sysbench's rand-spec-res/pct: its upper
        // three quarters, as sysbench reuses the draw that chose the branch), plus the
        // gaussian's share there (about 1.4%); a fixed seed, so a fixed count.
        let middle = draw("special", 1, 1000)
            .iter()
            .filter(|v| (494.0..=507.0).contains(*v))
            .count();
        assert!(middle > 20_000 * 3 / 4, "{middle}");
        // uniform: every value about as often (20000 draws over 11 values).
        let u = draw("uniform", 10, 20);
        for k in 10..=20 {
            let n = u.iter().filter(|v| **v == f64::from(k)).count();
            assert!((1500..2150).contains(&n), "{k}: {n}");
        }
        let d: f64 = s
            .lua
            .load("return sysbench.rand.uniform_double()")
            .eval()
            .unwrap();
        assert!((0.0..1.0).contains(&d));
        let mut r = Rand::new(7, &[], Arc::new(AtomicU32::new(0)));
        let mut t = String::new();
        r.string_into(b"##-@@x", usize::MAX, &mut t);
        let b = t.as_bytes();
        assert!(b[0].is_ascii_digit() && b[1].is_ascii_digit() && b[2] == b'-');
        assert!(b[3].is_ascii_lowercase() && b[4].is_ascii_lowercase() && b[5] == b'x');
    }

    #[test]
    fn statements_are_told_apart_by_their_first_keyword() {
        let name = |s: &str| super::super::LUA_CLASSES[usize::from(statement_class(s))];
        assert_eq!(name("SELECT c FROM sbtest1 WHERE id=?"), "select");
        assert_eq!(name("  /* hint */ (select 1)"), "select");
        assert_eq!(name("INSERT INTO t VALUES (1)"), "insert");
        assert_eq!(name("update t set k=k+1"), "update");
        assert_eq!(name("DELETE FROM t"), "delete");
        assert_eq!(name("BEGIN"), "begin");
        assert_eq!(name("COMMIT"), "commit");
        assert_eq!(name("-- x\nCREATE TABLE t (id int)"), "other");
    }

    #[test]
    fn unique_numbers_do_not_repeat() {
        let u = Arc::new(AtomicU32::new(0));
        let mut a = Rand::new(1, &[], u.clone());
        let mut b = Rand::new(2, &[], u);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..5000 {
            assert!(seen.insert(a.unique()));
            assert!(seen.insert(b.unique()));
        }
    }
}
