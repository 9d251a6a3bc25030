//! plumb's shared model: the traits every engine implements, the description of a
//! measured step and its results, and the value format that lets every read be verified.
//!
//! Measurement never lives here or in a target: a target executes one operation and
//! reports what happened; the runner times it.

pub mod error;
pub mod fault;
pub mod histogram;
pub mod lsm;
pub mod model;
pub mod target;
pub mod value;
pub mod waits;

pub use error::{Result, TargetError};
pub use fault::{FaultFigures, FaultReport, RecoveryPhase, SteadyState};
pub use histogram::LatencyHistogram;
pub use lsm::{CacheLookups, LevelAccount, LevelShape, LsmAccount, LsmShape, StallLimits, Stalls};
pub use model::{
    CrashPointsSummary, DeviceIo, DurabilitySummary, EnginePerf, HwCounters, IbSecond, IbSummary,
    Interval, OpLatency, OpenLoop, PerfCounted, Qos, RunStatus, ServerCosts, StepStatus,
    StepSummary, Verification, Window, WriterSummary, HARNESS_SAMPLE_EVERY, IB_BUCKETS_US,
    NOISE_MIN_CPU_SECS,
};
pub use target::{
    BatchOp, EngineStats, Maintenance, Session, Target, Visit, VisitBatch, WriteBatch,
};
pub use waits::{QueryWaits, ServerSecond, WaitProfile, WaitShare};
