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

/// A URL with its password replaced, for error messages about a URL that did not parse.
pub fn redact(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "(unparsable URL)".into(),
    }
}

/// One statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    /// An INTEGER column.
    Int(i32),
    /// A CHAR column.
    Str(&'a str),
}

/// Rows as text: each row its (column, value) pairs, NULL as `None`.
pub type TextRows = Vec<Vec<(String, Option<String>)>>;

/// A prepared statement's handle within its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt(pub(crate) usize);

/// One connection, as a microbenchmark uses it.
pub trait SqlClient: Send {
    /// Prepares `sql` (with `?` placeholders) on this connection.
    fn prepare(&mut self, sql: &str) -> Result<Stmt, SqlError>;
    /// Runs a prepared query and returns how many rows came back.
    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError>;
    /// Runs a prepared statement that changes rows and returns how many it changed.
    fn execute(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError>;
    /// Runs statements as text, without parameters or results (DDL, BEGIN, COMMIT).
    fn batch(&mut self, sql: &str) -> Result<(), SqlError>;
    /// Runs a query as text and returns its rows, every value as text (NULL as None).
    fn rows(&mut self, sql: &str) -> Result<TextRows, SqlError>;
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
