//! The server's watcher over a step's window: a thread with a connection of its own
//! that samples what the step's sessions are waiting on (PostgreSQL's
//! `pg_stat_activity`, MariaDB's performance_schema) at a stated rate, and reads the
//! server's counters at every mark of the kernel's sampler, so they come out second by
//! second. It runs beside the clients, never in their loop; its cost is one small query
//! per sample, stated with the profile.

use crate::client::{Endpoint, Protocol, SqlClient, Stmt, Values};
use crate::counters::CounterReader;
use crate::error::SqlError;
use plumb_core::waits::CPU;
use plumb_core::{Interval, QueryWaits, ServerSecond, StepSummary, WaitProfile, WaitShare};
use plumb_runner::kernel::{Gauge, Mark, ServerGauge};
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the sampler is told by the kernel's sampler thread.
enum Cmd {
    /// A mark was taken: read the counters now.
    Mark,
    /// The window opened: start sampling.
    Open,
    /// The window closed (its last mark was sent before): stop and hand back.
    Close,
}

/// What the watcher gathered over a step.
#[derive(Debug, Default)]
pub struct Watched {
    /// The wait profile; `None` when no sample was asked for.
    pub waits: Option<WaitProfile>,
    /// The counters at each mark, in order (empty where a read failed).
    pub marks: Vec<BTreeMap<String, f64>>,
}

/// The watcher's thread and how to reach it.
pub struct Watcher {
    tx: mpsc::Sender<Cmd>,
    handle: Option<JoinHandle<Watched>>,
}

impl Watcher {
    /// Connects (before the window, so the connection is not the step's) and waits for
    /// the window; `hz` 0 reads the counters at the marks and samples no waits.
    pub fn start(ep: &Endpoint, hz: f64) -> Result<Watcher, SqlError> {
        let mut counters = CounterReader::connect(ep)?;
        let also_mine = counters.session_id();
        let mut sampler = Sampler::new(ep.connect()?, ep.protocol, also_mine)?;
        let (tx, rx) = mpsc::channel();
        let ep = ep.clone();
        let handle = std::thread::Builder::new()
            .name("plumb-waits".into())
            .spawn(move || watch(counters, &ep, &mut sampler, hz, &rx))
            .map_err(|e| SqlError::Server {
                what: format!("cannot start the wait sampler's thread: {e}"),
                log: Vec::new(),
            })?;
        Ok(Watcher {
            tx,
            handle: Some(handle),
        })
    }

    /// A mark was taken: the counters are read now.
    pub fn mark(&self) {
        let _ = self.tx.send(Cmd::Mark);
    }

    /// The window opened.
    pub fn open(&self) {
        let _ = self.tx.send(Cmd::Open);
    }

    /// The window closed: stops the thread and returns what it gathered.
    pub fn close(&mut self) -> Watched {
        let _ = self.tx.send(Cmd::Close);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.close();
        }
    }
}

/// The watcher's loop: counters at each mark; samples every `1/hz` s between Open and
/// Close.
fn watch(
    mut counters: CounterReader,
    ep: &Endpoint,
    sampler: &mut Sampler,
    hz: f64,
    rx: &mpsc::Receiver<Cmd>,
) -> Watched {
    let mut out = Watched::default();
    let mut tally = Tally::default();
    let every = (hz > 0.0).then(|| Duration::from_secs_f64(1.0 / hz));
    let mut opened: Option<Instant> = None;
    let mut next = Instant::now();
    loop {
        let cmd = match (opened, every) {
            (Some(_), Some(every)) => {
                let now = Instant::now();
                if now >= next {
                    let t = Instant::now();
                    match sampler.sample() {
                        Ok(seen) => tally.add(&seen, t.elapsed()),
                        Err(e) => tally.failed = Some(e.to_string()),
                    }
                    next += every;
                    // Behind by more than a sample (a slow server): skip, never burst.
                    if next < Instant::now() {
                        next = Instant::now() + every;
                    }
                    continue;
                }
                match rx.recv_timeout(next - now) {
                    Ok(c) => c,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            _ => match rx.recv() {
                Ok(c) => c,
                Err(_) => break,
            },
        };
        match cmd {
            Cmd::Mark => {
                // A server restarted inside the step (a fault) broke the connection:
                // the counters go on from a new one (rates across the restart, whose
                // counters went back to zero, are left out by `seconds`).
                let read = counters.read().or_else(|_| {
                    counters = CounterReader::connect(ep)?;
                    counters.read()
                });
                out.marks.push(read.unwrap_or_default())
            }
            Cmd::Open => {
                opened = Some(Instant::now());
                next = Instant::now();
            }
            Cmd::Close => break,
        }
    }
    if every.is_some() {
        let secs = opened.map_or(0.0, |o| o.elapsed().as_secs_f64());
        out.waits = Some(tally.profile(sampler, hz, secs));
    }
    out
}

/// A server's gauge with the watcher beside it, for every family that drives a
/// server (the SQL steps, the insert benchmark): the server's processes and perf
/// counters over the window ([`ServerGauge`]), and the watcher, told of every mark (it
/// reads the server's counters there) and of the window's ends (it samples waits in
/// between).
pub struct WatchedGauge<'a> {
    /// The server's processes, perf counters and profile.
    pub server: ServerGauge<'a>,
    watcher: Option<Watcher>,
    /// Why there is no watcher (its connection was refused), said with the profile.
    refused: Option<String>,
    hz: f64,
    gathered: Watched,
}

impl<'a> WatchedGauge<'a> {
    /// `server`'s gauge with a watcher on `endpoint` (none for an embedded engine)
    /// sampling waits `hz` times a second. It connects now, before the window, as the
    /// clients do; a server that refuses it loses the waits and the per-second
    /// counters, not the step.
    pub fn new(server: ServerGauge<'a>, endpoint: Option<&Endpoint>, hz: f64) -> Self {
        let (watcher, refused) = match endpoint.map(|ep| Watcher::start(ep, hz)) {
            Some(Ok(w)) => (Some(w), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        WatchedGauge {
            server,
            watcher,
            refused,
            hz,
            gathered: Watched::default(),
        }
    }

    /// The wait profile and the server's counters second by second over `intervals`
    /// (the step's, from the same marks); `None` and empty without a watcher.
    fn watched(&mut self, intervals: &[Interval]) -> (Option<WaitProfile>, Vec<ServerSecond>) {
        let ends: Vec<f64> = intervals.iter().map(|i| i.t).collect();
        let lengths: Vec<f64> = intervals.iter().map(|i| i.secs).collect();
        let per_second = seconds(&self.gathered.marks, &ends, &lengths);
        let waits = self.gathered.waits.take().or_else(|| {
            self.refused.take().map(|e| WaitProfile {
                unavailable: Some(format!("no sampler connection: {e}")),
                hz: self.hz,
                ..Default::default()
            })
        });
        (waits, per_second)
    }

    /// `base`, the kernel's figures of the window `first`..`last`, with what the
    /// server adds to every family's summary: the host's noise with the server's CPU
    /// not counted as outside, the wait profile and the server's counters second by
    /// second over `intervals`. Written once here so the SQL steps and the insert
    /// benchmark cannot drift apart on what a server's step reports.
    pub fn beside<X: Copy>(
        &mut self,
        base: StepSummary,
        (first, last): (&Mark<X>, &Mark<X>),
        intervals: &[Interval],
    ) -> StepSummary {
        let (waits, server_seconds) = self.watched(intervals);
        let noise = self.server.tree.noise(first, last, true);
        StepSummary {
            steal_pct: noise.steal_pct,
            outside_cpu_pct: noise.outside_cpu_pct,
            waits,
            server_seconds,
            ..base
        }
    }
}

impl Gauge for WatchedGauge<'_> {
    type Reading = ();

    fn read(&mut self) {
        self.server.read();
        if let Some(w) = &self.watcher {
            w.mark();
        }
    }

    fn opened(&mut self) {
        self.server.opened();
        if let Some(w) = &self.watcher {
            w.open();
        }
    }

    fn closed(&mut self) {
        if let Some(w) = &mut self.watcher {
            self.gathered = w.close();
        }
        self.server.closed();
    }
}

/// One active session as a sample saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// Wait class ([`CPU`] when none).
    pub class: String,
    /// Wait event ([`CPU`] when none).
    pub event: String,
    /// The statement, normalised ([`normalise`]).
    pub query: String,
}

/// The samples summed.
#[derive(Default)]
struct Tally {
    samples: u64,
    sessions: u64,
    events: HashMap<(String, String), u64>,
    queries: HashMap<String, HashMap<(String, String), u64>>,
    spent: Duration,
    failed: Option<String>,
}

impl Tally {
    fn add(&mut self, seen: &[Seen], took: Duration) {
        self.samples += 1;
        self.spent += took;
        for s in seen {
            self.sessions += 1;
            let key = (s.class.clone(), s.event.clone());
            *self.events.entry(key.clone()).or_default() += 1;
            *self
                .queries
                .entry(s.query.clone())
                .or_default()
                .entry(key)
                .or_default() += 1;
        }
    }

    fn profile(self, sampler: &Sampler, hz: f64, secs: f64) -> WaitProfile {
        let shares = |m: HashMap<(String, String), u64>| {
            let mut v: Vec<WaitShare> = m
                .into_iter()
                .map(|((class, event), samples)| WaitShare {
                    class,
                    event,
                    samples,
                })
                .collect();
            v.sort_by(|a, b| {
                b.samples
                    .cmp(&a.samples)
                    .then_with(|| (&a.class, &a.event).cmp(&(&b.class, &b.event)))
            });
            v
        };
        let mut by_query: Vec<QueryWaits> = self
            .queries
            .into_iter()
            .map(|(query, m)| QueryWaits {
                query,
                samples: m.values().sum(),
                events: shares(m),
            })
            .collect();
        by_query.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.query.cmp(&b.query)));
        by_query.truncate(10);
        let unavailable = match (&self.failed, &sampler.partial) {
            (Some(e), _) => Some(format!("a sample failed: {e}")),
            (None, Some(p)) => Some(p.clone()),
            (None, None) => None,
        };
        WaitProfile {
            source: sampler.source().to_string(),
            hz,
            samples: self.samples,
            secs,
            sessions: self.sessions,
            events: shares(self.events),
            by_query,
            sample_us: if self.samples > 0 {
                self.spent.as_secs_f64() * 1e6 / self.samples as f64
            } else {
                0.0
            },
            unavailable,
        }
    }
}

/// How the server is asked.
enum Views {
    /// PostgreSQL's pg_stat_activity, sessions named `plumb` (the step's clients).
    Postgres,
    /// MariaDB/MySQL's performance_schema with the current waits consumer on.
    PerformanceSchema,
    /// performance_schema off: the process list and InnoDB's lock waits only.
    ProcessList,
}

/// One connection that samples the server's sessions with one statement prepared
/// once, its rows read into memory kept from sample to sample.
pub struct Sampler {
    client: Box<dyn SqlClient>,
    views: Views,
    stmt: Stmt,
    values: Values,
    /// What the views cannot show on this server, said with the profile.
    partial: Option<String>,
}

/// PostgreSQL: the step's active sessions (its clients are named `plumb`; the sampler
/// itself is left out by its pid) and the event each is in now, from the function
/// under pg_stat_activity (the view joins the catalogs for names plumb does not need).
const PG_SAMPLE: &str =
    "SELECT coalesce(wait_event_type, 'CPU') AS c, coalesce(wait_event, 'CPU') AS e, \
     left(query, 400) AS q FROM pg_stat_get_activity(NULL) \
     WHERE state = 'active' AND backend_type = 'client backend' AND application_name = 'plumb' \
     AND datid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
     AND pid NOT IN (pg_backend_pid(), {mine})";

/// MariaDB/MySQL: each session running a statement, by the process list's command
/// (performance_schema's copy of it stays `Query` while a MariaDB thread waits for
/// its client's next statement), its thread's newest wait row (finished or not:
/// [`mysql_seen`] keeps only one in progress) and whether InnoDB has it waiting for a
/// row lock (an InnoDB row lock wait shows in performance_schema only as the handler
/// call around it).
const PS_SAMPLE: &str = "SELECT p.ID AS tid, w.EVENT_ID AS eid, w.EVENT_NAME AS ev, \
     w.END_EVENT_ID AS fin, x.trx_state AS trx, left(p.INFO, 400) AS q \
     FROM information_schema.PROCESSLIST p \
     JOIN performance_schema.threads t ON t.PROCESSLIST_ID = p.ID \
     LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID \
     LEFT JOIN information_schema.INNODB_TRX x ON x.trx_mysql_thread_id = p.ID \
       AND x.trx_state = 'LOCK WAIT' \
     WHERE p.COMMAND IN ('Query', 'Execute') AND p.ID NOT IN (CONNECTION_ID(), {mine}) \
     ORDER BY p.ID, w.EVENT_ID";

/// MariaDB/MySQL without performance_schema: the process list and InnoDB's lock waits.
const PL_SAMPLE: &str =
    "SELECT p.ID AS tid, NULL AS eid, NULL AS ev, NULL AS fin, x.trx_state AS trx, \
     left(p.INFO, 400) AS q FROM information_schema.PROCESSLIST p \
     LEFT JOIN information_schema.INNODB_TRX x ON x.trx_mysql_thread_id = p.ID \
       AND x.trx_state = 'LOCK WAIT' \
     WHERE p.COMMAND IN ('Query', 'Execute') AND p.ID NOT IN (CONNECTION_ID(), {mine}) \
     ORDER BY p.ID";

impl Sampler {
    /// A sampler on `client`; on MariaDB/MySQL it checks what performance_schema
    /// records and falls back to the process list when it is off.
    /// `also_mine` is plumb's other session beside it (the watcher's counters
    /// connection), left out of the samples as the sampler's own is.
    pub fn new(
        mut client: Box<dyn SqlClient>,
        protocol: Protocol,
        also_mine: Option<i64>,
    ) -> Result<Sampler, SqlError> {
        let (views, partial) = match protocol {
            Protocol::Postgres => (Views::Postgres, None),
            Protocol::MySql => {
                let on = first(client.rows("SELECT @@performance_schema AS on_")?);
                if on.as_deref() != Some("1") {
                    (
                        Views::ProcessList,
                        Some(
                            "performance_schema is off: only InnoDB's row-lock waits are told \
                             from CPU (set performance_schema=ON and \
                             performance-schema-consumer-events-waits-current=ON; plumb's \
                             managed servers do)"
                                .to_string(),
                        ),
                    )
                } else {
                    let consumer = first(client.rows(
                        "SELECT ENABLED FROM performance_schema.setup_consumers \
                         WHERE NAME = 'events_waits_current'",
                    )?);
                    let partial = (consumer.as_deref() != Some("YES")).then(|| {
                        "performance_schema's events_waits_current consumer is off: only \
                         InnoDB's row-lock waits are told from CPU (UPDATE \
                         performance_schema.setup_consumers SET ENABLED='YES' WHERE \
                         NAME='events_waits_current')"
                            .to_string()
                    });
                    (Views::PerformanceSchema, partial)
                }
            }
        };
        let sql = match views {
            Views::Postgres => PG_SAMPLE,
            Views::PerformanceSchema => PS_SAMPLE,
            Views::ProcessList => PL_SAMPLE,
        };
        // Ids are integers the server gave: nothing to quote.
        let sql = sql.replace("{mine}", &also_mine.unwrap_or(0).to_string());
        let stmt = client.prepare_native(&sql)?;
        Ok(Sampler {
            client,
            views,
            stmt,
            values: Values::new(),
            partial,
        })
    }

    /// Where the samples come from.
    pub fn source(&self) -> &'static str {
        match self.views {
            Views::Postgres => "pg_stat_activity",
            Views::PerformanceSchema => "performance_schema.events_waits_current",
            Views::ProcessList => "information_schema.PROCESSLIST",
        }
    }

    /// The step's active sessions now.
    pub fn sample(&mut self) -> Result<Vec<Seen>, SqlError> {
        self.client.fetch(self.stmt, &[], &mut self.values)?;
        let v = &self.values;
        let rows: Vec<Vec<Option<String>>> = (0..v.rows())
            .map(|r| {
                (0..v.cols())
                    .map(|c| v.get(r, c).map(str::to_string))
                    .collect()
            })
            .collect();
        Ok(match self.views {
            Views::Postgres => rows
                .into_iter()
                .map(|r| {
                    let col = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                    Seen {
                        class: col(0),
                        event: col(1),
                        query: normalise(&col(2)),
                    }
                })
                .collect(),
            Views::PerformanceSchema | Views::ProcessList => mysql_seen(&rows),
        })
    }
}

fn first(rows: crate::client::TextRows) -> Option<String> {
    rows.into_iter().next()?.into_iter().next()?.1
}

/// One session per thread from [`PS_SAMPLE`]'s rows (thread, event id, event name, end
/// event id, InnoDB trx state, statement; NULL as `None`), ordered by thread and event:
/// the thread's newest wait still in progress (`END_EVENT_ID` NULL) is its event; a
/// finished one is not (the thread has moved on, to a CPU or to something
/// uninstrumented); an InnoDB lock wait is `Lock:innodb_row_lock` whatever the
/// instruments show.
pub fn mysql_seen(rows: &[Vec<Option<String>>]) -> Vec<Seen> {
    let mut out: Vec<Seen> = Vec::new();
    let mut last_tid: Option<String> = None;
    for r in rows {
        let col = |i: usize| r.get(i).cloned().flatten();
        let tid = col(0);
        let new_thread = tid != last_tid;
        last_tid = tid;
        if new_thread {
            out.push(Seen {
                class: CPU.into(),
                event: CPU.into(),
                query: normalise(&col(5).unwrap_or_default()),
            });
        }
        let s = out.last_mut().expect("pushed above");
        if col(4).as_deref() == Some("LOCK WAIT") {
            s.class = "Lock".into();
            s.event = "innodb_row_lock".into();
            continue;
        }
        if s.class == "Lock" && s.event == "innodb_row_lock" {
            continue;
        }
        // In progress: the newest such row (rows come in event order) wins. Finished,
        // or no row: on a CPU or somewhere uninstrumented.
        if let (Some(name), None) = (col(2), col(3)) {
            let (class, event) = mysql_class(&name);
            s.class = class.into();
            s.event = event;
        }
    }
    // A session waiting for its client's next statement is not in one (the process
    // list still says Query for a moment after a statement ends).
    out.retain(|s| !(s.class == "Client" && s.event == "idle"));
    out
}

/// A performance_schema instrument's class and event: `wait/io/file/innodb/
/// innodb_data_file` is `IO` `innodb_data_file`, `wait/synch/mutex/innodb/lock_mutex`
/// `Mutex` `innodb/lock_mutex`; the handler call around an engine's work
/// (`wait/io/table/sql/handler`) is time in the engine with no wait named, `CPU`.
pub fn mysql_class(name: &str) -> (&'static str, String) {
    let parts: Vec<&str> = name.split('/').collect();
    let tail = |from: usize| parts.get(from..).map(|p| p.join("/")).unwrap_or_default();
    let last = parts.last().copied().unwrap_or(name).to_string();
    match parts.get(1..3) {
        Some(["io", "file"]) => ("IO", last),
        Some(["io", "socket"]) => ("Client", last),
        Some(["io", "table"]) => (CPU, CPU.to_string()),
        // Waiting for the client's next statement (the instrument has no class path).
        _ if name == "idle" => ("Client", "idle".to_string()),
        Some(["lock", "table"]) => ("Lock", "table".to_string()),
        Some(["lock", "metadata"]) => ("Lock", "metadata".to_string()),
        Some(["synch", "mutex"]) => ("Mutex", tail(3)),
        Some(["synch", "rwlock"]) | Some(["synch", "sxlock"]) | Some(["synch", "prlock"]) => {
            ("RWLock", tail(3))
        }
        Some(["synch", "cond"]) if last == "Item_func_sleep::cond" => ("Timeout", "sleep".into()),
        Some(["synch", "cond"]) => ("Cond", tail(3)),
        _ => ("Other", name.to_string()),
    }
}

/// A statement with its literals made `?` (numbers, quoted strings) and cut to 120
/// characters, so one statement with different values counts as one.
pub fn normalise(q: &str) -> String {
    if q.trim().is_empty() {
        // Between statements of one call (a commit's tail), or a command with no text.
        return "(no statement text)".into();
    }
    let mut out = String::with_capacity(q.len().min(160));
    let mut chars = q.chars().peekable();
    let mut prev_word = false;
    while let Some(c) = chars.next() {
        if out.chars().count() >= 120 {
            out.push('…');
            break;
        }
        if c == '\'' {
            while let Some(d) = chars.next() {
                if d == '\'' {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                        continue;
                    }
                    break;
                }
            }
            out.push('?');
            prev_word = false;
        } else if c.is_ascii_digit() && !prev_word {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                chars.next();
            }
            out.push('?');
        } else if c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            prev_word = false;
        } else {
            prev_word = c.is_alphanumeric() || c == '_' || c == '$';
            out.push(c);
        }
    }
    out.trim_end().to_string()
}

/// The counters at the kernel's marks as per-second rates, one [`ServerSecond`] per
/// interval (interval `i` spans marks `i` and `i + 1`, ending at `ends[i]` seconds
/// after the window opened, `secs[i]` long); counters that did not move, went
/// backwards (a reset) or were not read at both marks are left out. An interval under
/// a quarter of a second (the window's last, cut short) is folded into the one before
/// it: a server publishes some counters only every so often (a PostgreSQL backend at
/// most once a second, and when it exits), and over a few milliseconds that lump would
/// read as a rate a hundred times the step's.
pub fn seconds(marks: &[BTreeMap<String, f64>], ends: &[f64], secs: &[f64]) -> Vec<ServerSecond> {
    // (first mark, last mark, end, length) of each span.
    let mut spans: Vec<(usize, usize, f64, f64)> = Vec::new();
    for (i, (&t, &s)) in ends.iter().zip(secs).enumerate() {
        if i + 1 >= marks.len() {
            break;
        }
        match spans.last_mut() {
            Some(last) if s < 0.25 => *last = (last.0, i + 1, t, last.3 + s),
            _ => spans.push((i, i + 1, t, s)),
        }
    }
    spans
        .into_iter()
        .map(|(a, b, t, s)| ServerSecond {
            t,
            rates: marks[b]
                .iter()
                .filter_map(|(k, later)| {
                    let earlier = marks[a].get(k)?;
                    (later > earlier && s > 0.0).then(|| (k.clone(), (later - earlier) / s))
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cols: &[Option<&str>]) -> Vec<Option<String>> {
        cols.iter().map(|v| v.map(str::to_string)).collect()
    }

    /// HammerDB's mistake (#905): a thread whose newest wait has ended is not in it.
    #[test]
    fn a_finished_wait_is_never_counted_as_current() {
        let sleep = "wait/synch/cond/sql/Item_func_sleep::cond";
        let rows = vec![
            // Thread 1 slept and moved on: its row stays, with END_EVENT_ID set.
            row(&[
                Some("1"),
                Some("7"),
                Some(sleep),
                Some("7"),
                None,
                Some("SELECT 1"),
            ]),
            // Thread 2 sleeps now.
            row(&[
                Some("2"),
                Some("9"),
                Some(sleep),
                None,
                None,
                Some("SELECT SLEEP(1)"),
            ]),
            // Thread 3 has no wait row at all.
            row(&[Some("3"), None, None, None, None, Some("SELECT 2")]),
            // Thread 4 waits for its client's next statement: not in one.
            row(&[Some("4"), Some("5"), Some("idle"), None, None, None]),
        ];
        let seen = mysql_seen(&rows);
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!((seen[0].class.as_str(), seen[0].event.as_str()), (CPU, CPU));
        assert_eq!(
            (seen[1].class.as_str(), seen[1].event.as_str()),
            ("Timeout", "sleep")
        );
        assert_eq!((seen[2].class.as_str(), seen[2].event.as_str()), (CPU, CPU));
    }

    /// Nested rows: the newest in progress wins; InnoDB's lock wait wins over all.
    #[test]
    fn the_newest_wait_in_progress_and_innodb_lock_waits_win() {
        let rows = vec![
            row(&[
                Some("1"),
                Some("3"),
                Some("wait/io/table/sql/handler"),
                None,
                None,
                None,
            ]),
            row(&[
                Some("1"),
                Some("4"),
                Some("wait/io/file/innodb/innodb_data_file"),
                None,
                None,
                None,
            ]),
            row(&[
                Some("2"),
                Some("5"),
                Some("wait/io/table/sql/handler"),
                None,
                Some("LOCK WAIT"),
                Some("UPDATE t SET v = v + 1 WHERE id = 1"),
            ]),
        ];
        let seen = mysql_seen(&rows);
        assert_eq!(seen[0].class, "IO");
        assert_eq!(seen[0].event, "innodb_data_file");
        assert_eq!(seen[1].class, "Lock");
        assert_eq!(seen[1].event, "innodb_row_lock");
        assert_eq!(seen[1].query, "UPDATE t SET v = v + ? WHERE id = ?");
    }

    #[test]
    fn instruments_fall_into_classes() {
        assert_eq!(
            mysql_class("wait/synch/mutex/innodb/lock_mutex"),
            ("Mutex", "innodb/lock_mutex".to_string())
        );
        assert_eq!(
            mysql_class("wait/synch/rwlock/sql/MDL_lock::rwlock").0,
            "RWLock"
        );
        assert_eq!(
            mysql_class("wait/io/socket/sql/client_connection").0,
            "Client"
        );
        assert_eq!(mysql_class("wait/lock/table/sql/handler").0, "Lock");
        assert_eq!(mysql_class("idle").0, "Client");
        assert_eq!(mysql_class("wait/what/else").0, "Other");
    }

    #[test]
    fn literals_become_placeholders() {
        assert_eq!(
            normalise("SELECT c FROM sbtest1 WHERE id=42 AND k = 'a''b'"),
            "SELECT c FROM sbtest1 WHERE id=? AND k = ?"
        );
        assert_eq!(
            normalise("SELECT $1 FROM sbtest12"),
            "SELECT $1 FROM sbtest12"
        );
        assert_eq!(normalise("  a \n  b  "), "a b");
        assert!(normalise(&"x".repeat(300)).ends_with('…'));
    }

    #[test]
    fn counters_become_rates_per_interval() {
        let m = |x: f64, y: f64| BTreeMap::from([("a".to_string(), x), ("b".to_string(), y)]);
        let marks = vec![m(0.0, 5.0), m(100.0, 5.0), m(150.0, 1.0), m(450.0, 1.0)];
        let s = seconds(&marks, &[1.0, 1.5, 1.51], &[1.0, 0.5, 0.01]);
        assert_eq!(
            s.len(),
            2,
            "the last 10 ms are folded into the half second before"
        );
        assert_eq!(s[0].rates.get("a"), Some(&100.0));
        assert_eq!(s[0].rates.get("b"), None, "did not move");
        assert_eq!(
            s[1].rates.get("a"),
            Some(&(350.0 / 0.51)),
            "350 over 0.51 s"
        );
        assert_eq!(s[1].rates.get("b"), None, "went backwards");
        assert_eq!(s[1].t, 1.51);
    }
}
