//! A PostgreSQL client on a blocking socket, for the measured queries: messages are
//! encoded by `postgres-protocol` (the crate under tokio-postgres, also doing the MD5
//! and SCRAM authentication), parameters go as text as libpq sends them, and replies
//! are read into one reused buffer, rows counted, not decoded. Why not the `postgres`
//! crate: it runs a tokio runtime under every connection, and its reactor (a failed
//! read, epoll_wait, then the read) cost plumb 1.3-1.5× the client CPU per query of
//! sysbench and pgbench on the same server (bench/compare-sysbench.sh), so the client,
//! not the server, set the rate. One write, one poll and one read per query here
//! ([`crate::wire`]).

use crate::client::{
    pg_placeholders, put_cents, Counted, Endpoint, Param, SqlClient, Stmt, TextRows, Values,
};
use crate::error::SqlError;
use crate::wire::{io_err, Wire};
use bytes::BytesMut;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

/// One PostgreSQL connection.
pub struct PgWire {
    wire: Wire,
    out: BytesMut,
    stmts: Vec<String>,
    context: String,
}

/// Where a reply's rows go: counted only (the measured queries), kept as strings
/// ([`SqlClient::rows`]), or kept as values in the caller's buffer ([`SqlClient::fetch`]).
enum Sink<'a> {
    Count,
    Text(&'a mut TextRows),
    Values(&'a mut Values),
}

/// What a reply to one request held.
#[derive(Default)]
struct Reply {
    rows: u64,
    affected: u64,
    error: Option<SqlError>,
}

/// An ErrorResponse's fields: SQLSTATE (`C`) and message (`M`).
fn error_of(body: &[u8], context: &str) -> SqlError {
    let (mut code, mut message) = (None, String::new());
    let mut rest = body;
    while let Some((&t, r)) = rest.split_first() {
        if t == 0 {
            break;
        }
        let n = r.iter().position(|&b| b == 0).unwrap_or(r.len());
        let v = String::from_utf8_lossy(&r[..n]).into_owned();
        match t {
            b'C' => code = Some(v),
            b'M' => message = v,
            _ => {}
        }
        rest = r.get(n + 1..).unwrap_or(&[]);
    }
    SqlError::Query {
        context: context.to_string(),
        message,
        code,
    }
}

/// Writes `v` in decimal, as libpq's text parameters are.
/// Writes a value's text (a DOUBLE's shortest round-trip form) without allocating.
fn put_display(v: &dyn std::fmt::Display, out: &mut BytesMut) {
    use std::fmt::Write as _;
    struct W<'b>(&'b mut BytesMut);
    impl std::fmt::Write for W<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let _ = write!(W(out), "{v}");
}

fn put_int(v: i32, out: &mut BytesMut) {
    put_i64(i64::from(v), out)
}

/// Writes `v` in decimal without allocating or formatting machinery (a BIGINT
/// parameter is text on this protocol, one per statement of a script).
fn put_i64(v: i64, out: &mut BytesMut) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        tmp[i] = b'-';
    }
    out.extend_from_slice(&tmp[i..]);
}

impl PgWire {
    /// Connects, authenticates (trust, password, MD5, SCRAM-SHA-256) and waits until
    /// the server is ready.
    pub fn connect(ep: &Endpoint) -> Result<PgWire, SqlError> {
        let context = format!("connecting to {}", ep.redacted_url());
        let path = ep
            .socket
            .as_ref()
            .map(|d| d.join(format!(".s.PGSQL.{}", ep.port)));
        let wire =
            Wire::connect(path.as_deref(), &ep.host, ep.port).map_err(|e| io_err(&context, e))?;
        let mut c = PgWire {
            wire,
            out: BytesMut::with_capacity(4096),
            stmts: Vec::new(),
            context: context.clone(),
        };
        frontend::startup_message(
            [
                ("user", ep.user.as_str()),
                ("database", ep.database.as_str()),
                ("application_name", "plumb"),
                ("client_encoding", "UTF8"),
            ],
            &mut c.out,
        )
        .map_err(|e| io_err(&context, e))?;
        c.send()?;
        let password = ep.password.as_deref();
        let no_password = || {
            SqlError::Input(format!(
            "{}: the server asks for a password; give it in the URL (postgres://USER:PASSWORD@…)",
            ep.redacted_url()
        ))
        };
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            let (tag, body) = c.next()?;
            match tag {
                b'R' => {
                    let code = i32::from_be_bytes(body[..4].try_into().unwrap_or([0; 4]));
                    let data = body[4..].to_vec();
                    match code {
                        0 => {}
                        3 => {
                            let pw = password.ok_or_else(no_password)?;
                            frontend::password_message(pw.as_bytes(), &mut c.out)
                                .map_err(|e| io_err(&context, e))?;
                            c.send()?;
                        }
                        5 => {
                            let pw = password.ok_or_else(no_password)?;
                            let salt: [u8; 4] = data[..4].try_into().unwrap_or([0; 4]);
                            let h = md5_hash(ep.user.as_bytes(), pw.as_bytes(), salt);
                            frontend::password_message(h.as_bytes(), &mut c.out)
                                .map_err(|e| io_err(&context, e))?;
                            c.send()?;
                        }
                        10 => {
                            let pw = password.ok_or_else(no_password)?;
                            let s = sasl::ScramSha256::new(
                                pw.as_bytes(),
                                sasl::ChannelBinding::unsupported(),
                            );
                            frontend::sasl_initial_response(
                                sasl::SCRAM_SHA_256,
                                s.message(),
                                &mut c.out,
                            )
                            .map_err(|e| io_err(&context, e))?;
                            c.send()?;
                            scram = Some(s);
                        }
                        11 => {
                            let s = scram
                                .as_mut()
                                .ok_or_else(|| io_err(&context, bad_reply()))?;
                            s.update(&data).map_err(|e| io_err(&context, e))?;
                            frontend::sasl_response(s.message(), &mut c.out)
                                .map_err(|e| io_err(&context, e))?;
                            c.send()?;
                        }
                        12 => {
                            let s = scram
                                .as_mut()
                                .ok_or_else(|| io_err(&context, bad_reply()))?;
                            s.finish(&data).map_err(|e| io_err(&context, e))?;
                        }
                        other => {
                            return Err(SqlError::Input(format!(
                                "{}: the server asks for authentication method {other}, which \
                                 plumb does not speak (it speaks trust, password, md5 and \
                                 scram-sha-256)",
                                ep.redacted_url()
                            )))
                        }
                    }
                }
                b'E' => return Err(error_of(&body, &context)),
                b'Z' => break,
                _ => {} // ParameterStatus, BackendKeyData, notices
            }
        }
        c.context = "statement".into();
        Ok(c)
    }

    fn send(&mut self) -> Result<(), SqlError> {
        let r = self.wire.write_all(&self.out);
        self.out.clear();
        r.map_err(|e| io_err(&self.context, e))
    }

    /// The next message: its tag and body (copied out only where a caller keeps it).
    fn next(&mut self) -> Result<(u8, Vec<u8>), SqlError> {
        let (tag, a, b) = self.next_span()?;
        Ok((tag, self.wire.buf[a..b].to_vec()))
    }

    /// The next message in place: its tag and where its body is in the buffer.
    fn next_span(&mut self) -> Result<(u8, usize, usize), SqlError> {
        self.wire.fill(5).map_err(|e| io_err(&self.context, e))?;
        let h = &self.wire.buf[self.wire.pos..self.wire.pos + 5];
        let tag = h[0];
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if len < 4 {
            return Err(io_err(&self.context, bad_reply()));
        }
        self.wire
            .fill(1 + len)
            .map_err(|e| io_err(&self.context, e))?;
        let (_, stop) = self.wire.take(1 + len);
        Ok((tag, stop - (len - 4), stop))
    }

    /// Reads one reply up to ReadyForQuery, counting rows; an error is kept until the
    /// server is ready again, so the connection stays usable.
    fn reply(&mut self, mut sink: Sink<'_>) -> Result<Reply, SqlError> {
        let mut r = Reply::default();
        let mut names: Vec<String> = Vec::new();
        loop {
            let (tag, a, b) = self.next_span()?;
            match tag {
                b'D' => {
                    r.rows += 1;
                    match &mut sink {
                        Sink::Count => {}
                        Sink::Text(out) => out.push(data_row(&self.wire.buf[a..b], &names)),
                        Sink::Values(out) => data_values(&self.wire.buf[a..b], out),
                    }
                }
                b'C' => {
                    // "SELECT 5", "UPDATE 1", "INSERT 0 1", "DELETE 3".
                    let t = &self.wire.buf[a..b.saturating_sub(1)];
                    let last = t.rsplit(|&c| c == b' ').next().unwrap_or(b"");
                    r.affected = std::str::from_utf8(last)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                }
                b'T' if matches!(sink, Sink::Text(_)) => names = row_names(&self.wire.buf[a..b]),
                b'T' => {
                    if let Sink::Values(out) = &mut sink {
                        if out.wants_names() {
                            out.set_names(row_names(&self.wire.buf[a..b]));
                        }
                    }
                }
                b'E' => r.error = Some(error_of(&self.wire.buf[a..b], &self.context)),
                b'Z' => return Ok(r),
                _ => {} // ParseComplete, BindComplete, NoData, notices, parameter changes
            }
        }
    }

    fn bind_execute(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        sink: Sink<'_>,
    ) -> Result<Reply, SqlError> {
        let name = std::mem::take(&mut self.stmts[stmt.0]);
        let r = self.exchange(None, &name, params, sink);
        self.stmts[stmt.0] = name;
        r
    }

    /// One round trip of the extended protocol: Parse of `parse` as the unnamed
    /// statement if given, then Bind of `statement` to the unnamed portal, Describe of
    /// the portal when the caller keeps column names, Execute and Sync.
    fn exchange(
        &mut self,
        parse: Option<&str>,
        statement: &str,
        params: &[Param<'_>],
        sink: Sink<'_>,
    ) -> Result<Reply, SqlError> {
        if let Some(sql) = parse {
            if frontend::parse("", sql, std::iter::empty(), &mut self.out).is_err() {
                self.out.clear();
                return Err(io_err(sql, bad_reply()));
            }
        }
        let bound = frontend::bind(
            "",
            statement,
            std::iter::empty::<i16>(),
            params,
            |p, out| {
                match p {
                    Param::Int(i) => put_int(*i, out),
                    Param::Str(s) => out.extend_from_slice(s.as_bytes()),
                    Param::Cents(c) => put_cents(*c, out),
                    Param::Big(i) => put_i64(*i, out),
                    Param::Double(d) => put_display(d, out),
                    Param::Null => return Ok(IsNull::Yes),
                }
                Ok(IsNull::No)
            },
            std::iter::empty::<i16>(),
            &mut self.out,
        );
        if bound.is_err() {
            self.out.clear();
            return Err(io_err(&self.context, bad_reply()));
        }
        if matches!(&sink, Sink::Values(v) if v.wants_names()) {
            let _ = frontend::describe(b'P', "", &mut self.out);
        }
        let _ = frontend::execute("", 0, &mut self.out);
        frontend::sync(&mut self.out);
        self.send()?;
        let r = self.reply(sink)?;
        match r.error {
            Some(e) => Err(e),
            None => Ok(r),
        }
    }

    fn simple(&mut self, sql: &str, sink: Sink<'_>) -> Result<Reply, SqlError> {
        frontend::query(sql, &mut self.out).map_err(|e| io_err(sql, e))?;
        self.send()?;
        let mut r = self.reply(sink)?;
        match r.error.take() {
            Some(SqlError::Query { message, code, .. }) => Err(SqlError::Query {
                context: sql.to_string(),
                message,
                code,
            }),
            Some(e) => Err(e),
            None => Ok(r),
        }
    }
}

fn bad_reply() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, "a malformed message")
}

fn row_names(body: &[u8]) -> Vec<String> {
    let n = body
        .get(..2)
        .map(|b| i16::from_be_bytes([b[0], b[1]]))
        .unwrap_or(0);
    let mut rest = &body[2.min(body.len())..];
    let mut names = Vec::new();
    for _ in 0..n {
        let z = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        names.push(String::from_utf8_lossy(&rest[..z]).into_owned());
        rest = rest.get(z + 1 + 18..).unwrap_or(&[]);
    }
    names
}

/// A DataRow's values (text format) into `out`, copied once into its buffer.
fn data_values(body: &[u8], out: &mut Values) {
    let n = body
        .get(..2)
        .map(|b| i16::from_be_bytes([b[0], b[1]]))
        .unwrap_or(0)
        .max(0) as usize;
    out.set_cols(n);
    let mut rest = &body[2.min(body.len())..];
    for _ in 0..n {
        let Some(l) = rest.get(..4) else {
            out.push(None);
            continue;
        };
        let len = i32::from_be_bytes([l[0], l[1], l[2], l[3]]);
        rest = &rest[4..];
        if len < 0 {
            out.push(None);
        } else {
            let len = (len as usize).min(rest.len());
            out.push(Some(&rest[..len]));
            rest = &rest[len..];
        }
    }
}

fn data_row(body: &[u8], names: &[String]) -> Vec<(String, Option<String>)> {
    let n = body
        .get(..2)
        .map(|b| i16::from_be_bytes([b[0], b[1]]))
        .unwrap_or(0) as usize;
    let mut rest = &body[2.min(body.len())..];
    let mut row = Vec::with_capacity(n);
    for i in 0..n {
        let Some(l) = rest.get(..4) else { break };
        let len = i32::from_be_bytes([l[0], l[1], l[2], l[3]]);
        rest = &rest[4..];
        let v = if len < 0 {
            None
        } else {
            let len = (len as usize).min(rest.len());
            let v = String::from_utf8_lossy(&rest[..len]).into_owned();
            rest = &rest[len..];
            Some(v)
        };
        row.push((names.get(i).cloned().unwrap_or_default(), v));
    }
    row
}

impl SqlClient for PgWire {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, SqlError> {
        self.prepare_native(&pg_placeholders(sql))
    }

    fn prepare_native(&mut self, sql: &str) -> Result<Stmt, SqlError> {
        let name = format!("plumb{}", self.stmts.len());
        frontend::parse(&name, sql, std::iter::empty(), &mut self.out)
            .map_err(|e| io_err(sql, e))?;
        frontend::sync(&mut self.out);
        self.send()?;
        if let Some(SqlError::Query { message, code, .. }) = self.reply(Sink::Count)?.error {
            return Err(SqlError::Query {
                context: format!("preparing {sql}"),
                message,
                code,
            });
        }
        self.stmts.push(name);
        Ok(Stmt(self.stmts.len() - 1))
    }

    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError> {
        Ok(self.bind_execute(stmt, params, Sink::Count)?.rows)
    }

    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Values,
    ) -> Result<u64, SqlError> {
        out.start(0);
        Ok(self.bind_execute(stmt, params, Sink::Values(out))?.rows)
    }

    fn execute(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError> {
        Ok(self.bind_execute(stmt, params, Sink::Count)?.affected)
    }

    fn batch(&mut self, sql: &str) -> Result<(), SqlError> {
        self.simple(sql, Sink::Count).map(|_| ())
    }

    fn rows(&mut self, sql: &str) -> Result<TextRows, SqlError> {
        let mut out = Vec::new();
        self.simple(sql, Sink::Text(&mut out))?;
        Ok(out)
    }

    fn run(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: Option<&mut Values>,
    ) -> Result<Counted, SqlError> {
        let r = self.bind_execute(stmt, params, sink_of(out))?;
        Ok(Counted {
            rows: r.rows,
            affected: r.affected,
        })
    }

    fn run_text(&mut self, sql: &str, out: Option<&mut Values>) -> Result<Counted, SqlError> {
        let r = self.simple(sql, sink_of(out))?;
        Ok(Counted {
            rows: r.rows,
            affected: r.affected,
        })
    }

    fn run_extended(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        out: Option<&mut Values>,
    ) -> Result<Counted, SqlError> {
        let r = self.exchange(Some(sql), "", params, sink_of(out))?;
        Ok(Counted {
            rows: r.rows,
            affected: r.affected,
        })
    }
}

/// Values kept when the caller gives a buffer, counted only otherwise.
fn sink_of(out: Option<&mut Values>) -> Sink<'_> {
    match out {
        Some(v) => {
            v.start(0);
            Sink::Values(v)
        }
        None => Sink::Count,
    }
}

impl Drop for PgWire {
    fn drop(&mut self) {
        frontend::terminate(&mut self.out);
        let _ = self.wire.write_all(&self.out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_are_written_as_libpq_writes_them() {
        for v in [0, 7, -1, 42, i32::MAX, i32::MIN] {
            let mut b = BytesMut::new();
            put_int(v, &mut b);
            assert_eq!(std::str::from_utf8(&b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn data_rows_become_values_with_nulls() {
        // Two values: "42" and NULL.
        let mut body = vec![0, 2];
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"42");
        body.extend_from_slice(&(-1i32).to_be_bytes());
        let mut v = Values::new();
        v.start(0);
        data_values(&body, &mut v);
        data_values(&body, &mut v);
        assert_eq!((v.rows(), v.cols()), (2, 2));
        assert_eq!(v.int(1, 0).unwrap(), 42);
        assert_eq!(v.get(1, 1), None);
    }

    #[test]
    fn error_fields_give_code_and_message() {
        let body = b"SERROR\0C23505\0Mduplicate key\0\0";
        match error_of(body, "x") {
            SqlError::Query { code, message, .. } => {
                assert_eq!(code.as_deref(), Some("23505"));
                assert_eq!(message, "duplicate key");
            }
            e => panic!("{e}"),
        }
    }
}
