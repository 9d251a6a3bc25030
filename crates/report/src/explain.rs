//! One sentence per step that says where an op's time went, read before the tables:
//! a client's time per query split into plumb's CPU, the server's CPU and each wait it
//! was seen in, and what neither accounts for; an embedded engine's time per op into
//! CPU (plumb's own part named) and time off a CPU, with the device's reads beside.
//! The tables after it are the evidence; this is the answer a newcomer reads first.

use crate::format::sig;
use plumb_core::waits::CPU;
use plumb_core::{Interval, StepSummary};
use plumb_store::{StepRecord, StoredRun};

/// Waits named in a line before the rest are summed as `other`.
const NAMED: usize = 3;

/// The mean threads (clients) a step ran: a threads profile's mean over its seconds,
/// else its configured count.
fn threads(st: &StepRecord, ivs: &[Interval]) -> f64 {
    let shown: Vec<(f64, f64)> = ivs
        .iter()
        .filter_map(|i| i.threads.map(|t| (t, i.secs)))
        .collect();
    let secs: f64 = shown.iter().map(|x| x.1).sum();
    if secs > 0.0 {
        return shown.iter().map(|(t, s)| t * s).sum::<f64>() / secs;
    }
    st.config["threads"].as_f64().unwrap_or(1.0).max(1.0)
}

/// `n` of `what` (`2 clients`, `1 thread`), with a decimal when a threads profile made
/// the mean fractional.
fn count(n: f64, what: &str) -> String {
    if (n - n.round()).abs() < 0.05 {
        let n = n.round();
        format!("{n} {what}{}", if n == 1.0 { "" } else { "s" })
    } else {
        format!("{n:.1} {what}s")
    }
}

/// `x` µs with three significant digits.
fn us(x: f64) -> String {
    sig(Some(x), 3)
}

/// The step's line, `None` for maintenance steps and steps without ops.
pub fn step_line(st: &StepRecord, ivs: &[Interval]) -> Option<String> {
    let s = &st.summary;
    // The insert benchmark's steps run inserters and queriers together, each with a
    // time of its own: its report has their waits and response times apart.
    if st.kind.is_maintenance() || s.ops == 0 || s.secs <= 0.0 || s.ib.is_some() {
        return None;
    }
    let n = threads(st, ivs);
    Some(match &s.server {
        Some(srv) if srv.queries > 0 => server_line(&st.name, s, srv.queries, n),
        _ => engine_line(&st.name, s, n),
    })
}

/// A server step: per query and client, plumb's CPU, the server's time by what it was
/// seen doing, and the rest.
fn server_line(name: &str, s: &StepSummary, queries: u64, n: f64) -> String {
    let per = n * s.secs * 1e6 / queries as f64;
    let clients = count(n, "client");
    let mut parts = Vec::new();
    let mut known = 0.0;
    // plumb's CPU per op is per query, except for a load, whose ops are rows.
    if let Some(c) = s.cpu_us_op {
        let c = c * s.ops as f64 / queries as f64;
        parts.push(format!("{} plumb CPU", us(c)));
        known += c;
    }
    let srv = s.server.as_ref().expect("a server step");
    match s.waits.as_ref().filter(|w| w.samples > 0) {
        Some(w) => {
            let active = w.active_us_query(queries).unwrap_or(0.0);
            known += active;
            let mut other = 0.0;
            for (i, e) in w.events.iter().enumerate() {
                let t = active * e.samples as f64 / w.sessions.max(1) as f64;
                if i < NAMED {
                    parts.push(if e.class == CPU {
                        format!("{} server on CPU", us(t))
                    } else {
                        format!("{} {}", us(t), e.name())
                    });
                } else {
                    other += t;
                }
            }
            if other > 0.0 {
                parts.push(format!("{} other waits", us(other)));
            }
        }
        None => {
            if let Some(c) = srv.cpu_us_query {
                parts.push(format!("{} server CPU (waits not sampled)", us(c)));
                known += c;
            }
        }
    }
    let rest = per - known;
    parts.push(if rest >= 0.0 {
        format!(
            "{} outside a statement (network, socket reads and writes, run queue)",
            us(rest)
        )
    } else {
        // Samples are a sample: on a busy machine they can see the sessions inside a
        // statement more often than they are.
        format!(
            "0 outside a statement (the samples saw {} µs more in the server than the \
             clients spent: sampling error)",
            us(-rest)
        )
    });
    // The sampled CPU is a session's time on a CPU inside a statement; the server's
    // processes spend more (socket IO between statements, background writers).
    let procs = match (&s.waits, srv.cpu_us_query) {
        (Some(w), Some(c)) if w.samples > 0 => {
            format!("; the server's processes' CPU {} µs/query by /proc", us(c))
        }
        _ => String::new(),
    };
    format!(
        "{name}: {} µs/query ({clients}) = {}{procs}",
        us(per),
        parts.join(" + ")
    )
}

/// An embedded engine's step: per op and thread, CPU (plumb's harness named) and the
/// time off a CPU, with device reads per op.
fn engine_line(name: &str, s: &StepSummary, n: f64) -> String {
    let per = n * s.secs * 1e6 / s.ops as f64;
    let threads = count(n, "thread");
    let mut out = format!("{name}: {} µs/op ({threads})", us(per));
    if let Some(cpu) = s.cpu_us_op {
        // CPU per op across every thread, background work included, against a
        // thread's time per op times the threads.
        let cpu_thread = cpu / n;
        let harness = s
            .harness_us_op
            .map(|h| format!(" (plumb {})", us(h / n)))
            .unwrap_or_default();
        // Within 2% is the same time, read twice.
        if cpu_thread > per * 1.02 {
            out.push_str(&format!(
                " < {} CPU{harness}: background threads (flush, compaction) worked beside",
                us(cpu_thread)
            ));
        } else {
            out.push_str(&format!(
                " = {} CPU{harness} + {} off a CPU",
                us(cpu_thread),
                us((per - cpu_thread).max(0.0))
            ));
        }
    }
    match s.rd_op {
        Some(r) if r < 0.001 => out.push_str("; cached (no device reads)"),
        Some(r) => out.push_str(&format!("; {} device reads/op", sig(Some(r), 3))),
        None => {}
    }
    if let Some(p) = &s.engine_perf {
        let times = engine_times(&p.per_op);
        if !times.is_empty() {
            let named: Vec<String> = times
                .iter()
                .take(NAMED)
                .map(|(k, ns)| format!("{} {}", us(ns / 1e3), short(k)))
                .collect();
            out.push_str(&format!("; inside the engine {} µs", named.join(" + ")));
        }
        if let Some(n) = p.per_op.get("block_read_count").filter(|n| **n > 0.0) {
            out.push_str(&format!(", {} block reads/op", sig(Some(*n), 2)));
        }
    }
    out
}

/// An engine's timed counters (`*_time`, `*_nanos`, ns per op), largest first, those
/// that nest others left out so the parts do not count twice: a get's memtable and
/// SST lookups are named, not the get around them.
fn engine_times(per_op: &std::collections::BTreeMap<String, f64>) -> Vec<(&str, f64)> {
    const PARTS: &[&str] = &[
        "get_from_memtable_time",
        "get_from_output_files_time",
        "get_snapshot_time",
        "get_post_process_time",
        "seek_on_memtable_time",
        "seek_child_seek_time",
        "find_next_user_entry_time",
        "write_wal_time",
        "write_memtable_time",
        "write_delay_time",
        "write_pre_and_post_process_time",
        "db_mutex_lock_nanos",
        "db_condition_wait_nanos",
    ];
    let mut v: Vec<(&str, f64)> = PARTS
        .iter()
        .filter_map(|k| per_op.get(*k).filter(|x| **x > 0.0).map(|x| (*k, *x)))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v
}

/// A PerfContext counter's name as a line says it.
fn short(k: &str) -> String {
    match k {
        "get_from_memtable_time" => "memtable".into(),
        "get_from_output_files_time" => "SST files".into(),
        "write_wal_time" => "WAL".into(),
        "write_memtable_time" => "memtable insert".into(),
        "write_delay_time" => "write stall".into(),
        "write_pre_and_post_process_time" => "write queue".into(),
        "db_mutex_lock_nanos" => "DB mutex".into(),
        "db_condition_wait_nanos" => "DB condition wait".into(),
        _ => k
            .trim_end_matches("_time")
            .trim_end_matches("_nanos")
            .replace('_', " "),
    }
}

/// Each key-value step's engine counters per op (RocksDB's PerfContext), a line each:
/// times in µs first, then the counts. `None` when no step has them.
pub fn engine_perf_text(stored: &StoredRun) -> Option<String> {
    let mut out = String::new();
    let mut level = None;
    for (st, _) in &stored.steps {
        let Some(p) = &st.summary.engine_perf else {
            continue;
        };
        if p.per_op.is_empty() {
            if let Some(why) = &p.unavailable {
                out.push_str(&format!("{}: {why}\n", st.name));
            }
            continue;
        }
        level.get_or_insert(p.level);
        let timed = |k: &str| k.ends_with("_time") || k.ends_with("_nanos");
        let mut times: Vec<(&String, &f64)> = p.per_op.iter().filter(|(k, _)| timed(k)).collect();
        times.sort_by(|a, b| b.1.total_cmp(a.1));
        let counts: Vec<String> = p
            .per_op
            .iter()
            .filter(|(k, _)| !timed(k) && !k.ends_with("_byte") && !k.ends_with("_bytes"))
            .map(|(k, v)| format!("{k} {}", sig(Some(*v), 3)))
            .collect();
        let times: Vec<String> = times
            .iter()
            .take(8)
            .map(|(k, v)| format!("{k} {}", sig(Some(**v / 1e3), 3)))
            .collect();
        out.push_str(&format!("{}:", st.name));
        if !times.is_empty() {
            out.push_str(&format!(" µs/op: {}", times.join(" · ")));
        }
        if !counts.is_empty() {
            out.push_str(&format!(
                "{}per op: {}",
                if times.is_empty() { " " } else { "\n    " },
                counts.join(" · ")
            ));
        }
        out.push('\n');
    }
    if out.is_empty() {
        return None;
    }
    Some(format!(
        "inside the engine per op (RocksDB's PerfContext{}; --perf-level 4 adds times)\n{out}",
        level.map(|l| format!(", level {l}")).unwrap_or_default()
    ))
}

/// Every step's line, in run order.
pub fn lines(stored: &StoredRun) -> Vec<String> {
    stored
        .steps
        .iter()
        .filter_map(|(st, ivs)| step_line(st, ivs))
        .collect()
}

/// What each server step's sessions waited on, a line each: the mean sessions active,
/// then each event's share of their time, most first; the statements after it when a
/// step ran more than one. `None` when no step was sampled.
pub fn waits_text(stored: &StoredRun) -> Option<String> {
    let mut out = String::new();
    let mut source = None;
    for (st, _) in &stored.steps {
        let Some(w) = &st.summary.waits else { continue };
        if w.samples == 0 {
            if let Some(why) = &w.unavailable {
                out.push_str(&format!("{}: not sampled: {why}\n", st.name));
            }
            continue;
        }
        source.get_or_insert_with(|| {
            format!(
                "{} at {}/s, {} µs a sample",
                w.source,
                sig(Some(w.hz), 3),
                sig(Some(w.sample_us), 2)
            )
        });
        out.push_str(&format!(
            "{}: {} of the clients active in the server · {}\n",
            st.name,
            sig(Some(w.active_sessions()), 2),
            shares(&w.events, w.sessions)
        ));
        if w.by_query.len() > 1 {
            for q in w.by_query.iter().take(3) {
                out.push_str(&format!(
                    "    {}% {} · {}\n",
                    sig(Some(100.0 * q.samples as f64 / w.sessions.max(1) as f64), 2),
                    q.query,
                    shares(&q.events, q.samples)
                ));
            }
        }
        if let Some(why) = &w.unavailable {
            out.push_str(&format!("    partly unseen: {why}\n"));
        }
    }
    let source = source?;
    Some(format!(
        "waits (share of the step's active session time; {source})\n{out}"
    ))
}

/// `Class:event 49% · CPU 13% · …`, most first, events under 1% summed as other.
fn shares(events: &[plumb_core::WaitShare], total: u64) -> String {
    let total = total.max(1) as f64;
    let mut parts = Vec::new();
    let mut other = 0.0;
    for e in events {
        let pct = 100.0 * e.samples as f64 / total;
        if pct < 1.0 || parts.len() >= 6 {
            other += pct;
            continue;
        }
        parts.push(format!("{} {pct:.0}%", e.name()));
    }
    if other >= 0.5 {
        parts.push(format!("other {other:.0}%"));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::{ServerCosts, WaitProfile, WaitShare};

    fn record(summary: StepSummary) -> StepRecord {
        StepRecord {
            seq: 0,
            name: "update-one".into(),
            kind: plumb_store::Kind::Sql(plumb_workloads::SqlKind::Script),
            status: plumb_core::StepStatus::Ok,
            error: None,
            started_at: String::new(),
            ended_at: String::new(),
            config: serde_json::json!({"threads": 4}),
            summary,
        }
    }

    /// 4 clients × 2 s over 1000 queries is 8000 µs a query; 3 of 4 active, 2/3 of
    /// that in a lock: the parts add up to the whole.
    #[test]
    fn a_server_line_splits_a_query_into_its_parts() {
        let w = WaitProfile {
            source: "pg_stat_activity".into(),
            hz: 20.0,
            samples: 40,
            secs: 2.0,
            sessions: 120,
            events: vec![
                WaitShare {
                    class: "Lock".into(),
                    event: "transactionid".into(),
                    samples: 80,
                },
                WaitShare {
                    class: CPU.into(),
                    event: CPU.into(),
                    samples: 40,
                },
            ],
            ..Default::default()
        };
        let s = StepSummary {
            ops: 1000,
            secs: 2.0,
            cpu_us_op: Some(100.0),
            server: Some(ServerCosts {
                queries: 1000,
                ..Default::default()
            }),
            waits: Some(w),
            ..Default::default()
        };
        let line = step_line(&record(s), &[]).unwrap();
        assert_eq!(
            line,
            "update-one: 8000 µs/query (4 clients) = 100 plumb CPU + 4000 Lock:transactionid \
             + 2000 server on CPU + 1900 outside a statement (network, socket reads and \
             writes, run queue)"
        );
    }
}
