//! The server: one loop over one store (a `Store` holds its connection in a `RefCell`
//! and is not `Sync`, and a page is a few queries, so requests are answered one after
//! another), routing, the token check on every write, and error pages: a bad query is
//! a 400 naming the parameter, an unknown path a 404, a write without the token a 403,
//! a store that fails a 500 with the store's message (password hidden) — never a panic.

use crate::index::Index;
use crate::layout::{self, Chrome, Nav};
use crate::query::{Bad, Params};
use maud::{html, Markup};
use plumb_report::select::SelectError;
use plumb_store::{Store, StoreError};
use serde::Serialize;
use std::io::Read as _;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// Where `plumb serve` listens unless told: loopback, so nothing is exposed by default.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8470";

/// The largest form a write may post (a bulk triage of a few thousand ids fits).
const MAX_BODY: u64 = 1 << 20;

/// How `plumb serve` is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// `HOST:PORT` to listen on (port 0: any free port, see [`Server::addr`]).
    pub listen: String,
    /// The token every write (a triage state set) must carry; `None`: writes are off.
    pub token: Option<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: DEFAULT_LISTEN.into(),
            token: None,
        }
    }
}

/// Why the server did not start (or stopped): each says what to do instead.
#[derive(Debug, Error)]
pub enum ServeError {
    /// `--listen` is not `HOST:PORT`.
    #[error("--listen {listen}: not an address to listen on ({why}); give HOST:PORT, e.g. 127.0.0.1:8470")]
    BadListen {
        /// As given.
        listen: String,
        /// Why it does not parse.
        why: String,
    },
    /// A non-loopback address without a token: anyone on the network could set states.
    #[error("--listen {addr}: other machines can reach this address, and changing a triage state from them must need a token; give --token T (or set PLUMB_SERVE_TOKEN), or listen on 127.0.0.1")]
    NoToken {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// An empty `--token`.
    #[error("--token: empty; give a token (any text nobody guesses), or leave --token out to serve read-only")]
    EmptyToken,
    /// The port is taken.
    #[error("--listen {addr}: the port is in use (another plumb serve?); stop that one, or give another port, e.g. --listen {}:0 for any free one", addr.ip())]
    InUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Listening failed otherwise.
    #[error("--listen {addr}: cannot listen: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS's error.
        source: std::io::Error,
    },
    /// The HTTP server could not be built over the socket.
    #[error("--listen {addr}: cannot serve: {why}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// tiny_http's error.
        why: String,
    },
    /// A store file that does not exist.
    #[error("store {store}: no such file; run plumb first (plumb kv …), or pass --store PATH|URL")]
    NoStore {
        /// The path given.
        store: String,
    },
    /// The store could not be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A request as the pages see it (what tiny_http read, or what a test builds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST` …
    pub method: String,
    /// Path and query string (`/runs?page=2`).
    pub url: String,
    /// The body (a posted form), as text.
    pub body: String,
}

impl Request {
    /// A GET of `url`.
    pub fn get(url: &str) -> Request {
        Request {
            method: "GET".into(),
            url: url.into(),
            body: String::new(),
        }
    }

    /// A POST of a form to `url`.
    pub fn post(url: &str, form: &str) -> Request {
        Request {
            method: "POST".into(),
            url: url.into(),
            body: form.into(),
        }
    }
}

/// What a request is answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// The page.
    pub body: String,
    /// Where a 303 sends the browser.
    pub location: Option<String>,
}

/// Why a page could not be given: each maps to one HTTP status and one message.
#[derive(Debug)]
pub enum PageError {
    /// A parameter that does not parse (400).
    Bad(Bad),
    /// Nothing at that path, or no such run, change or host (404).
    NotFound(String),
    /// A write without the right token (403).
    Forbidden(String),
    /// A method the path does not take (405).
    Method(String),
    /// A posted body above the limit (413).
    TooLarge,
    /// The store failed (500; its message names the store with the password hidden).
    Store(StoreError),
    /// Anything else that went wrong on this side (500).
    Internal(String),
}

impl From<Bad> for PageError {
    fn from(b: Bad) -> Self {
        PageError::Bad(b)
    }
}

impl From<StoreError> for PageError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NoRun { .. }
            | StoreError::NoChange { .. }
            | StoreError::NoSuite { .. }
            | StoreError::NoBisect { .. } => PageError::NotFound(e.to_string()),
            e => PageError::Store(e),
        }
    }
}

impl PageError {
    /// A selector's error, as the parameter `param`'s: a selector naming nothing is the
    /// user's input (400); a store that fails is the store's (500).
    pub fn select(param: &str, e: SelectError) -> PageError {
        match e {
            SelectError::Bad(why) => PageError::Bad(Bad {
                param: param.into(),
                why,
            }),
            SelectError::Store { sel, source } => match source {
                StoreError::NoRun { .. } | StoreError::NoSuite { .. } => PageError::Bad(Bad {
                    param: param.into(),
                    why: format!("selector {sel:?}: {source}"),
                }),
                other => PageError::Store(other),
            },
            SelectError::Db(e) => PageError::Store(e),
        }
    }

    fn status(&self) -> u16 {
        match self {
            PageError::Bad(_) => 400,
            PageError::Forbidden(_) => 403,
            PageError::NotFound(_) => 404,
            PageError::Method(_) => 405,
            PageError::TooLarge => 413,
            PageError::Store(_) | PageError::Internal(_) => 500,
        }
    }

    fn message(&self) -> String {
        match self {
            PageError::Bad(b) => b.to_string(),
            PageError::NotFound(m) | PageError::Forbidden(m) | PageError::Method(m) => m.clone(),
            PageError::TooLarge => {
                format!("the form is larger than {MAX_BODY} bytes; post fewer ids at once")
            }
            PageError::Store(e) => e.to_string(),
            PageError::Internal(m) => m.clone(),
        }
    }
}

/// A page's content, before the chrome or the JSON encoding.
pub enum Page {
    /// An HTML page.
    Html {
        /// Its title.
        title: String,
        /// The navigation entry it is.
        nav: Nav,
        /// Its content.
        body: Markup,
        /// Reload every this many seconds.
        refresh: Option<u32>,
        /// Its script, a constant of this build.
        script: Option<&'static str>,
    },
    /// The same content as JSON.
    Json(serde_json::Value),
    /// 303 to this path.
    Redirect(String),
    /// A document as is (a run's plan, as JSON).
    Raw {
        /// Content type.
        content_type: &'static str,
        /// The document.
        body: String,
    },
}

/// A value as a JSON page.
pub fn json_page<T: Serialize>(v: &T) -> Result<Page, PageError> {
    serde_json::to_value(v)
        .map(Page::Json)
        .map_err(|e| PageError::Internal(format!("the page's JSON: {e}")))
}

/// What a page reads: the store, the index of plans and hosts, the token.
pub struct Ctx<'a> {
    /// The store.
    pub store: &'a Store,
    /// Plans and hosts per run.
    pub index: &'a Index,
    /// The token writes need; `None`: writes are off.
    pub token: Option<&'a str>,
}

/// Now, RFC 3339 UTC to the second, as the store keeps times.
pub fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (Howard Hinnant's civil date).
pub fn rfc3339(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Whether two tokens are equal, in time independent of where they differ.
fn same_token(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The pages over one store: everything but the socket, so a test or a bench renders a
/// page without HTTP.
pub struct App {
    store: Store,
    token: Option<String>,
    index: Index,
}

impl App {
    /// The pages over `store`; writes need `token` (none: read-only).
    pub fn new(store: Store, token: Option<String>) -> App {
        App {
            store,
            token,
            index: Index::default(),
        }
    }

    /// The store shown.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Reads every run's plan and host once, so the first page is as quick as the rest.
    pub fn warm(&self) -> Result<(), StoreError> {
        self.index.refresh(&self.store)
    }

    /// Checks a posted token against the server's; the 403 says what is missing.
    pub fn check_token(&self, given: Option<&str>) -> Result<(), PageError> {
        match (&self.token, given) {
            (None, _) => Err(PageError::Forbidden(
                "this server is read-only: it was started without a token; restart it with \
                 --token T (or PLUMB_SERVE_TOKEN) to change triage states, or use `plumb \
                 changes set`"
                    .into(),
            )),
            (Some(_), None) => Err(PageError::Forbidden(
                "changing a triage state needs the server's token: fill in the token field".into(),
            )),
            (Some(t), Some(g)) if same_token(t, g) => Ok(()),
            (Some(_), Some(_)) => Err(PageError::Forbidden(
                "wrong token: give the token the server was started with".into(),
            )),
        }
    }

    /// Answers one request.
    pub fn handle(&self, req: &Request) -> Reply {
        let (path, query) = req.url.split_once('?').unwrap_or((&req.url, ""));
        let json = Params::parse(query)
            .ok()
            .and_then(|p| p.json().ok())
            .unwrap_or(false);
        match self.route(&req.method, path, query, &req.body) {
            Ok(page) => self.reply(page, path, query),
            Err(e) => self.error(&e, json),
        }
    }

    fn route(&self, method: &str, path: &str, query: &str, body: &str) -> Result<Page, PageError> {
        let p = Params::parse(query)?;
        let json = p.json()?;
        self.index.refresh(&self.store)?;
        let cx = Ctx {
            store: &self.store,
            index: &self.index,
            token: self.token.as_deref(),
        };
        let path = match path.trim_end_matches('/') {
            "" => "/",
            p => p,
        };
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let get = method == "GET" || method == "HEAD";
        match (segs.as_slice(), get) {
            ([""] | ["runs"], true) => crate::runs::get(&cx, &p, json),
            (["run", id], true) => crate::run::get(&cx, &p, parse_id(id, "run")?, json),
            (["run", id, "plan"], true) => crate::run::plan(&cx, parse_id(id, "run")?),
            (["compare"], true) => crate::compare::get(&cx, &p, json),
            (["history"], true) => crate::history::get(&cx, &p, json),
            (["changes"], true) => crate::changes::get(&cx, &p, json),
            (["bisect", id], true) => crate::bisect::get(&cx, &p, parse_id(id, "bisect")?, json),
            (["changes"], false) if method == "POST" => {
                let form = Params::parse(body)?;
                self.check_token(form.get("token"))?;
                crate::changes::post(&cx, &form, json)
            }
            (["hosts"], true) => crate::hosts::list(&cx, &p, json),
            (["host", name], true) => {
                let name = Params::parse(&format!("host={name}"))?
                    .text("host")
                    .ok_or_else(|| PageError::NotFound("no host named in the path".into()))?;
                crate::hosts::one(&cx, &p, &name, json)
            }
            (
                [""]
                | ["runs"]
                | ["run", ..]
                | ["compare"]
                | ["history"]
                | ["changes"]
                | ["bisect", _]
                | ["hosts"]
                | ["host", _],
                false,
            ) => Err(PageError::Method(format!(
                "{method} {path}: this page is read with GET{}",
                if path == "/changes" {
                    " and written with POST"
                } else {
                    ""
                }
            ))),
            _ => Err(PageError::NotFound(format!(
                "no page at {path}; the pages are /runs, /run/ID, /compare, /history, /changes, \
                 /bisect/ID and /hosts"
            ))),
        }
    }

    fn reply(&self, page: Page, path: &str, query: &str) -> Reply {
        match page {
            Page::Html {
                title,
                nav,
                body,
                refresh,
                script,
            } => {
                let p = Params::parse(query).unwrap_or_default();
                let chrome = Chrome {
                    title: &title,
                    nav,
                    store: self.store.shown(),
                    refresh,
                    json: Some(format!("{path}?{}", p.with("format", "json"))),
                };
                Reply {
                    status: 200,
                    content_type: "text/html; charset=utf-8",
                    body: layout::page(&chrome, body, script),
                    location: None,
                }
            }
            Page::Json(v) => Reply {
                status: 200,
                content_type: "application/json",
                body: serde_json::to_string_pretty(&v).unwrap_or_else(|e| {
                    format!(
                        "{{\"error\": \"the page's JSON: {}\"}}",
                        e.to_string().replace('"', "'")
                    )
                }),
                location: None,
            },
            Page::Redirect(to) => Reply {
                status: 303,
                content_type: "text/plain; charset=utf-8",
                body: format!("see {to}\n"),
                location: Some(to),
            },
            Page::Raw { content_type, body } => Reply {
                status: 200,
                content_type,
                body,
                location: None,
            },
        }
    }

    /// The error page (or JSON) of a failed request.
    fn error(&self, e: &PageError, json: bool) -> Reply {
        let status = e.status();
        let message = e.message();
        if json {
            return Reply {
                status,
                content_type: "application/json",
                body: serde_json::json!({"status": status, "error": message}).to_string(),
                location: None,
            };
        }
        let title = match status {
            400 => "Bad request",
            403 => "Not allowed",
            404 => "Not found",
            405 => "Method not allowed",
            413 => "Too large",
            _ => "Server error",
        };
        let body = html! {
            h1 { (status) " " (title) }
            div.error #error { (message) }
            p { a href="/runs" { "back to the runs" } }
        };
        let chrome = Chrome {
            title,
            nav: Nav::None,
            store: self.store.shown(),
            refresh: None,
            json: None,
        };
        Reply {
            status,
            content_type: "text/html; charset=utf-8",
            body: layout::page(&chrome, body, None),
            location: None,
        }
    }
}

/// A path's id segment.
fn parse_id(s: &str, what: &str) -> Result<i64, PageError> {
    s.parse::<i64>().map_err(|_| {
        PageError::NotFound(format!(
            "/{what}/{s}: not a {what} id; give a number, e.g. /{what}/12"
        ))
    })
}

/// Checks the options before a store is opened: `--listen` parses, and an address
/// other machines reach has a token.
pub fn check_options(opts: &ServeOptions) -> Result<(), ServeError> {
    listen_addr(opts).map(|_| ())
}

/// Reads `--listen`, refusing a non-loopback address without a token.
pub fn listen_addr(opts: &ServeOptions) -> Result<SocketAddr, ServeError> {
    use std::net::ToSocketAddrs as _;
    let addr = opts
        .listen
        .to_socket_addrs()
        .map_err(|e| ServeError::BadListen {
            listen: opts.listen.clone(),
            why: e.to_string(),
        })?
        .next()
        .ok_or_else(|| ServeError::BadListen {
            listen: opts.listen.clone(),
            why: "it names no address".into(),
        })?;
    match &opts.token {
        Some(t) if t.is_empty() => return Err(ServeError::EmptyToken),
        None if !addr.ip().is_loopback() => return Err(ServeError::NoToken { addr }),
        _ => {}
    }
    Ok(addr)
}

/// Stops a running [`Server`] from another thread (tests, a signal handler).
#[derive(Clone)]
pub struct Stopper {
    http: Arc<tiny_http::Server>,
    stop: Arc<AtomicBool>,
}

impl Stopper {
    /// Ends [`Server::run`] after the request it is answering, if any.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.http.unblock();
    }
}

/// A listening server: bound at [`Server::bind`] (so a port in use is an error before
/// anything is printed), serving at [`Server::run`].
pub struct Server {
    http: Arc<tiny_http::Server>,
    app: App,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Binds `opts.listen` (port 0: any free port) over `store`, and reads the store's
    /// plans and hosts once.
    pub fn bind(store: Store, opts: &ServeOptions) -> Result<Server, ServeError> {
        let want = listen_addr(opts)?;
        let listener = TcpListener::bind(want).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AddrInUse {
                ServeError::InUse { addr: want }
            } else {
                ServeError::Listen { addr: want, source }
            }
        })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ServeError::Listen { addr: want, source })?;
        let http =
            tiny_http::Server::from_listener(listener, None).map_err(|e| ServeError::Http {
                addr,
                why: e.to_string(),
            })?;
        let app = App::new(store, opts.token.clone());
        app.warm()?;
        Ok(Server {
            http: Arc::new(http),
            app,
            addr,
            stop: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The address bound (the port chosen when asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL it serves, for the start-up line and tests.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// A handle that stops [`Server::run`].
    pub fn stopper(&self) -> Stopper {
        Stopper {
            http: self.http.clone(),
            stop: self.stop.clone(),
        }
    }

    /// Answers requests one after another until stopped, telling `log` of each answer
    /// (with its server-side time) and each failed connection: the library prints
    /// nothing, the binary decides where a request log goes.
    pub fn run(self, mut log: impl FnMut(&Event)) -> Result<(), ServeError> {
        loop {
            let mut rq = match self.http.recv() {
                Ok(rq) => rq,
                Err(e) => {
                    if self.stop.load(Ordering::SeqCst) {
                        return Ok(());
                    }
                    log(&Event::ConnectionFailed(e.to_string()));
                    continue;
                }
            };
            let t0 = Instant::now();
            let method = rq.method().as_str().to_string();
            let url = rq.url().to_string();
            let reply = match read_body(&mut rq) {
                Ok(body) => self.app.handle(&Request {
                    method: method.clone(),
                    url: url.clone(),
                    body,
                }),
                Err(e) => self.app.error(&e, false),
            };
            let status = reply.status;
            let bytes = reply.body.len();
            let sent = rq
                .respond(response(reply, method == "HEAD"))
                .err()
                .map(|e| e.to_string());
            log(&Event::Answered {
                method,
                url,
                status,
                bytes,
                elapsed: t0.elapsed(),
                unsent: sent,
            });
            if self.stop.load(Ordering::SeqCst) {
                return Ok(());
            }
        }
    }

    /// The store's name as a page may show it (its password hidden).
    pub fn store_shown(&self) -> &str {
        self.app.store().shown()
    }
}

/// What happened while serving, for the request log the binary keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A request was answered.
    Answered {
        /// GET, POST, HEAD.
        method: String,
        /// The path and query asked for.
        url: String,
        /// The HTTP status answered.
        status: u16,
        /// The body's bytes.
        bytes: usize,
        /// Server-side time, from the request read to the answer sent.
        elapsed: std::time::Duration,
        /// Why the answer could not be sent (the client went away), if it was not.
        unsent: Option<String>,
    },
    /// A connection failed before a request was read.
    ConnectionFailed(String),
}

impl std::fmt::Display for Event {
    /// One request-log line: `GET /runs 200 5120 B 3.1 ms`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Answered {
                method,
                url,
                status,
                bytes,
                elapsed,
                unsent,
            } => {
                write!(
                    f,
                    "{method} {url} {status} {bytes} B {:.1} ms",
                    elapsed.as_secs_f64() * 1e3
                )?;
                if let Some(e) = unsent {
                    write!(f, " (not sent: {e})")?;
                }
                Ok(())
            }
            Event::ConnectionFailed(e) => write!(f, "a connection failed: {e}"),
        }
    }
}

/// A request's body, refused above [`MAX_BODY`] or when not UTF-8.
fn read_body(rq: &mut tiny_http::Request) -> Result<String, PageError> {
    let mut buf = Vec::new();
    rq.as_reader()
        .take(MAX_BODY + 1)
        .read_to_end(&mut buf)
        .map_err(|e| PageError::Internal(format!("reading the request's body: {e}")))?;
    if buf.len() as u64 > MAX_BODY {
        return Err(PageError::TooLarge);
    }
    String::from_utf8(buf).map_err(|_| {
        PageError::Bad(Bad {
            param: "body".into(),
            why: "the posted form is not UTF-8; post it as UTF-8 form-urlencoded".into(),
        })
    })
}

fn header(name: &str, value: &str) -> Option<tiny_http::Header> {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// The HTTP answer, with headers that keep a page from being framed, sniffed or from
/// loading anything from elsewhere.
fn response(r: Reply, head: bool) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let body = if head {
        Vec::new()
    } else {
        r.body.into_bytes()
    };
    let mut resp = tiny_http::Response::from_data(body).with_status_code(r.status);
    let mut headers = vec![
        header("Content-Type", r.content_type),
        header("X-Content-Type-Options", "nosniff"),
        header("X-Frame-Options", "DENY"),
        header("Referrer-Policy", "no-referrer"),
        header(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
             img-src data:; frame-src 'self'; form-action 'self'; frame-ancestors 'none'",
        ),
        header("Cache-Control", "no-store"),
    ];
    if let Some(to) = &r.location {
        headers.push(header("Location", to));
    }
    for h in headers.into_iter().flatten() {
        resp.add_header(h);
    }
    resp
}

/// Opens the store a server reads: a file that must exist (serving an empty new store
/// by a typo helps nobody) or a PostgreSQL URL; errors name it with the password hidden.
pub fn open_store(path: &std::path::Path) -> Result<Store, ServeError> {
    Store::check_path(path)?;
    if !path.to_string_lossy().contains("://") && !path.exists() {
        return Err(ServeError::NoStore {
            store: path.display().to_string(),
        });
    }
    Ok(Store::open(path)?)
}
