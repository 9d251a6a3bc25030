//! The two databases a store can live in, behind one small interface: a SQLite file
//! for one person on one host, PostgreSQL for a team and a fleet. Statements are
//! written once, in the SQL both understand, with `?N` placeholders (renumbered to
//! `$N` for PostgreSQL); the schema's few dialect words are translated in [`pg_ddl`].
//!
//! PostgreSQL is reached through the `postgres` crate: the store writes a step at a
//! time, far from any hot path, so its tokio runtime costs nothing that matters here
//! (the measured queries of `plumb sql` go through plumb-servers' own blocking client).

use postgres::types::{IsNull, ToSql, Type};
use std::fmt;

/// One value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

macro_rules! val_from {
    ($t:ty, $v:ident => $e:expr) => {
        impl From<$t> for Val {
            fn from($v: $t) -> Val {
                $e
            }
        }
        impl From<Option<$t>> for Val {
            fn from(v: Option<$t>) -> Val {
                v.map(Val::from).unwrap_or(Val::Null)
            }
        }
    };
}
val_from!(i64, v => Val::Int(v));
val_from!(f64, v => Val::Real(v));
val_from!(String, v => Val::Text(v));
val_from!(&str, v => Val::Text(v.to_string()));
val_from!(&String, v => Val::Text(v.clone()));

/// What the database said when a statement failed, or a column that is not what the
/// store wrote there.
#[derive(Debug)]
pub enum DbError {
    /// SQLite's error.
    Sqlite(rusqlite::Error),
    /// PostgreSQL's error (its message and SQLSTATE when the server sent one).
    Postgres(postgres::Error),
    /// A column holds a value of another type than the store writes there.
    Column(String),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "{e}"),
            DbError::Postgres(e) => match e.as_db_error() {
                Some(d) => write!(f, "{} ({})", d.message(), d.code().code()),
                None => write!(f, "{e}"),
            },
            DbError::Column(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

/// One row read back.
#[derive(Debug)]
pub(crate) struct Row(Vec<Val>);

impl Row {
    fn at(&self, i: usize) -> &Val {
        self.0.get(i).unwrap_or(&Val::Null)
    }

    fn wrong(&self, i: usize, want: &str) -> DbError {
        DbError::Column(format!(
            "column {i} holds {:?} where {want} was stored",
            self.at(i)
        ))
    }

    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>, DbError> {
        match self.at(i) {
            Val::Null => Ok(None),
            Val::Int(v) => Ok(Some(*v)),
            _ => Err(self.wrong(i, "an integer")),
        }
    }

    pub(crate) fn int(&self, i: usize) -> Result<i64, DbError> {
        self.opt_int(i)?.ok_or_else(|| self.wrong(i, "an integer"))
    }

    pub(crate) fn opt_real(&self, i: usize) -> Result<Option<f64>, DbError> {
        match self.at(i) {
            Val::Null => Ok(None),
            Val::Real(v) => Ok(Some(*v)),
            Val::Int(v) => Ok(Some(*v as f64)),
            _ => Err(self.wrong(i, "a number")),
        }
    }

    pub(crate) fn real(&self, i: usize) -> Result<f64, DbError> {
        self.opt_real(i)?.ok_or_else(|| self.wrong(i, "a number"))
    }

    pub(crate) fn opt_text(&self, i: usize) -> Result<Option<String>, DbError> {
        match self.at(i) {
            Val::Null => Ok(None),
            Val::Text(v) => Ok(Some(v.clone())),
            _ => Err(self.wrong(i, "text")),
        }
    }

    pub(crate) fn text(&self, i: usize) -> Result<String, DbError> {
        self.opt_text(i)?.ok_or_else(|| self.wrong(i, "text"))
    }

    /// A text column parsed (a status, a kind).
    pub(crate) fn parsed<T>(&self, i: usize) -> Result<T, DbError>
    where
        T: std::str::FromStr,
        T::Err: fmt::Display,
    {
        let s = self.text(i)?;
        s.parse()
            .map_err(|e: T::Err| DbError::Column(format!("column {i}: {s:?}: {e}")))
    }
}

/// The base of the advisory lock keys of `Db::lock_suite` ("sui" in ASCII in the high
/// bits, the suite id added; the migration lock is far below).
const SUITE_LOCK: i64 = 0x7375_6900_0000_0000;

/// A connection to the store's database.
pub(crate) enum Db {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// `?N` placeholders as PostgreSQL numbers them (`$N`); the store's statements hold no
/// `?` inside literals.
pub(crate) fn pg_params(sql: &str) -> String {
    sql.replace('?', "$")
}

/// The schema's SQLite words in PostgreSQL's dialect: row ids are identity columns,
/// integers 64-bit and reals double precision, as SQLite stores them.
pub(crate) fn pg_ddl(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "INTEGER" => "BIGINT",
            "REAL" => "DOUBLE PRECISION",
            w => w,
        });
        word.clear();
    };
    for ch in sql
        .replace(
            "INTEGER PRIMARY KEY",
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        )
        .chars()
    {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Val::Null => ValueRef::Null,
            Val::Int(v) => ValueRef::Integer(*v),
            Val::Real(v) => ValueRef::Real(*v),
            Val::Text(v) => ValueRef::Text(v.as_bytes()),
        }))
    }
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(v) if *ty == Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
            Val::Int(v) if *ty == Type::FLOAT8 => (*v as f64).to_sql(ty, out),
            Val::Int(v) => v.to_sql(ty, out),
            Val::Real(v) => v.to_sql(ty, out),
            Val::Text(v) => v.as_str().to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::INT8 | Type::INT4 | Type::FLOAT8 | Type::TEXT | Type::VARCHAR
        )
    }

    postgres::types::to_sql_checked!();
}

fn pg_row(r: &postgres::Row) -> Result<Row, DbError> {
    let mut out = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        let t = c.type_();
        out.push(if *t == Type::INT8 {
            r.try_get::<_, Option<i64>>(i)?.into()
        } else if *t == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)?.map(i64::from).into()
        } else if *t == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(i)?.into()
        } else if *t == Type::BOOL {
            r.try_get::<_, Option<bool>>(i)?.map(i64::from).into()
        } else {
            r.try_get::<_, Option<String>>(i)?.into()
        });
    }
    Ok(Row(out))
}

fn sqlite_row(r: &rusqlite::Row<'_>, n: usize) -> rusqlite::Result<Row> {
    use rusqlite::types::ValueRef;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match r.get_ref(i)? {
            ValueRef::Null => Val::Null,
            ValueRef::Integer(v) => Val::Int(v),
            ValueRef::Real(v) => Val::Real(v),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                Val::Text(String::from_utf8_lossy(t).into_owned())
            }
        });
    }
    Ok(Row(out))
}

fn pg_args(args: &[Val]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

impl Db {
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// Runs a statement; returns how many rows it changed.
    pub(crate) fn exec(&mut self, sql: &str, args: &[Val]) -> Result<u64, DbError> {
        match self {
            Db::Sqlite(c) => Ok(c.execute(sql, rusqlite::params_from_iter(args.iter()))? as u64),
            Db::Postgres(c) => Ok(c.execute(pg_params(sql).as_str(), &pg_args(args))?),
        }
    }

    /// Runs a query; returns its rows.
    pub(crate) fn query(&mut self, sql: &str, args: &[Val]) -> Result<Vec<Row>, DbError> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.column_count();
                let rows = st
                    .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                        sqlite_row(r, n)
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            }
            Db::Postgres(c) => c
                .query(pg_params(sql).as_str(), &pg_args(args))?
                .iter()
                .map(pg_row)
                .collect(),
        }
    }

    /// The first row of a query, if any.
    pub(crate) fn one(&mut self, sql: &str, args: &[Val]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// Runs an INSERT (written without RETURNING) and returns the new row's id.
    pub(crate) fn insert(&mut self, sql: &str, args: &[Val]) -> Result<i64, DbError> {
        let sql = format!("{sql} RETURNING id");
        self.one(&sql, args)?
            .ok_or_else(|| DbError::Column("an INSERT returned no id".into()))?
            .int(0)
    }

    /// Statements without parameters or rows (DDL, transaction control).
    pub(crate) fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Db::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Db::Postgres(c) => Ok(c.batch_execute(sql)?),
        }
    }

    /// Runs `f` in one write transaction, committed if it returns Ok and rolled back
    /// otherwise. On SQLite the write lock is taken first (IMMEDIATE): a deferred
    /// transaction that reads then writes fails at once when another plumb wrote in
    /// between.
    pub(crate) fn write<T, E: From<DbError>>(
        &mut self,
        f: impl FnOnce(&mut Db) -> Result<T, E>,
    ) -> Result<T, E> {
        self.batch(if self.is_postgres() {
            "BEGIN"
        } else {
            "BEGIN IMMEDIATE"
        })?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Serializes this write transaction with the others of `suite` that read before they
    /// write (the queue's "was that the last item?", joining repeat groups). SQLite's
    /// IMMEDIATE transactions already are; on PostgreSQL, under READ COMMITTED, two
    /// workers ending a suite's last two items at once would each see the other's item
    /// still running, and neither would end the suite.
    pub(crate) fn lock_suite(&mut self, suite: i64) -> Result<(), DbError> {
        if self.is_postgres() {
            self.exec(
                "SELECT pg_advisory_xact_lock(?1)",
                &[Val::Int(SUITE_LOCK + suite)],
            )?;
        }
        Ok(())
    }

    /// The database's clock in seconds since the epoch: one clock for every host of a
    /// fleet, so heartbeats compare without skew.
    pub(crate) fn now_expr(&self) -> &'static str {
        if self.is_postgres() {
            "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"
        } else {
            "((julianday('now') - 2440587.5) * 86400.0)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_reads_as_postgres_dialect() {
        assert_eq!(
            pg_ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, x REAL, s TEXT, realm TEXT)"),
            "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, n BIGINT NOT NULL, x DOUBLE PRECISION, s TEXT, realm TEXT)"
        );
        assert_eq!(pg_params("a = ?1 AND b = ?12"), "a = $1 AND b = $12");
    }
}
