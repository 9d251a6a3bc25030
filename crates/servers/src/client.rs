//! One connection per client thread, with prepared statements: PostgreSQL through
//! [`crate::pgwire`] (messages from `postgres-protocol`), MySQL and MariaDB through
//! [`crate::mywire`]. The microbenchmarks are written once with `?`
//! placeholders; the PostgreSQL client renumbers them to `$1 …` when it prepares.

use crate::error::SqlError;
use std::path::PathBuf;

/// Which wire protocol a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// PostgreSQL.
    Postgres,
    /// MySQL (MariaDB, MySQL).
    MySql,
}

/// Where a server listens and who plumb is there. The password never leaves this
/// struct: `Display` and `redacted_url` leave it out.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Its protocol.
    pub protocol: Protocol,
    /// A unix socket (its directory for PostgreSQL, the socket file for MySQL) …
    pub socket: Option<PathBuf>,
    /// … or a TCP host and port.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// User name.
    pub user: String,
    /// Password, if any.
    pub password: Option<String>,
    /// The database plumb creates its tables in.
    pub database: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted_url())
    }
}

impl Endpoint {
    /// Reads `postgres://user:pass@host:port/db` or `mysql://…`; a `host=/dir` or
    /// `socket=/path` query parameter picks a unix socket.
    pub fn parse_url(text: &str) -> Result<Endpoint, SqlError> {
        let bad = |why: &str| {
            SqlError::Input(format!(
                "--url {}: {why}; write postgres://USER[:PASSWORD]@HOST[:PORT]/DB or \
                 mysql://USER[:PASSWORD]@HOST[:PORT]/DB",
                redact(text)
            ))
        };
        let u = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        let protocol = match u.scheme() {
            "postgres" | "postgresql" => Protocol::Postgres,
            "mysql" | "mariadb" => Protocol::MySql,
            s => return Err(bad(&format!("unknown scheme {s:?}"))),
        };
        let decode = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        let user = match u.username() {
            "" => match protocol {
                Protocol::Postgres => "postgres".to_string(),
                Protocol::MySql => "root".to_string(),
            },
            n => decode(n),
        };
        let database = u.path().trim_start_matches('/').to_string();
        if database.is_empty() {
            return Err(bad("no database named (the path after the host)"));
        }
        let mut socket = None;
        for (k, v) in u.query_pairs() {
            match k.as_ref() {
                "host" | "socket" => socket = Some(PathBuf::from(v.as_ref())),
                other => return Err(bad(&format!("unknown parameter {other:?}"))),
            }
        }
        let host = u.host_str().unwrap_or("localhost").to_string();
        if socket.is_none() && u.host_str().is_none() {
            return Err(bad("no host"));
        }
        Ok(Endpoint {
            protocol,
            socket,
            host,
            port: u.port().unwrap_or(match protocol {
                Protocol::Postgres => 5432,
                Protocol::MySql => 3306,
            }),
            user,
            password: u.password().map(decode),
            database,
        })
    }

    /// The endpoint as a URL without its password, for the store, logs and reports.
    pub fn redacted_url(&self) -> String {
        let scheme = match self.protocol {
            Protocol::Postgres => "postgres",
            Protocol::MySql => "mysql",
        };
        let pw = if self.password.is_some() { ":***" } else { "" };
        // As parse_url reads it back: PostgreSQL names the socket's directory (host=).
        let key = match self.protocol {
            Protocol::Postgres => "host",
            Protocol::MySql => "socket",
        };
        match &self.socket {
            Some(s) => format!(
                "{scheme}://{}{pw}@localhost:{}/{}?{key}={}",
                self.user,
                self.port,
                self.database,
                s.display()
            ),
            None => format!(
                "{scheme}://{}{pw}@{}:{}/{}",
                self.user, self.host, self.port, self.database
            ),
        }
    }

    /// Opens one connection.
    pub fn connect(&self) -> Result<Box<dyn SqlClient>, SqlError> {
        match self.protocol {
            Protocol::Postgres => Ok(Box::new(crate::pgwire::PgWire::connect(self)?)),
            Protocol::MySql => Ok(Box::new(crate::mywire::MyWire::connect(self)?)),
        }
    }
}

/// A URL with its password replaced: plumb-plan's, beside the other password rules.
pub use plumb_plan::redact;

/// One statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    /// An INTEGER column.
    Int(i32),
    /// A CHAR column.
    Str(&'a str),
    /// A DECIMAL(_, 2) amount in hundredths (TPC-C's money), sent as exact decimal
    /// text (`-12.34`): a float would make `w_ytd + ?` inexact, and the consistency
    /// checks compare such sums to the cent.
    Cents(i64),
    /// A BIGINT value (a sysbench script's integer parameters are 64-bit).
    Big(i64),
    /// A DOUBLE value.
    Double(f64),
    /// NULL.
    Null,
}

/// Writes `cents` as decimal text with two places (`-0.05`, `300000.00`), without
/// allocating: both wire clients send [`Param::Cents`] this way.
pub(crate) fn put_cents(cents: i64, out: &mut impl Extend<u8>) {
    let mut tmp = [0u8; 24];
    let mut i = tmp.len();
    let mut n = cents.unsigned_abs();
    for k in 0.. {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if k == 1 {
            i -= 1;
            tmp[i] = b'.';
        }
        if k >= 2 && n == 0 {
            break;
        }
    }
    if cents < 0 {
        i -= 1;
        tmp[i] = b'-';
    }
    out.extend(tmp[i..].iter().copied());
}

/// The values of the rows a prepared query read ([`SqlClient::fetch`]), each as text
/// (NULL as `None`), kept in one buffer that the caller owns and passes to every fetch:
/// a transaction that needs a few values back (TPC-C's next order id, prices,
/// balances) then allocates nothing per row, where [`TextRows`] allocates a string per
/// value and a vector per row.
#[derive(Debug, Default, Clone)]
pub struct Values {
    /// Every value's text, one after another.
    text: Vec<u8>,
    /// Each value's span in `text`, row by row; [`NULL`] for NULL.
    cells: Vec<(u32, u32)>,
    cols: usize,
    /// The result's column names, kept only when asked ([`Values::keep_names`]): a
    /// script's `\gset` names its variables after them, the measured queries need none.
    names: Vec<String>,
    keep_names: bool,
}

/// The span of a NULL value.
const NULL: (u32, u32) = (u32::MAX, u32::MAX);

impl Values {
    /// An empty buffer; it grows to the largest result it is given and stays that size.
    pub fn new() -> Values {
        Values::default()
    }

    /// Rows read.
    pub fn rows(&self) -> usize {
        self.cells.len().checked_div(self.cols).unwrap_or(0)
    }

    /// Whether no row was read.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Values per row (0 when no row was read).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The value at `row`, `col` as bytes: `None` for NULL or outside the result.
    pub fn bytes(&self, row: usize, col: usize) -> Option<&[u8]> {
        if col >= self.cols {
            return None;
        }
        let (a, b) = *self.cells.get(row * self.cols + col)?;
        if (a, b) == NULL {
            return None;
        }
        self.text.get(a as usize..b as usize)
    }

    /// The value at `row`, `col` as text: `None` for NULL, outside the result, or not
    /// UTF-8.
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        self.bytes(row, col)
            .and_then(|b| std::str::from_utf8(b).ok())
    }

    /// The value at `row`, `col` as an integer; NULL or anything else is an error
    /// naming the cell, since a transaction that reads a key cannot go on without it.
    pub fn int(&self, row: usize, col: usize) -> Result<i64, SqlError> {
        let b = self.need(row, col)?;
        std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| self.bad(row, col, "an integer"))
    }

    /// The exact decimal at `row`, `col` in units of 10^-`scale` (`"12.3"` with scale 2
    /// is 1230): money and rates read back without a float's rounding. More non-zero
    /// places than `scale`, NULL or anything but a plain decimal is an error.
    pub fn fixed(&self, row: usize, col: usize, scale: u32) -> Result<i64, SqlError> {
        let b = self.need(row, col)?;
        parse_fixed(b, scale).ok_or_else(|| self.bad(row, col, "a decimal"))
    }

    fn need(&self, row: usize, col: usize) -> Result<&[u8], SqlError> {
        self.bytes(row, col).ok_or_else(|| {
            SqlError::Verify(format!(
                "value {col} of row {row} is NULL or missing ({} rows of {} values read)",
                self.rows(),
                self.cols
            ))
        })
    }

    fn bad(&self, row: usize, col: usize, what: &str) -> SqlError {
        SqlError::Verify(format!(
            "value {col} of row {row} ({:?}) is not {what}",
            String::from_utf8_lossy(self.bytes(row, col).unwrap_or(b""))
        ))
    }

    /// Empties the buffer for a result of `cols` values per row, keeping its memory.
    pub(crate) fn start(&mut self, cols: usize) {
        self.text.clear();
        self.cells.clear();
        self.cols = cols;
    }

    /// Asks the clients to keep the next results' column names (they cost a message
    /// on PostgreSQL's extended protocol and a string per column), for a caller that
    /// names variables after them.
    pub fn keep_names(&mut self, yes: bool) {
        self.keep_names = yes;
    }

    /// Whether column names are wanted.
    pub(crate) fn wants_names(&self) -> bool {
        self.keep_names
    }

    /// The last result's column names (empty unless [`Values::keep_names`]).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Sets the result's column names.
    pub(crate) fn set_names(&mut self, names: Vec<String>) {
        self.names = names;
    }

    /// Sets the width once the first row shows it (PostgreSQL's rows carry their
    /// count; a result without rows keeps 0).
    pub(crate) fn set_cols(&mut self, cols: usize) {
        if self.cells.is_empty() {
            self.cols = cols;
        }
    }

    /// Appends one value (`None` for NULL).
    pub(crate) fn push(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.cells.push(NULL),
            Some(b) => {
                let a = self.text.len() as u32;
                self.text.extend_from_slice(b);
                self.cells.push((a, self.text.len() as u32));
            }
        }
    }

    /// Appends one value written by `f` into the text buffer (the MySQL client writes
    /// binary numbers and dates as text this way, without a temporary string).
    pub(crate) fn push_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let a = self.text.len() as u32;
        f(&mut self.text);
        self.cells.push((a, self.text.len() as u32));
    }
}

/// `b` (`-12.5`, `0.0500`, `7`) in units of 10^-`scale`.
fn parse_fixed(b: &[u8], scale: u32) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    let (int, frac) = match digits.iter().position(|&c| c == b'.') {
        Some(p) => (&digits[..p], &digits[p + 1..]),
        None => (digits, &digits[..0]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &c in int {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    for (i, &c) in frac.iter().enumerate() {
        if !c.is_ascii_digit() {
            return None;
        }
        if i as u32 >= scale {
            if c != b'0' {
                return None;
            }
            continue;
        }
        v = v.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    for _ in frac.len() as u32..scale {
        v = v.checked_mul(10)?;
    }
    Some(if neg { -v } else { v })
}

/// Rows as text: each row its (column, value) pairs, NULL as `None`.
pub type TextRows = Vec<Vec<(String, Option<String>)>>;

/// A prepared statement's handle within its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt(pub(crate) usize);

/// What one statement's reply counted: rows it returned and rows it changed (a
/// script's command may be either, and its step counts both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    /// Rows returned.
    pub rows: u64,
    /// Rows inserted, updated or deleted.
    pub affected: u64,
}

/// One connection, as a microbenchmark uses it.
pub trait SqlClient: Send {
    /// Prepares `sql` (with `?` placeholders) on this connection.
    fn prepare(&mut self, sql: &str) -> Result<Stmt, SqlError>;
    /// Prepares `sql` as written, in the server's own placeholder syntax (`$1 …` on
    /// PostgreSQL): a user's script may hold a `?` that is an operator (jsonb's), not
    /// a placeholder.
    fn prepare_native(&mut self, sql: &str) -> Result<Stmt, SqlError> {
        self.prepare(sql)
    }
    /// Runs a prepared query and returns how many rows came back.
    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError>;
    /// Runs a prepared query, keeps the values of the rows it read in `out` (emptied
    /// first, its memory reused) and returns how many rows came back: for transactions
    /// that go on with what they read, where [`SqlClient::query`] only counts.
    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Values,
    ) -> Result<u64, SqlError>;
    /// Runs a prepared statement that changes rows and returns how many it changed.
    fn execute(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError>;
    /// Runs statements as text, without parameters or results (DDL, BEGIN, COMMIT).
    fn batch(&mut self, sql: &str) -> Result<(), SqlError>;
    /// Runs a query as text and returns its rows, every value as text (NULL as None).
    fn rows(&mut self, sql: &str) -> Result<TextRows, SqlError>;
    /// Runs a prepared statement of any kind (a script's command: plumb does not know
    /// whether it reads or writes) and counts both; with `out`, the values it returned
    /// are kept there (emptied first).
    fn run(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: Option<&mut Values>,
    ) -> Result<Counted, SqlError>;
    /// Runs SQL text on the simple (text) protocol, pgbench's `-M simple`, counting
    /// rows returned and changed; with `out`, the values are kept there as text.
    fn run_text(&mut self, sql: &str, out: Option<&mut Values>) -> Result<Counted, SqlError>;
    /// Runs `sql` (placeholders `$1 …`) as an unnamed statement, parsed, bound and
    /// executed in one round trip: pgbench's `-M extended`. Only PostgreSQL's protocol
    /// has it.
    fn run_extended(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        out: Option<&mut Values>,
    ) -> Result<Counted, SqlError> {
        let _ = (sql, params, out);
        Err(SqlError::Input(
            "-M extended is PostgreSQL's extended query protocol, which MySQL and MariaDB do \
             not have; use --query-mode simple or prepared"
                .into(),
        ))
    }
}

/// Renumbers `?` placeholders to PostgreSQL's `$1, $2, …` (the statements plumb sends
/// have no `?` inside literals).
pub fn pg_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(
            pg_placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ?"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2"
        );
    }

    #[test]
    fn cents_are_written_as_exact_decimals() {
        for (v, want) in [
            (0, "0.00"),
            (5, "0.05"),
            (-5, "-0.05"),
            (1234, "12.34"),
            (-1000, "-10.00"),
            (30_000_000, "300000.00"),
            (i64::MIN, "-92233720368547758.08"),
        ] {
            let mut b = Vec::new();
            put_cents(v, &mut b);
            assert_eq!(std::str::from_utf8(&b).unwrap(), want);
        }
    }

    #[test]
    fn decimals_parse_to_fixed_point_and_junk_is_refused() {
        for (s, scale, want) in [
            ("12.34", 2, Some(1234)),
            ("12.3", 2, Some(1230)),
            ("-10.00", 2, Some(-1000)),
            ("0.0500", 4, Some(500)),
            ("7", 2, Some(700)),
            ("+.5", 1, Some(5)),
            ("1.230", 2, Some(123)),
            ("1.235", 2, None),
            ("1e5", 2, None),
            ("", 2, None),
            ("-", 2, None),
            ("99999999999999999999", 0, None),
        ] {
            assert_eq!(parse_fixed(s.as_bytes(), scale), want, "{s:?}");
        }
    }

    #[test]
    fn values_keep_rows_nulls_and_their_memory() {
        let mut v = Values::new();
        v.start(2);
        v.push(Some(b"42"));
        v.push(None);
        v.push_with(|t| t.extend_from_slice(b"-3.50"));
        v.push(Some(b"abc"));
        assert_eq!((v.rows(), v.cols()), (2, 2));
        assert_eq!(v.int(0, 0).unwrap(), 42);
        assert_eq!(v.get(0, 1), None);
        assert!(v.int(0, 1).is_err());
        assert_eq!(v.fixed(1, 0, 2).unwrap(), -350);
        assert_eq!(v.get(1, 1), Some("abc"));
        assert!(v.int(1, 1).is_err());
        assert_eq!(v.get(2, 0), None);
        assert_eq!(v.get(0, 2), None);
        let cap = v.text.capacity();
        v.start(1);
        assert!(v.is_empty() && v.rows() == 0);
        assert_eq!(v.text.capacity(), cap);
    }

    #[test]
    fn urls_parse_and_never_show_their_password() {
        let e = Endpoint::parse_url("postgres://bob:s%40cret@db1:6432/bench").unwrap();
        assert_eq!(e.protocol, Protocol::Postgres);
        assert_eq!((e.host.as_str(), e.port), ("db1", 6432));
        assert_eq!(e.password.as_deref(), Some("s@cret"));
        assert_eq!(e.redacted_url(), "postgres://bob:***@db1:6432/bench");
        assert!(!format!("{e:?}").contains("cret"));
        let m = Endpoint::parse_url("mysql://root@localhost/sb?socket=/run/x.sock").unwrap();
        assert_eq!(m.socket, Some(PathBuf::from("/run/x.sock")));
        assert_eq!(m.port, 3306);
        for bad in [
            "redis://x/db",
            "postgres://host",
            "not a url",
            "postgres://u:pw@h/db?sslmode=require",
        ] {
            let msg = Endpoint::parse_url(bad).unwrap_err().to_string();
            assert!(msg.starts_with("--url"), "{bad}: {msg}");
            assert!(!msg.contains(":pw@"), "{msg}");
        }
    }
}
