//! The runner: it times every op, owns the warm-up and measurement windows, and runs
//! the sampler that turns per-thread histograms and /proc counters into 1-second
//! intervals and a per-op summary. Targets never measure themselves.

pub mod begin;
pub mod config;
pub mod family;
pub mod histogram;
pub mod kernel;
pub mod kv;
pub mod lifecycle;
pub mod metrics;
pub mod owned_dir;
pub mod pacing;
pub mod payload;
pub mod recording;
mod sampler;
pub mod search;
pub mod step;
pub mod subject;
mod worker;
pub mod workload;

pub use config::{KeySpace, StepConfig};
pub use histogram::LatencyHistogram;
pub use lifecycle::{
    Batch, BatchOutcome, DirPolicy, Grouping, Lifecycle, LifecycleError, Observer, Provenance,
    RunAt, StopRule,
};
pub use pacing::Pacer;
pub use recording::Recording;
pub use search::{search_rate, Probe, Search};
pub use step::{
    run_step, run_workload, NoProgress, Progress, RunContext, StepHistograms, StepOutcome,
};
pub use subject::{Header, Place, Steps, Subject};
pub use workload::{Role, Worker, Workload};
