//! pgbench's expression language: the `EXPR` of `\set NAME EXPR`, `\if EXPR` and
//! `\elif EXPR` in pgbench script files, parsed once per script and evaluated per client
//! per execution.
//!
//! The facts come from PostgreSQL 15's sources, read and re-expressed in Rust (no code
//! copied): the tokens from src/bin/pgbench/exprscan.l, the grammar, precedence table,
//! function table and argument-count checks from exprparse.y, and the evaluation from
//! pgbench.c (`evalFunc`, `evalStandardFunc`, `evalLazyFunc`, `coerceToInt`/`Double`/`Bool`,
//! `valueTruth`, `makeVariableValue`, `getVariable`, the random generators `getrand`,
//! `getExponentialRand`, `getGaussianRand`, `getZipfianRand`/`computeIterativeZipfian`,
//! and the deterministic `getHashFnv1a`, `getHashMurmur2` and `permute`, the last with
//! its xoroshiro128** generator from src/common/pg_prng.c). How NaN and infinities are
//! written comes from src/port/snprintf.c, which pgbench uses instead of the C library's.
//! Error texts are pgbench's own.
//!
//! Where plumb departs from pgbench, on purpose:
//! - the random functions draw their uniform numbers from the client's [`SmallRng`], not
//!   from pgbench's xoroshiro128** stream, so the values differ from pgbench's for the same
//!   seed while the distributions (the same transformations) are the same;
//! - `debug()` writes `debug: <type> <value>` to stderr: pgbench also names the script and
//!   command number, which an expression does not know here;
//! - `abs()` of a boolean is an error ("cannot coerce boolean to double"): pgbench reads
//!   the boolean's storage as a double and returns garbage;
//! - `random_zipfian()` rejects a NaN parameter with pgbench's range message: pgbench lets
//!   NaN through its range check and then loops forever;
//! - an expression nested deeper than [`MAX_DEPTH`] is a parse error, so that neither parsing
//!   nor evaluation can exhaust the thread's stack (pgbench's bison stack allows 10000);
//! - text variables (`-D`, `\gset`) are read with Rust's float parser where pgbench uses
//!   `strtod`: the same numbers, ranges and `inf`/`nan` spellings, but C's hexadecimal
//!   floats (`0x1p4`) and `nan(…)` payloads are rejected as malformed;
//! - a newline inside the expression text is whitespace, like a `\` line continuation
//!   (pgbench's lexer ends the command at a newline; the caller hands over one command).

use std::fmt::{self, Write as _};

use rand::rngs::SmallRng;
use rand::Rng;

/// How deep an expression may nest (operators, function calls, parentheses), bounding the
/// recursion of parsing and evaluation.
pub const MAX_DEPTH: usize = 400;

/// pgbench's `MAX_FARGS`: the most arguments a function call evaluates.
const MAX_FARGS: usize = 16;

/// C's `DBL_DIG`, the digits pgbench writes a double with.
const DBL_DIG: usize = 15;

const MIN_GAUSSIAN_PARAM: f64 = 2.0;
const MIN_ZIPFIAN_PARAM: f64 = 1.001;
const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// A value of the expression language (pgbench's PgBenchValue).
///
/// Scripts mix integers, doubles, booleans and NULL freely and pgbench's operators promote
/// and coerce between them, so the type travels with the value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// SQL-like NULL: most operators and functions given one return NULL.
    Null,
    /// Result of comparisons, logic and `IS` tests.
    Bool(bool),
    /// pgbench's bigint, with its overflow checks.
    Int(i64),
    /// C double, IEEE semantics (division by zero gives infinities, not errors).
    Double(f64),
}

impl Value {
    /// Appends the value as pgbench substitutes it into SQL text (int in decimal, double as
    /// C's "%.*g" with DBL_DIG=15 digits, bool true/false, NULL as pgbench writes it — check
    /// pgbench.c getVariable).
    ///
    /// Queries see `:var` as this text, so it must match pgbench byte for byte: `NULL`,
    /// `true`/`false`, decimal ints, doubles as `%.15g` with PostgreSQL's `NaN`,
    /// `Infinity` and `-Infinity`.
    pub fn write_text(&self, out: &mut String) {
        // Writing into a String cannot fail.
        let _ = match *self {
            Value::Null => out.write_str("NULL"),
            Value::Bool(b) => out.write_str(if b { "true" } else { "false" }),
            Value::Int(i) => write!(out, "{i}"),
            Value::Double(d) => write_g15(out, d),
        };
    }

    /// pgbench's valueTruth for \if: NULL false, bool itself, int != 0, double != 0.
    ///
    /// `\if` and `CASE WHEN` accept any value as a condition, unlike `AND`/`OR`/`NOT`,
    /// which insist on booleans.
    pub fn truthy(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// pgbench's coerceToInt (double rounded/truncated as pgbench does, range-checked;
    /// bool/NULL are errors); used by \sleep.
    ///
    /// Doubles round half to even (C's `rint`) and must fit a bigint, so `\sleep` and the
    /// integer functions agree with pgbench on every argument.
    pub fn to_int(&self) -> Result<i64, EvalError> {
        coerce_int(*self)
    }

    fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }
}

/// A script variable's current content.
///
/// pgbench keeps a variable either as the value `\set` computed or as text from outside
/// (`-D`, `\gset`) that is only interpreted when an expression reads it; keeping both
/// shapes lets plumb report the same errors at the same moment.
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// Never set: using it is an error naming the variable.
    Unset,
    /// Set by \set (a number, bool or NULL).
    Num(Value),
    /// Set from text (-D NAME=VALUE, \gset of a query's column): converted to a Value when an
    /// expression uses it, as pgbench's makeVariableValue does (NULL, booleans, int, double;
    /// anything else is an error naming the variable and its text).
    Text(String),
}

/// A parsed expression.
///
/// Parsing once per script (names already turned into slots, argument counts checked,
/// the implicit `:default_seed` added) keeps the per-transaction work to a walk of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    root: Node,
}

/// Where parsing failed: byte offset into the expression text and what is wrong, in
/// pgbench's words (e.g. "unexpected function name (foo)", "syntax error",
/// "unexpected number of arguments (abs)", "at least one argument expected (least)",
/// "bigint constant overflow (…)", "unexpected character (…)"). pgbench checks the
/// parameters of the random functions only when evaluating, so those are [`EvalError`]s.
///
/// A script error must point at the spot in the line, as pgbench's caret does; `at` is the
/// byte offset of the offending token (the text's length when the expression ends early).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (at character {at})")]
pub struct ExprError {
    /// Byte offset into the expression text of the token at fault.
    pub at: usize,
    /// pgbench's message, with its parenthesised detail (e.g. `unexpected function name (foo)`).
    pub message: String,
}

/// Evaluation failure (division by zero, bigint out of range, empty range given to random,
/// bad parameter to random_zipfian, malformed variable, undefined variable …), pgbench's
/// wording.
///
/// pgbench aborts the client on any of these; the message is what the user needs to find
/// the faulty script line, so it is pgbench's text verbatim.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// Variables by slot, as the caller numbered them at parse time; `names[i]` is slot i's
/// name (for error messages).
///
/// Borrowing the client's state, rather than owning it, lets one client evaluate many
/// expressions against its variables and random stream without copying either.
pub struct Cx<'a> {
    /// Each slot's content; a slot past the end counts as never set.
    pub vars: &'a [Var],
    /// Each slot's name, for "undefined variable" and "malformed variable" messages.
    pub names: &'a [String],
    /// The client's random stream, for `random*()`.
    pub rng: &'a mut SmallRng,
}

impl Expr {
    /// Parses `text` (everything after `\set NAME ` or `\if `). Each variable the expression
    /// names (`:name`, and the implicit `default_seed` that hash()/hash_murmur2()/
    /// hash_fnv1a()/permute() use when their seed is omitted, as pgbench does) is turned into
    /// a slot number by calling `slot(name)`; the caller owns the name→slot map.
    ///
    /// `slot` is called as names are met, so a failed parse may already have called it.
    pub fn parse(text: &str, slot: &mut dyn FnMut(&str) -> usize) -> Result<Expr, ExprError> {
        let mut p = Parser {
            lex: Lexer { text, pos: 0 },
            peeked: None,
            slot,
            nesting: 0,
        };
        let (root, _) = p.expr(0)?;
        let t = p.next()?;
        if t.tok != Tok::Eof {
            return Err(syntax_error(t.at));
        }
        Ok(Expr { root })
    }

    /// Evaluates with the client's variables and random state. Must not allocate on the
    /// success path for the common cases (arithmetic, random*, hash*, permute, variables
    /// holding Num); evaluating a Var::Text may parse without allocating.
    ///
    /// This runs in the timed loop of every client, once per `\set`/`\if` per transaction.
    pub fn eval(&self, cx: &mut Cx<'_>) -> Result<Value, EvalError> {
        eval(&self.root, cx)
    }
}

// ---------------------------------------------------------------------------------------
// Tree

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Le,
    Lt,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Const(Value),
    Var(usize),
    /// Both operands evaluated (left first), NULL if either is NULL.
    Bin(BinOp, Box<(Node, Node)>),
    Not(Box<Node>),
    /// `x IS NULL` / `x IS TRUE` / `x IS FALSE`: the constant is Null or Bool.
    Is(Box<Node>, Value),
    And(Box<(Node, Node)>),
    Or(Box<(Node, Node)>),
    /// when, then, when, then, …, else (NULL when the script has no ELSE).
    Case(Box<[Node]>),
    Call(Func, Box<[Node]>),
}

// ---------------------------------------------------------------------------------------
// Lexer (exprscan.l, EXPR state)

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    Pipe,
    Amp,
    Hash,
    Tilde,
    LParen,
    RParen,
    Comma,
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
    Null,
    Bool(bool),
    Int(i64),
    /// 9223372036854775808, legal only right after a unary minus.
    MaxIntPlusOne,
    Double(f64),
    Var(&'a str),
    Ident(&'a str),
    Eof,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    tok: Tok<'a>,
    at: usize,
}

const KEYWORDS: [(&str, Tok<'static>); 14] = [
    ("and", Tok::And),
    ("or", Tok::Or),
    ("not", Tok::Not),
    ("is", Tok::Is),
    ("isnull", Tok::IsNull),
    ("notnull", Tok::NotNull),
    ("case", Tok::Case),
    ("when", Tok::When),
    ("then", Tok::Then),
    ("else", Tok::Else),
    ("end", Tok::End),
    ("null", Tok::Null),
    ("true", Tok::Bool(true)),
    ("false", Tok::Bool(false)),
];

/// exprscan.l's `alpha`: ASCII letters, underscore and any non-ASCII byte.
fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

/// C's `isspace` in the C locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn scan_while(&self, mut p: usize, f: impl Fn(u8) -> bool) -> usize {
        let b = self.text.as_bytes();
        while p < b.len() && f(b[p]) {
            p += 1;
        }
        p
    }

    fn next(&mut self) -> Result<Token<'a>, ExprError> {
        let b = self.text.as_bytes();
        loop {
            match b.get(self.pos..) {
                Some([c, ..]) if is_c_space(*c) => self.pos += 1,
                Some([b'\\', b'\n', ..]) => self.pos += 2,
                Some([b'\\', b'\r', b'\n', ..]) => self.pos += 3,
                _ => break,
            }
        }
        let at = self.pos;
        let Some(&c) = b.get(at) else {
            return Ok(Token { tok: Tok::Eof, at });
        };
        let next = b.get(at + 1).copied();
        let (tok, end) = match c {
            b'+' => (Tok::Plus, at + 1),
            b'-' => (Tok::Minus, at + 1),
            b'*' => (Tok::Star, at + 1),
            b'/' => (Tok::Slash, at + 1),
            b'%' => (Tok::Percent, at + 1),
            b'=' => (Tok::Eq, at + 1),
            b'|' => (Tok::Pipe, at + 1),
            b'&' => (Tok::Amp, at + 1),
            b'#' => (Tok::Hash, at + 1),
            b'~' => (Tok::Tilde, at + 1),
            b'(' => (Tok::LParen, at + 1),
            b')' => (Tok::RParen, at + 1),
            b',' => (Tok::Comma, at + 1),
            b'<' => match next {
                Some(b'>') => (Tok::Ne, at + 2),
                Some(b'=') => (Tok::Le, at + 2),
                Some(b'<') => (Tok::Shl, at + 2),
                _ => (Tok::Lt, at + 1),
            },
            b'>' => match next {
                Some(b'=') => (Tok::Ge, at + 2),
                Some(b'>') => (Tok::Shr, at + 2),
                _ => (Tok::Gt, at + 1),
            },
            b'!' if next == Some(b'=') => (Tok::Ne, at + 2),
            b':' if next.is_some_and(is_alnum) => {
                let end = self.scan_while(at + 1, is_alnum);
                (Tok::Var(&self.text[at + 1..end]), end)
            }
            b'0'..=b'9' => return self.number(at),
            b'.' if next.is_some_and(|d| d.is_ascii_digit()) => return self.number(at),
            _ if is_alpha(c) => {
                let end = self.scan_while(at, is_alnum);
                let word = &self.text[at..end];
                let tok = KEYWORDS
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(word))
                    .map_or(Tok::Ident(word), |&(_, t)| t);
                (tok, end)
            }
            _ => {
                return Err(ExprError {
                    at,
                    message: format!("unexpected character ({})", c as char),
                })
            }
        };
        self.pos = end;
        Ok(Token { tok, at })
    }

    /// `{digit}+`, `{digit}+(\.{digit}*)?([eE][-+]?{digit}+)?` or `\.{digit}+(…)?`, longest
    /// match, an integer when neither a point nor an exponent is present.
    fn number(&mut self, at: usize) -> Result<Token<'a>, ExprError> {
        let b = self.text.as_bytes();
        let digit = |c: u8| c.is_ascii_digit();
        let mut p = self.scan_while(at, digit);
        let mut double = false;
        if b.get(p) == Some(&b'.') {
            double = true;
            p = self.scan_while(p + 1, digit);
        }
        if matches!(b.get(p), Some(b'e' | b'E')) {
            let mut q = p + 1;
            if matches!(b.get(q), Some(b'+' | b'-')) {
                q += 1;
            }
            if b.get(q).is_some_and(|c| c.is_ascii_digit()) {
                p = self.scan_while(q, digit);
                double = true;
            }
        }
        let text = &self.text[at..p];
        self.pos = p;
        let tok = if double {
            match c_strtod(text) {
                Some(d) => Tok::Double(d),
                None => {
                    return Err(ExprError {
                        at,
                        message: format!("double constant overflow ({text})"),
                    })
                }
            }
        } else if text == "9223372036854775808" {
            Tok::MaxIntPlusOne
        } else {
            match text.parse::<i64>() {
                Ok(i) => Tok::Int(i),
                Err(_) => {
                    return Err(ExprError {
                        at,
                        message: format!("bigint constant overflow ({text})"),
                    })
                }
            }
        };
        Ok(Token { tok, at })
    }
}

// ---------------------------------------------------------------------------------------
// Parser (exprparse.y)
//
// Precedence climbing over exprparse.y's table, lowest first:
//   1 OR (left)   2 AND (left)   3 NOT (prefix, right)   4 IS ISNULL NOTNULL (postfix)
//   5 < > = <= >= <> != (non-associative)   6 | # & << >> and prefix ~ (left)
//   7 + - (left)   8 * / % (left)   9 unary + - (prefix)
// A prefix operator's operand takes every binary operator that binds tighter than the
// operator itself, which is how bison resolves `NOT a = b` (NOT (a = b)), `~1 + 2`
// (~(1 + 2)) and `-a * b` ((-a) * b).

const PREC_NOT: u8 = 3;
const PREC_CMP: u8 = 5;
const PREC_BITS: u8 = 6;
const PREC_UNARY: u8 = 9;

type Parsed = (Node, usize);

#[cold]
fn syntax_error(at: usize) -> ExprError {
    ExprError {
        at,
        message: "syntax error".to_string(),
    }
}

fn binary_prec(t: Tok<'_>) -> Option<u8> {
    Some(match t {
        Tok::Or => 1,
        Tok::And => 2,
        Tok::Is | Tok::IsNull | Tok::NotNull => 4,
        Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge => PREC_CMP,
        Tok::Pipe | Tok::Hash | Tok::Amp | Tok::Shl | Tok::Shr => PREC_BITS,
        Tok::Plus | Tok::Minus => 7,
        Tok::Star | Tok::Slash | Tok::Percent => 8,
        _ => return None,
    })
}

enum Arity {
    Exactly(usize),
    AtLeastOne,
    /// Value, then an optional seed (`:default_seed` when omitted).
    Hash,
    /// Value and size, then an optional seed (`:default_seed` when omitted).
    Permute,
}

enum Callee {
    Op(BinOp),
    Fn(Func),
}

/// exprparse.y's PGBENCH_FUNCTIONS, the names a script can call.
const FUNCTIONS: [(&str, Callee, Arity); 21] = [
    ("mod", Callee::Op(BinOp::Mod), Arity::Exactly(2)),
    ("abs", Callee::Fn(Func::Abs), Arity::Exactly(1)),
    ("least", Callee::Fn(Func::Least), Arity::AtLeastOne),
    ("greatest", Callee::Fn(Func::Greatest), Arity::AtLeastOne),
    ("debug", Callee::Fn(Func::Debug), Arity::Exactly(1)),
    ("pi", Callee::Fn(Func::Pi), Arity::Exactly(0)),
    ("sqrt", Callee::Fn(Func::Sqrt), Arity::Exactly(1)),
    ("ln", Callee::Fn(Func::Ln), Arity::Exactly(1)),
    ("exp", Callee::Fn(Func::Exp), Arity::Exactly(1)),
    ("int", Callee::Fn(Func::Int), Arity::Exactly(1)),
    ("double", Callee::Fn(Func::Double), Arity::Exactly(1)),
    ("random", Callee::Fn(Func::Random), Arity::Exactly(2)),
    (
        "random_gaussian",
        Callee::Fn(Func::RandomGaussian),
        Arity::Exactly(3),
    ),
    (
        "random_exponential",
        Callee::Fn(Func::RandomExponential),
        Arity::Exactly(3),
    ),
    (
        "random_zipfian",
        Callee::Fn(Func::RandomZipfian),
        Arity::Exactly(3),
    ),
    ("pow", Callee::Fn(Func::Pow), Arity::Exactly(2)),
    ("power", Callee::Fn(Func::Pow), Arity::Exactly(2)),
    ("hash", Callee::Fn(Func::HashMurmur2), Arity::Hash),
    ("hash_murmur2", Callee::Fn(Func::HashMurmur2), Arity::Hash),
    ("hash_fnv1a", Callee::Fn(Func::HashFnv1a), Arity::Hash),
    ("permute", Callee::Fn(Func::Permute), Arity::Permute),
];

struct Parser<'a, 'b> {
    lex: Lexer<'a>,
    peeked: Option<Token<'a>>,
    slot: &'b mut dyn FnMut(&str) -> usize,
    nesting: usize,
}

impl<'a> Parser<'a, '_> {
    fn peek(&mut self) -> Result<Token<'a>, ExprError> {
        match self.peeked {
            Some(t) => Ok(t),
            None => {
                let t = self.lex.next()?;
                self.peeked = Some(t);
                Ok(t)
            }
        }
    }

    fn next(&mut self) -> Result<Token<'a>, ExprError> {
        let t = self.peek()?;
        self.peeked = None;
        Ok(t)
    }

    fn expect(&mut self, want: Tok<'_>) -> Result<Token<'a>, ExprError> {
        let t = self.next()?;
        if t.tok == want {
            Ok(t)
        } else {
            Err(syntax_error(t.at))
        }
    }

    /// Wraps a node whose deepest child is `child_depth` deep, refusing trees that would
    /// make evaluation (or dropping the tree) recurse too far.
    fn node(&self, node: Node, child_depth: usize, at: usize) -> Result<Parsed, ExprError> {
        let depth = child_depth + 1;
        if depth > MAX_DEPTH {
            return Err(too_deep(at));
        }
        Ok((node, depth))
    }

    fn expr(&mut self, min_prec: u8) -> Result<Parsed, ExprError> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(too_deep(self.lex.pos));
        }
        let mut lhs = self.prefix()?;
        loop {
            let t = self.peek()?;
            match binary_prec(t.tok) {
                Some(prec) if prec > min_prec => {
                    self.next()?;
                    lhs = self.infix(t, prec, lhs)?;
                }
                _ => break,
            }
        }
        self.nesting -= 1;
        Ok(lhs)
    }

    /// Applies the binary or postfix operator `t` (already consumed) to `lhs`.
    #[inline(never)]
    fn infix(&mut self, t: Token<'a>, prec: u8, lhs: Parsed) -> Result<Parsed, ExprError> {
        let (l, ld) = lhs;
        match t.tok {
            Tok::IsNull => self.node(Node::Is(Box::new(l), Value::Null), ld, t.at),
            Tok::NotNull => {
                let is = Node::Is(Box::new(l), Value::Null);
                self.node(Node::Not(Box::new(is)), ld + 1, t.at)
            }
            Tok::Is => self.is_test(l, ld),
            _ => {
                let (r, rd) = self.expr(prec)?;
                let node = match t.tok {
                    Tok::Or => Node::Or(Box::new((l, r))),
                    Tok::And => Node::And(Box::new((l, r))),
                    // `a > b` is `b < a` and `a >= b` is `b <= a`, evaluated in that order.
                    Tok::Gt => Node::Bin(BinOp::Lt, Box::new((r, l))),
                    Tok::Ge => Node::Bin(BinOp::Le, Box::new((r, l))),
                    tok => Node::Bin(binop_of(tok), Box::new((l, r))),
                };
                let built = self.node(node, ld.max(rd), t.at)?;
                if prec == PREC_CMP {
                    let after = self.peek()?;
                    if binary_prec(after.tok) == Some(PREC_CMP) {
                        return Err(syntax_error(after.at));
                    }
                }
                Ok(built)
            }
        }
    }

    /// After `x IS`: `NULL`, `TRUE`, `FALSE`, or `NOT` and one of them.
    #[inline(never)]
    fn is_test(&mut self, l: Node, ld: usize) -> Result<Parsed, ExprError> {
        let t = self.next()?;
        let (negate, t) = if t.tok == Tok::Not {
            (true, self.next()?)
        } else {
            (false, t)
        };
        let what = match t.tok {
            Tok::Null => Value::Null,
            Tok::Bool(b) => Value::Bool(b),
            _ => return Err(syntax_error(t.at)),
        };
        let is = self.node(Node::Is(Box::new(l), what), ld, t.at)?;
        if negate {
            self.node(Node::Not(Box::new(is.0)), is.1, t.at)
        } else {
            Ok(is)
        }
    }

    fn prefix(&mut self) -> Result<Parsed, ExprError> {
        let t = self.next()?;
        match t.tok {
            Tok::LParen => self.parens(),
            Tok::Plus | Tok::Minus | Tok::Tilde | Tok::Not => self.unary(t),
            Tok::Null => Ok((Node::Const(Value::Null), 1)),
            Tok::Bool(b) => Ok((Node::Const(Value::Bool(b)), 1)),
            Tok::Int(i) => Ok((Node::Const(Value::Int(i)), 1)),
            Tok::Double(d) => Ok((Node::Const(Value::Double(d)), 1)),
            Tok::Var(name) => Ok((Node::Var((self.slot)(name)), 1)),
            Tok::Ident(name) => self.call(name, t.at),
            Tok::Case => self.case(t.at),
            _ => Err(syntax_error(t.at)),
        }
    }

    #[inline(never)]
    fn parens(&mut self) -> Result<Parsed, ExprError> {
        let e = self.expr(0)?;
        self.expect(Tok::RParen)?;
        Ok(e)
    }

    /// Prefix `+`, `-` (`0 - x`), `~` (`-1 # x`) and `NOT`, whose operand takes the binary
    /// operators that bind tighter than the prefix operator.
    #[inline(never)]
    fn unary(&mut self, t: Token<'a>) -> Result<Parsed, ExprError> {
        if t.tok == Tok::Minus && self.peek()?.tok == Tok::MaxIntPlusOne {
            self.next()?;
            return Ok((Node::Const(Value::Int(i64::MIN)), 1));
        }
        let prec = match t.tok {
            Tok::Not => PREC_NOT,
            Tok::Tilde => PREC_BITS,
            _ => PREC_UNARY,
        };
        let (e, d) = self.expr(prec)?;
        let node = match t.tok {
            Tok::Plus => return Ok((e, d)),
            Tok::Minus => Node::Bin(BinOp::Sub, Box::new((Node::Const(Value::Int(0)), e))),
            Tok::Tilde => Node::Bin(BinOp::BitXor, Box::new((Node::Const(Value::Int(!0)), e))),
            _ => Node::Not(Box::new(e)),
        };
        self.node(node, d, t.at)
    }

    #[inline(never)]
    fn call(&mut self, name: &str, at: usize) -> Result<Parsed, ExprError> {
        let Some((fname, callee, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(ExprError {
                at,
                message: format!("unexpected function name ({name})"),
            });
        };
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        let mut depth = 0;
        let close = if self.peek()?.tok == Tok::RParen {
            self.next()?
        } else {
            // exprparse.y's `elist: | expr | elist ',' expr` also takes one leading comma:
            // pgbench accepts `abs(, 1)` as `abs(1)`.
            if self.peek()?.tok == Tok::Comma {
                self.next()?;
            }
            loop {
                let (a, d) = self.expr(0)?;
                args.push(a);
                depth = depth.max(d);
                let t = self.next()?;
                match t.tok {
                    Tok::Comma => {}
                    Tok::RParen => break t,
                    _ => return Err(syntax_error(t.at)),
                }
            }
        };
        let n = args.len();
        let count_error = |message: &str| ExprError {
            at: close.at,
            message: format!("{message} ({fname})"),
        };
        match arity {
            Arity::Exactly(k) if n != *k => {
                return Err(count_error("unexpected number of arguments"))
            }
            Arity::Exactly(_) => {}
            Arity::AtLeastOne if n == 0 => {
                return Err(count_error("at least one argument expected"))
            }
            Arity::AtLeastOne => {}
            Arity::Hash | Arity::Permute => {
                let required = if matches!(arity, Arity::Hash) { 1 } else { 2 };
                if n < required || n > required + 1 {
                    return Err(count_error("unexpected number of arguments"));
                }
                if n == required {
                    args.push(Node::Var((self.slot)("default_seed")));
                    depth = depth.max(1);
                }
            }
        }
        let node = match callee {
            Callee::Op(op) => {
                let mut it = args.into_iter();
                match (it.next(), it.next()) {
                    (Some(l), Some(r)) => Node::Bin(*op, Box::new((l, r))),
                    _ => return Err(count_error("unexpected number of arguments")),
                }
            }
            Callee::Fn(f) => Node::Call(*f, args.into_boxed_slice()),
        };
        self.node(node, depth, at)
    }

    /// After `CASE`: `WHEN c THEN v` one or more times, an optional `ELSE e`, then `END`.
    #[inline(never)]
    fn case(&mut self, at: usize) -> Result<Parsed, ExprError> {
        let mut items = Vec::new();
        let mut depth = 0;
        self.expect(Tok::When)?;
        loop {
            let (c, cd) = self.expr(0)?;
            self.expect(Tok::Then)?;
            let (v, vd) = self.expr(0)?;
            items.push(c);
            items.push(v);
            depth = depth.max(cd).max(vd);
            let t = self.next()?;
            match t.tok {
                Tok::When => {}
                Tok::Else => {
                    let (e, ed) = self.expr(0)?;
                    self.expect(Tok::End)?;
                    items.push(e);
                    depth = depth.max(ed);
                    break;
                }
                Tok::End => {
                    items.push(Node::Const(Value::Null));
                    break;
                }
                _ => return Err(syntax_error(t.at)),
            }
        }
        self.node(Node::Case(items.into_boxed_slice()), depth, at)
    }
}

fn binop_of(t: Tok<'_>) -> BinOp {
    match t {
        Tok::Plus => BinOp::Add,
        Tok::Minus => BinOp::Sub,
        Tok::Star => BinOp::Mul,
        Tok::Slash => BinOp::Div,
        Tok::Percent => BinOp::Mod,
        Tok::Eq => BinOp::Eq,
        Tok::Ne => BinOp::Ne,
        Tok::Lt => BinOp::Lt,
        Tok::Le => BinOp::Le,
        Tok::Pipe => BinOp::BitOr,
        Tok::Amp => BinOp::BitAnd,
        Tok::Hash => BinOp::BitXor,
        Tok::Shl => BinOp::Shl,
        // Only the tokens binary_prec lists reach here; Shr is the last of them.
        _ => BinOp::Shr,
    }
}

#[cold]
fn too_deep(at: usize) -> ExprError {
    ExprError {
        at,
        message: format!("expression is too deeply nested (more than {MAX_DEPTH} levels)"),
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation (pgbench.c)

fn eval(node: &Node, cx: &mut Cx<'_>) -> Result<Value, EvalError> {
    match node {
        Node::Const(v) => Ok(*v),
        Node::Var(slot) => var_value(*slot, cx),
        Node::Bin(op, lr) => {
            let l = eval(&lr.0, cx)?;
            let r = eval(&lr.1, cx)?;
            if l == Value::Null || r == Value::Null {
                return Ok(Value::Null);
            }
            binary(*op, l, r)
        }
        Node::Not(e) => match eval(e, cx)? {
            Value::Null => Ok(Value::Null),
            v => Ok(Value::Bool(!coerce_bool(v)?)),
        },
        Node::Is(e, what) => {
            let v = eval(e, cx)?;
            Ok(Value::Bool(match (v, *what) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                _ => false,
            }))
        }
        // pgbench's AND and OR: a NULL left operand gives NULL whatever the right one is.
        Node::And(lr) => {
            let l = eval(&lr.0, cx)?;
            if l == Value::Null {
                return Ok(Value::Null);
            }
            if !coerce_bool(l)? {
                return Ok(Value::Bool(false));
            }
            match eval(&lr.1, cx)? {
                Value::Null => Ok(Value::Null),
                r => Ok(Value::Bool(coerce_bool(r)?)),
            }
        }
        Node::Or(lr) => {
            let l = eval(&lr.0, cx)?;
            if l == Value::Null {
                return Ok(Value::Null);
            }
            if coerce_bool(l)? {
                return Ok(Value::Bool(true));
            }
            match eval(&lr.1, cx)? {
                Value::Null => Ok(Value::Null),
                r => Ok(Value::Bool(coerce_bool(r)?)),
            }
        }
        Node::Case(items) => {
            let Some((otherwise, pairs)) = items.split_last() else {
                return Ok(Value::Null);
            };
            for pair in pairs.chunks_exact(2) {
                if eval(&pair[0], cx)?.truthy() {
                    return eval(&pair[1], cx);
                }
            }
            eval(otherwise, cx)
        }
        Node::Call(f, args) => call(*f, args, cx),
    }
}

fn var_name<'c>(cx: &'c Cx<'_>, slot: usize) -> &'c str {
    cx.names.get(slot).map_or("?", String::as_str)
}

fn var_value(slot: usize, cx: &Cx<'_>) -> Result<Value, EvalError> {
    match cx.vars.get(slot) {
        Some(Var::Num(v)) => Ok(*v),
        Some(Var::Text(s)) => text_value(var_name(cx, slot), s),
        Some(Var::Unset) | None => Err(EvalError(format!(
            "undefined variable \"{}\"",
            var_name(cx, slot)
        ))),
    }
}

fn coerce_bool(v: Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(b),
        _ => Err(EvalError(format!(
            "cannot coerce {} to boolean",
            v.type_name()
        ))),
    }
}

fn coerce_int(v: Value) -> Result<i64, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => {
            let r = d.round_ties_even();
            // FLOAT8_FITS_IN_INT64: [-2^63, 2^63).
            if r.is_nan()
                || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r)
            {
                return Err(EvalError(format!(
                    "double to int overflow for {}",
                    c_fixed6(r)
                )));
            }
            Ok(r as i64)
        }
        _ => Err(EvalError(format!("cannot coerce {} to int", v.type_name()))),
    }
}

fn coerce_double(v: Value) -> Result<f64, EvalError> {
    match v {
        Value::Double(d) => Ok(d),
        Value::Int(i) => Ok(i as f64),
        _ => Err(EvalError(format!(
            "cannot coerce {} to double",
            v.type_name()
        ))),
    }
}

#[inline(never)]
fn binary(op: BinOp, l: Value, r: Value) -> Result<Value, EvalError> {
    use BinOp::*;
    match op {
        BitAnd | BitOr | BitXor | Shl | Shr => {
            let (li, ri) = (coerce_int(l)?, coerce_int(r)?);
            // C's shifts on x86-64 use the count modulo 64, as wrapping_shl/shr do.
            Ok(Value::Int(match op {
                BitAnd => li & ri,
                BitOr => li | ri,
                BitXor => li ^ ri,
                Shl => li.wrapping_shl(ri as u32),
                _ => li.wrapping_shr(ri as u32),
            }))
        }
        // `%` is integer-only: doubles are rounded to ints first.
        _ if op != Mod && (matches!(l, Value::Double(_)) || matches!(r, Value::Double(_))) => {
            let (ld, rd) = (coerce_double(l)?, coerce_double(r)?);
            Ok(match op {
                Add => Value::Double(ld + rd),
                Sub => Value::Double(ld - rd),
                Mul => Value::Double(ld * rd),
                Div => Value::Double(ld / rd),
                Eq => Value::Bool(ld == rd),
                Ne => Value::Bool(ld != rd),
                Le => Value::Bool(ld <= rd),
                _ => Value::Bool(ld < rd),
            })
        }
        _ => {
            let (li, ri) = (coerce_int(l)?, coerce_int(r)?);
            let overflow = |what: &str| EvalError(format!("bigint {what} out of range"));
            Ok(match op {
                Add => Value::Int(li.checked_add(ri).ok_or_else(|| overflow("add"))?),
                Sub => Value::Int(li.checked_sub(ri).ok_or_else(|| overflow("sub"))?),
                Mul => Value::Int(li.checked_mul(ri).ok_or_else(|| overflow("mul"))?),
                Eq => Value::Bool(li == ri),
                Ne => Value::Bool(li != ri),
                Le => Value::Bool(li <= ri),
                Lt => Value::Bool(li < ri),
                _ => {
                    if ri == 0 {
                        return Err(EvalError("division by zero".to_string()));
                    }
                    if ri == -1 {
                        if op == Mod {
                            Value::Int(0)
                        } else {
                            Value::Int(li.checked_neg().ok_or_else(|| overflow("div"))?)
                        }
                    } else if op == Mod {
                        Value::Int(li % ri)
                    } else {
                        Value::Int(li / ri)
                    }
                }
            })
        }
    }
}

fn arg(v: &[Value], i: usize) -> Value {
    v.get(i).copied().unwrap_or(Value::Null)
}

/// Standard (non-lazy) functions: all arguments are evaluated into a fixed array first,
/// then any NULL among them makes the result NULL (except for `debug`).
#[inline(never)]
fn call(f: Func, args: &[Node], cx: &mut Cx<'_>) -> Result<Value, EvalError> {
    let mut vals = [Value::Null; MAX_FARGS];
    let mut n = 0;
    let mut has_null = false;
    for (slot, a) in vals.iter_mut().zip(args) {
        *slot = eval(a, cx)?;
        has_null |= *slot == Value::Null;
        n += 1;
    }
    if args.len() > MAX_FARGS {
        return Err(EvalError(format!(
            "too many function arguments, maximum is {MAX_FARGS}"
        )));
    }
    if has_null && f != Func::Debug {
        return Ok(Value::Null);
    }
    apply(f, &vals[..n], cx.rng)
}

/// A function on its evaluated arguments: kept apart from [`call`] so that the recursion
/// through nested calls carries only the argument array, not this function's locals.
#[inline(never)]
fn apply(f: Func, v: &[Value], rng: &mut SmallRng) -> Result<Value, EvalError> {
    match f {
        Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
        Func::Abs => match arg(v, 0) {
            Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
            a => {
                let d = coerce_double(a)?;
                Ok(Value::Double(if d < 0.0 { -d } else { d }))
            }
        },
        Func::Debug => {
            let a = arg(v, 0);
            let mut line = StackStr::<64>::new();
            let _ = match a {
                Value::Null => line.write_str("null"),
                Value::Bool(b) => write!(line, "boolean {b}"),
                Value::Int(i) => write!(line, "int {i}"),
                Value::Double(d) => line
                    .write_str("double ")
                    .and_then(|_| write_g15(&mut line, d)),
            };
            crate::script_output::say(&format!("debug: {}", line.as_str()));
            Ok(a)
        }
        Func::Double | Func::Sqrt | Func::Ln | Func::Exp => {
            let d = coerce_double(arg(v, 0))?;
            Ok(Value::Double(match f {
                Func::Sqrt => d.sqrt(),
                Func::Ln => d.ln(),
                Func::Exp => d.exp(),
                _ => d,
            }))
        }
        Func::Int => Ok(Value::Int(coerce_int(arg(v, 0))?)),
        Func::Least | Func::Greatest => {
            let least = f == Func::Least;
            if v.iter().any(|x| matches!(x, Value::Double(_))) {
                let mut ext = coerce_double(arg(v, 0))?;
                for &x in v.iter().skip(1) {
                    let d = coerce_double(x)?;
                    // C's Min/Max macros, including how they treat NaN.
                    ext = if least {
                        if ext < d {
                            ext
                        } else {
                            d
                        }
                    } else if ext > d {
                        ext
                    } else {
                        d
                    };
                }
                Ok(Value::Double(ext))
            } else {
                let mut ext = coerce_int(arg(v, 0))?;
                for &x in v.iter().skip(1) {
                    let i = coerce_int(x)?;
                    ext = if least { ext.min(i) } else { ext.max(i) };
                }
                Ok(Value::Int(ext))
            }
        }
        Func::Random | Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian => {
            let lo = coerce_int(arg(v, 0))?;
            let hi = coerce_int(arg(v, 1))?;
            if lo > hi {
                return Err(EvalError("empty range given to random".to_string()));
            }
            if hi.checked_sub(lo).and_then(|d| d.checked_add(1)).is_none() {
                return Err(EvalError("random range is too large".to_string()));
            }
            if f == Func::Random {
                return Ok(Value::Int(rng.random_range(lo..=hi)));
            }
            let param = coerce_double(arg(v, 2))?;
            match f {
                Func::RandomGaussian => {
                    if param < MIN_GAUSSIAN_PARAM {
                        return Err(EvalError(format!(
                            "gaussian parameter must be at least {} (not {})",
                            c_fixed6(MIN_GAUSSIAN_PARAM),
                            c_fixed6(param)
                        )));
                    }
                    Ok(Value::Int(gaussian_rand(rng, lo, hi, param)))
                }
                Func::RandomZipfian => {
                    if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                        return Err(EvalError(format!(
                            "zipfian parameter must be in range [{:.3}, {:.0}] (not {})",
                            MIN_ZIPFIAN_PARAM,
                            MAX_ZIPFIAN_PARAM,
                            c_fixed6(param)
                        )));
                    }
                    Ok(Value::Int(zipfian_rand(rng, lo, hi, param)))
                }
                _ => {
                    if param <= 0.0 {
                        return Err(EvalError(format!(
                            "exponential parameter must be greater than zero (not {})",
                            c_fixed6(param)
                        )));
                    }
                    Ok(Value::Int(exponential_rand(rng, lo, hi, param)))
                }
            }
        }
        Func::Pow => {
            let b = coerce_double(arg(v, 0))?;
            let e = coerce_double(arg(v, 1))?;
            Ok(Value::Double(b.powf(e)))
        }
        Func::HashMurmur2 | Func::HashFnv1a => {
            let val = coerce_int(arg(v, 0))?;
            let seed = coerce_int(arg(v, 1))? as u64;
            Ok(Value::Int(if f == Func::HashFnv1a {
                hash_fnv1a(val, seed)
            } else {
                hash_murmur2(val, seed)
            }))
        }
        Func::Permute => {
            let val = coerce_int(arg(v, 0))?;
            let size = coerce_int(arg(v, 1))?;
            let seed = coerce_int(arg(v, 2))?;
            if size <= 0 {
                return Err(EvalError(
                    "permute size parameter must be greater than zero".to_string(),
                ));
            }
            Ok(Value::Int(permute(val, size, seed)))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Random distributions (pgbench.c), over a uniform [0, 1) draw from the client's SmallRng

/// `lo + (int64)(n * r)` with n = hi - lo + 1 and r in [0, 1), as pgbench maps a continuous
/// draw onto the range (wrapping where C would overflow, which pgbench's range check
/// all but rules out).
fn scale(lo: i64, hi: i64, r: f64) -> i64 {
    let n = hi.wrapping_sub(lo).wrapping_add(1);
    lo.wrapping_add((n as f64 * r) as i64)
}

/// getExponentialRand: inverse transform of an exponential cut off at the range's end, so
/// the last value is exp(-param) times as likely as the first.
fn exponential_rand(rng: &mut SmallRng, lo: i64, hi: i64, param: f64) -> i64 {
    let cut = (-param).exp();
    let uniform = 1.0 - rng.random::<f64>();
    let r = -(cut + (1.0 - cut) * uniform).ln() / param;
    scale(lo, hi, r)
}

/// getGaussianRand: Box-Muller (sine branch), redrawn until within ±param standard
/// deviations, then mapped linearly onto the range.
fn gaussian_rand(rng: &mut SmallRng, lo: i64, hi: i64, param: f64) -> i64 {
    let stdev = loop {
        let r1 = 1.0 - rng.random::<f64>();
        let r2 = 1.0 - rng.random::<f64>();
        let s = (-2.0 * r1.ln()).sqrt() * (2.0 * std::f64::consts::PI * r2).sin();
        if !(s < -param || s >= param) {
            break s;
        }
    };
    scale(lo, hi, (stdev + param) / (param * 2.0))
}

/// getZipfianRand / computeIterativeZipfian: Devroye's rejection method ("Non-Uniform
/// Random Variate Generation", p. 550-551) for P(k) ∝ k^-s, k in 1..=n.
fn zipfian_rand(rng: &mut SmallRng, lo: i64, hi: i64, s: f64) -> i64 {
    let n = hi.wrapping_sub(lo).wrapping_add(1);
    lo.wrapping_sub(1)
        .wrapping_add(iterative_zipfian(rng, n, s))
}

fn iterative_zipfian(rng: &mut SmallRng, n: i64, s: f64) -> i64 {
    if n <= 1 {
        return 1;
    }
    let b = 2f64.powf(s - 1.0);
    loop {
        let u = rng.random::<f64>();
        let v = rng.random::<f64>();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            return x as i64;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Deterministic functions: bit-identical to pgbench

/// getHashFnv1a: FNV-1a over the value's 8 bytes, low byte first, offset basis xor seed.
fn hash_fnv1a(val: i64, seed: u64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed;
    let mut v = val;
    for _ in 0..8 {
        result ^= (v & 0xff) as u64;
        v >>= 8;
        result = result.wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// getHashMurmur2: 64-bit MurmurHash2 (MurmurHash64A) of the value as one 8-byte block.
fn hash_murmur2(val: i64, seed: u64) -> i64 {
    let mut result = seed ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// PostgreSQL's pg_prng (xoroshiro128** seeded through splitmix64), which permute() must
/// reproduce exactly to give pgbench's permutations.
struct PgPrng {
    s0: u64,
    s1: u64,
}

impl PgPrng {
    fn seeded(seed: u64) -> PgPrng {
        let mut state = seed;
        let mut splitmix = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut v = state;
            v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            v ^ (v >> 31)
        };
        let s0 = splitmix();
        let s1 = splitmix();
        if s0 == 0 && s1 == 0 {
            PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            PgPrng { s0, s1 }
        }
    }

    fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// pg_prng_uint64_range: bitmask rejection.
    fn range(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax <= rmin {
            return rmin;
        }
        let range = rmax - rmin;
        let shift = range.leading_zeros();
        loop {
            let v = self.next_u64() >> shift;
            if v <= range {
                return rmin + v;
            }
        }
    }
}

/// pgbench's permute(): six rounds of odd multiplication, xor and rotation modulo the
/// largest power of two within the size (on the lower and the upper overlapping halves),
/// each followed by a random offset modulo the size, all driven by pg_prng seeded with
/// `seed`.
fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let mut prng = PgPrng::seeded(seed as u64);
    let size = isize as u64;
    let mut v = (val as u64) % size;
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (prng.next_u64() & mask) | 1;
        let r = prng.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (prng.next_u64() & mask) | 1;
        let r = prng.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = prng.range(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}

// ---------------------------------------------------------------------------------------
// Text: variables given as text, and doubles written as text

/// makeVariableValue: NULL, boolean spellings (prefixes of true/yes/false/no, on, off, of),
/// an integer if it looks like one, else a double.
#[inline(never)]
fn text_value(name: &str, s: &str) -> Result<Value, EvalError> {
    let b = s.as_bytes();
    let malformed = || EvalError(format!("malformed variable \"{name}\" value: \"{s}\""));
    if b.is_empty() {
        return Err(malformed());
    }
    let prefix_of =
        |word: &str| b.len() <= word.len() && word.as_bytes()[..b.len()].eq_ignore_ascii_case(b);
    if s.eq_ignore_ascii_case("null") {
        return Ok(Value::Null);
    }
    if prefix_of("true") || prefix_of("yes") || s.eq_ignore_ascii_case("on") {
        return Ok(Value::Bool(true));
    }
    if prefix_of("false")
        || prefix_of("no")
        || s.eq_ignore_ascii_case("off")
        || s.eq_ignore_ascii_case("of")
    {
        return Ok(Value::Bool(false));
    }
    if looks_like_int(b) {
        return c_strtoint64(s).map(Value::Int);
    }
    c_strtod(s).map(Value::Double).ok_or_else(malformed)
}

/// pgbench's is_an_int: spaces, an optional sign, digits, end (also true for a bare sign or
/// only spaces, which strtoint64 then rejects).
fn looks_like_int(b: &[u8]) -> bool {
    let mut p = 0;
    while p < b.len() && is_c_space(b[p]) {
        p += 1;
    }
    if p < b.len() && (b[p] == b'+' || b[p] == b'-') {
        p += 1;
    }
    if p < b.len() && !b[p].is_ascii_digit() {
        return false;
    }
    while p < b.len() && b[p].is_ascii_digit() {
        p += 1;
    }
    p == b.len()
}

/// pgbench's strtoint64 with its error texts.
fn c_strtoint64(s: &str) -> Result<i64, EvalError> {
    let b = s.as_bytes();
    let invalid = || EvalError(format!("invalid input syntax for type bigint: \"{s}\""));
    let mut p = 0;
    while p < b.len() && is_c_space(b[p]) {
        p += 1;
    }
    let neg = match b.get(p) {
        Some(b'-') => {
            p += 1;
            true
        }
        Some(b'+') => {
            p += 1;
            false
        }
        _ => false,
    };
    if !b.get(p).is_some_and(|c| c.is_ascii_digit()) {
        return Err(invalid());
    }
    // Accumulate negatively so that -9223372036854775808 fits.
    let mut acc: i64 = 0;
    while let Some(&c) = b.get(p).filter(|c| c.is_ascii_digit()) {
        acc = acc
            .checked_mul(10)
            .and_then(|a| a.checked_sub(i64::from(c - b'0')))
            .ok_or_else(|| EvalError(format!("value \"{s}\" is out of range for type bigint")))?;
        p += 1;
    }
    while p < b.len() && is_c_space(b[p]) {
        p += 1;
    }
    if p != b.len() {
        return Err(invalid());
    }
    if neg {
        Ok(acc)
    } else {
        acc.checked_neg()
            .ok_or_else(|| EvalError(format!("value \"{s}\" is out of range for type bigint")))
    }
}

/// pgbench's strtodouble: C `strtod` over the whole text (leading spaces allowed), failing
/// where strtod sets ERANGE (overflow to infinity, underflow to zero or a subnormal).
fn c_strtod(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let d: f64 = t.parse().ok()?;
    if d.is_nan() {
        return Some(d);
    }
    let body = t.trim_start_matches(['+', '-']);
    if d.is_infinite() {
        // "inf"/"infinity" are legitimate; a finite literal that overflowed is ERANGE.
        return body.starts_with(['i', 'I']).then_some(d);
    }
    if d != 0.0 && d.abs() < f64::MIN_POSITIVE {
        return None;
    }
    if d == 0.0 {
        let mantissa = body.split(['e', 'E']).next().unwrap_or("");
        if mantissa.bytes().any(|c| (b'1'..=b'9').contains(&c)) {
            return None;
        }
    }
    Some(d)
}

/// A small text buffer on the stack, so that formatting a double needs no heap.
struct StackStr<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackStr<N> {
    fn new() -> Self {
        StackStr {
            buf: [0; N],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for StackStr<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > N {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let keep = d.iter().rposition(|&c| c != b'0').map_or(0, |i| i + 1);
    &d[..keep]
}

fn write_digits<W: fmt::Write + ?Sized>(out: &mut W, d: &[u8]) -> fmt::Result {
    out.write_str(std::str::from_utf8(d).map_err(|_| fmt::Error)?)
}

/// C's `%.15g` as PostgreSQL's snprintf prints it: `NaN`, `Infinity`, `-Infinity`, and
/// otherwise the C library's digits (round half to even on the exact binary value, as
/// Rust's exponent formatting also does).
fn write_g15<W: fmt::Write + ?Sized>(out: &mut W, d: f64) -> fmt::Result {
    if d.is_nan() {
        return out.write_str("NaN");
    }
    if d.is_infinite() {
        return out.write_str(if d < 0.0 { "-Infinity" } else { "Infinity" });
    }
    let mut sci = StackStr::<48>::new();
    write!(sci, "{:.*e}", DBL_DIG - 1, d)?;
    let s = sci.as_str();
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (mantissa, exp) = s.split_once('e').ok_or(fmt::Error)?;
    let exp: i32 = exp.parse().map_err(|_| fmt::Error)?;
    let mut digits = [b'0'; DBL_DIG];
    for (slot, c) in digits
        .iter_mut()
        .zip(mantissa.bytes().filter(u8::is_ascii_digit))
    {
        *slot = c;
    }
    if neg {
        out.write_char('-')?;
    }
    if exp < -4 || exp >= DBL_DIG as i32 {
        write_digits(out, &digits[..1])?;
        let frac = trim_zeros(&digits[1..]);
        if !frac.is_empty() {
            out.write_char('.')?;
            write_digits(out, frac)?;
        }
        let sign = if exp < 0 { '-' } else { '+' };
        write!(out, "e{sign}{:02}", exp.unsigned_abs())
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        write_digits(out, &digits[..int_len])?;
        let frac = trim_zeros(&digits[int_len..]);
        if !frac.is_empty() {
            out.write_char('.')?;
            write_digits(out, frac)?;
        }
        Ok(())
    } else {
        out.write_str("0.")?;
        for _ in 0..(-exp - 1) {
            out.write_char('0')?;
        }
        write_digits(out, trim_zeros(&digits))
    }
}

/// C's `%f` as PostgreSQL's snprintf prints it, for pgbench's error messages.
fn c_fixed6(d: f64) -> String {
    if d.is_nan() {
        "NaN".to_string()
    } else if d.is_infinite() {
        if d < 0.0 { "-Infinity" } else { "Infinity" }.to_string()
    } else {
        format!("{d:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Variables and slots for parsing and evaluating test expressions.
    struct Env {
        names: Vec<String>,
        vars: Vec<Var>,
        rng: SmallRng,
    }

    impl Env {
        fn new() -> Env {
            let mut env = Env {
                names: Vec::new(),
                vars: Vec::new(),
                rng: SmallRng::seed_from_u64(0x7067_6265_6e63_6821),
            };
            env.set("default_seed", Var::Num(Value::Int(12345)));
            env
        }

        fn slot_of(names: &mut Vec<String>, vars: &mut Vec<Var>, name: &str) -> usize {
            if let Some(i) = names.iter().position(|n| n == name) {
                return i;
            }
            names.push(name.to_string());
            vars.push(Var::Unset);
            names.len() - 1
        }

        fn set(&mut self, name: &str, var: Var) {
            let i = Env::slot_of(&mut self.names, &mut self.vars, name);
            self.vars[i] = var;
        }

        fn parse(&mut self, text: &str) -> Result<Expr, ExprError> {
            let (names, vars) = (&mut self.names, &mut self.vars);
            Expr::parse(text, &mut |n| Env::slot_of(names, vars, n))
        }

        fn eval_expr(&mut self, e: &Expr) -> Result<Value, EvalError> {
            let mut cx = Cx {
                vars: &self.vars,
                names: &self.names,
                rng: &mut self.rng,
            };
            e.eval(&mut cx)
        }

        fn run(&mut self, text: &str) -> Result<Value, EvalError> {
            let e = self
                .parse(text)
                .unwrap_or_else(|err| panic!("{text}: {err}"));
            self.eval_expr(&e)
        }

        fn ok(&mut self, text: &str) -> Value {
            self.run(text).unwrap_or_else(|err| panic!("{text}: {err}"))
        }

        fn text(&mut self, text: &str) -> String {
            let mut s = String::new();
            self.ok(text).write_text(&mut s);
            s
        }
    }

    fn run(text: &str) -> Result<Value, EvalError> {
        Env::new().run(text)
    }

    fn ok(text: &str) -> Value {
        Env::new().ok(text)
    }

    fn err(text: &str) -> String {
        match run(text) {
            Err(e) => e.0,
            Ok(v) => panic!("{text}: expected an error, got {v:?}"),
        }
    }

    fn parse_err(text: &str) -> ExprError {
        match Env::new().parse(text) {
            Err(e) => e,
            Ok(e) => panic!("{text}: expected a parse error, got {e:?}"),
        }
    }

    fn text_of(v: Value) -> String {
        let mut s = String::new();
        v.write_text(&mut s);
        s
    }

    use Value::{Bool, Double, Int, Null};

    // Every answer in this test was also produced by pgbench 15.18 (see
    // `matches_real_pgbench_semantics` for those cases); the rest follow from exprparse.y.
    #[test]
    fn precedence_and_associativity() {
        assert_eq!(ok("1 + 2 * 3 - 4 / 2"), Int(5));
        assert_eq!(ok("10 - 3 - 2"), Int(5));
        assert_eq!(ok("100 / 10 / 5"), Int(2));
        assert_eq!(ok("2 + 3 * 4 % 5"), Int(4));
        assert_eq!(ok("~1 + 2"), Int(-4)); // ~(1 + 2)
        assert_eq!(ok("~1 | 2"), Int(-2)); // (~1) | 2
        assert_eq!(ok("~ 1 = -2"), Bool(true)); // (~1) = -2
        assert_eq!(ok("1 << 3 | 1"), Int(9));
        assert_eq!(ok("5 & 3 # 1"), Int(0)); // left to right at one level
        assert_eq!(ok("1 + 1 << 2"), Int(8));
        assert_eq!(ok("6 & 3 = 2"), Bool(true));
        assert_eq!(ok("-2 * 3"), Int(-6));
        assert_eq!(ok("- - 3"), Int(3));
        assert_eq!(ok("-(1.5)"), Double(-1.5));
        assert_eq!(ok("+true"), Bool(true));
        assert_eq!(ok("NOT 1 < 2"), Bool(false)); // NOT (1 < 2)
        assert_eq!(ok("NOT 1 = 2 IS TRUE"), Bool(true)); // NOT ((1 = 2) IS TRUE)
        assert_eq!(ok("NOT NULL IS NULL"), Bool(false)); // NOT (NULL IS NULL)
        assert_eq!(ok("NOT true AND false OR true"), Bool(true));
        assert_eq!(ok("true OR false AND false"), Bool(true)); // AND binds tighter
        assert_eq!(ok("false AND true OR true"), Bool(true));
        assert_eq!(ok("1 + 2 ISNULL"), Bool(false));
        assert_eq!(ok("1 IS NULL IS NULL"), Bool(false));
        assert_eq!(ok("5 NOTNULL"), Bool(true));
        assert_eq!(ok("NULL ISNULL"), Bool(true));
        assert_eq!(ok("(1 > 2) IS NOT FALSE"), Bool(false));
        assert_eq!(ok("(1 < 2) IS TRUE AND 2 > 1"), Bool(true));
        assert_eq!(ok("1 != 2 AND 3 <> 3"), Bool(false));
        assert_eq!(ok("3 >= 3.5"), Bool(false));
        assert_eq!(ok("2.5 > 2"), Bool(true));
        assert_eq!(ok("TrUe AND NOT FaLsE"), Bool(true));
        assert_eq!(ok("Null IS NULL"), Bool(true));
        assert_eq!(ok("case when TRUE then 1 else 2 END"), Int(1));
        assert_eq!(
            ok("case when 1 > 2 then 1 when null then 2 else case when 3 then 4 end end"),
            Int(4)
        );
        assert_eq!(
            ok("CASE WHEN 0 THEN 1 WHEN 2 > 1 THEN 2 ELSE 3 END"),
            Int(2)
        );
        assert_eq!(ok("CASE WHEN false THEN 1 END"), Null);
        assert_eq!(ok("ABS(-3) + Mod(7, 4)"), Int(6));
        // Comparisons do not chain.
        assert_eq!(parse_err("1 < 2 < 3").message, "syntax error");
        assert_eq!(parse_err("1 = 2 <> 3").message, "syntax error");
        assert_eq!(ok("1 = 1 IS NULL"), Bool(false)); // (1 = 1) IS NULL
    }

    #[test]
    fn three_valued_logic() {
        assert_eq!(ok("NULL AND false"), Null);
        assert_eq!(ok("NULL AND true"), Null);
        assert_eq!(ok("true AND NULL"), Null);
        assert_eq!(ok("false AND NULL"), Bool(false));
        assert_eq!(ok("NULL OR true"), Null);
        assert_eq!(ok("NULL OR false"), Null);
        assert_eq!(ok("true OR NULL"), Bool(true));
        assert_eq!(ok("false OR NULL"), Null);
        assert_eq!(ok("NOT NULL"), Null);
        assert_eq!(ok("-NULL"), Null);
        assert_eq!(ok("NULL + 1"), Null);
        assert_eq!(ok("NULL = NULL"), Null);
        assert_eq!(ok("least(1, NULL, 2)"), Null);
        assert_eq!(ok("hash(NULL)"), Null);
        assert_eq!(ok("NULL IS NOT NULL"), Bool(false));
        assert_eq!(ok("1.0 IS NULL"), Bool(false));
        assert_eq!(ok("1 IS TRUE"), Bool(false)); // IS compares types too
        assert_eq!(ok("NULL IS FALSE"), Bool(false));
        assert_eq!(ok("debug(NULL)"), Null);
        // The right operand is not evaluated when the left decides.
        assert_eq!(ok("false AND 1 / 0 = 1"), Bool(false));
        assert_eq!(ok("true OR 1 / 0 = 1"), Bool(true));
        assert_eq!(ok("CASE WHEN true THEN 1 ELSE 1 / 0 END"), Int(1));
        // Logic insists on booleans, comparisons on numbers.
        assert_eq!(err("NOT 1"), "cannot coerce int to boolean");
        assert_eq!(err("1 AND true"), "cannot coerce int to boolean");
        assert_eq!(err("true = true"), "cannot coerce boolean to int");
        assert_eq!(err("1.5 = true"), "cannot coerce boolean to double");
        assert!(Double(0.5).truthy() && !Double(0.0).truthy() && !Null.truthy());
        assert!(Int(-1).truthy() && !Int(0).truthy() && Bool(true).truthy());
    }

    #[test]
    fn arithmetic_and_overflow() {
        assert_eq!(ok("7 % -3"), Int(1));
        assert_eq!(ok("-7 % 3"), Int(-1));
        assert_eq!(ok("-7 / 2"), Int(-3));
        assert_eq!(ok("7 / 2.0"), Double(3.5));
        assert_eq!(ok("7.5 % 2"), Int(0)); // % rounds doubles: 8 % 2
        assert_eq!(ok("2 * 3.0"), Double(6.0));
        assert_eq!(ok("-9223372036854775808"), Int(i64::MIN));
        assert_eq!(ok("-9223372036854775808 % -1"), Int(0));
        assert_eq!(ok("9223372036854775807"), Int(i64::MAX));
        assert_eq!(ok("1 << 65"), Int(2));
        assert_eq!(ok("1 << -1"), Int(i64::MIN));
        assert_eq!(ok("-16 >> 2"), Int(-4));
        assert_eq!(ok("abs(-9223372036854775808)"), Int(i64::MIN));
        assert_eq!(ok("1.0 / 0"), Double(f64::INFINITY));
        assert_eq!(err("9223372036854775807 + 1"), "bigint add out of range");
        assert_eq!(err("-9223372036854775808 - 1"), "bigint sub out of range");
        assert_eq!(err("- -9223372036854775808"), "bigint sub out of range");
        assert_eq!(err("9223372036854775807 * 2"), "bigint mul out of range");
        assert_eq!(err("-9223372036854775808 / -1"), "bigint div out of range");
        assert_eq!(err("5 / 0"), "division by zero");
        assert_eq!(err("5 % 0"), "division by zero");
        assert_eq!(err("mod(5, 0)"), "division by zero");
        assert_eq!(
            err("int(1e30)"),
            "double to int overflow for 1000000000000000019884624838656.000000"
        );
        assert_eq!(err("int(true)"), "cannot coerce boolean to int");
        assert_eq!(err("double(true)"), "cannot coerce boolean to double");
        assert_eq!(err("abs(true)"), "cannot coerce boolean to double");
        assert_eq!(
            err("greatest(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)"),
            "too many function arguments, maximum is 16"
        );
        assert_eq!(
            ok("greatest(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)"),
            Int(16)
        );
    }

    #[test]
    fn functions() {
        assert_eq!(ok("int(2.5)"), Int(2));
        assert_eq!(ok("int(3.5)"), Int(4));
        assert_eq!(ok("int(-2.5)"), Int(-2));
        assert_eq!(ok("greatest(1, 2.5, 2)"), Double(2.5));
        assert_eq!(ok("least(3, 1, 2)"), Int(1));
        assert_eq!(ok("least(2, 1.5, 3)"), Double(1.5));
        assert_eq!(ok("abs(-2.5)"), Double(2.5));
        assert_eq!(ok("pow(2, 10)"), Double(1024.0));
        assert_eq!(ok("power(2.0, -1)"), Double(0.5));
        assert_eq!(ok("mod(-9, 4)"), Int(-1));
        assert_eq!(ok("double(5)"), Double(5.0));
        assert_eq!(ok("sqrt(4)"), Double(2.0));
        assert_eq!(ok("ln(1)"), Double(0.0));
        assert_eq!(ok("exp(0)"), Double(1.0));
        assert_eq!(ok("pi()"), Double(std::f64::consts::PI));
        assert_eq!(ok("debug(1 + 1)"), Int(2));
        assert_eq!(ok("random(7, 7)"), Int(7));
        assert_eq!(ok("random_gaussian(3, 3, 2.0)"), Int(3));
        assert_eq!(ok("random_exponential(4, 4, 1)"), Int(4));
        assert_eq!(ok("random_zipfian(9, 9, 1.5)"), Int(9));
        assert_eq!(ok("1.5e3 + 2E-1"), Double(1500.2));
        assert_eq!(ok(".5 + 1."), Double(1.5));
        assert_eq!(ok("1e3"), Double(1000.0));
    }

    #[test]
    fn parameter_errors() {
        assert_eq!(err("random(5, 1)"), "empty range given to random");
        assert_eq!(
            err("random(-9223372036854775808, 9223372036854775807)"),
            "random range is too large"
        );
        assert_eq!(
            err("random_gaussian(1, 10, 1.5)"),
            "gaussian parameter must be at least 2.000000 (not 1.500000)"
        );
        assert_eq!(
            err("random_exponential(1, 10, 0)"),
            "exponential parameter must be greater than zero (not 0.000000)"
        );
        assert_eq!(
            err("random_zipfian(1, 10, 0.5)"),
            "zipfian parameter must be in range [1.001, 1000] (not 0.500000)"
        );
        assert_eq!(
            err("random_zipfian(1, 10, 1001)"),
            "zipfian parameter must be in range [1.001, 1000] (not 1001.000000)"
        );
        assert_eq!(
            err("random_zipfian(1, 10, sqrt(-1))"),
            "zipfian parameter must be in range [1.001, 1000] (not NaN)"
        );
        assert_eq!(
            err("permute(1, 0)"),
            "permute size parameter must be greater than zero"
        );
        assert_eq!(
            err("permute(1, -5, 3)"),
            "permute size parameter must be greater than zero"
        );
        assert_eq!(err("random(1, true)"), "cannot coerce boolean to int");
    }

    #[test]
    fn parse_errors() {
        let e = parse_err("foo(1)");
        assert_eq!(
            (e.at, e.message.as_str()),
            (0, "unexpected function name (foo)")
        );
        let e = parse_err("1 + abs(1, 2)");
        assert_eq!(
            (e.at, e.message.as_str()),
            (12, "unexpected number of arguments (abs)")
        );
        assert_eq!(
            parse_err("ABS()").message,
            "unexpected number of arguments (abs)"
        );
        assert_eq!(
            parse_err("least()").message,
            "at least one argument expected (least)"
        );
        assert_eq!(
            parse_err("hash(1, 2, 3)").message,
            "unexpected number of arguments (hash)"
        );
        assert_eq!(
            parse_err("hash_fnv1a()").message,
            "unexpected number of arguments (hash_fnv1a)"
        );
        assert_eq!(
            parse_err("permute(1)").message,
            "unexpected number of arguments (permute)"
        );
        assert_eq!(
            parse_err("permute(1, 2, 3, 4)").message,
            "unexpected number of arguments (permute)"
        );
        assert_eq!(
            parse_err("random(1)").message,
            "unexpected number of arguments (random)"
        );
        assert_eq!(
            parse_err("pi(1)").message,
            "unexpected number of arguments (pi)"
        );
        let e = parse_err("1 +");
        assert_eq!((e.at, e.message.as_str()), (3, "syntax error"));
        assert_eq!(parse_err("").message, "syntax error");
        assert_eq!(parse_err("abs").message, "syntax error");
        assert_eq!(parse_err("(1").message, "syntax error");
        assert_eq!(parse_err("1 2").at, 2);
        assert_eq!(parse_err("1 ~ 2").message, "syntax error");
        assert_eq!(parse_err("f(,1)").message, "unexpected function name (f)");
        assert_eq!(ok("abs(,-1)"), Int(1)); // pgbench 15 accepts this too
        assert_eq!(ok("least(, 3, 2)"), Int(2));
        assert_eq!(parse_err("abs(,)").message, "syntax error");
        assert_eq!(parse_err("abs(,,1)").message, "syntax error");
        assert_eq!(parse_err("abs(1,)").message, "syntax error");
        assert_eq!(parse_err("1 IS 1").message, "syntax error");
        assert_eq!(
            parse_err("x IS NULL").message,
            "unexpected function name (x)"
        );
        assert_eq!(parse_err("CASE 1 END").message, "syntax error");
        assert_eq!(parse_err("CASE WHEN 1 THEN 2").message, "syntax error");
        assert_eq!(parse_err("9223372036854775808").message, "syntax error");
        assert_eq!(parse_err("1 - 9223372036854775808").message, "syntax error");
        assert_eq!(
            parse_err("99999999999999999999").message,
            "bigint constant overflow (99999999999999999999)"
        );
        assert_eq!(
            parse_err("1e999").message,
            "double constant overflow (1e999)"
        );
        assert_eq!(
            parse_err("1e-400").message,
            "double constant overflow (1e-400)"
        );
        let e = parse_err("1 $ 2");
        assert_eq!((e.at, e.message.as_str()), (2, "unexpected character ($)"));
        assert_eq!(parse_err(": 1").message, "unexpected character (:)");
        assert_eq!(parse_err("1 ! 2").message, "unexpected character (!)");
        assert_eq!(
            parse_err("1 $ 2").to_string(),
            "unexpected character ($) (at character 2)"
        );
    }

    #[test]
    fn nesting_limit() {
        // Deep but allowed. (Measured at MAX_DEPTH: release builds need under 300 KiB of
        // stack for the deepest shapes, unoptimised test builds under 2 MiB.)
        let ok_depth = MAX_DEPTH - 1;
        let chain = format!("1{}", " + 1".repeat(ok_depth - 1));
        let parens = format!("{}1{}", "(".repeat(ok_depth), ")".repeat(ok_depth));
        let unary = format!("{}1", "- ".repeat(ok_depth - 1));
        let handle = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                let mut env = Env::new();
                (env.run(&chain), env.run(&parens), env.run(&unary))
            })
            .expect("spawn");
        let (a, b, c) = handle.join().expect("no stack overflow");
        assert_eq!(a, Ok(Int(ok_depth as i64)));
        assert_eq!(b, Ok(Int(1)));
        assert_eq!(
            c,
            Ok(Int(if (ok_depth - 1).is_multiple_of(2) {
                1
            } else {
                -1
            }))
        );
        // Too deep: an error, not a crash.
        let too_deep = format!("1{}", " + 1".repeat(MAX_DEPTH + 5));
        assert!(parse_err(&too_deep).message.contains("too deeply nested"));
        let too_deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(parse_err(&too_deep).message.contains("too deeply nested"));
    }

    #[test]
    fn variables() {
        let mut env = Env::new();
        env.set("n", Var::Num(Int(41)));
        assert_eq!(env.ok(":n + 1"), Int(42));
        let e = env.parse(":nosuch + 1").expect("parses");
        assert_eq!(
            env.eval_expr(&e),
            Err(EvalError("undefined variable \"nosuch\"".to_string()))
        );
        // The implicit seed is the variable default_seed, given a slot at parse time.
        let mut names = Vec::new();
        let e = Expr::parse("hash(1) + permute(1, 10)", &mut |n| {
            names.push(n.to_string());
            names.len() - 1
        })
        .expect("parses");
        assert_eq!(names, ["default_seed", "default_seed"]);
        let mut rng = SmallRng::seed_from_u64(1);
        let vars = [Var::Num(Int(12345)), Var::Unset];
        let mut cx = Cx {
            vars: &vars,
            names: &names,
            rng: &mut rng,
        };
        assert_eq!(
            e.eval(&mut cx),
            Err(EvalError("undefined variable \"default_seed\"".to_string()))
        );
        let vars = [Var::Num(Int(12345)), Var::Num(Int(12345))];
        let mut cx = Cx {
            vars: &vars,
            names: &names,
            rng: &mut rng,
        };
        let expected = hash_murmur2(1, 12345).wrapping_add(3);
        assert_eq!(e.eval(&mut cx), Ok(Int(expected)));
        // A slot the caller never filled counts as unset, not as a crash.
        let mut cx = Cx {
            vars: &[],
            names: &[],
            rng: &mut rng,
        };
        assert_eq!(
            e.eval(&mut cx),
            Err(EvalError("undefined variable \"?\"".to_string()))
        );
    }

    #[test]
    fn text_variables() {
        let cases: &[(&str, Value)] = &[
            ("yes", Bool(true)),
            ("T", Bool(true)),
            ("tr", Bool(true)),
            ("y", Bool(true)),
            ("on", Bool(true)),
            ("of", Bool(false)),
            ("Off", Bool(false)),
            ("n", Bool(false)),
            ("FALSE", Bool(false)),
            ("nUlL", Null),
            (" 12", Int(12)),
            ("+7", Int(7)),
            ("-9223372036854775808", Int(i64::MIN)),
            ("1e3", Double(1000.0)),
            ("  2.5", Double(2.5)),
            ("1.", Double(1.0)),
            ("inf", Double(f64::INFINITY)),
            ("-Infinity", Double(f64::NEG_INFINITY)),
            ("0e-999", Double(0.0)),
        ];
        for (text, want) in cases {
            let mut env = Env::new();
            env.set("v", Var::Text(text.to_string()));
            assert_eq!(env.ok(":v"), *want, "{text:?}");
        }
        let mut env = Env::new();
        env.set("v", Var::Text("nan".to_string()));
        assert!(matches!(env.ok(":v"), Double(d) if d.is_nan()));
        let errors: &[(&str, &str)] = &[
            ("abc", "malformed variable \"v\" value: \"abc\""),
            ("1.5 ", "malformed variable \"v\" value: \"1.5 \""),
            ("o", "malformed variable \"v\" value: \"o\""),
            ("", "malformed variable \"v\" value: \"\""),
            ("1e400", "malformed variable \"v\" value: \"1e400\""),
            ("1e-310", "malformed variable \"v\" value: \"1e-310\""),
            ("12 ", "malformed variable \"v\" value: \"12 \""),
            ("+", "invalid input syntax for type bigint: \"+\""),
            ("   ", "invalid input syntax for type bigint: \"   \""),
            (
                "99999999999999999999",
                "value \"99999999999999999999\" is out of range for type bigint",
            ),
        ];
        for (text, want) in errors {
            let mut env = Env::new();
            env.set("v", Var::Text(text.to_string()));
            assert_eq!(env.run(":v"), Err(EvalError(want.to_string())), "{text:?}");
        }
    }

    #[test]
    fn to_int_for_sleep() {
        assert_eq!(Double(2.5).to_int(), Ok(2));
        assert_eq!(Double(3.5).to_int(), Ok(4));
        assert_eq!(Double(-2.5).to_int(), Ok(-2));
        assert_eq!(Int(7).to_int(), Ok(7));
        assert_eq!(Double(-9_223_372_036_854_775_808.0).to_int(), Ok(i64::MIN));
        assert_eq!(
            Double(9_223_372_036_854_775_808.0).to_int(),
            Err(EvalError(
                "double to int overflow for 9223372036854775808.000000".to_string()
            ))
        );
        assert_eq!(
            Double(f64::NAN).to_int(),
            Err(EvalError("double to int overflow for NaN".to_string()))
        );
        assert_eq!(
            Bool(true).to_int(),
            Err(EvalError("cannot coerce boolean to int".to_string()))
        );
        assert_eq!(
            Null.to_int(),
            Err(EvalError("cannot coerce null to int".to_string()))
        );
    }

    // Reference vectors produced by the real pgbench 15.18 (Debian 15.18-0+deb12u1) against a
    // throwaway PostgreSQL 15 server: for each case the script had
    //     \set vNAME EXPR
    //     insert into kv values ('NAME', ':vNAME');
    // (kv(k text, v text)), run with `pgbench -t 1 -n -f script.sql`, values read back
    // with psql. Text variables came from -D (e.g. -D tyes=yes -D "tsp12= 12").
    const PGBENCH_VECTORS: &[(&str, &str)] = &[
        ("hash_fnv1a(0, 0)", "-6284781860667377211"),
        ("hash_fnv1a(1, 0)", "-8517097267634966620"),
        ("hash_fnv1a(-1, 0)", "-8289690350564177859"),
        ("hash_fnv1a(42, 12345)", "792245531053921782"),
        ("hash_fnv1a(9223372036854775807, 1)", "-280712867721224292"),
        (
            "hash_fnv1a(-9223372036854775808, -1)",
            "4052607191188198810",
        ),
        ("hash_fnv1a(123456789, 987654321)", "-6616195411920759204"),
        ("hash_murmur2(0, 0)", "8217090173679840641"),
        ("hash_murmur2(1, 0)", "-8089716718896805586"),
        ("hash_murmur2(-1, 0)", "4219408603045787357"),
        ("hash_murmur2(42, 12345)", "-2248789909916509457"),
        (
            "hash_murmur2(9223372036854775807, 1)",
            "-422191570849047500",
        ),
        (
            "hash_murmur2(-9223372036854775808, -1)",
            "5949093009533562506",
        ),
        ("hash_murmur2(123456789, 987654321)", "-3046098614147007385"),
        ("hash(42, 12345)", "-2248789909916509457"),
        ("hash(7, -5)", "-7282368987271645234"),
        ("hash(7.4, 2.6)", "8125866431149839784"),
        ("permute(0, 1, 0)", "0"),
        ("permute(0, 2, 1)", "1"),
        ("permute(1, 2, 1)", "0"),
        ("permute(0, 3, 5)", "0"),
        ("permute(1, 3, 5)", "1"),
        ("permute(2, 3, 5)", "2"),
        ("permute(0, 10, 12345)", "0"),
        ("permute(1, 10, 12345)", "3"),
        ("permute(2, 10, 12345)", "7"),
        ("permute(3, 10, 12345)", "8"),
        ("permute(4, 10, 12345)", "6"),
        ("permute(5, 10, 12345)", "1"),
        ("permute(6, 10, 12345)", "9"),
        ("permute(7, 10, 12345)", "5"),
        ("permute(8, 10, 12345)", "2"),
        ("permute(9, 10, 12345)", "4"),
        ("permute(5, 7, 42)", "2"),
        ("permute(999, 1000, -1)", "160"),
        ("permute(-3, 100, 7)", "90"),
        ("permute(123456789, 1000000007, 99)", "321001628"),
        ("permute(1, 9223372036854775807, 5)", "164076622227299458"),
        ("permute(-1, 9223372036854775807, -5)", "397281557749302632"),
        ("permute(12, 1000, 0)", "699"),
        ("permute(77, 128, 3)", "103"),
        ("permute(5.4, 10.2, 12345)", "1"),
        ("1.0/3", "0.333333333333333"),
        ("2.0/3", "0.666666666666667"),
        ("1e15", "1e+15"),
        ("1e16", "1e+16"),
        ("1e-5", "1e-05"),
        ("0.1+0.2", "0.3"),
        ("12345678901234.25", "12345678901234.2"),
        ("pi()", "3.14159265358979"),
        ("sqrt(-1.0)", "NaN"),
        ("ln(0)", "-Infinity"),
        ("exp(1000)", "Infinity"),
        ("123456789012345678.0", "1.23456789012346e+17"),
        ("3.0", "3"),
        ("-2.5e-7", "-2.5e-07"),
        (".5", "0.5"),
        ("1.", "1"),
        ("1e3", "1000"),
        ("sqrt(2)", "1.4142135623731"),
        ("exp(1)", "2.71828182845905"),
        ("ln(10)", "2.30258509299405"),
        ("1.5e3 + 2E-1", "1500.2"),
        ("1 < 2", "true"),
        ("2 <= 1", "false"),
        ("NULL", "NULL"),
        ("(NULL AND false) IS NULL", "true"),
        ("NULL OR true", "NULL"),
        ("least(1, NULL, 2)", "NULL"),
    ];

    #[test]
    fn matches_real_pgbench() {
        let mut env = Env::new();
        for (expr, want) in PGBENCH_VECTORS {
            assert_eq!(env.text(expr), *want, "{expr}");
        }
    }

    #[test]
    fn write_text_of_doubles() {
        assert_eq!(text_of(Double(-0.0)), "-0");
        assert_eq!(text_of(Double(0.0)), "0");
        assert_eq!(text_of(Double(0.0001)), "0.0001");
        assert_eq!(
            text_of(Double(0.000123456789012345)),
            "0.000123456789012345"
        );
        assert_eq!(text_of(Double(100000000000000.5)), "100000000000000");
        assert_eq!(text_of(Double(1234567890123.125)), "1234567890123.12");
        assert_eq!(text_of(Double(999_999_999_999_999.9)), "1e+15"); // rounds up to 16 digits
        assert_eq!(text_of(Double(1e100)), "1e+100");
        assert_eq!(text_of(Double(-1e-300)), "-1e-300");
        assert_eq!(text_of(Double(f64::MAX)), "1.79769313486232e+308");
        assert_eq!(text_of(Double(5e-324)), "4.94065645841247e-324");
        assert_eq!(text_of(Double(123456789012345.0)), "123456789012345");
        assert_eq!(text_of(Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(text_of(Bool(false)), "false");
        assert_eq!(text_of(Null), "NULL");
    }

    #[test]
    fn permute_is_a_permutation() {
        for size in [1i64, 2, 3, 7, 100, 1000] {
            for seed in [0i64, 1, -1, 12345, i64::MIN, i64::MAX] {
                let mut seen = vec![false; size as usize];
                for i in 0..size {
                    let p = permute(i, size, seed);
                    assert!((0..size).contains(&p), "permute({i}, {size}, {seed}) = {p}");
                    assert!(!seen[p as usize], "permute(_, {size}, {seed}) repeats {p}");
                    seen[p as usize] = true;
                    // Out-of-range inputs are taken modulo the size (as unsigned).
                    assert_eq!(permute(i + size, size, seed), p);
                }
            }
        }
        // Not the identity for a larger size.
        assert!((0..1000).any(|i| permute(i, 1000, 7) != i));
    }

    /// Mean and variance of a distribution over 0..n given by its probabilities.
    fn moments(p: &[f64]) -> (f64, f64) {
        let total: f64 = p.iter().sum();
        let mean = p.iter().enumerate().map(|(k, q)| k as f64 * q).sum::<f64>() / total;
        let var = p
            .iter()
            .enumerate()
            .map(|(k, q)| (k as f64 - mean).powi(2) * q)
            .sum::<f64>()
            / total;
        (mean, var)
    }

    /// Draws `count` values from `expr`, checking the bounds, and returns the histogram of
    /// value - lo.
    fn draw(env: &mut Env, expr: &str, lo: i64, hi: i64, count: usize) -> Vec<u64> {
        let e = env.parse(expr).expect("parses");
        let mut hist = vec![0u64; (hi - lo + 1) as usize];
        for _ in 0..count {
            match env.eval_expr(&e) {
                Ok(Int(x)) => {
                    assert!((lo..=hi).contains(&x), "{expr} gave {x}");
                    hist[(x - lo) as usize] += 1;
                }
                other => panic!("{expr} gave {other:?}"),
            }
        }
        hist
    }

    fn sample_mean(hist: &[u64]) -> f64 {
        let n: u64 = hist.iter().sum();
        hist.iter()
            .enumerate()
            .map(|(k, &c)| k as f64 * c as f64)
            .sum::<f64>()
            / n as f64
    }

    fn sample_var(hist: &[u64]) -> f64 {
        let n: u64 = hist.iter().sum();
        let m = sample_mean(hist);
        hist.iter()
            .enumerate()
            .map(|(k, &c)| (k as f64 - m).powi(2) * c as f64)
            .sum::<f64>()
            / n as f64
    }

    const DRAWS: usize = 200_000;

    #[test]
    fn uniform_random() {
        let mut env = Env::new();
        let hist = draw(&mut env, "random(1, 100)", 1, 100, DRAWS);
        let p = vec![1.0; 100];
        let (mean, var) = moments(&p);
        let se = (var / DRAWS as f64).sqrt();
        assert!(
            (sample_mean(&hist) - mean).abs() < 5.0 * se,
            "mean {} vs {mean}",
            sample_mean(&hist)
        );
        assert!(hist.iter().all(|&c| c > 0));
        // Chi-square with 99 degrees of freedom: far beyond the 99.99th percentile (~157).
        let expect = DRAWS as f64 / 100.0;
        let chi2: f64 = hist
            .iter()
            .map(|&c| (c as f64 - expect).powi(2) / expect)
            .sum();
        assert!(chi2 < 200.0, "chi2 {chi2}");
        // Extreme ranges stay in bounds.
        for _ in 0..1000 {
            let x = env.ok("random(-4611686018427387904, 4611686018427387902)");
            assert!(
                matches!(x, Int(v) if (-4611686018427387904..=4611686018427387902).contains(&v))
            );
            let x = env.ok("random(1, 9223372036854775807)");
            assert!(matches!(x, Int(v) if v >= 1));
        }
    }

    #[test]
    fn exponential_random() {
        let (lo, hi, param) = (1i64, 100i64, 5.0f64);
        let n = (hi - lo + 1) as f64;
        let cut = (-param).exp();
        // P(k) for the value lo + k: the truncated exponential over [k/n, (k+1)/n).
        let p: Vec<f64> = (0..(hi - lo + 1))
            .map(|k| {
                let a = (-param * k as f64 / n).exp();
                let b = (-param * (k + 1) as f64 / n).exp();
                (a - b) / (1.0 - cut)
            })
            .collect();
        let (mean, var) = moments(&p);
        let mut env = Env::new();
        let hist = draw(&mut env, "random_exponential(1, 100, 5)", lo, hi, DRAWS);
        let se = (var / DRAWS as f64).sqrt();
        let got = sample_mean(&hist);
        assert!(
            (got - mean).abs() < 5.0 * se,
            "mean {got} vs {mean} (se {se})"
        );
        // The first value is exp(param / n) times as likely as the second.
        assert!(hist[0] > hist[1] && hist[1] > hist[50] && hist[50] > hist[99]);
    }

    /// The standard normal CDF, via Abramowitz & Stegun 7.1.26 (error below 1.5e-7).
    fn phi(x: f64) -> f64 {
        let z = x.abs() / std::f64::consts::SQRT_2;
        let t = 1.0 / (1.0 + 0.327_591_1 * z);
        let poly = t
            * (0.254_829_592
                + t * (-0.284_496_736
                    + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        let erf = 1.0 - poly * (-z * z).exp();
        if x >= 0.0 {
            0.5 * (1.0 + erf)
        } else {
            0.5 * (1.0 - erf)
        }
    }

    #[test]
    fn gaussian_random() {
        let (lo, hi, param) = (1i64, 100i64, 2.5f64);
        let n = (hi - lo + 1) as f64;
        let total = phi(param) - phi(-param);
        // Value lo + k covers standard deviations [-param + 2 param k / n, … (k+1) …).
        let p: Vec<f64> = (0..(hi - lo + 1))
            .map(|k| {
                let a = -param + 2.0 * param * k as f64 / n;
                let b = -param + 2.0 * param * (k + 1) as f64 / n;
                (phi(b) - phi(a)) / total
            })
            .collect();
        let (mean, var) = moments(&p);
        assert!((mean - 49.5).abs() < 1e-6);
        let mut env = Env::new();
        let hist = draw(&mut env, "random_gaussian(1, 100, 2.5)", lo, hi, DRAWS);
        let se = (var / DRAWS as f64).sqrt();
        let got = sample_mean(&hist);
        assert!(
            (got - mean).abs() < 5.0 * se,
            "mean {got} vs {mean} (se {se})"
        );
        // The spread matches the truncated normal's (a uniform's would be ~833).
        let got_var = sample_var(&hist);
        assert!(
            (got_var - var).abs() < 0.02 * var,
            "variance {got_var} vs {var}"
        );
    }

    #[test]
    fn zipfian_random() {
        let (lo, hi, s) = (1i64, 100i64, 1.5f64);
        let weights: Vec<f64> = (1..=(hi - lo + 1)).map(|k| (k as f64).powf(-s)).collect();
        let h: f64 = weights.iter().sum();
        let top = 1.0 / h;
        let count = 100_000;
        let mut env = Env::new();
        let hist = draw(&mut env, "random_zipfian(1, 100, 1.5)", lo, hi, count);
        let share = hist[0] as f64 / count as f64;
        let se = (top * (1.0 - top) / count as f64).sqrt();
        assert!((share - top).abs() < 5.0 * se, "top share {share} vs {top}");
        // Chi-square over 1..=10 and the rest (10 degrees of freedom; 99.99th pct ~35.6).
        let mut chi2 = 0.0;
        let mut rest_obs = 0.0;
        let mut rest_exp = 0.0;
        for k in 0..hist.len() {
            let expect = count as f64 * weights[k] / h;
            if k < 10 {
                chi2 += (hist[k] as f64 - expect).powi(2) / expect;
            } else {
                rest_obs += hist[k] as f64;
                rest_exp += expect;
            }
        }
        chi2 += (rest_obs - rest_exp).powi(2) / rest_exp;
        assert!(chi2 < 45.0, "chi2 {chi2}");
        // Near the smallest parameter: slow rejection, but in bounds, and shifted ranges.
        let hist = draw(&mut env, "random_zipfian(10, 20, 1.001)", 10, 20, 2000);
        assert!(hist[0] > hist[10]);
        let hist = draw(&mut env, "random_zipfian(-5, 5, 1000)", -5, 5, 1000);
        assert_eq!(hist[0], 1000);
    }

    #[test]
    fn lexing_details() {
        // Keywords are whole words; longer names are functions.
        assert_eq!(
            parse_err("android(1)").message,
            "unexpected function name (android)"
        );
        assert_eq!(parse_err("1.5e").message, "syntax error");
        // Variable names take letters, digits, underscores and non-ASCII bytes.
        let mut env = Env::new();
        env.set("été_2", Var::Num(Int(3)));
        assert_eq!(env.ok(":été_2 * 2"), Int(6));
        // Line continuations and other whitespace are skipped.
        assert_eq!(ok("1 +\\\n 2\t*\r\n3"), Int(7));
        assert_eq!(ok("1<>2"), Bool(true));
        assert_eq!(ok("1!=1"), Bool(false));
        assert_eq!(ok("4>>1<<1"), Int(4));
        assert_eq!(ok("-9223372036854775808 < 0"), Bool(true));
    }
}
