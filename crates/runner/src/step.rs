//! What every family's step ends in: its outcome (status, summary, intervals, profile,
//! histograms), stored by the lifecycle, and the one rule by which a run stops after it.

use crate::histogram::LatencyHistogram;
use plumb_core::{Interval, StepStatus, StepSummary};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

pub use crate::kernel::{NoProgress, Progress};

/// A finished step: what is stored and reported.
#[derive(Debug, Clone)]
pub struct StepOutcome {
    /// How it ended.
    pub status: StepStatus,
    /// The engine error or verification failure, if any.
    pub error: Option<String>,
    /// It failed only because reads found wrong or missing values: the engine still
    /// works, so later steps can run (and will be checked too).
    pub verification_failed: bool,
    /// Wall-clock start and end.
    pub started: SystemTime,
    /// Wall-clock end.
    pub ended: SystemTime,
    /// The summary.
    pub summary: StepSummary,
    /// The 1-second series; its ops add up to `summary.ops`.
    pub intervals: Vec<Interval>,
    /// The CPU profile of the measured window (folded stacks, ns), when asked for; or
    /// why there is none.
    pub profile: Option<Result<String, String>>,
    /// The latency histograms behind the percentiles, kept where a step may be one of
    /// several clients' whose percentiles come from the merged counts.
    pub histograms: Option<StepHistograms>,
}

impl StepOutcome {
    /// Whether a run ends after this step: it was interrupted (or Ctrl-C came since), or
    /// it failed with its subject broken, so later steps would measure a broken state. A
    /// failed verification leaves the subject working: later steps run, and are checked
    /// too. Every family stops by this one rule, adding only reasons of its own (a
    /// server that died).
    pub fn ends_run(&self, interrupt: &AtomicBool) -> bool {
        self.status == StepStatus::Interrupted
            || interrupt.load(std::sync::atomic::Ordering::Relaxed)
            || (self.status == StepStatus::Failed && !self.verification_failed)
    }
}

/// A step's latency histograms: one per interval (as `intervals`) and the whole step's.
#[derive(Debug, Clone, Default)]
pub struct StepHistograms {
    /// One per 1-second interval.
    pub intervals: Vec<LatencyHistogram>,
    /// The measured window's.
    pub total: LatencyHistogram,
}

#[cfg(test)]
mod stop_rule {
    use super::*;

    fn ended(status: StepStatus, verification_failed: bool) -> StepOutcome {
        StepOutcome {
            status,
            error: None,
            verification_failed,
            started: SystemTime::now(),
            ended: SystemTime::now(),
            summary: StepSummary::default(),
            intervals: Vec::new(),
            profile: None,
            histograms: None,
        }
    }
    #[test]
    fn a_run_ends_on_an_interrupt_or_a_broken_subject_but_not_a_failed_check() {
        let quiet = AtomicBool::new(false);
        assert!(!ended(StepStatus::Ok, false).ends_run(&quiet));
        assert!(ended(StepStatus::Interrupted, false).ends_run(&quiet));
        assert!(ended(StepStatus::Failed, false).ends_run(&quiet));
        // Wrong values read: the engine still works, the next steps run.
        assert!(!ended(StepStatus::Failed, true).ends_run(&quiet));
        let ctrl_c = AtomicBool::new(true);
        assert!(ended(StepStatus::Ok, false).ends_run(&ctrl_c));
        assert!(ended(StepStatus::Failed, true).ends_run(&ctrl_c));
    }
}
