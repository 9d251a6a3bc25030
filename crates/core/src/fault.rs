//! What faults injected inside a measured step cost, as stored with the step: one row
//! per fault, beside the steady state around them. A single worst latency hides how
//! long clients could not work and how the system came back, so each fault keeps its
//! outage, its time to the first success and to 90% of the rate before it, latency in
//! its window, and the recovery's phases as the server logged them. Several faults of
//! one step give a distribution, not one maximum.

use serde::{Deserialize, Serialize};

/// A step's faults and the steady state they are read against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultReport {
    /// An op slower than this (service time, seconds) counted as failed.
    pub timeout_s: f64,
    /// The seconds outside every fault's window.
    pub steady: SteadyState,
    /// Each fault, in time order.
    pub faults: Vec<FaultFigures>,
}

/// The step outside every fault's window: what "back to normal" means.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SteadyState {
    /// Whole seconds counted.
    pub secs: f64,
    /// Ops per second over them.
    pub ops_sec: f64,
    /// Response time p99 over them, µs.
    pub p99_us: Option<f64>,
    /// The largest response time, µs.
    pub pmax_us: Option<f64>,
}

/// One fault and what the clients saw through it. Times are seconds from the fault's
/// injection; `None` where it never happened before the next fault or the step's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultFigures {
    /// What was done (`kill`, `restart`, `sigstop:5s`).
    pub kind: String,
    /// When, seconds into the measured window.
    pub at_s: f64,
    /// The injector's own account: when the server answered again (a kill's or a
    /// restart's start returned, a stop's continue was sent).
    pub back_s: Option<f64>,
    /// What went wrong injecting or bringing it back, if anything.
    pub error: Option<String>,
    /// Time during which operations failed or exceeded the timeout: from the fault to
    /// the start of the first op started after it that succeeded at its first try
    /// within the timeout.
    pub outage_s: Option<f64>,
    /// From the fault to the first op, started after it, that completed successfully
    /// (retries and all).
    pub first_success_s: Option<f64>,
    /// From the fault to the start of the first second (after the first success) that
    /// completed 90% of the ops per second of the stretch before the fault.
    pub recovered_90_s: Option<f64>,
    /// Ops per second over the stretch before the fault (up to 10 s, after the previous
    /// fault's window).
    pub before_ops_sec: f64,
    /// The window read for latency: from the fault to the end of its recovered second
    /// (or to the next fault, or the step's end), seconds into the measured window.
    pub window: (f64, f64),
    /// Response time p99 inside the window (whole 1-second intervals it covers), µs.
    pub p99_us: Option<f64>,
    /// The largest response time inside the window, µs.
    pub pmax_us: Option<f64>,
    /// Failed attempts (each retried) that ended in the window.
    pub errors: u64,
    /// Ops in the window whose service time exceeded the timeout.
    pub timeouts: u64,
    /// The recovery as the server logged it, in order.
    pub phases: Vec<RecoveryPhase>,
}

/// One phase of a recovery, from the server's log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecoveryPhase {
    /// What it is (`redo`, `fsync scan`, `ready`).
    pub name: String,
    /// When its line was logged, seconds after the fault (the log's clock, to its
    /// resolution); `None` when the line has no time.
    pub at_s: Option<f64>,
    /// How long the phase took, where the server says (PostgreSQL's redo `elapsed:`).
    pub secs: Option<f64>,
    /// The log line, as written.
    pub line: String,
}
