//! The runner: the timed loop every family's steps run through ([`kernel`]: it times
//! every op, owns the warm-up and measurement windows, and turns per-thread histograms
//! and /proc counters into 1-second intervals and a per-op summary), and the one run
//! lifecycle every family's runs go through ([`lifecycle`], [`subject`], [`family`]).
//! Targets never measure themselves; the families (the key-value one included) are
//! crates of their own.

pub mod begin;
pub mod failure;
pub mod family;
pub mod fleet;
pub mod kernel;
pub mod lifecycle;
pub mod metrics;
pub mod owned_dir;
pub mod pacing;
pub mod provenance;
pub mod recording;
pub mod release;
pub mod rerun;
pub mod resume;
pub mod search;
pub mod step;
pub mod subject;
pub mod suite;

pub use failure::{FamilyError, FamilyResult};
pub use lifecycle::{
    Batch, BatchOutcome, DirPolicy, Grouping, Lifecycle, LifecycleError, Observer, Provenance,
    RunAt, StopRule,
};
pub use pacing::Pacer;
pub use plumb_core::histogram::{self, LatencyHistogram};
pub use recording::Recording;
pub use search::{search_rate, Probe, Search};
pub use step::{NoProgress, Progress, StepHistograms, StepOutcome};
pub use subject::{Header, Place, Steps, Subject};
