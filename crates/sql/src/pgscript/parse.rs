//! A pgbench script file as pgbench reads it: SQL commands, each ended by a `;` outside
//! quotes, comments and parentheses (over several lines if need be; `\;` joins two
//! statements into one compound command), and backslash meta commands, each one line
//! (a `\` at the end of a line continues it). `\gset [PREFIX]` and `\aset [PREFIX]`
//! end the SQL command before them instead of a `;`. `:name` in SQL is a variable.
//!
//! Variables are numbered once for all the scripts of a run ([`VarNames`]): a client
//! keeps its variables across scripts and transactions, as pgbench's do, and reads them
//! by index in the hot path.

use super::expr::{Expr, ExprError};
use plumb_servers::SqlError;
use std::collections::HashMap;
use std::fmt;

pub use plumb_plan::ScriptSource;

/// The most parameters one SQL command may have (pgbench's MAX_ARGS less the statement).
pub const MAX_PARAMS: usize = 255;

/// How a script's SQL reaches the server (pgbench's `-M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// Text with the variables' values written in, on the simple protocol (pgbench's
    /// default).
    #[default]
    Simple,
    /// Parse, bind and execute an unnamed statement per command (PostgreSQL only).
    Extended,
    /// Each command prepared once per connection, then bound and executed.
    Prepared,
}

impl QueryMode {
    /// The name `-M` takes.
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

impl fmt::Display for QueryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for QueryMode {
    type Err = SqlError;
    fn from_str(s: &str) -> Result<Self, SqlError> {
        match s {
            "simple" => Ok(QueryMode::Simple),
            "extended" => Ok(QueryMode::Extended),
            "prepared" => Ok(QueryMode::Prepared),
            _ => Err(SqlError::Input(format!(
                "--query-mode {s:?}: use simple, extended or prepared (pgbench's -M)"
            ))),
        }
    }
}

/// Variable names and their slots, shared by every script of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VarNames {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl VarNames {
    /// The slot of `name`, made if new.
    pub fn slot(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The slot of `name` if it has one.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Every name, by slot.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// Where `\gset`/`\aset` put a query's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// `\gset [PREFIX]`: exactly one row, each column into PREFIX + its name.
    Gset(String),
    /// `\aset [PREFIX]`: every row of every result, the last one winning; none sets
    /// nothing.
    Aset(String),
}

/// A piece of a SQL command's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text as written.
    Text(String),
    /// A `:name` variable: its slot and how it was written (kept in simple mode when
    /// the variable is not set, as pgbench leaves it).
    Var(usize, String),
}

/// A `\sleep` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Amount {
    /// A number as written.
    Fixed(i64),
    /// `:name`.
    Var(usize),
}

/// One command of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    /// SQL, in pieces, with what to keep of its result.
    Sql {
        /// The text split at its variables.
        pieces: Vec<Piece>,
        /// `\gset` / `\aset`.
        store: Option<Store>,
    },
    /// `\set NAME EXPR`.
    Set {
        /// The variable's slot.
        var: usize,
        /// Its new value.
        expr: Expr,
    },
    /// `\sleep N [us|ms|s]`, in microseconds per unit of N.
    Sleep {
        /// N.
        amount: Amount,
        /// Microseconds per unit.
        unit_us: u64,
    },
    /// `\if EXPR`; `next` is the index of its `\elif`, `\else` or `\endif`.
    If {
        /// The condition.
        cond: Expr,
        /// Where to go when it is false.
        next: usize,
    },
    /// `\elif EXPR`; `next` as for `\if`, `end` its `\endif` (where a taken branch
    /// that reaches it goes).
    Elif {
        /// The condition.
        cond: Expr,
        /// Where to go when it is false.
        next: usize,
        /// The `\endif`.
        end: usize,
    },
    /// `\else`; `end` its `\endif`.
    Else {
        /// The `\endif`.
        end: usize,
    },
    /// `\endif`.
    Endif,
}

/// One command and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// 1-based line of its first character.
    pub line: usize,
    /// What it does.
    pub kind: CommandKind,
    /// Its first line as written, for error messages.
    pub text: String,
}

/// One script of the mix.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Its name (the file's, or the built-in's).
    pub name: String,
    /// Its weight in the mix.
    pub weight: u32,
    /// Its commands in order.
    pub commands: Vec<Command>,
}

impl Script {
    /// SQL commands, for counting what a transaction sends.
    pub fn sql_commands(&self) -> usize {
        self.commands
            .iter()
            .filter(|c| matches!(c.kind, CommandKind::Sql { .. }))
            .count()
    }
}

/// Every script of a run, their variables numbered together.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSet {
    /// The scripts, in the order given.
    pub scripts: Vec<Script>,
    /// Their variables.
    pub vars: VarNames,
}

/// Parses every source into one set; the first error names its file and line.
pub fn parse_set(sources: &[ScriptSource]) -> Result<ScriptSet, SqlError> {
    if sources.is_empty() {
        return Err(SqlError::Input(
            "the script step has no scripts: give --script FILE[@WEIGHT] or --builtin \
             NAME[@WEIGHT]"
                .into(),
        ));
    }
    let mut vars = VarNames::default();
    // pgbench's automatic variables, so every client has them in the same slots.
    for v in ["client_id", "default_seed", "random_seed", "scale"] {
        vars.slot(v);
    }
    let mut scripts = Vec::new();
    for s in sources {
        if s.weight == 0 && sources.len() == 1 {
            return Err(SqlError::Input(format!(
                "{}: weight 0 with no other script: nothing would run; give a weight ≥ 1",
                s.name
            )));
        }
        let commands = parse_script(&s.text, &mut vars)
            .map_err(|(line, why)| SqlError::Input(format!("{}:{line}: {why}", s.name)))?;
        if !commands
            .iter()
            .any(|c| matches!(c.kind, CommandKind::Sql { .. }))
        {
            return Err(SqlError::Input(format!(
                "{}: no SQL command in the script (pgbench refuses such a script too); end each \
                 statement with ;",
                s.name
            )));
        }
        scripts.push(Script {
            name: s.name.clone(),
            weight: s.weight,
            commands,
        });
    }
    if scripts.iter().all(|s| s.weight == 0) {
        return Err(SqlError::Input(
            "every script has weight 0: nothing would run".into(),
        ));
    }
    Ok(ScriptSet { scripts, vars })
}

type Failed = (usize, String);

/// The scanner's place in a SQL command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum In {
    Code,
    Quote,
    Ident,
    Dollar,
    LineComment,
    Block(u32),
}

/// A script part way through being scanned: where the scanner is, the SQL command it is
/// in, and the commands so far.
struct Scanner<'t> {
    text: &'t str,
    /// Byte offset of the next character.
    i: usize,
    /// 1-based line of the character being read.
    line: usize,
    state: In,
    /// The tag the open dollar-quoted string began with (`$$`, `$body$`).
    dollar_tag: String,
    /// Parentheses open in the SQL command: a `;` inside them does not end it.
    depth: u32,
    /// The pending SQL command's text so far.
    sql: String,
    /// The line of its first character that is not whitespace or a comment.
    sql_line: usize,
    /// Whether it has such a character yet.
    has_content: bool,
    cmds: Vec<Command>,
}

/// Parses one script's text.
fn parse_script(text: &str, vars: &mut VarNames) -> Result<Vec<Command>, Failed> {
    let mut s = Scanner {
        text,
        i: 0,
        line: 1,
        state: In::Code,
        dollar_tag: String::new(),
        depth: 0,
        sql: String::new(),
        sql_line: 0,
        has_content: false,
        cmds: Vec::new(),
    };
    while s.i < text.len() {
        let c = text.as_bytes()[s.i];
        if c == b'\n' {
            s.line += 1;
        }
        let consumed = match s.state {
            In::Code => s.code(c, vars)?,
            _ => s.quoted(c),
        };
        if !consumed {
            s.copy_char();
        }
    }
    s.finish(vars)
}

impl Scanner<'_> {
    /// Whether the text at the scanner starts with `s`.
    fn at(&self, s: &str) -> bool {
        self.text.as_bytes()[self.i..].starts_with(s.as_bytes())
    }

    /// Copies one character into the SQL command (UTF-8 kept whole).
    fn copy_char(&mut self) {
        let ch = self.text[self.i..].chars().next().unwrap_or(' ');
        self.sql.push(ch);
        self.i += ch.len_utf8();
    }

    /// Marks the SQL command as begun on this line, if it had not yet.
    fn start(&mut self) {
        if !self.has_content {
            self.has_content = true;
            self.sql_line = self.line;
        }
    }

    /// One character `c` inside a comment, a quoted string or identifier: whether it was
    /// consumed here (else it is copied as it is).
    fn quoted(&mut self, c: u8) -> bool {
        match self.state {
            In::LineComment => {
                if c == b'\n' {
                    self.state = In::Code;
                    self.sql.push('\n');
                }
                self.i += 1;
                true
            }
            In::Block(n) => {
                if self.at("*/") {
                    self.state = if n == 1 { In::Code } else { In::Block(n - 1) };
                    self.sql.push_str("*/");
                    self.i += 2;
                    true
                } else if self.at("/*") {
                    self.state = In::Block(n + 1);
                    self.sql.push_str("/*");
                    self.i += 2;
                    true
                } else {
                    false
                }
            }
            In::Quote => {
                if c == b'\'' {
                    self.state = In::Code;
                }
                false
            }
            In::Ident => {
                if c == b'"' {
                    self.state = In::Code;
                }
                false
            }
            In::Dollar => {
                if c == b'$' && self.at(self.dollar_tag.as_str()) {
                    self.sql.push_str(&self.dollar_tag);
                    self.i += self.dollar_tag.len();
                    self.state = In::Code;
                    true
                } else {
                    false
                }
            }
            In::Code => false,
        }
    }

    /// One character `c` of SQL code: what it opens or ends, whether it was consumed
    /// here (else it is copied as it is).
    fn code(&mut self, c: u8, vars: &mut VarNames) -> Result<bool, Failed> {
        let next = self.text.as_bytes().get(self.i + 1).copied();
        match c {
            b'-' if next == Some(b'-') => {
                self.state = In::LineComment;
                self.i += 2;
                return Ok(true);
            }
            b'/' if next == Some(b'*') => {
                self.state = In::Block(1);
                self.sql.push_str("/*");
                self.i += 2;
                return Ok(true);
            }
            b'\'' => {
                self.start();
                self.state = In::Quote;
            }
            b'"' => {
                self.start();
                self.state = In::Ident;
            }
            b'$' => {
                let text = self.text;
                self.start();
                if let Some(tag) = dollar_tag_at(&text[self.i..]) {
                    self.dollar_tag.clear();
                    self.dollar_tag.push_str(tag);
                    self.sql.push_str(tag);
                    self.i += tag.len();
                    self.state = In::Dollar;
                    return Ok(true);
                }
            }
            b'(' => {
                self.start();
                self.depth += 1;
            }
            b')' => {
                self.start();
                self.depth = self.depth.saturating_sub(1);
            }
            b';' if self.depth == 0 => {
                self.sql.push(';');
                self.finish_sql(self.sql_line, None, vars)?;
                self.i += 1;
                return Ok(true);
            }
            b'\\' if next == Some(b';') => {
                self.start();
                self.sql.push(';');
                self.i += 2;
                return Ok(true);
            }
            b'\\' => {
                self.meta(vars)?;
                return Ok(true);
            }
            c if !c.is_ascii_whitespace() => self.start(),
            _ => {}
        }
        Ok(false)
    }

    /// The meta command at the scanner's backslash, to the end of its line (continued
    /// by a backslash at a line's end), without the backslash; the scanner is left at
    /// the line's end.
    fn meta_line(&mut self) -> String {
        let (text, b) = (self.text, self.text.as_bytes());
        let mut meta = String::new();
        let mut j = self.i + 1;
        while j < b.len() {
            if b[j] == b'\\' && b.get(j + 1) == Some(&b'\n') {
                meta.push(' ');
                self.line += 1;
                j += 2;
                continue;
            }
            if b[j] == b'\\' && text[j..].starts_with("\\\r\n") {
                meta.push(' ');
                self.line += 1;
                j += 3;
                continue;
            }
            if b[j] == b'\n' {
                break;
            }
            let ch = text[j..].chars().next().unwrap_or(' ');
            meta.push(ch);
            j += ch.len_utf8();
        }
        self.i = j;
        meta.trim_end_matches('\r').to_string()
    }

    /// A meta command: `\gset`/`\aset` end the pending SQL command keeping its result;
    /// any other ends it (as pgbench does) and is a command of its own.
    fn meta(&mut self, vars: &mut VarNames) -> Result<(), Failed> {
        let at_line = self.line;
        let meta = self.meta_line();
        let (word, rest) = split_word(&meta);
        match word {
            "gset" | "aset" => {
                let prefix = rest.trim().to_string();
                if prefix.split_whitespace().count() > 1 {
                    return Err((at_line, format!("\\{word}: too many arguments")));
                }
                let store = if word == "gset" {
                    Store::Gset(prefix)
                } else {
                    Store::Aset(prefix)
                };
                self.finish_sql(self.sql_line.max(1), Some(store), vars)
                    .map_err(|(l, m)| (l, m.replace("\\gset", &format!("\\{word}"))))?;
            }
            _ => {
                // pgbench ends a pending SQL command at a meta command.
                self.finish_sql(self.sql_line, None, vars)?;
                let kind = meta_command(word, rest, vars).map_err(|m| (at_line, m))?;
                self.cmds.push(Command {
                    line: at_line,
                    kind,
                    text: format!("\\{}", meta.trim()),
                });
            }
        }
        self.depth = 0;
        Ok(())
    }

    /// Ends the pending SQL command (written at `sql_line`) as a command, keeping its
    /// result as `store` says; one with nothing in it is no command.
    fn finish_sql(
        &mut self,
        sql_line: usize,
        store: Option<Store>,
        vars: &mut VarNames,
    ) -> Result<(), Failed> {
        let body = self.sql.trim();
        let body = body.strip_suffix(';').unwrap_or(body).trim_end();
        if self.has_content && !body.is_empty() {
            let pieces = pieces_of(body, vars);
            let params = pieces
                .iter()
                .filter(|p| matches!(p, Piece::Var(..)))
                .count();
            if params > MAX_PARAMS {
                return Err((
                    sql_line,
                    format!("statement has too many arguments (maximum is {MAX_PARAMS})"),
                ));
            }
            self.cmds.push(Command {
                line: sql_line,
                text: first_line(body),
                kind: CommandKind::Sql { pieces, store },
            });
        } else if store.is_some() {
            return Err((sql_line, "\\gset must follow an SQL command".into()));
        }
        self.sql.clear();
        self.has_content = false;
        Ok(())
    }

    /// The script's commands once its text is read: a quote or comment left open is an
    /// error, and a last command without its semicolon runs, as in pgbench.
    fn finish(mut self, vars: &mut VarNames) -> Result<Vec<Command>, Failed> {
        let sql_line = self.sql_line;
        match self.state {
            In::Quote => return Err((sql_line, "unterminated quoted string".into())),
            In::Ident => return Err((sql_line, "unterminated quoted identifier".into())),
            In::Dollar => return Err((sql_line, "unterminated dollar-quoted string".into())),
            In::Block(_) => return Err((sql_line, "unterminated /* comment".into())),
            _ => {}
        }
        self.finish_sql(sql_line, None, vars)?;
        link_branches(&mut self.cmds)?;
        Ok(self.cmds)
    }
}

/// A `$tag$` opening a dollar-quoted string at the start of `s`, if there is one.
fn dollar_tag_at(s: &str) -> Option<&str> {
    let rest = &s[1..];
    let end = rest.find('$')?;
    let tag = &rest[..end];
    let ok = tag
        .chars()
        .enumerate()
        .all(|(k, c)| c == '_' || c.is_alphabetic() || (k > 0 && c.is_ascii_digit()));
    ok.then(|| &s[..end + 2])
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.len() < s.len() {
        format!("{l} …")
    } else {
        l.to_string()
    }
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(|c: char| c.is_whitespace()) {
        Some(k) => (&s[..k], &s[k..]),
        None => (s, ""),
    }
}

/// A byte pgbench allows in a variable name: ASCII letters, digits, `_`, and any byte
/// with the high bit set.
fn name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Splits SQL at its `:name` variables as pgbench does: anywhere in the text (pgbench
/// does not skip quotes there), `::` is a cast, and a colon without a name after it
/// is text.
pub fn pieces_of(sql: &str, vars: &mut VarNames) -> Vec<Piece> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut text_from = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b':' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len() && name_byte(b[j]) {
            j += 1;
        }
        if j == i + 1 {
            // Not a variable: skip this run of colons (`::int`).
            while i < b.len() && b[i] == b':' {
                i += 1;
            }
            continue;
        }
        if text_from < i {
            out.push(Piece::Text(sql[text_from..i].to_string()));
        }
        let name = &sql[i + 1..j];
        out.push(Piece::Var(vars.slot(name), sql[i..j].to_string()));
        text_from = j;
        i = j;
    }
    if text_from < b.len() {
        out.push(Piece::Text(sql[text_from..].to_string()));
    }
    out
}

/// A variable name as `\set` and `-D` take it.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(name_byte)
}

fn meta_command(word: &str, rest: &str, vars: &mut VarNames) -> Result<CommandKind, String> {
    let args: Vec<&str> = rest.split_whitespace().collect();
    match word {
        "set" => {
            let (name, expr) = split_word(rest);
            if name.is_empty() {
                return Err("\\set: missing argument".into());
            }
            if !valid_name(name) {
                return Err(format!("\\set: invalid variable name: \"{name}\""));
            }
            if expr.trim().is_empty() {
                return Err("\\set: missing argument".into());
            }
            let var = vars.slot(name);
            let expr = Expr::parse(expr.trim(), &mut |n| vars.slot(n))
                .map_err(|e: ExprError| format!("\\set {name}: {e}"))?;
            Ok(CommandKind::Set { var, expr })
        }
        "sleep" => {
            if args.is_empty() || args.len() > 2 {
                return Err(format!(
                    "\\sleep: {} arguments; write \\sleep N [us|ms|s] or \\sleep :var [us|ms|s]",
                    if args.is_empty() {
                        "missing"
                    } else {
                        "too many"
                    }
                ));
            }
            let amount = if let Some(v) = args[0].strip_prefix(':') {
                if !valid_name(v) {
                    return Err(format!("\\sleep: invalid variable name \"{v}\""));
                }
                Amount::Var(vars.slot(v))
            } else {
                Amount::Fixed(args[0].parse().map_err(|_| {
                    format!(
                        "\\sleep: invalid sleep time \"{}\": give an integer or :variable",
                        args[0]
                    )
                })?)
            };
            let unit_us = match args.get(1).map(|u| u.to_ascii_lowercase()).as_deref() {
                None | Some("s") => 1_000_000,
                Some("ms") => 1_000,
                Some("us") => 1,
                Some(u) => {
                    return Err(format!(
                        "\\sleep: unrecognized time unit \"{u}\"; use us, ms or s"
                    ))
                }
            };
            Ok(CommandKind::Sleep { amount, unit_us })
        }
        "if" | "elif" => {
            if rest.trim().is_empty() {
                return Err(format!("\\{word}: missing expression"));
            }
            let cond = Expr::parse(rest.trim(), &mut |n| vars.slot(n))
                .map_err(|e| format!("\\{word}: {e}"))?;
            Ok(if word == "if" {
                CommandKind::If { cond, next: 0 }
            } else {
                CommandKind::Elif {
                    cond,
                    next: 0,
                    end: 0,
                }
            })
        }
        "else" | "endif" => {
            if !args.is_empty() {
                return Err(format!("\\{word}: unexpected argument"));
            }
            Ok(if word == "else" {
                CommandKind::Else { end: 0 }
            } else {
                CommandKind::Endif
            })
        }
        "shell" | "setshell" => Err(format!(
            "\\{word} is not supported by plumb: it would start a shell per transaction, and \
             plumb measures the database, not fork(); compute the value with \\set or in SQL"
        )),
        "startpipeline" | "endpipeline" | "syncpipeline" => Err(format!(
            "\\{word} is not supported by plumb yet: pipeline mode batches statements without \
             waiting; run the statements one by one or use pgbench for pipelines"
        )),
        "" => Err("a backslash with no command after it".into()),
        other => Err(format!(
            "invalid command \\{other}; pgbench's are \\set, \\sleep, \\if, \\elif, \\else, \
             \\endif, \\gset, \\aset (\\shell, \\setshell and pipelines are not supported)"
        )),
    }
}

/// Fills in where each `\if`, `\elif` and `\else` goes, and refuses unbalanced ones
/// with pgbench's words.
fn link_branches(cmds: &mut [Command]) -> Result<(), Failed> {
    // Each open \if: its branch commands so far.
    let mut open: Vec<Vec<usize>> = Vec::new();
    for k in 0..cmds.len() {
        let line = cmds[k].line;
        match cmds[k].kind {
            CommandKind::If { .. } => open.push(vec![k]),
            CommandKind::Elif { .. } | CommandKind::Else { .. } => {
                let Some(branches) = open.last_mut() else {
                    return Err((line, format!("{} without matching \\if", name_of(&cmds[k]))));
                };
                let last = *branches.last().unwrap_or(&k);
                if matches!(cmds[last].kind, CommandKind::Else { .. }) {
                    return Err((line, format!("{} after \\else", name_of(&cmds[k]))));
                }
                branches.push(k);
            }
            CommandKind::Endif => {
                let Some(branches) = open.pop() else {
                    return Err((line, "\\endif without matching \\if".into()));
                };
                // Each branch command's "false" target is the next one; the
                // \elif/\else ones end at this \endif.
                for (n, &at) in branches.iter().enumerate() {
                    let next = branches.get(n + 1).copied().unwrap_or(k);
                    match &mut cmds[at].kind {
                        CommandKind::If { next: nx, .. } => *nx = next,
                        CommandKind::Elif { next: nx, end, .. } => {
                            *nx = next;
                            *end = k;
                        }
                        CommandKind::Else { end } => *end = k,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(b) = open.last() {
        let line = b.first().map(|&k| cmds[k].line).unwrap_or(0);
        return Err((line, "\\if without matching \\endif".into()));
    }
    Ok(())
}

fn name_of(c: &Command) -> &'static str {
    match c.kind {
        CommandKind::Elif { .. } => "\\elif",
        CommandKind::Else { .. } => "\\else",
        _ => "command",
    }
}

/// Reads `FILE[@WEIGHT]` or `NAME[@WEIGHT]` as pgbench's `-f` and `-b` do: the weight
/// after the last `@` when it is a number, 1 otherwise.
pub fn split_weight(spec: &str) -> Result<(&str, u32), SqlError> {
    match spec.rsplit_once('@') {
        Some((name, w)) if !name.is_empty() => {
            let w: u32 = w.trim().parse().map_err(|_| {
                SqlError::Input(format!(
                    "{spec:?}: the weight after @ must be an integer 0..=4294967295 (pgbench's \
                     NAME@WEIGHT)"
                ))
            })?;
            Ok((name, w))
        }
        _ => Ok((spec, 1)),
    }
}

/// Reads `NAME=VALUE` (pgbench's `-D`).
pub fn split_define(spec: &str) -> Result<(&str, &str), SqlError> {
    match spec.split_once('=') {
        Some((n, v)) if valid_name(n) => Ok((n, v)),
        _ => Err(SqlError::Input(format!(
            "--define {spec:?}: write NAME=VALUE, NAME of letters, digits and _ (pgbench's -D)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> ScriptSource {
        ScriptSource {
            name: "t.sql".into(),
            weight: 1,
            text: text.into(),
            sha256: String::new(),
        }
    }

    fn one(text: &str) -> Result<Script, String> {
        parse_set(&[src(text)])
            .map(|mut s| s.scripts.remove(0))
            .map_err(|e| e.to_string())
    }

    fn sql_texts(s: &Script) -> Vec<String> {
        s.commands
            .iter()
            .filter_map(|c| match &c.kind {
                CommandKind::Sql { pieces, .. } => Some(
                    pieces
                        .iter()
                        .map(|p| match p {
                            Piece::Text(t) => t.clone(),
                            Piece::Var(_, w) => format!("<{w}>"),
                        })
                        .collect::<String>(),
                ),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn commands_split_at_semicolons_outside_quotes_comments_and_parens() {
        let s = one("-- a comment\n\\set aid random(1, 10)\nBEGIN;\nSELECT 'a;b', \"x;\" , $q$;$q$\n  FROM t WHERE f(1;2) -- c;\n ;\nEND;\n/* ; */ SELECT 1\\; SELECT 2;\n")
            .unwrap();
        let t = sql_texts(&s);
        assert_eq!(t.len(), 4, "{t:?}");
        assert_eq!(t[0], "BEGIN");
        assert!(
            t[1].starts_with("SELECT 'a;b', \"x;\" , $q$;$q$") && t[1].contains("f(1;2)"),
            "{}",
            t[1]
        );
        assert_eq!(t[2], "END");
        assert!(t[3].ends_with("SELECT 1; SELECT 2"), "{}", t[3]);
        let lines: Vec<usize> = s.commands.iter().map(|c| c.line).collect();
        assert_eq!(lines, [2, 3, 4, 7, 8]);
    }

    #[test]
    fn variables_follow_pgbench_casts_and_colons() {
        let mut v = VarNames::default();
        let p = pieces_of("SELECT :aid::int, a[1:2], ':x', ::y, :", &mut v);
        let vars: Vec<&str> = p
            .iter()
            .filter_map(|p| match p {
                Piece::Var(_, w) => Some(w.as_str()),
                _ => None,
            })
            .collect();
        // pgbench substitutes inside quotes too, and :2 is a variable name.
        assert_eq!(vars, [":aid", ":2", ":x"]);
        assert_eq!(v.names(), ["aid", "2", "x"]);
    }

    #[test]
    fn gset_ends_the_command_and_meta_commands_continue_lines() {
        let s = one("SELECT 1 AS one, 2 AS two \\gset p_\n\\set x \\\n  :p_one + 1\nSELECT :x;")
            .unwrap();
        assert!(
            matches!(&s.commands[0].kind, CommandKind::Sql { store: Some(Store::Gset(p)), .. } if p == "p_")
        );
        assert!(matches!(s.commands[1].kind, CommandKind::Set { .. }));
        assert_eq!(s.commands[2].line, 4);
        let e = one("\\gset\nSELECT 1;").unwrap_err();
        assert!(
            e.contains("t.sql:1") && e.contains("must follow an SQL command"),
            "{e}"
        );
    }

    #[test]
    fn branches_link_and_unbalanced_ones_are_refused() {
        let s = one("\\if :a = 1\nSELECT 1;\n\\elif :a = 2\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;")
            .unwrap();
        match (
            &s.commands[0].kind,
            &s.commands[2].kind,
            &s.commands[4].kind,
        ) {
            (
                CommandKind::If { next: 2, .. },
                CommandKind::Elif {
                    next: 4, end: 6, ..
                },
                CommandKind::Else { end: 6 },
            ) => {}
            k => panic!("{k:?}"),
        }
        for (text, want) in [
            (
                "\\if 1\nSELECT 1;",
                "t.sql:1: \\if without matching \\endif",
            ),
            (
                "SELECT 1;\n\\endif",
                "t.sql:2: \\endif without matching \\if",
            ),
            ("\\else\nSELECT 1;", "\\else without matching \\if"),
            (
                "\\if 1\n\\else\n\\elif 2\n\\endif\nSELECT 1;",
                "t.sql:3: \\elif after \\else",
            ),
        ] {
            let e = one(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn bad_input_names_file_line_and_what_to_do() {
        for (text, want) in [
            (
                "SELECT 1;\n\\shell echo hi",
                "t.sql:2: \\shell is not supported",
            ),
            ("\\sleep 5 fortnights\nSELECT 1;", "unrecognized time unit"),
            ("\\sleep\nSELECT 1;", "\\sleep: missing"),
            ("\\set\nSELECT 1;", "\\set: missing argument"),
            ("\\set 9-x 1\nSELECT 1;", "invalid variable name"),
            ("\\startpipeline\nSELECT 1;", "pipeline"),
            ("\\frobnicate\nSELECT 1;", "invalid command \\frobnicate"),
            ("SELECT 'open;\n", "t.sql:1: unterminated quoted string"),
            ("\\set x 1\n", "no SQL command"),
        ] {
            let e = one(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn weights_and_defines_parse_as_pgbench_writes_them() {
        assert_eq!(split_weight("a.sql@3").unwrap(), ("a.sql", 3));
        assert_eq!(split_weight("a.sql").unwrap(), ("a.sql", 1));
        assert_eq!(split_weight("dir@x/a.sql@2").unwrap(), ("dir@x/a.sql", 2));
        assert!(split_weight("a.sql@heavy").is_err());
        assert_eq!(split_define("n=10").unwrap(), ("n", "10"));
        assert!(split_define("=1").is_err() && split_define("n").is_err());
        assert_eq!(
            "prepared".parse::<QueryMode>().unwrap(),
            QueryMode::Prepared
        );
        assert!("fast".parse::<QueryMode>().is_err());
    }
}
