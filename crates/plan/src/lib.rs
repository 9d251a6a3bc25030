//! What plumb will run, as data. A suite file (or `plumb kv`'s flags) becomes a
//! [`Plan`]: every run typed, serialisable and hashable, stored with the run it made,
//! so an interrupted suite resumes where it stopped and `plumb rerun` rebuilds a run
//! exactly. Nothing here runs anything.

pub mod durability;
pub mod estimate;
pub mod family;
pub mod model;
pub mod options;
pub mod order;
pub mod scale;
pub mod suite;

pub use durability::{Cut, DurabilityMode, DurabilityParams, DurabilityWork, PointKind};
pub use estimate::{estimate, free_bytes, Estimate};
pub use family::{
    redact, strip_password, Family, HostSpec, IbParams, IbWork, ProbeParams, ProbeWork,
    ScriptSource, ServerSpec, SqlParams, SqlWork, Subject,
};
pub use model::{
    check_memory_mb, clients_of, hash_of, pace_of, refused, KvParams, KvWork, ParamError, Plan,
    RunPlan, TargetPlan, WorkloadPlan, MAX_VALUE_SIZE, QUICK_SECS,
};
pub use suite::{load, parse, PlanOptions, SuiteError};

/// A seed from the clock, for runs given none (it is printed and stored, so the run can
/// be made again with `--seed`).
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}
