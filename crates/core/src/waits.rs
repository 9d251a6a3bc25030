//! Where a server's sessions spent the step's time when a sampler looked: the share of
//! active session time by wait class and event (PostgreSQL's `wait_event_type` and
//! `wait_event`, MariaDB's performance_schema instruments), and the server's counters
//! second by second. Throughput and CPU say how much; these say what the sessions were
//! waiting on when they were not on a CPU.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The class a session is in when it waits on nothing the server names: on a CPU, or
/// runnable, or in code without an instrument. PostgreSQL's `wait_event_type` is NULL
/// then; a MariaDB thread has no wait in progress (or only the handler call around an
/// engine's work).
pub const CPU: &str = "CPU";

/// One wait event and how often an active session was seen in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitShare {
    /// The event's class: `CPU`, `Lock`, `LWLock`, `IO`, `IPC`, `Client`, `Timeout`,
    /// `Activity` (PostgreSQL's types), `Mutex`, `RWLock`, `Cond`, `Lock` (MariaDB's
    /// instruments, grouped).
    pub class: String,
    /// The event (`transactionid`, `DataFileRead`, `innodb_data_file` …); `CPU` for the
    /// CPU class.
    pub event: String,
    /// Sessions seen in it, summed over the samples.
    pub samples: u64,
}

impl WaitShare {
    /// How reports name it: `CPU`, or `Class:event` (`Lock:transactionid`).
    pub fn name(&self) -> String {
        if self.class == CPU {
            CPU.to_string()
        } else {
            format!("{}:{}", self.class, self.event)
        }
    }
}

/// One statement's waits: the sessions seen running it, by event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryWaits {
    /// The statement as the server shows it, literals replaced by `?` and cut to 120
    /// characters, so one statement with different values is one row.
    pub query: String,
    /// Sessions seen running it, summed over the samples.
    pub samples: u64,
    /// Its events, most seen first.
    pub events: Vec<WaitShare>,
}

/// A step's wait profile: what its active sessions waited on, sampled from a separate
/// connection over the measured window. A finished wait is never counted: PostgreSQL
/// shows the wait in progress only, and MariaDB's rows are kept only while their
/// `END_EVENT_ID` is NULL (HammerDB counted finished ones as current and reported a
/// third of its time in waits that had ended).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitProfile {
    /// Where the samples come from (`pg_stat_activity`, `performance_schema`).
    pub source: String,
    /// Samples per second asked for.
    pub hz: f64,
    /// Samples taken in the window.
    pub samples: u64,
    /// Seconds the sampler ran (the window's length).
    pub secs: f64,
    /// Active sessions seen, summed over the samples: `sessions / samples` is the mean
    /// number of the step's sessions active in the server.
    pub sessions: u64,
    /// Every event seen, most seen first.
    pub events: Vec<WaitShare>,
    /// The statements seen most, most first (at most 10).
    pub by_query: Vec<QueryWaits>,
    /// The sampler's mean time per sample, µs: one query of the server's views, its
    /// cost to the server beside the step's own.
    pub sample_us: f64,
    /// Why the server's waits are partly unseen (performance_schema off, an
    /// instrument disabled), or why nothing was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl WaitProfile {
    /// Mean sessions of the step active in the server.
    pub fn active_sessions(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sessions as f64 / self.samples as f64
        }
    }

    /// Active session time per query, µs, over a window of `secs` that ran `queries`:
    /// the mean active sessions times the window, shared among its queries.
    pub fn active_us_query(&self, queries: u64) -> Option<f64> {
        (queries > 0 && self.samples > 0)
            .then(|| self.active_sessions() * self.secs * 1e6 / queries as f64)
    }
}

/// A step's active session time per query in each wait event, µs, by `Class:event`
/// (`CPU` for on-CPU time): what compare and history set against the base, as they do
/// the server's counters per query. Empty for steps no sampler watched.
pub fn us_query(s: &crate::StepSummary) -> BTreeMap<String, f64> {
    let Some(w) = s.waits.as_ref().filter(|w| w.sessions > 0) else {
        return BTreeMap::new();
    };
    // Per query on server steps (a load's ops are rows), per op otherwise.
    let queries = s
        .server
        .as_ref()
        .map(|c| c.queries)
        .filter(|q| *q > 0)
        .unwrap_or(s.ops);
    let Some(active) = w.active_us_query(queries) else {
        return BTreeMap::new();
    };
    w.events
        .iter()
        .map(|e| (e.name(), active * e.samples as f64 / w.sessions as f64))
        .collect()
}

/// One second of a server's own counters: each counter's change over the second,
/// per second (`db.blks_read` 1200 is 1200 blocks read in that second).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSecond {
    /// Seconds from the window's start to this second's end (as an interval's `t`).
    pub t: f64,
    /// Counter name to its rate over the second.
    pub rates: BTreeMap<String, f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 sessions active on average over 1 s and 1000 queries: 2000 µs of server time
    /// per query, three quarters of it in a lock.
    #[test]
    fn waits_per_query_share_the_active_time() {
        let s = crate::StepSummary {
            ops: 1000,
            waits: Some(WaitProfile {
                samples: 10,
                secs: 1.0,
                sessions: 20,
                events: vec![
                    WaitShare {
                        class: "Lock".into(),
                        event: "tuple".into(),
                        samples: 15,
                    },
                    WaitShare {
                        class: CPU.into(),
                        event: CPU.into(),
                        samples: 5,
                    },
                ],
                ..Default::default()
            }),
            ..Default::default()
        };
        let w = s.waits.as_ref().unwrap();
        assert_eq!(w.active_sessions(), 2.0);
        let per = us_query(&s);
        assert_eq!(per.get("Lock:tuple"), Some(&1500.0));
        assert_eq!(per.get("CPU"), Some(&500.0));
        assert!(us_query(&crate::StepSummary::default()).is_empty());
    }
}
