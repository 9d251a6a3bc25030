//! plumb's hardware probes: memory bandwidth and latency, a CPU-bound op rate, and the
//! disk's sequential, random and commit-rate ceilings.
//!
//! The bottom-up method measures the machine before the database so that a database
//! result can be read against what the hardware can do. Each probe produces ordinary
//! step results ([`ProbeStep`]: a [`plumb_core::StepSummary`] plus 1-second
//! [`plumb_core::Interval`]s), so probe runs are stored and reported like any other run,
//! and a list of [`plumb_store::Ceiling`]s, the headline figures later steps are read
//! against.
#![warn(missing_docs)]

pub mod cpu;
pub mod disk;
mod error;
pub mod family;
pub mod judged;
mod measured;
pub mod mem;
pub mod plan;
pub mod rated;
mod rng;
pub mod text;

pub use error::{PlanError, ProbeError};

use plumb_core::{Interval, StepStatus, StepSummary};
use plumb_store::Ceiling;
use std::time::SystemTime;

/// One measured probe step, shaped like a workload step so the store and reports need
/// nothing probe-specific.
#[derive(Debug, Clone)]
pub struct ProbeStep {
    /// Stored name, unique within the run, e.g. `randread.direct.j1.qd32`.
    pub name: String,
    /// The kind of op, e.g. `randread`, `triad`, `commit`.
    pub kind: plumb_workloads::ProbeKind,
    /// How it ended.
    pub status: StepStatus,
    /// What failed, when it failed.
    pub error: Option<String>,
    /// When the measured window started.
    pub started: SystemTime,
    /// When it ended.
    pub ended: SystemTime,
    /// The step's effective configuration (block size, jobs, depth, IO engine, …).
    pub config: serde_json::Value,
    /// The figures.
    pub summary: StepSummary,
    /// One entry per second of the window.
    pub intervals: Vec<Interval>,
}

/// What one probe measured: its steps, the ceilings derived from them, and notes a reader
/// needs to judge them (fallbacks taken, sizes chosen and why, frequency changes).
#[derive(Debug, Clone, Default)]
pub struct ProbeReport {
    /// The measured steps, in the order they ran.
    pub steps: Vec<ProbeStep>,
    /// Headline figures to keep as this host's ceilings.
    pub ceilings: Vec<Ceiling>,
    /// One line each.
    pub notes: Vec<String>,
}

impl ProbeReport {
    /// Appends another probe's report (for `plumb probe all`).
    pub fn extend(&mut self, o: ProbeReport) {
        self.steps.extend(o.steps);
        self.ceilings.extend(o.ceilings);
        self.notes.extend(o.notes);
    }
}

/// A ceiling, rounded sensibly, so callers do not repeat the unit strings.
pub(crate) fn ceiling(name: impl Into<String>, value: f64, unit: &str) -> Ceiling {
    Ceiling {
        name: name.into(),
        value,
        unit: unit.to_string(),
    }
}

/// Online hardware threads, at least 1.
pub fn hw_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
