//! A MySQL/MariaDB client on a blocking socket, for the measured queries: server-side
//! prepared statements (COM_STMT_PREPARE / COM_STMT_EXECUTE, the binary protocol
//! sysbench uses through libmariadb), replies read into one reused buffer and rows
//! counted, not decoded; authentication hashes with the RustCrypto `sha1`/`sha2`
//! crates. Why not the `mysql` crate: it reads with a blocking
//! read, which on a unix socket wakes twice per query where libmariadb, waiting in
//! poll, wakes once ([`crate::wire`] says why); with the crate plumb
//! spent 1.3-1.7× sysbench's client CPU per query and sent 0.75-0.86× its QPS on the
//! same server (bench/compare-sysbench.sh).

use crate::client::{put_cents, Counted, Endpoint, Param, SqlClient, Stmt, TextRows, Values};
use crate::error::SqlError;
use crate::wire::{io_err, Wire};

const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_LONG_FLAG: u32 = 4;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_QUIT: u8 = 0x01;
const TYPE_TINY: u8 = 1;
const TYPE_SHORT: u8 = 2;
const TYPE_LONG: u8 = 3;
const TYPE_FLOAT: u8 = 4;
const TYPE_DOUBLE: u8 = 5;
const TYPE_NULL: u8 = 6;
const TYPE_TIMESTAMP: u8 = 7;
const TYPE_LONGLONG: u8 = 8;
const TYPE_INT24: u8 = 9;
const TYPE_DATE: u8 = 10;
const TYPE_TIME: u8 = 11;
const TYPE_DATETIME: u8 = 12;
const TYPE_YEAR: u8 = 13;
const TYPE_NEWDECIMAL: u8 = 0xf6;
const TYPE_VAR_STRING: u8 = 0xfd;
const UNSIGNED_FLAG: u16 = 0x20;

/// Where a reply's rows go: counted only (the measured queries), kept as strings from
/// the text protocol ([`SqlClient::rows`]), or decoded from the binary protocol into
/// the caller's buffer ([`SqlClient::fetch`]).
enum Sink<'a> {
    Count,
    Text(&'a mut TextRows),
    Values(&'a mut Values),
    /// Text-protocol rows (COM_QUERY) into the caller's buffer: a script's `-M simple`.
    TextValues(&'a mut Values),
}

/// A prepared statement on the server.
struct Prepared {
    id: u32,
    params: u16,
}

/// One MySQL or MariaDB connection.
pub struct MyWire {
    wire: Wire,
    out: Vec<u8>,
    seq: u8,
    stmts: Vec<Prepared>,
    context: String,
    /// The current result's column types and flags, for decoding binary rows; reused.
    col_types: Vec<(u8, u16)>,
}

fn bad(context: &str, what: &str) -> SqlError {
    io_err(
        context,
        std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string()),
    )
}

/// An ERR packet (after its 0xff): error number, SQL state, message.
fn error_of(p: &[u8], context: &str) -> SqlError {
    let code = p
        .get(..2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .unwrap_or(0);
    let rest = p.get(2..).unwrap_or(&[]);
    let msg = if rest.first() == Some(&b'#') {
        rest.get(6..).unwrap_or(&[])
    } else {
        rest
    };
    SqlError::Query {
        context: context.to_string(),
        message: format!("{} ({code})", String::from_utf8_lossy(msg)),
        code: Some(code.to_string()),
    }
}

/// Reads a length-encoded integer at `*at`, moving past it.
fn lenenc(p: &[u8], at: &mut usize) -> Option<u64> {
    let b = *p.get(*at)?;
    *at += 1;
    let n = match b {
        0..=0xfa => return Some(u64::from(b)),
        0xfc => 2,
        0xfd => 3,
        0xfe => 8,
        _ => return None, // 0xfb: NULL
    };
    let bytes = p.get(*at..*at + n)?;
    *at += n;
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(bytes);
    Some(u64::from_le_bytes(v))
}

/// Reads a length-encoded string at `*at` (None for NULL), moving past it.
fn lenenc_str<'p>(p: &'p [u8], at: &mut usize) -> Option<Option<&'p [u8]>> {
    if p.get(*at) == Some(&0xfb) {
        *at += 1;
        return Some(None);
    }
    let n = lenenc(p, at)? as usize;
    let s = p.get(*at..*at + n)?;
    *at += n;
    Some(Some(s))
}

fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0xfa => out.push(n as u8),
        0xfb..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// An EOF packet (0xfe and short: a row or a length can also start with 0xfe).
fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xfe) && p.len() < 9
}

/// The server status flags of an OK or EOF packet.
fn status_of(p: &[u8]) -> u16 {
    if is_eof(p) {
        return p
            .get(3..5)
            .map(|s| u16::from_le_bytes([s[0], s[1]]))
            .unwrap_or(0);
    }
    let mut at = 1;
    let _ = lenenc(p, &mut at);
    let _ = lenenc(p, &mut at);
    p.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .unwrap_or(0)
}

/// What one command's reply held.
#[derive(Default)]
struct Reply {
    rows: u64,
    affected: u64,
}

impl MyWire {
    /// Connects and authenticates (mysql_native_password, caching_sha2_password's fast
    /// path, an empty password), then selects the endpoint's database.
    pub fn connect(ep: &Endpoint) -> Result<MyWire, SqlError> {
        let context = format!("connecting to {}", ep.redacted_url());
        let wire = Wire::connect(ep.socket.as_deref(), &ep.host, ep.port)
            .map_err(|e| io_err(&context, e))?;
        let mut c = MyWire {
            wire,
            out: Vec::with_capacity(4096),
            seq: 0,
            stmts: Vec::new(),
            context: context.clone(),
            col_types: Vec::new(),
        };
        let hs = c.packet()?.to_vec();
        if hs.first() == Some(&0xff) {
            return Err(error_of(&hs[1..], &context));
        }
        // Protocol 10: version, thread id, scramble part 1, capabilities, charset,
        // status, more capabilities, scramble length, reserved, scramble part 2, plugin.
        let mut at = 1
            + hs[1..]
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| bad(&context, "handshake"))?
            + 1;
        at += 4;
        let mut nonce = hs
            .get(at..at + 8)
            .ok_or_else(|| bad(&context, "handshake"))?
            .to_vec();
        at += 9;
        let caps_lo = hs
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .unwrap_or(0);
        at += 2 + 1 + 2;
        let caps_hi = hs
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .unwrap_or(0);
        at += 2;
        let server_caps = u32::from(caps_lo) | (u32::from(caps_hi) << 16);
        let scramble_len = usize::from(*hs.get(at).unwrap_or(&0));
        at += 1 + 10;
        let part2 = scramble_len.saturating_sub(8).max(13);
        if let Some(p) = hs.get(at..(at + part2).min(hs.len())) {
            nonce.extend(p.iter().take_while(|&&b| b != 0));
        }
        at += part2;
        let plugin = hs
            .get(at..)
            .map(|p| {
                String::from_utf8_lossy(&p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())])
                    .into_owned()
            })
            .unwrap_or_else(|| "mysql_native_password".into());
        let caps = (CLIENT_LONG_PASSWORD
            | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH)
            & server_caps;
        if caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(bad(&context, "the server does not speak protocol 4.1"));
        }
        let password = ep.password.clone().unwrap_or_default();
        let auth = scramble(&plugin, &nonce, &password, &context)?;
        c.begin();
        c.out.extend_from_slice(&caps.to_le_bytes());
        c.out.extend_from_slice(&(16u32 << 20).to_le_bytes());
        c.out.push(45); // utf8mb4_general_ci
        c.out.extend_from_slice(&[0; 23]);
        c.out.extend_from_slice(ep.user.as_bytes());
        c.out.push(0);
        c.out.push(auth.len() as u8);
        c.out.extend_from_slice(&auth);
        c.out.extend_from_slice(ep.database.as_bytes());
        c.out.push(0);
        c.out.extend_from_slice(plugin.as_bytes());
        c.out.push(0);
        c.seq = 1;
        c.send()?;
        loop {
            let p = c.packet()?.to_vec();
            match p.first() {
                Some(0x00) => break,
                Some(0xff) => return Err(error_of(&p[1..], &context)),
                Some(0xfe) => {
                    // Auth switch: another plugin, a new nonce.
                    let name_end = 1 + p[1..].iter().position(|&b| b == 0).unwrap_or(p.len() - 1);
                    let plugin = String::from_utf8_lossy(&p[1..name_end]).into_owned();
                    let nonce: Vec<u8> = p[(name_end + 1).min(p.len())..]
                        .iter()
                        .copied()
                        .take_while(|&b| b != 0)
                        .collect();
                    let auth = scramble(&plugin, &nonce, &password, &context)?;
                    c.begin();
                    c.out.extend_from_slice(&auth);
                    c.send()?;
                }
                Some(0x01) if p.get(1) == Some(&3) => {} // caching_sha2: fast auth ok, OK follows
                Some(0x01) => {
                    return Err(SqlError::Input(format!(
                        "{}: the server wants caching_sha2_password's full authentication \
                         (TLS or RSA), which plumb does not speak; connect once with the \
                         mysql client to cache the password, or use mysql_native_password",
                        ep.redacted_url()
                    )))
                }
                _ => return Err(bad(&context, "an unexpected authentication reply")),
            }
        }
        c.context = "statement".into();
        Ok(c)
    }

    /// The next packet's payload, in place.
    fn packet(&mut self) -> Result<&[u8], SqlError> {
        let (a, b) = self.span()?;
        Ok(&self.wire.buf[a..b])
    }

    /// Where the next packet's payload is in the buffer.
    fn span(&mut self) -> Result<(usize, usize), SqlError> {
        self.wire.fill(4).map_err(|e| io_err(&self.context, e))?;
        let h = &self.wire.buf[self.wire.pos..self.wire.pos + 4];
        let len = usize::from(h[0]) | (usize::from(h[1]) << 8) | (usize::from(h[2]) << 16);
        self.seq = h[3].wrapping_add(1);
        if len == 0xff_ffff {
            return Err(bad(&self.context, "a reply of 16 MiB or more"));
        }
        self.wire
            .fill(4 + len)
            .map_err(|e| io_err(&self.context, e))?;
        let (a, b) = self.wire.take(4 + len);
        Ok((a + 4, b))
    }

    /// Starts a packet: room for its header, filled by [`Self::send`].
    fn begin(&mut self) {
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
    }

    /// Sends the packet begun with [`Self::begin`] with the current sequence number, in
    /// one write.
    fn send(&mut self) -> Result<(), SqlError> {
        let len = self.out.len() - 4;
        if len >= 0xff_ffff {
            return Err(bad(&self.context, "a statement of 16 MiB or more"));
        }
        self.out[..4].copy_from_slice(&[len as u8, (len >> 8) as u8, (len >> 16) as u8, self.seq]);
        let r = self.wire.write_all(&self.out);
        r.map_err(|e| io_err(&self.context, e))
    }

    /// Starts a command packet.
    fn command(&mut self, cmd: u8) {
        self.begin();
        self.out.push(cmd);
        self.seq = 0;
    }

    /// Reads a command's reply: OK, ERR, or result sets (every one, while the server
    /// says more follow), counting rows and keeping text rows when asked.
    fn reply(&mut self, mut sink: Sink<'_>) -> Result<Reply, SqlError> {
        let mut r = Reply::default();
        loop {
            let (a, b) = self.span()?;
            let p = &self.wire.buf[a..b];
            match p.first() {
                Some(0x00) => {
                    let mut at = 1;
                    r.affected += lenenc(p, &mut at).unwrap_or(0);
                    if status_of(p) & SERVER_MORE_RESULTS_EXISTS == 0 {
                        return Ok(r);
                    }
                }
                Some(0xff) => return Err(error_of(&p[1..], &self.context)),
                Some(_) => {
                    let mut at = 0;
                    let cols =
                        lenenc(p, &mut at).ok_or_else(|| bad(&self.context, "column count"))?;
                    let mut names = Vec::new();
                    self.col_types.clear();
                    let keep_names = match &mut sink {
                        Sink::Values(out) | Sink::TextValues(out) => {
                            out.start(cols as usize);
                            out.wants_names()
                        }
                        Sink::Text(_) => true,
                        Sink::Count => false,
                    };
                    for _ in 0..cols {
                        let (a, b) = self.span()?;
                        let d = &self.wire.buf[a..b];
                        if keep_names {
                            names.push(column_name(d));
                        }
                        if let Sink::Values(_) = sink {
                            self.col_types.push(column_type(d));
                        }
                    }
                    if let Sink::Values(out) | Sink::TextValues(out) = &mut sink {
                        if keep_names {
                            out.set_names(std::mem::take(&mut names));
                        }
                    }
                    self.span()?; // EOF after the column definitions
                    let more = loop {
                        let (a, b) = self.span()?;
                        let row = &self.wire.buf[a..b];
                        if is_eof(row) {
                            break status_of(row) & SERVER_MORE_RESULTS_EXISTS != 0;
                        }
                        if row.first() == Some(&0xff) {
                            return Err(error_of(&row[1..], &self.context));
                        }
                        r.rows += 1;
                        if let Sink::Values(out) = &mut sink {
                            binary_row(row, &self.col_types, out)
                                .ok_or_else(|| bad(&self.context, "a binary row"))?;
                        }
                        if let Sink::TextValues(out) = &mut sink {
                            let mut at = 0;
                            for _ in 0..cols {
                                let v = lenenc_str(row, &mut at)
                                    .ok_or_else(|| bad(&self.context, "a text row"))?;
                                out.push(v);
                            }
                        }
                        if let Sink::Text(out) = &mut sink {
                            let mut at = 0;
                            let vals: Vec<(String, Option<String>)> = names
                                .iter()
                                .map(|n| {
                                    let v = lenenc_str(row, &mut at)
                                        .flatten()
                                        .map(|b| String::from_utf8_lossy(b).into_owned());
                                    (n.clone(), v)
                                })
                                .collect();
                            out.push(vals);
                        }
                    };
                    if !more {
                        return Ok(r);
                    }
                }
                None => return Err(bad(&self.context, "an empty packet")),
            }
        }
    }

    fn exec(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        sink: Sink<'_>,
    ) -> Result<Reply, SqlError> {
        let st = &self.stmts[stmt.0];
        if usize::from(st.params) != params.len() {
            return Err(bad(&self.context, "parameter count"));
        }
        let id = st.id;
        self.command(COM_STMT_EXECUTE);
        self.out.extend_from_slice(&id.to_le_bytes());
        self.out.push(0); // no cursor
        self.out.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            let bitmap = params.len().div_ceil(8);
            let at = self.out.len();
            self.out.extend(std::iter::repeat_n(0u8, bitmap));
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Param::Null) {
                    self.out[at + i / 8] |= 1 << (i % 8);
                }
            }
            self.out.push(1); // types follow
            for p in params {
                let t = match p {
                    Param::Int(_) => TYPE_LONG,
                    Param::Str(_) => TYPE_VAR_STRING,
                    Param::Cents(_) => TYPE_NEWDECIMAL,
                    Param::Big(_) => TYPE_LONGLONG,
                    Param::Double(_) => TYPE_DOUBLE,
                    Param::Null => TYPE_NULL,
                };
                self.out.extend_from_slice(&[t, 0]);
            }
            for p in params {
                match p {
                    Param::Int(i) => self.out.extend_from_slice(&i.to_le_bytes()),
                    Param::Big(i) => self.out.extend_from_slice(&i.to_le_bytes()),
                    Param::Double(d) => self.out.extend_from_slice(&d.to_le_bytes()),
                    Param::Null => {}
                    Param::Str(s) => {
                        put_lenenc(&mut self.out, s.len() as u64);
                        self.out.extend_from_slice(s.as_bytes());
                    }
                    Param::Cents(c) => {
                        let mut t = [0u8; 24];
                        let mut w = Fill(&mut t, 0);
                        put_cents(*c, &mut w);
                        let n = w.1;
                        put_lenenc(&mut self.out, n as u64);
                        self.out.extend_from_slice(&t[..n]);
                    }
                }
            }
        }
        self.send()?;
        self.reply(sink)
    }
}

/// A fixed buffer and how much of it is written: [`put_cents`] writes into it without
/// allocating.
struct Fill<'b>(&'b mut [u8], usize);

impl Extend<u8> for Fill<'_> {
    fn extend<I: IntoIterator<Item = u8>>(&mut self, it: I) {
        for b in it {
            if let Some(slot) = self.0.get_mut(self.1) {
                *slot = b;
                self.1 += 1;
            }
        }
    }
}

/// A column definition's name (its label): after catalog, schema, table and org_table.
fn column_name(d: &[u8]) -> String {
    let mut at = 0;
    for _ in 0..4 {
        let _ = lenenc_str(d, &mut at);
    }
    let name = lenenc_str(d, &mut at).flatten().unwrap_or(b"");
    String::from_utf8_lossy(name).into_owned()
}

/// A column definition's type and flags: after catalog, schema, table, org_table,
/// name and org_name come the fixed fields' length, charset (2), length (4), type (1)
/// and flags (2).
fn column_type(d: &[u8]) -> (u8, u16) {
    let mut at = 0;
    for _ in 0..6 {
        let _ = lenenc_str(d, &mut at);
    }
    let _ = lenenc(d, &mut at);
    let t = d.get(at + 6).copied().unwrap_or(TYPE_VAR_STRING);
    let flags = d
        .get(at + 7..at + 9)
        .map(|f| u16::from_le_bytes([f[0], f[1]]))
        .unwrap_or(0);
    (t, flags)
}

/// Decodes one binary-protocol row (0x00, the NULL bitmap offset by 2, then each
/// non-NULL value as its type lays it out) into `out`, numbers and dates written as
/// the text protocol would show them. None when the row is shorter than its types say.
fn binary_row(row: &[u8], types: &[(u8, u16)], out: &mut Values) -> Option<()> {
    use std::io::Write;
    let bitmap = row.get(1..1 + (types.len() + 9) / 8)?;
    let mut at = 1 + bitmap.len();
    let fixed = |at: &mut usize, n: usize| -> Option<&[u8]> {
        let b = row.get(*at..*at + n)?;
        *at += n;
        Some(b)
    };
    for (i, &(t, flags)) in types.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 || t == TYPE_NULL {
            out.push(None);
            continue;
        }
        let unsigned = flags & UNSIGNED_FLAG != 0;
        match t {
            TYPE_TINY | TYPE_SHORT | TYPE_YEAR | TYPE_LONG | TYPE_INT24 | TYPE_LONGLONG => {
                let n = match t {
                    TYPE_TINY => 1,
                    TYPE_SHORT | TYPE_YEAR => 2,
                    TYPE_LONG | TYPE_INT24 => 4,
                    _ => 8,
                };
                let b = fixed(&mut at, n)?;
                let mut v = [0u8; 8];
                v[..n].copy_from_slice(b);
                let raw = u64::from_le_bytes(v);
                let shift = 64 - 8 * n as u32;
                // Sign-extends from the value's width unless the column is unsigned.
                let signed = ((raw << shift) as i64) >> shift;
                out.push_with(|w| {
                    let _ = if unsigned {
                        write!(w, "{raw}")
                    } else {
                        write!(w, "{signed}")
                    };
                });
            }
            TYPE_FLOAT => {
                let b = fixed(&mut at, 4)?;
                let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                out.push_with(|w| {
                    let _ = write!(w, "{v}");
                });
            }
            TYPE_DOUBLE => {
                let b = fixed(&mut at, 8)?;
                let v = f64::from_le_bytes(b.try_into().ok()?);
                out.push_with(|w| {
                    let _ = write!(w, "{v}");
                });
            }
            TYPE_DATE | TYPE_DATETIME | TYPE_TIMESTAMP => {
                let n = usize::from(*fixed(&mut at, 1)?.first()?);
                let b = fixed(&mut at, n)?;
                let g = |i: usize| u32::from(b.get(i).copied().unwrap_or(0));
                let year = b
                    .get(..2)
                    .map(|y| u16::from_le_bytes([y[0], y[1]]))
                    .unwrap_or(0);
                let micros = b
                    .get(7..11)
                    .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]));
                out.push_with(|w| {
                    let _ = write!(w, "{year:04}-{:02}-{:02}", g(2), g(3));
                    if t != TYPE_DATE {
                        let _ = write!(w, " {:02}:{:02}:{:02}", g(4), g(5), g(6));
                        if let Some(us) = micros.filter(|us| *us > 0) {
                            let _ = write!(w, ".{us:06}");
                        }
                    }
                });
            }
            TYPE_TIME => {
                let n = usize::from(*fixed(&mut at, 1)?.first()?);
                let b = fixed(&mut at, n)?;
                let neg = b.first() == Some(&1);
                let days = b
                    .get(1..5)
                    .map(|d| u32::from_le_bytes([d[0], d[1], d[2], d[3]]))
                    .unwrap_or(0);
                let g = |i: usize| u32::from(b.get(i).copied().unwrap_or(0));
                out.push_with(|w| {
                    let sign = if neg { "-" } else { "" };
                    let _ = write!(w, "{sign}{:02}:{:02}:{:02}", days * 24 + g(5), g(6), g(7));
                });
            }
            // DECIMAL, strings, blobs, enums, sets, JSON, BIT: a length-encoded string.
            _ => out.push(Some(lenenc_str(row, &mut at)?.unwrap_or(b""))),
        }
    }
    Some(())
}

/// The auth response for `plugin`: mysql_native_password's SHA1(pw) XOR
/// SHA1(nonce, SHA1(SHA1(pw))), caching_sha2_password's SHA256(pw) XOR
/// SHA256(SHA256(SHA256(pw)), nonce).
fn scramble(
    plugin: &str,
    nonce: &[u8],
    password: &str,
    context: &str,
) -> Result<Vec<u8>, SqlError> {
    use sha1::{Digest, Sha1};
    use sha2::Sha256;
    if password.is_empty() {
        return Ok(Vec::new());
    }
    let pw = password.as_bytes();
    match plugin {
        "mysql_native_password" => {
            let h1 = Sha1::digest(pw);
            let h2 = Sha1::digest(h1);
            let mut h = Sha1::new();
            h.update(nonce);
            h.update(h2);
            let h3 = h.finalize();
            Ok(h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect())
        }
        "caching_sha2_password" => {
            let h1 = Sha256::digest(pw);
            let h2 = Sha256::digest(h1);
            let mut h = Sha256::new();
            h.update(h2);
            h.update(nonce);
            let h3 = h.finalize();
            Ok(h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect())
        }
        other => Err(SqlError::Input(format!(
            "{context}: the server asks for authentication plugin {other}, which plumb does \
             not speak (it speaks mysql_native_password and caching_sha2_password)"
        ))),
    }
}

impl SqlClient for MyWire {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, SqlError> {
        self.command(COM_STMT_PREPARE);
        self.out.extend_from_slice(sql.as_bytes());
        self.send()?;
        let (a, b) = self.span()?;
        let p = &self.wire.buf[a..b];
        if p.first() == Some(&0xff) {
            return Err(error_of(&p[1..], &format!("preparing {sql}")));
        }
        let (id, cols, params) = match p.get(1..9) {
            Some(b) => (
                u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                u16::from_le_bytes([b[4], b[5]]),
                u16::from_le_bytes([b[6], b[7]]),
            ),
            None => return Err(bad(&format!("preparing {sql}"), "prepare reply")),
        };
        for n in [params, cols] {
            if n > 0 {
                for _ in 0..=n {
                    self.packet()?; // definitions, then EOF
                }
            }
        }
        self.stmts.push(Prepared { id, params });
        Ok(Stmt(self.stmts.len() - 1))
    }

    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError> {
        Ok(self.exec(stmt, params, Sink::Count)?.rows)
    }

    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Values,
    ) -> Result<u64, SqlError> {
        out.start(0);
        Ok(self.exec(stmt, params, Sink::Values(out))?.rows)
    }

    fn execute(&mut self, stmt: Stmt, params: &[Param<'_>]) -> Result<u64, SqlError> {
        Ok(self.exec(stmt, params, Sink::Count)?.affected)
    }

    fn batch(&mut self, sql: &str) -> Result<(), SqlError> {
        self.command(COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.send()?;
        self.reply(Sink::Count).map(|_| ()).map_err(|e| match e {
            SqlError::Query { message, code, .. } => SqlError::Query {
                context: sql.chars().take(200).collect(),
                message,
                code,
            },
            e => e,
        })
    }

    fn rows(&mut self, sql: &str) -> Result<TextRows, SqlError> {
        self.command(COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.send()?;
        let mut out = Vec::new();
        self.reply(Sink::Text(&mut out))?;
        Ok(out)
    }

    fn run(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: Option<&mut Values>,
    ) -> Result<Counted, SqlError> {
        let sink = match out {
            Some(v) => {
                v.start(0);
                Sink::Values(v)
            }
            None => Sink::Count,
        };
        let r = self.exec(stmt, params, sink)?;
        Ok(Counted {
            rows: r.rows,
            affected: r.affected,
        })
    }

    fn run_text(&mut self, sql: &str, out: Option<&mut Values>) -> Result<Counted, SqlError> {
        self.command(COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.send()?;
        let sink = match out {
            Some(v) => {
                v.start(0);
                Sink::TextValues(v)
            }
            None => Sink::Count,
        };
        let r = self.reply(sink).map_err(|e| match e {
            SqlError::Query { message, code, .. } => SqlError::Query {
                context: sql.chars().take(200).collect(),
                message,
                code,
            },
            e => e,
        })?;
        Ok(Counted {
            rows: r.rows,
            affected: r.affected,
        })
    }
}

impl Drop for MyWire {
    fn drop(&mut self) {
        self.command(COM_QUIT);
        let _ = self.send();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_round_trip() {
        for n in [
            0u64,
            250,
            251,
            65535,
            65536,
            16_777_215,
            16_777_216,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, n);
            let mut at = 0;
            assert_eq!(lenenc(&b, &mut at), Some(n), "{n}");
            assert_eq!(at, b.len());
        }
    }

    #[test]
    fn an_err_packet_gives_errno_and_message() {
        let p = b"\xbd\x04#40001Deadlock found";
        match error_of(p, "x") {
            SqlError::Query { code, message, .. } => {
                assert_eq!(code.as_deref(), Some("1213"));
                assert!(message.starts_with("Deadlock found"), "{message}");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn native_password_scramble_matches_the_servers_check() {
        // The server keeps SHA1(SHA1(pw)) and checks SHA1(reply XOR SHA1(nonce, stored)).
        use sha1::{Digest, Sha1};
        let nonce = b"01234567890123456789";
        let reply = scramble("mysql_native_password", nonce, "secret", "x").unwrap();
        let stored = Sha1::digest(Sha1::digest(b"secret"));
        let mut h = Sha1::new();
        h.update(nonce);
        h.update(stored);
        let mask = h.finalize();
        let h1: Vec<u8> = reply.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect();
        assert_eq!(Sha1::digest(&h1).as_slice(), stored.as_slice());
        assert!(scramble("mysql_native_password", nonce, "", "x")
            .unwrap()
            .is_empty());
        assert!(scramble("dialog", nonce, "pw", "x").is_err());
    }

    #[test]
    fn binary_rows_decode_to_the_text_the_text_protocol_shows() {
        let types = [
            (TYPE_LONG, 0),
            (TYPE_LONGLONG, UNSIGNED_FLAG),
            (TYPE_NEWDECIMAL, 0),
            (TYPE_VAR_STRING, 0),
            (TYPE_DATETIME, 0),
            (TYPE_TINY, 0),
            (TYPE_DOUBLE, 0),
            (TYPE_LONG, 0),
        ];
        let mut row = vec![0u8];
        // NULL bitmap (offset 2): column 7 is NULL -> bit 9.
        row.extend_from_slice(&[0, 0b10]);
        row.extend_from_slice(&(-42i32).to_le_bytes());
        row.extend_from_slice(&u64::MAX.to_le_bytes());
        row.extend_from_slice(b"\x06-10.50");
        row.extend_from_slice(b"\x03abc");
        row.extend_from_slice(&[7, 0xe9, 0x07, 3, 9, 14, 5, 6]);
        row.push(0xff);
        row.extend_from_slice(&2.5f64.to_le_bytes());
        let mut v = Values::new();
        v.start(types.len());
        binary_row(&row, &types, &mut v).unwrap();
        assert_eq!(v.rows(), 1);
        assert_eq!(v.int(0, 0).unwrap(), -42);
        assert_eq!(v.get(0, 1), Some("18446744073709551615"));
        assert_eq!(v.fixed(0, 2, 2).unwrap(), -1050);
        assert_eq!(v.get(0, 3), Some("abc"));
        assert_eq!(v.get(0, 4), Some("2025-03-09 14:05:06"));
        assert_eq!(v.int(0, 5).unwrap(), -1);
        assert_eq!(v.get(0, 6), Some("2.5"));
        assert_eq!(v.get(0, 7), None);
        // A row cut short is refused, not read past its end.
        assert!(binary_row(&row[..row.len() - 3], &types, &mut v).is_none());
    }

    #[test]
    fn eof_is_told_from_a_row_that_starts_with_0xfe() {
        assert!(is_eof(&[0xfe, 0, 0, 2, 0]));
        assert!(!is_eof(&[0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    }
}
